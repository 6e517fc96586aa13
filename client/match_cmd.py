"""``tarot match``: a duplicate match between two bot levels, so that luck cancels.

Every deal is played once for each seat the level under test can take: the same cards, the
level in seat *k* and the other level in every other seat, for *k* = 0..n−1.  The level under
test then held every hand of the deal once, and so did the other one — the mean score per deal
of each level *in the same seats* compares play, not cards.  The deals are the independent
draws: the 95 % confidence interval is the mean ± 1.96 standard errors over the deals.

The bots play through the referee (:func:`protocol.bots.players.play_deal`), with no daemons and no
deck protocol: a match of thousands of deals is about the bots.  Deterministic for a seed (the
cards and each bot's generator are derived from it); only the decision times vary, measured
here around each call of a bot.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from client.cli import SubParsers, UsageError
from client.percentile import percentile
from client.sim_cmd import _positive  # the same --deals as tarot sim's
from protocol.bots.bots import BOTS, make_bot
from protocol.bots.players import Policy, play_deal
from protocol.rules.cards import Card
from protocol.rules.deal import Deal
from protocol.rules.scoring import score_deal, score_row
from protocol.rules.variants import Contract, variant
from protocol.rules.view import SeatView

#: The 97.5 % quantile of the normal law: mean ± 1.96 standard errors is a 95 % interval.
Z95 = 1.96


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "match",
        help="a duplicate match between two bot levels",
        description="Play each deal once per seat with LEVEL in that seat and AGAINST in the "
        "others, "
        "and compare the mean score per deal of both levels in the same seats (95% confidence "
        "interval), the takers' success, the bids taken and the decision times.  Deterministic for "
        "a seed.  A level is one of the bots (" + ", ".join(BOTS) + "); strong:N thinks over N "
        "sampled deals instead of the default.",
    )
    parser.add_argument("level", metavar="LEVEL", help="the level under test (e.g. strong)")
    parser.add_argument(
        "against",
        metavar="AGAINST",
        nargs="?",
        default="basic",
        help="the other level (default: basic)",
    )
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4)
    parser.add_argument("--deals", type=_positive, default=100, metavar="N")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--json", action="store_true", help="the result as one JSON object")
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="J",
        help="spread the deals over J processes (the same result but for the times)",
    )
    parser.add_argument("--progress", action="store_true", help="a line on stderr every 50 deals")
    parser.set_defaults(run=run)


# --- Timing the bots ------------------------------------------------------------------------


class TimedPolicy:
    """A bot whose every decision is timed into ``times`` (seconds)."""

    def __init__(self, policy: Policy, times: list[float]) -> None:
        self.policy = policy
        self.times = times

    def _timed(self, decide: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            return decide()
        finally:
            self.times.append(time.perf_counter() - started)

    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None:
        result: Contract | None = self._timed(lambda: self.policy.bid(view, options))
        return result

    def call(self, view: SeatView, options: list[Card]) -> Card:
        result: Card = self._timed(lambda: self.policy.call(view, options))
        return result

    def ecart(self, view: SeatView, candidates: list[Card], trumps_needed: int) -> list[Card]:
        result: list[Card] = self._timed(lambda: self.policy.ecart(view, candidates, trumps_needed))
        return result

    def announce_chelem(self, view: SeatView) -> bool:
        result: bool = self._timed(lambda: self.policy.announce_chelem(view))
        return result

    def poignee(self, view: SeatView) -> list[Card] | None:
        result: list[Card] | None = self._timed(lambda: self.policy.poignee(view))
        return result

    def play(self, view: SeatView, legal: list[Card]) -> Card:
        result: Card = self._timed(lambda: self.policy.play(view, legal))
        return result


# --- The match --------------------------------------------------------------------------------


@dataclass
class LevelRecord:
    """What one level did over the match: its seats' scores, contracts and decision times."""

    scores: list[float] = field(default_factory=list)  #: mean score per deal in its seats, by deal
    taken: Counter[str] = field(default_factory=Counter)  #: contracts taken, by code
    won: int = 0
    seats: int = 0  #: seat-deals played (the chances to bid)
    times: list[float] = field(default_factory=list)

    def absorb(self, other: LevelRecord) -> None:
        """Count in what the same level did elsewhere (another deal, another process)."""
        self.scores += other.scores
        self.taken += other.taken
        self.won += other.won
        self.seats += other.seats
        self.times += other.times

    def summary(self) -> dict[str, Any]:
        taken = sum(self.taken.values())
        return {
            "mean": _mean_ci(self.scores),
            "bids_taken": taken,
            "bids_taken_rate": round(taken / self.seats, 4) if self.seats else 0.0,
            "contracts": dict(sorted(self.taken.items())),
            "taker_success_rate": round(self.won / taken, 4) if taken else None,
            "decisions": len(self.times),
            "decision_ms": {
                "median": round(1000 * statistics.median(self.times), 2) if self.times else None,
                "p95": round(1000 * percentile(self.times, 0.95), 2) if self.times else None,
            },
        }


