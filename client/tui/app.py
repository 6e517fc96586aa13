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
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from client.api import DaemonClient, DaemonRefused, DaemonUnavailable
from client.events import Disconnected
from client.tui.choose import BID_KEYS, Refusal, card_refusal, poignee_refusal
from client.tui.event import event_fragments
from client.tui.geometry import MIN_COLUMNS, MIN_ROWS, Geometry, rows_of
from client.tui.i18n import CONTRACTS, Texts
from client.tui.journal import deal_log
from client.tui.lobby import lobby_fragments, our_table
from client.tui.model import EVENT_PANEL, TABLE, Model, Quitting
from client.tui.replay import any_scored, replay_fragments
from client.tui.replay import start as start_replay
from client.tui.replay import step as replay_step
from client.tui.sheet import sheet_fragments
from client.tui.summary import summary_fragments
from client.tui.table import hand_fragments, prompt_fragments, table_fragments
from client.tui.wrap import wrap_fragments, wrap_text

#: Readable on a dark and on a light terminal alike: text takes the terminal's own colours
#: (black suits included), and every colour comes with its own background — a card face,
#: ink on paper — from the 256-colour cube, never one of the 16 colours each terminal
#: redefines (xterm's red on black, yellow on white, do not read).  ``NO_COLOR`` drops them
#: all (prompt-toolkit honours it); the cursor and the marks are also in the text itself.
STYLE = Style.from_dict(
    {
        "title": "reverse bold",
        "heading": "bold",
        "card.red": "fg:#af0000 bg:#ffffff",
        "card.black": "",
        "card.trump": "fg:#000000 bg:#ffd75f",
        "card.excuse": "fg:#000000 bg:#d7afff",
        "illegal": "",
        "legal": "bold underline",
        "marked": "underline fg:#000000 bg:#87d787",
        "cursor": "reverse",
        "played": "bold",
        "dim": "",
        "seat": "",
        "seat.you": "bold",
        "seat.to-act": "bold underline",
        "role": "",
        "away": "fg:#ffffff bg:#af0000",
        "contract": "bold",
        "prompt": "bold",
        "option": "",
        "option.cursor": "reverse bold",
        "error": "fg:#ffffff bg:#af0000 bold",
        "info": "",
        "help": "",
        "sheet.header": "bold underline",
        "sheet.total": "bold",
        "line": "",
    }
)

#: Seconds between two ``state`` requests when nothing happens (the lobby, away counters).
POLL = 1.0


def last_rows(lines: list[str], width: int, height: int) -> list[str]:
    """The last rows of ``lines`` broken between words in ``width`` columns that fit
    ``height`` rows: the newest of the log stays in sight."""
    rows = [row for line in lines for row in wrap_text(line, width)]
    return rows[max(0, len(rows) - height) :]


