"""A whole deal between bots, narrated: what ``scripts/play`` shows until the daemon and the
terminal client exist.  Every action goes through the referee (:class:`protocol.deal.Deal`)."""

from __future__ import annotations

import argparse
import random
import secrets
import sys

from client.narrate import describe, describe_chien, describe_trick
from protocol.deal import Deal, Phase
from protocol.players import RandomPolicy, decide
from protocol.scoring import score_deal, score_row
from protocol.variants import variant


def narrate_deal(players: int, seed: int, lang: str) -> list[str]:
    deal = Deal.from_seed(variant(players), seed % players, seed)
    rng = random.Random(seed)
    policies = [RandomPolicy(rng) for _ in range(players)]
    lines: list[str] = []
    tricks = 0
    chien_told = False
    while not deal.finished:
        for action in decide(deal, policies[deal.to_act or 0]):
            deal.push(action)
            line = describe(action, deal.variant, lang)
            if line:
                lines.append(line)
            if deal.phase is Phase.ECART and not chien_told:
                lines.append(describe_chien(deal, lang))
                chien_told = True
        if len(deal.tricks) > tricks:
            tricks = len(deal.tricks)
            lines.append(describe_trick(deal.tricks[-1], tricks, lang))
    outcome = deal.outcome()
    if outcome is None or deal.taker is None:
        lines.append(f"Donne nulle ({deal.void_reason})" if lang == "fr" else f"Void deal ({deal.void_reason})")
        return lines
    row = score_row(score_deal(outcome), players, deal.taker, deal.partner)
    lines.append(("Marque : " if lang == "fr" else "Score: ") + "  ".join(f"{s:+d}" for s in row))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/play", description="A deal between bots, narrated.")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=5)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--lang", choices=("fr", "en"), default="fr")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    for line in narrate_deal(args.players, seed, args.lang):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
