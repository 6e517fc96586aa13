"""The beacon: what a daemon says of itself on the LAN, signed, and the codec that refuses
anything else (sans-IO).  What a beacon may claim, and why, is in :mod:`tarotd.discovery`."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import msgpack

from protocol import wire
from protocol.replication.identity import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    is_valid_public_key,
    verify,
)
from protocol.replication.messages import TABLE_ID_SIZE

#: Magic and version open every beacon; as the signed data starts with them, a beacon's
#: signature can never pass for one of a protocol message (signed under another prefix).
BEACON_MAGIC: Final = b"TAROT"
BEACON_VERSION: Final = 1
#: Fits one Ethernet frame with room for IP/UDP headers and a tunnel or two.
MAX_BEACON_SIZE: Final = 1400
MAX_NAME_LENGTH: Final = 64
MAX_TABLES: Final = 16
MIN_SEATS: Final = 3
MAX_SEATS: Final = 5
MAX_TIMESTAMP: Final = 2**63 - 1

_HEADER: Final = BEACON_MAGIC + bytes([BEACON_VERSION])
_FIELDS: Final = ("name", "key", "port", "tables", "goodbye", "timestamp")
#: Characters a name may not hold: controls (a terminal escape sequence in a player's name),
#: surrogates (not encodable) and line or paragraph separators (they break a lobby line).
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})


class BeaconError(ValueError):
    """Bytes or fields that do not make a valid, correctly signed beacon; the text says
    which rule failed."""


@dataclass(frozen=True)
class TableInfo:
    """A table as the lobby lists it: enough to decide whether to ask to join."""

    name: str
    seats: int
    members: int
    open: bool
    table_id: bytes | None = None

    def __post_init__(self) -> None:
        check_text("table name", self.name)
        with wire.refused_as(BeaconError):
            wire.integer("seats", self.seats, MIN_SEATS, MAX_SEATS)
            wire.integer("members", self.members, 0, self.seats)
            wire.boolean("open", self.open)
            if self.table_id is not None:
                wire.blob("table id", self.table_id, TABLE_ID_SIZE)


@dataclass(frozen=True)
class Beacon:
    """One beacon.  Constructing it checks every field, so a ``Beacon`` that exists is one
    that peers accept (but for its size, which :func:`encode_beacon` checks)."""

    name: str
    key: bytes
    port: int
    tables: tuple[TableInfo, ...]
    goodbye: bool
    timestamp: int

    def __post_init__(self) -> None:
        check_text("name", self.name)
        with wire.refused_as(BeaconError):
            wire.blob("key", self.key, PUBLIC_KEY_SIZE)
            if not is_valid_public_key(self.key):
                raise BeaconError(
                    "key is not a valid Ed25519 public key (small order or off the curve)"
                )
            wire.integer("port", self.port, 1, 65535)
            _check_tables(self.tables)
            wire.boolean("goodbye", self.goodbye)
            wire.integer("timestamp", self.timestamp, 0, MAX_TIMESTAMP)


def encode_beacon(beacon: Beacon, identity: Identity) -> bytes:
    """The datagram: magic ‖ version ‖ msgpack body ‖ Ed25519 signature of all that precedes.
    Raises :class:`BeaconError` if ``identity`` is not the beacon's key or the datagram
    would be over :data:`MAX_BEACON_SIZE` (see :func:`make_beacon`, which trims tables)."""
    if beacon.key != identity.public_key:
        raise BeaconError("the beacon's key is not the public key of the identity signing it")
    signed = _HEADER + _body(beacon)
    size = len(signed) + SIGNATURE_SIZE
    if size > MAX_BEACON_SIZE:
        raise BeaconError(
            f"beacon of {size} bytes is over the {MAX_BEACON_SIZE}-byte limit "
            "(announce fewer tables or shorter names)"
        )
    return signed + identity.sign(signed)


def decode_beacon(data: bytes) -> Beacon:
    """Parse and authenticate one datagram of untrusted bytes.  Returns a beacon its key
    really signed, or raises :class:`BeaconError`, and nothing else, saying why not."""
    unsigned = parse_beacon(data)
    unsigned.authenticate()
    return unsigned.beacon


@dataclass(frozen=True)
class Unverified:
    """A datagram that makes a valid beacon but for its signature, not checked yet: what a
    daemon may look at to decide it has no room for it anyway, and nothing else."""

    beacon: Beacon
    signed: bytes
    signature: bytes

    def authenticate(self) -> None:
        """Raise :class:`BeaconError` unless the beacon's key signed it."""
        if not verify(self.beacon.key, self.signature, self.signed):
            raise BeaconError("bad signature: the beacon was not signed by the key it names")


