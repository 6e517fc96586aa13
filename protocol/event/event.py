"""The record of an event — club night or tournament — that nobody, organiser included, can falsify.

An event is an **append-only list of signed entries**, each a msgpack array ``[kind, document,
[signatures]]``; the file is ``[MAGIC, [entries]]``.  Every document is a msgpack array (no
maps: one encoding), signed under a domain of its own (``tarot/v2/event-<kind>``), so that no
signature made for a deal, a manifest or the lobby can pass for one of these.

==========  ==================================================================  ===============
kind        document                                                            signed by
==========  ==================================================================  ===============
config      ``[1, nonce, name, organiser key, rounds, deals, table size,        the organiser
            movement, silence rule]``
register    ``[event id, player key, name]``                                    the player
round       ``[event id, round, head, places, plan digest]``                    the organiser
table       the table's manifest (:mod:`protocol.replication.manifest`), whose table id is   every
member
            :func:`table_id` (event id, round, table)
row         ``[event id, round, table, deal, plan digest, table id, transcript   every member
            head, status, scores, penalties, silent]``                          but the silent
close       ``[event id, round, head, ranking, lost rows]``                     the organiser
==========  ==================================================================  ===============

* The **event id** is a hash of the config document: it names the organiser's key and every
  rule, so nothing of the config can change without changing every signature made after it.
  The **seed** of the movements is a hash of the id.
* The **record's head** is a hash chain over every entry's bytes; the organiser's ``round`` and
  ``close`` entries sign the head they follow, so they commit to every registration, table and
  row before them, in that order: entries cannot be dropped, reordered or slipped in behind them.
* The **places** of round 1 are :func:`~protocol.event.movement.draw` of the registered players —
  derived, not chosen; later rounds keep the places, a substitute (a late registration, a bot's
  key) taking over one, a withdrawal leaving it empty: the organiser's signature says who did
  that.  The **plan** is derived from the places (:func:`~protocol.event.movement.plan_round`), and
  its digest is signed by the organiser and by every member in every row: a row is the members'
  word on *that* plan.
* A **row** is one deal of one table, signed by every member — the deal's row of scores as its
  audit gave them (:func:`row_of_audit`), the seats that take a penalty row and the seats the
  others timed out, bound to the deal's transcript by its table id and final head, so the
  members' transcripts prove it again.  A seat that stopped answering does not sign; the row
  stands if it names the seat among the silent and those who signed are a majority that
  settles (:func:`protocol.replication.agreement.settled`: the rule every table already follows).
* A **close** states the ranking after the round; the verifier recomputes it from the rows.
  Rows the organiser declares **lost** (a table that never came back) score nothing for that
  table and are shown as such; a row a member can show, signed by all, proves such a claim false.

**Reading untrusted bytes.**  :func:`read_event` is the one gate: it parses the file, and refuses
(:class:`EventError`) what is not exactly the canonical encoding of well-formed entries.  What
the entries *say* is for :func:`verify_event`, which never raises on content: it replays the
record and names every fault it finds — round, table, deal, seat — in an :class:`EventReport`.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias, TypedDict, TypeVar, Unpack

import msgpack

from protocol import wire
from protocol.event.movement import (
    TABLE_SIZES,
    Movement,
    MovementError,
    RoundPlan,
    draw,
    plan_round,
)
from protocol.event.ranking import Mark, RoundResult, Standing, order, rank
from protocol.refusal import Param, Refusal, Refused
from protocol.replication.agreement import settled
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity, fingerprint, is_valid_public_key, verify
from protocol.replication.manifest import (
    DEFAULT_SILENCE,
    MAX_NAME,
    Manifest,
    ManifestError,
    SignedManifest,
    SilenceCost,
)
from protocol.replication.messages import HASH_SIZE, TABLE_ID_SIZE
from protocol.rules.scoring import ScoreSheet

MAGIC: Final = b"tarot-event"
VERSION: Final = 1
NONCE_SIZE: Final = 16
EVENT_ID_SIZE: Final = TABLE_ID_SIZE
MAX_ROUNDS: Final = 12
MAX_DEALS: Final = 12
MAX_FILE: Final = 64 * 1024 * 1024  #: a 200-table event of 6 × 4 deals is a few MiB

#: The FFT's free-deal formats, rounds × deals (organiser's guide, « Tournoi à grosse dotation »:
#: « soit en 24 (6 x 4), soit en 25 (5 x 5) donnes … Il est possible d'organiser un tournoi en 3
#: positions de 8 donnes »).  Any other count of rounds and deals is allowed too.
FFT_FORMATS: Final[Mapping[str, tuple[int, int]]] = {"6x4": (6, 4), "5x5": (5, 5), "3x8": (3, 8)}

_ID_DOMAIN: Final = b"tarot/v2/event-id\x00"
_SEED_DOMAIN: Final = b"tarot/v2/event-seed\x00"
_TABLE_DOMAIN: Final = b"tarot/v2/event-table\x00"
_PLAN_DOMAIN: Final = b"tarot/v2/event-plan\x00"
_HEAD_DOMAIN: Final = b"tarot/v2/event-record\x00"

Value: TypeAlias = "bytes | int | str | None | list[Value]"


class EventError(Refused):
    """Bytes that are not a well-formed event record, or an entry that cannot be made: for
    the player, a request about an event refused (its code and parameters, its text)."""


class EntryKind(enum.Enum):
    CONFIG = "config"
    REGISTER = "register"
    ROUND = "round"
    TABLE = "table"
    ROW = "row"
    CLOSE = "close"

    @property
    def domain(self) -> bytes:
        return b"tarot/v2/event-" + self.value.encode() + b"\x00"


class DealStatus(enum.Enum):
    PLAYED = "played"  #: scored
    VOID = "void"  #: all passed, petit sec, annulled: zeros, it still counts as a deal
    ABANDONED = "abandoned"  #: stopped before its last card (a seat gone): zeros


@dataclass(frozen=True)
class Entry:
    """One entry of the record: its kind, its document and the signatures over it."""

    kind: EntryKind
    document: bytes
    signatures: tuple[bytes | None, ...]

    @property
    def wire(self) -> bytes:
        return _pack([self.kind.value, self.document, list(self.signatures)])


@dataclass(frozen=True)
class EventConfig:
    nonce: bytes
    name: str
    organiser: bytes
    rounds: int
    deals: int  #: deals per round at every table
    table_size: int  #: the preferred table size, 4 or 5
    movement: Movement
    silence: SilenceCost = DEFAULT_SILENCE  #: the rule every table's manifest must carry

    def __post_init__(self) -> None:
        _need(
            type(self.nonce) is bytes and len(self.nonce) == NONCE_SIZE,
            f"the nonce is {NONCE_SIZE} bytes",
        )
        _need(
            _is_name(self.name),
            f"the event's name is a string of at most {MAX_NAME} characters",
            Refusal.EVENT_NAME,
            most=MAX_NAME,
        )
        _need(
            type(self.organiser) is bytes and is_valid_public_key(self.organiser),
            "the organiser's key is not a key",
        )
        _need(
            _is_int(self.rounds, 1, MAX_ROUNDS),
            f"rounds are 1 to {MAX_ROUNDS}",
            Refusal.EVENT_ROUNDS,
            most=MAX_ROUNDS,
        )
        _need(
            _is_int(self.deals, 1, MAX_DEALS),
            f"deals per round are 1 to {MAX_DEALS}",
            Refusal.EVENT_DEALS,
            most=MAX_DEALS,
        )
        _need(
            self.table_size in TABLE_SIZES,
            "the table size preferred is 4 or 5",
            Refusal.EVENT_TABLE_SIZE,
        )

    def document(self) -> bytes:
        return _pack(
            [
                VERSION,
                self.nonce,
                self.name,
                self.organiser,
                self.rounds,
                self.deals,
                self.table_size,
                self.movement.value,
                self.silence.value,
            ]
        )

    @property
    def event_id(self) -> bytes:
        return hashlib.sha256(_ID_DOMAIN + self.document()).digest()[:EVENT_ID_SIZE]

    @property
    def seed(self) -> bytes:
        return hashlib.sha256(_SEED_DOMAIN + self.event_id).digest()


@dataclass(frozen=True)
class EventRow:
    """One deal of one table: what its members sign."""

    round: int
    table: int
    deal: int  #: 1 .. deals per round
    plan: bytes  #: the digest of the round's plan
    table_id: bytes
    head: bytes  #: the deal's transcript head when its members signed the score
    status: DealStatus
    scores: tuple[int, ...]  #: the deal's row, in the manifest's seat order
    penalties: tuple[int, ...] = ()  #: seats that take a 100-point penalty row
    silent: tuple[int, ...] = ()  #: seats the others timed out: they need not sign

    def document(self, event_id: bytes) -> bytes:
        return _pack(
            [
                event_id,
                self.round,
                self.table,
                self.deal,
                self.plan,
                self.table_id,
                self.head,
                self.status.value,
                list(self.scores),
                list(self.penalties),
                list(self.silent),
            ]
        )


def row_of_audit(
    round_: int, table: int, deal: int, plan: bytes, table_id: bytes, head: bytes, audit: DealAudit
) -> EventRow:
    """The row a table's daemon signs for a deal it audited (:mod:`protocol.replication.audit`)."""
    status = (
        DealStatus.ABANDONED
        if audit.abandoned
        else DealStatus.PLAYED
        if any(audit.scores)
        else DealStatus.VOID
    )
    return EventRow(
        round_,
        table,
        deal,
        plan,
        table_id,
        head,
        status,
        tuple(audit.scores),
        audit.penalised,
        tuple(sorted(audit.silent)),
    )


