"""The terminal client driven from the keyboard through prompt-toolkit's pipe input, its
screen kept in memory (``DummyOutput``), against a real ``tarotd``: the lobby (a table of
three opened, two bots added with keys), then whole deals played from keystrokes until the
player has made an écart — with a trump refused while other cards may go — in French and
in English; the score sheet on screen at the end.

The poignée needs a hand with eight trumps or more (a few per cent of deals at five, fewer at
three), which a real daemon cannot be asked to deal; it is shown against a scripted daemon
speaking the same local API (``test_a_poignee_is_picked_and_shown``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from daemons import daemon_argv, free_ports, kill_all, log_path, logs, spawn, wait_for_path
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import fragment_list_to_text
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType
from prompt_toolkit.output import DummyOutput

from client.tui.app import TarotApp
from client.tui.i18n import Texts
from client.tui.model import Model
from client.tui.table import hand_fragments
from protocol.cards import card

RIGHT, ENTER = "\x1b[C", "\r"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Path]:
    """A daemon with no table yet, its own seat left to the client; killed at the end."""
    home = tmp_path / "d0"
    process = spawn(daemon_argv(home, "moi", free_ports(1)[0], [], bot=None, table=None, extra=["--think", "0"]), log_path(tmp_path, 0))
    try:
        wait_for_path(home / "api.sock", process)
        yield home
    finally:
        kill_all([process])


class Driver:
    """The application on a pipe: keys in, the model and the screen's text out."""

    def __init__(self, ui: TarotApp, pipe: PipeInput) -> None:
        self.ui, self.pipe = ui, pipe

    @property
    def model(self) -> Model:
        return self.ui.model

    def keys(self, text: str) -> None:
        self.pipe.send_text(text)

    async def until(self, predicate: Callable[[Model], object], what: str, timeout: float = 60) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self.model):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; the screen:\n{self.ui.screen_text()}")
            await asyncio.sleep(0.02)

    async def press(self, text: str, what: str, predicate: Callable[[Model], object]) -> None:
        self.keys(text)
        await self.until(predicate, what)


@contextlib.asynccontextmanager
async def running(home: Path, lang: str, pipe: PipeInput) -> AsyncIterator[Driver]:
    """The application running on ``pipe``; quit with ``q`` at the end (exit status 0)."""
    ui = TarotApp(home, lang, input=pipe, output=DummyOutput(), poll=0.2)
    task = asyncio.create_task(ui.run())
    driver = Driver(ui, pipe)
    try:
        await driver.until(lambda m: m.connected and m.status is not None, "the first state")
        yield driver
        driver.keys("q")
        assert await asyncio.wait_for(task, 10) == 0
    finally:
        task.cancel()


async def open_table_with_bots(d: Driver) -> None:
    """The lobby from the keyboard: a table of three opened, two bots added."""
    texts = d.model.texts
    assert texts("lobby") in d.ui.screen_text()
    await d.press("3", "the table opened", lambda m: any("moi" in t["members"] for t in m.tables))
    await d.press("b", "a bot seated", lambda m: m.at_table or any(len(t["members"]) == 2 for t in m.tables))
    assert texts("bot_added", bot="moi-bot1") in d.ui.screen_text()
    await d.press("b", "the table starting", lambda m: m.at_table)


async def make_ecart(d: Driver, seen: dict[str, int]) -> None:
    """Try a trump (refused while other cards may go), then Space along the hand until the
    écart is complete, and Enter."""
    model, texts = d.model, d.model.texts
    assert model.ecart is not None and model.cursor is not None
    key = model.decision_key
    trumps = [c for c in model.hand if card(c).is_trump and not card(c).is_bout]
    if model.ecart.trumps_needed == 0 and trumps:
        d.keys(RIGHT * model.hand.index(trumps[0]))
        await d.press(" ", "the trump refused", lambda m: m.message == texts("ecart_trump"))
        assert model.ecart.picked == []
        seen["trump refused"] = 1
    while model.ecart.missing:
        index = model.cursor.index
        await d.press(" ", "the cursor moving on", lambda m: m.cursor is not None and (m.cursor.index != index or m.ecart is None))
    assert not any(card(c).is_trump for c in model.ecart.picked) or model.ecart.trumps_needed
    await d.press(ENTER, "the écart made", lambda m: m.decision_key != key)
    assert model.view is not None and sorted(model.view["ecart"]) == sorted(model.ecart.picked if model.ecart else model.view["ecart"])
    seen["ecart"] = seen.get("ecart", 0) + 1


def assert_legal_cards_highlighted(model: Model) -> None:
    fragments = {fragment_list_to_text([f]).strip(" []·"): f[0] for f in hand_fragments(model)[1:]}
    legal = set(model.options["cards"])
    for code in model.hand:
        style = fragments[card(code).symbol(model.texts.lang)]
        assert ("class:legal" in style) == (code in legal) and ("class:illegal" in style) == (code not in legal)


