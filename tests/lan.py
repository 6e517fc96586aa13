"""Real ``tarotd`` daemons on a simulated LAN (:class:`lab.lansim.Lan`, network
namespaces on one bridge), for the LAN tests and the load run: each daemon in a namespace
of its own, as on its own laptop, listening on :data:`PEER_PORT` there; their logs, a shared
deadline, their ``status``, and the check that a table's score sheets agree.

Root only: a test module using this sets ``pytestmark = NEEDS_ROOT``; :func:`lan_of` skips
the test, with the reason, when ``ip netns`` does not work here.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from client.api import DaemonRefused, DaemonUnavailable, ask
from lab.lansim import SUBNET_PREFIX, Lan, LanError

ROOT = Path(__file__).resolve().parent.parent
PEER_PORT = 47400  #: every daemon listens on 0.0.0.0:PEER_PORT in its own namespace
LOG_TAIL = 4000  #: characters of each daemon's log shown in a failure

NEEDS_ROOT = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root for network namespaces"
)


@contextmanager
def lan_of(hosts: int, name: str = "trt", subnet: str = SUBNET_PREFIX) -> Iterator[Lan]:
    """A simulated LAN (:class:`~lab.lansim.Lan`'s ``name`` and ``subnet``), or the test
    skipped if namespaces cannot be made here."""
    lan = Lan(hosts, name, subnet)
    try:
        lan.__enter__()
    except LanError as exc:
        pytest.skip(f"ip netns is unusable, no simulated LAN here: {exc}")
    try:
        yield lan
    finally:
        lan.close()


@dataclass
class Daemon:
    host: int
    home: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    log: IO[bytes] = field(repr=False)
    argv: list[str] = field(default_factory=list, repr=False)  #: what started it, for a restart


@dataclass
class Fleet:
    """The daemons a test started, their logs, and the deadline they all share."""

    lan: Lan
    tmp_path: Path
    deadline: float
    daemons: list[Daemon] = field(default_factory=list)

    def start(self, host: int, name: str, *args: str, wrap: Sequence[str] = ()) -> Daemon:
        """Start a daemon on ``host``; ``wrap`` is a command that execs it (``prlimit … --``),
        so that its process is still the daemon's."""
        home = self.tmp_path / name
        log_path = self.tmp_path / f"{name}.log"
        log = open(log_path, "wb")  # closed in stop_all, once the daemon is gone
        argv = [
            *wrap,
            sys.executable,
            "-m",
            "tarotd.cli",
            "--home",
            str(home),
            "--name",
            name,
            "--listen",
            f"0.0.0.0:{PEER_PORT}",
            "--bot",
            "basic",
            *args,
        ]
        process = self.lan.run(host, argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        daemon = Daemon(host, home, log_path, process, log, argv)
        self.daemons.append(daemon)
        return daemon

    def restart(self, daemon: Daemon) -> None:
        """Start ``daemon`` again (it has exited or was killed) with the same home and
        options, its log going on in the same file."""
        daemon.log.write(b"----- restarted by the test\n")
        daemon.log.flush()
        daemon.process = self.lan.run(
            daemon.host, daemon.argv, cwd=ROOT, stdout=daemon.log, stderr=subprocess.STDOUT
        )

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def wait(self, daemons: list[Daemon]) -> None:
        """Every daemon exits 0 before the deadline, or the test fails with every log."""
        for daemon in daemons:
            try:
                daemon.process.wait(timeout=max(0.1, self.remaining()))
            except subprocess.TimeoutExpired:
                late = daemon
                break
        else:
            late = None
        if late is not None:
            self.fail(f"{late.home.name} did not finish before the deadline")
        codes = {d.home.name: d.process.returncode for d in daemons}
        if any(codes.values()):
            self.fail(f"the daemons did not all exit 0: {codes}")

    def status(self, daemon: Daemon) -> dict[str, Any] | None:
        """The daemon's ``status`` (what ``tarot status --json`` prints), asked on its local
        API socket in its home — a Unix socket, so reachable from outside its namespace — or
        None while it does not answer.  In-process rather than a ``tarot`` subprocess: a deal
        at three takes a second or two, polling must be quicker than that."""

        async def ask_briefly() -> dict[str, Any]:
            status: dict[str, Any] = await asyncio.wait_for(ask(daemon.home, "status"), timeout=5)
            return status

        try:
            return asyncio.run(ask_briefly())
        except (DaemonUnavailable, DaemonRefused, OSError, TimeoutError):
            return None

    def fail(self, message: str) -> None:
        pytest.fail(f"{message}\n{self.logs()}", pytrace=False)

    def logs(self) -> str:
        parts = []
        for daemon in self.daemons:
            daemon.log.flush()
            text = daemon.log_path.read_text(errors="replace")
            shown = text if len(text) <= LOG_TAIL else "…" + text[-LOG_TAIL:]
            parts.append(
                f"----- {daemon.home.name} (host {daemon.host}, {self.lan.ip(daemon.host)}), exit "
                f"{daemon.process.poll()}:\n{shown}"
            )
        return "\n".join(parts)

    def stop_all(self) -> None:
        for daemon in self.daemons:
            if daemon.process.poll() is None:
                daemon.process.kill()
                daemon.process.wait()
            daemon.log.close()


@contextmanager
def fleet(lan: Lan, tmp_path: Path, budget: float) -> Iterator[Fleet]:
    started = Fleet(lan, tmp_path, time.monotonic() + budget)
    try:
        yield started
    finally:
        started.stop_all()


def score_sheet(daemon: Daemon) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "client.cli", "--home", str(daemon.home), "scores", "--json"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=30,
    )
    sheet: dict[str, Any] = json.loads(out.stdout)
    return sheet


def check_table(group: Fleet, daemons: list[Daemon], deals: int) -> dict[str, Any]:
    """The score sheets of a table's daemons: identical, every deal audited "ok", every row
    summing to zero, the totals the sums of the rows.  Returns the sheet."""
    sheets = [score_sheet(daemon) for daemon in daemons]
    if any(sheet != sheets[0] for sheet in sheets):
        group.fail("the score sheets differ:\n" + "\n".join(json.dumps(s) for s in sheets))
    sheet = sheets[0]
    players = len(daemons)
    assert len(sheet["seats"]) == players, sheet
    assert sorted(sheet["seats"]) == sorted(d.home.name for d in daemons), sheet
    assert len(sheet["deals"]) == deals, sheet
    for deal in sheet["deals"]:
        assert deal["audit"] == "ok", deal
        assert len(deal["scores"]) == players and sum(deal["scores"]) == 0, deal
    assert sheet["totals"] == [
        sum(d["scores"][s] for d in sheet["deals"]) for s in range(players)
    ], sheet
    return sheet
