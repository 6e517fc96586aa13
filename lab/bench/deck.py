"""How long the mental-poker deck takes to deal, and how many multiplications it spends.

One run = every seat's work in one process, from fresh seeds: derive the secrets, commit,
shuffle and lock with their proofs, publish the deal keys, and every seat decrypts its hand —
with every payload checked (every shuffle and lock proof verified, every deal key checked
against its commitment) before the hands are used.  With one shared verifier each step is
proved once and verified once, which is also the chain a real table waits for: seat *i*
checks step *i − 1*, then computes its own.

The scalar multiplication is the unit of cost (DESIGN §4, Cost).  Without proofs the protocol
could not do with fewer than: each seat multiplies the 78 points once to shuffle and once to
lock, and each recipient spends one multiplication per dealt card.  The figures compare what
was done with that floor; the difference is the proofs.

Two configurations are measured by ``scripts/bench-deck``: one shared verifier (what one
process needs: every payload checked once) and every seat verifying everything (the total CPU
of n daemons); and one 78-card shuffle proved and verified on its own (:func:`shuffle_proof_ms`).
``tarot bench`` takes its ``deck_ms`` from the first, and its floor from
:func:`scalarmult_floor_us` measured in the same run.

Every seat's seed comes from a fixed benchmark seed, the run and the seat, so two runs do the
same arithmetic on the same points: only the machine differs.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client.workers import TOOLS
from protocol.deck.group import (
    CARD_POINTS,
    MULTS,
    base_mul,
    mul,
    mul_each,
    scalar_from_digest,
    use_scheduler,
)
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import DeckPayload
from protocol.deck.proofs import Binding
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import derive
from protocol.deck.setup import DeckSetup
from protocol.deck.shuffle_proof import prove_shuffle, verify_shuffle
from protocol.rules.variants import variant

#: The seed every benchmark derives its secrets from (the same figures' inputs in every run).
BENCH_SEED = 20261130


def bench_bytes(*labels: object, size: int = 32) -> bytes:
    """``size`` bytes fixed by the labels: a seat's deck seed, the digest of a scalar, …"""
    return hashlib.shake_256(
        "/".join(["tarot-bench", str(BENCH_SEED), *map(str, labels)]).encode()
    ).digest(size)


def minimum_mults(players: int) -> dict[str, int]:
    """The floor without proofs: shuffle n×78, lock n×78, one decryption per dealt card."""
    return {
        "shuffle": players * 78,
        "lock": players * 78,
        "decrypt": players * variant(players).hand_size,
    }


def scalarmult_floor_us(samples: int, batch: int = 100) -> list[float]:
    """The unit of cost on this machine: microseconds per scalar multiplication, through the
    protocol's own :func:`~protocol.deck.group.mul` (ristretto255's multiplication through
    ``rbcl``, its decoding the point's check, as the deck pays it).  One sample is the mean over
    ``batch`` of them: a single multiplication is too short for the clock to time it well, and a
    sample much
    shorter than the deck it is compared with would slip between the neighbours' time slices
    on a loaded machine and make the floor look lower than the deck ever sees it."""
    return [us for us, _ in floor_samples(samples, batch)]


def floor_samples(samples: int, batch: int = 100) -> list[tuple[float, float]]:
    """:func:`scalarmult_floor_us`'s samples, each with the share of its wall time the thread
    was on a core (its CPU time over its wall time): below 1, the neighbours took the core
    during the sample, and the floor says less about the machine than about the load."""
    scalars = [scalar_from_digest(bench_bytes("floor", k, size=64)) for k in range(batch)]
    point = CARD_POINTS[0]
    timings = []
    for _ in range(samples):
        start, cpu = time.perf_counter(), time.thread_time()
        for scalar in scalars:
            mul(scalar, point)
        wall = time.perf_counter() - start
        timings.append((wall * 1e6 / batch, (time.thread_time() - cpu) / wall))
    return timings


