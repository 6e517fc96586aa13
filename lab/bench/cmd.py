"""``tarot bench [--json] [--quick]``: how fast the deck, the daemons and the audit are on this
machine, against the floor of the same machine measured in the same run.

Every figure is a median over repetitions, with its 99th percentile beside it in the text
report (``lab/bench/stats.py``); ``--json`` prints one object with exactly :data:`KEYS`,
each a number (the median, or for ``daemon_rss_mb`` the largest of the five daemons) but
``play_latency_ms``, which is ``{"p50": …, "p99": …}``; ``floor_multiples``: every figure in
milliseconds divided by the floor multiplication of the same run — the number of scalar
multiplications it is worth, which moves less than the milliseconds on a machine whose speed
varies from run to run — or null when the floor was disturbed; ``cpu_ms``: beside the wall
clock, the CPU the in-process figures cost the process (every thread) and a deal costs the
five daemons; and ``floor_check``: whether the floor may be compared with another run's
(:func:`~lab.bench.stats.judge_floor`), and why not.  The in-process figures come from
``lab/bench/deck.py`` and ``lab/bench/audit.py``; the figures of real daemons on
127.0.0.1 from ``lab/bench/daemons.py``.

The targets are judged here, by the benchmark, and printed with the figures; they do not
change the exit status (0 when every figure was measured, 1 when one could not be): a timed
test on a shared machine fails for the neighbours' load, a benchmark only reports it — which
is why the load average before and after is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

from client.cli import SubParsers
from lab.bench.audit import audit_times
from lab.bench.daemons import PLAYERS, bot_deals, play_latency
from lab.bench.deck import (
    critical_path_ms,
    deck_benchmark,
    floor_samples,
    like_for_like_ms,
    minimum_mults,
    shuffle_proof_times,
)
from lab.bench.stats import BenchError, FloorCheck, Spread, judge_floor, spread

#: The figures, in the order of the report and of the JSON object.
KEYS = (
    "floor_scalarmult_us",
    "deal_floor_ms",
    "deck_ms",
    "like_for_like_ms",
    "deal_critical_path_ms",
    "shuffle_prove_ms",
    "shuffle_verify_ms",
    "loopback_deal_ms",
    "play_latency_ms",
    "full_deal_ms",
    "audit_ms",
    "daemon_rss_mb",
    "floor_multiples",
    "cpu_ms",
    "floor_check",
)
#: The figures in milliseconds, each also given as a multiple of the floor multiplication.
TIMED = tuple(key for key in KEYS if key.endswith("_ms") and key != "cpu_ms")
#: The figures whose CPU time is given beside their wall time (``full_deal_ms``: the five
#: daemons' CPU over their run, a deal's share).
CPU = (
    "deck_ms",
    "like_for_like_ms",
    "shuffle_prove_ms",
    "shuffle_verify_ms",
    "audit_ms",
    "full_deal_ms",
)

#: The multiplications shuffle + lock + the recipients' decryptions cannot do without (five
#: seats, without any proof).
DEAL_FLOOR_MULTS = sum(minimum_mults(PLAYERS).values())


@dataclass
class Measured:
    """What a run measured: each figure's wall-clock spread, the CPU beside some, and the
    floor's samples with the share of each one's wall time its thread was on a core."""

    wall: dict[str, Spread]
    cpu: dict[str, Spread]
    floor_us: list[float]
    floor_shares: list[float]

    def __or__(self, other: Measured) -> Measured:
        return Measured(
            self.wall | other.wall,
            self.cpu | other.cpu,
            self.floor_us + other.floor_us,
            self.floor_shares + other.floor_shares,
        )


@dataclass(frozen=True)
class Plan:
    """How many repetitions of each measurement."""

    name: str
    deck_runs: int  #: each after a sample of the floor
    audit_deals: int  #: different seeded deals audited …
    audit_runs: int  #: … this many times each
    bot_deals: int  #: deals of the five bot daemons (the first is not timed)
    plays: int  #: plays timed at the table with a seat played through the API


#: Enough for medians that move by a few per cent between runs: under two minutes, quiet.
FULL = Plan("full", deck_runs=15, audit_deals=3, audit_runs=5, bot_deals=20, plays=150)
#: A smoke run for CI and the tests: under a minute, the same figures, wider spreads.
QUICK = Plan("quick", deck_runs=3, audit_deals=1, audit_runs=3, bot_deals=3, plays=20)


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure the deck, real daemons on loopback and the audit against this machine's "
        "floor",
        description="Seeded measurements, each a median and a 99th percentile over repetitions: "
        "the "
        "scalar multiplication floor, the deck in one process, five tarotd on 127.0.0.1 (the deal, "
        "the latency of a play, whole deals, their memory) and the offline audit; and the targets.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object with the figures")
    parser.add_argument("--quick", action="store_true", help="few repetitions (under a minute)")
    parser.add_argument(
        "--no-curve",
        action="store_true",
        help="the daemons unencrypted (tarotd --no-curve), to measure what encryption costs",
    )
    parser.set_defaults(run=run)


def progress(text: str) -> None:
    """What is being measured now, on stderr: a full run takes minutes."""
    print(f"tarot bench: {text}", file=sys.stderr, flush=True)


def measure_in_process(plan: Plan) -> Measured:
    """The floor, the deck and the audit, each in this process.  Each sample of the floor is
    the deal's floor itself, :data:`DEAL_FLOOR_MULTS` multiplications, taken just before a
    run of the deck: the two see the same load, so their ratio holds on a busy machine."""
    progress("the scalar multiplication floor and the deck, five seats in one process …")
    floor: list[float] = []
    shares: list[float] = []
    wall: dict[str, list[float]] = {key: [] for key in CPU}
    cpu: dict[str, list[float]] = {key: [] for key in CPU}
    chain: list[float] = []
    for run in range(plan.deck_runs):
        for us, share in floor_samples(1, DEAL_FLOOR_MULTS):
            floor.append(us)
            shares.append(share)
        deck = deck_benchmark(PLAYERS, 1, first_run=run)
        wall["deck_ms"] += deck["runs_ms"]
        cpu["deck_ms"] += deck["cpu_runs_ms"]
        like, like_cpu = like_for_like_ms(run)
        wall["like_for_like_ms"].append(like)
        cpu["like_for_like_ms"].append(like_cpu)
        chain.append(critical_path_ms(PLAYERS, run))
        proofs = shuffle_proof_times(1, first_run=run)
        wall["shuffle_prove_ms"] += proofs.proving
        cpu["shuffle_prove_ms"] += proofs.proving_cpu
        wall["shuffle_verify_ms"] += proofs.verifying
        cpu["shuffle_verify_ms"] += proofs.verifying_cpu
    progress("the offline audit …")
    for one_wall, one_cpu in audit_times(plan.audit_deals, plan.audit_runs):
        wall["audit_ms"].append(one_wall)
        cpu["audit_ms"].append(one_cpu)
    del wall["full_deal_ms"], cpu["full_deal_ms"]  # the daemons'
    return Measured(
        {
            "floor_scalarmult_us": spread(floor),
            "deal_floor_ms": spread([us * DEAL_FLOOR_MULTS / 1000 for us in floor]),
            "deal_critical_path_ms": spread(chain),
            **{key: spread(values) for key, values in wall.items()},
        },
        {key: spread(values) for key, values in cpu.items()},
        floor,
        shares,
    )


def measure_daemons(plan: Plan, curve: bool = True) -> Measured:
    """Five real daemons on loopback, encrypted as by default unless not ``curve``: bots deal
    after deal, then a seat played from here."""
    how = "" if curve else ", unencrypted (--no-curve)"
    progress(f"five bot daemons on 127.0.0.1{how}, {plan.bot_deals} deals …")
    bots = asyncio.run(bot_deals(plan.bot_deals, curve=curve))
    progress(f"five daemons{how}, one seat played through the API, {plan.plays} plays …")
    latencies = asyncio.run(play_latency(plan.plays, curve=curve))
    return Measured(
        {
            "loopback_deal_ms": spread(bots.loopback_deal_ms),
            "play_latency_ms": spread(latencies),
            "full_deal_ms": spread(bots.full_deal_ms),
            "daemon_rss_mb": spread(bots.daemon_rss_mb),
        },
        {"full_deal_ms": spread([bots.cpu_ms_per_deal])},
        [],
        [],
    )


def check_floor(
    measured: Measured, load: tuple[tuple[float, ...], tuple[float, ...]]
) -> FloorCheck:
    """:func:`~lab.bench.stats.judge_floor` of this run's floor samples and load average."""
    return judge_floor(
        measured.floor_us, measured.floor_shares, (load[0][0], load[1][0]), os.cpu_count() or 1
    )


