"""Real ``tarotd`` daemons on a real (simulated) LAN: network namespaces on one bridge.

Each daemon runs in its own namespace, as on its own laptop, and finds the others by
discovery alone — UDP broadcast beacons on ``198.18.0.255:47474`` — with no ``--peer``; two
tables share the LAN.  Then a cable is pulled in the middle of a deal and plugged back: the
mesh retransmits and the table finishes.

Root only (network namespaces); skipped with the reason otherwise, or when ``ip netns``
does not work here.  All traffic stays inside the namespaces, on 198.18.0.0/24.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from client.api import DaemonRefused, DaemonUnavailable, ask
from tarotd.lansim import BROADCAST, Lan, LanError

ROOT = Path(__file__).resolve().parent.parent
PEER_PORT = 47400  #: every daemon listens on 0.0.0.0:PEER_PORT in its own namespace
LOG_TAIL = 4000  #: characters of each daemon's log shown in a failure

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root for network namespaces"
)


@contextmanager
def lan_of(hosts: int) -> Iterator[Lan]:
    """A simulated LAN, or the test skipped if namespaces cannot be made here."""
    lan = Lan(hosts)
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


@dataclass
class Fleet:
    """The daemons a test started, their logs, and the deadline they all share."""

    lan: Lan
    tmp_path: Path
    deadline: float
    daemons: list[Daemon] = field(default_factory=list)

    def start(self, host: int, name: str, *args: str) -> Daemon:
        home = self.tmp_path / name
        log_path = self.tmp_path / f"{name}.log"
        log = open(log_path, "wb")  # noqa: SIM115 -- closed in stop_all, once the daemon is gone
        argv = [
            sys.executable, "-m", "tarotd.cli", "--home", str(home), "--name", name,
            "--listen", f"0.0.0.0:{PEER_PORT}", "--bot", "basic", *args,
        ]
        process = self.lan.run(host, argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        daemon = Daemon(host, home, log_path, process, log)
        self.daemons.append(daemon)
        return daemon

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

        async def ask_briefly() -> Any:
            return await asyncio.wait_for(ask(daemon.home, "status"), timeout=5)

        try:
            return asyncio.run(ask_briefly())  # type: ignore[no-any-return]
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
            parts.append(f"----- {daemon.home.name} (host {daemon.host}, {self.lan.ip(daemon.host)}), exit {daemon.process.poll()}:\n{shown}")
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
        cwd=ROOT, capture_output=True, check=True, timeout=30,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


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
    assert sheet["totals"] == [sum(d["scores"][s] for d in sheet["deals"]) for s in range(players)], sheet
    return sheet


def test_two_tables_form_by_discovery_alone_and_play_on_one_lan(tmp_path: Path) -> None:
    with lan_of(8) as lan, fleet(lan, tmp_path, budget=240) as group:
        # Discovery beacons go to the broadcast address of every interface up: here eth0's.
        code = "from tarotd.discovery import broadcast_addresses; print(broadcast_addresses())"
        probe = lan.run(0, [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert probe.communicate(timeout=30)[0].strip() == repr([BROADCAST])
        common = ("--deals", "1", "--timeout", "30")
        soiree = [group.start(i, f"soiree{i}", "--table", "soiree", "--seats", "5", *common) for i in range(5)]
        trio = [group.start(i, f"trio{i}", "--table", "trio", "--seats", "3", *common) for i in range(5, 8)]
        group.wait(soiree + trio)
        five = check_table(group, soiree, deals=1)
        three = check_table(group, trio, deals=1)
        assert (five["table"], three["table"]) == ("soiree", "trio")
        assert five["table_id"] != three["table_id"], (five, three)


def wait_for_tricks(group: Fleet, daemons: list[Daemon], watched: Daemon) -> dict[str, Any]:
    """The status of ``watched`` once its first deal is in the tricks."""
    while group.remaining() > 0:
        if any(d.process.poll() is not None for d in daemons):
            group.fail("a daemon exited before the cable was pulled")
        status = group.status(watched)
        if status is not None and status["tables"] and status["tables"][0]["stage"].startswith("play"):
            return status
        time.sleep(0.05)
    group.fail("the table never reached the tricks")
    raise AssertionError  # not reached: fail() raises


def test_a_cable_pulled_for_20_s_in_the_tricks_and_plugged_back_the_table_finishes(tmp_path: Path) -> None:
    outage = 20.0
    with lan_of(3) as lan, fleet(lan, tmp_path, budget=240) as group:
        daemons = [group.start(i, f"joueur{i}", "--table", "club", "--seats", "3", "--deals", "2", "--timeout", "60", "--think", "0.1") for i in range(3)]
        before = wait_for_tricks(group, daemons, daemons[1])
        assert before["tables"][0]["scored"] == 0, before
        lan.link_down(1)
        try:
            time.sleep(outage / 2)
            state = asyncio.run(ask(daemons[0].home, "state"))
            assert [a["seat"] for a in state["away"]] == [state["seats"].index("joueur1")], state
            time.sleep(outage / 2)
            # The game waited for the seat: nobody finished, nothing was abandoned.
            assert all(d.process.poll() is None for d in daemons), group.logs()
        finally:
            lan.link_up(1)
        group.wait(daemons)
        check_table(group, daemons, deals=2)


def test_a_cable_pulled_for_good_the_others_end_the_deal_as_abandoned_by_that_seat(tmp_path: Path) -> None:
    with lan_of(3) as lan, fleet(lan, tmp_path, budget=240) as group:
        daemons = [group.start(i, f"joueur{i}", "--table", "club", "--seats", "3", "--timeout", "8", "--think", "0.1") for i in range(3)]
        wait_for_tricks(group, daemons, daemons[2])
        lan.link_down(2)
        while group.remaining() > 0:
            status = group.status(daemons[0])
            if status is not None and status["tables"] and status["tables"][0]["scored"] >= 1:
                break
            time.sleep(0.2)
        else:
            group.fail("the deal was never ended without the seat that left")
        sheets = [score_sheet(daemon) for daemon in daemons[:2]]
        assert sheets[0] == sheets[1], sheets
        first = sheets[0]["deals"][0]
        gone = sheets[0]["seats"].index("joueur2")
        assert first["audit"]["culprit"] == gone and "stopped answering" in first["audit"]["rule"], first
        assert first["void"].startswith("abandoned by joueur2"), first
        assert first["scores"] == [0, 0, 0] and first["contract"] is None, first  # never in its favour
