"""A flood from this machine never names a seat (issue 35, item 4).

A process of this machine opens idle TCP connections from 127.0.0.1 to a member's daemon,
whose other members run here too.  Before, 127.0.0.1 was bounded by nothing but the
descriptors — as "this machine", and as the host of a member — so 1,500 of them held a daemon
limited to 1,024 open files at 988 incoming connections (at most 128), every descriptor
taken: its local API silent for 10 s, its table paused for 24 s, and every score sheet said
the flooded honest seat stopped answering.  ZeroMQ's own listener behind the gate took 1,100
connections made to it directly besides.  Now 127.0.0.1 is bounded like any host until a
connection has proved a member's key, and nothing reaches ZeroMQ but through the gate.

The victim runs under a hard limit of 1,024 open files (``prlimit``), the usual default, so it
cannot raise it: the bounds alone must protect it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_flood import (  # the fixture: autouse, the flooding process needs descriptors
    Flood,
    _room_for_the_attacker,  # noqa: F401
    watched,
)

from client.api import ask
from tarotd.guard import PER_HOST
from tests.daemons import (
    answer,
    assert_no_traceback,
    daemon_argv,
    free_ports,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    stage_of,
    wait_all,
    wait_for_path,
)

pytestmark = pytest.mark.daemons

HARD_LIMIT = 1024  #: the victim's open files, soft and hard: it cannot raise it
VICTIM = 1
PLAYERS = 3
DEALS = 2
FLOOD = 1500  #: idle connections from 127.0.0.1, as measured in the issue
API_ANSWERS_WITHIN = 3.0  #: seconds


def start(
    tmp_path: Path, players: int, deals: int | None = None, extra: Sequence[str] = ()
) -> tuple[list[subprocess.Popen[bytes]], list[Path], list[int]]:
    """``players`` bot daemons on 127.0.0.1, each the others' ``--peer`` (so members of one
    another), the victim's open files capped at :data:`HARD_LIMIT`: a table playing ``deals``
    deals, or with no table (``deals=None``)."""
    ports = free_ports(players)
    homes = [tmp_path / f"d{i}" for i in range(players)]
    processes = []
    for i, home in enumerate(homes):
        peers = [(other, port) for j, (other, port) in enumerate(zip(homes, ports)) if j != i]
        argv = daemon_argv(
            home,
            f"joueur{i}",
            ports[i],
            peers,
            table=None if deals is None else "club",
            seats=players,
            deals=deals,
            timeout=15,
            extra=extra,
        )
        if i == VICTIM:
            argv = ["prlimit", f"--nofile={HARD_LIMIT}:{HARD_LIMIT}", "--", *argv]
        processes.append(spawn(argv, log_path(tmp_path, i)))
    return processes, homes, ports


def status(home: Path) -> dict[str, object]:
    """The daemon's ``status``, which must come within :data:`API_ANSWERS_WITHIN` seconds."""
    began = time.monotonic()
    answered = asyncio.run(ask(home, "status", timeout=API_ANSWERS_WITHIN))
    assert time.monotonic() - began < API_ANSWERS_WITHIN
    assert isinstance(answered, dict)
    return answered


