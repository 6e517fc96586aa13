"""Which card of the pack goes to whom: the physical deal, position by position.

The dealer hands out packets of three cards (four at three players) counter-clockwise,
starting with the player at its right, and puts the chien cards down one at a time between
packets — never the first or the last card of the pack.  The mental-poker deck deals by the
same layout: position *j* of the shuffled deck goes to ``layout.owner[j]``.

Where the chien cards fall is fixed (spread evenly between packets) rather than chosen by
the dealer, so that every daemon derives the same layout from the dealer alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from protocol.rules.variants import Variant

CHIEN = -1  #: owner of a chien position


@dataclass(frozen=True)
class DealLayout:
    variant: Variant
    dealer: int
    owner: tuple[int, ...]  # per pack position: a seat, or CHIEN

    def positions_of(self, seat: int) -> tuple[int, ...]:
        return tuple(j for j, owner in enumerate(self.owner) if owner == seat)

    @property
    def chien_positions(self) -> tuple[int, ...]:
        return self.positions_of(CHIEN)


@cache
def deal_layout(variant: Variant, dealer: int) -> DealLayout:
    if not 0 <= dealer < variant.players:
        raise ValueError(f"dealer {dealer} is not a seat of a {variant.players}-player table")
    packets = variant.players * variant.hand_size // variant.packet
    # After which packet each chien card goes: evenly spread, never before the first packet
    # nor after the last one (so never the first or last card of the pack).
    chien_after = [(i + 1) * packets // (variant.chien_size + 1) for i in range(variant.chien_size)]
    owner: list[int] = []
    seat = variant.next_seat(dealer)
    for packet in range(packets):
        owner.extend([seat] * variant.packet)
        seat = variant.next_seat(seat)
        owner.extend([CHIEN] * chien_after.count(packet + 1))
    assert len(owner) == 78 and owner[0] != CHIEN and owner[-1] != CHIEN
    return DealLayout(variant, dealer, tuple(owner))