async def play_until_an_ecart(d: Driver, max_deals: int = 10) -> dict[str, int]:
    """Answer every decision from the keyboard, deal after deal, until a deal in which the
    player made the écart has been scored."""
    seen: dict[str, int] = {}
    while True:
        await d.until(lambda m: m.decision is not None or (m.state or {}).get("between_deals"), "a decision or the sheet")
        model = d.model
        key = model.decision_key
        if (model.state or {}).get("between_deals"):
            seen["deals"] = seen.get("deals", 0) + 1
            assert model.texts("sheet") in d.ui.screen_text()
            if seen.get("ecart") or seen["deals"] >= max_deals:
                return seen
            await d.press("n", "the next deal", lambda m: not (m.state or {}).get("between_deals"))
        elif model.decision == "bidding":
            await d.press("g" + ENTER, "the bid taken", lambda m: m.decision_key != key)
        elif model.decision == "ecart":
            await make_ecart(d, seen)
        elif model.decision == "chelem":
            await d.press(ENTER, "no chelem", lambda m: m.decision_key != key)
        elif model.decision == "call":
            await d.press(ENTER, "the call", lambda m: m.decision_key != key)
        else:
            assert_legal_cards_highlighted(model)
            if model.options.get("poignee"):  # a real one, when the hand allows it: show it
                await d.press("m", "the poignée picked", lambda m: m.poignee is not None)
                await d.press(ENTER, "the poignée shown", lambda m: m.decision_key != key)
                seen["poignee"] = 1
                continue
            await d.press(ENTER, "the card played", lambda m: m.decision_key != key)
            seen["cards"] = seen.get("cards", 0) + 1


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_whole_deals_from_the_keyboard_with_an_ecart(daemon: Path, tmp_path: Path, lang: str) -> None:
    async def scenario() -> tuple[dict[str, int], str, Model]:
        with create_pipe_input() as pipe:
            async with running(daemon, lang, pipe) as d:
                await open_table_with_bots(d)
                seen = await play_until_an_ecart(d)
                screen = d.ui.screen_text()
                await d.press("\t", "the sheet beside the table", lambda m: m.panel == "sheet")
        return seen, screen, d.model

    try:
        seen, screen, model = asyncio.run(asyncio.wait_for(scenario(), 240))
    except BaseException:
        print(logs(tmp_path, 1))
        raise
    texts = Texts(lang)
    assert seen.get("ecart") == 1, seen
    assert seen.get("trump refused") == 1, seen
    state = model.state or {}
    assert state["between_deals"] and len(state["results"]) == seen["deals"]
    assert all(sum(row["scores"]) == 0 and row["audit"] == "ok" for row in state["results"])
    assert seen.get("cards", 0) >= 24  # a whole deal of 24 tricks at three, every card from Enter
    assert texts("sheet") in screen and texts("sheet_total") in screen
    assert " ".join(texts("log_trick", number=24, who="", cards="").split()[:2]) in screen  # the log of the deal
    assert "Garde" in screen  # the game's words stay French in both languages