def parse_beacon(data: bytes) -> Unverified:
    """:func:`decode_beacon` but for the signature: every other check, :class:`BeaconError`
    saying which fails.  Its signature is checked by :meth:`Unverified.authenticate`."""
    signed, body, signature = _split(data)
    with wire.refused_as(BeaconError):
        value = wire.unpack(body, max_size=MAX_BEACON_SIZE, what="the beacon body", max_depth=3)
        return Unverified(_beacon_from_wire(value), signed, signature)


def make_beacon(
    name: str, key: bytes, port: int, tables: Sequence[TableInfo], goodbye: bool, timestamp: int
) -> Beacon:
    """A beacon that fits in a datagram: the first tables that fit are announced, the rest
    left out (the lobby shows them once others close), rather than no beacon at all."""
    kept = tuple(tables[:MAX_TABLES])
    while True:
        beacon = Beacon(name, key, port, kept, goodbye, timestamp)
        if not kept or len(_HEADER) + len(_body(beacon)) + SIGNATURE_SIZE <= MAX_BEACON_SIZE:
            return beacon
        kept = kept[:-1]


def _body(beacon: Beacon) -> bytes:
    tables = [[t.name, t.seats, t.members, t.open, t.table_id] for t in beacon.tables]
    fields = [beacon.name, beacon.key, beacon.port, tables, beacon.goodbye, beacon.timestamp]
    packed: bytes = msgpack.packb(dict(zip(_FIELDS, fields)), use_bin_type=True)
    return packed


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """The signed part, the body and the signature of a datagram, after its frame checks."""
    if type(data) is not bytes:
        raise BeaconError(f"a beacon is bytes, not {type(data).__name__}")
    if len(data) > MAX_BEACON_SIZE:
        raise BeaconError(f"beacon of {len(data)} bytes is over the {MAX_BEACON_SIZE}-byte limit")
    if not data.startswith(BEACON_MAGIC):
        raise BeaconError(f"bad magic: not a tarot beacon (starts {data[:8]!r})")
    if len(data) > len(BEACON_MAGIC) and data[len(BEACON_MAGIC)] != BEACON_VERSION:
        version = data[len(BEACON_MAGIC)]
        raise BeaconError(
            f"unsupported beacon version {version} (this daemon speaks {BEACON_VERSION})"
        )
    if len(data) <= len(_HEADER) + SIGNATURE_SIZE:
        raise BeaconError(f"beacon of {len(data)} bytes is too short for a body and a signature")
    return data[:-SIGNATURE_SIZE], data[len(_HEADER) : -SIGNATURE_SIZE], data[-SIGNATURE_SIZE:]


def _beacon_from_wire(value: object) -> Beacon:
    fields = wire.fields("the beacon body", value, _FIELDS)
    name, key, port, tables, goodbye, timestamp = (fields[field] for field in _FIELDS)
    return Beacon(name, key, port, _tables_from_wire(tables), goodbye, timestamp)


def _tables_from_wire(value: object) -> tuple[TableInfo, ...]:
    tables = wire.array("tables", value, max_length=MAX_TABLES)
    return tuple(_table_from_wire(index, entry) for index, entry in enumerate(tables))


def _table_from_wire(index: int, value: object) -> TableInfo:
    if type(value) is not list or len(value) != 5:
        raise BeaconError(
            f"table {index} is an array [name, seats, members, open, table_id], "
            f"got {wire.describe(value)}"
        )
    try:
        return TableInfo(*value)
    except BeaconError as exc:
        raise BeaconError(f"table {index}: {exc}") from None


def _check_tables(tables: object) -> None:
    if type(tables) is not tuple:
        raise BeaconError(f"tables is a tuple of TableInfo, got {wire.describe(tables)}")
    if len(tables) > MAX_TABLES:
        raise BeaconError(f"{len(tables)} tables announced, at most {MAX_TABLES} allowed")
    for table in tables:
        if type(table) is not TableInfo:
            raise BeaconError(f"a table is a TableInfo, got {wire.describe(table)}")


def check_text(what: str, value: object) -> None:
    """A name a beacon may carry (a daemon's, a table's): 1 to 64 characters, none of them a
    control or a line separator.  Also what ``tarotd --name`` and ``--table`` are held to."""
    with wire.refused_as(BeaconError):
        value = wire.text(what, value, MAX_NAME_LENGTH, min_length=1)
    for char in value:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            raise BeaconError(f"{what} holds the control or separator character U+{ord(char):04X}")
