"""The events one daemon holds, and what its store keeps of them (``docs/event.md``).

An event held here is its record (``protocol/event/event.py``) and the notes beside it: the
role this daemon plays in it, where the players' daemons listen, what the organiser withdrew
or substituted, the rows a member holds whole, and what a player still sends the organiser.
Every change goes to the store first — one transaction a write, before anything is sent or
acted on — so that a daemon restarted (:meth:`EventBook.load`) goes on from where it was; and
no entry is ever stored that the record with it does not verify.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from protocol.event.event import (
    Entry,
    EventConfig,
    EventError,
    EventRecord,
    EventReport,
    read_entries,
    verify_event,
)
from protocol.refusal import Refusal
from protocol.replication.identity import Identity
from tarotd.event_frames import EventFrame, FrameError, FrameRefused, decode
from tarotd.store import Store

log = logging.getLogger(__name__)

MAX_HEARD: Final = 32  #: events heard on the LAN remembered at once


class Role(enum.StrEnum):
    ORGANISER = "organiser"
    PLAYER = "player"


@dataclass(frozen=True)
class Heard:
    """An event an organiser's daemon announces: its config entry and where it listens."""

    config: EventConfig
    wire: bytes  #: the config entry
    endpoint: str
    count: int  #: entries its record holds


@dataclass
class Held:
    """An event this daemon takes part in, as organiser or player, and its record."""

    role: Role
    record: EventRecord
    report: EventReport
    #: players' daemons, as they registered
    endpoints: dict[bytes, str] = field(default_factory=dict)
    #: The organiser's row signatures so far: (round, table, deal) → document → seat → signature.
    signatures: dict[tuple[int, int, int], dict[bytes, dict[int, bytes]]] = field(
        default_factory=dict
    )
    #: A player's frames to the organiser, by note key, until the record holds what they carry.
    outbox: dict[str, EventFrame] = field(default_factory=dict)
    resent_at: float = 0.0
    withdrawn: set[bytes] = field(default_factory=set)  #: players the organiser withdrew
    #: a member's rows of its tables, whole, by note key
    rows: dict[str, bytes] = field(default_factory=dict)
    #: a player → who takes its place next round
    substitutes: dict[bytes, bytes] = field(default_factory=dict)

    @property
    def config(self) -> EventConfig:
        assert self.report.config is not None
        return self.report.config

    @property
    def event_id(self) -> bytes:
        return self.config.event_id

    @property
    def open_round(self) -> int | None:
        """The round opened and not closed, if one is."""
        return len(self.report.plans) if len(self.report.plans) > self.report.closed else None


