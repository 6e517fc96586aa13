"""Checks nobody waits for run on low-priority threads (issue 9).

A seat waits for the check of the step just before its turn and of the last lock; every
other shuffle and lock step it checks in :func:`protocol.deck.group.in_background`, at the same
moment as before and with the same outcome — in the daemon (:class:`tarotd.workers.Workers`)
on threads of the lowest CPU priority, so that, when a table's daemons share a machine, the
seat the table waits for gets the cores first.  A check starved there past its patience is
done by the caller itself, and a late copy of it finishing afterwards changes nothing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

import pytest
from deck_tables import commit_round, fresh_table, lock_rounds

import client.cli
import lab.bench.cmd
import protocol.deck.group as group
import protocol.deck.public_deck as deck_module
import tarotd.cli
from client.workers import TOOLS
from lab.cheats.attacks import BadShuffleDeck
from protocol.deck.group import CARD_POINTS, GENERATOR, in_background, mul_batches
from protocol.deck.payloads import Lock, Shuffle
from protocol.deck.public_deck import PublicDeck
from protocol.replication.verdict import VerdictError
from tarotd.workers import BACKGROUND_NICENESS, DAEMON, Workers

pytestmark = pytest.mark.heavy

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a thread's own niceness is Linux's"
)


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.fixture(autouse=True)
def workers() -> Iterator[Workers]:
    """The daemon's scheduler, as ``tarotd`` installs it."""
    installed = Workers()
    previous = group.use_scheduler(installed)
    try:
        yield installed
    finally:
        group.use_scheduler(previous)


def test_in_background_gives_the_result_and_the_error_of_the_work() -> None:
    assert in_background(lambda: 6 * 7) == 42

    def fails() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        in_background(fails)


@linux_only
def test_the_work_and_the_slices_it_hands_on_run_at_the_lowest_priority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[str, int]] = []
    first_invalid = group._first_invalid

    def spy(points: Sequence[object], offset: int) -> int | None:
        seen.append((threading.current_thread().name, niceness()))
        return first_invalid(points, offset)

    monkeypatch.setattr(group, "_first_invalid", spy)
    points = list(CARD_POINTS)
    points[60] = b"\x00" * 32  # not a point of the subgroup
    assert in_background(lambda: (niceness(), group.first_invalid_point(points))) == (
        BACKGROUND_NICENESS,
        60,
    )
    assert len(seen) == len(group._slices(78)) and all(
        name.startswith("tarot-background") and nice == BACKGROUND_NICENESS for name, nice in seen
    )
    seen.clear()
    assert group.first_invalid_point(points) == 60  # the foreground keeps its priority
    assert seen and all(nice == niceness() for _, nice in seen)


def test_in_background_from_the_background_runs_the_work_where_it_is() -> None:
    outer = in_background(lambda: (threading.get_ident(), in_background(threading.get_ident)))
    assert outer[0] == outer[1]


def test_a_caller_does_the_work_itself_once_the_background_is_starved_past_its_patience(
    workers: Workers,
) -> None:
    caller = threading.get_ident()
    release = threading.Event()

    def work() -> int:
        if threading.get_ident() != caller:
            release.wait(10)  # the background copy gets no core
        return threading.get_ident()

    try:
        workers.patience = 0.05
        assert in_background(work) == caller
        # The starved copy still holds the background: the next caller does not queue behind it.
        workers.patience = 10
        assert in_background(threading.get_ident) == caller
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while workers._threads().turn.locked() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert in_background(threading.get_ident) != caller  # the background is free again


def _chain(own_seat: int | None) -> list[tuple[str, int]]:
    """The shuffle and lock steps a deck checked in the background, over a whole chain."""
    background: list[tuple[str, int]] = []
    seats, driver = fresh_table(5, salt=6)
    observer = PublicDeck(driver.setup, own_seat)
    with pytest.MonkeyPatch.context() as patch:

        def spy(work: Callable[[], object]) -> object:
            assert isinstance(work, partial), "the deck hands on its check of a step bound to it"
            step = work.args[0]
            assert isinstance(step, (Shuffle, Lock))
            background.append((step.KIND, step.seat))
            return in_background(work)

        patch.setattr(deck_module, "in_background", spy)
        lock_rounds(seats, driver, observer)
    assert observer.current_points() == driver.current_points()
    return background


