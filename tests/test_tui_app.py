"""The terminal client driven from the keyboard through prompt-toolkit's pipe input, its
screen kept in memory (``DummyOutput``), against a real ``tarotd``: the lobby (a table of
three opened, two bots added with keys), then whole deals played from keystrokes until the
player has made an écart — with a trump refused while other cards may go — in French and
in English; the score sheet on screen at the end.

The poignée needs a hand of eight trumps or more at five (2 % of deals), so its test asks a
daemon hosting every seat for a deal it has dealt before: ``tarotd --deal-seed`` (tests
only) fixes the seats' seeds and the lobby's table id and dealer coin, and the keys planted in
its home fix the rest.  What only a scripted daemon speaking the same local API can show —
a member away, a refusal from the daemon — is shown against one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from daemons import daemon_argv, kill_all, log_path, logs, spawn, wait_for_path
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import fragment_list_to_text
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType
from prompt_toolkit.output import DummyOutput

from client.tui.app import TarotApp
from client.tui.cards import plain
from client.tui.event import event_fragments
from client.tui.i18n import Texts
from client.tui.model import Model, Quitting, sorted_codes
from client.tui.table import hand_fragments, prompt_fragments
from protocol.rules.cards import card, cards
from protocol.rules.rules import poignee_sizes_available
from protocol.rules.variants import variant
from tarotd.home import Home

pytestmark = pytest.mark.daemons

RIGHT, LEFT, ENTER = "\x1b[C", "\x1b[D", "\r"
#: A deal seed that, with the keys of :func:`plant_keys`, deals the player eight trumps at five
#: (found by trying seeds in turn; a few per cent of them do).
POIGNEE_SEED = 231


def serve(
    home: Path, tmp_path: Path, table: str | None = None, extra: Sequence[str] = ()
) -> Iterator[Path]:
    """A daemon with its own seat left to the client, at ``table`` (five seats) or at none
    yet, its bots deciding at once; killed at the end."""
    argv = daemon_argv(
        home, "moi", 0, [], bot=None, table=table, seats=5, extra=["--think", "0", *extra]
    )
    process = spawn(argv, log_path(tmp_path, 0))
    try:
        wait_for_path(home / "api.sock", process)
        yield home
    finally:
        kill_all([process])


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Path]:
    """A daemon with no table yet: the client opens one from the lobby."""
    yield from serve(tmp_path / "d0", tmp_path)


def plant_keys(home: Path, names: Sequence[str]) -> None:
    """Identity keys written before the daemon starts instead of drawn by it: the table id
    and the first dealer, and so the cards, depend on them as much as on ``--deal-seed``."""
    place = Home(home)
    place.keys.mkdir(mode=0o700)
    for name in names:
        path = place.key_path(name)
        path.touch(mode=0o600)
        path.write_bytes(hashlib.sha256(b"tarot test identity " + name.encode()).digest())


@pytest.fixture
def poignee_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A daemon hosting a table of five — the client's seat and four bots — whose first deal
    gives the player a poignée (:data:`POIGNEE_SEED`)."""
    home = tmp_path / "d0"
    plant_keys(home, ["main", "bot-1", "bot-2", "bot-3", "bot-4"])
    monkeypatch.setenv("TAROT_TESTING", "1")  # tarotd refuses --deal-seed without it
    yield from serve(
        home, tmp_path, table="club", extra=["--bots", "4", "--deal-seed", str(POIGNEE_SEED)]
    )


class Driver:
    """The application on a pipe: keys in, the model and the screen's text out."""

    def __init__(self, ui: TarotApp, pipe: PipeInput) -> None:
        self.ui, self.pipe = ui, pipe

    @property
    def model(self) -> Model:
        return self.ui.model

    def keys(self, text: str) -> None:
        self.pipe.send_text(text)

    async def until(
        self, predicate: Callable[[Model], object], what: str, timeout: float = 60
    ) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self.model):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(
                    f"waited {timeout} s for {what}; the screen:\n{self.ui.screen_text()}"
                )
            await asyncio.sleep(0.02)

    async def press(self, text: str, what: str, predicate: Callable[[Model], object]) -> None:
        self.keys(text)
        await self.until(predicate, what)


