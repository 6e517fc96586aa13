"""The deterministic fault simulator (lab/faultsim): members cut, paused, killed and restarted,
split cleanly or not, at every step of the deal, on a fake clock; once healed, every member
holds one row per deal, the same sheet, and no seat a fault did not touch is named.

The simulator runs in a process of its own (it swaps the group for a fast stand-in before the
protocol loads: lab/faultsim/fakegroup.py).  ``-m slow`` runs the 10,000 seeds.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.daemons

#: Seeds of the default suite, per table size, the three sizes run side by side (the slow
#: run: 10,000 in all).
QUICK_SEEDS = 70


def fault_sim(*args: str) -> tuple[int, dict[str, object], str]:
    return finished(started(*args))


def started(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lab.faultsim", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(run: subprocess.Popen[str]) -> tuple[int, dict[str, object], str]:
    out, err = run.communicate()
    return run.returncode, json.loads(out.splitlines()[-1]), err


def test_every_seed_ends_with_one_sheet() -> None:
    runs = [started("--players", str(p), "--seeds", str(QUICK_SEEDS)) for p in (3, 4, 5)]
    for players, run in zip((3, 4, 5), runs):
        code, summary, failures = finished(run)
        assert code == 0 and summary["failed"] == 0, (players, failures)
        assert summary["runs"] == QUICK_SEEDS


#: Seeds the 10,000-seed run found failing, each for a reason since fixed: a cycle of
#: timeouts at three (each member timing out another: the void certificate), reveal rounds
#: closed on different reveals at four (the half holding seat 0 closing a round alone) and at
#: five (signatures on two heads: a seat whose head can never close may vote it void), and a
#: seat that voted while the others went on to sign (a voter signs nothing: their head too is
#: one that can never close), and three members killed at five, one of which could not retrace
#: its journal (it now takes the deal up mute: SeatMachine.mute).  And at four, seed 280
#: (found by the first 1,000 seeds, below the long run's): a seat that signed a score heard one
#: seat vote, took its head for one that could never close and voted — while three of four
#: closed it by a timeout of the voter.  A head is a dead end only once those that will not sign
#: it leave no quorum (SeatMachine.note_voters).
FOUND = {3: (1050, 1237, 1343, 1557, 1641, 1657, 1671), 4: (2764, 1571, 280), 5: (1219, 2671)}


def test_the_seeds_the_long_run_found_end_with_one_sheet() -> None:
    runs = {
        players: [started("--players", str(players), "--seed", str(seed)) for seed in seeds]
        for players, seeds in FOUND.items()
    }
    for players, started_runs in runs.items():
        for run in started_runs:
            code, summary, failures = finished(run)
            assert code == 0 and summary["failed"] == 0, (players, failures)


def test_a_failing_seed_says_how_to_replay_it() -> None:
    """The simulator can fail: with the closings switched off (members that only time each
    other out, as before issue 35) seeds fail, each with the line that replays it.  Two of the
    first twelve do (10 and 11, at four players)."""
    code, summary, failures = fault_sim("--players", "4", "--seeds", "12", "--without-closings")
    assert code == 1 and isinstance(summary["failed"], int) and summary["failed"] > 0
    assert "scripts/fault-sim --players 4 --deals 2 --seed " in failures
    assert "holds rows for deals" in failures


@pytest.mark.slow
def test_ten_thousand_seeds() -> None:
    for players, seeds in ((3, 3000), (4, 3500), (5, 3500)):
        code, summary, failures = fault_sim(
            "--players", str(players), "--seeds", str(seeds), "--first", "1000"
        )
        assert code == 0 and summary["failed"] == 0, failures[-4000:]