def test_a_seat_checks_at_full_priority_the_steps_it_waits_for_and_only_those() -> None:
    # Seat 3 builds on seat 2's shuffle and lock; everyone waits for the last lock (seat 4's).
    assert _chain(3) == [
        ("shuffle", 0),
        ("shuffle", 1),
        ("shuffle", 3),
        ("shuffle", 4),
        ("lock", 0),
        ("lock", 1),
        ("lock", 3),
    ]
    # Seat 0 locks first: it builds on the last shuffle.
    assert _chain(0) == [("shuffle", k) for k in range(4)] + [("lock", k) for k in range(4)]
    assert _chain(None) == []  # an auditor waits for everything


def test_a_late_copy_of_a_background_check_finds_what_the_first_found_and_changes_nothing() -> None:
    """What a copy starved in the background does when it finishes after the caller did the
    check again and the deck moved on: it must check the step against the points that step
    was computed from, not the deck's latest."""
    done: list[tuple[Callable[[], object], object]] = []
    seats, driver = fresh_table(5, salt=7)
    observer = PublicDeck(driver.setup, own_seat=2)
    with pytest.MonkeyPatch.context() as patch:

        def first_copy(work: Callable[[], object]) -> object:
            result = work()
            done.append((work, result))
            return result

        patch.setattr(deck_module, "in_background", first_copy)
        lock_rounds(seats, driver, observer)
    points = observer.current_points()
    assert len(done) == 7
    for work, result in done:
        assert work() == result
    assert observer.current_points() == points == driver.current_points()


def test_a_step_checked_in_the_background_is_refused_as_at_once() -> None:
    seats, driver = fresh_table(5, cheaters={0: BadShuffleDeck})
    driver.trusted = frozenset(range(5))
    observer = PublicDeck(driver.setup, own_seat=3)
    commit_round(seats, driver, observer)
    bent = seats[0].shuffle(driver)
    with pytest.raises(VerdictError) as caught:
        observer.receive(bent)
    assert (caught.value.verdict.seat, caught.value.verdict.step) == (0, "shuffle")
    assert "repeats a point" in caught.value.verdict.reason
    assert observer.current_points() == CARD_POINTS  # nothing taken


@pytest.mark.daemons
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_checks_in_its_own_background() -> None:
    """A child forked while the parent's turn is taken (another thread in the background)
    must not wait for a lock and threads it does not have."""
    started, release = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait()

    parent = threading.Thread(target=lambda: in_background(hold))
    parent.start()
    try:
        assert started.wait(10)
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if its own background answers within 10 s
            signal.alarm(10)
            os._exit(0 if in_background(lambda: 42) == 42 else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        parent.join()
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.daemons
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_multiplies_over_its_own_threads() -> None:
    scalar = (2).to_bytes(32, "little")
    batches = [([scalar] * 50, [GENERATOR] * 50), ([scalar] * 50, [GENERATOR] * 50)]
    expected = mul_batches(batches)  # the parent's pool is made now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: would wait forever on the parent's pool, whose threads it lacks
        signal.alarm(10)  # then dies, and the parent reads nothing
        try:
            os.write(write, b"ok" if mul_batches(batches) == expected else b"wrong")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        assert answer.read() == b"ok"
    os.waitpid(pid, 0)


def test_tarotd_and_tarot_run_the_group_on_their_threads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The protocol runs serially unless told: each program installs its scheduler as it
    starts (the daemon's with the niced background, the tools' without)."""
    installed: list[object] = []

    def run_daemon(daemon: object) -> int:
        installed.append(group._scheduler)
        return 0

    monkeypatch.setattr(tarotd.cli, "Daemon", lambda options: None)
    monkeypatch.setattr(tarotd.cli, "_run", run_daemon)
    monkeypatch.setattr(asyncio, "run", lambda result: result)
    assert tarotd.cli.main(["--home", f"{tmp_path}/anne"]) == 0

    def run_tool(args: object) -> int:
        installed.append(group._scheduler)
        return 0

    monkeypatch.setattr(lab.bench.cmd, "run", run_tool)
    assert client.cli.main(["bench", "--quick"]) == 0
    daemon, tools = installed
    assert daemon is DAEMON and tools is TOOLS