def _mean_ci(values: Sequence[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.inf
    return {
        "value": round(mean, 2),
        "ci95_low": round(mean - half, 2),
        "ci95_high": round(mean + half, 2),
    }


def _derive(seed: int, *labels: object) -> int:
    text = "/".join(["tarot-match", str(seed), *(str(label) for label in labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def play_rotation(
    players: int,
    seed: int,
    number: int,
    seat: int,
    levels: tuple[str, str],
    records: tuple[LevelRecord, LevelRecord],
) -> list[int]:
    """Deal ``number`` with ``levels[0]`` in ``seat`` and ``levels[1]`` elsewhere: the score row."""
    v = variant(players)
    policies: list[Policy] = []
    for s in range(players):
        mine = 0 if s == seat else 1
        bot = make_bot(levels[mine], random.Random(_derive(seed, "bot", number, seat, s)))
        policies.append(TimedPolicy(bot, records[mine].times))
    deal = play_deal(Deal.from_seed(v, number % players, _derive(seed, "deal", number)), policies)
    outcome = deal.outcome()
    if outcome is None or deal.taker is None or deal.contract is None:
        return [0] * players
    taker = records[0 if deal.taker == seat else 1]
    taker.taken[deal.contract.code] += 1
    taker.won += outcome.won
    return score_row(score_deal(outcome), players, deal.taker, deal.partner)


def play_deal_rotations(
    players: int, seed: int, number: int, levels: tuple[str, str]
) -> tuple[list[list[int]], tuple[LevelRecord, LevelRecord]]:
    """Deal ``number`` once for each seat of the level under test: the score rows, by that seat,
    and what each level did in them (its scores not yet counted)."""
    records = (LevelRecord(), LevelRecord())
    rows = [play_rotation(players, seed, number, seat, levels, records) for seat in range(players)]
    return rows, records


def _rotations_of(
    job: tuple[int, int, int, tuple[str, str]],
) -> tuple[list[list[int]], tuple[LevelRecord, LevelRecord]]:
    return play_deal_rotations(*job)


def match(
    players: int,
    deals: int,
    seed: int,
    levels: tuple[str, str],
    progress: Callable[[int], None] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Play the duplicate match; the result as a JSON-ready object.  With ``jobs`` above one the
    deals are spread over as many processes — each deal is its own draw, so the result is the
    same but for the decision times (which then share the cores)."""
    records = (LevelRecord(), LevelRecord())
    margins: list[float] = []
    work = [(players, seed, number, levels) for number in range(deals)]
    with contextlib.ExitStack() as stack:
        if jobs > 1:
            pool = stack.enter_context(multiprocessing.get_context("fork").Pool(jobs))
            played: Iterable[tuple[list[list[int]], tuple[LevelRecord, LevelRecord]]] = pool.imap(
                _rotations_of, work
            )
        else:
            played = map(_rotations_of, work)
        for number, (rows, deal_records) in enumerate(played):
            for record, dealt in zip(records, deal_records):
                record.absorb(dealt)
            tested = statistics.fmean(rows[k][k] for k in range(players))
            other = statistics.fmean(
                rows[j][k] for k in range(players) for j in range(players) if j != k
            )
            records[0].scores.append(tested)
            records[1].scores.append(other)
            records[0].seats += players
            records[1].seats += players * (players - 1)
            margins.append(tested - other)
            if progress is not None:
                progress(number + 1)
    return {
        "players": players,
        "deals": deals,
        "seed": seed,
        "level": levels[0],
        "against": levels[1],
        "margin": _mean_ci(margins),
        "levels": {levels[0]: records[0].summary(), levels[1]: records[1].summary()},
    }


def _check_level(level: str) -> str:
    try:
        make_bot(level, random.Random(0))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return level


def run(args: argparse.Namespace) -> int:
    levels = (_check_level(args.level), _check_level(args.against))
    if levels[0] == levels[1]:
        raise UsageError("LEVEL and AGAINST are the same level: a match needs two")

    def progress(done: int) -> None:
        if done % 50 == 0 or done == args.deals:
            print(f"{done}/{args.deals} deals", file=sys.stderr, flush=True)

    result = match(
        args.players, args.deals, args.seed, levels, progress if args.progress else None, args.jobs
    )
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(_text(result))
    return 0


def _text(result: dict[str, Any]) -> str:
    def ci(m: dict[str, float]) -> str:
        return f"{m['value']:+.1f} ({m['ci95_low']:+.1f} … {m['ci95_high']:+.1f})"

    lines = [
        f"{result['deals']} deals × {result['players']} seats, seed {result['seed']} (duplicate)"
    ]
    for level, record in result["levels"].items():
        rate = record["taker_success_rate"]
        lines.append(
            f"{level:>10}: {ci(record['mean'])} points per deal; took {record['bids_taken']} "
            "contracts "
            f"({100 * record['bids_taken_rate']:.0f}% of its seats), made "
            f"{'—' if rate is None else f'{100 * rate:.0f}%'}; "
            f"decision {record['decision_ms']['median']} ms median, "
            f"{record['decision_ms']['p95']} ms p95"
        )
    lines.append(f"{'margin':>10}: {ci(result['margin'])} points per deal for {result['level']}")
    return "\n".join(lines)
