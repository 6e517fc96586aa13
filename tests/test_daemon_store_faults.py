"""Real daemons whose store meets a fault (issue 26, items 6 and 10): a disk that fills
mid-deal pauses the table at that daemon, which takes it up again by itself once there is
room — every member's sheet identical at the end."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.daemons import answer, kill_all, log_path, logs, scores, stage_of, start_daemons, wait_all
from tests.disk import fill, free, small_disk


def until(condition: Callable[[], bool], what: str, process: subprocess.Popen[bytes], tmp_path: Path, timeout: float = 90) -> None:
    """Wait for ``condition()``; fail, with the logs, if the daemon dies or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"never saw {what}:\n{logs(tmp_path, len(list(tmp_path.glob('d*.log'))))}")
        time.sleep(0.05)


def test_a_daemon_whose_disk_fills_mid_deal_pauses_and_takes_up_again_by_itself(tmp_path: Path) -> None:
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
            until(lambda: stage_of(homes[victim]).startswith("play, trick"), "the tricks", processes[victim], tmp_path)
            fill(disk)
            until(lambda: "paused here: the disk of the home is full" in log_path(tmp_path, victim).read_text(),
                  "the table paused", processes[victim], tmp_path, timeout=30)
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
    assert text.count("paused here") == 1 and "goes on: the disk of the home is full no more" in text, text[-4000:]
    assert "Traceback" not in text, text[-4000:]  # one line for the fault, one for its end
