"""The client in a real terminal, as a person sees it: tmux runs ``tarot`` against a scripted
daemon (the local API at fixed moments: a trick of spades, the score sheet with its summary),
``capture-pane -e`` keeps the escape codes, and every character on the screen is checked for
contrast against a dark and a light terminal (WCAG ≥ 4.5) at 80×24, 100×30 and 200×50 —
with what must be on screen at each size, and the request for a larger terminal below the
smallest.  One tmux session for all of it; ``NO_COLOR`` gets a second, short one."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemons import ROOT
from test_tui_summary import result, scored

from client.tui.contrast import THEMES, plain, unreadable
from client.tui.i18n import Texts
from lab.tmux import Pane

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]

NAMES = ["moi", "anne", "bruno", "chloe", "david"]
HAND = ["T21", "T18", "T7", "T1", "QS", "9S", "5C", "KC", "QH", "2H", "KD", "3D", "EX"]


def playing() -> dict[str, Any]:
    """Our card to play at five on a trick of spades, the only spade we may play a queen."""
    view = {
        "seat": 0,
        "players": 5,
        "dealer": 4,
        "phase": "playing",
        "to_act": 0,
        "hand": HAND,
        "bids": [{"seat": s, "contract": "garde" if s == 1 else None} for s in range(5)],
        "taker": 1,
        "contract": "garde",
        "called": "KH",
        "partner": None,
        "chien": [],
        "ecart": [],
        "chelem": False,
        "poignees": [
            {
                "seat": 2,
                "cards": ["T2", "T3", "T4", "T5", "T6", "T8", "T9", "T10"],
                "size": "simple",
            }
        ],
        "tricks": [{"leader": 1, "cards": ["KH", "3H", "4H", "5H", "6H"], "winner": 1}],
        "current": ["1S", "4S", "2S", "KS"],
        "leader": 1,
        "legal": ["QS", "9S", "EX"],
    }
    return {
        "table": "ab" * 16,
        "name": "salon",
        "seats": NAMES,
        "fingerprints": [f"{i}abc-0000" for i in range(5)],
        "seat": 0,
        "deal": 1,
        "dealer": 4,
        "view": view,
        "last_view": None,
        "waiting_for": [0],
        "away": [],
        "decision": "playing",
        "options": {"cards": ["QS", "9S", "EX"], "poignee": None},
        "between_deals": False,
        "finished": False,
        "scores": [0] * 5,
        "results": [],
    }


def between() -> dict[str, Any]:
    _, audit = scored()
    row = result(audit)
    return {
        **playing(),
        "view": None,
        "decision": None,
        "options": None,
        "between_deals": True,
        "results": [row],
        "scores": row["scores"],
        "deal": 1,
    }


class Scripted:
    """A daemon's local API on a thread of its own, answering ``status``, ``state`` and
    ``tables`` from :attr:`state` (changed by the test as it goes)."""

    def __init__(self, home: Path, state: dict[str, Any]) -> None:
        self.home, self.state = home, state
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(
            asyncio.start_unix_server(self._serve, path=str(self.home / "api.sock"))
        )
        ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            op, reply = request["op"], {"id": request["id"], "ok": True}
            if op == "status":
                reply["result"] = {
                    "name": "moi",
                    "fingerprint": "0abc-0000",
                    "peers": [],
                    "tables": [],
                }
            elif op == "state":
                reply["result"] = self.state
            elif op == "tables":
                reply["result"] = []
            else:
                reply = {"id": request["id"], "ok": False, "error": f"scripted: {op} refused"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()

    def stop(self) -> None:
        """The connections still served cancelled and the loop closed, so that nothing is left
        pending (asyncio would say so at exit)."""
        asyncio.run_coroutine_threadsafe(self._cancel_served(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _cancel_served(self) -> None:
        served = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in served:
            task.cancel()
        await asyncio.gather(*served, return_exceptions=True)


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[Scripted]:
    daemon = Scripted(tmp_path, playing())
    yield daemon
    daemon.stop()


def client(home: Path, width: int, height: int, **env: str) -> Pane:
    """``tarot`` in a tmux pane; its errors, if any, in ``home/client.err``."""
    environment = {**os.environ, "LANG": "C.UTF-8", **env}
    command = (
        f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang en 2> {home}/client.err"
    )
    return Pane(command, environment, width, height)


def capture(pane: Pane) -> str:
    return pane.tmux("capture-pane", "-p", "-e", "-t", "tarot")


def resized(pane: Pane, width: int, height: int, what: str) -> str:
    """The screen redrawn at ``width`` × ``height``, with ``what`` on it; the capture with
    its escape codes."""
    pane.tmux("resize-window", "-t", "tarot", "-x", str(width), "-y", str(height))
    deadline = time.monotonic() + 60
    while True:
        pane.wait(
            lambda s: len(s.split("\n")) <= height and what in s and _settled(pane),
            f"{what} at {width}×{height}",
        )
        # A late redraw (the resize's second SIGWINCH) can clear the screen between the two.
        captured = capture(pane)
        if what in plain(captured) or time.monotonic() > deadline:
            return captured


def _settled(pane: Pane) -> bool:
    first = pane.screen()
    time.sleep(0.2)
    return pane.screen() == first


def readable(captured: str) -> None:
    faults = [str(fault) for theme in THEMES for fault in unreadable(captured, theme)]
    assert not faults, "\n".join(faults[:20]) + "\n" + plain(captured)


def test_the_table_reads_on_dark_and_light_terminals_and_fits_each_size(scripted: Scripted) -> None:
    texts = Texts("en")
    pane = client(scripted.home, 80, 24)
    try:
        pane.wait(lambda s: "Your hand" in s, "the hand", timeout=20)
        sizes = {}
        for width, height in ((80, 24), (100, 30), (200, 50)):
            captured = resized(pane, width, height, "Your hand")
            readable(captured)
            screen = plain(captured)
            sizes[width] = screen
            assert "▶ moi (you)" in screen  # our seat, to play, on screen
            assert texts("keys_playing") in screen.replace("\n", "")  # the help line whole
            for card in ("Q♠", "9♠", "K♣", "21", "★", "K♠", "2♠"):
                assert card in screen, (card, screen)
            assert all(f"{name} [" in screen or f"{name} (you) [" in screen for name in NAMES), (
                screen
            )
            assert "poignée simple (8)" in screen  # the poignée by the seat that showed it
        # The panel folds at 80 columns.
        assert "│" not in sizes[80] and "│" in sizes[100] and "│" in sizes[200]
        right = max(line.find("anne [") for line in sizes[200].splitlines())
        assert right > 100  # a large screen spreads the table
        scripted.state = between()
        captured = resized(pane, 80, 24, "Contract:")
        readable(captured)
        summary = plain(captured)
        assert "Attack:" in summary and "Score:" in summary and "needed" in summary
        small = plain(resized(pane, 60, 15, "Enlarge"))
        assert "Enlarge the terminal to at least 70×21 (it is 60×15)" in small.replace("\n", "")
        pane.keys("q")
        pane.wait(lambda s: "Quit?" in s, "q asking first")
    finally:
        pane.kill()


def test_no_color_draws_no_colour(scripted: Scripted) -> None:
    pane = client(scripted.home, 80, 24, NO_COLOR="1")
    try:
        pane.wait(lambda s: "Your hand" in s, "the hand")
        captured = capture(pane)
        codes = {
            int(c)
            for params in re.findall(r"\x1b\[([0-9;]*)m", captured)
            for c in params.split(";")
            if c
        }
        colours = {
            c for c in codes if 30 <= c <= 38 or 40 <= c <= 48 or 90 <= c <= 97 or 100 <= c <= 107
        }
        assert not colours, (colours, captured)
        assert "[Q♠]" in plain(captured)  # the cursor still reads, in the text itself
    finally:
        pane.kill()