def table_id(event_id: bytes, round_: int, table: int) -> bytes:
    """The id the table of ``round_`` and ``table`` forms under: its manifest then says which
    slot of which event it is."""
    material = _TABLE_DOMAIN + event_id + round_.to_bytes(2, "big") + table.to_bytes(2, "big")
    return hashlib.sha256(material).digest()[:TABLE_ID_SIZE]


def plan_digest(event_id: bytes, plan: RoundPlan) -> bytes:
    document = _pack(
        [event_id, plan.round, plan.movement.value, [list(table) for table in plan.tables]]
    )
    return hashlib.sha256(_PLAN_DOMAIN + document).digest()


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class EventRecord:
    """The entries in the order they were appended.  Immutable: :meth:`append` gives a new one."""

    entries: tuple[Entry, ...]

    def to_bytes(self) -> bytes:
        return _pack(
            [MAGIC, [[e.kind.value, e.document, list(e.signatures)] for e in self.entries]]
        )

    def append(self, entry: Entry) -> EventRecord:
        return EventRecord((*self.entries, entry))

    @property
    def head(self) -> bytes:
        return _heads(self.entries)[-1]


def _heads(entries: Sequence[Entry]) -> list[bytes]:
    """The head before each entry, and after the last."""
    config = entries[0] if entries else None
    event_id = (
        hashlib.sha256(_ID_DOMAIN + config.document).digest()[:EVENT_ID_SIZE] if config else b""
    )
    heads = [hashlib.sha256(_HEAD_DOMAIN + event_id).digest()]
    for entry in entries:
        heads.append(hashlib.sha256(heads[-1] + hashlib.sha256(entry.wire).digest()).digest())
    return heads


