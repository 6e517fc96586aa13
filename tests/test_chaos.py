"""Chaos runs (issue 26, item 6, "Done when"): a table of three real daemons on a simulated LAN
plays several deals while a driver, from a seed, at a random moment, kills one (SIGKILL) and
starts it again, stops it (SIGSTOP) and continues it, fills its disk and frees it, or cuts its
cable and plugs it back — for less and for more than ``--timeout``, and also at the moment
between its last card and its reveal.  At the end every member's sheet is the same, and every
row is explained: audited ok, void saying why, or naming the seat its verdict is about.

One fault a run, so that a fault that parts the sheets is named by its own parametrization;
what broke, seed by seed, is printed on failure: each member's rows.  Before the rule of
``protocol.replication.agreement`` five of the eleven broke (a member away longer than ``--timeout``
wedged the table, or parted the sheets when it was between its last card and its reveal).

Root only (network namespaces, the tmpfs of a full disk), and slow: a minute or two a run;
all eleven about 15 minutes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lan import NEEDS_ROOT, Daemon, Fleet, fleet, lan_of, score_sheet

from client.api import DaemonRefused, DaemonUnavailable, ask
from tests.disk import fill, free, small_disk

pytestmark = [pytest.mark.daemons, NEEDS_ROOT, pytest.mark.slow]

SEATS, DEALS = 3, 4
TIMEOUT = 8.0  #: every daemon's --timeout (and --decision-timeout, twice that)
SHORT, LONG = TIMEOUT / 2, TIMEOUT * 2.5  #: outages well within, and well beyond, --timeout
INVITE = "CHA0-5026"


@dataclass(frozen=True)
class Fault:
    """One fault of a chaos run: ``kind`` for ``down`` seconds, at a random moment or
    (``before_reveal``) once the victim has played its last card of a deal and before
    the others have played theirs, so before its reveal."""

    kind: str  #: "kill", "stop", "disk" or "link"
    down: float
    before_reveal: bool = False


class Table:
    """The daemons of a chaos run and the faults a driver can do to them."""

    def __init__(self, group: Fleet, daemons: list[Daemon], disk: Path | None) -> None:
        self.group, self.daemons, self.disk = group, daemons, disk
        self.seen: dict[str, Any] = {}  #: the last state a daemon answered

    def state(self, daemon: Daemon) -> dict[str, Any] | None:
        async def ask_briefly() -> Any:
            return await asyncio.wait_for(ask(daemon.home, "state"), timeout=5)

        try:
            state: dict[str, Any] = asyncio.run(ask_briefly())
        except (DaemonUnavailable, DaemonRefused, OSError, TimeoutError):
            return None
        self.seen = state
        return state

    def hand_played_out(self, daemon: Daemon) -> bool:
        """Whether ``daemon``'s seat has played its last card while others still hold theirs."""
        state = self.state(daemon)
        view = None if state is None else state.get("view")
        return view is not None and view["phase"] == "playing" and not view["hand"]

    def wait_until(self, condition: Callable[[], bool], what: str, poll: float = 0.02) -> None:
        while not condition():
            if self.group.remaining() <= 0 or any(
                d.process.poll() is not None for d in self.daemons
            ):
                self.group.fail(f"never saw {what}")
            time.sleep(poll)

    def hit(self, fault: Fault, victim: Daemon) -> None:
        """Do ``fault`` to ``victim``, wait ``fault.down`` seconds, and undo it."""
        if fault.kind == "kill":
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            time.sleep(fault.down)
            self.group.restart(victim)
        elif fault.kind == "stop":
            os.kill(victim.process.pid, signal.SIGSTOP)
            time.sleep(fault.down)
            os.kill(victim.process.pid, signal.SIGCONT)
        elif fault.kind == "disk":
            assert self.disk is not None
            fill(self.disk)
            time.sleep(fault.down)
            free(self.disk)
        else:
            self.group.lan.link_down(victim.host)
            time.sleep(fault.down)
            self.group.lan.link_up(victim.host)