def tonight(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Tonight's event among the daemon's ``events`` (listed in the order it took them up):
    the newest with a round being played, else the newest it takes part in — not last week's
    ranking, nor an event long over."""
    ours = [event for event in events if event.get("role")]
    playing = [event for event in ours if event.get("open") is not None]
    chosen = playing or ours
    return chosen[-1] if chosen else None


class TarotApp:
    """The terminal client for the daemon whose home is ``home``."""

    def __init__(
        self,
        home: Path,
        lang: str,
        *,
        input: Input | None = None,
        output: Output | None = None,
        poll: float = POLL,
        quitting: Quitting = Quitting.STAYS,
        bot_levels: dict[str, str] | None = None,
        bell: bool = True,
    ) -> None:
        self.texts = Texts(lang)
        self.model = Model(self.texts, home, quitting=quitting, bot_levels=dict(bot_levels or {}))
        self.bell = bell  #: the turn alert: the terminal's bell when a decision waits (key a)
        self.client = DaemonClient(home)
        self.poll = poll
        self._dirty = asyncio.Event()
        self._events_asked = -POLL  #: the loop's time of the last ``events`` request
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
        self._tasks = [
            asyncio.create_task(self._listen()),
            asyncio.create_task(self._redraw_loop()),
        ]
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
            bots = self.model.status.get("bots") if isinstance(self.model.status, dict) else None
            if isinstance(bots, dict):  # the daemon's own bot seats: tagged by their level
                self.model.bot_levels.update({str(k): str(v) for k, v in bots.items()})
            self.take(await self.client.request("state"))
            if not self.model.at_table:
                tables = await self.client.request("tables")  # strangers' offers last, apart
                self.model.tables = sorted(tables, key=lambda t: t.get("verified") is False)
            await self._refresh_event()
            self.model.lobby_index = min(self.model.lobby_index, max(0, self._lobby_rows() - 1))
        except DaemonUnavailable:
            self._daemon_gone()
        self.app.invalidate()

    def take(self, state: dict[str, Any]) -> None:
        """The daemon's new state on screen — and the turn alert when it asks a new decision
        of the player (a bid, the call, the écart, the chelem, a card), unless silenced."""
        before = self.model.decision_key
        self.model.update(state)
        if self.bell and self.model.decision is not None and self.model.decision_key != before:
            self.app.output.bell()

    def toggle_bell(self) -> None:
        """a: the turn alert off, or on again."""
        self.bell = not self.bell
        self.model.say(self.texts("bell_on" if self.bell else "bell_off"))

    async def _refresh_event(self) -> None:
        """The events heard and the one we take part in — asked once a poll at most, since a
        deal's every card asks for the state again.  A daemon that knows no events (an older
        one) shows none."""
        now = asyncio.get_running_loop().time()
        if now - self._events_asked < self.poll:
            return
        self._events_asked = now
        model = self.model
        try:
            model.events = list(await self.client.request("events"))
            held = tonight(model.events)
            model.event = (
                None if held is None else await self.client.request("event", event=held["event"])
            )
            selected = self._selected_event()
            model.lobby_event = (
                await self.client.request("event", event=selected["event"])
                if selected is not None and selected.get("role")
                else None
            )
        except DaemonRefused:
            model.events, model.event, model.lobby_event = [], None, None
        if model.event is None and EVENT_PANEL in (model.panel, model.folded):
            model.panel, model.folded = model.panels()[0], TABLE

    def _lobby_rows(self) -> int:
        return len(self.model.tables) + len(self.model.events)

    def _daemon_gone(self) -> None:
        if self.model.connected:
            self.model.connected = False
            self.model.say(self.texts("daemon_gone", home=self.model.home), error=True)

    async def _listen(self) -> None:
        """Every event from the daemon marks the screen out of date; the daemon going away
        is said once, and the client reconnects when it comes back."""
        while True:
            async for event in self.client.screen_events():
                if isinstance(event, Disconnected):
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
        if op.startswith("event"):
            self._events_asked = -self.poll  # what it changed, on screen at the next refresh
        try:
            result = await self.client.request(op, **params)
        except DaemonRefused as error:
            self.model.say(self.texts.refusal(str(error), error.code, error.params), error=True)
        except DaemonUnavailable:
            self._daemon_gone()
        else:
            if (
                isinstance(result, dict)
                and isinstance(result.get("bot"), str)
                and isinstance(result.get("level"), str)
            ):
                self.model.bot_levels[result["bot"]] = result["level"]
            if success is not None:
                said = {  # a list (the event bots' names) said as one
                    key: ", ".join(map(str, value)) if isinstance(value, list) else value
                    for key, value in (result.items() if isinstance(result, dict) else ())
                }
                self.model.say(self.texts(success, **said))
            else:
                self.model.say("")
        await self.refresh()

    # --- The screen ---------------------------------------------------------------------

    def screen_text(self) -> str:
        """What the screen shows, as plain text, part after part, each line whole (for tests
        and logs)."""
        parts = [
            self._title(),
            self._main(wrap=False),
            self._side(),
            self._hand(),
            self._prompt(),
            self._status(),
            self._help_line(),
        ]
        return "\n".join(fragment_list_to_text(part) for part in parts)

    def geometry(self) -> Geometry:
        size = self.app.output.get_size()
        return Geometry(size.columns, size.rows)

    def _wide(self) -> bool:
        """The panel is beside the table (at a table, on a screen wide enough for both)."""
        return self.model.at_table and self.geometry().side > 0 and not self._too_small()

    def _too_small(self) -> bool:
        """Too small a terminal for the table (the lobby, a list, draws at any size)."""
        return self.model.at_table and self.geometry().too_small

    def _showing_hand(self) -> bool:
        model = self.model
        return (
            model.view is not None
            and not model.holding
            and not model.show_help
            and model.replay is None
            and not self._too_small()
        )

    def _rows(self, part: Callable[[], StyleAndTextTuples]) -> int:
        return rows_of(part(), self.geometry().columns)

    def _layout(self) -> HSplit:
        def text(function: Callable[[], StyleAndTextTuples]) -> FormattedTextControl:
            return FormattedTextControl(function, focusable=False)

        def fitted(part: Callable[[], StyleAndTextTuples], style: str = "") -> Window:
            def function() -> StyleAndTextTuples:
                return wrap_fragments(part(), self.geometry().columns)

            return Window(
                text(function),
                height=lambda: Dimension.exact(self._rows(function)),
                wrap_lines=True,
                style=style,
            )

        fits = Condition(lambda: not self._too_small())
        self._side_window = Window(
            text(self._side), width=lambda: self.geometry().side, wrap_lines=True
        )
        return HSplit(
            [
                Window(text(self._title), height=1, style="class:title"),
                VSplit(
                    [
                        Window(text(self._main), wrap_lines=True),
                        ConditionalContainer(
                            VSplit(
                                [Window(width=1, char="│", style="class:line"), self._side_window]
                            ),
                            filter=Condition(self._wide),
                        ),
                    ]
                ),
                ConditionalContainer(fitted(self._hand), filter=Condition(self._showing_hand)),
                ConditionalContainer(
                    HSplit(
                        [
                            fitted(self._prompt),
                            fitted(self._status),
                            fitted(self._help_line, "class:help"),
                        ]
                    ),
                    filter=fits,
                ),
            ]
        )

    def _title(self) -> StyleAndTextTuples:
        status = self.model.status or {}
        return [
            (
                "",
                self.texts(
                    "title",
                    name=status.get("name", "?"),
                    fingerprint=status.get("fingerprint", "?"),
                ),
            )
        ]

    def _main(self, wrap: bool = True) -> StyleAndTextTuples:
        """The table — or in its place a page (the lobby, the help, a replay, a summary, a
        panel folded away), its lines broken between words unless not to ``wrap``."""
        page = self._page()
        if page is not None:
            geometry = self.geometry()
            width = geometry.main if self._wide() else geometry.columns  # the panel's, or none
            return wrap_fragments(page, width) if wrap else page
        fixed = (
            1
            + self._rows(self._hand)
            + self._rows(self._prompt)
            + self._rows(self._status)
            + self._rows(self._help_line)
        )
        return table_fragments(self.model, *self.geometry().table(fixed))

    def _page(self) -> StyleAndTextTuples | None:
        """What takes the table's place, if anything does."""
        model, geometry = self.model, self.geometry()
        if self._too_small():
            now = f"{geometry.columns}×{geometry.rows}"
            return [
                (
                    "class:error",
                    self.texts("too_small", columns=MIN_COLUMNS, rows=MIN_ROWS, now=now),
                ),
                ("", "\n"),
                *self._prompt(),
            ]
        if model.show_help:
            return [("", self.texts("help"))]
        if not model.at_table:
            return lobby_fragments(model)
        if model.replay is not None:
            return replay_fragments(model)
        if not self._wide() and model.folded != TABLE:
            return self._panel(model.folded, geometry.main)
        if model.holding:  # the round over: its last deal stays until the player moves on
            shown = model.shown()
            return [
                *summary_fragments(shown),
                ("", "\n"),
                *sheet_fragments(shown, width=geometry.main),
            ]
        state = model.state or {}
        if (
            state.get("between_deals")
            or state.get("finished")
            or model.view is None
            and state.get("results")
        ):
            return [
                *summary_fragments(model),
                ("", "\n"),
                *sheet_fragments(model, width=geometry.main),
            ]
        return None

    def _side(self) -> StyleAndTextTuples:
        geometry = self.geometry()
        return self._panel(self.model.panel, geometry.side or geometry.main, self._side_window)

    def _panel(self, panel: str, width: int, window: Window | None = None) -> StyleAndTextTuples:
        """The log of the deal (its newest lines in sight), the score sheet or the event."""
        if panel == "sheet":
            sheet = sheet_fragments(self.model.shown(), compact=window is not None, width=width)
            return wrap_fragments(sheet, width)
        if panel == EVENT_PANEL:
            return wrap_fragments(event_fragments(self.model, compact=window is not None), width)
        info = window.render_info if window is not None else None
        height = info.window_height if info else max(1, self.geometry().rows - 4)
        lines = deal_log(self.model.shown())
        return [("", "\n".join(last_rows(lines, max(1, width), height)))]

    def _hand(self) -> StyleAndTextTuples:
        return hand_fragments(self.model, self.click_card)

    def _prompt(self) -> StyleAndTextTuples:
        model = self.model
        if model.quit_asked:  # at a table, or too small a terminal to show one
            return [("class:error", self.texts(f"quit_{model.quitting.value}", home=model.home))]
        if model.holding and model.replay is None:
            return [("class:prompt", self.texts("round_over_next"))]
        return (
            prompt_fragments(model, self.click_option)
            if model.at_table and model.replay is None
            else []
        )

    def _status(self) -> StyleAndTextTuples:
        return [("class:error" if self.model.error else "class:info", self.model.message)]

    def _help_line(self) -> StyleAndTextTuples:
        return [
            (
                "",
                self.texts(f"keys_{self.phase()}")
                if self.model.at_table or self.model.show_help
                else self.texts("lobby_keys"),
            )
        ]

    def phase(self) -> str:
        """What the keys do now, for the help line: the decision, the picking, the replay."""
        model, state = self.model, self.model.state or {}
        if model.show_help:
            return "help"
        if model.replay is not None:
            return "replay"
        if model.holding:
            return "held"
        if state.get("finished"):
            return "finished"
        if state.get("between_deals"):
            return "between"
        if model.poignee is not None:
            return "poignee"
        if model.decision in ("bidding", "call", "chelem", "ecart", "playing"):
            return str(model.decision)
        return "waiting"

    # --- The player's actions -----------------------------------------------------------

    def _refused(self, refusal: Refusal | None) -> None:
        if refusal is not None:
            self.model.say(self.texts(refusal.key, **refusal.params), error=True)
        else:
            self.model.say("")

    def move(self, step: int) -> None:
        if self.model.replay is not None:
            replay_step(self.model, tricks=step)
        elif self.model.choice is not None:
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
        """Enter: send the decision in progress, if it is complete.  Between deals it does
        nothing but say so: a player reading the sheet who presses Enter again and again must
        not start the next deal and pass its first bid."""
        model = self.model
        state = model.state or {}
        if not model.at_table:
            self._join_selected()
            self._enter_event()
        elif model.replay is not None:
            replay_step(model, tricks=1)
        elif model.holding:
            model.release()
        elif state.get("between_deals") or state.get("finished"):
            model.say(self.texts("enter_between"))
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
        """A click on a card: mark it (écart, poignée) or play it — or the rule that
        refuses it."""
        model = self.model
        if model.cursor is None:
            return
        if model.ecart is not None or model.poignee is not None:
            model.cursor.index = model.cursor.cards.index(code)
            self.mark()
        elif model.cursor.select(code):
            self.confirm()
        else:
            refusal = card_refusal(model.view or {}, model.hand, code)
            self._refused(refusal or Refusal("not_legal"))

    def click_option(self, option: str) -> None:
        if self.model.choice is not None and self.model.choice.select(option):
            self.confirm()

    def quit(self) -> None:
        """q: quit at once in the lobby or once the game is over; during a game, first say
        what quitting does to it (kept, resumable, or gone) and wait for a second q."""
        model, state = self.model, self.model.state or {}
        if model.quit_asked or not model.at_table or state.get("finished"):
            self.app.exit(result=0)
        else:
            model.quit_asked = True

    def toggle_replay(self) -> None:
        """r: step through the scored deals trick by trick (from the last one), or stop."""
        model = self.model
        if model.replay is not None:
            model.replay = None
        elif not model.at_table or (replay := start_replay(model)) is None:
            unplayed = model.at_table and any_scored(model)
            model.say(self.texts("no_replay_unplayed" if unplayed else "no_replay"), error=True)
        else:
            model.replay = replay

    def tab(self) -> None:
        """Tab: the other panel beside the table; on a narrow screen, the table, the log and
        the sheet in turn in the same place."""
        model = self.model
        if self._wide():
            panels = model.panels()
            model.panel = (
                panels[(panels.index(model.panel) + 1) % len(panels)]
                if model.panel in panels
                else panels[0]
            )
        else:
            folded = model.folded_panels()
            model.folded = (
                folded[(folded.index(model.folded) + 1) % len(folded)]
                if model.folded in folded
                else TABLE
            )

    def escape(self) -> None:
        model = self.model
        if model.show_help:
            model.show_help = False
        elif model.replay is not None:
            model.replay = None
        elif model.poignee is not None:
            model.cancel_poignee()

    def poignee(self) -> None:
        """m: pick the trumps of a poignée — or why none can be shown now."""
        if not self.model.start_poignee():
            self._refused(poignee_refusal(self.model.view, self.model.decision, self.model.hand))

    def _selected(self) -> dict[str, Any] | None:
        """The table under the lobby's cursor, if it is one to join (not ours)."""
        tables = self.model.tables
        if not self.model.at_table and tables and 0 <= self.model.lobby_index < len(tables):
            table = tables[self.model.lobby_index]
            return None if table is our_table(self.model) else table
        return None

    def _selected_event(self) -> dict[str, Any] | None:
        """The event under the lobby's cursor (the events are listed after the tables)."""
        index = self.model.lobby_index - len(self.model.tables)
        events = self.model.events
        return events[index] if not self.model.at_table and 0 <= index < len(events) else None

    def _selected_summary(self) -> dict[str, Any] | None:
        """The daemon's ``event`` for the event under the cursor, when the client has it."""
        event = self._selected_event()
        if event is None:
            return None
        return next(
            (
                summary
                for summary in (self.model.lobby_event, self.model.event)
                if summary is not None and summary.get("event") == event["event"]
            ),
            None,
        )

    def _enter_event(self) -> None:
        """Enter on an event: register our player with it — the organiser's too, to play in
        its own event from its own daemon (``e`` starts it: two keys, since an organiser
        pressing Enter to play must not seat round 1 without itself)."""
        event = self._selected_event()
        if event is None:
            return
        summary = self._selected_summary()
        ours = (self.model.status or {}).get("fingerprint")
        registered = summary is not None and any(
            p.get("fingerprint") == ours for p in summary.get("players", ())
        )
        if event.get("role") is None:
            self._send("event-join", "event_joined", event=event["event"])
        elif event.get("role") == "organiser" and not registered:
            self._send("event-join", "event_joined_own", event=event["event"])
        else:
            self.model.say(self.texts("event_nothing_to_do"))

    def _start_event(self) -> None:
        """e: the organiser seats round 1 of the event under the cursor (the daemon refuses
        once it has started); any other event is not ours to start."""
        event = self._selected_event()
        if event is None or self.model.at_table:
            return
        if event.get("role") == "organiser":
            self._send("event-start", "event_started", event=event["event"])
        else:
            self.model.say(self.texts("event_start_not_ours"), error=True)

    def _bots(self) -> None:
        """b: a bot at our table — or, on an event, ask how many event bots this daemon
        hosts for it (``tarot event join EVENT --bots N``)."""
        if self._selected_event() is not None:
            self.model.event_bots = ""
        else:
            self._in_lobby("bot", "bot_added")

    def _event_bots_keys(self, asking: Condition) -> KeyBindings:
        """While the bots' count is typed: digits go into it, Backspace takes one back, Tab
        switches their level, Enter registers them, Escape gives up."""
        keys, model = KeyBindings(), self.model

        @keys.add("<any>", filter=asking)
        def typed(event: KeyPressEvent) -> None:
            if model.event_bots is not None and event.data.isdigit() and len(event.data) == 1:
                model.event_bots = (model.event_bots + event.data)[:2]

        @keys.add("backspace", filter=asking)
        def erase(event: KeyPressEvent) -> None:
            model.event_bots = (model.event_bots or "")[:-1]

        @keys.add("tab", filter=asking)
        def level(event: KeyPressEvent) -> None:
            model.event_bots_level = "strong" if model.event_bots_level == "basic" else "basic"

        @keys.add("enter", filter=asking)
        def register(event: KeyPressEvent) -> None:
            count, selected = model.event_bots, self._selected_event()
            if not count:
                model.say(self.texts("event_bots_how_many"), error=True)
                return
            model.event_bots = None
            if selected is not None:
                self._send(
                    "event-join",
                    "event_bots_added",
                    event=selected["event"],
                    bots=int(count),
                    level=model.event_bots_level,
                )

        @keys.add("escape", filter=asking)
        def cancel(event: KeyPressEvent) -> None:
            model.event_bots = None

        return keys

    def _join_selected(self, invite: str | None = None) -> None:
        """Join the table under the cursor; an unverified one (a stranger's offer) only with
        its code: Enter there asks for it rather than sending a join."""
        table = self._selected()
        if table is not None and invite is None and table.get("verified") is False:
            self.model.invite = ""
        elif table is not None:
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
            if (
                model.invite is not None
                and len(event.data) == 1
                and (event.data.isalnum() or event.data == "-")
            ):
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
                    if model.quit_asked and action != self.quit:  # any other key: stay
                        model.quit_asked = False
                        model.say(self.texts("quit_cancelled"))
                    else:
                        action()
                    self.app.invalidate()

                for name in names:
                    keys.add(name)(handler)

            return register

        on("left", "h")(lambda: self.move(-1))
        on("right", "l")(lambda: self.move(1))
        on("up", "k")(lambda: self._vertical(-1))
        on("down", "j")(lambda: self._vertical(1))
        on("enter")(self.confirm)
        on("space")(self.mark)
        on("?")(lambda: setattr(model, "show_help", not model.show_help))
        on("tab")(self.tab)
        on("d")(lambda: setattr(model, "show_last_trick", not model.show_last_trick))
        on("m")(self.poignee)
        on("r")(self.toggle_replay)
        on("a")(self.toggle_bell)
        on("escape")(self.escape)
        on("q", "c-c")(self.quit)
        for letter, contract in BID_KEYS.items():
            on(letter)(self._letter_action(contract))
        on("y", "o")(lambda: self._chelem_letter("yes"))
        on("n")(self._next_or_no)
        for seats in (3, 4, 5):
            on(str(seats))(self._opener(seats))
        on("b")(self._bots)
        on("e")(self._start_event)
        on("x")(lambda: self._in_lobby("leave", "left"))
        on("w")(self._regroup)
        on("i")(self._type_invite)
        typing = Condition(lambda: model.invite is not None)
        asking = Condition(lambda: model.event_bots is not None)
        return merge_key_bindings(
            [
                ConditionalKeyBindings(keys, ~typing & ~asking),
                self._invite_keys(typing),
                self._event_bots_keys(asking),
            ]
        )

    def _vertical(self, step: int) -> None:
        """↑/↓: the table under the lobby's cursor, or the deal replayed."""
        model = self.model
        if model.replay is not None:
            replay_step(model, deals=step)
        elif not model.at_table:
            model.lobby_index = max(0, min(self._lobby_rows() - 1, model.lobby_index + step))
            if self._selected_event() is not None:  # its details, at the next refresh
                self._events_asked = -self.poll
                self._dirty.set()

    def _letter_action(self, contract: str) -> Callable[[], None]:
        """A bid's letter puts the pick on it (Enter bids it) — or says why it cannot."""

        def pick() -> None:
            model = self.model
            if not model.at_table:
                return
            if model.decision != "bidding" or model.choice is None:
                model.say(self.texts("not_bidding"), error=True)
            elif model.choice.select(contract):
                model.say("")
            else:
                model.say(self.texts("bid_gone", contract=CONTRACTS[contract]), error=True)

        return pick

    def _chelem_letter(self, option: str) -> None:
        model = self.model
        if model.decision == "chelem" and model.choice is not None:
            model.choice.select(option)
        elif model.at_table:
            model.say(self.texts("not_chelem"), error=True)

    def _next_or_no(self) -> None:
        if self.model.holding:
            self.model.replay = None
            self.model.release()
        elif (self.model.state or {}).get("between_deals"):
            self.model.replay = None
            self._send("next")
        else:
            self._chelem_letter("no")

    def _opener(self, seats: int) -> Callable[[], None]:
        def open_table() -> None:
            if not self.model.at_table:
                name = (self.model.status or {}).get("name", "tarot")
                self._send("open", "opened", name=str(name), seats=seats)

        return open_table

    def _regroup(self) -> None:
        """w: go on without the members gone for good, at a new table (the daemon checks)."""
        if self.model.at_table:
            self._send("regroup", "regrouped")

    def _in_lobby(self, op: str, success: str) -> None:
        if not self.model.at_table:
            self._send(op, success)
