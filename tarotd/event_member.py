"""The player's side of an event (``docs/event.md``): its daemon follows the record.

A player's daemon registers its own identity (a registered player is its daemon's key, so each
plan's seat names the daemon to reach), takes the entries from the organiser, forms its table
from each round's plan through the lobby (:class:`~tarotd.lobby.EventSlot`), sends the table's
manifest, and signs a row at the end of every deal
(:func:`~protocol.event.event.row_of_audit`) for the organiser and its table mates.  What it
sent and the record does not hold yet is sent again every :data:`RESEND_EVERY` seconds, so a
restart on either side loses nothing: the signatures it made are in its store.  The
organiser's own player, if it plays, is a member like any other: what it sends goes to its
own record through the same handlers as a frame from the LAN.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from protocol.event.event import (
    DealStatus,
    EntryKind,
    EventError,
    EventRecord,
    EventRow,
    plan_digest,
    read_entries,
    register,
    row_of_audit,
    sign_row,
    table_entry,
    table_id,
    verify_event,
)
from protocol.refusal import Refusal
from protocol.replication.audit import DealAudit
from protocol.replication.manifest import MAX_NAME, SignedManifest
from tarotd.event_book import Heard, Held, Role, Side
from tarotd.event_frames import (
    Announce,
    Entries,
    EventFrame,
    EventOut,
    FrameRefused,
    Register,
    Row,
    RowSig,
    Table,
    Want,
)
from tarotd.event_rows import gather
from tarotd.lobby import EventSlot, ReadyTable

log = logging.getLogger(__name__)

RESEND_EVERY: Final = 5.0  #: seconds between two sendings of what the record does not hold yet
UNPLAYED: Final = bytes(32)  #: the head of a row abandoned before its deal began: no transcript

#: Hands a frame of the organiser's own player to its own record: the desk's dispatch.
OwnRecord = Callable[[bytes, EventFrame], list[EventOut]]


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
class Member(Side):
    """Our player in the events held here: where it sits, what it signs, what it sends."""

    own_record: OwnRecord

    def join(self, event_id: bytes, name: str) -> list[EventOut]:
        """Register our player with an event heard on the LAN."""
        heard = self.book.heard.get(event_id)
        if heard is None:
            raise EventError(
                "no event of that id is heard here (tarot event list)", Refusal.EVENT_NOT_HEARD
            )
        if event_id in self.book.held:
            raise EventError("this daemon is in that event already", Refusal.EVENT_IN_ALREADY)
        record = EventRecord(read_entries([heard.wire]))
        held = self.book.hold(Role.PLAYER, record)
        entry = register(self.identity, event_id, name[:MAX_NAME])
        frame = Register(event_id, entry, self.endpoint())
        self.book.keep_sending(held, "send/register", frame)
        log.info("event %s (%s): registered as %s", event_id.hex()[:8], heard.config.name, name)
        return [(heard.config.organiser, frame)]

    # --- Where our player sits ----------------------------------------------------------------

    def seatings(self) -> list[Seating]:
        """The tables our player sits at in the rounds open now, each named for the lobby."""
        seatings = []
        for held in self.book.held.values():
            round_ = held.open_round
            if round_ is None:  # the organiser's daemon too: its player, if it plays, sits
                continue
            seating = self._seating(held, round_, named=True)
            if seating is not None:
                seatings.append(seating)
        return seatings

    def seating_of(self, table_id_: bytes) -> Seating | None:
        """The seating of an event table of ours, open or past."""
        for held in self.book.held.values():
            for round_ in range(1, len(held.report.plans) + 1):
                seating = self._seating(held, round_, named=False)
                if seating is not None and seating.slot.table_id == table_id_:
                    return seating
        return None

    def _seating(self, held: Held, round_: int, *, named: bool) -> Seating | None:
        """Our player's table in round ``round_`` of ``held``, if it sits at one; ``named``:
        with the name the lobby shows."""
        plan = held.report.plans[round_ - 1]
        number = plan.table_of(self.key)
        if number is None:
            return None
        members = plan.tables[number - 1]
        name = f"{held.config.name[: MAX_NAME - 12]} R{round_} T{number}" if named else ""
        slot = EventSlot(
            table_id(held.event_id, round_, number), name, tuple(members), held.config.silence
        )
        return Seating(
            held.event_id,
            round_,
            number,
            members.index(self.key),
            plan_digest(held.event_id, plan),
            slot,
        )

    def deals_of(self, table_id_: bytes) -> int | None:
        """The deals an event table plays, or None for a table of no event."""
        seating = self.seating_of(table_id_)
        return None if seating is None else self.book.held[seating.event_id].config.deals

    def endpoints(self, keys: Sequence[bytes]) -> list[tuple[bytes, str]]:
        """Where the daemons of these players said they listen (to link to our table mates)."""
        known: dict[bytes, str] = {}
        for held in self.book.held.values():
            known.update(held.endpoints)
        return [(key, known[key]) for key in keys if key in known and key != self.key]

    def fellows(self) -> frozenset[bytes]:
        """The players of the events we play in (the lobby keeps their early offers)."""
        return frozenset(
            key
            for held in self.book.held.values()
            if held.role is Role.PLAYER or self.key in held.report.names
            for key in held.report.names
        )

    def needs(self, key: bytes) -> bool:
        """Whether an event of ours needs the daemon of ``key``: its organiser, a player."""
        return any(
            key == held.config.organiser or key in held.report.names
            for held in self.book.held.values()
        )

    # --- What our tables did ------------------------------------------------------------------

    def table_ready(self, ready: ReadyTable) -> list[EventOut]:
        """Our event table formed: its signed manifest goes to the organiser."""
        seating = self.seating_of(ready.setup.table_id)
        if seating is None:
            return []
        held = self.book.held[seating.event_id]
        entry = table_entry(SignedManifest(ready.manifest, ready.signatures))
        note = f"send/table/{seating.round}/{seating.table}"
        return self._keep_sending(held, note, Table(held.event_id, entry))

    def scored(self, table_id_: bytes, deal: int, head: bytes, audit: DealAudit) -> list[EventOut]:
        """A deal of an event table audited here (``deal`` from 0): our player signs its row."""
        seating = self.seating_of(table_id_)
        if seating is None:
            return []
        row = row_of_audit(
            seating.round, seating.table, deal + 1, seating.plan, table_id_, head, audit
        )
        return self._sign(seating, row)

    def abandon(self, table_id_: bytes, completed: int, gone: Sequence[int]) -> list[EventOut]:
        """Our event table stops after ``completed`` deals, members ``gone`` for good: our player
        signs the rows of the deals left as abandoned, the gone seats silent.  No transcript
        stands behind them: their head is :data:`UNPLAYED`."""
        seating = self.seating_of(table_id_)
        if seating is None:
            return []
        players, outs = len(seating.slot.keys), []
        for deal in range(completed + 1, self.book.held[seating.event_id].config.deals + 1):
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

    def _sign(self, seating: Seating, row: EventRow) -> list[EventOut]:
        """Our player's signature of ``row``: to the organiser (until the record holds the row)
        and to the other members' daemons, each gathering the whole row."""
        held = self.book.held[seating.event_id]
        signature = sign_row(self.identity, held.event_id, row)
        frame = RowSig(held.event_id, row.document(held.event_id), row, seating.seat, signature)
        outs: list[EventOut] = [(key, frame) for key in seating.slot.keys if key != self.key]
        outs += self._keep_sending(held, f"send/row/{row.round}/{row.table}/{row.deal}", frame)
        if held.role is Role.ORGANISER:
            return outs  # its record gathers the row: it is its own whole copy
        # Never refused from an honest table; the organiser still gathers the row.
        try:
            return outs + self.on_rowsig(self.key, held, frame)
        except FrameRefused as why:
            log.warning(
                "event %s: our own row signature not kept: %s", held.event_id.hex()[:8], why
            )
            return outs

    def _keep_sending(self, held: Held, note: str, frame: EventFrame) -> list[EventOut]:
        """Store ``frame`` (so a restart sends it again), then send it to the organiser."""
        self.book.keep_sending(held, note, frame)
        return self._to_organiser(held, frame)

    def _to_organiser(self, held: Held, frame: EventFrame) -> list[EventOut]:
        """To the organiser's daemon; the organiser's own player hands it to its own record,
        through the same handler as a frame from the LAN — kept and handed again like any
        player's until the record holds it: a signature gathered in memory is lost with a
        restart."""
        if held.role is Role.ORGANISER:
            return self.own_record(self.key, frame)
        return [(held.config.organiser, frame)]

    def resend(self, held: Held, now: float) -> list[EventOut]:
        """What the record does not hold yet, sent again every :data:`RESEND_EVERY` seconds;
        and our registration, while the organiser tells the players another address of ours."""
        if now < held.resent_at + RESEND_EVERY:
            return []
        moved = self._moved(held)
        if not held.outbox and moved is None:
            return []
        held.resent_at = now
        outs: list[EventOut] = [] if moved is None else self._to_organiser(held, moved)
        for note in list(held.outbox):
            if _holds(held, self.key, note):
                del held.outbox[note]
            else:
                outs += self._to_organiser(held, held.outbox[note])
        return outs

    def _moved(self, held: Held) -> Register | None:
        """Our registration again, with where we listen now, if the organiser gives the
        players another address of ours (our daemon restarted on another port, or its
        machine got another address): our table mates would reach for it in vain.  The
        organiser answers with the endpoints, ours the new one, and tells the others."""
        told = held.endpoints.get(self.key)
        if (
            held.role is not Role.PLAYER
            or told is None
            or told == self.endpoint()
            or held.report.closed >= held.config.rounds
        ):
            return None
        for entry in held.record.entries:
            if entry.kind is EntryKind.REGISTER:
                frame = Register(held.event_id, entry, self.endpoint())
                if frame.player == self.key:
                    return frame
        return None

    # --- What the organiser and our table mates send -------------------------------------------

    def on_event(self, sender: bytes, frame: Announce) -> list[EventOut]:
        """An event announced: heard, and its entries asked for if ours are behind."""
        report = verify_event(EventRecord((frame.config,)))
        config = report.config
        if config is None or not report.ok or config.organiser != sender:
            raise FrameRefused("its config is not one signed by the daemon that sent it")
        if config.event_id != frame.event:
            raise FrameRefused("its event id is not its config's")
        self.book.hear(Heard(config, frame.config.wire, frame.endpoint, frame.count))
        held = self.book.held.get(frame.event)
        if (
            held is not None
            and held.role is Role.PLAYER
            and self.key in held.report.names  # before: our registration brings the entries
            and frame.count > len(held.record.entries)
        ):
            return [(sender, Want(frame.event, len(held.record.entries)))]
        return []

    def on_entries(self, sender: bytes, held: Held, frame: Entries) -> list[EventOut]:
        if sender != held.config.organiser:
            raise FrameRefused("entries sent by another daemon than the organiser")
        for player, endpoint in frame.endpoints:
            # kept in the store: a daemon restarted before its table forms reaches its mates
            self.book.set_endpoint(held, player, endpoint)
        have = len(held.record.entries)
        if frame.start > have:
            return [(sender, Want(held.event_id, have))]
        overlap = held.record.entries[frame.start : frame.start + len(frame.entries)]
        if any(mine.wire != theirs.wire for mine, theirs in zip(overlap, frame.entries)):
            raise FrameRefused(
                "entries that contradict the record held here: the organiser rewrote its record"
            )
        fresh = frame.entries[len(overlap) :]
        if fresh:
            before = held.open_round
            self.book.extend(held, fresh, "entries that do not verify")
            if held.open_round is not None and held.open_round != before:
                log.info("event %s: round %d open", held.event_id.hex()[:8], held.open_round)
        return []

    def on_rowsig(self, sender: bytes, held: Held, frame: RowSig) -> list[EventOut]:
        """A table mate's signature of a row, gathered into the whole row our daemon keeps and
        sends the organiser in turn — so that every member holds every row of its table signed
        by all, and a row the organiser does not record (one it declares lost) can be shown."""
        row = frame.row
        seating = self.seating_of(row.table_id)
        if seating is None or (seating.round, seating.table) != (row.round, row.table):
            raise FrameRefused("a row signature of a table our player does not sit at")
        note = f"row/{row.round}/{row.table}/{row.deal}"
        if note in held.rows:
            return []  # whole already
        entry = gather(held, row, frame.document, frame.seat, frame.sig, seating.slot.keys)
        if entry is None:
            return []
        self.book.keep_row(held, note, entry.wire)
        # in place of our signature alone
        return self._keep_sending(held, f"send/{note}", Row(held.event_id, entry))


def _holds(held: Held, key: bytes, note: str) -> bool:
    """Whether the record holds what the frame under ``note`` carries (or no longer can)."""
    parts = note.split("/")
    if parts[1] == "register":
        return key in held.report.names
    round_ = int(parts[2])
    if round_ <= held.report.closed:
        return True
    frame = held.outbox[note]
    if isinstance(frame, Table):
        return any(entry.wire == frame.entry.wire for entry in held.record.entries)
    return (round_, int(parts[3]), int(parts[4])) not in held.report.pending
