"""Shared by the deck tests: tables of seats with fixed seeds, dealt in one process.

A dealt table is computed once per (players, salt, dealer) and handed out as a deep copy, so
that each test gets its own state without paying for the shuffle and lock again.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from protocol.deck.group import card_of, invert, mul, scalar_product
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import ChienKeys, DeckPayload, EcartCommitment, Open, OpenRecommitted
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.setup import DeckSetup
from protocol.rules.cards import DECK, Card
from protocol.rules.variants import variant

TABLE_ID = b"test-table"


def seed_for(players: int, seat: int, salt: int = 0) -> bytes:
    return hashlib.sha256(f"seed/{players}/{seat}/{salt}".encode()).digest()


def setup_for(players: int, *, dealer: int = 0) -> DeckSetup:
    return DeckSetup(TABLE_ID, 1, variant(players), dealer)


def fresh_table(
    players: int,
    *,
    salt: int = 0,
    dealer: int = 0,
    cheaters: Mapping[int, type[SeatDeck]] | None = None,
) -> tuple[list[SeatDeck], PublicDeck]:
    setup = setup_for(players, dealer=dealer)
    kinds = cheaters or {}
    seats = [
        kinds.get(seat, SeatDeck)(setup, seat, seed_for(players, seat, salt))
        for seat in range(players)
    ]
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
        card_of(
            mul(
                invert(scalar_product(seat.secrets.lock_keys[j] for seat in seats)),
                public.final_point(j),
            )
        )
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


def play_deal(
    seats: list[SeatDeck], public: PublicDeck, *, taker: int = 1, tricks: int = 3
) -> Iterator[str]:
    """Play a fresh table's deal through ``public``, every payload in protocol order, up to
    ``tricks`` tricks; yield the name of each moment an attacker may strike at, once its
    payloads are in: ``"first bid"`` (every hand dealt), ``"first card"`` (the chien turned, the
    taker's écart with a trump shown, the next seat's poignée of three), then ``"trick 1"``….

    The secrecy tests run it traced and untraced, so it uses nothing but the seats' own
    methods.  The cards played need not be legal: the deck does not judge play, the rules do.
    """
    lock_rounds(seats, public)
    for seat in seats:
        public.receive(seat.deal_keys())
    hands = {seat.seat: sorted(seat.hand(public).values()) for seat in seats}
    yield "first bid"
    chien = turn_chien(seats, public)
    pool = sorted([*hands[taker], *chien])
    trumps = [card for card in pool if card.is_trump and not card.is_bout][:1]
    discard = trumps + plain(pool)[: len(chien) - len(trumps)]
    public.receive(seats[taker].ecart(public, discard))
    hands[taker] = [card for card in pool if card not in discard]
    defender = seats[(taker + 1) % len(seats)]
    public.receive(defender.open(hands[defender.seat][:3]))
    yield "first card"
    for trick in range(tricks):
        for seat in seats:
            public.receive(seat.open([hands[seat.seat][trick]]))
        yield f"trick {trick + 1}"


def played_table(
    players: int, *, salt: int = 0, dealer: int = 0, tricks: int = 3
) -> tuple[list[SeatDeck], PublicDeck, dict[str, int]]:
    """A fresh table played by :func:`play_deal` (the seat after the dealer takes), and how
    many payloads were in at each of its moments."""
    seats, public = fresh_table(players, salt=salt, dealer=dealer)
    taker = (dealer + 1) % players
    moments = {
        moment: len(public.record.payloads)
        for moment in play_deal(seats, public, taker=taker, tricks=tricks)
    }
    return seats, public, moments


@dataclass(frozen=True, order=True)
class Place:
    """Where a card lies hidden: a pack position, or (``recommitted``) one of the taker's
    re-commitments — the two kinds of place a key opens."""

    recommitted: bool
    index: int


def taker_of(payloads: Sequence[DeckPayload]) -> int | None:
    """The seat that made the écart, once it has."""
    return next((p.seat for p in payloads if isinstance(p, EcartCommitment)), None)


def owner_of(place: Place, setup: DeckSetup, payloads: Sequence[DeckPayload]) -> int:
    """Who may see the card at ``place``: the seat it was dealt to, or ``CHIEN`` (nobody
    alone); a re-commitment is the taker's."""
    if place.recommitted:
        taker = taker_of(payloads)
        assert taker is not None, "a re-commitment before any écart"
        return taker
    return setup.layout.owner[place.index]


def shown_places(setup: DeckSetup, payloads: Sequence[DeckPayload]) -> set[Place]:
    """The places the rules have opened in ``payloads``: positions played or shown, the
    chien once every seat turned it, the trumps of the écart and the taker's cards played."""
    shown: set[Place] = set()
    chien_keys = 0
    for p in payloads:
        if isinstance(p, Open):
            shown |= {Place(False, o.where) for o in p.openings}
        elif isinstance(p, (EcartCommitment, OpenRecommitted)):
            shown |= {Place(True, o.where) for o in p.openings}
        elif isinstance(p, ChienKeys):
            chien_keys += 1
    if chien_keys == setup.players:
        shown |= {Place(False, j) for j in setup.layout.chien_positions}
    return shown
