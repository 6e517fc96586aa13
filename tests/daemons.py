"""Real ``tarotd`` processes on 127.0.0.1 for the tests: start a table of them with static
peers, wait for them, read their score sheets and logs, and talk to their local API.

The daemons encrypt, as they do by default, so a static peer is given with its key
(``--peer KEY@127.0.0.1:PORT``): each home's identity is made before its daemon starts
(:func:`home_key`), as ``tarotd --print-key`` would make it.

Every daemon ``i`` of a table gets the home ``tmp_path / f"d{i}"``, the name ``joueur{i}``, a
free loopback port and a log ``tmp_path / f"d{i}.log"`` (stdout and stderr).  Nothing here
listens or connects beyond 127.0.0.1 (``--no-discovery``: no broadcast beacons).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from client.api import DaemonRefused, DaemonUnavailable, ask
from tarotd.home import Home, load_or_create_identity

ROOT = Path(__file__).resolve().parent.parent


#: Where the ports of the tables' daemons are drawn: below the kernel's ephemeral range, from
#: which every outgoing connection and every bind to port 0 takes its port (a daemon's own gate,
#: another test's daemon) — so that none takes one between the draw and the daemon's bind.
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10_000
_reserved: list[int] = []  #: the lock files of the ports this process drew, held until it exits


def free_ports(count: int) -> list[int]:
    """``count`` ports for daemons that must know each other's before they start: a table's
    static peers trust the keys of each other's ``--peer KEY@HOST:PORT``, so the OS cannot
    give the ports (``--listen 127.0.0.1:0``) and tell the others afterwards; a single daemon
    should take port 0 instead.  Each port is free now, outside the ephemeral range, and
    reserved by a lock file for this process's life, so a concurrent test run draws others
    and a daemon started again within the test finds its port still its own."""
    directory = Path(tempfile.gettempdir()) / "tarot-test-ports"
    directory.mkdir(exist_ok=True)
    candidates = list(range(LOWEST_PORT, _ephemeral_floor()))
    random.shuffle(candidates)
    ports: list[int] = []
    for port in candidates:
        if len(ports) == count:
            return ports
        lock = os.open(directory / str(port), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port))
        except OSError:  # held by another test run, or bound by anyone
            os.close(lock)
            continue
        _reserved.append(lock)
        ports.append(port)
    if len(ports) == count:
        return ports
    raise RuntimeError(f"no {count} free ports from {LOWEST_PORT} to the ephemeral range")


def _ephemeral_floor() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default floor, where the file cannot be read


def log_path(tmp_path: Path, index: int) -> Path:
    return tmp_path / f"d{index}.log"


def home_key(home: Path) -> str:
    """The key, in hex, of the daemon of ``home``, its identity made now if the home is new."""
    return load_or_create_identity(Home(home)).public_key.hex()


def daemon_argv(
    home: Path,
    name: str,
    port: int,
    peers: Sequence[tuple[Path, int]],
    *,
    bot: str | None = "basic",
    table: str | None = "club",
    seats: int = 3,
    deals: int | None = None,
    timeout: float = 20,
    extra: Sequence[str] = (),
) -> list[str]:
    """The command line of one daemon on 127.0.0.1 with static ``peers``, each given by its
    home (whose key the command line names) and its port.  ``bot=None`` leaves
    the daemon's own seat to a client on the local API; ``deals=None`` keeps it running.
    ``timeout`` is both ``--timeout`` and ``--decision-timeout`` (a later ``--decision-timeout``
    in ``extra`` wins)."""
    argv = [sys.executable, "-m", "tarotd.cli", "--home", str(home), "--name", name,
            "--listen", f"127.0.0.1:{port}", "--no-discovery", "--timeout", str(timeout),
            "--decision-timeout", str(timeout)]
    for peer_home, peer_port in peers:
        argv += ["--peer", f"{home_key(peer_home)}@127.0.0.1:{peer_port}"]
    if bot is not None:
        argv += ["--bot", bot]
    if table is not None:
        argv += ["--table", table, "--seats", str(seats)]
    if deals is not None:
        argv += ["--deals", str(deals)]
    return [*argv, *extra]


def spawn(argv: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(list(argv), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


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
            home, f"joueur{i}", ports[i], [(other, port) for j, (other, port) in enumerate(zip(homes, ports)) if j != i],
            bot=None if human else "basic", seats=players, deals=human_deals if human else deals,
            timeout=timeout, extra=extra,
        )
        processes.append(spawn(argv, log_path(tmp_path, i)))
    return processes, homes


def logs(tmp_path: Path, count: int, tail: int = 3000) -> str:
    return "\n".join(
        f"--- d{i}.log\n" + log_path(tmp_path, i).read_text(errors="replace")[-tail:] for i in range(count)
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


def scores(home: Path) -> dict[str, object]:
    """``tarot scores --json`` for a home: the score sheet the daemon wrote there."""
    out = subprocess.run(
        [sys.executable, "-m", "client.cli", "--home", str(home), "scores", "--json"],
        cwd=ROOT, capture_output=True, check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


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
            pytest.fail(f"the daemon exited with status {process.returncode} before creating {path}")
        if time.monotonic() > deadline:
            pytest.fail(f"{path} did not appear in {timeout} s")
        time.sleep(0.05)


def assert_no_traceback(tmp_path: Path, count: int) -> None:
    for i in range(count):
        text = log_path(tmp_path, i).read_text(errors="replace")
        assert "Traceback" not in text, f"d{i}.log holds a traceback:\n{text[-6000:]}"


def resident_kib(pid: int) -> int:
    """A live process's resident set (``VmRSS``), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
    except (FileNotFoundError, ProcessLookupError):
        return 0
