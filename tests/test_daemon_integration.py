"""Real ``tarotd`` processes on 127.0.0.1 with static peers, bots at every seat, whole deals."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemons import scores, start_daemons, wait_all

pytestmark = pytest.mark.daemons


@pytest.mark.parametrize("players", [3, 4, 5])
def test_daemons_play_three_deals_with_identical_score_sheets(tmp_path: Path, players: int) -> None:
    processes, homes = start_daemons(tmp_path, players, deals=3)
    wait_all(processes, tmp_path, timeout=240)
    sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets)
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 3
    for deal in deals:
        assert deal["audit"] == "ok"
        assert sum(deal["scores"]) == 0
    assert sheets[0]["totals"] == [sum(d["scores"][s] for d in deals) for s in range(players)]
    for home in homes:
        assert oct(home.stat().st_mode & 0o777) == "0o700"
        assert oct((home / "identity.key").stat().st_mode & 0o777) == "0o600"
        assert oct((home / "tarot.db").stat().st_mode & 0o777) == "0o600"
