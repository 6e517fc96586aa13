"""The long run of the replicated deal (``scripts/test -m slow``): a thousand seeded deals at
each table size through ``tarot sim`` with mixed bots."""

from __future__ import annotations

import json

import pytest

from client.cli import main as tarot

pytestmark = pytest.mark.heavy


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_thousand_deals_audit_ok(players: int, capsys: pytest.CaptureFixture[str]) -> None:
    status = tarot(
        [
            "sim",
            "--players",
            str(players),
            "--deals",
            "1000",
            "--seed",
            "2026",
            "--bots",
            "basic,random",
            "--json",
        ]
    )
    assert status == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    deals, summary = lines[:-1], lines[-1]
    assert len(deals) == 1000 and summary["deals"] == 1000
    assert all(deal["audit"] == "ok" for deal in deals)
    assert all(sum(deal["scores"]) == 0 for deal in deals)
    totals = [sum(deal["scores"][seat] for deal in deals) for seat in range(players)]
    assert summary["totals"] == totals


def test_sim_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        tarot(
            ["sim", "--players", "3", "--deals", "2", "--seed", "1", "--bots", "random", "--json"]
        )
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    keys = {
        "deal",
        "dealer",
        "taker",
        "contract",
        "called",
        "partner",
        "hands",
        "chien",
        "ecart",
        "points",
        "bouts",
        "scores",
        "audit",
    }
    assert all(keys <= set(deal) for deal in lines[:-1])
    assert lines[-1]["summary"] is True
    for bad in (
        ["--bots", "genius"],
        ["--bots", "random,random,random,random"],
        ["--cheat", "7:revoke"],
        ["--cheat", "1:teleport"],
        ["--deals", "0"],
    ):
        try:
            status = tarot(["sim", "--players", "3", *bad])
        except SystemExit as exit_info:  # argparse's own errors
            status = int(exit_info.code or 0)
        assert status == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err
