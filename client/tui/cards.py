"""A card on screen: its short symbol in the player's language and the colour of its suit."""

from __future__ import annotations

from collections.abc import Iterable

from prompt_toolkit.formatted_text import StyleAndTextTuples

from protocol.rules.cards import Suit, card

_STYLES = {
    Suit.HEARTS: "class:card.red",
    Suit.DIAMONDS: "class:card.red",
    Suit.SPADES: "class:card.black",
    Suit.CLUBS: "class:card.black",
    Suit.TRUMPS: "class:card.trump",
    Suit.EXCUSE: "class:card.excuse",
}


def symbol(code: str, lang: str) -> str:
    """``R♥`` / ``K♥``, ``21`` for a trump, ``★`` for the Excuse."""
    return card(code).symbol(lang)


def style(code: str) -> str:
    return _STYLES[card(code).suit]


def fragments(codes: Iterable[str], lang: str, separator: str = " ") -> StyleAndTextTuples:
    """Several cards in their colours, ``separator`` between them."""
    out: StyleAndTextTuples = []
    for i, code in enumerate(codes):
        if i:
            out.append(("", separator))
        out.append((style(code), symbol(code, lang)))
    return out


def plain(codes: Iterable[str], lang: str) -> str:
    """Several cards as plain text (the log, messages)."""
    return " ".join(symbol(code, lang) for code in codes)
