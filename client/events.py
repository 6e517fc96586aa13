"""The daemon's event lines, typed once at the client's edge.

The local API streams ``{"event": kind, "seat": …, …}`` lines (``tarotd/api.py``); their keys
are a contract with the daemon and stay as they are.  :func:`parse_event` turns each line
into a frozen dataclass of its kind, so that the screens read fields, not dict keys.  An
unknown kind or a malformed field is refused here with a log line and never reaches a
screen: a daemon newer or broken cannot crash the client.

>>> parse_event({"event": "play", "seat": 2, "card": "T21"})
CardPlayed(seat=2, card='T21')
>>> parse_event({"event": "trick", "seat": 0, "winner": 1, "cards": ["7H", "KH", "2H"]})
TrickTaken(seat=0, winner=1, cards=('7H', 'KH', '2H'))
>>> parse_event({"event": "play", "seat": 2, "card": "ZZ"}) is None  # logged, then dropped
True
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from protocol.rules.cards import CardCodeError, card

log = logging.getLogger(__name__)
#: The client's stderr is the player's screen: a refused event is logged only where the
#: program configured logging, never written over the table.
log.addHandler(logging.NullHandler())


class MalformedEvent(ValueError):
    """A field of an event line is missing or of the wrong type; the message names it."""


@dataclass(frozen=True)
class HandDealt:
    """Our seat's hand as dealt."""

    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class BidHeard:
    """A seat's bid: a contract's code (``garde-sans``) or None for a pass."""

    seat: int
    contract: str | None


@dataclass(frozen=True)
class CardCalled:
    """The card the taker calls at five."""

    seat: int
    card: str


@dataclass(frozen=True)
class ChienTurned:
    """The chien, face up for everyone (Petite and Garde)."""

    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class EcartMade:
    """The taker's écart: only the trumps in it are shown."""

    seat: int
    shown: tuple[str, ...]


@dataclass(frozen=True)
class ChelemAnnounced:
    """The taker's answer to the chelem: announced or not."""

    seat: int
    announce: bool


@dataclass(frozen=True)
class PoigneeShown:
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class CardPlayed:
    seat: int
    card: str


@dataclass(frozen=True)
class TrickTaken:
    """A trick fell: ``seat`` is ours, ``winner`` the seat that takes it."""

    seat: int
    winner: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class DealScored:
    """The deal's score as the audit gives it, one per seat."""

    seat: int
    scores: tuple[int, ...]


@dataclass(frozen=True)
class VerdictReached:
    """The audit found a broken rule: by ``culprit`` (None: not attributed yet), at ``step``."""

    seat: int
    culprit: int | None
    step: str
    rule: str


@dataclass(frozen=True)
class Paused:
    """The daemon paused our tables on a local fault (``disk-full``, ``disk-error``, …)."""

    fault: str


@dataclass(frozen=True)
class Resumed:
    """The fault is over: the tables go on."""


@dataclass(frozen=True)
class Disconnected:
    """The connection to the daemon is gone (said by the client, not the daemon)."""


ScreenEvent = (
    HandDealt
    | BidHeard
    | CardCalled
    | ChienTurned
    | EcartMade
    | ChelemAnnounced
    | PoigneeShown
    | CardPlayed
    | TrickTaken
    | DealScored
    | VerdictReached
    | Paused
    | Resumed
    | Disconnected
)


def _int(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedEvent(f"{key} is not a whole number")
    return value


def _optional_int(raw: Mapping[str, Any], key: str) -> int | None:
    return None if raw.get(key) is None else _int(raw, key)


def _str(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise MalformedEvent(f"{key} is not a string")
    return value


def _optional_str(raw: Mapping[str, Any], key: str) -> str | None:
    return None if raw.get(key) is None else _str(raw, key)


def _bool(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key)
    if not isinstance(value, bool):
        raise MalformedEvent(f"{key} is not true or false")
    return value


def _card(raw: Mapping[str, Any], key: str) -> str:
    try:
        return card(_str(raw, key)).code
    except CardCodeError:
        raise MalformedEvent(f"{key} is not a card code") from None


def _cards(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = raw.get(key)
    if not isinstance(values, list):
        raise MalformedEvent(f"{key} is not a list of card codes")
    return tuple(_card({key: value}, key) for value in values)


def _ints(raw: Mapping[str, Any], key: str) -> tuple[int, ...]:
    values = raw.get(key)
    if not isinstance(values, list):
        raise MalformedEvent(f"{key} is not a list of whole numbers")
    return tuple(_int({key: value}, key) for value in values)


#: Each kind of event line, by its ``event`` key, and how its fields are read.
_PARSERS: dict[str, Callable[[Mapping[str, Any]], ScreenEvent]] = {
    "hand": lambda r: HandDealt(_int(r, "seat"), _cards(r, "cards")),
    "bid": lambda r: BidHeard(_int(r, "seat"), _optional_str(r, "contract")),
    "call": lambda r: CardCalled(_int(r, "seat"), _card(r, "card")),
    "chien": lambda r: ChienTurned(_int(r, "seat"), _cards(r, "cards")),
    "ecart": lambda r: EcartMade(_int(r, "seat"), _cards(r, "shown")),
    "chelem": lambda r: ChelemAnnounced(_int(r, "seat"), _bool(r, "announce")),
    "poignee": lambda r: PoigneeShown(_int(r, "seat"), _cards(r, "cards")),
    "play": lambda r: CardPlayed(_int(r, "seat"), _card(r, "card")),
    "trick": lambda r: TrickTaken(_int(r, "seat"), _int(r, "winner"), _cards(r, "cards")),
    "score": lambda r: DealScored(_int(r, "seat"), _ints(r, "scores")),
    "verdict": lambda r: VerdictReached(
        _int(r, "seat"), _optional_int(r, "culprit"), _str(r, "step"), _str(r, "rule")
    ),
    "paused": lambda r: Paused(_str(r, "fault")),
    "resumed": lambda r: Resumed(),
    "disconnected": lambda r: Disconnected(),
}


def parse_event(raw: Mapping[str, Any]) -> ScreenEvent | None:
    """The typed event of one line from the daemon, or None (and a log line) if the kind is
    unknown or a field malformed.  The log names the kind and the field, never a value: an
    event may hold our hand."""
    kind = raw.get("event")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        log.warning("an event of unknown kind from the daemon was dropped: %.40r", kind)
        return None
    try:
        return parser(raw)
    except MalformedEvent as error:
        log.warning("a %s event from the daemon was dropped: %s", kind, error)
        return None