def figures(measured: Measured, check: FloorCheck) -> dict[str, Any]:
    """The JSON object: every key of :data:`KEYS`, rounded to what the clock can tell; no
    floor multiples when the floor was disturbed (``check``)."""
    spreads = measured.wall
    document: dict[str, Any] = {}
    for key in KEYS:
        if key in ("floor_multiples", "cpu_ms", "floor_check"):
            continue
        value = spreads[key]
        if key == "play_latency_ms":
            document[key] = {"p50": round(value.p50, 2), "p99": round(value.p99, 2)}
        elif key == "daemon_rss_mb":
            document[key] = round(value.p99, 1)  # the largest daemon: five samples
        else:
            document[key] = round(value.p50, 1)
    floor_ms = spreads["floor_scalarmult_us"].p50 / 1000
    document["floor_multiples"] = (
        {key: round(_median_ms(document[key]) / floor_ms) for key in TIMED}
        if check.comparable
        else None
    )
    document["cpu_ms"] = {key: round(measured.cpu[key].p50, 1) for key in CPU}
    document["floor_check"] = check.to_json()
    return document


def _median_ms(figure: Any) -> float:
    return float(figure["p50"] if isinstance(figure, dict) else figure)


def targets(figures: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(figure, target, met) for every target of the issues (39: the deck, the proofs, the
    audit and the play's tail), judged on these figures."""
    return [
        ("deck_ms", "≤ 300 ms (every step proved)", figures["deck_ms"] <= 300),
        ("shuffle_prove_ms", "≤ 18 ms", figures["shuffle_prove_ms"] <= 18),
        ("shuffle_verify_ms", "≤ 22 ms", figures["shuffle_verify_ms"] <= 22),
        ("loopback_deal_ms", "≤ 1,500 ms", figures["loopback_deal_ms"] <= 1500),
        ("play_latency_ms", "p99 ≤ 10 ms", figures["play_latency_ms"]["p99"] <= 10),
        ("full_deal_ms", "≤ 2,000 ms", figures["full_deal_ms"] <= 2000),
        ("audit_ms", "≤ 100 ms", figures["audit_ms"] <= 100),
        ("daemon_rss_mb", "≤ 80 MB", figures["daemon_rss_mb"] <= 80),
    ]


def report(
    plan: Plan,
    measured: Measured,
    load: tuple[tuple[float, ...], tuple[float, ...]],
    curve: bool = True,
) -> list[str]:
    """The text report: every figure's median, p99 and samples, its CPU and its worth in
    floors, then whether the floor may be compared, then the targets."""
    before, after = (" ".join(f"{x:.2f}" for x in loads) for loads in load)
    daemons = "encrypted (CURVE)" if curve else "unencrypted (--no-curve)"
    check = check_floor(measured, load)
    document = figures(measured, check)
    lines = [
        f"tarot bench ({plan.name}) on {os.cpu_count()} cores, daemons {daemons}; load average "
        f"{before} before, {after} after",
        f"{'figure':<22}{'median':>10}{'p99':>10}{'samples':>9}{'CPU':>10}  {'worth':>15}",
    ]
    multiples = document["floor_multiples"] or {}
    for key in KEYS:
        if key in ("floor_multiples", "cpu_ms", "floor_check"):
            continue
        value = measured.wall[key]
        cpu = f"{document['cpu_ms'][key]:>10.1f}" if key in CPU else " " * 10
        worth = f"{multiples[key]:>9} × floor" if key in multiples else ""
        lines.append(f"{key:<22}{value.p50:>10.1f}{value.p99:>10.1f}{value.count:>9}{cpu}  {worth}")
    lines.append(
        f"deal_floor_ms = {DEAL_FLOOR_MULTS} multiplications × floor_scalarmult_us (the deck "
        "without proofs); CPU: the median CPU milliseconds of the process (every thread), for "
        "full_deal_ms the five daemons' a deal; × floor: the median worth in floor "
        "multiplications; daemon_rss_mb: p99 is the largest of the five daemons"
    )
    if check.comparable:
        lines.append("floor: undisturbed — these multiples compare with another quiet run's")
    else:
        lines.append("floor: DISTURBED — no floor multiples: this run compares with no other")
        lines += [f"  {reason}" for reason in check.reasons]
    lines.append("targets:")
    for key, target, met in targets(document):
        lines.append(f"  {key:<20} {target:<32} {'met' if met else 'MISSED'}")
    return lines


def run(args: argparse.Namespace) -> int:
    plan = QUICK if args.quick else FULL
    load_before = os.getloadavg()
    try:
        measured = measure_in_process(plan) | measure_daemons(plan, curve=not args.no_curve)
    except BenchError as error:
        print(f"tarot bench: error: {error}", file=sys.stderr)
        return 1
    load = (load_before, os.getloadavg())
    if args.json:
        print(json.dumps(figures(measured, check_floor(measured, load))))
    else:
        print("\n".join(report(plan, measured, load, curve=not args.no_curve)))
    return 0
