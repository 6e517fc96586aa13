"""Issue 35's agreement between real daemons on a simulated LAN ("How to test it", the part the
fault simulator cannot vouch for: real processes, real sockets, a real cable).

Four ``tarotd`` at one table, each in a network namespace of its own and given every other as a
static keyed peer (``--peer KEY@IP:PORT``, ``--no-discovery``), so that a member loses the
others only by what the test does to it, and no beacon brings it back sooner than its links:

* **A cable cut longer than** ``--timeout`` at a deck step (shuffle, lock, deal_keys) and in the
  play, then plugged back — item 1: the member cut used to time the others out alone, reveal,
  and stay at the old deal while they waited for it at the next deal's commitments, for ever.
* **A member killed in the last deal of a** ``--deals 3`` **table** and started again after the
  others have finished it — while they still wait for it, or after they have all left, and then
  only an idle member (started again with no table) can give it the last row — item 2: it used
  to stay a row short for ever.

At the end every member's sheet must be the same, one row per deal in order, and no seat but
the one the test cut or killed may be named a culprit or charged a penalty.  Each test prints
what it saw (the stages the watched member went through, what its ``status`` said, the rows) so
that a run can be read without its logs; a failure shows every daemon's log.

Root only (network namespaces), and slow: forty seconds a cut, two and a half minutes for the
member back after everyone left (it waits out its own linger), six minutes for the six on the
shared 2-core machine; on the code before the closings each runs to its budget and fails.  Run
one at a time: four daemons doing the deck's work already fill both cores, and a member whose
event loop is starved past ``--timeout`` is timed out by the others — a fault the test did not
make, which it would rightly report as a seat blamed wrongly.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from daemons import home_key, stop
from lan import NEEDS_ROOT, PEER_PORT, Daemon, Fleet, fleet, lan_of

pytestmark = [pytest.mark.daemons, NEEDS_ROOT, pytest.mark.slow]

SEATS = 4
TIMEOUT = 8.0  #: every daemon's --timeout: test_chaos's, which the shared machine keeps to
THINK = 0.1  #: bots' seconds a decision: quick deals, yet a turn lasts long enough to see
#: The bots: uniform over the legal choices, so that a deal is nearly never passed by all (the
#: basic bots passed three deals in four here) — a test needs a play to cut or kill it in.
BOT = "random"
POLL = 0.02  #: seconds between two looks at a member's status while waiting for a moment
LATE_HOST = 1  #: the member killed in the last deal
IDLE_HOST = 3  #: the member started again with no table, to serve the last row

TableStatus = dict[str, Any]  #: one table of ``tarot status --json``
T = TypeVar("T")


@contextmanager
def static_table(tmp_path: Path, deals: int, budget: float) -> Iterator[tuple[Fleet, list[Daemon]]]:
    """Four daemons forming the table ``club`` to play ``deals`` deals, each listing every other
    by key and address (the README's "Without broadcast"); ``budget`` seconds for the test."""
    names = [f"joueur{i}" for i in range(SEATS)]
    keys = [home_key(tmp_path / name) for name in names]  # made now, as --print-key would
    with lan_of(SEATS) as lan, fleet(lan, tmp_path, budget) as group:
        daemons = []
        for i, name in enumerate(names):
            peers = [
                arg
                for j in range(SEATS)
                if j != i
                for arg in ("--peer", f"{keys[j]}@{lan.ip(j)}:{PEER_PORT}")
            ]
            table = ["--table", "club", "--seats", str(SEATS), "--deals", str(deals)]
            timing = ["--timeout", str(TIMEOUT), "--decision-timeout", str(3 * TIMEOUT)]
            daemons.append(
                group.start(
                    i,
                    name,
                    "--no-discovery",
                    *peers,
                    *table,
                    *timing,
                    *("--bot", BOT, "--think", str(THINK)),  # this --bot wins over the fleet's
                )
            )
        yield group, daemons


def without_table(argv: Sequence[str]) -> list[str]:
    """A daemon's command line with its table taken away (``--table``, ``--seats``,
    ``--deals``): the same home, key, port and peers, idle — what a member runs on another
    evening before anyone opens a table."""
    dropped = {"--table", "--seats", "--deals"}
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in dropped:
            skip = True
        else:
            kept.append(arg)
    return kept


def table_of(group: Fleet, daemon: Daemon) -> TableStatus | None:
    """The first table of ``daemon``'s status, or None while it has none or does not answer."""
    status = group.status(daemon)
    tables = status.get("tables") if status is not None else None
    return dict(tables[0]) if tables else None


def until(
    group: Fleet, look: Callable[[], T | None], what: object, alive: Sequence[Daemon], poll: float
) -> T:
    """What ``look`` gives once it gives something; the test fails, with every log, at the
    deadline or if a daemon of ``alive`` exits first (the moment can no longer come), saying
    ``what`` it waited for — made a string only then, so it may be a :class:`Trace`."""
    while True:
        seen = look()
        if seen is not None:
            return seen
        gone = [d.home.name for d in alive if d.process.poll() is not None]
        if gone or group.remaining() <= 0:
            group.fail(f"never saw {what} ({', '.join(gone) or 'deadline'})")
        time.sleep(poll)


class Trace:
    """What a member's status said, each change once, with the seconds since the trace began:
    the stages it went through, or what it said while it lacked a row."""

    KEYS = ("deal", "stage", "scored", "waiting_for", "unsettled", "rows_awaited")

    def __init__(self) -> None:
        self.heading = ""  #: what it is a trace of, when it is shown on its own
        self.began = time.monotonic()
        self.said: list[str] = []
        self.last: TableStatus | None = None

    def note(self, table: TableStatus | None) -> TableStatus | None:
        if table is not None:
            shown = {key: table[key] for key in self.KEYS if key in table}
            if self.last is None or shown != {k: self.last.get(k) for k in shown}:
                self.said.append(f"{time.monotonic() - self.began:.1f}s {json.dumps(shown)}")
            self.last = table
        return table

    def __str__(self) -> str:
        return "\n  ".join([self.heading, *self.said])


def watch(
    group: Fleet,
    daemon: Daemon,
    wanted: Callable[[TableStatus], bool],
    what: str,
    alive: Sequence[Daemon],
    trace: Trace,
) -> TableStatus:
    """``daemon``'s table once ``wanted`` holds of it, every state on the way in ``trace``."""

    def look() -> TableStatus | None:
        table = trace.note(table_of(group, daemon))
        return table if table is not None and wanted(table) else None

    trace.heading = f"{daemon.home.name} at {what}; it said:"
    return until(group, look, trace, alive, POLL)


def observe(
    group: Fleet,
    daemon: Daemon,
    seconds: float,
    trace: Trace,
    enough: Callable[[TableStatus], bool] = lambda table: False,
) -> None:
    """Note ``daemon``'s status for ``seconds``, until it exits or says ``enough``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and daemon.process.poll() is None:
        table = trace.note(table_of(group, daemon))
        if table is not None and enough(table):
            return
        time.sleep(0.2)


def step_of(table: TableStatus) -> str:
    """The step of a status's stage: "play" for "play, trick 3"."""
    return str(table["stage"]).split(",")[0]


def rows(sheet: dict[str, Any]) -> list[object]:
    """A sheet's rows as a line of a report: the scores of an audited deal, else why not."""
    return [
        row.get("void") or (row["scores"] if row["audit"] == "ok" else row["audit"])
        for row in sheet["deals"]
    ]


def agreed_sheet(
    group: Fleet, daemons: Sequence[Daemon], deals: int, away: Daemon
) -> dict[str, Any]:
    """Every member's score sheet, identical, with exactly one row per deal in order, and no
    seat but ``away``'s named a culprit or charged a penalty in any row.  Returns the sheet."""
    sheets: dict[str, dict[str, Any]] = {}
    for daemon in daemons:
        try:  # the file, not tarot scores --json: the same, and no process to fail meanwhile
            sheets[daemon.home.name] = json.loads((daemon.home / "scores.json").read_text())
        except (OSError, ValueError) as error:
            group.fail(f"{daemon.home.name} has no score sheet: {error}")
    said = json.dumps({name: rows(sheet) for name, sheet in sheets.items()}, ensure_ascii=False)
    print(f"the sheets' rows: {said}")
    first = sheets[daemons[0].home.name]
    if any(sheet != first for sheet in sheets.values()):
        group.fail(f"the score sheets differ: {said}")
    assert [row["deal"] for row in first["deals"]] == list(range(deals)), said
    seat = first["seats"].index(away.home.name)
    for row in first["deals"]:
        audit = row["audit"]
        culprit = audit.get("culprit") if isinstance(audit, dict) else None
        assert culprit in (None, seat), f"deal {row['deal']} names seat {culprit}: {said}"
        assert set(row["penalties"]) <= {seat}, f"deal {row['deal']} charges others: {said}"
    return first


# --- 1. a cable cut past --timeout, at each deck step and in the play ---------------------

STEPS = ("shuffle", "lock", "deal_keys", "play")
CUT_SEAT = 1  #: the seat whose member's cable is cut: it has a seat before it and two after
#: When to cut CUT_SEAT's cable, by its own status (step, seats it waits for), so that it cannot
#: have sent its part of the step yet and the others time it out there.  Shuffle and lock go
#: in seat order: seat 0 is at work on its part — or, for the lock, seat 3 still shuffles (a
#: member busy checking shuffles may not answer its API until it has locked).  The deal keys
#: come all at once after the last lock: seat 3 locks (not seat 2: ours might not have sent its
#: lock yet — missed so, once in three runs).  In the play, seat 0 is to play: ours is next.
MOMENTS: dict[str, Callable[[str, list[int]], bool]] = {
    "shuffle": lambda stage, waiting: stage == "shuffle" and waiting == [0],
    "lock": lambda stage, waiting: (stage, waiting) in (("shuffle", [SEATS - 1]), ("lock", [0])),
    "deal_keys": lambda stage, waiting: stage == "lock" and waiting == [SEATS - 1],
    "play": lambda stage, waiting: stage == "play" and waiting == [CUT_SEAT - 1],
}


def member_at(group: Fleet, daemons: Sequence[Daemon], seat: int) -> Daemon:
    """The member at ``seat`` (seats are drawn as the table forms), once one of them says."""

    def formed() -> TableStatus | None:
        return next((t for d in daemons if (t := table_of(group, d)) is not None), None)

    name = until(group, formed, "the table formed", daemons, POLL)["seats"][seat]
    return next(d for d in daemons if d.home.name == name)


@pytest.mark.parametrize("step", STEPS)
def test_a_member_cut_past_the_timeout_at_a_step_comes_back_to_the_same_sheet(
    tmp_path: Path, step: str
) -> None:
    """One member's cable is cut for twice ``--timeout`` in the first or second deal of three,
    before it can have sent its part of ``step`` (:data:`MOMENTS`), then plugged back.  The
    three others are a quorum: they time it out at ``step`` and go on to the next deal, whose
    commitments wait for it; back, it must adopt their closing (the row names it, silent) and
    play the next deals with them.

    Racy, and said so rather than failed: a step of the deck lasts a few hundred milliseconds at
    four here, and the member's API may not answer while it computes.  Its moment not seen in
    either deal, the test is skipped, saying what the member's status went through.  Seen, but
    the member's part sent between the status read and the cut, the others time it out at a
    later step: the row says which, and the test warns (and prints) that it missed the moment —
    the agreement is checked all the same, only not at the step named."""
    deals = 3
    with static_table(tmp_path, deals, budget=180) as (group, daemons):
        cut, trace, moment = member_at(group, daemons, CUT_SEAT), Trace(), MOMENTS[step]
        seen = watch(
            group,
            cut,
            lambda table: (
                table["deal"] == deals - 1 or moment(step_of(table), table["waiting_for"])
            ),
            f"a deal before its {step}",
            daemons,
            trace,
        )
        if seen["deal"] == deals - 1:
            pytest.skip(f"missed its moment: never saw {trace}")
        group.lan.link_down(cut.host)
        time.sleep(2 * TIMEOUT)
        group.lan.link_up(cut.host)
        back = time.monotonic()
        group.wait(daemons)
        print(
            f"{cut.home.name} (seat {CUT_SEAT}) cut for {2 * TIMEOUT:g} s; every daemon done "
            f"{time.monotonic() - back:.0f} s after the cable was back; cut once {trace}"
        )
        sheet = agreed_sheet(group, daemons, deals, away=cut)
    audit = sheet["deals"][seen["deal"]]["audit"]
    timed_out = audit.get("step") if isinstance(audit, dict) else None
    if timed_out != step:  # agreed_sheet has checked that no other seat is named
        missed = f"missed the moment: timed out at {timed_out}, not at {step}: {audit}"
        print(missed)
        warnings.warn(missed, stacklevel=1)


# --- 2. a member away past the end of the last deal ---------------------------------------

DEALS = 3
DECIDING = ("bidding", "call", "chien", "ecart", "chelem", "play")  #: stages after the deck


def kill_in_the_last_deal(group: Fleet, daemons: list[Daemon]) -> Daemon:
    """``kill -9`` of one member once its status shows the last deal past the deck, its
    players deciding (it has seen its cards: the others time it out, and charge it, after
    ``--timeout``)."""
    late, trace = daemons[LATE_HOST], Trace()
    watch(
        group,
        late,
        lambda table: table["deal"] == DEALS - 1 and step_of(table) in DECIDING,
        "the last deal's bidding or play",
        daemons,
        trace,
    )
    late.process.kill()
    late.process.wait()
    print(f"{late.home.name} killed at {trace.said[-1]}")
    return late


def has_finished(group: Fleet, daemon: Daemon) -> bool:
    """Whether ``daemon`` has scored its table's last deal (or already left)."""
    if daemon.process.poll() is not None:
        return True
    table = table_of(group, daemon)
    return table is not None and table["scored"] == DEALS


def test_a_member_killed_in_the_last_deal_and_back_while_the_others_wait_takes_the_last_row(
    tmp_path: Path,
) -> None:
    """Killed in the last deal, started again (same home, same command) once the three others
    have scored it without it — more than ``--timeout`` after the kill, within the six timeouts
    they wait for it: it must ask for their closing, adopt it, and every member leave, exit 0,
    with the same three rows."""
    with static_table(tmp_path, DEALS, budget=240) as (group, daemons):
        late = kill_in_the_last_deal(group, daemons)
        killed = time.monotonic()
        others = [d for d in daemons if d is not late]
        until(
            group,
            lambda: True if all(has_finished(group, d) for d in others) else None,
            "the others score the last deal",
            (),
            0.2,
        )
        time.sleep(max(0.0, killed + TIMEOUT + 1 - time.monotonic()))
        left = [d.home.name for d in others if d.process.poll() is not None]
        group.restart(late)
        trace = Trace()
        observe(group, late, group.remaining(), trace)
        print(
            f"{late.home.name} started again {trace.began - killed:.0f} s after the kill "
            f"(already gone: {left or 'none'}); what it said until it exited:{trace}"
        )
        group.wait(daemons)
        agreed_sheet(group, daemons, DEALS, away=late)


def test_a_member_back_after_everyone_left_takes_the_last_row_from_an_idle_member(
    tmp_path: Path,
) -> None:
    """Killed in the last deal, started again only once the three others have all left: it
    must say in its status that the deal is unsettled, rather than blame anyone; then one of
    them starts again with its home and no table, idle, and must serve it the last row from
    its store — the same three rows everywhere."""
    with static_table(tmp_path, DEALS, budget=360) as (group, daemons):
        late = kill_in_the_last_deal(group, daemons)
        others = [d for d in daemons if d is not late]
        group.wait(others)
        group.restart(late)
        alone = Trace()  # it times out the seat it waits for, then sees it is outvoted
        observe(group, late, 4 * TIMEOUT, alone, lambda table: bool(table.get("unsettled")))
        idle = daemons[IDLE_HOST]
        idle.argv = without_table(idle.argv)
        group.restart(idle)
        back = Trace()
        observe(group, late, group.remaining(), back)
        print(
            f"{late.home.name} started again after the others left; alone it said:{alone}\n"
            f"with {idle.home.name} back, idle, it said:{back}"
        )
        group.wait([late])
        assert stop(idle.process) == 0, group.logs()
        agreed_sheet(group, daemons, DEALS, away=late)
    said = alone.last
    assert said is not None and said["scored"] == DEALS - 1, f"alone it said:{alone}"
    assert said.get("unsettled"), f"alone, it never said its deal was unsettled:{alone}"
