"""The organiser's side of an event (``docs/event.md``): its daemon keeps the record.

The organiser's daemon opens the event (its signed config), appends what the players send —
registrations, table manifests, rows once every member that must has signed them — sends each
new entry to every registered player's daemon, closes a round once its last row is in and
opens the next, seated by the movement from the places of the round before.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Final

import msgpack

from protocol.event.event import (
    Entry,
    EntryKind,
    EventConfig,
    EventError,
    close_round,
    open_event,
    open_round,
    read_row,
    register,
)
from protocol.event.movement import Movement, MovementError
from protocol.refusal import Refusal
from protocol.replication.identity import fingerprint
from protocol.replication.manifest import DEFAULT_SILENCE, MAX_NAME, Manifest, SilenceCost
from tarotd.event_book import Held, Role, Side
from tarotd.event_frames import (
    Announce,
    Entries,
    EventOut,
    FrameRefused,
    Register,
    Row,
    RowSig,
    Table,
    Want,
)
from tarotd.event_rows import gather

log = logging.getLogger(__name__)

MAX_BATCH: Final = 512 * 1024  #: bytes of entries in one ``entries`` frame (the mesh takes 2 MiB)


class Organiser(Side):
    """The events organised here: what the organiser asks, and what the players send."""

    # --- What the organiser asks (the local API) ---------------------------------------------

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
            os.urandom(16),
            name,
            self.key,
            rounds,
            deals,
            table_size,
            movement,
            silence,
        )
        held = self.book.hold(Role.ORGANISER, open_event(self.identity, config))
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

    def join_own(self, held: Held, name: str) -> list[EventOut]:
        """The organiser registers its own player: the registration goes through the same
        gate as anyone's (:meth:`on_register`, on this daemon), and from then on its player
        is seated by the movement and signs its rows like any member — the organiser's key
        gives it no say over a row it did not sign with its table."""
        key = self.key
        if key in held.report.names:
            raise EventError(
                "this daemon's player is registered in that event already",
                Refusal.EVENT_REGISTERED_ALREADY,
            )
        entry = register(self.identity, held.event_id, name[:MAX_NAME])
        try:
            outs = self.on_register(key, held, Register(held.event_id, entry, self.endpoint()))
        except FrameRefused as why:
            raise EventError(str(why)) from None
        log.info(
            "event %s (%s): the organiser's player registered as %s",
            held.event_id.hex()[:8],
            held.config.name,
            name,
        )
        return outs

    def start(self, event_id: bytes) -> list[EventOut]:
        """Round 1 opened with the players registered (EventError: too few)."""
        held = self.organised(event_id)
        if held.report.plans:
            raise EventError("the event has started already", Refusal.EVENT_STARTED)
        try:
            entry = open_round(self.identity, held.record)
        except MovementError as error:
            raise EventError(str(error), error.code, **error.params) from None
        return self.append(held, [entry])

    def close_now(self, event_id: bytes) -> list[EventOut]:
        """The open round closed without the rows still awaited, declared lost (a table that
        never formed, or never came back): they score nothing, and the members who hold them
        signed by all can show the claim false."""
        held = self.organised(event_id)
        if held.open_round is None:
            raise EventError("no round is open", Refusal.EVENT_NO_ROUND_OPEN)
        lost = [(table, deal) for _, table, deal in held.report.pending]
        log.warning(
            "event %s: round %d closed by the organiser, %d rows declared lost",
            event_id.hex()[:8],
            held.open_round,
            len(lost),
        )
        return self.append(held, [close_round(self.identity, held.record, lost)])

    def withdraw(self, event_id: bytes, player: str) -> str:
        """The place of ``player`` (a name, or a fingerprint's first digits) left empty from
        the next round on; the player's name."""
        held = self.organised(event_id)
        key = _player(held, player)
        self.book.withdraw(held, key)
        return held.report.names[key]

    def substitute(self, event_id: bytes, newcomer: str, player: str) -> tuple[str, str]:
        """The place of ``player`` given to ``newcomer`` (registered, with no place) from the
        next round on: a person, or a bot's daemon, that moves as the player would have.
        The two names."""
        held = self.organised(event_id)
        new, old = _player(held, newcomer), _player(held, player)
        if new in _last_places(held) or new in held.substitutes.values():
            raise EventError(
                f"{held.report.names[new]} holds a place already",
                Refusal.EVENT_PLACE_HELD,
                player=held.report.names[new],
            )
        self.book.substitute(held, old, new)
        return held.report.names[new], held.report.names[old]

    def organised(self, event_id: bytes) -> Held:
        held = self.book.held.get(event_id)
        if held is None or held.role is not Role.ORGANISER:
            raise EventError(
                "no event of that id is organised here", Refusal.EVENT_NOT_ORGANISED_HERE
            )
        return held

    def announce(self, held: Held) -> Announce:
        """What the heartbeat broadcasts while the event is not over: it is seen on the LAN."""
        return Announce(
            held.event_id, held.record.entries[0], len(held.record.entries), self.endpoint()
        )

    # --- What the players send ----------------------------------------------------------------

    def on_register(self, sender: bytes, held: Held, frame: Register) -> list[EventOut]:
        if frame.player != sender:
            raise FrameRefused(
                f"a registration of {fingerprint(frame.player)} sent by "
                "another daemon: a daemon registers its own player"
            )
        moved = self.book.set_endpoint(held, sender, frame.endpoint)
        if any(e.wire == frame.entry.wire for e in held.record.entries):
            # registered before: it may have lost what it had, or listen elsewhere now
            outs = self.entries_from(held, sender, 0)
            return outs + (self.endpoints_to_players(held, sender) if moved else [])
        if sender in held.report.names:
            raise FrameRefused("the player is registered already, under another name")
        outs = self.append(held, [frame.entry])
        return outs + (
            [] if any(d == sender for d, _ in outs) else self.entries_from(held, sender, 0)
        )

    def on_want(self, sender: bytes, held: Held, frame: Want) -> list[EventOut]:
        if sender not in held.report.names:
            raise FrameRefused("a want from no registered player, or of no index")
        return self.entries_from(held, sender, frame.start)

    def on_table(self, sender: bytes, held: Held, frame: Table) -> list[EventOut]:
        if any(e.wire == frame.entry.wire for e in held.record.entries):
            return []  # another member sent it first
        return self.append(held, [frame.entry])

    def on_rowsig(self, sender: bytes, held: Held, frame: RowSig) -> list[EventOut]:
        """A member's signature of a row: gathered into the row the record appends."""
        row = frame.row
        if (row.round, row.table, row.deal) not in held.report.pending:
            return []  # in the record already (a member sending again), or of no deal pending
        manifest = _manifest_of(held, row.table_id)
        if manifest is None:
            return []  # its table's manifest is not in yet: the member sends again
        entry = gather(held, row, frame.document, frame.seat, frame.sig, manifest.keys)
        return [] if entry is None else self.append(held, [entry])

    def on_row(self, sender: bytes, held: Held, frame: Row) -> list[EventOut]:
        """A row whole, from a member of its table: appended if the record still waits for it."""
        _, row = read_row(frame.entry.document)
        if (row.round, row.table, row.deal) not in held.report.pending:
            return []  # in the record already, gathered from the signatures
        return self.append(held, [frame.entry])

    # --- The record ---------------------------------------------------------------------------

    def append(self, held: Held, entries: Sequence[Entry]) -> list[EventOut]:
        """``entries`` appended if the record with them verifies, stored, sent to every
        player; then rounds closed or opened as the rows allow."""
        outs: list[EventOut] = []
        while entries:
            start = len(held.record.entries)
            self.book.extend(held, entries, "it would not verify")
            for player in held.report.names:
                if player != self.key:
                    outs += self.entries_from(held, player, start)
            entries = self._next_step(held)
        return outs

    def _next_step(self, held: Held) -> list[Entry]:
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

    def endpoints_to_players(self, held: Held, moved: bytes) -> list[EventOut]:
        """The players' endpoints, and no entry, to every player but ``moved``, whose
        daemon listens elsewhere now: its table mates link to it there."""
        endpoints = tuple(held.endpoints.items())
        frame = Entries(held.event_id, len(held.record.entries), (), endpoints)
        return [(p, frame) for p in held.report.names if p not in (moved, self.key)]

    def entries_from(self, held: Held, player: bytes, start: int) -> list[EventOut]:
        """The entries from ``start`` for ``player``'s daemon, in frames of at most
        :data:`MAX_BATCH` bytes, with the endpoints of the players."""
        endpoints = tuple(held.endpoints.items())
        outs: list[EventOut] = []
        batch: list[Entry] = []
        size = 0
        for entry in held.record.entries[start:]:
            if batch and size + len(entry.wire) > MAX_BATCH:
                outs.append((player, Entries(held.event_id, start, tuple(batch), endpoints)))
                start, batch, size = start + len(batch), [], 0
            batch.append(entry)
            size += len(entry.wire)
        if batch:
            outs.append((player, Entries(held.event_id, start, tuple(batch), endpoints)))
        return outs


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


def _manifest_of(held: Held, table_id_: bytes) -> Manifest | None:
    for entry in held.record.entries:
        if entry.kind is EntryKind.TABLE:
            manifest = Manifest.from_bytes(entry.document)
            if manifest.table_id == table_id_:
                return manifest
    return None
