"""The organiser playing in its own event, and event bots, from the terminal client (issue 37,
finding 8) — against a scripted daemon speaking the local API: on the organiser's own event
Enter registers its player (``event-join``) and ``e`` starts the event — two keys, since
Enter used to start it, seating round 1 without the organiser; ``b`` on an event asks how
many bots the daemon hosts for it (``event-join`` with ``bots`` and ``level``); the help
line says so in French and in English."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import ROOT
from prompt_toolkit.input import create_pipe_input
from test_tui_app import ENTER, ScriptedDaemon, _event_summary, running
from test_tui_terminal import Scripted

from client.tui.i18n import Texts
from client.tui.model import Model
from lab.tmux import Pane

pytestmark = pytest.mark.daemons

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


class EventScripted(Scripted):
    """The terminal test's scripted daemon, with the organiser's event of :func:`_ours`
    (``events``, ``event``) and every other request recorded and refused."""

    def __init__(self, home: Path) -> None:
        self.events, self.summary = _ours("organiser")
        self.requests: list[dict[str, Any]] = []
        super().__init__(home, {"table": None})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            op, reply = request["op"], {"id": request["id"], "ok": True}
            answers = {
                "status": {"name": "moi", "fingerprint": "0abc-0000", "peers": [], "tables": []},
                "state": self.state,
                "tables": [],
                "events": self.events,
                "event": self.summary,
            }
            if op in answers:
                reply["result"] = answers[op]
            else:
                self.requests.append(request)
                reply = {"id": request["id"], "ok": False, "error": f"scripted: {op} refused"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_event_bots_question_in_a_real_terminal_at_80_columns(
    tmp_path: Path, lang: str
) -> None:
    """``tarot`` in tmux at 80×24: the lobby's help line says the event's keys whole (wrapped
    between words), ``b`` asks the bots' question in full, and its answer is sent."""
    texts = Texts(lang)
    daemon = EventScripted(tmp_path)
    pane = Pane(
        f"cd {ROOT} && {sys.executable} -m client.cli --home {tmp_path} --lang {lang} "
        f"2> {tmp_path}/client.err",
        {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"},
        80,
        24,
    )
    try:
        lobby = pane.wait(lambda s: "vendredi" in s and texts("sheet") not in s, "the lobby", 20)
        pane.keys("b")
        asked = pane.wait(lambda s: "▏" in s, "the bots' question", 10)
        pane.keys("4", "Tab")
        typed = pane.wait(lambda s: "4▏" in s and "strong" in s, "four strong bots", 10)
        pane.keys("Enter")
        pane.wait(lambda s: "▏" not in s and "scripted" in s, "the bots sent", 10)
    finally:
        pane.kill()
        daemon.stop()
    flat = [" ".join(screen.split()) for screen in (lobby, asked, typed)]
    keys = " ".join(texts("lobby_keys").split())
    assert keys in flat[0], lobby  # the whole help line, its words unbroken
    assert all(len(line) <= 80 for line in lobby.splitlines())
    question = texts("event_bots_prompt", event="vendredi", count="4", level="bot strong")
    assert " ".join(question.split()) in flat[2], typed
    assert [(r["op"], r["event"], r["bots"], r["level"]) for r in daemon.requests] == [
        ("event-join", EVENT, 4, "strong")
    ]
