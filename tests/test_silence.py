"""A seat is timed out when the table stands still, not when this daemon has nothing to say."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from client.api import DaemonRefused, DaemonUnavailable, ask
from tarotd.silence import SilenceClock
from tests.daemons import kill_all, logs, start_daemons

TABLE, OTHER = b"T" * 16, b"U" * 16


def test_a_table_that_keeps_moving_is_never_silent() -> None:
    clock = SilenceClock(timeout=2.0)
    assert not any(clock.silent(TABLE, step, now=1.5 * step) for step in range(100))


def test_a_table_standing_still_is_silent_after_the_timeout_and_then_a_timeout_later() -> None:
    clock = SilenceClock(timeout=2.0)
    looks = {now: clock.silent(TABLE, "bid 3", now) for now in (0.0, 1.0, 2.0, 2.5, 3.0, 4.5, 5.0)}
    assert looks == {0.0: False, 1.0: False, 2.0: False, 2.5: True, 3.0: False, 4.5: False, 5.0: True}


def test_each_table_has_its_own_clock() -> None:
    clock = SilenceClock(timeout=2.0)
    clock.silent(TABLE, "a", 0.0)
    clock.silent(OTHER, "b", 0.0)
    clock.silent(OTHER, "c", 2.0)  # the other table moved
    assert clock.silent(TABLE, "a", 2.1) and not clock.silent(OTHER, "c", 2.1)


def test_the_time_the_daemon_was_held_is_nobodys_silence() -> None:
    clock = SilenceClock(timeout=2.0)
    clock.silent(TABLE, "a", 0.0)
    clock.held(5.0)  # an audit held the event loop: the messages of those seconds wait unread
    assert not clock.silent(TABLE, "a", 6.0)
    assert clock.silent(TABLE, "a", 7.5)


def stage(home: Path) -> str:
    try:
        status = asyncio.run(ask(home, "status"))
    except (DaemonUnavailable, DaemonRefused, OSError):
        return ""
    tables = status.get("tables") if isinstance(status, dict) else None
    return str(tables[0]["stage"]) if isinstance(tables, list) and tables else ""


def test_seats_that_each_answer_within_the_timeout_are_never_timed_out(tmp_path: Path) -> None:
    """Five bots answering in 0.3 s against a timeout of 1 s: each daemon sends nothing for
    1.2 s and more between two of its cards (four others play meanwhile), and timed out
    whoever's turn had just come when the silence was its own."""
    processes, homes = start_daemons(tmp_path, 5, None, "--think", "0.3", timeout=1.0)
    try:
        deadline = time.monotonic() + 90
        while not stage(homes[0]).startswith("play, trick 4"):
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                pytest.fail(f"the table did not reach its fourth trick:\n{logs(tmp_path, 5)}")
            time.sleep(0.1)
    finally:
        kill_all(processes)
    text = logs(tmp_path, 5, tail=1_000_000)
    assert "silent for" not in text, text
