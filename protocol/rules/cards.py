"""The 78 cards of the French Tarot deck.

Every card is one of 78 immutable singletons in :data:`DECK`, indexed 0..77:
the four suits (spades, hearts, diamonds, clubs) from the ace to the king at
indices 0..55, the trumps 1..21 at 56..76 and the Excuse at 77.  The index is
the card's identity on the wire and in the mental-poker deck (card *c* becomes
the curve point ``M_c``), so it must never change.

Card points are kept in **half points** (a king is 9, a low card 1, the whole
deck 182) so that no arithmetic on points ever touches a float: the FFT counts
to the half point and Python's ``round`` rounds halves to even.

The machine code (``KH``, ``10S``, ``NC``, ``T21``, ``EX``) is the only form
used in files, JSON and the network; the human names exist in French and
English for the client.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Suit(enum.Enum):
    """What a card belongs to for following: one of four suits, the trumps, or the Excuse."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"
    TRUMPS = "T"
    EXCUSE = "EX"

    @property
    def is_colour(self) -> bool:
        """True for the four ordinary suits ("couleurs")."""
        return self in COLOURS


COLOURS: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)

#: Rank codes of suit cards: 1..10, then Valet (J), Cavalier (N), Dame (Q), Roi (K).
_RANK_CODES = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "N", "Q", "K")
VALET, CAVALIER, DAME, ROI = 11, 12, 13, 14

_SUIT_NAMES = {
    "fr": {
        Suit.SPADES: "pique",
        Suit.HEARTS: "cœur",
        Suit.DIAMONDS: "carreau",
        Suit.CLUBS: "trèfle",
    },
    "en": {
        Suit.SPADES: "spades",
        Suit.HEARTS: "hearts",
        Suit.DIAMONDS: "diamonds",
        Suit.CLUBS: "clubs",
    },
}
_SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
_HONOUR_NAMES = {
    "fr": {VALET: "Valet", CAVALIER: "Cavalier", DAME: "Dame", ROI: "Roi", 1: "As"},
    "en": {VALET: "Jack", CAVALIER: "Knight", DAME: "Queen", ROI: "King", 1: "Ace"},
}
_HONOUR_LETTERS = {
    "fr": {VALET: "V", CAVALIER: "C", DAME: "D", ROI: "R"},
    "en": {VALET: "J", CAVALIER: "N", DAME: "Q", ROI: "K"},
}
LANGUAGES = ("fr", "en")


class CardCodeError(ValueError):
    """A string that is not the machine code of a card."""


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One card.  Compare and hash by identity: there are exactly 78 of them."""

    index: int
    suit: Suit
    rank: int  # 1..14 in a suit, 1..21 for trumps, 0 for the Excuse
    code: str

    @property
    def is_trump(self) -> bool:
        """Trumps 1..21 (the Excuse is *not* a trump)."""
        return self.suit is Suit.TRUMPS

    @property
    def is_excuse(self) -> bool:
        return self.suit is Suit.EXCUSE

    @property
    def is_bout(self) -> bool:
        """The three oudlers: the Petit (trump 1), the 21 and the Excuse."""
        return self.is_excuse or (self.is_trump and self.rank in (1, 21))

    @property
    def is_king(self) -> bool:
        return self.suit.is_colour and self.rank == ROI

    @property
    def half_points(self) -> int:
        """Card value in half points: bout or king 9, queen 7, cavalier 5, valet 3, else 1."""
        if self.is_bout or self.is_king:
            return 9
        if self.suit.is_colour and self.rank >= VALET:
            return {VALET: 3, CAVALIER: 5, DAME: 7}[self.rank]
        return 1

    def name(self, lang: str = "fr") -> str:
        """The card's full name for a player: ``Roi de cœur`` / ``King of hearts``."""
        _check_lang(lang)
        if self.is_excuse:
            return "Excuse"
        if self.is_trump:
            if self.rank == 1:
                return "Petit" if lang == "fr" else "Petit (trump 1)"
            return f"Atout {self.rank}" if lang == "fr" else f"Trump {self.rank}"
        suit = _SUIT_NAMES[lang][self.suit]
        rank = _HONOUR_NAMES[lang].get(self.rank, str(self.rank))
        if lang == "fr":
            return f"{rank} de {suit}"
        return f"{rank} of {suit}"

    def symbol(self, lang: str = "fr") -> str:
        """The short form shown in a hand: ``R♥`` / ``K♥``, ``21`` for a trump, ``★`` for the
        Excuse."""
        _check_lang(lang)
        if self.is_excuse:
            return "★"
        if self.is_trump:
            return str(self.rank)
        rank = _HONOUR_LETTERS[lang].get(self.rank, str(self.rank))
        return f"{rank}{_SUIT_SYMBOLS[self.suit]}"

    def __repr__(self) -> str:
        return f"Card({self.code})"

    def __str__(self) -> str:
        return self.code

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    # A card is one of 78 singletons compared by identity: copying must not make a 79th.
    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (from_index, (self.index,))


