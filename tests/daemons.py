"""Real ``tarotd`` processes on 127.0.0.1 for the tests: start a table of them with static
peers, wait for them, read their logs, and talk to their local API.

How a daemon is started — its ports, command line, log, score sheet — is the lab's
(``lab/loopback.py``, which the long runs of ``lab/fleet.py`` share), imported here so that the
tests find every helper in this module; what is here is what a test waits for and how it fails.

Every daemon ``i`` of a table gets the home ``tmp_path / f"d{i}"``, the name ``joueur{i}``, a
free loopback port and a log ``tmp_path / f"d{i}.log"`` (stdout and stderr).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from client.api import DaemonRefused, DaemonUnavailable, ask
from lab.loopback import (  # "x as x": re-exported, the tests import them from here
    ROOT as ROOT,
)
from lab.loopback import (
    daemon_argv as daemon_argv,
)
from lab.loopback import (
    free_ports as free_ports,
)
from lab.loopback import (
    home_key as home_key,
)
from lab.loopback import (
    log_path as log_path,
)
from lab.loopback import (
    resident_kib as resident_kib,
)
from lab.loopback import (
    scores as scores,
)
from lab.loopback import (
    spawn as spawn,
)


def start_daemons(
    tmp_path: Path,
    players: int,
    deals: int | None,
    *extra: str,
    humans: Sequence[int] = (),
    human_deals: int | None = None,
    timeout: float = 20,
    ports: Sequence[int] | None = None,
) -> tuple[list[subprocess.Popen[bytes]], list[Path]]:
    """A table of ``players`` daemons that find each other through ``--peer`` and form the
    table ``club``.  Every seat is a ``basic`` bot playing ``deals`` deals but those listed
    in ``humans``, which are left to the local API and play ``human_deals``.  Daemon ``i``
    listens on ``ports[i]`` (free ports by default)."""
    ports = list(ports) if ports is not None else free_ports(players)
    homes = [tmp_path / f"d{i}" for i in range(players)]
    processes = []
    for i, home in enumerate(homes):
        human = i in humans
        argv = daemon_argv(
            home,
            f"joueur{i}",
            ports[i],
            [(other, port) for j, (other, port) in enumerate(zip(homes, ports)) if j != i],
            bot=None if human else "basic",
            seats=players,
            deals=human_deals if human else deals,
            timeout=timeout,
            extra=extra,
        )
        processes.append(spawn(argv, log_path(tmp_path, i)))
    return processes, homes


def logs(tmp_path: Path, count: int, tail: int = 3000) -> str:
    return "\n".join(
        f"--- d{i}.log\n" + log_path(tmp_path, i).read_text(errors="replace")[-tail:]
        for i in range(count)
    )


def wait_all(processes: Sequence[subprocess.Popen[bytes]], tmp_path: Path, timeout: float) -> None:
    """Every daemon exits, with status 0, within ``timeout`` seconds (killed otherwise)."""
    deadline = time.monotonic() + timeout
    try:
        for process in processes:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the daemons did not finish in {timeout} s:\n{logs(tmp_path, len(processes))}")
    finally:
        kill_all(processes)
    assert [p.returncode for p in processes] == [0] * len(processes), logs(tmp_path, len(processes))


def kill_all(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill what still runs (each process by its own id) and reap it."""
    for process in processes:
        if process.poll() is None:
            try:
                os.kill(process.pid, signal.SIGCONT)  # in case a test stopped it
            except ProcessLookupError:
                pass
            process.kill()
            process.wait()


def stop(process: subprocess.Popen[bytes], timeout: float = 10) -> int:
    """SIGTERM, as a user's Ctrl-C would: the daemon closes cleanly; its exit status."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


def answer(home: Path, op: str) -> object:
    """The daemon with ``home``'s answer to ``op``, or None if it does not answer (not
    started yet, or gone); asked in-process, so that polling is quick."""
    try:
        return asyncio.run(ask(home, op))
    except (DaemonUnavailable, DaemonRefused, OSError):
        return None


def stage_of(home: Path) -> str:
    """Where the deal of the daemon with ``home`` is (its ``status``: "bidding", "play, trick
    3"…), or "" if it does not answer."""
    current = answer(home, "status")
    tables = current.get("tables") if isinstance(current, dict) else None
    return str(tables[0]["stage"]) if isinstance(tables, list) and tables else ""


def wait_for_path(path: Path, process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Until ``path`` exists (a daemon's ``api.sock``, say); fails if the daemon died."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            pytest.fail(
                f"the daemon exited with status {process.returncode} before creating {path}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"{path} did not appear in {timeout} s")
        time.sleep(0.05)


def assert_no_traceback(tmp_path: Path, count: int) -> None:
    for i in range(count):
        text = log_path(tmp_path, i).read_text(errors="replace")
        assert "Traceback" not in text, f"d{i}.log holds a traceback:\n{text[-6000:]}"
