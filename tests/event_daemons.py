"""An event played by real ``tarotd`` processes on 127.0.0.1: an organiser's daemon and one
daemon per player, each player's seat a bot, every player's daemon given the organiser as
``--peer`` only (the organiser tells each table's members where the others listen)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from daemons import answer, daemon_argv, free_ports, kill_all, log_path, logs, spawn, wait_for_path

from client.api import ask


@dataclass
class EventRoom:
    tmp_path: Path
    homes: list[Path]  #: the organiser's first
    processes: list[subprocess.Popen[bytes]]
    ports: list[int]
    argvs: list[list[str]]
    killed: set[int] = field(default_factory=set)  #: daemons a test killed on purpose

    @property
    def organiser(self) -> Path:
        return self.homes[0]

    @property
    def players(self) -> list[Path]:
        return self.homes[1:]

    def ask(self, home: Path, op: str, **params: Any) -> Any:
        return asyncio.run(ask(home, op, **params))

    def logs(self) -> str:
        return logs(self.tmp_path, len(self.homes), tail=2500)

    def wait(self, what: str, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            for index, process in enumerate(self.processes):
                if process.poll() is not None and index not in self.killed:
                    pytest.fail(
                        f"a daemon exited ({process.returncode}) while waiting for "
                        f"{what}:\n{self.logs()}"
                    )
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: not in {timeout} s\n{self.logs()}")
            time.sleep(0.2)

    def stop(self) -> None:
        kill_all(self.processes)

    def kill(self, index: int) -> None:
        """``kill -9`` the daemon ``index`` for good, as a laptop dying would."""
        self.killed.add(index)
        self.processes[index].kill()
        self.processes[index].wait()

    def crash_and_restart(self, index: int, meanwhile: Callable[[], None] = lambda: None) -> None:
        """``kill -9`` the daemon ``index``, as a power cut would, and start it again; what
        happens ``meanwhile``, while it is down."""
        self.processes[index].kill()
        self.processes[index].wait()
        meanwhile()
        self.processes[index] = spawn(self.argvs[index], log_path(self.tmp_path, index))
        self.wait(
            f"daemon {index} back", lambda: answer(self.homes[index], "status") is not None, 30
        )


def start_event_room(
    tmp_path: Path, players: int, timeout: float = 20, think: float | None = None
) -> EventRoom:
    """The organiser's daemon and ``players`` bots' daemons; ``think``: the bots' pace (their
    daemon's default when None)."""
    ports = free_ports(players + 1)
    homes = [tmp_path / f"d{i}" for i in range(players + 1)]
    pace = [] if think is None else ["--think", str(think)]
    argvs = [
        daemon_argv(homes[0], "organisateur", ports[0], [], bot=None, table=None, timeout=timeout)
    ]
    argvs += [
        daemon_argv(
            homes[i],
            f"joueur{i}",
            ports[i],
            [(homes[0], ports[0])],
            bot="basic",
            table=None,
            timeout=timeout,
            extra=pace,
        )
        for i in range(1, players + 1)
    ]
    processes = [spawn(argv, log_path(tmp_path, i)) for i, argv in enumerate(argvs)]
    for home, process in zip(homes, processes):
        wait_for_path(home / "api.sock", process)
    return EventRoom(tmp_path, homes, processes, ports, argvs)


def open_event(
    room: EventRoom, rounds: int, deals: int, movement: str = "random", tables: int = 4
) -> str:
    """The organiser opens the event; every player's daemon hears it and registers;
    round 1 opens."""
    opened = room.ask(
        room.organiser,
        "event-open",
        name="Soirée du club",
        rounds=rounds,
        deals=deals,
        movement=movement,
        tables=tables,
    )
    event = str(opened["event"])

    def heard(home: Path) -> bool:
        events = answer(home, "events")
        return isinstance(events, list) and any(e["event"] == event for e in events)

    def heard_everywhere() -> bool:
        return all(heard(home) for home in room.players)

    room.wait("the event heard by every player's daemon", heard_everywhere, 30)
    for home in room.players:
        room.ask(home, "event-join", event=event)
    room.wait(
        "every registration in",
        lambda: len(room.ask(room.organiser, "event", event=event)["players"]) == len(room.players),
        30,
    )
    room.ask(room.organiser, "event-start", event=event)
    return event
