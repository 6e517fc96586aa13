"""What the bids say about the hands: a prior on the sampled deals, beyond the hard constraints.

A seat that passed holds a hand too weak for the next contract; the taker one strong enough for
its contract and not for the one above.  Nothing proves it — a player may bid on a hunch — so
the sampler does not forbid such deals; instead the search prefers the worlds in which every
bid fits a club player's point count (:func:`protocol.bots.hand_strength` against
:data:`protocol.bots.BID_THRESHOLDS`, how the basic bot and many players bid).  :func:`misfit`
measures how far a world is from that: zero when every bid fits.
"""

from __future__ import annotations

from protocol.bots import BID_THRESHOLDS, hand_strength
from protocol.cards import DECK, Card
from protocol.sampler import Sample
from protocol.variants import Contract
from protocol.view import SeatView

__all__ = ["bid_ranges", "misfit"]


def bid_ranges(view: SeatView) -> dict[int, tuple[int, int]]:
    """For each other seat that spoke, the range of point counts its bid suggests."""
    thresholds = BID_THRESHOLDS[view.players]
    ranges: dict[int, tuple[int, int]] = {}
    highest: Contract | None = None
    for bid in view.bids:
        above = [c for c in Contract if highest is None or c > highest]
        if bid.contract is None:
            ceiling = thresholds[above[0]] if above else 1000
            low = 0
        else:
            low = thresholds[bid.contract]
            higher = [c for c in Contract if c > bid.contract]
            ceiling = thresholds[higher[0]] if higher else 1000
            highest = bid.contract
        if bid.seat != view.seat:
            ranges[bid.seat] = (low, ceiling)
    return ranges


def _dealt_hand(view: SeatView, world: Sample, seat: int) -> list[Card]:
    """The hand ``seat`` was dealt, in this world: what it holds and played, less the chien it
    took (and with the écart it set aside)."""
    n = view.players
    cards = {DECK[i] for i in world.hands[seat]}
    for trick in view.tricks:
        cards.add(trick.played_by(seat, n))
    for i, c in enumerate(view.current):
        if (view.leader + i) % n == seat:
            cards.add(c)
    if seat == view.taker and view.chien:
        cards |= set(view.ecart) | {DECK[i] for i in world.hands[n]}
        cards -= set(view.chien)
    return list(cards)


def misfit(view: SeatView, world: Sample, ranges: dict[int, tuple[int, int]]) -> int:
    """How many points of count the world's hands lie outside what their bids suggest."""
    total = 0
    for seat, (low, ceiling) in ranges.items():
        strength = hand_strength(_dealt_hand(view, world, seat))
        if strength < low:
            total += low - strength
        elif strength >= ceiling:
            total += strength - ceiling + 1
    return total
