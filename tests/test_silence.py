"""A seat is timed out when the table stands still, not when this daemon has nothing to say."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tarotd.silence import SilenceClock
from tests.daemons import answer, kill_all, logs, scores, stage_of, start_daemons, wait_all

TABLE, OTHER = b"T" * 16, b"U" * 16


def test_a_table_that_keeps_moving_is_never_silent() -> None:
    clock = SilenceClock()
    assert not any(clock.silent(TABLE, step, 1.5 * step, timeout=2.0) for step in range(100))


def test_a_table_standing_still_is_silent_after_the_timeout_and_then_a_timeout_later() -> None:
    clock = SilenceClock()
    looks = {
        now: clock.silent(TABLE, "bid 3", now, timeout=2.0)
        for now in (0.0, 1.0, 2.0, 2.5, 3.0, 4.5, 5.0)
    }
    assert looks == {
        0.0: False,
        1.0: False,
        2.0: False,
        2.5: True,
        3.0: False,
        4.5: False,
        5.0: True,
    }


def test_the_timeout_is_the_one_of_each_look() -> None:
    """A player deciding gets a long timeout; the same silence is too long once the table
    waits for a deck step, or for a daemon that went away."""
    clock = SilenceClock()
    assert not clock.silent(TABLE, "bid 3", 0.0, timeout=300.0)
    assert not clock.silent(TABLE, "bid 3", 40.0, timeout=300.0)
    assert clock.silent(TABLE, "bid 3", 41.0, timeout=30.0)


def test_each_table_has_its_own_clock() -> None:
    clock = SilenceClock()
    clock.silent(TABLE, "a", 0.0, timeout=2.0)
    clock.silent(OTHER, "b", 0.0, timeout=2.0)
    clock.silent(OTHER, "c", 2.0, timeout=2.0)  # the other table moved
    assert clock.silent(TABLE, "a", 2.1, timeout=2.0) and not clock.silent(
        OTHER, "c", 2.1, timeout=2.0
    )


def test_the_time_the_daemon_was_held_is_nobodys_silence() -> None:
    clock = SilenceClock()
    clock.silent(TABLE, "a", 0.0, timeout=2.0)
    clock.held(5.0)  # an audit held the event loop: the messages of those seconds wait unread
    assert not clock.silent(TABLE, "a", 6.0, timeout=2.0)
    assert clock.silent(TABLE, "a", 7.5, timeout=2.0)


@pytest.mark.daemons
def test_seats_that_each_answer_within_the_timeout_are_never_timed_out(tmp_path: Path) -> None:
    """Five bots answering in 0.6 s against a timeout of 2 s: each daemon sends nothing for
    2.4 s and more between two of its cards (four others play meanwhile), and timed out
    whoever's turn had just come when the silence was its own (the old code: twelve
    time-outs in 25 s)."""
    processes, homes = start_daemons(tmp_path, 5, None, "--think", "0.6", timeout=2.0)
    try:
        deadline = time.monotonic() + 90
        while not stage_of(homes[0]).startswith("play, trick 3"):
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                pytest.fail(f"the table did not reach its third trick:\n{logs(tmp_path, 5)}")
            time.sleep(0.1)
    finally:
        kill_all(processes)
    text = logs(tmp_path, 5, tail=1_000_000)
    assert "silent for" not in text, text


def decision(home: Path) -> object:
    """The decision the seat of the daemon with ``home`` owes now ("bidding"…), or None."""
    state = answer(home, "state")
    return state.get("decision") if isinstance(state, dict) else None


@pytest.mark.daemons
def test_a_player_deciding_at_a_daemon_that_answers_has_the_decision_timeout(
    tmp_path: Path,
) -> None:
    """A person thinking over a bid is not gone: the bots' daemons wait ``--decision-timeout``
    for them (not ``--timeout``, which is for the deck's steps and for daemons away), then
    end the deal as abandoned by that seat."""
    processes, homes = start_daemons(
        tmp_path, 3, 1, "--decision-timeout", "6", humans=[0], timeout=1.0
    )
    try:
        deadline = time.monotonic() + 60
        while decision(homes[0]) is None:
            if time.monotonic() > deadline:
                pytest.fail(f"the player never had a decision to take:\n{logs(tmp_path, 3)}")
            time.sleep(0.05)
        time.sleep(3.0)  # three times --timeout
        assert "silent for" not in logs(tmp_path, 3, tail=1_000_000)
        wait_all(processes[1:], tmp_path, timeout=30)  # the bots' one deal: abandoned
    finally:
        kill_all(processes)
    seat = scores(homes[1])["seats"].index("joueur0")
    for home in homes[1:]:
        (deal,) = scores(home)["deals"]
        assert deal["audit"]["culprit"] == seat and "stopped answering" in deal["audit"]["rule"], (
            deal
        )
