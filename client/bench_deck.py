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
of n daemons), and the weighted lock proof.  ``tarot bench`` takes its ``deck_ms`` from the
first, and its floor from :func:`scalarmult_floor_us` measured in the same run.

Every seat's seed comes from a fixed benchmark seed, the run and the seat, so two runs do the
same arithmetic on the same points: only the machine differs.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from typing import Any

from protocol.deck import DeckSetup, PublicDeck, SeatDeck, deal_in_one_process
from protocol.group import CARD_POINTS, MULTS, mul, scalar_from_digest
from protocol.variants import variant

#: The seed every benchmark derives its secrets from (the same figures' inputs in every run).
BENCH_SEED = 20261130


def bench_bytes(*labels: object, size: int = 32) -> bytes:
    """``size`` bytes fixed by the labels: a seat's deck seed, the digest of a scalar, …"""
    return hashlib.shake_256("/".join(["tarot-bench", str(BENCH_SEED), *map(str, labels)]).encode()).digest(size)


def minimum_mults(players: int) -> dict[str, int]:
    """The floor: shuffle n×78, lock n×2×78, one decryption per dealt card."""
    return {
        "shuffle": players * 78,
        "lock": players * 2 * 78,
        "decrypt": players * variant(players).hand_size,
    }


def scalarmult_floor_us(samples: int, batch: int = 100) -> list[float]:
    """The unit of cost on this machine: microseconds per scalar multiplication, through the
    protocol's own :func:`~protocol.group.mul` (libsodium's ``noclamp`` multiplication with
    its subgroup check, as the deck pays it).  One sample is the mean over ``batch`` of them:
    a single multiplication is too short for the clock to time it well, and a sample much
    shorter than the deck it is compared with would slip between the neighbours' time slices
    on a loaded machine and make the floor look lower than the deck ever sees it."""
    scalars = [scalar_from_digest(bench_bytes("floor", k, size=64)) for k in range(batch)]
    point = CARD_POINTS[0]
    timings = []
    for _ in range(samples):
        start = time.perf_counter()
        for scalar in scalars:
            mul(scalar, point)
        timings.append((time.perf_counter() - start) * 1e6 / batch)
    return timings


def deck_benchmark(
    players: int = 5,
    runs: int = 7,
    *,
    every_seat_verifies: bool = False,
    weighted_lock: bool = False,
    first_run: int = 0,
) -> dict[str, Any]:
    """Time commit + shuffle + lock + deal + every hand decrypted, ``runs`` times (the runs
    numbered from ``first_run``, which fixes their seeds)."""
    times: list[float] = []
    mults = fixed_base = 0
    for run in range(first_run, first_run + runs):
        setup = DeckSetup(b"bench-deck", run, variant(players), dealer=0, weighted_lock=weighted_lock)
        MULTS.reset()
        start = time.perf_counter()
        seats = [SeatDeck(setup, seat, bench_bytes("deck", run, seat)) for seat in range(players)]
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
