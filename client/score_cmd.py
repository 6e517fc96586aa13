"""``tarot score``: the FFT score calculator.

It answers the question asked at every table after a deal — "how much is it?" — with the same
code the daemons use to sign the score (:mod:`protocol.rules.scoring`), so a player can check the
score sheet by hand.  The attack's points are typed as a player counts them, to the half point
("40.5"), and parsed to half points without a float: "40.3" or "40,5" are mistakes to point
out, not numbers to round.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING

from client.cli import UsageError
from protocol.rules.cards import TOTAL_HALF_POINTS
from protocol.rules.scoring import Camp, DealOutcome, DealScore, points_to_make, score_deal
from protocol.rules.variants import Contract, PoigneeSize

if TYPE_CHECKING:
    from client.cli import SubParsers

_CONTRACTS = ", ".join(c.code for c in Contract)
_CAMPS = "attack, defence"
_SIZES = ", ".join(s.code for s in PoigneeSize)
_MAX_POINTS = TOTAL_HALF_POINTS // 2  # 91


def parse_players(text: str) -> int:
    if text.strip() in ("3", "4", "5"):
        return int(text)
    raise argparse.ArgumentTypeError(f"invalid number of players {text!r}: use 3, 4 or 5")


def parse_contract(text: str) -> Contract:
    try:
        return Contract.from_code(text.strip().lower())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown contract {text!r}: use one of {_CONTRACTS}"
        ) from None


def parse_bouts(text: str) -> int:
    if text.strip() in ("0", "1", "2", "3"):
        return int(text)
    raise argparse.ArgumentTypeError(
        f"invalid number of bouts {text!r}: use 0, 1, 2 or 3 (the Petit, the 21 and the Excuse)"
    )


_POINTS_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))?")


def parse_points(text: str) -> int:
    """The attack's points, "40" or "40.5", as half points (81) — exactly, with no float."""
    allowed = f"use 0 to {_MAX_POINTS}, a whole number or one ending in .5 (e.g. 40.5)"
    candidate = text.strip()
    if re.fullmatch(r"[0-9]+,[0-9]+", candidate):
        raise argparse.ArgumentTypeError(
            f"{text!r}: write the half point with a dot, not a comma; {allowed}"
        )
    match = _POINTS_RE.fullmatch(candidate)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of points: {allowed}")
    whole, fraction = int(match[1]), (match[2] or "0").rstrip("0")
    if fraction not in ("", "5"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: cards count to the half point, so points are whole or end in .5; {allowed}"
        )
    half_points = 2 * whole + (1 if fraction == "5" else 0)
    if half_points > TOTAL_HALF_POINTS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the whole deck is worth {_MAX_POINTS} points; {allowed}"
        )
    return half_points


def parse_camp(text: str) -> Camp:
    value = text.strip().lower()
    if value == "defense":  # the American spelling is not a reason to refuse
        value = "defence"
    for camp in Camp:
        if camp.value == value:
            return camp
    raise argparse.ArgumentTypeError(f"unknown camp {text!r}: use {_CAMPS}")


def parse_chelem(text: str) -> Camp:
    """The camp that took every trick.  Whether the taker announced it is another question
    (``--chelem-announced``): the two combine freely, as in the score."""
    try:
        return parse_camp(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"unknown chelem {text!r}: name the camp that took every trick, {_CAMPS} "
            "(a chelem announced by the taker is --chelem-announced)"
        ) from None


