"""The local API's dispatcher, without a daemon: every ``op`` is in one table, each request's
fields are read into a typed request or refused with a clear error — before any handler runs —
and only an ``event…`` request's EventError is a refusal rather than a bug."""

from __future__ import annotations

import asyncio
import doctest
from types import SimpleNamespace
from typing import Any, cast

import pytest

from protocol.event.event import FFT_FORMATS, EventError
from protocol.event.movement import Movement
from protocol.rules.cards import card
from protocol.rules.deal import AnnounceChelem, Bid, Call, Ecart, Play, ShowPoignee
from protocol.rules.variants import Contract
from tarotd import requests
from tarotd.answers import ROUTES, Answers
from tarotd.api import ApiError
from tarotd.requests import (
    EventNamed,
    HostEventBots,
    JoinTable,
    OpenTable,
    parse_event_join,
    parse_join,
    parse_move,
    parse_open,
    parse_open_event,
)

#: Every request the local API answered before it had a table of them (client/, tests/).
OPS = {
    *("status", "scores", "state", "next", "regroup", "tables", "open", "join", "leave"),
    *("unlock", "bot", "bid", "call", "ecart", "chelem", "poignee", "play", "events"),
    *("event-open", "event-join", "event-start", "event-close", "event-withdraw"),
    *("event-substitute", "event", "event-record"),
}


class Untouched:
    """A daemon part that fails the test if a handler reaches it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the handler ran: it reached {name!r}")


def answer(request: dict[str, Any], daemon: object | None = None) -> Any:
    answers = Answers(cast(Any, daemon if daemon is not None else Untouched()))
    return asyncio.run(answers(request))


def test_the_examples_of_the_requests_module_run() -> None:
    failed, tried = doctest.testmod(requests)
    assert tried >= 3 and failed == 0


def test_every_op_is_in_the_one_table_and_an_unknown_one_is_refused_by_name() -> None:
    assert set(ROUTES) == OPS
    with pytest.raises(ApiError, match="unknown request 'deal'"):
        answer({"op": "deal"})
    with pytest.raises(ApiError, match="unknown request 'eventx'"):
        answer({"op": "eventx", "event": "ab"})


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        ({"op": "open", "name": 7}, '"name" is the table\'s name'),
        ({"op": "open", "name": "x" * 65}, '"name" is the table\'s name'),
        ({"op": "open", "name": "a\nb"}, '"name" is the table\'s name'),
        ({"op": "open", "seats": True}, '"seats" is the number of seats'),
        ({"op": "open", "seats": "5"}, '"seats" is the number of seats'),
        ({"op": "join", "table": "zz"}, '"table" is a table id in hexadecimal'),
        ({"op": "join", "table": "ab", "invite": 12}, '"invite" is the table\'s invite code'),
        ({"op": "play", "card": "ZZ"}, "'ZZ' is not a card"),
        ({"op": "call"}, "'' is not a card"),
        ({"op": "bid", "contract": "grande"}, "unknown contract 'grande'"),
        ({"op": "ecart", "cards": "KH QH"}, '"cards" is a list of card codes'),
        ({"op": "poignee", "cards": ["T21", 21]}, '"cards" is a list of card codes'),
        ({"op": "event-join", "event": "ab", "bots": "3"}, '"bots" is a number'),
        ({"op": "event-join", "event": "ab", "bots": 3, "level": None}, '"level" a bot'),
        ({"op": "event-open", "name": "x", "format": "swiss"}, "format 'swiss': one of"),
        ({"op": "event-open", "rounds": 3, "deals": 4}, '"name", and "format"'),
        ({"op": "event-open", "name": "x", "rounds": 3}, '"name", and "format"'),
        ({"op": "event-open", "name": "x", "rounds": 3, "deals": 4, "tables": 4.0}, '"tables"'),
        ({"op": "event-open", "name": "x", "rounds": 3, "deals": 4, "movement": "?"}, '"tables"'),
    ],
)
def test_a_malformed_request_is_refused_before_any_handler_runs(
    request_: dict[str, Any], said: str
) -> None:
    with pytest.raises(ApiError) as refused:
        answer(request_)
    assert said in str(refused.value) and str(refused.value)


def test_the_fields_are_read_into_typed_requests_with_their_defaults() -> None:
    assert parse_open({"op": "open"}) == OpenTable("", 5)
    assert parse_join({"op": "join", "table": "0aff"}) == JoinTable(b"\x0a\xff", None)
    assert parse_join({"op": "join", "table": "0a", "invite": "k7"}).invite == "k7"
    assert parse_event_join({"op": "event-join", "event": "ab"}) == EventNamed("ab")
    assert parse_event_join({"op": "event-join", "event": "ab", "bots": 2}) == HostEventBots(
        "ab", 2, None
    )
    fft = next(iter(FFT_FORMATS))
    opened = parse_open_event({"op": "event-open", "name": "n", "format": fft})
    assert (opened.rounds, opened.deals) == FFT_FORMATS[fft]
    assert (opened.tables, opened.movement) == (4, Movement.FFT)
    best = parse_open_event({"op": "event-open", "name": "n", "format": fft, "movement": "best"})
    assert best.movement is Movement.BEST


def test_a_move_becomes_the_action_of_the_seat_it_is_played_at() -> None:
    kh, t21 = card("KH"), card("T21")
    assert parse_move("bid", {}).action(1) == Bid(1, None)
    assert parse_move("bid", {"contract": "pass"}).action(1) == Bid(1, None)
    assert parse_move("bid", {"contract": "garde"}).action(1) == Bid(1, Contract.GARDE)
    assert parse_move("call", {"card": "KH"}).action(0) == Call(0, kh)
    assert parse_move("play", {"card": "kh"}).action(3) == Play(3, kh)
    assert parse_move("ecart", {"cards": ["KH", "T21"]}).action(2) == Ecart(2, (kh, t21))
    assert parse_move("poignee", {"cards": ["T21"]}).action(2) == ShowPoignee(2, (t21,))
    assert parse_move("chelem", {"announce": True}).action(4) == AnnounceChelem(4, True)
    assert parse_move("chelem", {"announce": "yes"}).action(4) == AnnounceChelem(4, False)


def test_only_an_event_request_turns_an_event_error_into_a_refusal() -> None:
    def listing() -> Any:
        raise EventError("no event here")

    def status() -> Any:
        raise EventError("a bug")

    daemon = SimpleNamespace(
        event_glue=SimpleNamespace(listing=listing), peers=SimpleNamespace(status=status)
    )
    with pytest.raises(ApiError, match="no event here"):
        answer({"op": "events"}, daemon)
    with pytest.raises(EventError):  # the API server logs it as the bug it is
        answer({"op": "status"}, daemon)


def test_state_before_any_table_says_only_so() -> None:
    daemon = SimpleNamespace(hosting=SimpleNamespace(current=lambda: None))
    assert answer({"op": "state"}, daemon) == {"table": None}
