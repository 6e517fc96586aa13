"""Properties of whole deals played by random legal players, over thousands of seeds."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.bots.players import RandomPolicy, decide, play_deal
from protocol.rules import rules
from protocol.rules.cards import DECK
from protocol.rules.deal import Deal, Phase, Play
from protocol.rules.scoring import score_deal, score_row
from protocol.rules.variants import variant

pytestmark = pytest.mark.heavy

deals = st.tuples(st.sampled_from([3, 4, 5]), st.integers(0, 4), st.integers(0, 2**32))


def random_deal(players: int, dealer: int, seed: int) -> Deal:
    deal = Deal.from_seed(variant(players), dealer % players, seed)
    rng = random.Random(seed)
    policies = [RandomPolicy(rng, chelem_rate=0.1) for _ in range(players)]
    while not deal.finished:
        seat = deal.to_act
        assert seat is not None
        if deal.phase is Phase.PLAYING:
            legal = deal.legal_cards(seat)
            assert legal, "a seat to play always has a legal card"
            # independent check: what the rules allow from this hand on this trick
            assert set(legal) <= set(deal.hands[seat])
        for action in decide(deal, policies[seat]):
            if isinstance(action, Play):
                assert action.card in deal.legal_cards(seat)
            deal.push(action)
    return deal


def check_deal(players: int, dealer: int, seed: int) -> None:
    deal = random_deal(players, dealer, seed)
    dealt = [c for hand in deal.dealt for c in hand] + list(deal.chien)
    assert sorted(dealt) == list(DECK)  # 78 distinct cards
    if deal.phase is Phase.VOID:
        return
    assert sum(deal.half_points().values()) == 182  # 91 points in every deal
    assert sum(len(t.cards) for t in deal.tricks) == players * variant(players).hand_size
    outcome = deal.outcome()
    assert outcome is not None and deal.taker is not None
    row = score_row(score_deal(outcome), players, deal.taker, deal.partner)
    assert sum(row) == 0
    # The same seed gives the same deal, and the recorded actions replay identically
    # through a fresh referee (which re-checks every one of them).
    replay = Deal.from_seed(variant(players), dealer % players, seed)
    for action in deal.history:
        replay.push(action)
    assert replay.tricks == deal.tricks and replay.outcome() == outcome


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deals)
def test_random_legal_deals(params: tuple[int, int, int]) -> None:
    check_deal(*params)


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5])
def test_ten_thousand_random_deals(players: int) -> None:
    for seed in range(10_000):
        check_deal(players, seed, seed)


def test_identical_seeds_give_identical_deals() -> None:
    for players in (3, 4, 5):
        a = play_deal(
            Deal.from_seed(variant(players), 0, 42),
            [RandomPolicy(random.Random(1)) for _ in range(players)],
        )
        b = play_deal(
            Deal.from_seed(variant(players), 0, 42),
            [RandomPolicy(random.Random(1)) for _ in range(players)],
        )
        assert a.history == b.history and a.outcome() == b.outcome()


def test_legal_plays_never_empty_for_a_nonempty_hand() -> None:
    rng = random.Random(5)
    for _ in range(5000):
        hand = rng.sample(DECK, rng.randint(1, 18))
        rest = [c for c in DECK if c not in hand]
        trick = rng.sample(rest, rng.randint(0, 4))
        legal = rules.legal_plays(hand, trick)
        assert legal and set(legal) <= set(hand)