def _check_lang(lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")


def _build_deck() -> tuple[Card, ...]:
    cards: list[Card] = []
    for suit in COLOURS:
        for rank in range(1, 15):
            cards.append(Card(len(cards), suit, rank, _RANK_CODES[rank - 1] + suit.value))
    for rank in range(1, 22):
        cards.append(Card(len(cards), Suit.TRUMPS, rank, f"T{rank}"))
    cards.append(Card(len(cards), Suit.EXCUSE, 0, "EX"))
    return tuple(cards)


DECK: tuple[Card, ...] = _build_deck()
_BY_CODE = {card.code: card for card in DECK}

PETIT = _BY_CODE["T1"]
VINGT_ET_UN = _BY_CODE["T21"]
EXCUSE = _BY_CODE["EX"]
TOTAL_HALF_POINTS = sum(card.half_points for card in DECK)  # 182, i.e. 91 points


def card(code: str) -> Card:
    """The card with this machine code, e.g. ``card("KH")``; :class:`CardCodeError` otherwise.

    >>> card("KH").name("fr"), card("T21").name("en"), card("ex").is_excuse
    ('Roi de cœur', 'Trump 21', True)
    >>> card("KH") is card(" kh ")
    True
    """
    try:
        return _BY_CODE[code.strip().upper()]
    except (KeyError, AttributeError):
        raise CardCodeError(
            f"{code!r} is not a card: use a rank 1-10, J, N, Q or K followed by a suit S, H, D or "
            "C "
            "(e.g. KH, 10S), a trump T1..T21, or EX for the Excuse"
        ) from None


def cards(codes: str | Iterable[str]) -> list[Card]:
    """Several cards from codes separated by spaces or commas, or from an iterable of codes.

    >>> cards("KH, 10S T1 EX")
    [Card(KH), Card(10S), Card(T1), Card(EX)]
    """
    if isinstance(codes, str):
        codes = codes.replace(",", " ").split()
    return [card(code) for code in codes]


def from_index(index: int) -> Card:
    """The card at this deck index; ValueError for anything but an int in 0..77."""
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(DECK):
        raise CardCodeError(f"{index!r} is not a card index (0..77)")
    return DECK[index]


def codes(hand: Iterable[Card]) -> list[str]:
    """Machine codes of some cards, in the given order."""
    return [c.code for c in hand]


def half_points(hand: Iterable[Card]) -> int:
    """The points of some cards, in half points (see the module's docstring).

    >>> half_points(cards("KH QS NC JD 5S T1"))  # 4.5 + 3.5 + 2.5 + 1.5 + 0.5 + 4.5 points
    34
    >>> TOTAL_HALF_POINTS
    182
    """
    return sum(c.half_points for c in hand)


def bouts(hand: Iterable[Card]) -> int:
    """How many of the three bouts (the Petit, the 21, the Excuse) are among these cards.

    >>> bouts(cards("T1 T2 T21 EX"))
    3
    """
    return sum(1 for c in hand if c.is_bout)


def trumps(hand: Iterable[Card]) -> list[Card]:
    return [c for c in hand if c.is_trump]


def sort_hand(hand: Iterable[Card]) -> list[Card]:
    """A hand the way a player holds it: trumps high to low, then suits alternating colours, the
    Excuse last.

    Suits are ordered spades, hearts, clubs, diamonds so that black and red alternate; within a
    suit from the king down.

    >>> codes(sort_hand(cards("EX 3D KS T1 10H T21 QS")))
    ['T21', 'T1', 'KS', 'QS', '10H', '3D', 'EX']
    """
    suit_order = {
        Suit.TRUMPS: 0,
        Suit.SPADES: 1,
        Suit.HEARTS: 2,
        Suit.CLUBS: 3,
        Suit.DIAMONDS: 4,
        Suit.EXCUSE: 5,
    }
    return sorted(hand, key=lambda c: (suit_order[c.suit], -c.rank))
