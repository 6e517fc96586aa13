"""Where the club count's weights come from: forced Petites, and the taker's score fitted on the
items of the classic point count.

    .venv/bin/python -m lab.bidding_fit --players 4 --deals 4000 [--top 2] [--seed 0]

For each deal, the ``--top`` strongest hands by :func:`~protocol.bots.bidding.hand_points` (each in
its own play of the deal) take a Petite while every other seat passes, and basic bots play it
out.  The taker's score is then fitted by least squares on the count's items (the 21, the
Excuse, the Petit bare or protected, two bouts, trumps, majors, trumps beyond the fourth, kings,
mariages, queens, cavaliers, valets, voids, singletons, long suits), and the weights printed in
the count's unit (a trump is 2), with the correlation of the taker's score with the club count
and with the classic count.  docs/bots.md quotes a run of 4,000 deals, top 1, and 4,000 more,
top 2, at each size (36,000 plays, some ten minutes of CPU), made before the club count
existed: it chose the strongest hands by the classic count.  A few hundred plays are too few
(the trumps and their length are then hard to tell apart).  Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from protocol.bots.bidding import hand_points, hand_strength
from protocol.bots.bots import BasicPolicy
from protocol.bots.players import Policy, play_deal
from protocol.rules.cards import (
    CAVALIER,
    COLOURS,
    DAME,
    EXCUSE,
    PETIT,
    ROI,
    VALET,
    VINGT_ET_UN,
    Card,
)
from protocol.rules.deal import Deal
from protocol.rules.scoring import score_deal, score_row
from protocol.rules.variants import Contract, variant
from protocol.rules.view import SeatView

ITEMS = (
    "constant",
    "the 21",
    "the Excuse",
    "the Petit, 5 trumps or more",
    "the Petit, fewer trumps",
    "two bouts or more",
    "a trump",
    "a major (16-20)",
    "a trump beyond the fourth",
    "a king",
    "its queen (mariage)",
    "a queen without its king",
    "a cavalier",
    "a valet",
    "a void",
    "a singleton",
    "a long suit's card beyond the fourth",
)


def items(hand: Sequence[Card]) -> list[float]:
    """The count's items of a hand, in the order of :data:`ITEMS`."""
    trumps = [c for c in hand if c.is_trump]
    n = len(trumps)
    bouts = sum(1 for b in (VINGT_ET_UN, EXCUSE, PETIT) if b in hand)
    kings = mariages = queens = cavaliers = valets = voids = singletons = long = 0
    for suit in COLOURS:
        cards = [c for c in hand if c.suit is suit]
        ranks = {c.rank for c in cards}
        kings += ROI in ranks
        mariages += ROI in ranks and DAME in ranks
        queens += DAME in ranks and ROI not in ranks
        cavaliers += CAVALIER in ranks
        valets += VALET in ranks
        voids += not cards
        singletons += len(cards) == 1
        long += max(0, len(cards) - 4)
    values = [
        1,
        VINGT_ET_UN in hand,
        EXCUSE in hand,
        PETIT in hand and n >= 5,
        PETIT in hand and n < 5,
        bouts >= 2,
        n,
        sum(1 for t in trumps if 16 <= t.rank <= 20),
        max(0, n - 4),
        kings,
        mariages,
        queens,
        cavaliers,
        valets,
        voids,
        singletons,
        long,
    ]
    return [float(v) for v in values]


class _Forced(BasicPolicy):
    """A basic bot that bids ``take`` (a pass for None) whatever its hand."""

    def __init__(self, take: Contract | None) -> None:
        super().__init__()
        self.take = take

    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None:
        return self.take if self.take in options else None


def least_squares(rows: list[list[float]], targets: list[float]) -> list[float]:
    """The weights minimising the squared error (normal equations, Gauss with pivoting, a tiny
    ridge so that an item never seen does not make the system singular)."""
    k = len(rows[0])
    a = [
        [sum(r[i] * r[j] for r in rows) + (1e-6 if i == j else 0.0) for j in range(k)]
        for i in range(k)
    ]
    b = [sum(r[i] * t for r, t in zip(rows, targets)) for i in range(k)]
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(a[r][i]))
        a[i], a[p], b[i], b[p] = a[p], a[i], b[p], b[i]
        for r in range(i + 1, k):
            f = a[r][i] / a[i][i]
            for c in range(i, k):
                a[r][c] -= f * a[i][c]
            b[r] -= f * b[i]
    x = [0.0] * k
    for i in reversed(range(k)):
        x[i] = (b[i] - sum(a[i][c] * x[c] for c in range(i + 1, k))) / a[i][i]
    return x


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def forced_petites(players: int, deals: int, top: int, seed: int) -> list[tuple[list[Card], int]]:
    """(hand, the taker's score) for the ``top`` strongest hands of each deal taking a Petite."""
    v = variant(players)
    out: list[tuple[list[Card], int]] = []
    for number in range(deals):
        dealt = Deal.from_seed(v, number % players, f"fit/{seed}/{number}")
        if dealt.finished:
            continue  # a petit sec
        hands = [list(dealt.hand(s)) for s in range(players)]
        order = sorted(range(players), key=lambda s: -hand_points(hands[s]))
        for seat in order[:top]:
            deal = Deal.from_seed(v, number % players, f"fit/{seed}/{number}")
            bots: list[Policy] = [
                _Forced(Contract.PETITE if s == seat else None) for s in range(players)
            ]
            play_deal(deal, bots)
            outcome = deal.outcome()
            assert outcome is not None and deal.taker == seat
            row = score_row(score_deal(outcome), players, seat, deal.partner)
            out.append((hands[seat], row[seat]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bidding_fit", description=__doc__)
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4)
    parser.add_argument("--deals", type=int, default=4000)
    parser.add_argument("--top", type=int, default=1, help="the strongest hands a deal to force")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.deals < 1 or not 1 <= args.top <= args.players:
        parser.error("--deals at least 1, --top from 1 to the players")
    plays = forced_petites(args.players, args.deals, args.top, args.seed)
    if len(plays) <= len(ITEMS):
        parser.error("too few plays to fit the items: give more --deals")
    scores = [float(s) for _, s in plays]
    weights = least_squares([items(h) for h, _ in plays], scores)
    unit = weights[ITEMS.index("a trump")] / 2
    print(
        json.dumps(
            {
                "players": args.players,
                "plays": len(plays),
                "points_per_unit": round(unit, 2),
                "weights": {name: round(w / unit, 1) for name, w in zip(ITEMS, weights)},
                "correlation_club_count": round(
                    correlation([hand_points(h) for h, _ in plays], scores), 3
                ),
                "correlation_classic_count": round(
                    correlation([hand_strength(h) for h, _ in plays], scores), 3
                ),
            },
            ensure_ascii=False,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
