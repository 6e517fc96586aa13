"""The local API's dispatcher: one table of every ``op`` — the parser that reads its fields
into a typed request (:mod:`tarotd.requests`) and the handler that answers it.

h11's way: every request is looked up in :data:`ROUTES`, an ``op`` not there is refused by
name, and a handler never sees a field it would have to doubt.  A refusal is an
:class:`~tarotd.api.ApiError`: a :class:`~protocol.refusal.Refusal` code and its parameters,
which the client translates, and an English text (:func:`refused`).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from protocol.event.event import EventError
from protocol.localapi import StateDocument, Status, TableOffer
from protocol.refusal import Refusal, Refused, rule_params
from protocol.rules.rules import RuleError
from tarotd.api import ApiError
from tarotd.guesses import Answer
from tarotd.home import load_or_create_identity
from tarotd.requests import (
    Bare,
    EventNamed,
    Fields,
    HostEventBots,
    JoinTable,
    Move,
    MoveOp,
    OpenEvent,
    OpenTable,
    SubstitutePlayer,
    WithdrawPlayer,
    parse_bare,
    parse_event,
    parse_event_join,
    parse_join,
    parse_move,
    parse_open,
    parse_open_event,
    parse_substitute,
    parse_withdraw,
)
from tarotd.runner import TableRunner
from tarotd.views import earlier_state, scores_document, seat_state

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

R = TypeVar("R")


def bot_name(name: str, k: int) -> str:
    """The name shown for the ``k``-th bot seat (from 1) of the daemon called ``name``."""
    return f"{name}-bot{k}"


class Answers:
    """The handlers of the local API's requests, each taking its typed request."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    async def __call__(self, request: Fields) -> Any:
        """Answer one request (the :class:`~tarotd.api.ApiServer`'s handler)."""
        op = request["op"]
        route = ROUTES.get(op)
        if route is None:
            raise ApiError(f"unknown request {op!r}", Refusal.UNKNOWN_REQUEST, op=op)
        try:
            return await route.answer(self, route.parse(request))
        except route.refused as error:
            raise refused(error) from None

    # --- The table ----------------------------------------------------------------------

    async def status(self, _: Bare) -> Status:
        return self.daemon.peers.status()

    async def scores(self, _: Bare) -> Any:
        runner = self.daemon.hosting.current()
        return scores_document(runner) if runner else None

    async def state(self, _: Bare) -> StateDocument:
        daemon = self.daemon
        runner = daemon.hosting.current()
        if runner is None:
            return {"table": None}
        away = daemon.peers.away(runner)
        return {
            **seat_state(runner, daemon.identity.public_key, away),
            "paused": daemon.hosting.pause_said(runner),
            "unsettled": runner.unsettled,
            "rows_awaited": daemon.hosting.rows_awaited(runner),
            "earlier": earlier_state(
                list(daemon.hosting.runners.values()), runner, daemon.identity.public_key
            ),
        }

    async def move(self, request: Move) -> dict[str, Any]:
        """A decision of the player's own seat."""
        runner = self._at_table()
        seat = self.daemon.hosting.own_seat(runner)
        if seat is None:
            raise ApiError("this daemon has no seat of its own at the table", Refusal.NO_OWN_SEAT)
        if seat in runner.bots:
            raise ApiError(
                "this daemon's seat is played by a bot (tarotd --bot): it takes no moves from a "
                "client",
                Refusal.SEAT_IS_A_BOT,
            )
        act = functools.partial(runner.act, seat, request.action(seat))
        try:
            moved = self.daemon.hosting.drive(runner, act)
        except ValueError as error:  # a RuleError among them
            raise refused(error) from None
        self._refuse_if_paused(runner, moved)
        return {"done": request.op.value}

    async def next_deal(self, _: Bare) -> dict[str, Any]:
        runner = self._at_table()
        try:
            moved = self.daemon.hosting.drive(runner, runner.next_deal)
        except ValueError as error:
            raise refused(error) from None
        self._refuse_if_paused(runner, moved)
        return {"deal": runner.deal_number}

    async def regroup(self, _: Bare) -> dict[str, Any]:
        return self.daemon.regroup.regroup()

    def _at_table(self) -> TableRunner:
        runner = self.daemon.hosting.current()
        if runner is None:
            raise ApiError("you are not at a table yet: open or join one", Refusal.NOT_AT_TABLE)
        return runner

    def _refuse_if_paused(self, runner: TableRunner, moved: bool) -> None:
        if not moved:
            raise ApiError(self.daemon.hosting.paused[runner.table_id].refusal, Refusal.PAUSED)

    # --- The lobby ------------------------------------------------------------------------

    async def tables(self, _: Bare) -> list[TableOffer]:
        lobby = self.daemon.lobby
        return [
            {
                "table": o.table_id.hex(),
                "name": o.name,
                "seats": o.seats,
                "members": [m.name for m in o.members],
                "bots": [m.bot for m in o.members],
                "state": o.state.value,
                "invite": o.invite.shown if o.invite else None,
                "silence": o.silence.value,
                "verified": lobby.verified(o),
                "refused": o.refused,
            }
            for o in lobby.tables()
        ]

    async def open(self, request: OpenTable) -> dict[str, Any]:
        self._room_for_a_table()
        daemon = self.daemon
        try:
            daemon.send_lobby(daemon.lobby.open(request.name, request.seats))
        except ValueError as error:
            raise refused(error) from None
        return {"opened": True}

    async def join(self, request: JoinTable) -> dict[str, Any]:
        """``join``: at once for a table we trust; with an invite code, once the table's opener
        answered our proof of it (a run of CPace, :mod:`protocol.pake`) — a wrong code is
        refused as before, by the opener now — or ``--timeout`` passed."""
        daemon = self.daemon
        self._room_for_a_table()
        daemon.peers.learn_keys()
        try:
            daemon.send_lobby(daemon.lobby.join(request.table, request.invite))
        except ValueError as error:
            raise refused(error) from None
        daemon.hosting.start_ready_tables()
        deadline = time.monotonic() + daemon.options.timeout
        while daemon.lobby.proving(request.table) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        refusal = daemon.lobby.refusal(request.table) if request.invite is not None else None
        if refusal is not None:
            offer = daemon.lobby.offers[request.table]
            why = _KNOCK_REFUSED.get(offer.refused or "", Refusal.INVITE_REFUSED)
            raise ApiError(refusal, why, table=offer.name)
        return {"joined": True}

    async def leave(self, _: Bare) -> dict[str, Any]:
        daemon = self.daemon
        try:
            daemon.send_lobby(daemon.lobby.leave())
        except ValueError as error:
            raise refused(error) from None
        return {"left": True}

    async def unlock(self, _: Bare) -> dict[str, Any]:
        """``tarot unlock``: lift every lockout of guessers of our invite codes."""
        return {"unlocked": self.daemon.lobby.unlock()}

    async def add_bot(self, _: Bare) -> dict[str, Any]:
        """One more bot seat, hosted here, joins the table we are at (before it starts)."""
        daemon = self.daemon
        try:
            daemon.lobby.filling()
        except ValueError as error:
            raise refused(error) from None
        k = len(daemon.seats)
        identity = load_or_create_identity(daemon.home, f"bot-{k}")
        name = bot_name(daemon.options.name, k)
        level = daemon.options.bot or daemon.options.bot_level
        daemon.send_lobby(daemon.lobby.add_seat(identity, name, level))
        daemon.seats.append((identity, name))
        daemon.hosting.start_ready_tables()
        return {"bot": name, "level": daemon.options.bot_level}  # the client shows it by name

    def _room_for_a_table(self) -> None:
        daemon = self.daemon
        if daemon.hosting.playing() >= daemon.options.max_tables:
            raise ApiError(
                f"this daemon already plays {daemon.hosting.playing()} tables, its limit (tarotd "
                "--max-tables)",
                Refusal.MAX_TABLES,
                playing=daemon.hosting.playing(),
            )

    # --- Events (tarotd/event_glue.py) --------------------------------------------------------

    async def events(self, _: Bare) -> Any:
        return self.daemon.event_glue.listing()

    async def open_event(self, request: OpenEvent) -> dict[str, Any]:
        return self.daemon.event_glue.open(request)

    async def join_event(self, request: EventNamed | HostEventBots) -> dict[str, Any]:
        glue = self.daemon.event_glue
        if isinstance(request, HostEventBots):
            return await glue.host_bots(request)
        return glue.join(request)

    async def start_event(self, request: EventNamed) -> dict[str, Any]:
        return self.daemon.event_glue.start(request)

    async def close_event(self, request: EventNamed) -> dict[str, Any]:
        return self.daemon.event_glue.close(request)

    async def withdraw(self, request: WithdrawPlayer) -> dict[str, Any]:
        return self.daemon.event_glue.withdraw(request)

    async def substitute(self, request: SubstitutePlayer) -> dict[str, Any]:
        return self.daemon.event_glue.substitute(request)

    async def event(self, request: EventNamed) -> Any:
        return self.daemon.event_glue.summary(request)

    async def event_record(self, request: EventNamed) -> dict[str, Any]:
        return self.daemon.event_glue.record(request)


