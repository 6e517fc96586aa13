"""A whole deal of the deck for seats that share one process: the tests, the simulations and
the benchmark."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.deck.payloads import (
    DeckPayload,
)
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.rules.cards import Card


def deal_in_one_process(
    seats: Sequence[SeatDeck], views: Sequence[PublicDeck]
) -> dict[int, dict[int, Card]]:
    """Commit, shuffle, lock and deal for seats that live in one process (tests, simulations,
    the benchmark); returns every seat's hand.

    Every payload goes to every view.  Give one view per seat to have each seat verify
    everything, as separate daemons do, or a single shared view to verify everything once.
    """

    def view(seat: SeatDeck) -> PublicDeck:
        return views[seat.seat] if len(views) == len(seats) else views[0]

    def send(payload: DeckPayload) -> None:
        for public in views:
            public.receive(payload)

    for seat in seats:
        send(seat.commit())
    for seat in seats:
        send(seat.shuffle(view(seat)))
    for seat in seats:
        send(seat.lock(view(seat)))
    for seat in seats:
        send(seat.deal_keys())
    return {seat.seat: seat.hand(view(seat)) for seat in seats}