def read_event(data: bytes) -> EventRecord:
    """The gate for an event file from anywhere: a record, or :class:`EventError` saying why not."""
    if type(data) is not bytes or len(data) > MAX_FILE:
        raise EventError(f"an event file is bytes, at most {MAX_FILE}")
    fields = _unpack(data, "the event file")
    if (
        type(fields) is not list
        or len(fields) != 2
        or fields[0] != MAGIC
        or type(fields[1]) is not list
    ):
        raise EventError("not an event file (expected [tarot-event, [entries]])")
    entries = []
    for index, raw in enumerate(fields[1]):
        if type(raw) is not list or len(raw) != 3:
            raise EventError(f"entry {index} is not [kind, document, signatures]")
        kind, document, signatures = raw
        known = {k.value: k for k in EntryKind}
        if (
            type(kind) is not str
            or kind not in known
            or type(document) is not bytes
            or type(signatures) is not list
        ):
            raise EventError(f"entry {index} is not [kind, document, signatures]")
        if not all(s is None or type(s) is bytes for s in signatures):
            raise EventError(f"entry {index}: a signature is neither bytes nor nil")
        entries.append(Entry(known[kind], document, tuple(signatures)))
    record = EventRecord(tuple(entries))
    if record.to_bytes() != data:
        raise EventError("non-canonical encoding: the record re-encodes to other bytes")
    return record


# --------------------------------------------------------------------------- making entries


def open_event(organiser: Identity, config: EventConfig) -> EventRecord:
    """A record holding only the organiser's signed config."""
    if config.organiser != organiser.public_key:
        raise EventError("the config names another organiser")
    document = config.document()
    return EventRecord(
        (Entry(EntryKind.CONFIG, document, (organiser.sign(EntryKind.CONFIG.domain + document),)),)
    )


def register(player: Identity, event_id: bytes, name: str) -> Entry:
    """A player's registration, signed by the player."""
    if not _is_name(name):
        raise EventError(f"a player's name is a string of at most {MAX_NAME} characters")
    document = _pack([event_id, player.public_key, name])
    return Entry(EntryKind.REGISTER, document, (player.sign(EntryKind.REGISTER.domain + document),))


def open_round(
    organiser: Identity, record: EventRecord, places: Sequence[bytes | None] | None = None
) -> Entry:
    """The organiser's entry opening the next round: round 1 seats the draw of the registered
    players; later rounds keep the places unless ``places`` gives new holders (substitutes)."""
    state = _state_of(record)
    config, round_ = state.settled_config, state.closed + 1
    if state.open is not None or round_ > config.rounds:
        raise EventError("no round to open: one is open, or the last is closed")
    seated = (
        list(places)
        if places is not None
        else list(state.places[-1])
        if state.places
        else state.draw()
    )
    plan = state.plan(round_, seated)
    document = _pack(
        [config.event_id, round_, record.head, list(seated), plan_digest(config.event_id, plan)]
    )
    return Entry(EntryKind.ROUND, document, (organiser.sign(EntryKind.ROUND.domain + document),))


def table_entry(manifest: SignedManifest) -> Entry:
    """A table's signed manifest, as the table sends it to the event."""
    return Entry(EntryKind.TABLE, manifest.document, manifest.signatures)


def sign_row(member: Identity, event_id: bytes, row: EventRow) -> bytes:
    """A member's signature of a row."""
    return member.sign(EntryKind.ROW.domain + row.document(event_id))


