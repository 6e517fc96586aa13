"""The local API's requests, typed: what each ``op`` carries, read from the untrusted JSON.

A request is one JSON object from a program of the daemon's own user, which may be a script
with a typo or a fuzzer: every field a request takes is checked here, once, and turned into a
typed value — a malformed one refused with an :class:`~tarotd.api.ApiError`
(:attr:`~protocol.refusal.Refusal.MALFORMED`) that names the field and says what it should be,
before anything is looked up or moved.  The handlers
(:mod:`tarotd.answers`) then take typed requests only.  Pure: no daemon, no socket.

>>> parse_move("play", {"op": "play", "card": "KH"}).action(2)
Play(seat=2, card=Card(KH))
>>> parse_move("bid", {"op": "bid", "contract": "garde"}).action(1)
Bid(seat=1, contract=<Contract.GARDE: 2>)
>>> parse_open({"op": "open", "seats": "five"})
Traceback (most recent call last):
...
tarotd.api.ApiError: "seats" is the number of seats: 3, 4 or 5
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocol.event.event import FFT_FORMATS
from protocol.event.movement import Movement
from protocol.refusal import Refusal
from protocol.rules.cards import Card, card, cards
from protocol.rules.deal import Action, AnnounceChelem, Bid, Call, Ecart, Play, ShowPoignee
from protocol.rules.variants import Contract
from tarotd.api import ApiError

#: A request as the API server hands it over: a JSON object with a string ``op``.
Fields = Mapping[str, Any]


class MoveOp(enum.StrEnum):
    """The requests that are a decision of the player's own seat."""

    BID = "bid"
    CALL = "call"
    ECART = "ecart"
    CHELEM = "chelem"
    POIGNEE = "poignee"
    PLAY = "play"


@dataclass(frozen=True)
class Bare:
    """A request with no field to read (``status``, ``state``, ``leave``…)."""


BARE = Bare()


@dataclass(frozen=True)
class OpenTable:
    """``open``: a table of ``seats`` seats offered in the lobby under ``name``."""

    name: str
    seats: int


@dataclass(frozen=True)
class JoinTable:
    """``join``: a table the lobby lists, with its invite code if we are not trusted there."""

    table: bytes
    invite: str | None


@dataclass(frozen=True)
class Move:
    """A decision of the player's seat, its cards and contract read already: only the seat,
    known once the table is, is missing (:meth:`action`)."""

    op: MoveOp
    contract: Contract | None = None  #: ``bid``: None is a pass
    card: Card | None = None  #: ``call`` and ``play``
    cards: tuple[Card, ...] = ()  #: ``ecart`` and ``poignee``
    announce: bool = False  #: ``chelem``

    def action(self, seat: int) -> Action:
        """The game action of this move at ``seat``."""
        if self.op is MoveOp.BID:
            return Bid(seat, self.contract)
        if self.op is MoveOp.ECART:
            return Ecart(seat, self.cards)
        if self.op is MoveOp.CHELEM:
            return AnnounceChelem(seat, self.announce)
        if self.op is MoveOp.POIGNEE:
            return ShowPoignee(seat, self.cards)
        assert self.card is not None  # parse_move reads one for the other two
        return Call(seat, self.card) if self.op is MoveOp.CALL else Play(seat, self.card)


@dataclass(frozen=True)
class EventNamed:
    """An ``event…`` request about one event: its id, or the start of it, as listed."""

    event: str


@dataclass(frozen=True)
class HostEventBots:
    """``event-join`` with ``bots``: that many bots hosted here register with the event,
    at ``level`` (None: the daemon's ``--bot-level``)."""

    event: str
    count: int
    level: str | None


@dataclass(frozen=True)
class WithdrawPlayer:
    """``event-withdraw``: a player of the event withdrawn by its organiser."""

    event: str
    player: str


@dataclass(frozen=True)
class SubstitutePlayer:
    """``event-substitute``: ``newcomer`` takes ``player``'s place in the event."""

    event: str
    newcomer: str
    player: str


@dataclass(frozen=True)
class OpenEvent:
    """``event-open``: an event organised here."""

    name: str
    rounds: int
    deals: int
    tables: int
    movement: Movement


def malformed(message: str, field: str) -> ApiError:
    """The refusal of a request whose ``field`` is not what ``message`` says it should be."""
    return ApiError(message, Refusal.MALFORMED, field=field)


