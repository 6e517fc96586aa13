"""A seat's view and one sampled deal of the unseen cards, made into a position of the fast engine.

The search plays from where the deal stands: :func:`position` gives each seat the hand it had
when the play began (what it holds in the sample and what it played since), replays the tricks
on the :class:`~protocol.bots.fastgame.FastDeal` — which sums the points taken so far by the rules
of the Excuse — and the cards of the trick in progress.  In the sample the called card has a
holder, so the camps are known there: at five the search weighs each camp by how often the
samples deal the called card to each seat.
"""

from __future__ import annotations

from protocol.bots.fastgame import BOUT_MASK, NO_SUIT, FastDeal, half_points, mask
from protocol.bots.sampler import Sample
from protocol.rules.cards import Card
from protocol.rules.variants import Contract, Variant
from protocol.rules.view import SeatView

__all__ = ["attack_mask", "counted_aside", "opening", "position"]


def attack_mask(taker: int, holder: int | None) -> int:
    """The attack: the taker, and the called card's holder when it is another seat."""
    return (1 << taker) | (1 << holder if holder is not None and holder != taker else 0)


def opening(
    variant: Variant,
    hands: list[int],
    *,
    taker: int,
    partner: int | None,
    contract: Contract,
    leader: int,
    base_half: int = 0,
    base_bouts: int = 0,
    called: Card | None = None,
    chelem_announced: bool = False,
    poignee_points: int = 0,
) -> FastDeal:
    """A deal about to be played from its first card (with a copy of ``hands``)."""
    called_five = called is not None and variant.calls_a_card
    return FastDeal(
        list(hands),
        attack=attack_mask(taker, partner),
        taker=taker,
        leader=leader,
        multiplier=contract.multiplier,
        tricks_left=variant.tricks,
        base_half=base_half,
        base_bouts=base_bouts,
        chelem_announced=chelem_announced,
        poignee_points=poignee_points,
        forbidden_suit=called.index // 14 if called_five and called is not None else NO_SUIT,
        called=called.index if called is not None else -1,
    )


def position(view: SeatView, world: Sample) -> FastDeal:
    """The deal of ``view`` as it stands, in the world ``world``
    (the pile is the chien or écart)."""
    assert view.taker is not None and view.contract is not None
    n = view.players
    hands = [world.hand_mask(s) for s in range(n)]
    for trick in view.tricks:
        for i, c in enumerate(trick.cards):
            hands[(trick.leader + i) % n] |= 1 << c.index
    for i, c in enumerate(view.current):
        hands[(view.leader + i) % n] |= 1 << c.index
    partner = view.partner
    if partner is None and view.called is not None:
        partner = next((s for s in range(n) if view.called.index in world.hands[s]), None)
        if partner is None and view.called in view.played:
            partner = _played_by(view, view.called)
    base, bouts = counted_aside(view, world)
    leader = view.tricks[0].leader if view.tricks else view.leader
    g = opening(
        view.variant,
        hands,
        taker=view.taker,
        partner=partner,
        contract=view.contract,
        leader=leader,
        base_half=base,
        base_bouts=bouts,
        called=view.called,
        chelem_announced=view.chelem_announced,
        poignee_points=sum(int(p.size) for p in view.poignees),
    )
    for trick in view.tricks:
        for c in trick.cards:
            g.play(c.index)
    for c in view.current:
        g.play(c.index)
    return g


def counted_aside(view: SeatView, world: Sample) -> tuple[int, int]:
    """The half points and bouts the attack counts outside the tricks: the écart (the shown
    trumps and the pile, for a seat that did not make it), the chien at a Garde Sans."""
    assert view.contract is not None
    pile = world.hand_mask(view.players)
    if view.contract.chien_seen:
        ecart = mask([c.index for c in view.ecart]) | (pile if view.seat != view.taker else 0)
        return half_points(ecart), 0
    if view.contract is Contract.GARDE_SANS:
        return half_points(pile), bin(pile & BOUT_MASK).count("1")
    return 0, 0


def _played_by(view: SeatView, card: Card) -> int | None:
    n = view.players
    for trick in view.tricks:
        if card in trick.cards:
            return (trick.leader + trick.cards.index(card)) % n
    if card in view.current:
        return (view.leader + view.current.index(card)) % n
    return None