def row_entry(event_id: bytes, row: EventRow, signatures: Sequence[bytes | None]) -> Entry:
    """A row with its members' signatures in seat order (None for a silent seat)."""
    return Entry(EntryKind.ROW, row.document(event_id), tuple(signatures))


def read_row(document: bytes) -> tuple[bytes, EventRow]:
    """The event id and the row a member's signature is over, from its document as it came
    from anywhere (:class:`EventError` if it is not one, in canonical form)."""
    try:
        event_id = _fields(document, 11)[0]
        return _bytes(event_id), _row_of(document)
    except _Malformed as exc:
        raise EventError(f"not a row: {exc}") from None


def read_entries(wires: Sequence[bytes]) -> tuple[Entry, ...]:
    """Entries, each ``Entry.wire`` as it came from anywhere, through the one gate
    (:func:`read_event`): :class:`EventError` if one is not an entry in canonical form."""
    if not all(type(raw) is bytes for raw in wires):
        raise EventError("an entry is bytes")
    entries = read_event(_pack([MAGIC, [_unpack(raw, "an entry") for raw in wires]])).entries
    if [entry.wire for entry in entries] != list(wires):
        raise EventError("non-canonical encoding: an entry re-encodes to other bytes")
    return entries


def close_round(
    organiser: Identity, record: EventRecord, lost: Iterable[tuple[int, int]] = ()
) -> Entry:
    """The organiser's entry closing the open round, with the ranking its rows give; ``lost``
    are the (table, deal) rows it declares lost."""
    state = _state_of(record)
    if state.open is None:
        raise EventError("no round is open")
    lost_rows = sorted(set(lost))
    standings = state.standings(state.open, set(lost_rows))
    document = _pack(
        [
            state.settled_config.event_id,
            state.open,
            record.head,
            _ranking_value(standings),
            [list(row) for row in lost_rows],
        ]
    )
    return Entry(EntryKind.CLOSE, document, (organiser.sign(EntryKind.CLOSE.domain + document),))


def _state_of(record: EventRecord) -> _Replay:
    replay = _Replay(record)
    if replay.findings or replay.config is None:
        raise EventError(
            f"the record does not verify: {replay.findings[0] if replay.findings else 'no config'}"
        )
    return replay


def _ranking_value(standings: Sequence[Standing]) -> list[Value]:
    return [[s.player, s.place, s.total] for s in standings]


# --------------------------------------------------------------------------- verifying


@dataclass(frozen=True)
class Finding:
    """One fault of the record, as precisely as it can be placed."""

    problem: str
    round: int | None = None
    table: int | None = None
    deal: int | None = None
    seat: int | None = None
    player: bytes | None = None  #: the key of the player concerned, when there is one
    entry: int | None = None  #: the index of the entry it is found in

    def __str__(self) -> str:
        where = [
            f"{name} {value}"
            for name, value in (
                ("round", self.round),
                ("table", self.table),
                ("deal", self.deal),
                ("seat", self.seat),
            )
            if value is not None
        ]
        who = f" ({fingerprint(self.player)})" if self.player is not None else ""
        return f"{', '.join(where) or 'event'}{who}: {self.problem}"


class _Where(TypedDict, total=False):
    """Where a fault is placed: the keywords of :class:`Finding`, typed so that ``_fault`` passes
    them on checked."""

    round: int
    table: int
    deal: int
    seat: int
    player: bytes | None


class _RowPlace(TypedDict):
    """A row's place, whole: every row fault names it, and may add the seat and player besides."""

    round: int
    table: int
    deal: int