@contextlib.asynccontextmanager
async def running(home: Path, lang: str, pipe: PipeInput) -> AsyncIterator[Driver]:
    """The application running on ``pipe``; quit with ``q q`` at the end (exit status 0)."""
    ui = TarotApp(home, lang, input=pipe, output=DummyOutput(), poll=0.2)
    task = asyncio.create_task(ui.run())
    driver = Driver(ui, pipe)
    try:
        await driver.until(lambda m: m.connected and m.status is not None, "the first state")
        yield driver
        driver.keys("qq")  # at a table, the first q asks what quitting does to the game
        assert await asyncio.wait_for(task, 10) == 0
    finally:
        task.cancel()


async def open_table_with_bots(d: Driver) -> None:
    """The lobby from the keyboard: a table of three opened, two bots added."""
    texts = d.model.texts
    assert texts("lobby") in d.ui.screen_text()
    await d.press("3", "the table opened", lambda m: any("moi" in t["members"] for t in m.tables))
    await d.press(
        "b", "a bot seated", lambda m: m.at_table or any(len(t["members"]) == 2 for t in m.tables)
    )
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
        steps = model.hand.index(trumps[0]) - model.cursor.index  # it starts on a card that may go
        d.keys((RIGHT if steps > 0 else LEFT) * abs(steps))
        await d.press(" ", "the trump refused", lambda m: m.message == texts("rule_ecart_trump"))
        assert model.ecart.picked == []
        seen["trump refused"] = 1
    while model.ecart.missing:
        index = model.cursor.index
        await d.press(
            " ",
            "the cursor moving on",
            lambda m, before=index: (
                m.cursor is not None and (m.cursor.index != before or m.ecart is None)
            ),
        )
    assert not any(card(c).is_trump for c in model.ecart.picked) or model.ecart.trumps_needed
    await d.press(ENTER, "the écart made", lambda m: m.decision_key != key)
    assert model.view is not None and sorted(model.view["ecart"]) == sorted(
        model.ecart.picked if model.ecart else model.view["ecart"]
    )
    seen["ecart"] = seen.get("ecart", 0) + 1


def assert_legal_cards_highlighted(model: Model) -> None:
    fragments = {fragment_list_to_text([f]).strip(" []·"): f[0] for f in hand_fragments(model)[1:]}
    legal = set(model.options["cards"])
    for code in model.hand:
        style = fragments[card(code).symbol(model.texts.lang)]
        assert ("class:legal" in style) == (code in legal) and ("class:illegal" in style) == (
            code not in legal
        )


async def cursor_to(d: Driver, code: str) -> None:
    """The arrow keys that take the hand's cursor to ``code`` (it steps over the cards it may
    not take)."""
    cursor = d.model.cursor
    assert cursor is not None and cursor.current is not None
    stops = [c for c in cursor.cards if c in cursor.enabled]
    steps = stops.index(code) - stops.index(cursor.current)
    d.keys((RIGHT if steps > 0 else LEFT) * abs(steps))
    await d.until(
        lambda m: m.cursor is not None and m.cursor.current == code, f"the cursor on {code}"
    )


