"""The basic bots' play style (issue 37): the new bots' switches, the baselines' play of before."""

from __future__ import annotations

import random

from protocol.bots.bidding import EARLY_MARGIN, TAKE_THRESHOLDS, choose_bid, hand_points
from protocol.bots.bots import CAUTIOUS_PLAY, CLUB_PLAY, BasicPolicy, PlayStyle, make_bot
from protocol.rules.cards import DECK, Card, Suit, card, cards
from protocol.rules.deal import Bid, Deal, Phase
from protocol.rules.rules import check_ecart
from protocol.rules.variants import Contract, variant
from protocol.rules.view import seat_view
from tests.test_bots import build_deal, push_plays, take_garde_sans

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


#: A taker void in hearts with a small trump, a major and the 21: every trump above the major is
#: its own, so the major surely keeps a heart trick, the small trump may be over-ruffed.
VOID_IN_HEARTS = "T5 T20 T21 2S 3S 4S 5S 6S 7S 2D 3D 4D 5D 6D 7D 2C 3C 4C"


def ruff_of(style: PlayStyle, lead: str, taker: str = VOID_IN_HEARTS) -> Card:
    """The card the taker (seat 1, second to play) ruffs ``lead`` with."""
    deal = build_deal(4, 3, {0: lead, 1: taker})
    take_garde_sans(deal, 1)
    push_plays(deal, lead)
    view = seat_view(deal, 1)
    return BasicPolicy(style=style).play(view, list(view.legal))


def test_a_major_is_not_spent_on_an_empty_trick() -> None:
    """Fails on the play of before (kept by the baselines), which ruffs a lone 2 of hearts with
    the 20 because it surely keeps the trick: the small trump risks one point, the 20 is worth
    more later (measured at four players, duplicate, about +1 point a deal)."""
    assert ruff_of(CLUB_PLAY, "2H") == card("T5")
    assert ruff_of(CAUTIOUS_PLAY, "2H") == card("T20")


def test_the_21_waits_for_a_trick_worth_more_than_a_cavalier() -> None:
    """The 21 can never be caught, so it waits for a trick worth it: before, any trick worth
    five half points (a cavalier) had it; now a trick worth fewer than twelve (measured, about
    +0.8 a deal more at four players)."""
    taker = VOID_IN_HEARTS.replace("T20", "8C")
    assert ruff_of(CLUB_PLAY, "NH", taker) == card("T5")
    assert ruff_of(CAUTIOUS_PLAY, "NH", taker) == card("T21")
