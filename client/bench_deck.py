"""How long the mental-poker deck takes to deal, and how many multiplications it spends.

One run = every seat's work in one process, from fresh seeds: derive the secrets, commit,
shuffle, lock, publish the deal keys, and every seat decrypts its hand — with every payload
checked (points, repeats, proofs) before the hands are used, so every proof is verified before
the first card could be played.

The scalar multiplication is the unit of cost (DESIGN §4, Cost).  The protocol cannot do with
fewer than: each seat multiplies the 78 points once to shuffle and twice to lock, and each
recipient spends one multiplication per dealt card.  The figures compare what was done with
that floor; the difference is the proofs (a handful per step) and, with ``weighted_lock``, the
weighted sums of the batch proof.

Three configurations are measured by ``scripts/bench-deck``: one shared verifier (what one
process needs: every payload checked once), every seat verifying everything (the total CPU
of n daemons), and the weighted lock proof.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from protocol.deck import DeckSetup, PublicDeck, SeatDeck, deal_in_one_process
from protocol.group import MULTS
from protocol.variants import variant


def minimum_mults(players: int) -> dict[str, int]:
    """The floor: shuffle n×78, lock n×2×78, one decryption per dealt card."""
    return {
        "shuffle": players * 78,
        "lock": players * 2 * 78,
        "decrypt": players * variant(players).hand_size,
    }


def deck_benchmark(
    players: int = 5,
    runs: int = 7,
    *,
    every_seat_verifies: bool = False,
    weighted_lock: bool = False,
) -> dict[str, Any]:
    """Time commit + shuffle + lock + deal + every hand decrypted, ``runs`` times."""
    times: list[float] = []
    mults = fixed_base = 0
    for run in range(runs):
        setup = DeckSetup(b"bench-deck", run, variant(players), dealer=0, weighted_lock=weighted_lock)
        MULTS.reset()
        start = time.perf_counter()
        seats = [SeatDeck(setup, seat) for seat in range(players)]
        views = [PublicDeck(setup) for _ in range(players if every_seat_verifies else 1)]
        deal_in_one_process(seats, views)
        times.append((time.perf_counter() - start) * 1000)
        mults, fixed_base = MULTS.value, MULTS.fixed_base
    minimum = minimum_mults(players)
    return {
        "players": players,
        "verifiers": players if every_seat_verifies else 1,
        "weighted_lock": weighted_lock,
        "runs_ms": [round(t, 1) for t in times],
        "median_ms": round(statistics.median(times), 1),
        "mults": mults,
        "fixed_base_mults": fixed_base,
        "minimum_mults": sum(minimum.values()),
        "minimum_breakdown": minimum,
    }


def _describe(title: str, result: dict[str, Any]) -> str:
    floor = result["minimum_breakdown"]
    return "\n".join(
        [
            title,
            f"  median {result['median_ms']} ms over {len(result['runs_ms'])} runs: {result['runs_ms']}",
            f"  scalar multiplications: {result['mults']} done ({result['fixed_base_mults']} of them by G), "
            f"minimum {result['minimum_mults']} (shuffle {floor['shuffle']} + lock {floor['lock']} "
            f"+ decrypt {floor['decrypt']}), {result['mults'] / result['minimum_mults']:.2f}× the floor",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Benchmark the mental-poker deck (commit, shuffle, lock, deal).")
    parser.add_argument("--players", type=int, default=5, choices=(3, 4, 5))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    n = args.players
    print(f"Deck for {n} seats, one process, all seats' work included.")
    print(_describe("One shared verifier (sum proofs):", deck_benchmark(n, args.runs)))
    print(_describe(f"Every seat verifies everything ({n} verifiers):", deck_benchmark(n, args.runs, every_seat_verifies=True)))
    print(_describe("Weighted batch lock proof, one shared verifier:", deck_benchmark(n, args.runs, weighted_lock=True)))


if __name__ == "__main__":
    main()
