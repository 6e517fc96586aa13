"""The daemon's side of an event (issue 23, ``docs/event.md``): the record over the mesh.

The record (``protocol/event/event.py``) is an event's whole state: the desk holds it, has every
entry verified before it takes it (:func:`~protocol.event.event.verify_event` on the record with
it: nothing that does not hold is ever stored), writes it to the store — one transaction a
write, before anything is sent or acted on — and tells the daemon where its player sits.
A daemon restarted reads its records back (:meth:`EventDesk.load`) and goes on from them.

**Roles.**  The *organiser's* daemon opens the event (its signed config), appends what the
players send — registrations, table manifests, rows once every member that must has signed
them — sends each new entry to every registered player's daemon, closes a round once its
last row is in and opens the next.  A *player's* daemon registers its own identity (a
registered player is its daemon's key, so each plan's seat names the daemon to reach), takes
the entries from the organiser, forms its table from each round's plan through the lobby
(:class:`~tarotd.lobby.EventSlot`), sends the table's manifest, and signs a row at the end of
every deal (:func:`~protocol.event.event.row_of_audit`) for the organiser.  What a player sent and
the record does not hold yet is sent again every :data:`RESEND_EVERY` seconds, so a
restart on either side loses nothing: the signatures it made are in its store.

**Frames** (channel :data:`CHANNEL`, msgpack maps with a ``t``):

==========  ========================================================  ====================
``event``   the config entry, the count of entries, the organiser's   organiser → everyone
            endpoint: the event is seen on the LAN and by ``--peer``
``register``  a registration entry and the player daemon's endpoint   player → organiser
``want``    the entries from an index                                 player → organiser
``entries`` entries from an index, and the players' endpoints         organiser → players
``table``   a table's signed manifest entry                           member → organiser
``rowsig``  a row's document, the member's seat and signature         member → organiser
==========  ========================================================  ====================

Anything from the LAN that does not hold — a frame of the wrong shape, a registration sent by
another daemon than its player's, a row signature by a non-member, entries that do not
verify — is refused, said in the log once per cause and sender, and changes nothing.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgpack

from protocol.event.event import (
    DealStatus,
    Entry,
    EntryKind,
    EventConfig,
    EventError,
    EventRecord,
    EventReport,
    EventRow,
    close_round,
    open_event,
    open_round,
    plan_digest,
    read_entries,
    read_row,
    register,
    row_entry,
    row_of_audit,
    sign_row,
    table_entry,
    table_id,
    verify_event,
)
from protocol.event.movement import Movement, MovementError
from protocol.event.ranking import RoundResult
from protocol.refusal import Refusal
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity, fingerprint, verify
from protocol.replication.manifest import (
    DEFAULT_SILENCE,
    MAX_NAME,
    Manifest,
    SignedManifest,
    SilenceCost,
)
from tarotd.lobby import BROADCAST, EventSlot, FrameOut, ReadyTable
from tarotd.store import Store

log = logging.getLogger(__name__)

CHANNEL: Final = "event"
RESEND_EVERY: Final = 5.0  #: seconds between two sendings of what the record does not hold yet
MAX_BATCH: Final = 512 * 1024  #: bytes of entries in one ``entries`` frame (the mesh takes 2 MiB)
MAX_HEARD: Final = 32  #: events heard on the LAN remembered at once
#: different documents signed for one row kept at once (a member may sign only its own)
MAX_VERSIONS: Final = 8
MAX_REFUSALS_SAID: Final = 64  #: (cause, sender) pairs said in the log
UNPLAYED: Final = bytes(32)  #: the head of a row abandoned before its deal began: no transcript


class Role(enum.StrEnum):
    ORGANISER = "organiser"
    PLAYER = "player"


class Refused(ValueError):
    """A frame from the LAN that does not hold; the text says why, for the log."""


@dataclass(frozen=True)
class Heard:
    """An event an organiser's daemon announces: its config entry and where it listens."""

    config: EventConfig
    wire: bytes  #: the config entry
    endpoint: str
    count: int  #: entries its record holds


@dataclass(frozen=True)
class Seating:
    """Where our player sits in a round: the slot the lobby forms, and what its rows sign."""

    event_id: bytes
    round: int
    table: int
    seat: int
    plan: bytes  #: the round plan's digest
    slot: EventSlot


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
    outbox: dict[str, dict[str, Any]] = field(default_factory=dict)
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