def parse_bare(request: Fields) -> Bare:
    """A request whose other fields, if any, are ignored."""
    return BARE


def parse_open(request: Fields) -> OpenTable:
    name, seats = request.get("name", ""), request.get("seats", 5)
    if not isinstance(name, str) or len(name) > 64 or not name.isprintable():
        raise malformed('"name" is the table\'s name: at most 64 printable characters', "name")
    if type(seats) is not int:
        raise malformed('"seats" is the number of seats: 3, 4 or 5', "seats")
    return OpenTable(name, seats)


def parse_join(request: Fields) -> JoinTable:
    try:
        table = bytes.fromhex(str(request.get("table", "")))
    except ValueError:
        raise malformed(
            '"table" is a table id in hexadecimal, as "tables" lists it', "table"
        ) from None
    invite = request.get("invite")
    if invite is not None and not isinstance(invite, str):
        raise malformed(
            "\"invite\" is the table's invite code, as its opener's screen shows it", "invite"
        )
    return JoinTable(table, invite)


def parse_move(op: str, request: Fields) -> Move:
    """The move ``op`` asks for; ApiError for a bad card or contract, with the rules' words."""
    move = MoveOp(op)
    try:
        if move is MoveOp.BID:
            contract = request.get("contract")
            code = None if contract in (None, "pass") else Contract.from_code(str(contract))
            return Move(move, contract=code)
        if move in (MoveOp.CALL, MoveOp.PLAY):
            return Move(move, card=card(str(request.get("card", ""))))
        if move in (MoveOp.ECART, MoveOp.POIGNEE):
            return Move(move, cards=tuple(cards(_codes(request))))
        return Move(move, announce=request.get("announce") is True)
    except ValueError as error:
        raise malformed(str(error), _FIELDS[move]) from None


#: The field a move reads.
_FIELDS = {
    MoveOp.BID: "contract",
    MoveOp.CALL: "card",
    MoveOp.PLAY: "card",
    MoveOp.ECART: "cards",
    MoveOp.POIGNEE: "cards",
    MoveOp.CHELEM: "announce",
}


def _codes(request: Fields) -> list[str]:
    value = request.get("cards", [])
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise ValueError('"cards" is a list of card codes, such as ["KH", "T21"]')
    return value


def parse_event(request: Fields) -> EventNamed:
    return EventNamed(str(request.get("event", "")))


def parse_event_join(request: Fields) -> EventNamed | HostEventBots:
    """``event-join``: our player registers — or, with ``bots``, bots hosted here do."""
    count = request.get("bots")
    if count is None:
        return parse_event(request)
    level = request.get("level")
    if type(count) is not int or ("level" in request and not isinstance(level, str)):
        raise malformed('"bots" is a number, "level" a bot\'s level', "bots, level")
    return HostEventBots(str(request.get("event", "")), count, level)


def parse_withdraw(request: Fields) -> WithdrawPlayer:
    return WithdrawPlayer(str(request.get("event", "")), str(request.get("player", "")))


def parse_substitute(request: Fields) -> SubstitutePlayer:
    return SubstitutePlayer(
        str(request.get("event", "")),
        str(request.get("newcomer", "")),
        str(request.get("player", "")),
    )


def parse_open_event(request: Fields) -> OpenEvent:
    """``name``, and ``format`` (an FFT one) or ``rounds`` and ``deals``; ``tables`` (4 or 5
    a table) and ``movement``."""
    name, rounds, deals = request.get("name"), request.get("rounds"), request.get("deals")
    fmt = request.get("format")
    if isinstance(fmt, str):
        if fmt not in FFT_FORMATS:
            raise malformed(f"format {fmt!r}: one of {', '.join(FFT_FORMATS)}", "format")
        rounds, deals = FFT_FORMATS[fmt]
    if not isinstance(name, str) or type(rounds) is not int or type(deals) is not int:
        raise malformed(
            '"name", and "format" or "rounds" and "deals", give the event',
            "name, format, rounds, deals",
        )
    size, movement = request.get("tables", 4), request.get("movement", Movement.FFT.value)
    moves = {m.value: m for m in Movement} | {"best": Movement.BEST}
    if type(size) is not int or movement not in moves:
        raise malformed(
            f'"tables" is 4 or 5, "movement" one of {", ".join(moves)}', "tables, movement"
        )
    return OpenEvent(name, rounds, deals, size, moves[movement])
