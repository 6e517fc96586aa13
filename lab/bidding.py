"""How a bot level bids at a table of its own kind: passed deals, take and success by contract.

    .venv/bin/python -m lab.bidding --level basic --players 4 --deals 1000 [--seed 2026]
        [--bids-only] [--json]

Every seat plays the same level, through the referee (no daemons), deal *i* dealt from the
seed and *i* with the dealer turning like at a table.  It reports the deals passed by
everybody (the figure of issue 37: at most 15 % at four players), and for each contract how
often it was taken (of the deals and of the seats' chances to bid) and how often it was made,
with the taker's mean score; ``--bids-only`` stops each deal after the bids (the passed deals
and the contracts bid, a tenth of the time for ``strong``).  Deterministic for a seed.  A pure
run of the bots: a level's strength against another is ``tarot match``'s (duplicate) business.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from protocol.bots.bots import make_bot
from protocol.bots.players import decide, play_deal
from protocol.rules.deal import Deal, Phase
from protocol.rules.scoring import score_deal, score_row
from protocol.rules.variants import Contract, variant


def _derive(seed: int, *labels: object) -> int:
    text = "/".join(["tarot-bidding", str(seed), *(str(label) for label in labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass
class Survey:
    """What a table of one level did over a run of deals."""

    players: int
    played: bool = True  #: the deals were played out (not only bid): success is known
    deals: int = 0
    passed: int = 0  #: deals passed by everybody
    void: int = 0  #: deals void for another reason (a petit sec shown)
    taken: Counter[Contract] = field(default_factory=Counter)
    won: Counter[Contract] = field(default_factory=Counter)
    taker_points: Counter[Contract] = field(default_factory=Counter)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.deals if self.deals else 0.0

    def summary(self) -> dict[str, Any]:
        contracts: dict[str, Any] = {}
        for c in Contract:
            n = self.taken[c]
            contracts[c.code] = {
                "taken": n,
                "of_deals": round(n / self.deals, 4) if self.deals else 0.0,
                "success_rate": round(self.won[c] / n, 4) if n and self.played else None,
                "taker_mean_points": round(self.taker_points[c] / n, 1)
                if n and self.played
                else None,
            }
        taken = sum(self.taken.values())
        return {
            "players": self.players,
            "deals": self.deals,
            "passed_by_everybody": self.passed,
            "pass_rate": round(self.pass_rate, 4),
            "void_petit_sec": self.void,
            "take_rate_of_seats": round(taken / (self.deals * self.players), 4)
            if self.deals
            else 0.0,
            "success_rate": round(sum(self.won.values()) / taken, 4)
            if taken and self.played
            else None,
            "contracts": contracts,
        }


def survey(level: str, players: int, deals: int, seed: int, bids_only: bool = False) -> Survey:
    """Play ``deals`` deals with ``level`` in every seat and count what the bidding did."""
    v = variant(players)
    result = Survey(players, played=not bids_only)
    for number in range(deals):
        bots = [
            make_bot(level, random.Random(_derive(seed, "bot", number, s))) for s in range(players)
        ]
        deal = Deal.from_seed(v, number % players, _derive(seed, "deal", number))
        if bids_only:
            while deal.phase is Phase.BIDDING:
                seat = deal.to_act
                assert seat is not None
                for action in decide(deal, bots[seat]):
                    deal.push(action)
            result.deals += 1
            if deal.phase is Phase.VOID:
                result.passed += len(deal.bids) == players
                result.void += len(deal.bids) != players
            elif deal.contract is not None:
                result.taken[deal.contract] += 1
            continue
        play_deal(deal, bots)
        result.deals += 1
        outcome = deal.outcome()
        if outcome is None or deal.taker is None or deal.contract is None:
            if all(b.contract is None for b in deal.bids) and len(deal.bids) == players:
                result.passed += 1
            else:
                result.void += 1
            continue
        contract = deal.contract
        result.taken[contract] += 1
        result.won[contract] += outcome.won
        row = score_row(score_deal(outcome), players, deal.taker, deal.partner)
        result.taker_points[contract] += row[deal.taker]
    return result


def _text(summary: dict[str, Any], level: str) -> str:
    lines = [
        f"{level} at {summary['players']} players, {summary['deals']} deals: "
        f"{summary['passed_by_everybody']} passed by everybody "
        f"({100 * summary['pass_rate']:.1f} %), {summary['void_petit_sec']} void (petit sec); "
        f"took {100 * summary['take_rate_of_seats']:.1f} % of its seats"
    ]
    for code, c in summary["contracts"].items():
        rate, mean = c["success_rate"], c["taker_mean_points"]
        lines.append(
            f"  {code:>12}: {c['taken']:5d} ({100 * c['of_deals']:4.1f} % of deals), made "
            f"{'—' if rate is None else f'{100 * rate:.0f} %'}, taker "
            f"{'—' if mean is None else f'{mean:+.1f}'} "
            "points a deal"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bidding", description=__doc__)
    parser.add_argument("--level", default="basic", help="the bot level in every seat")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4)
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--bids-only", action="store_true", help="stop each deal after the bids")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    try:
        make_bot(args.level, random.Random(0))
    except ValueError as exc:
        parser.error(str(exc))
    if args.deals < 1:
        parser.error("--deals: at least one deal")
    summary = survey(args.level, args.players, args.deals, args.seed, args.bids_only).summary()
    summary["level"] = args.level
    summary["seed"] = args.seed
    summary["bids_only"] = args.bids_only
    print(json.dumps(summary) if args.json else _text(summary, args.level))
    return 0


if __name__ == "__main__":
    sys.exit(main())