async def show_a_poignee(d: Driver, seen: dict[str, int]) -> None:
    """``m`` opens the picker with the lowest trumps of the smallest poignée marked; a trump
    beyond the largest one is refused; the lowest is taken back (Enter then refuses the
    count), marked again, and Enter shows them: the daemon's view then holds the poignée and
    the log tells it."""
    model, texts = d.model, d.model.texts
    sizes = model.options["poignee"]["sizes"]
    assert texts("prompt_poignee_offer", sizes=", ".join(sizes)) in d.ui.screen_text()
    await d.press("m", "the poignée picker", lambda m: m.poignee is not None)
    assert model.poignee is not None
    picked = list(model.poignee.picked)
    assert len(picked) == min(sizes.values())
    listed = ", ".join(f"{name} {count}" for name, count in sizes.items())
    assert texts("prompt_poignee", count=len(picked), sizes=listed) in d.ui.screen_text()
    spare = [c for c in model.poignee.trumps if c not in picked]
    if spare and len(picked) == max(sizes.values()):
        await cursor_to(d, spare[0])
        await d.press(
            " ",
            "a trump too many refused",
            lambda m: m.message == texts("poignee_full", count=len(picked)),
        )
        seen["trump too many"] = 1
    await cursor_to(d, picked[0])
    await d.press(
        " ",
        "the lowest trump taken back",
        lambda m: m.poignee is not None and picked[0] not in m.poignee.picked,
    )
    counts = "/".join(str(count) for count in sizes.values())
    await d.press(
        ENTER,
        "one trump short, refused",
        lambda m: m.message == texts("poignee_size", sizes=counts),
    )
    await cursor_to(d, picked[0])  # Space stepped on to the next trump
    await d.press(
        " ",
        "the trump marked again",
        lambda m: m.poignee is not None and sorted(m.poignee.picked) == sorted(picked),
    )

    def ours(m: Model) -> list[dict[str, Any]]:
        return [p for p in (m.view or {}).get("poignees", ()) if p["seat"] == m.seat]

    await d.press(ENTER, "the poignée shown", lambda m: m.poignee is None and ours(m))
    (shown,) = ours(model)
    assert sorted(shown["cards"]) == sorted(picked) and shown["size"] == min(
        sizes, key=sizes.__getitem__
    )
    log = texts(
        "log_poignee",
        who=model.name(model.seat),
        size=shown["size"],
        cards=plain(sorted_codes(picked), texts.lang),
    )
    assert log in d.ui.screen_text()
    seen["poignee"] = seen.get("poignee", 0) + 1


async def play_deals(d: Driver, enough: Callable[[dict[str, int]], bool]) -> dict[str, int]:
    """Answer every decision from the keyboard, deal after deal — showing a poignée when the
    hand has one — until what has been seen is ``enough`` when a deal is scored."""
    seen: dict[str, int] = {}
    while True:
        await d.until(
            lambda m: m.decision is not None or (m.state or {}).get("between_deals"),
            "a decision or the sheet",
        )
        model = d.model
        key = model.decision_key
        if (model.state or {}).get("between_deals"):
            seen["deals"] = seen.get("deals", 0) + 1
            assert model.texts("sheet") in d.ui.screen_text()
            if enough(seen):
                return seen
            await d.press("n", "the next deal", lambda m: not (m.state or {}).get("between_deals"))
        elif model.decision == "bidding":
            await d.press(
                "g" + ENTER, "the bid taken", lambda m, before=key: m.decision_key != before
            )
        elif model.decision == "ecart":
            await make_ecart(d, seen)
        elif model.decision == "chelem":
            await d.press(ENTER, "no chelem", lambda m, before=key: m.decision_key != before)
        elif model.decision == "call":
            await d.press(ENTER, "the call", lambda m, before=key: m.decision_key != before)
        else:
            assert_legal_cards_highlighted(model)
            if model.options.get("poignee"):
                await show_a_poignee(d, seen)
                continue
            await d.press(ENTER, "the card played", lambda m, before=key: m.decision_key != before)
            seen["cards"] = seen.get("cards", 0) + 1


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_whole_deals_from_the_keyboard_with_an_ecart(
    daemon: Path, tmp_path: Path, lang: str
) -> None:
    async def scenario() -> tuple[dict[str, int], str, Model]:
        with create_pipe_input() as pipe:
            async with running(daemon, lang, pipe) as d:
                await open_table_with_bots(d)
                seen = await play_deals(d, lambda seen: "ecart" in seen or seen["deals"] >= 10)
                screen = d.ui.screen_text()
                await d.press(
                    "\t", "the log in the table's place (80 columns)", lambda m: m.folded == "log"
                )
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
    # the real daemon's breakdown: the score term by term, the hands once audited
    for row in state["results"]:
        breakdown = row["breakdown"]
        assert (
            len(breakdown["hands"]) == 3
            and sum(map(len, breakdown["hands"])) + len(breakdown["chien"]) == 78
        )
        if row["contract"] is not None:
            assert breakdown["score"]["taker"] == row["scores"][row["taker"]]
    assert seen.get("cards", 0) >= 24  # a whole deal of 24 tricks at three, every card from Enter
    assert texts("sheet") in screen and texts("sheet_total") in screen
    # The log of the deal.
    assert " ".join(texts("log_trick", number=24, who="", cards="").split()[:2]) in screen
    assert "Garde" in screen  # the game's words stay French in both languages


