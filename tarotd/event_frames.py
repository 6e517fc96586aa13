"""The event channel's frames, typed: one frozen dataclass a kind, and :func:`decode`, the one
reader of their untrusted fields (``docs/event.md``, "Frames").

A frame on the wire is a msgpack map with a ``t``; its bytes are exactly those daemons sent
before the frames were typed (each :meth:`to_wire` lays its fields out in the same order), so
daemons of either age take each other's frames.  :func:`decode` passes the bytes through
:mod:`protocol.wire`'s gate, checks each field's type and size, and reads every entry through
the record's own gate (:func:`~protocol.event.event.read_entries`): a handler gets a frame
whose fields hold, and checks only what needs the record or the sender — whether the event is
held here, whether a signature is the member's.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, TypeAlias

import msgpack

from protocol import wire
from protocol.event.event import (
    EVENT_ID_SIZE,
    Entry,
    EntryKind,
    EventError,
    EventRow,
    read_entries,
    read_row,
)
from protocol.replication.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE
from protocol.replication.messages import MAX_SEATS
from tarotd.mesh.wire import MAX_ENDPOINT, MAX_FRAME, is_endpoint

#: Entries one ``entries`` frame may carry: its batch is 512 KiB, and an entry is over 8 bytes.
MAX_ENTRIES: Final = 64 * 1024
#: Players' endpoints in one ``entries`` frame: more than the 1,000 places an event seats,
#: with substitutes registered beside them.
MAX_ENDPOINTS: Final = 4 * 1024


class FrameKind(enum.StrEnum):
    """The ``t`` of a frame."""

    EVENT = "event"
    REGISTER = "register"
    WANT = "want"
    ENTRIES = "entries"
    TABLE = "table"
    ROWSIG = "rowsig"
    ROW = "row"


class FrameRefused(ValueError):
    """A frame from the LAN that does not hold; the text says why, for the log."""


class FrameError(FrameRefused):
    """Bytes that are no event frame: ``kind`` is what they said they were, for the log."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


class _Frame:
    """What every frame does: lay itself out on the wire."""

    KIND: ClassVar[FrameKind]

    def fields(self) -> dict[str, object]:
        raise NotImplementedError

    def to_wire(self) -> bytes:
        """The frame's bytes on the mesh: ``t`` first, then its fields in their order."""
        packed: bytes = msgpack.packb({"t": self.KIND.value, **self.fields()}, use_bin_type=True)
        return packed


@dataclass(frozen=True)
class Announce(_Frame):
    """``event``: the organiser announces its event on the LAN (organiser → everyone)."""

    KIND: ClassVar = FrameKind.EVENT
    event: bytes
    config: Entry  #: the signed config entry: its signature is for the handler to check
    count: int  #: entries the organiser's record holds
    endpoint: str  #: where the organiser's daemon listens

    def fields(self) -> dict[str, object]:
        return {
            "event": self.event,
            "config": self.config.wire,
            "count": self.count,
            "endpoint": self.endpoint,
        }


@dataclass(frozen=True)
class Register(_Frame):
    """``register``: a player's registration entry, and where its daemon listens."""

    KIND: ClassVar = FrameKind.REGISTER
    event: bytes
    entry: Entry
    endpoint: str

    def fields(self) -> dict[str, object]:
        return {"event": self.event, "entry": self.entry.wire, "endpoint": self.endpoint}

    @property
    def player(self) -> bytes:
        """The key the registration is of (:func:`decode` checked it is one)."""
        key: bytes = msgpack.unpackb(self.entry.document, raw=False)[1]
        return key


@dataclass(frozen=True)
class Want(_Frame):
    """``want``: a player asks the organiser for the entries from an index."""

    KIND: ClassVar = FrameKind.WANT
    event: bytes
    start: int

    def fields(self) -> dict[str, object]:
        return {"event": self.event, "from": self.start}


@dataclass(frozen=True)
class Entries(_Frame):
    """``entries``: the organiser's entries from an index, and the players' endpoints."""

    KIND: ClassVar = FrameKind.ENTRIES
    event: bytes
    start: int
    entries: tuple[Entry, ...]
    endpoints: tuple[tuple[bytes, str], ...]

    def fields(self) -> dict[str, object]:
        return {
            "event": self.event,
            "from": self.start,
            "entries": [entry.wire for entry in self.entries],
            "endpoints": [[key, endpoint] for key, endpoint in self.endpoints],
        }


@dataclass(frozen=True)
class _OfEntry(_Frame):
    """A frame that carries one entry for the organiser's record."""

    event: bytes
    entry: Entry

    def fields(self) -> dict[str, object]:
        return {"event": self.event, "entry": self.entry.wire}


class Table(_OfEntry):
    """``table``: a table's signed manifest entry, from a member."""

    KIND: ClassVar = FrameKind.TABLE


@dataclass(frozen=True)
class RowSig(_Frame):
    """``rowsig``: a member's signature of a row's document, with its seat."""

    KIND: ClassVar = FrameKind.ROWSIG
    event: bytes
    document: bytes  #: the row as signed, which names ``event``
    row: EventRow  #: read from ``document``
    seat: int
    sig: bytes

    def fields(self) -> dict[str, object]:
        return {"event": self.event, "row": self.document, "seat": self.seat, "sig": self.sig}


class Row(_OfEntry):
    """``row``: a row whole, signed by every member that must, from a member."""

    KIND: ClassVar = FrameKind.ROW


