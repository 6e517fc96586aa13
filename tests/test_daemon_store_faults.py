"""Real daemons whose store meets a fault (issue 26, items 6 and 10): a database emptied in a
home that has its keys is refused in one line; a log deleted after a crash stops the table
it held, said in the log; a disk that fills mid-deal pauses the table at that daemon, which
takes it up again by itself once there is room — every member's sheet identical at the end."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.daemons import (
    answer,
    daemon_argv,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    stage_of,
    start_daemons,
    wait_all,
)
from tests.disk import fill, free, small_disk

pytestmark = pytest.mark.daemons


def alone(tmp_path: Path, deals: int) -> list[str]:
    """A daemon hosting every seat of a table of three (its seat and two bots)."""
    return daemon_argv(
        tmp_path / "d0", "seul", 0, [], deals=deals, extra=["--bots", "2", "--think", "0.05"]
    )


def until(
    condition: Callable[[], bool],
    what: str,
    process: subprocess.Popen[bytes],
    tmp_path: Path,
    timeout: float = 90,
) -> None:
    """Wait for ``condition()``; fail, with the logs, if the daemon dies or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"never saw {what}:\n{logs(tmp_path, len(list(tmp_path.glob('d*.log'))))}")
        time.sleep(0.05)


def test_an_emptied_database_in_a_home_with_keys_is_refused_in_one_line(tmp_path: Path) -> None:
    """A home that played had its ``tarot.db`` emptied (a bad copy, a truncation): the daemon
    says so in one line and exits with status 1 — before, it took the home for a new one
    and played on, a member that had forgotten its tables, seeds and sheets."""
    argv = alone(tmp_path, deals=1)
    wait_all([spawn(argv, log_path(tmp_path, 0))], tmp_path, timeout=90)
    database = tmp_path / "d0" / "tarot.db"
    database.write_bytes(b"")
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1, again.stderr
    lines = again.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"tarotd: {database} is empty, but this home has its identity keys"
    ), again.stderr
    assert database.stat().st_size == 0  # left as it was found


def test_a_log_deleted_after_a_crash_stops_the_table_it_held_and_says_so(tmp_path: Path) -> None:
    """``kill -9`` in the first deal, then ``tarot.db-wal`` deleted: everything the deal had
    written lived there, so the table cannot be taken up without risking a second message
    for a slot the daemon spoke in.  Before, the home was taken for a new one, silently; now
    the log says what was lost, the table stays stopped, and the daemon plays a new one."""
    # Three deals: a first deal everybody passes is over before anyone sees its tricks.
    first = spawn(alone(tmp_path, deals=3), log_path(tmp_path, 0))
    try:
        until(lambda: stage_of(tmp_path / "d0").startswith("play"), "the tricks", first, tmp_path)
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        kill_all([first])
    home = tmp_path / "d0"
    (home / "tarot.db-wal").unlink()
    (home / "tarot.db-shm").unlink(missing_ok=True)
    wait_all([spawn(alone(tmp_path, deals=1), log_path(tmp_path, 0))], tmp_path, timeout=90)
    text = log_path(tmp_path, 0).read_text()
    assert "stopped without closing it, and its log tarot.db-wal was deleted since" in text, text[
        -3000:
    ]
    assert (
        "cannot go on: what this daemon signed and received in its last deals was in the log"
        in text
    )
    assert "taking table" not in text  # never taken up
    sheet = scores(home)
    # the new table, played whole
    assert isinstance(sheet["deals"], list) and len(sheet["deals"]) == 1


def test_a_daemon_whose_disk_fills_mid_deal_pauses_and_takes_up_again_by_itself(
    tmp_path: Path,
) -> None:
    """The home of one of three daemons is a small disk, filled in the tricks of the first
    deal and freed a few seconds later (well within ``--timeout``).  Before, each failed save
    was a traceback, the message counted delivered anyway and lost, and the daemon never came
    back; now its table pauses there — said in its log and in its client's ``state`` — nobody
    is blamed, and once there is room it goes on by itself: the table finishes, and every
    member's sheet is the same, every deal audited ok."""
    players, deals, victim = 3, 2, 1
    with small_disk(tmp_path / f"d{victim}", "8m") as disk:
        processes, homes = start_daemons(tmp_path, players, deals, "--think", "0.1", timeout=60)
        try:
            until(
                lambda: stage_of(homes[victim]).startswith("play, trick"),
                "the tricks",
                processes[victim],
                tmp_path,
            )
            fill(disk)
            until(
                lambda: (
                    "paused here: the disk of the home is full"
                    in log_path(tmp_path, victim).read_text()
                ),
                "the table paused",
                processes[victim],
                tmp_path,
                timeout=30,
            )
            state = answer(homes[victim], "state")
            assert isinstance(state, dict) and state["paused"]["fault"] == "disk-full", state
            time.sleep(3)  # full for a while: the others' messages wait, unacknowledged
            free(disk)
            wait_all(processes, tmp_path, timeout=240)
        finally:
            kill_all(processes)
        sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets), logs(tmp_path, players)
    played = sheets[0]["deals"]
    assert isinstance(played, list) and len(played) == deals
    assert all(deal["audit"] == "ok" for deal in played), played
    text = log_path(tmp_path, victim).read_text()
    assert (
        text.count("paused here") == 1 and "goes on: the disk of the home is full no more" in text
    ), text[-4000:]
    assert "Traceback" not in text, text[-4000:]  # one line for the fault, one for its end