def explained(row: dict[str, Any]) -> bool:
    """A row is explained if its deal was audited ok, is void and says why, or names the seat
    its verdict is about and the rule (a seat silent at its reveal, the deal scored without it)."""
    audit = row["audit"]
    return (
        audit == "ok"
        or bool(row.get("void"))
        or (isinstance(audit, dict) and bool(audit.get("rule")))
    )


def chaos(tmp_path: Path, seed: int, fault: Fault) -> str:
    """One chaos run; a description of what was done, for the report."""
    rng = random.Random(seed)
    victim_index = rng.randrange(SEATS)
    # bots slower: the moment after a last card is theirs
    think = "0.3" if fault.before_reveal else "0.1"
    with ExitStack() as stack:
        lan = stack.enter_context(lan_of(SEATS))
        disk = None
        if fault.kind == "disk":  # the victim's home is a small disk of its own
            disk = stack.enter_context(small_disk(tmp_path / f"joueur{victim_index}", "8m"))
        group = stack.enter_context(fleet(lan, tmp_path, budget=240))
        daemons = [
            group.start(
                i,
                f"joueur{i}",
                "--table",
                "club",
                "--seats",
                str(SEATS),
                "--invite",
                INVITE,
                "--deals",
                str(DEALS),
                "--timeout",
                str(TIMEOUT),
                "--decision-timeout",
                str(2 * TIMEOUT),
                "--think",
                think,
            )
            for i in range(SEATS)
        ]
        table, victim = Table(group, daemons, disk), daemons[victim_index]
        table.wait_until(
            lambda: (table.state(victim) or {}).get("view") is not None, "the first deal"
        )
        if fault.before_reveal:
            table.wait_until(
                lambda: table.hand_played_out(victim), "the victim's last card before its reveal"
            )
            moment = "between its last card and its reveal"
        else:
            delay = round(rng.uniform(0.5, 15.0), 1)
            time.sleep(delay)
            table.state(victim)
            moment = f"{delay} s into the first deal"
        table.hit(fault, victim)
        done = (
            f"{fault.kind} {victim.home.name} for {fault.down:g} s, {moment} "
            f"(deal {table.seen.get('deal')})"
        )
        group.wait(daemons)
        sheets = {d.home.name: score_sheet(d) for d in daemons}
    rows = {
        name: [
            row.get("void") or (row["audit"] if row["audit"] != "ok" else row["scores"])
            for row in sheet["deals"]
        ]
        for name, sheet in sheets.items()
    }
    said = f"seed {seed}: {done}; the sheets' rows: {json.dumps(rows, ensure_ascii=False)}"
    print(said)
    first = next(iter(sheets.values()))
    assert all(sheet["deals"] == first["deals"] for sheet in sheets.values()), said
    assert len(first["deals"]) == DEALS, said
    assert all(explained(row) for row in first["deals"]), said
    return said


FAULTS = {
    "kill-short": Fault("kill", SHORT),
    "kill-long": Fault("kill", LONG),
    "stop-short": Fault("stop", SHORT),
    "stop-long": Fault("stop", LONG),
    "kill-before-reveal-short": Fault("kill", SHORT, before_reveal=True),
    "kill-before-reveal-long": Fault("kill", LONG, before_reveal=True),
    "stop-before-reveal-short": Fault("stop", SHORT, before_reveal=True),
    "stop-before-reveal-long": Fault("stop", LONG, before_reveal=True),
    "disk-full": Fault("disk", SHORT),
    "link-short": Fault("link", SHORT),
    "link-long": Fault("link", LONG),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_chaos_run_ends_with_every_sheet_the_same_and_every_row_explained(
    tmp_path: Path, name: str
) -> None:
    chaos(tmp_path, seed=sum(map(ord, name)), fault=FAULTS[name])