class EventDesk:
    """Every event of one daemon (module docstring).  Sans sockets: it returns the frames to
    send, and the daemon moves them."""

    def __init__(self, identity: Identity, endpoint: Callable[[], str], store: Store) -> None:
        self.identity = identity
        self.endpoint = endpoint
        self.store = store
        self.held: dict[bytes, Held] = {}
        self.heard: dict[bytes, Heard] = {}
        self._said: set[tuple[str, bytes, str]] = set()

    @property
    def key(self) -> bytes:
        return self.identity.public_key

    # --- From the store --------------------------------------------------------------

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
                if key.startswith("endpoint/"):
                    held.endpoints[bytes.fromhex(key.removeprefix("endpoint/"))] = value.decode()
                elif key.startswith("substitute/"):
                    held.substitutes[bytes.fromhex(key.removeprefix("substitute/"))] = value
                elif key.startswith("row/"):
                    held.rows[key] = value
                elif key.startswith("withdrawn/"):
                    held.withdrawn.add(bytes.fromhex(key.removeprefix("withdrawn/")))
                elif key.startswith("send/"):
                    held.outbox[key] = msgpack.unpackb(value, raw=False)
            self.held[event_id] = held
            log.info(
                "event %s (%s): taken up as %s, %d entries, %d rounds closed",
                event_id.hex()[:8],
                held.config.name,
                held.role.value,
                len(record.entries),
                report.closed,
            )

    # --- What the player and the organiser ask (the local API) ------------------------------

    def open(
        self,
        name: str,
        rounds: int,
        deals: int,
        table_size: int,
        movement: Movement,
        silence: SilenceCost = DEFAULT_SILENCE,
    ) -> Held:
        """Open an event organised here (EventError saying what is wrong with it)."""
        config = EventConfig(
            os.urandom(16), name, self.key, rounds, deals, table_size, movement, silence
        )
        record = open_event(self.identity, config)
        self._store(config.event_id, 0, record.entries[0].wire)
        self.store.set_event_note(config.event_id, "role", Role.ORGANISER.value.encode())
        held = self.held[config.event_id] = Held(Role.ORGANISER, record, verify_event(record))
        log.info(
            "event %s (%s) opened here: %d rounds of %d deals, tables of %d, %s movement",
            config.event_id.hex()[:8],
            name,
            rounds,
            deals,
            table_size,
            movement.value,
        )
        return held

    def join(self, event_id: bytes, name: str) -> list[FrameOut]:
        """Register our player with an event heard on the LAN."""
        organised = self.held.get(event_id)
        if organised is not None and organised.role is Role.ORGANISER:
            return self._join_own(organised, name)
        heard = self.heard.get(event_id)
        if heard is None:
            raise EventError(
                "no event of that id is heard here (tarot event list)", Refusal.EVENT_NOT_HEARD
            )
        if event_id in self.held:
            raise EventError("this daemon is in that event already", Refusal.EVENT_IN_ALREADY)
        record = EventRecord(read_entries([heard.wire]))
        self._store(event_id, 0, heard.wire)
        self.store.set_event_note(event_id, "role", Role.PLAYER.value.encode())
        held = self.held[event_id] = Held(Role.PLAYER, record, verify_event(record))
        entry = register(self.identity, event_id, name[:MAX_NAME])
        frame = {
            "t": "register",
            "event": event_id,
            "entry": entry.wire,
            "endpoint": self.endpoint(),
        }
        self._keep_sending(held, "send/register", frame)
        log.info("event %s (%s): registered as %s", event_id.hex()[:8], heard.config.name, name)
        return [(heard.config.organiser, frame)]

    def _join_own(self, held: Held, name: str) -> list[FrameOut]:
        """The organiser registers its own player: the registration goes through the same
        gate as anyone's (:meth:`_on_register`, on this daemon), and from then on its player
        is seated by the movement and signs its rows like any member — the organiser's key
        gives it no say over a row it did not sign with its table."""
        if self.key in held.report.names:
            raise EventError(
                "this daemon's player is registered in that event already",
                Refusal.EVENT_REGISTERED_ALREADY,
            )
        entry = register(self.identity, held.event_id, name[:MAX_NAME])
        frame = {
            "t": "register",
            "event": held.event_id,
            "entry": entry.wire,
            "endpoint": self.endpoint(),
        }
        try:
            outs = self._on_register(self.key, frame)
        except Refused as why:
            raise EventError(str(why)) from None
        log.info(
            "event %s (%s): the organiser's player registered as %s",
            held.event_id.hex()[:8],
            held.config.name,
            name,
        )
        return outs

    def start(self, event_id: bytes) -> list[FrameOut]:
        """The organiser opens round 1 with the players registered (EventError: too few)."""
        held = self._organised(event_id)
        if held.report.plans:
            raise EventError("the event has started already", Refusal.EVENT_STARTED)
        try:
            entry = open_round(self.identity, held.record)
        except MovementError as error:
            raise EventError(str(error), error.code, **error.params) from None
        return self._append(held, [entry])

    def close_now(self, event_id: bytes) -> list[FrameOut]:
        """The organiser closes the open round without the rows still awaited, declared lost
        (a table that never formed, or never came back): they score nothing, and the members
        who hold them signed by all can show the claim false."""
        held = self._organised(event_id)
        if held.open_round is None:
            raise EventError("no round is open", Refusal.EVENT_NO_ROUND_OPEN)
        lost = [(table, deal) for _, table, deal in held.report.pending]
        log.warning(
            "event %s: round %d closed by the organiser, %d rows declared lost",
            event_id.hex()[:8],
            held.open_round,
            len(lost),
        )
        return self._append(held, [close_round(self.identity, held.record, lost)])

    def withdraw(self, event_id: bytes, player: str) -> str:
        """The organiser leaves the place of ``player`` (a name, or a fingerprint's first
        digits) empty from the next round on; the player's name."""
        held = self._organised(event_id)
        key = _player(held, player)
        self.store.set_event_note(event_id, f"withdrawn/{key.hex()}", b"")
        held.withdrawn.add(key)
        return held.report.names[key]

    def substitute(self, event_id: bytes, newcomer: str, player: str) -> tuple[str, str]:
        """The organiser gives the place of ``player`` to ``newcomer`` (registered, with no
        place) from the next round on: a person, or a bot's daemon, that moves as the player
        would have.  The two names."""
        held = self._organised(event_id)
        new, old = _player(held, newcomer), _player(held, player)
        places = _last_places(held)
        if new in places or new in held.substitutes.values():
            raise EventError(
                f"{held.report.names[new]} holds a place already",
                Refusal.EVENT_PLACE_HELD,
                player=held.report.names[new],
            )
        self.store.set_event_note(event_id, f"substitute/{old.hex()}", new)
        held.substitutes[old] = new
        return held.report.names[new], held.report.names[old]

    def _organised(self, event_id: bytes) -> Held:
        held = self.held.get(event_id)
        if held is None or held.role is not Role.ORGANISER:
            raise EventError(
                "no event of that id is organised here", Refusal.EVENT_NOT_ORGANISED_HERE
            )
        return held

    def find(self, prefix: str) -> bytes:
        """The event whose id starts with the hexadecimal ``prefix`` (empty: the only one)."""
        known = [*self.held, *(e for e in self.heard if e not in self.held)]
        matches = [event_id for event_id in known if event_id.hex().startswith(prefix.lower())]
        if not matches:
            raise EventError("no event has that id", Refusal.EVENT_NO_SUCH_ID)
        if len(matches) > 1:
            events = ", ".join(f"{e.hex()[:8]} ({self._name_of(e)})" for e in matches)
            raise EventError(
                f"several events: give more of the id — {events}",
                Refusal.EVENT_AMBIGUOUS_ID,
                events=events,
            )
        return matches[0]

    def _name_of(self, event_id: bytes) -> str:
        held = self.held.get(event_id)
        return (held.config if held is not None else self.heard[event_id].config).name

    # --- Where our player sits ------------------------------------------------------------

    def seatings(self) -> list[Seating]:
        """The tables our player sits at in the rounds open now."""
        seatings = []
        for held in self.held.values():
            round_ = held.open_round
            if round_ is None:  # the organiser's daemon too: its player, if it plays, sits
                continue
            plan = held.report.plans[round_ - 1]
            number = plan.table_of(self.key)
            if number is None:
                continue
            members = plan.tables[number - 1]
            name = f"{held.config.name[: MAX_NAME - 12]} R{round_} T{number}"
            slot = EventSlot(
                table_id(held.event_id, round_, number), name, tuple(members), held.config.silence
            )
            seatings.append(
                Seating(
                    held.event_id,
                    round_,
                    number,
                    members.index(self.key),
                    plan_digest(held.event_id, plan),
                    slot,
                )
            )
        return seatings

    def seating_of(self, table_id_: bytes) -> Seating | None:
        """The seating of an event table of ours, open or past."""
        for held in self.held.values():
            for round_, plan in enumerate(held.report.plans, start=1):
                number = plan.table_of(self.key)
                if number is not None and table_id(held.event_id, round_, number) == table_id_:
                    members = plan.tables[number - 1]
                    slot = EventSlot(table_id_, "", tuple(members), held.config.silence)
                    return Seating(
                        held.event_id,
                        round_,
                        number,
                        members.index(self.key),
                        plan_digest(held.event_id, plan),
                        slot,
                    )
        return None

    def deals_of(self, table_id_: bytes) -> int | None:
        """The deals an event table plays, or None for a table of no event."""
        seating = self.seating_of(table_id_)
        return None if seating is None else self.held[seating.event_id].config.deals

    def endpoints(self, keys: Sequence[bytes]) -> list[tuple[bytes, str]]:
        """Where the daemons of these players said they listen (to link to our table mates)."""
        known: dict[bytes, str] = {}
        for held in self.held.values():
            known.update(held.endpoints)
        return [(key, known[key]) for key in keys if key in known and key != self.key]

    def fellows(self) -> frozenset[bytes]:
        """The players of the events we play in (the lobby keeps their early offers)."""
        return frozenset(
            key
            for held in self.held.values()
            if held.role is Role.PLAYER or self.key in held.report.names
            for key in held.report.names
        )

    def needs(self, key: bytes) -> bool:
        """Whether an event of ours needs the daemon of ``key``: its organiser, a player."""
        return any(
            key == held.config.organiser or key in held.report.names for held in self.held.values()
        )

    # --- What our tables did ------------------------------------------------------------

    def table_ready(self, ready: ReadyTable) -> list[FrameOut]:
        """Our event table formed: its signed manifest goes to the organiser."""
        seating = self.seating_of(ready.setup.table_id)
        if seating is None:
            return []
        held = self.held[seating.event_id]
        entry = table_entry(SignedManifest(ready.manifest, ready.signatures))
        frame = {"t": "table", "event": held.event_id, "entry": entry.wire}
        return self._keep_sending(held, f"send/table/{seating.round}/{seating.table}", frame)

    def scored(self, table_id_: bytes, deal: int, head: bytes, audit: DealAudit) -> list[FrameOut]:
        """A deal of an event table audited here (``deal`` from 0): our player signs its row."""
        seating = self.seating_of(table_id_)
        if seating is None:
            return []
        row = row_of_audit(
            seating.round, seating.table, deal + 1, seating.plan, table_id_, head, audit
        )
        return self._sign(seating, row)

    def abandon(self, table_id_: bytes, completed: int, gone: Sequence[int]) -> list[FrameOut]:
        """Our event table stops after ``completed`` deals, members ``gone`` for good: our player
        signs the rows of the deals left as abandoned, the gone seats silent.  No transcript
        stands behind them: their head is :data:`UNPLAYED`."""
        seating = self.seating_of(table_id_)
        if seating is None:
            return []
        players, outs = len(seating.slot.keys), []
        for deal in range(completed + 1, self.held[seating.event_id].config.deals + 1):
            row = EventRow(
                seating.round,
                seating.table,
                deal,
                seating.plan,
                table_id_,
                UNPLAYED,
                DealStatus.ABANDONED,
                (0,) * players,
                (),
                tuple(sorted(gone)),
            )
            outs += self._sign(seating, row)
        return outs

    def _sign(self, seating: Seating, row: EventRow) -> list[FrameOut]:
        """Our player's signature of ``row``: to the organiser (until the record holds the row)
        and to the other members' daemons, each gathering the whole row."""
        held = self.held[seating.event_id]
        signature, document = (
            sign_row(self.identity, held.event_id, row),
            row.document(held.event_id),
        )
        frame = {
            "t": "rowsig",
            "event": held.event_id,
            "row": document,
            "seat": seating.seat,
            "sig": signature,
        }
        outs = [(key, frame) for key in seating.slot.keys if key != self.key]
        outs += self._keep_sending(held, f"send/row/{row.round}/{row.table}/{row.deal}", frame)
        if held.role is Role.ORGANISER:
            return outs  # its record gathers the row: it is its own whole copy
        try:
            return outs + self._gather_as_member(held, row, document, seating.seat, signature)
        except Refused as why:  # never from an honest table; the organiser still gathers the row
            log.warning(
                "event %s: our own row signature not kept: %s", held.event_id.hex()[:8], why
            )
            return outs

    def _keep_sending(self, held: Held, note: str, frame: dict[str, Any]) -> list[FrameOut]:
        """Store ``frame`` (so a restart sends it again), then send it to the organiser."""
        self.store.set_event_note(held.event_id, note, msgpack.packb(frame, use_bin_type=True))
        held.outbox[note] = frame
        return self._to_organiser(held, frame)

    def _to_organiser(self, held: Held, frame: dict[str, Any]) -> list[FrameOut]:
        """To the organiser's daemon; the organiser's own player hands it to its own record,
        through the same handler as a frame from the LAN — kept and handed again like any
        player's until the record holds it: a signature gathered in memory is lost with a
        restart."""
        if held.role is Role.ORGANISER:
            return self.receive(self.key, frame)
        return [(held.config.organiser, frame)]

    # --- The heartbeat ------------------------------------------------------------------

    def heartbeat(self, now: float) -> list[FrameOut]:
        """Our events announced; what the records do not hold yet sent again."""
        outs: list[FrameOut] = []
        for held in self.held.values():
            if held.role is Role.ORGANISER and held.report.closed < held.config.rounds:
                frame = {
                    "t": "event",
                    "event": held.event_id,
                    "config": held.record.entries[0].wire,
                    "count": len(held.record.entries),
                    "endpoint": self.endpoint(),
                }
                outs.append((BROADCAST, frame))
            if held.outbox and now >= held.resent_at + RESEND_EVERY:
                held.resent_at = now
                for note in list(held.outbox):
                    if self._holds(held, note):
                        del held.outbox[note]
                    else:
                        outs += self._to_organiser(held, held.outbox[note])
        return outs

    def _holds(self, held: Held, note: str) -> bool:
        """Whether the record holds what the frame under ``note`` carries (or no longer can)."""
        parts = note.split("/")
        if parts[1] == "register":
            return self.key in held.report.names
        round_ = int(parts[2])
        if round_ <= held.report.closed:
            return True
        if parts[1] == "table":
            wire = held.outbox[note]["entry"]
            return any(entry.wire == wire for entry in held.record.entries)
        return (round_, int(parts[3]), int(parts[4])) not in held.report.pending

    # --- Frames from the LAN ------------------------------------------------------------

    def receive(self, sender: bytes, frame: object) -> list[FrameOut]:
        """A frame of :data:`CHANNEL`; whatever does not hold is refused and said."""
        try:
            if not isinstance(frame, dict) or not isinstance(frame.get("t"), str):
                raise Refused("not an event frame")
            handler = _HANDLERS.get(frame["t"])
            if handler is None:
                raise Refused(f"an unknown event frame {frame['t'][:16]!r}")
            return handler(self, sender, frame)
        except KeyError as missing:
            self._refuse(_kind(frame), sender, f"the field {missing} is missing")
        except (Refused, EventError, TypeError, ValueError) as why:
            self._refuse(_kind(frame), sender, str(why))
        return []

    def _refuse(self, kind: str, sender: bytes, why: str) -> None:
        """Said once per kind of frame, sender and reason, and not past :data:`MAX_REFUSALS_SAID`:
        a stranger repeating a frame does not fill the log."""
        if (kind, sender, why) in self._said or len(self._said) >= MAX_REFUSALS_SAID:
            return
        self._said.add((kind, sender, why))
        log.warning(
            "event: refused a %s frame from %s, nothing changed: %s", kind, fingerprint(sender), why
        )

    def _event_of(self, frame: dict[str, Any], role: Role) -> Held:
        event_id = frame["event"]
        held = self.held.get(event_id) if isinstance(event_id, bytes) else None
        if held is None or held.role is not role:
            raise Refused(
                "an event this daemon is not in"
                if role is Role.PLAYER
                else "an event not organised here"
            )
        return held

    def _on_event(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        (config_entry,) = read_entries([frame["config"]])
        report = verify_event(EventRecord((config_entry,)))
        count, endpoint = frame["count"], frame["endpoint"]
        if report.config is None or not report.ok or report.config.organiser != sender:
            raise Refused("its config is not one signed by the daemon that sent it")
        if (
            type(count) is not int
            or count < 1
            or not isinstance(endpoint, str)
            or len(endpoint) > 256
        ):
            raise Refused("its count or endpoint is malformed")
        event_id = report.config.event_id
        if event_id not in self.heard and len(self.heard) >= MAX_HEARD:
            self.heard.pop(next(iter(self.heard)))
        self.heard[event_id] = Heard(report.config, config_entry.wire, endpoint, count)
        held = self.held.get(event_id)
        if (
            held is not None
            and held.role is Role.PLAYER
            and self.key in held.report.names  # before: our registration brings the entries
            and count > len(held.record.entries)
        ):
            return [(sender, {"t": "want", "event": event_id, "from": len(held.record.entries)})]
        return []

    def _on_register(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        held = self._event_of(frame, Role.ORGANISER)
        (entry,) = read_entries([frame["entry"]])
        endpoint = frame["endpoint"]
        if (
            entry.kind is not EntryKind.REGISTER
            or not isinstance(endpoint, str)
            or len(endpoint) > 256
        ):
            raise Refused("not a registration, with the endpoint of the player's daemon")
        player = msgpack.unpackb(entry.document, raw=False)[1]
        if player != sender:
            raise Refused(
                f"a registration of {fingerprint(player) if isinstance(player, bytes) else '?'} "
                "sent by "
                "another daemon: a daemon registers its own player"
            )
        if held.endpoints.get(sender) != endpoint:
            self.store.set_event_note(held.event_id, f"endpoint/{sender.hex()}", endpoint.encode())
            held.endpoints[sender] = endpoint
        if any(e.wire == entry.wire for e in held.record.entries):
            # registered before: it may have lost what it had
            return self._entries_from(held, sender, 0)
        if sender in held.report.names:
            raise Refused("the player is registered already, under another name")
        outs = self._append(held, [entry])
        return outs + (
            [] if any(d == sender for d, _ in outs) else self._entries_from(held, sender, 0)
        )

    def _on_want(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        held = self._event_of(frame, Role.ORGANISER)
        start = frame["from"]
        if sender not in held.report.names or type(start) is not int or start < 0:
            raise Refused("a want from no registered player, or of no index")
        return self._entries_from(held, sender, start)

    def _on_entries(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        held = self._event_of(frame, Role.PLAYER)
        start, wires, endpoints = frame["from"], frame["entries"], frame["endpoints"]
        if sender != held.config.organiser:
            raise Refused("entries sent by another daemon than the organiser")
        if type(start) is not int or type(wires) is not list or type(endpoints) is not list:
            raise Refused("malformed entries")
        self._learn_endpoints(held, endpoints)
        have = len(held.record.entries)
        if start > have:
            return [(sender, {"t": "want", "event": held.event_id, "from": have})]
        entries = read_entries(wires)
        overlap = held.record.entries[start : start + len(entries)]
        if any(mine.wire != theirs.wire for mine, theirs in zip(overlap, entries)):
            raise Refused(
                "entries that contradict the record held here: the organiser rewrote its record"
            )
        fresh = list(entries[len(overlap) :])
        if fresh:
            self._take(held, fresh)
        return []

    def _learn_endpoints(self, held: Held, endpoints: list[object]) -> None:
        """Where the organiser says the players' daemons listen; kept in the store, so that a
        daemon restarted before its table forms still reaches its table mates."""
        for item in endpoints[:1024]:
            if (
                type(item) is list
                and len(item) == 2
                and isinstance(item[0], bytes)
                and isinstance(item[1], str)
                and len(item[1]) <= 256
                and held.endpoints.get(item[0]) != item[1]
            ):
                self.store.set_event_note(
                    held.event_id, f"endpoint/{item[0].hex()}", item[1].encode()
                )
                held.endpoints[item[0]] = item[1]

    def _on_table(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        held = self._event_of(frame, Role.ORGANISER)
        (entry,) = read_entries([frame["entry"]])
        if entry.kind is not EntryKind.TABLE:
            raise Refused("not a table manifest")
        if any(e.wire == entry.wire for e in held.record.entries):
            return []  # another member sent it first
        return self._append(held, [entry])

    def _on_rowsig(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """A member's signature of a row: the organiser's daemon gathers them into the row it
        appends; a fellow member's daemon into the whole row it keeps, and sends the
        organiser in turn — so that every member holds every row of its table signed by all,
        and a row the organiser does not record (one it declares lost) can be shown."""
        event_id = frame["event"]
        held = self.held.get(event_id) if isinstance(event_id, bytes) else None
        if held is None:
            raise Refused("an event this daemon is not in")
        document, seat, signature = frame["row"], frame["seat"], frame["sig"]
        if (
            not isinstance(document, bytes)
            or type(seat) is not int
            or not isinstance(signature, bytes)
        ):
            raise Refused("a row signature is [row, seat, signature]")
        row_event, row = read_row(document)
        slot = (row.round, row.table, row.deal)
        if row_event != held.event_id:
            raise Refused("a row of another event")
        if held.role is Role.PLAYER:
            return self._gather_as_member(held, row, document, seat, signature)
        if slot not in held.report.pending:
            return []  # in the record already (a member sending again), or of no deal pending
        manifest = _manifest_of(held, row.table_id)
        if manifest is None:
            return []  # its table's manifest is not in yet: the member sends again
        entry = self._gather(held, row, document, seat, signature, manifest.keys)
        return [] if entry is None else self._append(held, [entry])

    def _gather_as_member(
        self, held: Held, row: EventRow, document: bytes, seat: int, signature: bytes
    ) -> list[FrameOut]:
        seating = self.seating_of(row.table_id)
        if seating is None or (seating.round, seating.table) != (row.round, row.table):
            raise Refused("a row signature of a table our player does not sit at")
        note = f"row/{row.round}/{row.table}/{row.deal}"
        if note in held.rows:
            return []  # whole already
        entry = self._gather(held, row, document, seat, signature, seating.slot.keys)
        if entry is None:
            return []
        self.store.set_event_note(held.event_id, note, entry.wire)
        held.rows[note] = entry.wire
        frame = {"t": "row", "event": held.event_id, "entry": entry.wire}
        return self._keep_sending(held, f"send/{note}", frame)  # in place of our signature alone

    def _gather(
        self,
        held: Held,
        row: EventRow,
        document: bytes,
        seat: int,
        signature: bytes,
        keys: Sequence[bytes],
    ) -> Entry | None:
        """Take one member's signature of ``row``; the row with every signature it needs (all
        but the silent seats'), once they are in."""
        if not 0 <= seat < len(keys) or not verify(
            keys[seat], signature, EntryKind.ROW.domain + document
        ):
            raise Refused(
                f"a signature of round {row.round}, table {row.table}, deal {row.deal} that is "
                "not the "
                f"member's of seat {seat}"
            )
        slot = (row.round, row.table, row.deal)
        versions = held.signatures.setdefault(slot, {})
        if document not in versions and len(versions) >= MAX_VERSIONS:
            raise Refused(
                f"more than {MAX_VERSIONS} versions of the row of round {row.round}, table "
                f"{row.table}, "
                f"deal {row.deal}"
            )
        if document not in versions and versions:
            log.warning(
                "event %s: the members of table %d sign different rows for deal %d of round %d: "
                "the row waits "
                "until every member signs one of them",
                held.event_id.hex()[:8],
                row.table,
                row.deal,
                row.round,
            )
        signed = versions.setdefault(document, {})
        signed[seat] = signature
        if not all(s in signed for s in range(len(keys)) if s not in row.silent):
            return None
        del held.signatures[slot]
        return row_entry(held.event_id, row, [signed.get(s) for s in range(len(keys))])

    def _on_row(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """A row whole, from a member of its table: appended if the record still waits for it."""
        held = self._event_of(frame, Role.ORGANISER)
        (entry,) = read_entries([frame["entry"]])
        if entry.kind is not EntryKind.ROW:
            raise Refused("not a row")
        _, row = read_row(entry.document)
        if (row.round, row.table, row.deal) not in held.report.pending:
            return []  # in the record already, gathered from the signatures
        return self._append(held, [entry])

    # --- The record ---------------------------------------------------------------------

    def _append(self, held: Held, entries: Sequence[Any]) -> list[FrameOut]:
        """The organiser appends ``entries`` if the record with them verifies, stores them, sends
        them to every player, and closes or opens rounds as the rows allow."""
        outs: list[FrameOut] = []
        while entries:
            start = len(held.record.entries)
            record = EventRecord((*held.record.entries, *entries))
            report = verify_event(record)
            if not report.ok:
                raise Refused(f"it would not verify: {report.findings[0]}")
            self._store(held.event_id, start, *(entry.wire for entry in entries))
            held.record, held.report = record, report
            for player in report.names:
                if player != self.key:
                    outs += self._entries_from(held, player, start)
            entries = self._next_step(held)
        return outs

    def _next_step(self, held: Held) -> list[Any]:
        """The round closed once its last row is in, and the next one opened."""
        report = held.report
        if held.open_round is not None and not report.pending:
            log.info(
                "event %s: round %d complete, closed", held.event_id.hex()[:8], held.open_round
            )
            return [close_round(self.identity, held.record)]
        if held.open_round is None and 0 < report.closed < held.config.rounds:
            places = _places_for_the_next_round(held)
            try:
                return [open_round(self.identity, held.record, places)]
            except MovementError as error:
                log.error(
                    "event %s: round %d cannot be seated: %s",
                    held.event_id.hex()[:8],
                    report.closed + 1,
                    error,
                )
        return []

    def _take(self, held: Held, entries: Sequence[Any]) -> None:
        """A player takes the organiser's entries, if the record with them verifies."""
        record = EventRecord((*held.record.entries, *entries))
        report = verify_event(record)
        if not report.ok:
            raise Refused(f"entries that do not verify: {report.findings[0]}")
        self._store(held.event_id, len(held.record.entries), *(entry.wire for entry in entries))
        before = held.open_round
        held.record, held.report = record, report
        if held.open_round is not None and held.open_round != before:
            log.info("event %s: round %d open", held.event_id.hex()[:8], held.open_round)

    def _store(self, event_id: bytes, start: int, *wires: bytes) -> None:
        self.store.append_event_entries(event_id, start, list(wires))

    def _entries_from(self, held: Held, player: bytes, start: int) -> list[FrameOut]:
        """The entries from ``start`` for ``player``'s daemon, in frames of at most
        :data:`MAX_BATCH` bytes, with the endpoints of the players."""
        endpoints = [[key, endpoint] for key, endpoint in held.endpoints.items()]
        outs: list[FrameOut] = []
        batch: list[bytes] = []
        size = 0
        for entry in held.record.entries[start:]:
            if batch and size + len(entry.wire) > MAX_BATCH:
                outs.append(
                    (
                        player,
                        {
                            "t": "entries",
                            "event": held.event_id,
                            "from": start,
                            "entries": batch,
                            "endpoints": endpoints,
                        },
                    )
                )
                start, batch, size = start + len(batch), [], 0
            batch.append(entry.wire)
            size += len(entry.wire)
        if batch:
            outs.append(
                (
                    player,
                    {
                        "t": "entries",
                        "event": held.event_id,
                        "from": start,
                        "entries": batch,
                        "endpoints": endpoints,
                    },
                )
            )
        return outs

    # --- What the local API shows -------------------------------------------------------

    def summary(self, held: Held) -> dict[str, Any]:
        """The event as the client shows it: config, players, each round's tables, the live
        ranking, the rows still awaited, where our player sits."""
        config, report = held.config, held.report
        names = report.names
        seating = next((s for s in self.seatings() if s.event_id == held.event_id), None)
        return {
            "event": held.event_id.hex(),
            "name": config.name,
            "role": held.role.value,
            "organiser": fingerprint(config.organiser),
            "rounds": config.rounds,
            "deals": config.deals,
            "tables": config.table_size,
            "movement": config.movement.value,
            "silence": config.silence.value,
            "players": [
                {"name": name, "fingerprint": fingerprint(key)} for key, name in names.items()
            ],
            "plans": [
                {
                    "round": plan.round,
                    "movement": plan.movement.value,
                    "tables": [
                        [names.get(key, fingerprint(key)) for key in table] for table in plan.tables
                    ],
                }
                for plan in report.plans
            ],
            "closed": report.closed,
            "open": held.open_round,
            "pending": [list(slot) for slot in report.pending],
            "ranking": [
                {
                    "place": s.place,
                    "name": names.get(s.player, fingerprint(s.player)),
                    "fingerprint": fingerprint(s.player),
                    "total": s.total,
                    "rounds": [[r.points, r.mark.value, _rows_in(report, r)] for r in s.rounds],
                }
                for s in report.live
            ],
            "seat": None
            if seating is None
            else {
                "round": seating.round,
                "table": seating.table,
                "seat": seating.seat,
                "with": [names.get(k, fingerprint(k)) for k in seating.slot.keys if k != self.key],
            },
            "findings": [str(finding) for finding in report.findings],
            "entries": len(held.record.entries),
        }

    def listing(self) -> list[dict[str, Any]]:
        """Every event held here, in the order this daemon took them up (tonight's last), then
        those heard on the LAN; ``open`` is the round being played, if one is."""
        rows: list[dict[str, Any]] = [
            {
                "event": e.hex(),
                "name": h.config.name,
                "role": h.role.value,
                "organiser": fingerprint(h.config.organiser),
                "players": len(h.report.names),
                "closed": h.report.closed,
                "rounds": h.config.rounds,
                "open": h.open_round,
            }
            for e, h in self.held.items()
        ]
        rows += [
            {
                "event": e.hex(),
                "name": h.config.name,
                "role": None,
                "organiser": fingerprint(h.config.organiser),
                "players": None,
                "closed": None,
                "rounds": h.config.rounds,
                "open": None,
            }
            for e, h in self.heard.items()
            if e not in self.held
        ]
        return rows


def _places_for_the_next_round(held: Held) -> list[bytes | None]:
    """The places of the round just closed, for the next: a substitute the organiser named
    takes over its player's place; the players its tables' last rows name silent (gone when
    the round ended, not for a moment of it) and those the organiser withdrew leave theirs
    empty — a laptop that died does not hold up the next round's table.  The organiser's round
    entry signs who sits; the ranking shows the others absent."""
    round_ = held.report.closed
    gone = set(held.withdrawn)
    for number, members in enumerate(held.report.plans[round_ - 1].tables, start=1):
        rows = held.report.results.get((round_, number), ())
        if rows:
            gone |= {members[seat] for seat in max(rows, key=lambda row: row.deal).silent}
    places: list[bytes | None] = []
    for key in _last_places(held):
        if key is not None and key in held.substitutes:
            places.append(held.substitutes[key])
            log.info(
                "event %s: %s takes the place of %s from round %d",
                held.event_id.hex()[:8],
                held.report.names[held.substitutes[key]],
                held.report.names[key],
                round_ + 1,
            )
        elif key is not None and key in gone:
            places.append(None)
            log.info(
                "event %s: %s left: its place stays empty from round %d",
                held.event_id.hex()[:8],
                held.report.names.get(key, fingerprint(key)),
                round_ + 1,
            )
        else:
            places.append(key)
    return places


def _last_places(held: Held) -> list[bytes | None]:
    """The places of the last round opened (its organiser's entry says them)."""
    document = next(e.document for e in reversed(held.record.entries) if e.kind is EntryKind.ROUND)
    places: list[bytes | None] = msgpack.unpackb(document, raw=False)[3]
    return places


def _player(held: Held, who: str) -> bytes:
    """The registered player named ``who``, or whose fingerprint starts with it."""
    digits = who.replace("-", "").lower()
    matches = [
        key
        for key, name in held.report.names.items()
        if name == who or (digits and fingerprint(key).replace("-", "").startswith(digits))
    ]
    if not matches:
        raise EventError(
            f"{who!r} is no registered player", Refusal.EVENT_PLAYER_UNKNOWN, player=who
        )
    if len(matches) > 1:
        raise EventError(
            f"{who!r} is more than one registered player",
            Refusal.EVENT_PLAYER_AMBIGUOUS,
            player=who,
        )
    return matches[0]


def _kind(frame: object) -> str:
    """The kind a frame says it is, as the log shows it."""
    kind = frame.get("t") if isinstance(frame, dict) else None
    return kind[:16] if isinstance(kind, str) else "malformed"


def _manifest_of(held: Held, table_id_: bytes) -> Manifest | None:
    for entry in held.record.entries:
        if entry.kind is EntryKind.TABLE:
            manifest = Manifest.from_bytes(entry.document)
            if manifest.table_id == table_id_:
                return manifest
    return None


_HANDLERS: Final[dict[str, Callable[[EventDesk, bytes, dict[str, Any]], list[FrameOut]]]] = {
    "event": EventDesk._on_event,
    "register": EventDesk._on_register,
    "want": EventDesk._on_want,
    "entries": EventDesk._on_entries,
    "table": EventDesk._on_table,
    "rowsig": EventDesk._on_rowsig,
    "row": EventDesk._on_row,
}


def _rows_in(report: EventReport, result: RoundResult) -> int:
    """The rows in of the table ``result`` sat at: how far a round in progress has gone."""
    return 0 if result.table is None else len(report.results.get((result.round, result.table), ()))