def peers_up(home: Path) -> list[str]:
    """The states of the peers the daemon with ``home`` sees (none if it does not answer)."""
    seen = answer(home, "status")
    return [peer["state"] for peer in seen["peers"]] if isinstance(seen, dict) else []


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (IPv4), from ``/proc``."""
    mine = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    ports = set()
    with open(f"/proc/{pid}/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and f"socket:[{fields[9]}]" in mine:  # 0A: LISTEN
                ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


def idle_connections(port: int, count: int) -> list[socket.socket]:
    """``count`` connections from 127.0.0.1 to ``port`` that say nothing."""
    held = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        held.append(sock)
    return held


def test_idle_connections_from_this_machine_are_bounded_and_the_api_still_answers(
    tmp_path: Path,
) -> None:
    """Two daemons, members of each other, with no table: 127.0.0.1 is the host of the
    victim's member.  The flood gets 32 places, the local API answers at once, the member
    stays up, and ZeroMQ's own listener cannot be reached but through the gate."""
    processes, homes, ports = start(tmp_path, 2)
    try:
        wait_for_path(homes[VICTIM] / "api.sock", processes[VICTIM])
        deadline = time.monotonic() + 20
        while peers_up(homes[VICTIM]) != ["up"]:
            assert time.monotonic() < deadline, logs(tmp_path, 2)
            time.sleep(0.2)
        time.sleep(1.5)  # the victim notes its member's host, 127.0.0.1 (every second)
        held = idle_connections(ports[VICTIM], FLOOD)
        try:
            time.sleep(1.0)  # the gate has seen them all
            seen = status(homes[VICTIM])
            connections, refused = seen["connections"], seen["refused"]
            assert isinstance(connections, dict) and isinstance(refused, dict)
            assert connections["incoming"] <= PER_HOST + 1, connections  # and the member's
            assert refused.get("connections-from-host", 0) > 0, refused
            assert "no-descriptors" not in refused, refused
            assert peers_up(homes[VICTIM]) == ["up"]
        finally:
            for sock in held:
                sock.close()
        # ZeroMQ's own listener, behind the gate, takes no connection but the gate's.
        inner = listening_ports(processes[VICTIM].pid) - {ports[VICTIM]}
        assert len(inner) == 1, inner
        with socket.socket() as direct:
            direct.settimeout(1.0)
            with pytest.raises(TimeoutError):
                direct.connect(("127.0.0.1", inner.pop()))
        assert_no_traceback(tmp_path, 2)
    finally:
        kill_all(processes)


@pytest.mark.slow
def test_a_flood_from_this_machine_during_a_deal_names_no_seat(tmp_path: Path) -> None:
    """1,500 idle connections from 127.0.0.1, held and opened again as they are turned away,
    at a member of a table of three on this machine from its first deal to its last (bots
    thinking 0.25 s a card: about 20 s a deal), under the rule ``--silence penalty``: the
    table finishes, every sheet the same, every row audited ok — none says a seat stopped
    answering — and the victim counts what it refused."""
    processes, homes, ports = start(
        tmp_path, PLAYERS, DEALS, ["--silence", "penalty", "--think", "0.25"]
    )
    try:
        deadline = time.monotonic() + 60
        while not stage_of(homes[VICTIM]):
            assert time.monotonic() < deadline, logs(tmp_path, PLAYERS)
            time.sleep(0.2)
        refused: dict[str, int] = {}
        most_held = 0
        deadline = time.monotonic() + 240
        with watched(processes[VICTIM].pid) as samples, Flood(ports[VICTIM], ["127.0.0.1"], FLOOD):
            while processes[VICTIM].poll() is None and time.monotonic() < deadline:
                seen = answer(homes[VICTIM], "status")
                if isinstance(seen, dict):
                    refused = dict(seen["refused"])
                    most_held = max(most_held, int(seen["connections"]["incoming"]))
                time.sleep(0.5)
        print(
            f"flood from 127.0.0.1: the victim at most {max(samples)} descriptors and "
            f"{most_held} incoming connections; refused {refused}"
        )
        wait_all(processes, tmp_path, timeout=60)
        sheets = [scores(home) for home in homes]
        assert all(sheet["deals"] == sheets[0]["deals"] for sheet in sheets), "sheets differ"
        deals = sheets[0]["deals"]
        assert isinstance(deals, list) and len(deals) == DEALS, sheets[0]
        assert all(row["audit"] == "ok" for row in deals), deals  # no silence, no penalty
        assert not list((homes[VICTIM] / "proofs").glob("*.tarot-proof"))
        assert refused.get("connections-from-host", 0) > 0, refused
        assert most_held <= PER_HOST + PLAYERS, most_held
        assert max(samples) < HARD_LIMIT // 2, f"the victim held {max(samples)} descriptors"
        assert_no_traceback(tmp_path, PLAYERS)
    finally:
        kill_all(processes)
