"""The basic bots' play style (issue 37): the new bots' switches, the baselines' play of before."""

from __future__ import annotations

import random

from protocol.bots.bidding import EARLY_MARGIN, TAKE_THRESHOLDS, choose_bid, hand_points
from protocol.bots.bots import CAUTIOUS_PLAY, CLUB_PLAY, BasicPolicy, make_bot
from protocol.rules.cards import DECK, Card, Suit, cards
from protocol.rules.deal import Bid, Deal, Phase
from protocol.rules.rules import check_ecart
from protocol.rules.variants import Contract, variant
from protocol.rules.view import seat_view

#: Four small trumps and no bout: a taker this short has too few trumps to ruff with.
SHORT_TAKER = cards("T3 T5 T9 T12 KH 2H 3H 4H 5H KS QS 2S 3S QD ND 2D 1C 2C")
SHORT_CHIEN = cards("6H 7H 4S 3D 3C 4C")


def short_taker_at_the_ecart() -> Deal:
    """Seat 0 takes a Petite with :data:`SHORT_TAKER`, the others pass; it must now discard."""
    rest = [c for c in DECK if c not in SHORT_TAKER and c not in SHORT_CHIEN]
    hands = (tuple(SHORT_TAKER), tuple(rest[0:18]), tuple(rest[18:36]), tuple(rest[36:54]))
    deal = Deal(variant(4), 3, hands, tuple(SHORT_CHIEN))
    while deal.phase is Phase.BIDDING:
        seat = deal.to_act
        assert seat is not None
        deal.push(Bid(seat, Contract.PETITE if seat == 0 else None))
    assert deal.phase is Phase.ECART and deal.to_act == 0
    return deal


def ecart_of(policy: BasicPolicy, deal: Deal) -> list[Card]:
    candidates, needed = deal.ecart_candidates()
    ecart = policy.ecart(seat_view(deal, 0), candidates, needed)
    check_ecart(list(deal.hand(0)), ecart, deal.variant.chien_size)
    return ecart


def test_a_short_taker_banks_its_honours_instead_of_making_voids() -> None:
    """Fails without the switch (the play of before, kept by the baselines): that écart empties
    clubs, a void four small trumps cannot hold, and keeps the unguarded queen and cavalier."""
    deal = short_taker_at_the_ecart()
    banked = ecart_of(BasicPolicy(style=CLUB_PLAY), deal)
    before = ecart_of(BasicPolicy(style=CAUTIOUS_PLAY), deal)
    assert set(cards("QS QD ND")) <= set(banked)
    kept_before = [c for c in deal.hand(0) if c not in before]
    assert not any(c.suit is Suit.CLUBS for c in kept_before)  # clubs voided before
    kept_now = [c for c in deal.hand(0) if c not in banked]
    assert all(any(c.suit is suit for c in kept_now) for suit in Suit if suit.is_colour)


def test_the_baselines_play_as_before_and_the_new_bots_with_the_switches() -> None:
    rng = random.Random(0)
    assert CAUTIOUS_PLAY != CLUB_PLAY
    basic = make_bot("basic", rng)
    cautious = make_bot("basic-cautious", rng)
    assert isinstance(basic, BasicPolicy) and basic.style == CLUB_PLAY
    assert isinstance(cautious, BasicPolicy) and cautious.style == CAUTIOUS_PLAY
    for level, style in (("strong:2", CLUB_PLAY), ("strong-cautious:2", CAUTIOUS_PLAY)):
        inner = getattr(make_bot(level, rng), "_basic", None)
        assert isinstance(inner, BasicPolicy) and inner.style == style, level


def test_a_hand_short_of_a_garde_at_four_takes_a_petite() -> None:
    """At four players the Garde wants 40: the Gardes bid from 38 lost 36 points a deal (made
    two in five), where a Petite on them loses about 14 (self-play of 4,000 deals).  Fails on
    the Garde from 38."""
    hand = cards("T21 T17 T13 T11 T9 T6 T4 KH QH 3H 5H 2S 4S 6S QD 5D 8D 8C")
    assert TAKE_THRESHOLDS[4][Contract.GARDE] - 2 <= hand_points(hand)
    assert hand_points(hand) < TAKE_THRESHOLDS[4][Contract.GARDE]
    assert choose_bid(hand, 4, list(Contract), later=0) is Contract.PETITE


def test_the_margin_a_seat_grows_with_the_seats_still_to_speak() -> None:
    for players, margins in EARLY_MARGIN.items():
        assert len(margins) == players and margins[0] == 0
        assert list(margins) == sorted(margins), players
