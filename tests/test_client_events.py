"""The daemon's event lines are typed once at the client's edge (:mod:`client.events`): every
kind a seat's machine reports parses, with the daemon's own keys; an unknown kind or a
malformed field is dropped with a log line and never reaches the screen."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

from client.events import (
    BidHeard,
    CardPlayed,
    Disconnected,
    Paused,
    PoigneeShown,
    Resumed,
    TrickTaken,
    VerdictReached,
    parse_event,
)
from client.simulation import play_one_deal, sim_table
from client.tui.i18n import Texts
from client.tui.model import Model
from protocol.replication.machine import Event, SeatMachine


def daemon_line(seat: int, event: Event) -> dict[str, Any]:
    """The line the daemon writes for an event of its player's seat (``tarotd/daemon.py``)."""
    return {"event": event.kind, "seat": seat, **event.data}


def deal_lines() -> list[dict[str, Any]]:
    """The lines of a whole simulated deal at five (a seed with a call, a chien, an écart and
    a poignée), as each seat's daemon writes them."""
    lines: list[dict[str, Any]] = []

    def watch(machine: SeatMachine) -> None:
        lines.extend(daemon_line(machine.seat, e) for e in machine.take_events())

    table, identities = sim_table(5, 1)
    play_one_deal(table, identities, 0, 0, 0, ["basic"], watch=watch)
    return lines


#: Lines the deal above need not show (a verdict, a fault), as the daemon writes them.
RARE_LINES = [
    {"event": "poignee", "seat": 3, "cards": ["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"]},
    {"event": "verdict", "seat": 0, "culprit": 2, "step": "play", "rule": "not its card"},
    {"event": "verdict", "seat": 0, "culprit": None, "step": "lock", "rule": "a proof fails"},
    {"event": "paused", "fault": "disk-full"},
    {"event": "resumed"},
    {"event": "disconnected"},
]


def as_json(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def test_every_line_of_whole_deals_is_typed_with_the_daemons_keys() -> None:
    lines = deal_lines() + RARE_LINES
    kinds = set()
    for line in lines:
        event = parse_event(line)
        assert event is not None, line
        kinds.add(line["event"])
        for field in dataclasses.fields(event):
            assert as_json(getattr(event, field.name)) == line[field.name], (line, field.name)
    deal = {"hand", "bid", "call", "chien", "ecart", "chelem", "poignee", "play", "trick", "score"}
    assert {line["event"] for line in lines[: -len(RARE_LINES)]} == deal
    assert parse_event(RARE_LINES[0]) == PoigneeShown(
        3, ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8")
    )
    assert parse_event(RARE_LINES[2]) == VerdictReached(0, None, "lock", "a proof fails")
    assert [parse_event(line) for line in RARE_LINES[3:]] == [
        Paused("disk-full"),
        Resumed(),
        Disconnected(),
    ]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ({"event": "coffee", "seat": 0}, "unknown kind"),
        ({"seat": 0, "card": "KH"}, "unknown kind"),
        ({"event": "play", "seat": "2", "card": "KH"}, "seat is not a whole number"),
        ({"event": "play", "seat": True, "card": "KH"}, "seat is not a whole number"),
        ({"event": "play", "seat": 2, "card": "XX"}, "card is not a card code"),
        ({"event": "play", "seat": 2}, "card is not a string"),
        ({"event": "trick", "seat": 0, "winner": 1, "cards": "KH"}, "cards is not a list"),
        ({"event": "trick", "seat": 0, "winner": 1, "cards": ["KH", 7]}, "cards is not a str"),
        ({"event": "bid", "seat": 1, "contract": 2}, "contract is not a string"),
        ({"event": "chelem", "seat": 1, "announce": "yes"}, "announce is not true or false"),
        ({"event": "score", "seat": 1, "scores": [1, "2"]}, "scores is not a whole number"),
    ],
)
def test_a_malformed_line_is_dropped_with_a_log_line_naming_it(
    line: dict[str, Any], said: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="client.events"):
        assert parse_event(line) is None
    assert said in caplog.text
    assert "KH" not in caplog.text  # the log names the field, never a card


def test_the_screen_keeps_the_trick_of_its_own_seat() -> None:
    model = Model(Texts("en"), Path("home"), state={"seat": 2})
    model.note(CardPlayed(2, "KH"))
    model.note(TrickTaken(seat=1, winner=0, cards=("KH",)))
    assert model.last_trick is None
    trick = TrickTaken(seat=2, winner=0, cards=("7H", "KH", "2H", "3H"))
    model.note(trick)
    model.note(BidHeard(0, None))
    assert model.last_trick == trick