@dataclass(frozen=True)
class EventReport:
    findings: tuple[Finding, ...]
    config: EventConfig | None
    names: Mapping[bytes, str]  #: every registered player's signed name
    plans: tuple[RoundPlan, ...]
    closed: int  #: rounds closed
    standings: tuple[Standing, ...]  #: after the closed rounds
    live: tuple[Standing, ...]  #: with the open round's rows so far
    #: valid rows per (round, table)
    results: Mapping[tuple[int, int], tuple[EventRow, ...]] = field(default_factory=dict)
    #: (round, table, deal) rows the open round still waits for
    pending: tuple[tuple[int, int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.findings


def verify_event(record: EventRecord) -> EventReport:
    """Replay the record: every signature, the draw and every plan, every table's members,
    every row, every stated ranking.  Never raises on what the record says."""
    replay = _Replay(record)
    closed_standings = (
        replay.standings(replay.closed, set()) if replay.config and replay.closed else ()
    )
    live = (
        replay.standings(replay.open, set()) if replay.config and replay.open else closed_standings
    )
    return EventReport(
        tuple(replay.findings),
        replay.config,
        dict(replay.names),
        tuple(replay.plans),
        replay.closed,
        tuple(closed_standings),
        tuple(live),
        dict(replay.valid_rows()),
        tuple(replay.pending()),
    )


class _Replay:
    """The record read entry by entry, as the verifier and the organiser's builders see it."""

    def __init__(self, record: EventRecord) -> None:
        self.findings: list[Finding] = []
        self.config: EventConfig | None = None
        self.names: dict[bytes, str] = {}
        self.places: list[list[bytes | None]] = []
        self.plans: list[RoundPlan] = []
        self.digests: list[bytes] = []
        self.closed = 0
        self.open: int | None = None
        self.lost: dict[int, set[tuple[int, int]]] = {}
        self.manifests: dict[tuple[int, int], Manifest] = {}
        self.rows: dict[tuple[int, int, int], EventRow] = {}
        self.seen: set[tuple[int, int, int]] = set()
        self._closed_standings: dict[int, list[Value]] = {}
        heads = _heads(record.entries)
        for index, entry in enumerate(record.entries):
            self._entry(index, entry, heads[index])
            if self.config is None:
                return
        if not record.entries:
            self.findings.append(Finding("the record is empty: no config"))

    # -- what the record gives

    @property
    def settled_config(self) -> EventConfig:
        assert self.config is not None
        return self.config

    def draw(self) -> list[bytes | None]:
        assert self.config is not None
        return list(draw(self.names, self.config.seed))

    def players(self) -> list[bytes]:
        """Every registered player in place order, then the later ones in registration order."""
        first = [key for key in (self.places[0] if self.places else []) if key is not None]
        return first + [key for key in self.names if key not in first]

    def plan(self, round_: int, places: Sequence[bytes | None]) -> RoundPlan:
        assert self.config is not None
        standings = order(self.standings(round_ - 1, set())) if round_ > 1 else ()
        return plan_round(
            places,
            round_,
            self.plans[: round_ - 1],
            self.config.table_size,
            self.config.movement,
            self.config.seed,
            standings,
        )

    def standings(self, rounds: int | None, lost_now: set[tuple[int, int]]) -> list[Standing]:
        """The ranking after ``rounds`` rounds, from the valid rows (and ``lost_now``: the rows an
        open round's close is about to declare lost)."""
        if not rounds:
            return list(rank(self.players(), [], 0))
        results: list[RoundResult] = []
        for round_ in range(1, rounds + 1):
            lost = self.lost.get(round_, set()) | (lost_now if round_ == self.open else set())
            for number, members in enumerate(self.plans[round_ - 1].tables, start=1):
                results += self._table_results(round_, number, members, lost)
        return list(rank(self.players(), results, rounds))

    def _table_results(
        self, round_: int, table: int, members: Sequence[bytes], lost: set[tuple[int, int]]
    ) -> list[RoundResult]:
        manifest = self.manifests.get((round_, table))
        keys = list(manifest.keys) if manifest is not None else list(members)
        sheet = ScoreSheet([fingerprint(key) for key in keys])
        gone: set[int] = set()
        penalties = [0] * len(keys)
        for deal in range(1, self._deals() + 1):
            row = self.rows.get((round_, table, deal))
            if row is None:
                continue
            if row.status is DealStatus.PLAYED:
                sheet.add_deal(list(row.scores))
            else:
                sheet.add_void(row.status.value)
            for seat in row.penalties:
                sheet.add_penalty(seat)
                penalties[seat] += 1
            gone |= set(row.silent)
        incomplete = any((table, deal) in lost for deal in range(1, self._deals() + 1))
        totals = sheet.totals()
        return [
            RoundResult(
                key,
                round_,
                totals[seat],
                Mark.ABANDONED if seat in gone else Mark.INCOMPLETE if incomplete else Mark.PLAYED,
                table,
                penalties[seat],
            )
            for seat, key in enumerate(keys)
        ]

    def _deals(self) -> int:
        assert self.config is not None
        return self.config.deals

    def valid_rows(self) -> dict[tuple[int, int], tuple[EventRow, ...]]:
        grouped: dict[tuple[int, int], list[EventRow]] = {}
        for (round_, table, _), row in sorted(self.rows.items()):
            grouped.setdefault((round_, table), []).append(row)
        return {slot: tuple(rows) for slot, rows in grouped.items()}

    def pending(self) -> list[tuple[int, int, int]]:
        if self.open is None:
            return []
        return [slot for slot in self._slots(self.open) if slot not in self.seen]

    def _slots(self, round_: int) -> list[tuple[int, int, int]]:
        tables = len(self.plans[round_ - 1].tables)
        return [(round_, t, d) for t in range(1, tables + 1) for d in range(1, self._deals() + 1)]

    # -- reading entries

    def _entry(self, index: int, entry: Entry, head: bytes) -> None:
        if self.config is None:
            self._config(index, entry)
            return
        handlers = {
            EntryKind.REGISTER: self._register,
            EntryKind.ROUND: self._round,
            EntryKind.TABLE: self._table,
            EntryKind.ROW: self._row,
            EntryKind.CLOSE: self._close,
        }
        handler = handlers.get(entry.kind)
        if handler is None:
            self._fault(index, "a second config")
            return
        try:
            handler(index, entry, head)
        except _Malformed as exc:
            self._fault(index, f"malformed {entry.kind.value} entry: {exc}")

    def _fault(self, index: int, problem: str, **where: Unpack[_Where]) -> None:
        self.findings.append(Finding(problem, entry=index, **where))

    def _config(self, index: int, entry: Entry) -> None:
        if entry.kind is not EntryKind.CONFIG:
            self._fault(index, "the record does not start with the event's config")
            return
        try:
            fields = _fields(entry.document, 9)
            version, nonce, name, organiser, rounds, deals, size, movement, silence = fields
            if version != VERSION:
                raise _Malformed(f"version {version!r}, this program reads {VERSION}")
            config = EventConfig(
                _bytes(nonce),
                _str(name),
                _bytes(organiser),
                _int(rounds),
                _int(deals),
                _int(size),
                _enum(Movement, movement),
                _enum(SilenceCost, silence),
            )
        except (_Malformed, EventError) as exc:
            self._fault(index, f"malformed config: {exc}")
            return
        if config.document() != entry.document:
            self._fault(index, "malformed config: not in canonical form")
        elif not _signed_once(entry, config.organiser):
            self._fault(index, "the config is not signed by the organiser it names")
        else:
            self.config = config

    def _register(self, index: int, entry: Entry, head: bytes) -> None:
        event_id, key, name = _fields(entry.document, 3)
        key, name = _bytes(key), _str(name)
        if not self._ours(index, event_id) or not is_valid_public_key(key):
            self._fault(
                index,
                "a registration for another event, or of no key",
                player=key if len(key) == 32 else None,
            )
        elif not _signed_once(entry, key):
            self._fault(
                index, f"the registration of {name!r} is not signed by its player", player=key
            )
        elif key in self.names:
            self._fault(index, "a player registered twice", player=key)
        elif not _is_name(name):
            self._fault(index, "a player's name is too long", player=key)
        else:
            self.names[key] = name

    def _round(self, index: int, entry: Entry, head: bytes) -> None:
        assert self.config is not None
        event_id, round_, prev, places, digest = _fields(entry.document, 5)
        round_ = _int(round_)
        seated = _places(places)
        if not self._ours(index, event_id) or not self._organiser_signed(index, entry, round_):
            return
        if round_ != self.closed + 1 or self.open is not None or round_ > self.config.rounds:
            self._fault(
                index,
                f"round {round_} opened out of order (after round {self.closed} closed)",
                round=round_,
            )
            return
        if prev != head:
            self._fault(
                index, "the organiser's entry does not follow the record before it", round=round_
            )
        expected = self.draw() if round_ == 1 else None
        problem = self._roster_problem(seated, expected)
        if problem:
            self._fault(index, problem, round=round_)
            return
        try:
            plan = self.plan(round_, seated)
        except MovementError as exc:
            self._fault(index, f"the round cannot be seated: {exc}", round=round_)
            return
        if digest != plan_digest(self.config.event_id, plan):
            self._fault(
                index,
                "the plan the organiser signed is not the one the movement gives",
                round=round_,
            )
        self.places.append(seated)
        self.plans.append(plan)
        self.digests.append(plan_digest(self.config.event_id, plan))
        self.open = round_

    def _roster_problem(
        self, seated: list[bytes | None], expected: list[bytes | None] | None
    ) -> str | None:
        if expected is not None and seated != expected:
            return "the places of round 1 are not the draw of the registered players"
        if self.places and len(seated) != len(self.places[0]):
            return f"{len(seated)} places, the event has {len(self.places[0])}"
        held = [key for key in seated if key is not None]
        if len(set(held)) != len(held):
            return "a player holds two places"
        stranger = next((key for key in held if key not in self.names), None)
        return f"{fingerprint(stranger)} holds a place without registering" if stranger else None

    def _table(self, index: int, entry: Entry, head: bytes) -> None:
        try:
            manifest = Manifest.from_bytes(entry.document)
        except ManifestError as exc:
            raise _Malformed(str(exc)) from None
        slot = self._slot_of(manifest.table_id)
        if slot is None:
            self._fault(index, "a table manifest of no table of the open round")
            return
        round_, table = slot
        signatures = tuple(s for s in entry.signatures if s is not None)
        try:
            SignedManifest(entry.document, signatures).verified()
        except ManifestError as exc:
            self._fault(index, f"the manifest does not hold: {exc}", round=round_, table=table)
            return
        planned = self.plans[round_ - 1].tables[table - 1]
        if sorted(manifest.keys) != sorted(planned) or len(signatures) != len(entry.signatures):
            for seat, key in enumerate(manifest.keys):
                if key not in planned:
                    self._fault(
                        index,
                        "a member the plan does not seat at this table",
                        round=round_,
                        table=table,
                        seat=seat,
                        player=key,
                    )
            for key in planned:
                if key not in manifest.keys:
                    self._fault(
                        index,
                        "the plan seats this player here, the manifest does not",
                        round=round_,
                        table=table,
                        player=key,
                    )
            return
        assert self.config is not None
        if manifest.silence is not self.config.silence:
            self._fault(
                index,
                f"the table's rule for silence is {manifest.silence.value}, the event's "
                f"{self.config.silence.value}",
                round=round_,
                table=table,
            )
        elif (round_, table) in self.manifests:
            self._fault(index, "a second manifest for the table", round=round_, table=table)
        else:
            self.manifests[round_, table] = manifest

    def _slot_of(self, table_id_: bytes) -> tuple[int, int] | None:
        assert self.config is not None
        if self.open is None:
            return None
        for table in range(1, len(self.plans[self.open - 1].tables) + 1):
            if table_id(self.config.event_id, self.open, table) == table_id_:
                return self.open, table
        return None

    def _row(self, index: int, entry: Entry, head: bytes) -> None:
        assert self.config is not None
        row = _row_of(entry.document)
        slot = (row.round, row.table, row.deal)
        where: _RowPlace = {"round": row.round, "table": row.table, "deal": row.deal}
        event_id = _fields(entry.document, 11)[0]
        if not self._ours(index, event_id):
            return
        if row.round != self.open:
            self._fault(index, "a row outside the open round", **where)
            return
        manifest = self.manifests.get((row.round, row.table))
        if manifest is None or not 1 <= row.deal <= self.config.deals:
            self._fault(
                index, "a row of no table formed this round, or past the round's deals", **where
            )
            return
        if slot in self.seen:
            self._fault(index, "a second row for this deal", **where)
            return
        self.seen.add(slot)
        problem = self._row_problem(row, manifest)
        if problem:
            self._fault(index, problem, **where)
            return
        if self._signature_faults(index, entry, row, manifest):
            return
        self.rows[slot] = row

    def _row_problem(self, row: EventRow, manifest: Manifest) -> str | None:
        assert self.config is not None and self.open is not None
        players = len(manifest.keys)
        if row.plan != self.digests[self.open - 1]:
            return "the row is signed for another plan of the round"
        if row.table_id != manifest.table_id or len(row.head) != HASH_SIZE:
            return "the row names another table's transcript"
        if len(row.scores) != players or sum(row.scores) != 0:
            return "the row's scores are not one per seat summing to zero"
        if row.status is not DealStatus.PLAYED and any(row.scores):
            return f"a {row.status.value} deal scores nothing"
        for seats in (row.penalties, row.silent):
            if list(seats) != sorted(set(seats)) or not all(0 <= s < players for s in seats):
                return "the row's penalties or silent seats are not seats of the table, in order"
        if not settled(players, row.silent):
            return "the row is signed by too few members to settle it"
        return None

    def _signature_faults(
        self, index: int, entry: Entry, row: EventRow, manifest: Manifest
    ) -> bool:
        assert self.config is not None
        signed = EntryKind.ROW.domain + entry.document
        where: _RowPlace = {"round": row.round, "table": row.table, "deal": row.deal}
        if len(entry.signatures) != len(manifest.keys):
            self._fault(
                index,
                f"{len(entry.signatures)} signatures for {len(manifest.keys)} members",
                **where,
            )
            return True
        faults = False
        for seat, (key, signature) in enumerate(zip(manifest.keys, entry.signatures)):
            if signature is None and seat in row.silent:
                continue
            if signature is None or not verify(key, signature, signed):
                faults = True
                self._fault(
                    index,
                    self._who_signed(signature, signed, manifest.names[seat]),
                    seat=seat,
                    player=key,
                    **where,
                )
        return faults

    def _who_signed(self, signature: bytes | None, signed: bytes, member: str) -> str:
        if signature is None:
            return f"{member} did not sign the row"
        other = next((key for key in self.names if verify(key, signature, signed)), None)
        if other is not None:
            return (
                f"the row is signed by {self.names[other]} ({fingerprint(other)}), "
                f"not by the member {member}"
            )
        return f"the row is not signed by {member}: altered, or signed by another key"

    def _close(self, index: int, entry: Entry, head: bytes) -> None:
        event_id, round_, prev, ranking, lost = _fields(entry.document, 5)
        round_ = _int(round_)
        if not self._ours(index, event_id) or not self._organiser_signed(index, entry, round_):
            return
        if round_ != self.open:
            self._fault(
                index, f"round {round_} closed but round {self.open} is the one open", round=round_
            )
            return
        if prev != head:
            self._fault(
                index, "the organiser's entry does not follow the record before it", round=round_
            )
        lost_rows = _lost(lost, len(self.plans[round_ - 1].tables), self._deals())
        for table, deal in sorted(lost_rows):
            if (round_, table, deal) in self.seen:
                self._fault(
                    index,
                    "declared lost, but the record holds the row",
                    round=round_,
                    table=table,
                    deal=deal,
                )
        for slot in self._slots(round_):
            if slot not in self.seen and slot[1:] not in lost_rows:
                self._fault(index, "the row is missing", round=round_, table=slot[1], deal=slot[2])
        self.lost[round_] = lost_rows
        self.closed, self.open = round_, None
        stated = ranking if type(ranking) is list else None
        computed = _ranking_value(self.standings(round_, set()))
        if stated != computed:
            self._fault(index, _ranking_difference(stated, computed, self.names), round=round_)

    def _ours(self, index: int, event_id: object) -> bool:
        assert self.config is not None
        if event_id != self.config.event_id:
            self._fault(index, "an entry of another event")
            return False
        return True

    def _organiser_signed(self, index: int, entry: Entry, round_: int) -> bool:
        assert self.config is not None
        if not _signed_once(entry, self.config.organiser):
            self._fault(
                index, f"the {entry.kind.value} entry is not signed by the organiser", round=round_
            )
            return False
        return True


def _ranking_difference(stated: object, computed: list[Value], names: Mapping[bytes, str]) -> str:
    """Where the ranking the organiser signed leaves the one the rows give."""
    if type(stated) is not list or len(stated) != len(computed):
        return (
            "the ranking the organiser signed is not the one the rows give (its lines do not match)"
        )
    for place, (said, truth) in enumerate(zip(stated, computed), start=1):
        if said != truth:
            assert isinstance(truth, list)
            key, rank_, total = truth
            assert isinstance(key, bytes)
            return (
                f"the ranking the organiser signed is not the one the rows give: line {place} "
                "should be "
                f"{names.get(key, fingerprint(key))} with {total!r} points, place {rank_!r}"
            )
    return "the ranking the organiser signed is not the one the rows give"


# --------------------------------------------------------------------------- encoding


class _Malformed(ValueError):
    """A document that does not parse as its kind says; becomes a finding."""


def _pack(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def _unpack(data: bytes, what: str) -> object:
    """One msgpack value through :mod:`protocol.wire`'s gate."""
    with wire.refused_as(EventError):
        return wire.unpack(data, max_size=MAX_FILE, what=what)


def _fields(document: bytes, count: int) -> list[object]:
    """The fields of a document that must be a msgpack array of ``count``, canonical."""
    with wire.refused_as(_Malformed):
        value = wire.unpack(document, max_size=MAX_FILE, what="the document")
        fields = wire.array("the document", value, length=count)
        wire.require_canonical("the document", document, fields)
    return fields


def _row_of(document: bytes) -> EventRow:
    _, round_, table, deal, plan, table_id_, head, status, scores, penalties, silent = _fields(
        document, 11
    )
    return EventRow(
        _int(round_),
        _int(table),
        _int(deal),
        _bytes(plan),
        _bytes(table_id_),
        _bytes(head),
        _enum(DealStatus, status),
        _ints(scores),
        _ints(penalties),
        _ints(silent),
    )


def _places(value: object) -> list[bytes | None]:
    if type(value) is not list or not all(v is None or type(v) is bytes for v in value):
        raise _Malformed("the places are not a list of keys and nils")
    return list(value)


def _lost(value: object, tables: int, deals: int) -> set[tuple[int, int]]:
    if type(value) is not list:
        raise _Malformed("the lost rows are not a list")
    rows = set()
    for item in value:
        if type(item) is not list or len(item) != 2:
            raise _Malformed("a lost row is not [table, deal]")
        table, deal = _int(item[0]), _int(item[1])
        if not (1 <= table <= tables and 1 <= deal <= deals):
            raise _Malformed(f"no row ({table}, {deal}) to lose")
        rows.add((table, deal))
    return rows


def _bytes(value: object) -> bytes:
    if type(value) is not bytes:
        raise _Malformed(f"expected bytes, got {type(value).__name__}")
    return value


def _str(value: object) -> str:
    if type(value) is not str:
        raise _Malformed(f"expected a string, got {type(value).__name__}")
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise _Malformed(f"expected an integer, got {type(value).__name__}")
    return value


def _ints(value: object) -> tuple[int, ...]:
    if type(value) is not list:
        raise _Malformed("expected a list of integers")
    return tuple(_int(item) for item in value)


_E = TypeVar("_E", bound=enum.Enum)


def _enum(kind: type[_E], value: object) -> _E:
    for member in kind:
        if type(value) is str and member.value == value:
            return member
    raise _Malformed(f"unknown {kind.__name__} {value!r}")


def _signed_once(entry: Entry, key: bytes) -> bool:
    signature = entry.signatures[0] if len(entry.signatures) == 1 else None
    return signature is not None and verify(key, signature, entry.kind.domain + entry.document)


def _is_name(value: object) -> bool:
    return type(value) is str and 0 < len(value) <= MAX_NAME


def _is_int(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _need(condition: bool, message: str, code: Refusal = Refusal.OTHER, **params: Param) -> None:
    if not condition:
        raise EventError(message, code, **params)