EventFrame: TypeAlias = Announce | Register | Want | Entries | Table | RowSig | Row
EventOut: TypeAlias = tuple[bytes, EventFrame]  #: (a daemon's key or ``BROADCAST``, a frame)


def decode(body: object) -> EventFrame:
    """The frame ``body`` holds, every field checked (:class:`FrameError` saying why not)."""
    kind = "malformed"
    try:
        value = wire.unpack(
            body, max_size=MAX_FRAME, what="frame of the event channel", max_depth=3
        )
        said = value.get("t") if type(value) is dict else None
        if type(said) is not str:
            raise FrameError(kind, "not an event frame")
        kind = said[:16]
        if said not in _READERS:
            raise FrameError(kind, f"an unknown event frame {kind!r}")
        names = ("t", *_FIELDS[FrameKind(said)])
        return _READERS[said](wire.fields(f"the {kind} frame", value, names))
    except (wire.FieldError, EventError) as why:
        raise FrameError(kind, str(why)) from None


def _event(frame: Mapping[str, object]) -> bytes:
    return wire.blob("event", frame["event"], EVENT_ID_SIZE)


def _endpoint(frame: Mapping[str, object]) -> str:
    endpoint = wire.text("endpoint", frame["endpoint"], MAX_ENDPOINT)
    if not is_endpoint(endpoint):
        raise wire.FieldError("endpoint", f"is tcp://HOST:PORT, got {wire.describe(endpoint)}")
    return endpoint


def _entry(frame: Mapping[str, object], name: str, kind: EntryKind) -> Entry:
    (entry,) = read_entries([wire.binary(name, frame[name], MAX_FRAME)])
    if entry.kind is not kind:
        raise wire.FieldError(name, f"is a {kind.value} entry, got a {entry.kind.value} entry")
    return entry


def _read_announce(frame: Mapping[str, object]) -> Announce:
    count = wire.integer("count", frame["count"], low=1)
    config = _entry(frame, "config", EntryKind.CONFIG)
    return Announce(_event(frame), config, count, _endpoint(frame))


def _read_register(frame: Mapping[str, object]) -> Register:
    """The registration's document read too, [event, player, name]: its signature and its
    name are for the record to check, the player's key for the handler to compare."""
    entry = _entry(frame, "entry", EntryKind.REGISTER)
    document = wire.unpack(entry.document, max_size=MAX_FRAME, what="the registration")
    player = wire.array("the registration", document, length=3)[1]
    wire.blob("the registration's player", player, PUBLIC_KEY_SIZE)
    return Register(_event(frame), entry, _endpoint(frame))


def _read_want(frame: Mapping[str, object]) -> Want:
    return Want(_event(frame), wire.uint("from", frame["from"]))


def _read_endpoint(name: str, item: object) -> tuple[bytes, str]:
    key, endpoint = wire.array(name, item, length=2)
    return wire.blob(f"{name}'s key", key, PUBLIC_KEY_SIZE), _endpoint({"endpoint": endpoint})


def _read_entries(frame: Mapping[str, object]) -> Entries:
    def binary(name: str, value: object) -> bytes:
        return wire.binary(name, value, MAX_FRAME)

    wires = wire.array_of("entries", frame["entries"], binary, max_length=MAX_ENTRIES)
    endpoints = wire.array_of(
        "endpoints", frame["endpoints"], _read_endpoint, max_length=MAX_ENDPOINTS
    )
    start = wire.uint("from", frame["from"])
    return Entries(_event(frame), start, read_entries(wires), tuple(endpoints))


def _read_table(frame: Mapping[str, object]) -> Table:
    return Table(_event(frame), _entry(frame, "entry", EntryKind.TABLE))


def _read_rowsig(frame: Mapping[str, object]) -> RowSig:
    event = _event(frame)
    document = wire.binary("row", frame["row"], MAX_FRAME)
    seat = wire.integer("seat", frame["seat"], 0, MAX_SEATS - 1)
    sig = wire.blob("sig", frame["sig"], SIGNATURE_SIZE)
    row_event, row = read_row(document)
    if row_event != event:
        raise wire.FieldError("row", "is a row of another event")
    return RowSig(event, document, row, seat, sig)


def _read_row(frame: Mapping[str, object]) -> Row:
    return Row(_event(frame), _entry(frame, "entry", EntryKind.ROW))


_FIELDS: Final[Mapping[FrameKind, tuple[str, ...]]] = {
    FrameKind.EVENT: ("event", "config", "count", "endpoint"),
    FrameKind.REGISTER: ("event", "entry", "endpoint"),
    FrameKind.WANT: ("event", "from"),
    FrameKind.ENTRIES: ("event", "from", "entries", "endpoints"),
    FrameKind.TABLE: ("event", "entry"),
    FrameKind.ROWSIG: ("event", "row", "seat", "sig"),
    FrameKind.ROW: ("event", "entry"),
}
_READERS: Final[Mapping[str, Callable[[Mapping[str, object]], EventFrame]]] = {
    FrameKind.EVENT: _read_announce,
    FrameKind.REGISTER: _read_register,
    FrameKind.WANT: _read_want,
    FrameKind.ENTRIES: _read_entries,
    FrameKind.TABLE: _read_table,
    FrameKind.ROWSIG: _read_rowsig,
    FrameKind.ROW: _read_row,
}
