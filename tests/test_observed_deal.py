"""A seat's replica of a live deal (:meth:`Deal.observed`) keeps the same public course as the
referee while seeing only its own hand."""

from __future__ import annotations

import random

import pytest

from protocol.bots.players import RandomPolicy, decide
from protocol.rules.deal import Action, AnnounceChelem, Bid, Deal, Ecart, Phase, Play
from protocol.rules.rules import RuleError
from protocol.rules.variants import Contract, variant

pytestmark = pytest.mark.heavy


def follow(referee: Deal, replicas: list[Deal], action: Action) -> None:
    """Give every replica what its seat learns from ``action``."""
    for seat, replica in enumerate(replicas):
        if isinstance(action, Ecart) and seat != action.seat:
            replica.hidden_ecart(tuple(c for c in action.cards if c.is_trump))
        else:
            replica.push(action)
        if replica.phase is Phase.ECART and replica.chien is None:
            assert referee.chien is not None
            replica.turn_chien(referee.chien)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_replicas_follow_the_referee(players: int) -> None:
    for seed in range(40):
        referee = Deal.from_seed(variant(players), seed % players, seed)
        replicas = [
            Deal.observed(variant(players), seed % players, s, referee.dealt[s] or ())
            for s in range(players)
        ]
        policies = [RandomPolicy(random.Random(seed * 10 + s)) for s in range(players)]
        while not referee.finished:
            seat = referee.to_act
            assert seat is not None
            for action in decide(referee, policies[seat]):
                if isinstance(action, Play):
                    assert replicas[seat].legal_cards(seat) == referee.legal_cards(seat)
                referee.push(action)
                if (
                    referee.phase is Phase.VOID
                    and referee.void_reason
                    and "petit sec" in referee.void_reason
                ):
                    break
                follow(referee, replicas, action)
        for replica in replicas:
            if referee.void_reason and "petit sec" in referee.void_reason:
                continue
            assert replica.phase is referee.phase
            assert replica.tricks == referee.tricks
            assert replica.taker == referee.taker and replica.contract == referee.contract
            if referee.phase is Phase.DONE:
                assert replica.partner == referee.partner  # every hand card is played by the end


def test_replica_refuses_a_card_it_holds_or_already_saw() -> None:
    referee = Deal.from_seed(variant(4), 3, 99)
    mine = referee.dealt[1] or ()
    replica = Deal.observed(variant(4), 3, 1, mine)
    for seat, bid in ((0, Contract.GARDE_SANS), (1, None), (2, None), (3, None)):
        replica.push(Bid(seat, bid))
    replica.push(AnnounceChelem(0, False))
    with pytest.raises(RuleError, match="cannot be in seat 0's hand"):
        replica.push(Play(0, mine[0]))
    other = (referee.dealt[0] or ())[0]
    replica.push(Play(0, other))
    assert replica.current == [other]
    with pytest.raises(RuleError, match="not visible"):
        replica.hand(0)