def test_the_client_without_a_daemon_says_how_to_start_one(tmp_path: Path) -> None:
    for lang, words in (("fr", "Lancez-le d'abord"), ("en", "Start one first")):
        out = subprocess.run(
            [sys.executable, "-m", "client.cli", "--home", str(tmp_path / "none"), "--lang", lang],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert out.returncode == 1 and words in out.stderr and "scripts/play" in out.stderr
        assert "Traceback" not in out.stderr


# --- The poignée, at a table dealt from a seed -------------------------------------------


def test_a_poignee_is_picked_and_shown_at_a_real_table(
    poignee_daemon: Path, tmp_path: Path
) -> None:
    async def scenario() -> tuple[dict[str, int], str, Model]:
        with create_pipe_input() as pipe:
            async with running(poignee_daemon, "en", pipe) as d:
                await d.until(lambda m: len(m.hand) == variant(5).hand_size, "the hand dealt")
                hand = d.model.hand
                assert poignee_sizes_available(cards(hand), variant(5)), (
                    f"tarotd --deal-seed {POIGNEE_SEED} dealt the player {' '.join(hand)}: no "
                    "poignée, although the seed "
                    "was chosen for one. The cards a seed deals have changed (tarotd/runner.py "
                    "seeded and seeded_entropy, "
                    "the lobby's table id or dealer coin, protocol/deck/seeds.py, "
                    "protocol/rules/layout.py, "
                    "the keys of plant_keys): "
                    "set POIGNEE_SEED to the first seed that deals seat 0 eight trumps or more at "
                    "five"
                )
                seen = await play_deals(d, lambda seen: True)
                screen = d.ui.screen_text()
        return seen, screen, d.model

    try:
        seen, screen, model = asyncio.run(asyncio.wait_for(scenario(), 180))
    except BaseException:
        print(logs(tmp_path, 1))
        raise
    state = model.state or {}
    assert seen.get("poignee") == 1 and seen.get("trump too many") == 1 and seen["deals"] == 1, seen
    # Every card from Enter, the first after the poignée.
    assert seen.get("cards", 0) == variant(5).hand_size
    (row,) = state["results"]
    assert row["audit"] == "ok" and row["contract"] is not None and sum(row["scores"]) == 0
    (poignee,) = [p for p in state["last_view"]["poignees"] if p["seat"] == model.seat]
    texts = model.texts
    log = texts(
        "log_poignee",
        who=model.name(model.seat),
        size=poignee["size"],
        cards=plain(sorted_codes(poignee["cards"]), "en"),
    )
    # The deal scored, and its log still tells the poignée.
    assert texts("sheet") in screen and log in screen
    # The deal just scored, not the next.
    assert texts("log_deal", deal=1, dealer=model.name(row["dealer"])) in screen


def test_the_deal_seed_is_refused_outside_tests(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name != "TAROT_TESTING"}
    out = subprocess.run(
        [sys.executable, "-m", "tarotd.cli", "--home", str(tmp_path / "h"), "--deal-seed", "1"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert out.returncode == 2 and "for tests only" in out.stderr and not (tmp_path / "h").exists()


# --- What only a scripted daemon shows: a member away, the daemon refusing -----------------

HAND = [
    "T21",
    "T18",
    "T15",
    "T12",
    "T9",
    "T7",
    "T5",
    "T3",
    "T2",
    "KS",
    "4S",
    "QH",
    "2H",
    "5C",
    "EX",
]


def _playing_state() -> dict[str, Any]:
    """Our first card at five, the daemon of seat 3 away for 12 s."""
    view = {
        "seat": 0,
        "players": 5,
        "dealer": 4,
        "phase": "playing",
        "to_act": 0,
        "hand": HAND,
        "bids": [{"seat": s, "contract": "garde" if s == 0 else None} for s in range(5)],
        "taker": 0,
        "contract": "garde",
        "called": "KH",
        "partner": None,
        "chien": ["3D", "4D", "6C"],
        "ecart": [],
        "chelem": False,
        "poignees": [],
        "tricks": [],
        "current": [],
        "leader": 0,
        "legal": HAND,
    }
    return {
        "table": "ab" * 16,
        "name": "club",
        "seats": ["moi", "b1", "b2", "b3", "b4"],
        "fingerprints": ["aaaa-bbbb-cccc-dddd"] * 5,
        "seat": 0,
        "deal": 0,
        "dealer": 4,
        "view": view,
        "waiting_for": [0],
        "away": [{"seat": 3, "seconds": 12.4}],
        "decision": "playing",
        "options": {"cards": HAND, "poignee": None},
        "between_deals": False,
        "finished": False,
        "scores": [0] * 5,
        "results": [],
    }


class ScriptedDaemon:
    """The local API of a daemon at a fixed moment: ``status``, ``state`` (a deal's, by
    default) and, if given, ``tables`` answer from a script; any other request is recorded
    and refused."""

    def __init__(
        self,
        state: dict[str, Any] | None = None,
        tables: list[dict[str, Any]] | None = None,
        events: list[dict[str, Any]] | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        self.state, self.tables = state or _playing_state(), tables
        self.events, self.event = events or [], event

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            op = request["op"]
            reply: dict[str, Any] = {"id": request["id"], "ok": True}
            if op == "status":
                reply["result"] = {
                    "name": "moi",
                    "fingerprint": "aaaa-bbbb-cccc-dddd",
                    "endpoint": "tcp://x",
                    "peers": [],
                    "tables": [],
                }
            elif op == "state":
                reply["result"] = self.state
            elif op == "tables" and self.tables is not None:
                reply["result"] = self.tables
            elif op == "events":
                reply["result"] = self.events
            elif op == "event" and self.event is not None:
                reply["result"] = self.event
            else:
                self.requests.append(request)
                reply = {
                    "id": request["id"],
                    "ok": False,
                    "error": f"scripted daemon: {op} refused",
                }
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()


def test_an_away_member_the_help_and_a_refused_card_against_a_scripted_daemon(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[ScriptedDaemon, str]:
        daemon = ScriptedDaemon()
        tmp_path.mkdir(exist_ok=True)
        server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
        try:
            with create_pipe_input() as pipe:
                async with running(tmp_path, "en", pipe) as d:
                    await d.until(lambda m: m.decision == "playing", "our turn")
                    first = d.ui.screen_text()
                    await d.press("?", "the full help", lambda m: m.show_help)
                    assert "Help — keys" in d.ui.screen_text() and "p t g s c" in d.ui.screen_text()
                    await d.press("?", "the help closed", lambda m: not m.show_help)
                    # A click on a card plays it (the mouse), and the scripted daemon refuses it.
                    card = next(f for f in hand_fragments(d.model, d.ui.click_card) if "4♠" in f[1])
                    assert len(card) == 3, "a card the player can click has its handler"
                    handler = card[2]
                    handler(
                        MouseEvent(
                            Point(0, 0), MouseEventType.MOUSE_UP, MouseButton.LEFT, frozenset()
                        )
                    )
                    await d.until(
                        lambda m: m.message.startswith("Refused: scripted daemon: play refused"),
                        "the refusal shown",
                    )
        finally:
            server.close()
        return daemon, first

    daemon, first = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert daemon.requests == [{"id": daemon.requests[0]["id"], "op": "play", "card": "4S"}]
    # A peer away: who, how long.
    assert "b3 has not answered for 12 s" in first and "away for 12 s" in first


def test_the_lobby_shows_our_invite_code_and_joins_another_table_with_a_typed_one(
    tmp_path: Path,
) -> None:
    tables = [
        {
            "table": "aa" * 16,
            "name": "salon",
            "seats": 3,
            "members": ["moi"],
            "state": "open",
            "invite": "7KQ2-M9XD",
        },
        {
            "table": "bb" * 16,
            "name": "club",
            "seats": 3,
            "members": ["anne"],
            "state": "open",
            "invite": None,
        },
    ]

    async def scenario() -> tuple[ScriptedDaemon, str, str]:
        daemon = ScriptedDaemon({"table": None}, tables)
        tmp_path.mkdir(exist_ok=True)
        server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
        try:
            with create_pipe_input() as pipe:
                async with running(tmp_path, "fr", pipe) as d:
                    await d.until(lambda m: len(m.tables) == 2, "the lobby")
                    lobby = d.ui.screen_text()
                    await d.press(
                        "ji",
                        "typing the code of club",
                        lambda m: m.lobby_index == 1 and m.invite == "",
                    )
                    await d.press(
                        "7kq2-m9xdd\x7f", "the code typed", lambda m: m.invite == "7KQ2-M9XD"
                    )
                    typing = d.ui.screen_text()
                    await d.press(
                        ENTER, "the join sent", lambda m: m.invite is None and daemon.requests
                    )
        finally:
            server.close()
        return daemon, lobby, typing

    daemon, lobby, typing = asyncio.run(asyncio.wait_for(scenario(), 60))
    # What the others type.
    assert "salon" in lobby and "← votre table  code d'invitation : 7KQ2-M9XD" in lobby
    assert "Code d'invitation de « club » : 7KQ2-M9XD" in typing
    assert [(r["op"], r["table"], r["invite"]) for r in daemon.requests] == [
        ("join", "bb" * 16, "7KQ2-M9XD")
    ]


def test_reading_the_sheet_is_safe_from_enter_and_q_asks_what_quitting_does(tmp_path: Path) -> None:
    """Enter, again and again, on the score sheet starts nothing (no ``next``, so no first
    bid passed); q at a game asks first and says what becomes of it; another key stays; a
    bid letter that cannot apply says why."""
    sheet = {
        **_playing_state(),
        "view": None,
        "decision": None,
        "options": None,
        "between_deals": True,
        "results": [
            {
                "deal": 0,
                "dealer": 4,
                "contract": "garde",
                "taker": 0,
                "scores": [100, -25, -25, -25, -25],
                "penalties": [],
                "audit": "ok",
            }
        ],
        "scores": [100, -25, -25, -25, -25],
        "deal": 1,
    }

    async def scenario() -> tuple[ScriptedDaemon, list[str]]:
        daemon = ScriptedDaemon(sheet)
        tmp_path.mkdir(exist_ok=True)
        server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
        seen = []
        try:
            with create_pipe_input() as pipe:
                ui = TarotApp(
                    tmp_path,
                    "en",
                    input=pipe,
                    output=DummyOutput(),
                    poll=0.2,
                    quitting=Quitting.GONE,
                )
                task = asyncio.create_task(ui.run())
                d = Driver(ui, pipe)
                await d.until(lambda m: (m.state or {}).get("between_deals"), "the sheet")
                await d.press(
                    ENTER * 3,
                    "Enter said to do nothing",
                    lambda m: m.message == m.texts("enter_between"),
                )
                await d.press("g", "g refused", lambda m: m.message == m.texts("not_bidding"))
                await d.press("q", "q asking", lambda m: m.quit_asked)
                seen.append(ui.screen_text())
                await d.press("x", "another key: stay", lambda m: not m.quit_asked)
                seen.append(ui.screen_text())
                daemon.state = {
                    **_playing_state(),
                    "decision": "bidding",
                    "view": {**_playing_state()["view"], "phase": "bidding"},
                    "options": {"bids": ["pass", "garde-sans", "garde-contre"]},
                }
                await d.until(lambda m: m.decision == "bidding", "the bidding")
                await d.press(
                    "g",
                    "g refused: above it",
                    lambda m: m.message == m.texts("bid_gone", contract="Garde"),
                )
                await d.press(
                    "s",
                    "s picks the garde sans",
                    lambda m: m.choice is not None and m.choice.current == "garde-sans",
                )
                d.keys("qq")
                assert await asyncio.wait_for(task, 10) == 0
        finally:
            server.close()
        return daemon, seen

    daemon, (asking, stayed) = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert daemon.requests == []  # neither next nor a bid went to the daemon
    assert "Quit? The game ends: the daemons of scripts/play stop and the game is deleted" in asking
    assert "You stay at the table." in stayed and "Quit?" not in stayed
    assert Texts("en")("bid_gone", contract="Garde").startswith("A Garde is no longer possible")


def _event_summary(**changes: Any) -> dict[str, Any]:
    """The daemon's ``event`` answer (tarotd.event_desk.EventDesk.summary) for a player of
    round 2 of 3 at table 2, the ranking of round 1 in."""
    names = ["anne", "bruno", "carla", "moi", "eric", "fanny", "gilles", "hugo"]
    ranking = [
        {
            "place": i + 1,
            "name": name,
            "fingerprint": "aaaa-bbbb-cccc-dddd" if name == "moi" else f"{i}{i}{i}{i}-0000",
            "total": 300 - 80 * i,
            "rounds": [[300 - 80 * i, "abandoned" if name == "hugo" else "played"]],
        }
        for i, name in enumerate(names)
    ]
    summary = {
        "event": "ee" * 16,
        "name": "mardi",
        "role": "player",
        "organiser": "9999-8888",
        "rounds": 3,
        "deals": 4,
        "tables": 4,
        "movement": "fft",
        "silence": "nothing",
        "players": [{"name": n, "fingerprint": "x"} for n in names],
        "plans": [
            {"round": 1, "movement": "fft", "tables": [names[:4], names[4:]]},
            {"round": 2, "movement": "fft", "tables": [names[::2], names[1::2]]},
        ],
        "closed": 1,
        "open": 2,
        "pending": [[2, 2, 3], [2, 2, 4]],
        "ranking": ranking,
        "seat": {"round": 2, "table": 2, "seat": 1, "with": ["bruno", "fanny", "hugo"]},
        "findings": [],
        "entries": 17,
    }
    return {**summary, **changes}


def test_an_event_in_the_lobby_is_joined_with_enter_and_followed_beside_the_table(
    tmp_path: Path,
) -> None:
    """The lobby lists the events heard after its tables; Enter on one registers; the event
    taken part in shows where to sit and the live ranking, in the lobby and, by Tab, at the
    table (80 columns: in the table's place)."""
    heard: list[dict[str, Any]] = [
        {
            "event": "dd" * 16,
            "name": "jeudi",
            "role": None,
            "organiser": "7777-6666",
            "players": None,
            "closed": None,
            "rounds": 5,
        },
        {
            "event": "ee" * 16,
            "name": "mardi",
            "role": "player",
            "organiser": "9999-8888",
            "players": 8,
            "closed": 1,
            "rounds": 3,
        },
    ]

    async def scenario() -> tuple[ScriptedDaemon, str, str]:
        daemon = ScriptedDaemon({"table": None}, [], heard, _event_summary())
        tmp_path.mkdir(exist_ok=True)
        server = await asyncio.start_unix_server(daemon.serve, path=str(tmp_path / "api.sock"))
        try:
            with create_pipe_input() as pipe:
                async with running(tmp_path, "fr", pipe) as d:
                    await d.until(
                        lambda m: m.event is not None and len(m.events) == 2, "the events"
                    )
                    lobby = d.ui.screen_text()
                    await d.press(ENTER, "the registration sent", lambda m: daemon.requests)
                    daemon.state = _playing_state()
                    await d.until(lambda m: m.at_table, "the event's table")
                    await d.press(
                        "\t\t\t", "the event in the table's place", lambda m: m.folded == "event"
                    )
                    beside = d.ui.screen_text()
        finally:
            server.close()
        return daemon, lobby, beside

    daemon, lobby, beside = asyncio.run(asyncio.wait_for(scenario(), 60))
    # The columns' padding aside.
    lobby, beside = (" ".join(screen.split()) for screen in (lobby, beside))
    assert "« jeudi » par [7777] — Entrée : s'inscrire" in lobby
    assert "« mardi » par [9999] — inscrit, 8 joueurs, 1/3 positions jouées" in lobby
    assert "Vous êtes à la table 2 de la position 2, avec bruno, fanny, hugo" in lobby
    assert "table 2 : donnes 3, 4 à venir" in lobby and "Classement provisoire" in lobby
    assert "→ 4. moi +60" in lobby and "+140 (abandon)" not in lobby
    assert "8. hugo -260 [7777] -260 (abandon)" in lobby  # the whole line, its round marked
    assert [(r["op"], r["event"]) for r in daemon.requests] == [("event-join", "dd" * 16)]
    assert "Vous êtes à la table 2 de la position 2" in beside and "8. hugo -260 [7777]" in beside


def test_the_event_panel_says_what_the_event_waits_for_in_both_languages() -> None:
    """Before round 1 the organiser is told how to start it, a player that it will be
    started; once over, the ranking is final; a fault the record shows is said; a round's
    table played out says the next round comes, the last one that the game is over."""
    for lang, role, words in (
        ("en", "organiser", "Registered: 8. On the event: Enter to play in it yourself, b for"),
        ("fr", "player", "Inscrits : 8. L'organisateur lancera la première position."),
    ):
        m = Model(Texts(lang), tmp := Path("/nonexistent"))
        m.event = _event_summary(
            role=role, plans=[], closed=0, open=None, pending=[], ranking=[], seat=None
        )
        text = fragment_list_to_text(event_fragments(m))
        assert words in text and str(tmp) not in text
    m = Model(Texts("en"), Path("/nonexistent"))
    m.event = _event_summary(
        closed=3,
        open=None,
        pending=[],
        findings=["round 2, table 1, deal 3: a row signed by no member"],
    )
    text = fragment_list_to_text(event_fragments(m))
    assert "The event is over." in text and "Final ranking" in text and "Ranking so far" not in text
    assert "FAULT: round 2, table 1, deal 3: a row signed by no member" in text
    m.status = {"fingerprint": "aaaa-bbbb-cccc-dddd"}
    m.event = _event_summary(
        ranking=[
            {**line, "fingerprint": "aaaa-bbbb-cccc-dddd" if line["name"] == "hugo" else "x"}
            for line in _event_summary()["ranking"]
        ]
    )
    # Beside a wide table.
    beside = " ".join(fragment_list_to_text(event_fragments(m, compact=True)).split())
    assert (
        "→ 8. hugo -260" in beside
        and " … " in beside
        and "7. gilles" not in beside
        and "6. fanny" in beside
    )
    # Anne, first: the six leaders, then "…".
    m.status, m.event = (
        {"fingerprint": "0000-0000"},
        _event_summary(),
    )
    beside = " ".join(fragment_list_to_text(event_fragments(m, compact=True)).split())
    assert (
        "→ 1. anne +300" in beside
        and "6. fanny" in beside
        and beside.endswith("…")
        and "8. hugo" not in beside
    )
    assert "[7777]" not in beside  # the leaders and our own line, their totals only
    # The round's table done.
    m.update({**_playing_state(), "view": None, "decision": None, "finished": True})
    assert "Round played: your daemon will seat you at the next round" in fragment_list_to_text(
        prompt_fragments(m)
    )
    m.event = {**m.event, "closed": 3}
    assert fragment_list_to_text(prompt_fragments(m)) == "The game is over. q: quit"
