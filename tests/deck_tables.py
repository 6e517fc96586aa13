"""Shared by the deck tests: tables of seats with fixed seeds, dealt in one process.

A dealt table is computed once per (players, salt, dealer) and handed out as a deep copy, so
that each test gets its own state without paying for the shuffle and lock again.
"""

from __future__ import annotations

import copy
import hashlib
from functools import cache
from typing import Iterable, Mapping

from protocol.cards import DECK, Card
from protocol.deck import DeckSetup, PublicDeck, SeatDeck, deal_in_one_process
from protocol.group import card_of, invert, mul, scalar_product
from protocol.variants import variant

TABLE_ID = b"test-table"


def seed_for(players: int, seat: int, salt: int = 0) -> bytes:
    return hashlib.sha256(f"seed/{players}/{seat}/{salt}".encode()).digest()


def setup_for(players: int, *, dealer: int = 0, weighted: bool = False) -> DeckSetup:
    return DeckSetup(TABLE_ID, 1, variant(players), dealer, weighted_lock=weighted)


def fresh_table(
    players: int,
    *,
    salt: int = 0,
    dealer: int = 0,
    weighted: bool = False,
    cheaters: Mapping[int, type[SeatDeck]] | None = None,
) -> tuple[list[SeatDeck], PublicDeck]:
    setup = setup_for(players, dealer=dealer, weighted=weighted)
    kinds = cheaters or {}
    seats = [kinds.get(seat, SeatDeck)(setup, seat, seed_for(players, seat, salt)) for seat in range(players)]
    return seats, PublicDeck(setup)


@cache
def _dealt(players: int, salt: int, dealer: int) -> tuple[list[SeatDeck], PublicDeck]:
    seats, public = fresh_table(players, salt=salt, dealer=dealer)
    deal_in_one_process(seats, [public])
    return seats, public


def dealt_table(players: int, salt: int = 0, dealer: int = 0) -> tuple[list[SeatDeck], PublicDeck]:
    """A table after the deal round, every hand decrypted; a private copy."""
    return copy.deepcopy(_dealt(players, salt, dealer), memo={id(card): card for card in DECK})


def commit_round(seats: list[SeatDeck], public: PublicDeck, *observers: PublicDeck) -> None:
    """Every seat's commitment, fed to ``public`` and to the ``observers`` (other seats'
    public decks watching the same table)."""
    for seat in seats:
        for deck in (public, *observers):
            deck.receive(seat.commit())


def lock_rounds(seats: list[SeatDeck], public: PublicDeck, *observers: PublicDeck) -> None:
    """Commit, shuffle and lock, every seat in turn — up to the deal keys, nobody dealt yet.
    The seats build on ``public``; every payload is fed to the ``observers`` too."""
    commit_round(seats, public, *observers)
    for step in ("shuffle", "lock"):
        for seat in seats:
            payload = getattr(seat, step)(public)  # the seat's own method: a cheater's bends it
            for deck in (public, *observers):
                deck.receive(payload)


def truth(seats: list[SeatDeck], public: PublicDeck) -> list[int | None]:
    """The card index under each pack position, opened with every seat's key (None: no card)."""
    return [
        card_of(mul(invert(scalar_product(seat.secrets.lock_keys[j] for seat in seats)), public.final_point(j)))
        for j in range(78)
    ]


def turn_chien(seats: list[SeatDeck], public: PublicDeck) -> tuple[Card, ...]:
    for seat in seats:
        public.receive(seat.chien_keys())
    chien = public.chien()
    assert chien is not None
    return chien


def plain(cards: Iterable[Card]) -> list[Card]:
    """The cards an écart may take without question: no trump, no king, no bout."""
    return [card for card in cards if not card.is_trump and not card.is_king and not card.is_bout]


def reveal_all(seats: list[SeatDeck], public: PublicDeck | None = None) -> dict[int, bytes | None]:
    for seat in seats:
        if public is not None:
            public.receive(seat.reveal())
    return {seat.seat: seat.seed for seat in seats}