def deck_benchmark(
    players: int = 5,
    runs: int = 7,
    *,
    every_seat_verifies: bool = False,
    first_run: int = 0,
) -> dict[str, Any]:
    """Time commit + shuffle + lock + deal + every hand decrypted, ``runs`` times (the runs
    numbered from ``first_run``, which fixes their seeds)."""
    times: list[float] = []
    cpu: list[float] = []
    mults = fixed_base = 0
    for run in range(first_run, first_run + runs):
        setup = DeckSetup(b"bench-deck", run, variant(players), dealer=0)
        MULTS.reset()
        start, started_cpu = time.perf_counter(), time.process_time()
        seats = [SeatDeck(setup, seat, bench_bytes("deck", run, seat)) for seat in range(players)]
        views = [PublicDeck(setup) for _ in range(players if every_seat_verifies else 1)]
        deal_in_one_process(seats, views)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        mults, fixed_base = MULTS.value, MULTS.fixed_base
    minimum = minimum_mults(players)
    return {
        "players": players,
        "verifiers": players if every_seat_verifies else 1,
        "runs_ms": [round(t, 1) for t in times],
        "cpu_runs_ms": [round(t, 1) for t in cpu],  #: the process's, every thread's
        "median_ms": round(statistics.median(times), 1),
        "mults": mults,
        "fixed_base_mults": fixed_base,
        "minimum_mults": sum(minimum.values()),
        "minimum_breakdown": minimum,
    }


def shuffle_proof_ms(runs: int, first_run: int = 0) -> tuple[list[float], list[float]]:
    """Milliseconds to prove, and to verify, one 78-card shuffle of the plain pack, ``runs``
    times each (the shuffle's own 78 multiplications are not in the proving time)."""
    times = shuffle_proof_times(runs, first_run)
    return times.proving, times.verifying


@dataclass(frozen=True)
class ProofTimes:
    """:func:`shuffle_proof_ms`'s milliseconds, by wall clock and in the process's CPU."""

    proving: list[float]
    verifying: list[float]
    proving_cpu: list[float]
    verifying_cpu: list[float]


def shuffle_proof_times(runs: int, first_run: int = 0) -> ProofTimes:
    times = ProofTimes([], [], [], [])
    for run in range(first_run, first_run + runs):
        s = derive(bench_bytes("shuffle", run), b"bench-shuffle", run, 0, variant(5))
        binding = Binding(b"bench-shuffle", run, 0, "shuffle")
        after = mul_each([s.blanket] * 78, [CARD_POINTS[j] for j in s.permutation])
        start, cpu = time.perf_counter(), time.process_time()
        proof = prove_shuffle(
            binding, s.blanket, s.blanket_public, CARD_POINTS, after, s.permutation, s.nonce_key
        )
        proved, proved_cpu = time.perf_counter(), time.process_time()
        holds = verify_shuffle(binding, base_mul(s.blanket), CARD_POINTS, after, proof)
        times.verifying.append((time.perf_counter() - proved) * 1000)
        times.verifying_cpu.append((time.process_time() - proved_cpu) * 1000)
        times.proving.append((proved - start) * 1000)
        times.proving_cpu.append((proved_cpu - cpu) * 1000)
        if not holds:
            raise AssertionError("the benchmark's own shuffle proof does not verify")
    return times


