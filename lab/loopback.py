"""Real ``tarotd`` daemons on 127.0.0.1 with static peers, started from their command lines:
the ports they listen on, the command line of each, its log, its score sheet and its memory.

The long runs (``lab/fleet.py``: the soak, the crash storm) and the tests (``tests/daemons.py``
adds what a test waits for and how it fails) start their tables with these, so both start a
daemon the same way.  The daemons encrypt, as they do by default, so a static peer is given
with its key (``--peer KEY@127.0.0.1:PORT``): each home's identity is made before its daemon
starts (:func:`home_key`), as ``tarotd --print-key`` would make it.  Nothing here listens or
connects beyond 127.0.0.1 (``--no-discovery``: no broadcast beacons).
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

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
    argv = [
        sys.executable,
        "-m",
        "tarotd.cli",
        "--home",
        str(home),
        "--name",
        name,
        "--listen",
        f"127.0.0.1:{port}",
        "--no-discovery",
        "--timeout",
        str(timeout),
        "--decision-timeout",
        str(timeout),
    ]
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


def scores(home: Path) -> dict[str, object]:
    """``tarot scores --json`` for a home: the score sheet the daemon wrote there."""
    out = subprocess.run(
        [sys.executable, "-m", "client.cli", "--home", str(home), "scores", "--json"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    sheet: dict[str, object] = json.loads(out.stdout)
    return sheet


def resident_kib(pid: int) -> int:
    """A live process's resident set (``VmRSS``), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
    except (FileNotFoundError, ProcessLookupError):
        return 0
