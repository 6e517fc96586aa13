"""Tonight's event, not last week's (issue 37, finding 2): the daemon lists its events in the
order it took them up, restarts included; the client's event panel shows the one being played,
else the newest; the lobby's detail block shows the event under the cursor; an id that several
events start with names them all.  Without a daemon: the desk and the store in memory."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text
from test_tui_app import _event_summary

from client.tui.app import tonight
from client.tui.i18n import Texts
from client.tui.lobby import lobby_fragments
from client.tui.model import Model
from protocol.event.event import EventError
from protocol.event.movement import Movement
from protocol.replication.identity import Identity
from tarotd.event_desk import EventDesk
from tarotd.store import Store


def listed(event: str, closed: int, rounds: int, open_: int | None) -> dict[str, Any]:
    return {
        "event": event,
        "name": f"night {event}",
        "role": "player",
        "organiser": "aaaa-bbbb",
        "players": 8,
        "closed": closed,
        "rounds": rounds,
        "open": open_,
    }


def test_tonight_is_the_event_being_played_else_the_newest() -> None:
    last_week, tonight_ = listed("11", 2, 2, None), listed("22", 2, 2, None)
    assert tonight([last_week, tonight_]) is tonight_  # both over: the newest, not the first
    playing = listed("33", 0, 2, 1)
    assert tonight([last_week, playing, listed("44", 0, 3, None)])["event"] == "33"  # type: ignore[index]
    heard = {**listed("55", 0, 2, None), "role": None}
    assert tonight([heard]) is None


def test_the_daemon_lists_its_events_in_the_order_it_took_them_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = iter(bytes([n]) * 16 for n in (0x90, 0x10, 0xF0, 0x50))  # ids in no order
    monkeypatch.setattr("tarotd.event_organiser.os", SimpleNamespace(urandom=lambda n: next(ids)))
    identity = Identity.generate()
    desk = EventDesk(identity, lambda: "tcp://127.0.0.1:9999", Store(tmp_path / "d.db"))
    names = [f"night {n}" for n in range(4)]
    for name in names:
        desk.open(name, 2, 1, 4, Movement.RANDOM)
    assert [e["name"] for e in desk.listing()] == names
    again = EventDesk(identity, lambda: "tcp://127.0.0.1:9999", Store(tmp_path / "d.db"))
    again.load()  # the daemon started again: the same order, not the ids'
    assert [e["name"] for e in again.listing()] == names
    assert [e["open"] for e in again.listing()] == [None] * 4


def test_an_id_several_events_start_with_names_them(tmp_path: Path) -> None:
    desk = EventDesk(Identity.generate(), lambda: "tcp://127.0.0.1:9999", Store(tmp_path / "d.db"))
    first = desk.open("vendredi", 2, 1, 4, Movement.RANDOM).event_id
    second = desk.open("samedi", 2, 1, 4, Movement.RANDOM).event_id
    with pytest.raises(EventError) as raised:
        desk.find("")
    said = str(raised.value)
    assert "give more of the id" in said
    assert f"{first.hex()[:8]} (vendredi)" in said and f"{second.hex()[:8]} (samedi)" in said
    assert desk.find(first.hex()[:12]) == first


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_lobby_details_the_event_under_the_cursor(lang: str) -> None:
    model = Model(Texts(lang), Path("/x"))
    model.status = {"name": "moi", "fingerprint": "0abc-0000", "peers": []}
    model.state = {"table": None}
    model.events = [listed("11", 2, 2, None), listed("22", 2, 2, None)]
    model.event = _event_summary(event="22", name="Friday night", closed=2, rounds=2)
    model.lobby_event = _event_summary(event="11", name="Last week", closed=2, rounds=2)
    model.lobby_index = 0  # the cursor on last week's event
    text = fragment_list_to_text(lobby_fragments(model))
    assert "Last week" in text and "Friday night" not in text, text
    model.lobby_index = 1  # on tonight's: its details, not the old ones
    model.lobby_event = model.event
    text = fragment_list_to_text(lobby_fragments(model))
    assert "Friday night" in text and "Last week" not in text, text