def like_for_like_ms(run: int, players: int = 5) -> tuple[float, float]:
    """Milliseconds (wall, and the process's CPU) of the deck as LibTMCG's benchmark counts
    it: every seat proves its shuffle and lock and checks the steps of the four others, in one
    process, the seats one after another (each with its own view, its own steps trusted —
    a daemon does not check what it computed).  ``deck_ms`` checks each step once; this
    checks each four times, as five machines do between them."""
    setup = DeckSetup(b"bench-like", run, variant(players), dealer=0)
    start, cpu = time.perf_counter(), time.process_time()
    seats = [SeatDeck(setup, seat, bench_bytes("like", run, seat)) for seat in range(players)]
    views = [PublicDeck(setup, own_seat=seat) for seat in range(players)]
    for seat, view in enumerate(views):
        view.trusted = frozenset({seat})
    deal_in_one_process(seats, views)
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def critical_path_ms(players: int, run: int) -> float:
    """Milliseconds of the chain a real table — one machine a seat, each checking every step
    with its own cores — waits for, seated to the hands: each seat's check of the step before
    its own and its own step, the last lock's check, then the slowest seat's check of the
    others' deal keys and decryption of its hand.  Every seat verifies everything, as its
    daemon does; only the work on the chain is timed."""
    setup = DeckSetup(b"bench-critical", run, variant(players), dealer=0)
    seats = [SeatDeck(setup, seat, bench_bytes("critical", run, seat)) for seat in range(players)]
    views = [PublicDeck(setup, own_seat=seat) for seat in range(players)]
    for view in views:
        view.trusted = frozenset({view.own_seat}) if view.own_seat is not None else frozenset()

    def send(payload: DeckPayload, timed: int | None) -> float:
        spent = 0.0
        for seat, view in enumerate(views):
            start = time.perf_counter()
            view.receive(payload)
            spent += time.perf_counter() - start if seat == timed else 0.0
        return spent

    for seat in seats:
        send(seat.commit(), None)
    chain = 0.0
    make: list[Callable[[SeatDeck, PublicDeck], DeckPayload]] = [SeatDeck.shuffle, SeatDeck.lock]
    steps = [(seat, step) for step in make for seat in seats]
    for k, (seat, step) in enumerate(steps):
        start = time.perf_counter()
        payload = step(seat, views[seat.seat])
        chain += time.perf_counter() - start
        chain += send(
            payload, steps[k + 1][0].seat if k + 1 < len(steps) else (seat.seat + 1) % players
        )
    keys = [seat.deal_keys() for seat in seats]
    slowest = 0.0
    for seat in seats:
        start = time.perf_counter()
        for payload in keys:
            views[seat.seat].receive(payload)
        seat.hand(views[seat.seat])
        slowest = max(slowest, time.perf_counter() - start)
    return (chain + slowest) * 1000


def _describe(title: str, result: dict[str, Any]) -> str:
    floor = result["minimum_breakdown"]
    return "\n".join(
        [
            title,
            f"  median {result['median_ms']} ms over {len(result['runs_ms'])} runs: "
            f"{result['runs_ms']}",
            f"  scalar multiplications: {result['mults']} done ({result['fixed_base_mults']} of "
            "them by G), "
            f"minimum {result['minimum_mults']} (shuffle {floor['shuffle']} + lock {floor['lock']} "
            f"+ decrypt {floor['decrypt']}), {result['mults'] / result['minimum_mults']:.2f}× the "
            "floor",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Benchmark the mental-poker deck (commit, shuffle, lock, deal)."
    )
    parser.add_argument("--players", type=int, default=5, choices=(3, 4, 5))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    use_scheduler(TOOLS)  # as under ``tarot bench``
    n = args.players
    print(f"Deck for {n} seats, one process, all seats' work included.")
    print(
        _describe(
            "One shared verifier (every step proved, each verified once):",
            deck_benchmark(n, args.runs),
        )
    )
    print(
        _describe(
            f"Every seat verifies everything ({n} verifiers):",
            deck_benchmark(n, args.runs, every_seat_verifies=True),
        )
    )
    chains = [critical_path_ms(n, run) for run in range(args.runs)]
    print(
        "Critical path (one machine a seat, each verifying everything): median "
        f"{statistics.median(chains):.1f} ms"
    )
    proving, verifying = shuffle_proof_ms(args.runs)
    print(
        f"One 78-card shuffle: proved in {statistics.median(proving):.1f} ms, verified in "
        f"{statistics.median(verifying):.1f} ms (medians of {args.runs})"
    )


if __name__ == "__main__":
    main()