class EventBook:
    """The events held here (:attr:`held`) and heard on the LAN (:attr:`heard`), and the store
    behind them: each change here is written before it is made."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.held: dict[bytes, Held] = {}
        self.heard: dict[bytes, Heard] = {}

    def load(self) -> None:
        """The events of the store, as the daemon before left them (a record it stored holds:
        it was verified before it was written; one that no longer does is said, and left)."""
        for event_id in self.store.events():
            notes = self.store.event_notes(event_id)
            try:
                record = EventRecord(read_entries(self.store.event_entries(event_id)))
            except EventError as error:
                log.error(
                    "event %s: the record in the store cannot be read (%s): left aside",
                    event_id.hex()[:8],
                    error,
                )
                continue
            report = verify_event(record)
            if not report.ok or report.config is None or "role" not in notes:
                log.error(
                    "event %s: the record in the store does not verify: left aside",
                    event_id.hex()[:8],
                )
                continue
            held = Held(Role(notes["role"].decode()), record, report)
            for key, value in notes.items():
                _take_note(held, key, value)
            self.held[event_id] = held
            log.info(
                "event %s (%s): taken up as %s, %d entries, %d rounds closed",
                event_id.hex()[:8],
                held.config.name,
                held.role.value,
                len(record.entries),
                report.closed,
            )

    def hold(self, role: Role, record: EventRecord) -> Held:
        """An event taken up here, from its config entry: stored with our role in it."""
        held = Held(role, record, verify_event(record))
        self.store.append_event_entries(held.event_id, 0, [record.entries[0].wire])
        self.store.set_event_note(held.event_id, "role", role.value.encode())
        self.held[held.event_id] = held
        return held

    def extend(self, held: Held, entries: Sequence[Entry], refusal: str) -> None:
        """``entries`` appended to the record, stored, if the record with them verifies
        (:class:`FrameRefused`, ``refusal`` and the first finding, if it does not)."""
        record = EventRecord((*held.record.entries, *entries))
        report = verify_event(record)
        if not report.ok:
            raise FrameRefused(f"{refusal}: {report.findings[0]}")
        self.store.append_event_entries(
            held.event_id, len(held.record.entries), [entry.wire for entry in entries]
        )
        held.record, held.report = record, report

    def hear(self, heard: Heard) -> None:
        """An event announced on the LAN, remembered (the oldest forgotten past
        :data:`MAX_HEARD`)."""
        event_id = heard.config.event_id
        if event_id not in self.heard and len(self.heard) >= MAX_HEARD:
            self.heard.pop(next(iter(self.heard)))
        self.heard[event_id] = heard

    def find(self, prefix: str, elsewhere: Mapping[bytes, str] | None = None) -> bytes:
        """The event whose id starts with the hexadecimal ``prefix`` (empty: the only one).
        ``elsewhere``: the names of events known beside this book, by id (those the bots a
        daemon hosts play, when it does not)."""
        names = {e: h.config.name for e, h in self.heard.items()}
        names |= dict(elsewhere or {}) | {e: h.config.name for e, h in self.held.items()}
        known = [*self.held, *(e for e in names if e not in self.held)]
        matches = [event_id for event_id in known if event_id.hex().startswith(prefix.lower())]
        if not matches:
            raise EventError("no event has that id", Refusal.EVENT_NO_SUCH_ID)
        if len(matches) > 1:
            events = ", ".join(f"{e.hex()[:8]} ({names[e]})" for e in matches)
            raise EventError(
                f"several events: give more of the id — {events}",
                Refusal.EVENT_AMBIGUOUS_ID,
                events=events,
            )
        return matches[0]

    # --- The notes beside a record ---------------------------------------------------------

    def set_endpoint(self, held: Held, player: bytes, endpoint: str) -> bool:
        """Where ``player``'s daemon listens, kept; whether it listened elsewhere before."""
        before = held.endpoints.get(player)
        if before != endpoint:
            self.store.set_event_note(held.event_id, f"endpoint/{player.hex()}", endpoint.encode())
            held.endpoints[player] = endpoint
        return before is not None and before != endpoint

    def withdraw(self, held: Held, player: bytes) -> None:
        self.store.set_event_note(held.event_id, f"withdrawn/{player.hex()}", b"")
        held.withdrawn.add(player)

    def substitute(self, held: Held, player: bytes, newcomer: bytes) -> None:
        self.store.set_event_note(held.event_id, f"substitute/{player.hex()}", newcomer)
        held.substitutes[player] = newcomer

    def keep_row(self, held: Held, note: str, wire: bytes) -> None:
        self.store.set_event_note(held.event_id, note, wire)
        held.rows[note] = wire

    def keep_sending(self, held: Held, note: str, frame: EventFrame) -> None:
        """``frame`` in the outbox: a restart sends it again."""
        self.store.set_event_note(held.event_id, note, frame.to_wire())
        held.outbox[note] = frame


def _take_note(held: Held, key: str, value: bytes) -> None:
    """One note of the store, back in ``held``."""
    if key.startswith("endpoint/"):
        held.endpoints[bytes.fromhex(key.removeprefix("endpoint/"))] = value.decode()
    elif key.startswith("substitute/"):
        held.substitutes[bytes.fromhex(key.removeprefix("substitute/"))] = value
    elif key.startswith("row/"):
        held.rows[key] = value
    elif key.startswith("withdrawn/"):
        held.withdrawn.add(bytes.fromhex(key.removeprefix("withdrawn/")))
    elif key.startswith("send/"):
        try:
            held.outbox[key] = decode(value)
        except FrameError as why:
            log.error("event %s: %s in the store left aside: %s", held.event_id.hex()[:8], key, why)


@dataclass
class Side:
    """What each side of the desk, the organiser's and the player's, works with: our
    identity, where our daemon listens, and the book of our events."""

    identity: Identity
    endpoint: Callable[[], str]
    book: EventBook

    @property
    def key(self) -> bytes:
        return self.identity.public_key
