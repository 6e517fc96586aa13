"""The organiser playing in its own event, and event bots, from the terminal client (issue 37,
finding 8) — against a scripted daemon speaking the local API: on the organiser's own event
Enter registers its player (``event-join``) and ``e`` starts the event — two keys, since
Enter used to start it, seating round 1 without the organiser; ``b`` on an event asks how
many bots the daemon hosts for it (``event-join`` with ``bots`` and ``level``); the help
line says so in French and in English."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from prompt_toolkit.input import create_pipe_input
from test_tui_app import ENTER, ScriptedDaemon, _event_summary, running

from client.tui.model import Model

EVENT = "dd" * 16


def _ours(role: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """An event before round 1, as the daemon lists it and details it: eight registered,
    our player (fingerprint aaaa-…) not among them."""
    listed = {
        "event": EVENT,
        "name": "vendredi",
        "role": role,
        "organiser": "aaaa-bbbb",
        "players": 8,
        "closed": 0,
        "rounds": 2,
    }
    summary = _event_summary(
        event=EVENT,
        name="vendredi",
        role=role or "player",
        plans=[],
        closed=0,
        open=None,
        pending=[],
        ranking=[],
        seat=None,
    )
    return [listed], summary


async def _drive(
    tmp_path: Path, lang: str, role: str | None, keys: list[tuple[str, str, Any]]
) -> tuple[ScriptedDaemon, list[str]]:
    """The lobby with one event; each key pressed in turn until its condition holds, the
    screen read after each."""
    events, summary = _ours(role)
    daemon = ScriptedDaemon({"table": None}, [], events, summary)
    tmp_path.mkdir(exist_ok=True)
    server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
    screens = []
    try:
        with create_pipe_input() as pipe:
            async with running(tmp_path, lang, pipe) as d:
                await d.until(lambda m: m.lobby_event is not None, "the event under the cursor")
                screens.append(d.ui.screen_text())
                for key, what, done in keys:

                    def holds(model: Model, done: Any = done) -> bool:
                        return bool(done(model, daemon))

                    await d.press(key, what, holds)
                    screens.append(d.ui.screen_text())
    finally:
        server.close()
    return daemon, [" ".join(screen.split()) for screen in screens]


def test_the_organiser_registers_with_enter_and_starts_with_e(tmp_path: Path) -> None:
    for lang in ("en", "fr"):
        tmp = tmp_path / lang
        daemon, screens = asyncio.run(
            asyncio.wait_for(
                _drive(
                    tmp,
                    lang,
                    "organiser",
                    [
                        (ENTER, "the registration", lambda m, d: d.requests),
                        ("e", "the start", lambda m, d: len(d.requests) == 2),
                    ],
                ),
                60,
            )
        )
        assert [(r["op"], r["event"]) for r in daemon.requests] == [
            ("event-join", EVENT),
            ("event-start", EVENT),
        ], lang
        assert "bots" not in daemon.requests[0]
        lobby = screens[0]
        if lang == "en":
            assert "Enter join, register — e start your event — b add a bot (on an event: its" in (
                lobby
            )
            assert "On the event: Enter to play in it yourself, b for bots, e to start" in lobby
        else:
            assert "Entrée rejoindre, s'inscrire — e lancer votre tournoi — b ajouter un bot" in (
                lobby
            )
            assert "Entrée pour y jouer vous-même, b pour des bots, e pour lancer" in lobby


def test_e_on_another_organisers_event_starts_nothing(tmp_path: Path) -> None:
    daemon, screens = asyncio.run(
        asyncio.wait_for(
            _drive(
                tmp_path,
                "en",
                "player",
                [("e", "the answer", lambda m, d: m.error)],
            ),
            60,
        )
    )
    assert daemon.requests == []
    assert "Only its organiser starts an event." in screens[-1]


def test_b_on_an_event_asks_how_many_bots_and_registers_them(tmp_path: Path) -> None:
    daemon, screens = asyncio.run(
        asyncio.wait_for(
            _drive(
                tmp_path,
                "en",
                "organiser",
                [
                    ("b", "the question", lambda m, d: m.event_bots == ""),
                    (ENTER, "a count asked for", lambda m, d: m.error),
                    ("3x", "three typed", lambda m, d: m.event_bots == "3"),
                    ("\t", "their level", lambda m, d: m.event_bots_level == "strong"),
                    (ENTER, "the bots registered", lambda m, d: d.requests),
                ],
            ),
            60,
        )
    )
    (request,) = daemon.requests
    assert (request["op"], request["event"], request["bots"], request["level"]) == (
        "event-join",
        EVENT,
        3,
        "strong",
    )
    assert "Bots for “vendredi”, hosted by your daemon — how many? ▏ (bot basic" in screens[1]
    assert "Type how many bots (1 to 16), then Enter." in screens[2]
    assert "how many? 3▏ (bot basic, Tab to change)" in screens[3]
    assert "how many? 3▏ (bot strong, Tab to change)" in screens[4]
    assert "how many?" not in screens[5]  # the question gone once answered
