"""``tarot match``: the duplicate rotation, its figures, determinism for a seed, and its JSON."""

from __future__ import annotations

import json

import pytest

from client.cli import main
from client.match_cmd import match

pytestmark = pytest.mark.heavy


def strip_times(result: dict[str, object]) -> dict[str, object]:
    levels = result["levels"]
    assert isinstance(levels, dict)
    return {**result, "levels": {k: {**v, "decision_ms": None} for k, v in levels.items()}}


def test_a_match_is_the_same_for_a_seed_and_its_figures_add_up() -> None:
    first = match(4, 2, 9, ("strong:2", "random"))
    assert strip_times(first) == strip_times(match(4, 2, 9, ("strong:2", "random")))
    tested = first["levels"]["strong:2"]
    other = first["levels"]["random"]
    # Every row sums to zero, so in the same seats the other level scores -1/(n-1) of the tested.
    assert other["mean"]["value"] == pytest.approx(-tested["mean"]["value"] / 3, abs=0.02)
    assert first["margin"]["value"] == pytest.approx(
        tested["mean"]["value"] - other["mean"]["value"], abs=0.02
    )
    assert first["margin"]["ci95_low"] <= first["margin"]["value"] <= first["margin"]["ci95_high"]
    assert (
        tested["decisions"] > 0 and tested["decision_ms"]["median"] <= tested["decision_ms"]["p95"]
    )
    contracts = sum(tested["contracts"].values()) + sum(other["contracts"].values())
    assert tested["bids_taken"] + other["bids_taken"] == contracts <= 2 * 4


@pytest.mark.daemons
def test_a_match_spread_over_processes_is_the_same_match() -> None:
    alone = match(3, 3, 4, ("strong:1", "basic"))
    spread = match(3, 3, 4, ("strong:1", "basic"), jobs=2)
    assert strip_times(spread) == strip_times(alone)
    assert spread["levels"]["strong:1"]["decisions"] == alone["levels"]["strong:1"]["decisions"]


def test_tarot_match_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "match",
                "strong:1",
                "basic",
                "--players",
                "3",
                "--deals",
                "1",
                "--seed",
                "2",
                "--json",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert (
        result["players"] == 3
        and result["deals"] == 1
        and set(result["levels"]) == {"strong:1", "basic"}
    )


def test_tarot_match_refuses_an_unknown_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "grandmaster"]) == 2
    assert "unknown bot level 'grandmaster'" in capsys.readouterr().err
    assert main(["match", "basic", "basic"]) == 2
