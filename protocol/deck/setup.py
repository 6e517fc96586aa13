"""What every seat of a deal agrees on before its deck is shuffled: :class:`DeckSetup`."""

from __future__ import annotations

from dataclasses import dataclass

from protocol.deck.proofs import Binding
from protocol.rules.layout import CHIEN, DealLayout, deal_layout
from protocol.rules.variants import Variant
from protocol.wire import integer


@dataclass(frozen=True)
class DeckSetup:
    """What every seat agrees on before the deal: it fixes the layout and binds every proof."""

    table_id: bytes
    deal: int
    variant: Variant
    dealer: int

    def __post_init__(self) -> None:
        if not isinstance(self.table_id, bytes) or not self.table_id:
            raise ValueError("the table id is a non-empty byte string")
        integer("the deal number", self.deal)  # a FieldError is a ValueError
        deal_layout(self.variant, self.dealer)  # checks the dealer

    @property
    def players(self) -> int:
        return self.variant.players

    @property
    def layout(self) -> DealLayout:
        return deal_layout(self.variant, self.dealer)

    @property
    def recommit_count(self) -> int:
        return self.variant.hand_size + self.variant.chien_size

    def binding(self, seat: int, step: str) -> Binding:
        return Binding(self.table_id, self.deal, seat, step)

    def dealt_to_others(self, seat: int) -> tuple[int, ...]:
        """The positions whose key ``seat`` publishes in the deal round, ascending."""
        return tuple(j for j, owner in enumerate(self.layout.owner) if owner not in (seat, CHIEN))