def test_the_client_without_a_daemon_says_how_to_start_one(tmp_path: Path) -> None:
    for lang, words in (("fr", "Lancez-le d'abord"), ("en", "Start one first")):
        out = subprocess.run([sys.executable, "-m", "client.cli", "--home", str(tmp_path / "none"), "--lang", lang],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 1 and words in out.stderr and "scripts/play" in out.stderr
        assert "Traceback" not in out.stderr


# --- The poignée, against a scripted daemon ------------------------------------------------

HAND = ["T21", "T18", "T15", "T12", "T9", "T7", "T5", "T3", "T2", "KS", "4S", "QH", "2H", "5C", "EX"]


def _playing_state(poignees: list[dict[str, Any]], offer: bool) -> dict[str, Any]:
    """Our first card at five, the hand allowing a simple poignée (8 trumps)."""
    view = {"seat": 0, "players": 5, "dealer": 4, "phase": "playing", "to_act": 0, "hand": HAND,
            "bids": [{"seat": s, "contract": "garde" if s == 0 else None} for s in range(5)],
            "taker": 0, "contract": "garde", "called": "KH", "partner": None, "chien": ["3D", "4D", "6C"],
            "ecart": [], "chelem": False, "poignees": poignees, "tricks": [], "current": [], "leader": 0, "legal": HAND}
    poignee = {"sizes": {"simple": 8}, "trumps": [c for c in HAND if c.startswith("T") or c == "EX"]} if offer else None
    return {"table": "ab" * 16, "name": "club", "seats": ["moi", "b1", "b2", "b3", "b4"],
            "fingerprints": ["aaaa-bbbb-cccc-dddd"] * 5, "seat": 0, "deal": 0, "dealer": 4, "view": view,
            "waiting_for": [0], "away": [{"seat": 3, "seconds": 12.4}], "decision": "playing",
            "options": {"cards": HAND, "poignee": poignee}, "between_deals": False, "finished": False,
            "scores": [0] * 5, "results": []}


class ScriptedDaemon:
    """The local API of a daemon at a fixed moment of a deal: ``state`` answers from a
    script, the player's requests are recorded, and a ``poignee`` is taken as the real daemon
    would take the legal one (the poignée shown, the offer gone)."""

    def __init__(self) -> None:
        self.state = _playing_state([], offer=True)
        self.requests: list[dict[str, Any]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            op = request["op"]
            reply: dict[str, Any] = {"id": request["id"], "ok": True}
            if op == "status":
                reply["result"] = {"name": "moi", "fingerprint": "aaaa-bbbb-cccc-dddd", "endpoint": "tcp://x", "peers": [], "tables": []}
            elif op == "state":
                reply["result"] = self.state
            elif op == "poignee" and sorted(request["cards"]) == sorted(["T2", "T3", "T5", "T7", "T9", "T12", "T15", "T18"]):
                self.requests.append(request)
                self.state = _playing_state([{"seat": 0, "cards": request["cards"], "size": "simple"}], offer=False)
                reply["result"] = {"done": op}
            else:
                self.requests.append(request)
                reply = {"id": request["id"], "ok": False, "error": f"scripted daemon: {op} refused"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
            if op == "poignee":
                writer.write(json.dumps({"event": "poignee", "seat": 0}).encode() + b"\n")


def test_a_poignee_is_picked_and_shown(tmp_path: Path) -> None:
    async def scenario() -> tuple[ScriptedDaemon, str, str]:
        daemon = ScriptedDaemon()
        tmp_path.mkdir(exist_ok=True)
        server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
        try:
            with create_pipe_input() as pipe:
                async with running(tmp_path, "en", pipe) as d:
                    texts = d.model.texts
                    await d.until(lambda m: m.decision == "playing", "our turn")
                    first = d.ui.screen_text()
                    await d.press("?", "the full help", lambda m: m.show_help)
                    assert "Help — keys" in d.ui.screen_text() and "p t g s c" in d.ui.screen_text()
                    await d.press("?", "the help closed", lambda m: not m.show_help)
                    assert texts("prompt_poignee_offer", sizes="simple") in first
                    await d.press("m", "the poignée picker", lambda m: m.poignee is not None)
                    assert texts("prompt_poignee", count=8, sizes="simple 8") in d.ui.screen_text()
                    # Space on the first trump (T21) marks a ninth: refused; on T2 it takes T2 back.
                    await d.press(" ", "a ninth trump refused", lambda m: m.message == texts("poignee_full", count=8))
                    d.keys(RIGHT * 7)  # from T18 (Space stepped on) to T2
                    await d.until(lambda m: m.cursor is not None and m.cursor.current == "T2", "the cursor on T2")
                    await d.press(" ", "T2 taken back", lambda m: m.poignee is not None and "T2" not in m.poignee.picked)
                    await d.press(ENTER, "seven trumps refused", lambda m: m.message == texts("poignee_size", sizes="8"))
                    d.keys("\x1b[D")  # back to T2 (Space stepped on to the next trump)
                    await d.until(lambda m: m.cursor is not None and m.cursor.current == "T2", "back on T2")
                    await d.press(" ", "T2 marked again", lambda m: m.poignee is not None and len(m.poignee.picked) == 8)
                    await d.press(ENTER, "the poignée shown", lambda m: m.poignee is None and (m.view or {}).get("poignees"))
                    shown = d.ui.screen_text()
                    # A click on a card plays it (the mouse), and the scripted daemon refuses it.
                    handler = next(f for f in hand_fragments(d.model, d.ui.click_card) if "4♠" in f[1])[2]  # type: ignore[misc]
                    handler(MouseEvent(Point(0, 0), MouseEventType.MOUSE_UP, MouseButton.LEFT, frozenset()))
                    await d.until(lambda m: m.message.startswith("Refused: scripted daemon: play refused"), "the refusal shown")
        finally:
            server.close()
        return daemon, first, shown

    daemon, first, shown = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert daemon.requests[0]["op"] == "poignee" and len(daemon.requests[0]["cards"]) == 8
    assert daemon.requests[-1] == {"id": daemon.requests[-1]["id"], "op": "play", "card": "4S"}
    assert "moi (you) shows a poignée simple: 18 15 12 9 7 5 3 2" in shown
    assert "b3 has not answered for 12 s" in first and "away for 12 s" in first  # a peer away: who, how long