def refused(error: ValueError) -> ApiError:
    """``error`` as the player's refusal: by the rules engine's code, by its own, or — a
    refusal no one gave a code yet — by its text alone."""
    if isinstance(error, RuleError):
        return ApiError(str(error), Refusal.RULE, **rule_params(error))
    if isinstance(error, Refused):
        return ApiError.of(error)
    return ApiError(str(error))


#: What the opener of a table answered to our invite code (``Offer.refused``), as a refusal;
#: any other answer ("code", or none in time) is a code refused.
_KNOCK_REFUSED: Final = {
    Answer.WAIT.value: Refusal.INVITE_WAIT,
    Answer.LOCKED.value: Refusal.INVITE_LOCKED,
}


@dataclass(frozen=True)
class Route(Generic[R]):
    """An ``op``: how its fields are read, who answers it, and which exceptions of the
    handler are refusals for the player (the others are bugs, logged)."""

    parse: Callable[[Fields], R]
    answer: Callable[[Answers, R], Awaitable[Any]]
    refused: tuple[type[ValueError], ...] = ()


def _move(op: MoveOp) -> Route[Move]:
    return Route(functools.partial(parse_move, op), Answers.move)


#: Every request of the local API, by ``op``.
ROUTES: Final[Mapping[str, Route[Any]]] = MappingProxyType(
    {
        "status": Route(parse_bare, Answers.status),
        "scores": Route(parse_bare, Answers.scores),
        "state": Route(parse_bare, Answers.state),
        "next": Route(parse_bare, Answers.next_deal),
        "regroup": Route(parse_bare, Answers.regroup),
        **{op.value: _move(op) for op in MoveOp},
        "tables": Route(parse_bare, Answers.tables),
        "open": Route(parse_open, Answers.open),
        "join": Route(parse_join, Answers.join),
        "leave": Route(parse_bare, Answers.leave),
        "unlock": Route(parse_bare, Answers.unlock),
        "bot": Route(parse_bare, Answers.add_bot),
        "events": Route(parse_bare, Answers.events, (EventError,)),
        "event-open": Route(parse_open_event, Answers.open_event, (EventError,)),
        "event-join": Route(parse_event_join, Answers.join_event, (EventError,)),
        "event-start": Route(parse_event, Answers.start_event, (EventError,)),
        "event-close": Route(parse_event, Answers.close_event, (EventError,)),
        "event-withdraw": Route(parse_withdraw, Answers.withdraw, (EventError,)),
        "event-substitute": Route(parse_substitute, Answers.substitute, (EventError,)),
        "event": Route(parse_event, Answers.event, (EventError,)),
        "event-record": Route(parse_event, Answers.event_record, (EventError,)),
    }
)
