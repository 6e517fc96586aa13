"""The state the screen draws: the daemon's last answers and the player's picks in progress.

The daemon is the truth: every change it reports is answered by asking its ``state`` again,
and :meth:`Model.update` keeps the player's cursor and marks only while the decision they
belong to is still the one to make (a new decision starts from fresh picks).
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client.events import ScreenEvent, TrickTaken
from client.tui.choose import Choice, EcartPicker, HandCursor, PoigneePicker
from client.tui.i18n import Texts
from protocol.rules.cards import card, sort_hand

#: The panels beside the table, in the order Tab shows them; the event's comes last, when the
#: player takes part in one.
PANELS = ("log", "sheet")
EVENT_PANEL = "event"
#: What takes the table's place in turn when the panel has folded away (a narrow screen).
TABLE = "table"


class Quitting(enum.Enum):
    """What quitting the client does to the game — said when ``q`` asks to confirm."""

    STAYS = "stays"  #: the daemon keeps running and keeps the seat (``tarot`` on its own)
    KEPT = "kept"  #: scripts/play --home: every daemon stops, the game is kept to resume
    GONE = "gone"  #: plain scripts/play: every daemon stops and the game is deleted


@dataclass
class Replay:
    """A scored deal stepped through trick by trick: ``deal`` indexes the results, ``trick``
    counts the tricks shown (0: the hands as dealt); ``state`` is the finished table's state
    when the deal is one of the table before (an event's last round), None for this one's."""

    deal: int
    trick: int = 0
    state: dict[str, Any] | None = None


def sorted_codes(codes: list[str]) -> list[str]:
    """A hand as a player holds it: trumps, then suits alternating colours, the Excuse."""
    return [c.code for c in sort_hand(card(code) for code in codes)]


@dataclass
class Model:
    texts: Texts
    home: Path
    #: The daemon's ``status``: our name and fingerprint, peers.
    status: dict[str, Any] | None = None
    tables: list[dict[str, Any]] = field(default_factory=list)  #: the lobby: tables seen on the LAN
    state: dict[str, Any] | None = None  #: the daemon's ``state`` for our seat
    connected: bool = False
    message: str = ""  #: the status line: the last thing that went right or wrong
    error: bool = False  #: the status line is a problem, drawn as one
    panel: str = PANELS[0]
    folded: str = TABLE  #: what a narrow screen shows in the table's place
    quitting: Quitting = Quitting.STAYS
    quit_asked: bool = False  #: ``q`` was pressed at a game that quitting would leave: confirm
    replay: Replay | None = None
    #: Bots' levels by name, as far as this client knows them (scripts/play, the lobby's ``b``).
    bot_levels: dict[str, str] = field(default_factory=dict)
    show_last_trick: bool = False
    show_help: bool = False
    lobby_index: int = 0  #: the lobby's cursor, over its tables and then its events
    #: The daemon's ``events``: the events it takes part in or hears on the LAN.
    events: list[dict[str, Any]] = field(default_factory=list)
    #: The daemon's ``event`` for tonight's (:func:`client.tui.app.tonight`): the newest with a
    #: round being played, else the newest this daemon takes part in.
    event: dict[str, Any] | None = None
    #: The daemon's ``event`` for the one under the lobby's cursor, if this daemon is in it.
    lobby_event: dict[str, Any] | None = None
    #: The invite code being typed for the table under the lobby's cursor; None: not typing.
    invite: str | None = None
    #: How many event bots to host for the event under the lobby's cursor, as typed (``b`` on
    #: an event: ``tarot event join --bots N``); None: not asking.
    event_bots: str | None = None
    #: Their level, Tab switching it while the count is typed (``--bot-level``).
    event_bots_level: str = "basic"
    #: The last view of a deal, kept when the daemon has none (between deals) for its log.
    last_view: dict[str, Any] | None = None
    #: The last trick our seat saw fall, from the daemon's events: the deal's view is gone
    #: by the time the last trick is asked for, and the log should still tell it.
    last_trick: TrickTaken | None = None
    #: The state of the table finished before this one (an event's round just over): its
    #: last deal stays on screen while :attr:`holding`, and ``r`` replays its deals.
    earlier: dict[str, Any] | None = None
    #: Its last deal's view and last trick, for its log (:attr:`last_view`, :attr:`last_trick`).
    earlier_log: tuple[dict[str, Any] | None, TrickTaken | None] = (None, None)
    #: The finished table is still shown, the new one waiting for a key (:meth:`release`).
    holding: bool = False
    # The decision in progress, reset whenever the daemon asks for another one.
    decision_key: tuple[Any, ...] | None = None
    choice: Choice | None = None  #: bids, calls, or the chelem (``no``/``yes``)
    cursor: HandCursor | None = None  #: over the hand: playing, the écart, a poignée
    ecart: EcartPicker | None = None
    poignee: PoigneePicker | None = None

    # --- What the daemon said ----------------------------------------------------------

    @property
    def at_table(self) -> bool:
        return self.state is not None and self.state.get("table") is not None

    @property
    def view(self) -> dict[str, Any] | None:
        return self.state.get("view") if self.state else None

    @property
    def seat(self) -> int | None:
        return self.state.get("seat") if self.state else None

    @property
    def decision(self) -> str | None:
        return self.state.get("decision") if self.state else None

    @property
    def options(self) -> dict[str, Any]:
        return (self.state.get("options") if self.state else None) or {}

    @property
    def hand(self) -> list[str]:
        view = self.view
        return sorted_codes(view["hand"]) if view else []

    def panels(self) -> tuple[str, ...]:
        """The panels Tab shows beside the table, in turn."""
        return (*PANELS, EVENT_PANEL) if self.event is not None else PANELS

    def folded_panels(self) -> tuple[str, ...]:
        """What Tab shows in the table's place on a narrow screen, in turn."""
        return (TABLE, *self.panels())

    def name(self, seat: int | None) -> str:
        """A seat's name as the player reads it, ``vous``/``you`` for their own."""
        if seat is None or not self.state:
            return "?"
        name = str(self.state["seats"][seat])
        return f"{name} ({self.texts('you')})" if seat == self.seat else name

    def say(self, message: str, *, error: bool = False) -> None:
        self.message, self.error = message, error

    # --- Keeping the picks in step with the daemon -------------------------------------

    def update(self, state: dict[str, Any]) -> None:
        """Take the daemon's new ``state``; start fresh picks if it asks another decision.

        A finished table followed by another (an event's next round) is kept: the player
        reads its last deal until a key lets the new table in, and can replay it after — the
        one we saw end, or the daemon's ``earlier`` when we connected since or were on the
        lobby (held only while the new table has scored nothing: past that it was read)."""
        previous = self.state
        if (
            previous is not None
            and previous.get("finished")
            and previous.get("results")
            and previous.get("table") not in (None, state.get("table"))
        ):
            self.earlier, self.holding = previous, True
            self.earlier_log = (self.last_view, self.last_trick)
            if self.replay is not None and self.replay.state is None:
                self.replay.state = previous
        earlier = state.get("earlier")  # the daemon's word, when we did not see it end
        if earlier is not None and earlier.get("table") != (self.earlier or {}).get("table"):
            self.earlier, self.earlier_log = earlier, (earlier.get("last_view"), None)
            self.holding = not state.get("results")  # nothing newer scored: not read yet
        self.state = state
        if state.get("view") is not None or not state.get("between_deals"):
            self.last_view = state.get("view")
        view = state.get("view") or {}
        key = (
            state.get("table"),
            state.get("deal"),
            state.get("decision"),
            len(view.get("bids", ())),
            len(view.get("tricks", ())),
            len(view.get("current", ())),
            len(view.get("poignees", ())),
        )
        if key == self.decision_key:
            return
        self.decision_key = key
        self.choice = self.cursor = self.ecart = self.poignee = None
        self.show_last_trick = False
        decision, options = state.get("decision"), state.get("options") or {}
        if decision == "bidding":
            self.choice = Choice(list(options["bids"]))
        elif decision == "call":
            self.choice = Choice(list(options["calls"]))
        elif decision == "chelem":
            self.choice = Choice(["no", "yes"])
        elif decision == "ecart":
            ecart = options["ecart"]
            self.ecart = EcartPicker(list(ecart["allowed"]), ecart["size"], ecart["trumps_needed"])
            # Every card under the cursor (a refused one says why), which starts on one that
            # may go: not a king, a bout, nor a trump while other cards are left.
            may_go = [
                c
                for c in self.hand
                if c in ecart["allowed"] and (ecart["trumps_needed"] or not card(c).is_trump)
            ]
            start = self.hand.index(may_go[0]) if may_go else -1
            self.cursor = HandCursor(self.hand, set(self.hand), start)
        elif decision == "playing":
            self.cursor = HandCursor(self.hand, set(options["cards"]))

    def shown(self) -> Model:
        """The model the screen draws the deals from: the finished table's while it is held."""
        if not self.holding or self.earlier is None:
            return self
        held = copy.copy(self)
        held.state, held.holding = self.earlier, False
        held.last_view, held.last_trick = self.earlier_log
        return held

    def release(self) -> None:
        """The player has read the finished table: the new one comes on screen."""
        self.holding = False

    def start_poignee(self) -> bool:
        """Begin picking the trumps of a poignée, if the daemon offers one now."""
        offer = self.options.get("poignee")
        if self.decision != "playing" or not offer:
            return False
        self.poignee = PoigneePicker(
            list(offer["trumps"]), dict(offer["sizes"]), list(offer["ecart"])
        )
        self.cursor = HandCursor(self.hand, set(offer["trumps"]))
        return True

    def cancel_poignee(self) -> None:
        self.poignee = None
        self.cursor = HandCursor(self.hand, set(self.options.get("cards", ())))

    def note(self, event: ScreenEvent) -> None:
        """An event from the daemon: the trick that falls (for the log) is kept."""
        if isinstance(event, TrickTaken) and event.seat == self.seat:
            self.last_trick = event

    def away_seats(self) -> dict[int, float]:
        return {a["seat"]: a["seconds"] for a in (self.state or {}).get("away", ())}
