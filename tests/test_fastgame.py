"""The fast engine of the strong bot's search against the referee: at every position of random
deals, the same legal cards; at every trick, the same winner; at the end, the same score for
every seat.  A few hundred positions a table size by default, 10,000 deals behind ``-m slow``."""

from __future__ import annotations

import random

import pytest

from protocol.bots.bots import BasicPolicy
from protocol.bots.fastgame import FastDeal, bits, half_points, mask
from protocol.bots.players import Policy, RandomPolicy, decide
from protocol.bots.worlds import opening
from protocol.rules.cards import DECK, EXCUSE, PETIT, VINGT_ET_UN, cards
from protocol.rules.deal import AnnounceChelem, Bid, Deal, Phase, Play, ShowPoignee
from protocol.rules.scoring import score_deal, score_row
from protocol.rules.variants import Contract, variant

pytestmark = pytest.mark.heavy


def fast_twin(deal: Deal) -> FastDeal:
    """The referee's deal, at the first card of its play, on the fast engine."""
    assert deal.taker is not None and deal.contract is not None
    hands = [mask(c.index for c in deal.hand(s)) for s in range(deal.variant.players)]
    if deal.contract.chien_seen:
        aside, bouts = mask(c.index for c in deal.ecart), 0
    elif deal.contract is Contract.GARDE_SANS:
        aside = mask(c.index for c in deal.chien or ())
        bouts = sum(1 for c in deal.chien or () if c.is_bout)
    else:
        aside, bouts = 0, 0
    return opening(
        deal.variant,
        hands,
        taker=deal.taker,
        partner=deal.partner,
        contract=deal.contract,
        leader=deal.leader,
        base_half=half_points(aside),
        base_bouts=bouts,
        called=deal.called,
        chelem_announced=deal.chelem_announced,
        poignee_points=sum(int(p.size) for p in deal.poignees),
    )


def cross_check(players: int, seed: int) -> int:
    """Play one random deal on both engines; the number of positions compared."""
    rng = random.Random(seed)
    policies: list[Policy] = [
        BasicPolicy()
        if rng.random() < 0.5
        else RandomPolicy(random.Random(rng.random()), chelem_rate=0.1)
        for _ in range(players)
    ]
    deal = Deal.from_seed(variant(players), seed % players, seed)
    while not deal.finished and deal.phase is not Phase.PLAYING:
        for action in decide(deal, policies[deal.to_act or 0]):
            deal.push(action)
    if deal.finished:
        return 0
    fast: FastDeal | None = None
    positions = 0
    while not deal.finished:
        seat = deal.to_act
        assert seat is not None
        actions = decide(deal, policies[seat])
        for action in actions:
            if isinstance(action, Play):
                if fast is None:
                    fast = fast_twin(deal)
                assert fast.to_act == seat
                assert set(bits(fast.legal())) == {c.index for c in deal.legal_cards(seat)}
                positions += 1
                fast.play(action.card.index)
            deal.push(action)
            if isinstance(action, ShowPoignee) and fast is not None:  # shown after the first card
                fast.poignee_points += int(deal.poignees[-1].size)
            if isinstance(action, Play) and not deal.current and not deal.finished:
                assert fast is not None and fast.leader == deal.tricks[-1].winner
    assert fast is not None and fast.finished
    outcome = deal.outcome()
    assert outcome is not None and deal.taker is not None
    expected = score_row(score_deal(outcome), players, deal.taker, deal.partner)
    assert [fast.score(s) for s in range(players)] == expected
    return positions


@pytest.mark.parametrize("players", [3, 4, 5])
def test_fast_engine_agrees_with_the_referee(players: int) -> None:
    positions = sum(cross_check(players, seed) for seed in range(12))
    assert positions >= 300


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5])
def test_fast_engine_agrees_on_ten_thousand_deals(players: int) -> None:
    positions = sum(cross_check(players, 1_000_000 + seed) for seed in range(10_000))
    assert positions >= 10_000


def chelem_deal() -> Deal:
    """Four players: seat 0 holds the Excuse, the trumps from the 21 down to the 9 and the kings."""
    hand0 = cards("EX T21 T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 KS KH KD KC T9")
    others = [c for c in DECK if c not in hand0]
    random.Random(3).shuffle(others)
    hands = (tuple(hand0), tuple(others[0:18]), tuple(others[18:36]), tuple(others[36:54]))
    return Deal(variant(4), 3, hands, tuple(others[54:60]))


def test_chelem_with_the_excuse_last_scores_alike() -> None:
    """An announced chelem, the Excuse kept for the last trick, which it takes: the same score."""
    deal = chelem_deal()
    for bidder in (0, 1, 2, 3):
        deal.push(Bid(bidder, Contract.GARDE_SANS if bidder == 0 else None))
    deal.push(AnnounceChelem(0, True))
    fast = fast_twin(deal)
    while not deal.finished:
        seat = deal.to_act
        assert seat is not None
        legal = deal.legal_cards(seat)
        if seat == 0:
            choice = (
                EXCUSE
                if len(legal) == 1
                else max((c for c in legal if c is not EXCUSE), key=lambda c: (c.is_trump, c.rank))
            )
        else:
            choice = min(legal, key=lambda c: (c is not PETIT, c.rank))
        assert set(bits(fast.legal())) == {c.index for c in legal}
        deal.push(Play(seat, choice))
        fast.play(choice.index)
    outcome = deal.outcome()
    assert outcome is not None and outcome.chelem is not None
    assert [fast.score(s) for s in range(4)] == score_row(score_deal(outcome), 4, 0, None)
    assert VINGT_ET_UN.index not in bits(fast.hands[0])