def parse_poignee(text: str) -> tuple[Camp, PoigneeSize]:
    camp_text, colon, size_text = text.partition(":")
    if not colon:
        raise argparse.ArgumentTypeError(
            f"{text!r}: write CAMP:SIZE, e.g. attack:simple (CAMP {_CAMPS}; SIZE {_SIZES})"
        )
    try:
        camp = parse_camp(camp_text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"unknown camp {camp_text!r} in {text!r}: use {_CAMPS} (e.g. attack:simple)"
        ) from None
    for size in PoigneeSize:
        if size.code == size_text.strip().lower():
            return camp, size
    raise argparse.ArgumentTypeError(
        f"unknown poignée size {size_text!r} in {text!r}: use {_SIZES} (e.g. defence:double)"
    )


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "score",
        help="the FFT score of one deal",
        description=(
            "Compute the FFT score of one deal: u = s(25 + d)m + 10pm + sP + C; each defender "
            "scores -u, the taker 2u (3 players), 3u (4), 2u with a partner at u (5), 4u alone (5)."
        ),
    )
    parser.add_argument("--players", type=parse_players, required=True, metavar="{3,4,5}")
    parser.add_argument(
        "--contract",
        type=parse_contract,
        required=True,
        metavar="{" + ",".join(c.code for c in Contract) + "}",
    )
    parser.add_argument(
        "--bouts",
        type=parse_bouts,
        required=True,
        metavar="N",
        help="bouts held by the attack at the end: 0-3",
    )
    parser.add_argument(
        "--points",
        type=parse_points,
        required=True,
        metavar="P",
        help="the attack's card points, 0-91, whole or ending in .5 (e.g. 40.5)",
    )
    parser.add_argument(
        "--alone", action="store_true", help="5 players: the taker plays without a partner"
    )
    parser.add_argument(
        "--poignee",
        type=parse_poignee,
        action="append",
        default=[],
        metavar="CAMP:SIZE",
        help=f"a poignée shown (repeat for each): CAMP {_CAMPS}; SIZE {_SIZES}",
    )
    parser.add_argument(
        "--petit-au-bout",
        type=parse_camp,
        default=None,
        metavar="CAMP",
        help=f"the camp that took the Petit in the last trick: {_CAMPS}",
    )
    parser.add_argument(
        "--chelem",
        type=parse_chelem,
        default=None,
        metavar="CAMP",
        help=f"the camp that took every trick: {_CAMPS}",
    )
    parser.add_argument(
        "--chelem-announced",
        action="store_true",
        help="the taker announced a chelem (made with --chelem attack, failed otherwise)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(run=run)


def outcome_from_args(args: argparse.Namespace) -> DealOutcome:
    if args.alone and args.players != 5:
        raise UsageError(
            f"--alone is only for 5 players (the taker without a partner), not {args.players}: "
            "at 3 or 4 players the taker is always alone"
        )
    try:
        return DealOutcome(
            players=args.players,
            contract=args.contract,
            attack_half_points=args.points,
            bouts=args.bouts,
            poignees=tuple(args.poignee),
            petit_au_bout=args.petit_au_bout,
            chelem_announced=args.chelem_announced,
            chelem=args.chelem,
            alone=args.alone,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _points(half_points: int) -> str:
    whole, half = divmod(half_points, 2)
    return f"{whole}.5" if half else str(whole)


def _plural(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def describe(outcome: DealOutcome, score: DealScore) -> list[str]:
    """The lines a player reads: the result, then one score per role."""
    need = points_to_make(outcome.bouts)
    bouts = f"{outcome.bouts} bout{'s' if outcome.bouts != 1 else ''}"
    made = f"{_points(outcome.attack_half_points)} / {need} ({bouts})"
    by = _plural(score.difference)
    if score.won and score.difference == 0:
        lines = [f"Contrat juste fait (contract made exactly): {made}"]
    elif score.won:
        lines = [f"Contrat gagné de {by} (contract won by {by}): {made}"]
    else:
        lines = [f"Contrat chuté de {by} (contract lost by {by}): {made}"]
    if score.partner is None:
        alone = " seul (taker alone)" if outcome.players == 5 else " (taker)"
        lines.append(f"Preneur{alone}: {score.taker:+d}")
    else:
        lines.append(f"Preneur (taker): {score.taker:+d}")
        lines.append(f"Partenaire (partner): {score.partner:+d}")
    lines.append(f"Défenseur (each defender): {score.defender:+d}")
    return lines


def run(args: argparse.Namespace) -> int:
    outcome = outcome_from_args(args)
    score = score_deal(outcome)
    if args.json:
        print(
            json.dumps(
                {
                    "won": score.won,
                    "difference": score.difference,
                    "taker": score.taker,
                    "partner": score.partner,
                    "defender": score.defender,
                }
            )
        )
    else:
        print("\n".join(describe(outcome, score)))
    return 0
