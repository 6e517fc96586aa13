"""A player who walks away does not stop the table: with ``--autoplay S`` and no client
connected, a bot takes the seat's decisions (and asks for the next deal) after S seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemons import assert_no_traceback, kill_all, log_path, logs, scores, start_daemons, wait_all

pytestmark = pytest.mark.daemons


def test_a_seat_without_its_client_is_autoplayed_and_the_table_finishes(tmp_path: Path) -> None:
    processes, homes = start_daemons(tmp_path, 3, 2, "--autoplay", "0.2", humans=[0], human_deals=2)
    try:
        wait_all(processes, tmp_path, timeout=90)
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, 3))
        raise
    sheets = [scores(home) for home in homes]
    assert sheets[0] == sheets[1] == sheets[2]
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 2
    assert all(deal["audit"] == "ok" and sum(deal["scores"]) == 0 for deal in deals)
    assert "autoplayed until a client connects" in log_path(tmp_path, 0).read_text()
    assert_no_traceback(tmp_path, 3)
