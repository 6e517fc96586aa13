"""The decisions a seat makes, behind one interface, and a loop that plays a deal with them.

A :class:`Policy` gets only a :class:`~protocol.rules.view.SeatView` — what its seat may know —
and the choices the rules leave it.  Human players (through the client), bots and tests all
sit behind it.
"""

from __future__ import annotations

import random
from typing import Protocol

from protocol.rules import rules
from protocol.rules.cards import Card
from protocol.rules.deal import (
    Action,
    AnnounceChelem,
    Bid,
    Call,
    Deal,
    Ecart,
    Phase,
    Play,
    ShowPoignee,
)
from protocol.rules.variants import Contract
from protocol.rules.view import SeatView, seat_view


class Policy(Protocol):
    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None: ...

    def call(self, view: SeatView, options: list[Card]) -> Card: ...

    def ecart(self, view: SeatView, candidates: list[Card], trumps_needed: int) -> list[Card]: ...

    def announce_chelem(self, view: SeatView) -> bool: ...

    def poignee(self, view: SeatView) -> list[Card] | None: ...

    def play(self, view: SeatView, legal: list[Card]) -> Card: ...


class RandomPolicy:
    """Uniform over the legal choices.  Chelem and poignée are announced with a set probability
    (uniform would announce a chelem every other deal)."""

    def __init__(
        self, rng: random.Random, *, chelem_rate: float = 0.02, poignee_rate: float = 0.5
    ) -> None:
        self.rng = rng
        self.chelem_rate = chelem_rate
        self.poignee_rate = poignee_rate

    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None:
        return self.rng.choice([None, *options])

    def call(self, view: SeatView, options: list[Card]) -> Card:
        return self.rng.choice(options)

    def ecart(self, view: SeatView, candidates: list[Card], trumps_needed: int) -> list[Card]:
        size = view.variant.chien_size
        colour = [c for c in candidates if not c.is_trump]
        trumps = [c for c in candidates if c.is_trump]
        if trumps_needed:
            return colour + self.rng.sample(trumps, trumps_needed)
        return self.rng.sample(colour, size)

    def announce_chelem(self, view: SeatView) -> bool:
        return self.rng.random() < self.chelem_rate

    def poignee(self, view: SeatView) -> list[Card] | None:
        sizes = rules.poignee_sizes_available(view.hand, view.variant, view.poignee_ecart)
        if not sizes or self.rng.random() >= self.poignee_rate:
            return None
        return rules.default_poignee(
            view.hand, view.variant, self.rng.choice(sizes), view.poignee_ecart
        )

    def play(self, view: SeatView, legal: list[Card]) -> Card:
        return self.rng.choice(legal)


def decide(deal: Deal, policy: Policy) -> list[Action]:
    """The action(s) the seat to act takes now: a poignée may come before its first card."""
    seat = deal.to_act
    if seat is None:
        return []
    view = seat_view(deal, seat)
    if deal.phase is Phase.BIDDING:
        highest = max((b.contract for b in deal.bids if b.contract is not None), default=None)
        return [Bid(seat, policy.bid(view, rules.higher_contracts(highest)))]
    if deal.phase is Phase.CALL:
        return [Call(seat, policy.call(view, rules.callable_cards(deal.hand(seat))))]
    if deal.phase is Phase.ECART:
        candidates, needed = deal.ecart_candidates()
        return [Ecart(seat, tuple(policy.ecart(view, candidates, needed)))]
    if deal.phase is Phase.CHELEM:
        return [AnnounceChelem(seat, policy.announce_chelem(view))]
    actions: list[Action] = []
    if deal.poignee_allowed(seat):
        shown = policy.poignee(view)
        if shown:
            actions.append(ShowPoignee(seat, tuple(shown)))
    actions.append(Play(seat, policy.play(view, list(view.legal))))
    return actions


def play_deal(deal: Deal, policies: list[Policy]) -> Deal:
    """Drive ``deal`` to its end, each seat deciding through its policy."""
    while not deal.finished:
        seat = deal.to_act
        assert seat is not None
        for action in decide(deal, policies[seat]):
            deal.push(action)
    return deal
