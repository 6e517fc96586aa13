"""What one seat may know of a deal — the only thing a player's screen or a bot ever sees.

A :class:`SeatView` holds the seat's own hand and the public record of the deal; it never
holds another hand, the chien before it is turned, the écart (but its trumps, which are
shown), or the called card's holder before that card is played.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.rules.cards import Card
from protocol.rules.deal import Bid, Deal, Phase, Poignee, Trick
from protocol.rules.variants import Contract, Variant


@dataclass(frozen=True)
class SeatView:
    seat: int
    variant: Variant
    dealer: int
    phase: Phase
    to_act: int | None
    hand: tuple[Card, ...]
    bids: tuple[Bid, ...]
    taker: int | None
    contract: Contract | None
    called: Card | None
    partner: int | None  #: only once known to this seat
    chien: tuple[Card, ...]  #: empty until turned face up
    ecart: tuple[Card, ...]  #: the taker's own écart; for others only the trumps shown in it
    chelem_announced: bool
    poignees: tuple[Poignee, ...]
    tricks: tuple[Trick, ...]
    current: tuple[Card, ...]
    leader: int
    legal: tuple[Card, ...]  #: cards this seat may play now (empty when not its turn)

    @property
    def players(self) -> int:
        return self.variant.players

    @property
    def poignee_ecart(self) -> tuple[Card, ...]:
        """The écart whose trumps this seat may show again in its poignée: its own, if it is
        the taker (see :meth:`protocol.rules.deal.Deal.poignee_ecart`)."""
        return self.ecart if self.seat == self.taker else ()

    @property
    def played(self) -> set[Card]:
        return {c for t in self.tricks for c in t.cards} | set(self.current)


def seat_view(deal: Deal, seat: int) -> SeatView:
    chien_shown = (
        deal.contract is not None
        and deal.contract.chien_seen
        and deal.phase
        not in (
            Phase.BIDDING,
            Phase.CALL,
            Phase.VOID,
        )
    )
    return SeatView(
        seat=seat,
        variant=deal.variant,
        dealer=deal.dealer,
        phase=deal.phase,
        to_act=deal.to_act,
        hand=tuple(deal.hand(seat)),
        bids=tuple(deal.bids),
        taker=deal.taker,
        contract=deal.contract,
        called=deal.called,
        partner=_known_partner(deal, seat),
        chien=(deal.chien or ()) if chien_shown else (),
        ecart=deal.ecart if seat == deal.taker else tuple(c for c in deal.ecart if c.is_trump),
        chelem_announced=deal.chelem_announced,
        poignees=tuple(deal.poignees),
        tricks=tuple(deal.tricks),
        current=tuple(deal.current),
        leader=deal.leader,
        legal=tuple(deal.legal_cards(seat)),
    )


def _known_partner(deal: Deal, seat: int) -> int | None:
    """The partner is known to its holder at once, and to everybody once
    the called card is played."""
    partner = deal.partner
    if partner is None or deal.called is None:
        return None
    played = any(deal.called in t.cards for t in deal.tricks) or deal.called in deal.current
    return partner if played or seat == partner else None
