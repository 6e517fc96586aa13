"""The prompt-toolkit application: the layout, the keys and the mouse, and the loop that
keeps the screen in step with the daemon.

The daemon is asked for ``state`` again after every event it reports (and once a second, for
the lobby and the away counters), and the screen is redrawn; a decision goes to the daemon as
one request, and its refusal, if any, is shown in the status line.  Nothing here knows a rule
of the game: :mod:`client.tui.choose` keeps the picks legal from the daemon's own options.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_to_text
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import (
    ConditionalKeyBindings,
    KeyBindings,
    KeyBindingsBase,
    KeyPressEvent,
    merge_key_bindings,
)
from prompt_toolkit.layout import ConditionalContainer, FormattedTextControl, HSplit, Layout, VSplit, Window
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from client.api import DaemonClient, DaemonRefused, DaemonUnavailable
from client.tui.choose import BID_KEYS, Refusal
from client.tui.i18n import Texts
from client.tui.journal import deal_log
from client.tui.lobby import lobby_fragments, our_table
from client.tui.model import PANELS, Model
from client.tui.sheet import sheet_fragments
from client.tui.table import hand_fragments, prompt_fragments, table_fragments

STYLE = Style.from_dict({
    "title": "reverse bold",
    "heading": "bold",
    "red": "fg:ansired bold",
    "black": "",
    "trump": "fg:ansiyellow bold",
    "excuse": "fg:ansimagenta bold",
    "illegal": "fg:ansibrightblack",
    "legal": "bold",
    "marked": "underline bg:ansigreen fg:ansiblack",
    "cursor": "reverse",
    "played": "bold",
    "dim": "fg:ansibrightblack",
    "seat": "",
    "seat.you": "bold",
    "seat.to-act": "fg:ansigreen bold",
    "role": "fg:ansicyan",
    "away": "fg:ansired",
    "contract": "fg:ansicyan bold",
    "prompt": "bold",
    "option": "",
    "option.cursor": "reverse bold",
    "error": "fg:ansired bold",
    "info": "fg:ansigreen",
    "help": "fg:ansibrightblack",
    "sheet.header": "bold underline",
    "sheet.total": "bold",
    "line": "fg:ansibrightblack",
})

#: Seconds between two ``state`` requests when nothing happens (the lobby, away counters).
POLL = 1.0
#: The width of the panel beside the table (the log, the score sheet).
SIDE_WIDTH = 44


def last_rows(lines: list[str], width: int, height: int) -> list[str]:
    """The last lines that fit ``height`` rows of ``width`` once wrapped: the newest of the
    log stays in sight."""
    kept: list[str] = []
    rows = 0
    for line in reversed(lines):
        rows += max(1, -(-len(line) // width))
        if rows > height:
            break
        kept.append(line)
    return kept[::-1]


class TarotApp:
    """The terminal client for the daemon whose home is ``home``."""

    def __init__(self, home: Path, lang: str, *, input: Input | None = None, output: Output | None = None, poll: float = POLL) -> None:
        self.texts = Texts(lang)
        self.model = Model(self.texts, home)
        self.client = DaemonClient(home)
        self.poll = poll
        self._dirty = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.app: Application[int] = Application(
            layout=Layout(self._layout()),
            key_bindings=self._keys(),
            style=STYLE,
            full_screen=True,
            mouse_support=True,
            input=input,
            output=output,
        )

    # --- Running ------------------------------------------------------------------------

    async def run(self) -> int:
        """Connect (:class:`DaemonUnavailable` if the daemon is not there), then run the screen
        until the player quits; the exit status."""
        await self.client.connect()
        self.model.connected = True
        self.model.say(self.texts("connected", home=self.model.home))
        await self.refresh()
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._redraw_loop())]
        try:
            return await self.app.run_async()
        finally:
            for task in self._tasks:
                task.cancel()
            for task in self._tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await self.client.close()

    async def refresh(self) -> None:
        """Ask the daemon what the screen shows: who we are, our seat's state, the lobby."""
        try:
            self.model.status = await self.client.request("status")
            self.model.update(await self.client.request("state"))
            if not self.model.at_table:
                self.model.tables = await self.client.request("tables")
                self.model.lobby_index = min(self.model.lobby_index, max(0, len(self.model.tables) - 1))
        except DaemonUnavailable:
            self._daemon_gone()
        self.app.invalidate()

    def _daemon_gone(self) -> None:
        if self.model.connected:
            self.model.connected = False
            self.model.say(self.texts("daemon_gone", home=self.model.home), error=True)

    async def _listen(self) -> None:
        """Every event from the daemon marks the screen out of date; the daemon going away
        is said once, and the client reconnects when it comes back."""
        while True:
            async for event in self.client.events():
                if event.get("event") == "disconnected":
                    break
                self.model.note(event)
                self._dirty.set()
            self._daemon_gone()
            self.app.invalidate()
            await self._reconnect()

    async def _reconnect(self) -> None:
        while True:
            await asyncio.sleep(self.poll)
            client = DaemonClient(self.model.home)
            try:
                await client.connect()
            except DaemonUnavailable:
                continue
            await self.client.close()
            self.client, self.model.connected = client, True
            self.model.say(self.texts("connected", home=self.model.home))
            self._dirty.set()
            return

    async def _redraw_loop(self) -> None:
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), self.poll)
            self._dirty.clear()
            if self.model.connected:
                await self.refresh()

    def _send(self, op: str, success: str | None = None, **params: Any) -> None:
        """One request to the daemon, in the background; its refusal goes to the status line."""
        asyncio.get_running_loop().create_task(self._request(op, success, params))

    async def _request(self, op: str, success: str | None, params: dict[str, Any]) -> None:
        try:
            result = await self.client.request(op, **params)
        except DaemonRefused as error:
            self.model.say(self.texts.refusal(str(error)), error=True)
        except DaemonUnavailable:
            self._daemon_gone()
        else:
            if success is not None:
                self.model.say(self.texts(success, **(result if isinstance(result, dict) else {})))
            else:
                self.model.say("")
        await self.refresh()

    # --- The screen ---------------------------------------------------------------------

    def screen_text(self) -> str:
        """What the screen shows, as plain text, part after part (for tests and logs)."""
        parts = [self._title(), self._main(), self._side(), self._hand(), self._prompt(), self._status()]
        return "\n".join(fragment_list_to_text(part) for part in parts)

    def _layout(self) -> HSplit:
        def text(function: Callable[[], StyleAndTextTuples]) -> FormattedTextControl:
            return FormattedTextControl(function, focusable=False)

        at_table = Condition(lambda: self.model.at_table)
        self._side_window = Window(text(self._side), width=SIDE_WIDTH, wrap_lines=True)
        return HSplit([
            Window(text(self._title), height=1, style="class:title"),
            VSplit([
                Window(text(self._main), wrap_lines=True),
                ConditionalContainer(
                    VSplit([Window(width=1, char="│", style="class:line"), self._side_window]),
                    filter=at_table,
                ),
            ]),
            ConditionalContainer(Window(text(self._hand), height=2, wrap_lines=True), filter=Condition(lambda: self.model.view is not None)),
            Window(text(self._prompt), height=1),
            Window(text(self._status), height=1),
            Window(text(self._help_line), height=1, style="class:help"),
        ])

    def _title(self) -> StyleAndTextTuples:
        status = self.model.status or {}
        return [("", self.texts("title", name=status.get("name", "?"), fingerprint=status.get("fingerprint", "?")))]

    def _main(self) -> StyleAndTextTuples:
        model = self.model
        if model.show_help:
            return [("", self.texts("help"))]
        if not model.at_table:
            return lobby_fragments(model)
        state = model.state or {}
        if state.get("between_deals") or state.get("finished") or model.view is None and state.get("results"):
            return sheet_fragments(model)
        return table_fragments(model)

    def _side(self) -> StyleAndTextTuples:
        if self.model.panel == "sheet":
            return sheet_fragments(self.model, compact=True)
        info = self._side_window.render_info
        return [("", "\n".join(last_rows(deal_log(self.model), SIDE_WIDTH, info.window_height if info else 1000)))]

    def _hand(self) -> StyleAndTextTuples:
        return hand_fragments(self.model, self.click_card)

    def _prompt(self) -> StyleAndTextTuples:
        return prompt_fragments(self.model, self.click_option) if self.model.at_table else []

    def _status(self) -> StyleAndTextTuples:
        return [("class:error" if self.model.error else "class:info", self.model.message)]

    def _help_line(self) -> StyleAndTextTuples:
        return [("", self.texts("help_line_play") if self.model.at_table else self.texts("lobby_keys"))]

    # --- The player's actions -----------------------------------------------------------

    def _refused(self, refusal: Refusal | None) -> None:
        if refusal is not None:
            self.model.say(self.texts(refusal.key, **refusal.params), error=True)
        else:
            self.model.say("")

    def move(self, step: int) -> None:
        if self.model.choice is not None:
            self.model.choice.move(step)
        elif self.model.cursor is not None:
            self.model.cursor.move(step)

    def mark(self) -> None:
        """Space: mark the card under the cursor for the écart or the poignée (or take it
        back), and step to the next card, so that a run of Space picks a run of cards."""
        model = self.model
        code = model.cursor.current if model.cursor else None
        if code is None:
            return
        picker = model.ecart or model.poignee
        if picker is not None:
            self._refused(picker.toggle(code))
            assert model.cursor is not None
            model.cursor.move(1)

    def confirm(self) -> None:
        """Enter: send the decision in progress, if it is complete."""
        model = self.model
        state = model.state or {}
        if not model.at_table:
            self._join_selected()
        elif state.get("between_deals"):
            self._send("next")
        elif model.choice is not None:
            option = model.choice.current
            if model.decision == "bidding":
                self._send("bid", contract=option)
            elif model.decision == "call":
                self._send("call", card=option)
            else:
                self._send("chelem", announce=option == "yes")
        elif model.ecart is not None:
            if model.ecart.missing:
                model.say(self.texts("pick_more", count=model.ecart.missing), error=True)
            else:
                self._send("ecart", cards=list(model.ecart.picked))
        elif model.poignee is not None:
            problem = model.poignee.problem()
            if problem is not None:
                self._refused(problem)
            else:
                self._send("poignee", cards=list(model.poignee.picked))
        elif model.decision == "playing" and model.cursor is not None and model.cursor.current:
            self._send("play", card=model.cursor.current)
        else:
            model.say(self.texts("not_your_turn"), error=True)

    def click_card(self, code: str) -> None:
        """A click on a card: mark it (écart, poignée) or play it."""
        model = self.model
        if model.cursor is None:
            return
        if model.ecart is not None or model.poignee is not None:
            model.cursor.index = model.cursor.cards.index(code)
            self.mark()
        elif model.cursor.select(code):
            self.confirm()
        else:
            model.say(self.texts("not_legal"), error=True)

    def click_option(self, option: str) -> None:
        if self.model.choice is not None and self.model.choice.select(option):
            self.confirm()

    def _selected(self) -> dict[str, Any] | None:
        """The table under the lobby's cursor, if it is one to join (not ours)."""
        tables = self.model.tables
        if not self.model.at_table and tables and 0 <= self.model.lobby_index < len(tables):
            table = tables[self.model.lobby_index]
            return None if table is our_table(self.model) else table
        return None

    def _join_selected(self, invite: str | None = None) -> None:
        table = self._selected()
        if table is not None:
            self._send("join", "joined", table=table["table"], invite=invite)

    def _type_invite(self) -> None:
        """i: type the invite code of the table under the cursor, as its opener's screen shows
        it — what a daemon that does not know the opener's needs to join."""
        if self._selected() is not None:
            self.model.invite = ""

    def _invite_keys(self, typing: Condition) -> KeyBindings:
        """While a code is typed: letters, digits and dashes go into it, Backspace takes one
        back, Enter joins with it, Escape gives up."""
        keys, model = KeyBindings(), self.model

        def done(join: bool) -> None:
            invite, model.invite = model.invite, None
            if join:
                self._join_selected(invite)

        @keys.add("<any>", filter=typing)
        def typed(event: KeyPressEvent) -> None:
            if model.invite is not None and len(event.data) == 1 and (event.data.isalnum() or event.data == "-"):
                model.invite = (model.invite + event.data.upper())[:16]

        @keys.add("backspace", filter=typing)
        def erase(event: KeyPressEvent) -> None:
            model.invite = (model.invite or "")[:-1]

        keys.add("enter", filter=typing)(lambda event: done(True))
        keys.add("escape", filter=typing)(lambda event: done(False))
        return keys

    def _keys(self) -> KeyBindingsBase:
        keys = KeyBindings()
        model = self.model

        def on(*names: str) -> Callable[[Callable[[], object]], None]:
            def register(action: Callable[[], object]) -> None:
                def handler(event: KeyPressEvent) -> None:
                    action()
                    self.app.invalidate()

                for name in names:
                    keys.add(name)(handler)

            return register

        on("left", "h")(lambda: self.move(-1))
        on("right", "l")(lambda: self.move(1))
        on("up", "k")(lambda: setattr(model, "lobby_index", max(0, model.lobby_index - 1)))
        on("down", "j")(lambda: setattr(model, "lobby_index", min(len(model.tables) - 1, model.lobby_index + 1)))
        on("enter")(self.confirm)
        on("space")(self.mark)
        on("?")(lambda: setattr(model, "show_help", not model.show_help))
        on("tab")(lambda: setattr(model, "panel", PANELS[(PANELS.index(model.panel) + 1) % len(PANELS)]))
        on("d")(lambda: setattr(model, "show_last_trick", not model.show_last_trick))
        on("m")(model.start_poignee)
        on("escape")(model.cancel_poignee)
        on("q", "c-c")(lambda: self.app.exit(result=0))
        for letter, contract in BID_KEYS.items():
            on(letter)(self._letter_action(contract))
        on("y", "o")(lambda: self._chelem_letter("yes"))
        on("n")(self._next_or_no)
        for seats in (3, 4, 5):
            on(str(seats))(self._opener(seats))
        on("b")(lambda: self._in_lobby("bot", "bot_added"))
        on("x")(lambda: self._in_lobby("leave", "left"))
        on("i")(self._type_invite)
        typing = Condition(lambda: model.invite is not None)
        return merge_key_bindings([ConditionalKeyBindings(keys, ~typing), self._invite_keys(typing)])

    def _letter_action(self, contract: str) -> Callable[[], None]:
        def pick() -> None:
            if self.model.decision == "bidding" and self.model.choice is not None:
                self.model.choice.select(contract)

        return pick

    def _chelem_letter(self, option: str) -> None:
        if self.model.decision == "chelem" and self.model.choice is not None:
            self.model.choice.select(option)

    def _next_or_no(self) -> None:
        if (self.model.state or {}).get("between_deals"):
            self._send("next")
        else:
            self._chelem_letter("no")

    def _opener(self, seats: int) -> Callable[[], None]:
        def open_table() -> None:
            if not self.model.at_table:
                name = (self.model.status or {}).get("name", "tarot")
                self._send("open", "opened", name=str(name), seats=seats)

        return open_table

    def _in_lobby(self, op: str, success: str) -> None:
        if not self.model.at_table:
            self._send(op, success)


