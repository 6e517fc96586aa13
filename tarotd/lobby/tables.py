"""A table as the lobby knows it: an offer forming, an event's slot, a table ready to play.

An :class:`Offer` is the lobby's record of a table being formed — its members so far, its
state, what we know of its invite code; its ``offer`` frame (:mod:`tarotd.lobby.frames`) is
what every peer hears of it.  Its id is bound to its opener (:func:`table_id_of`).  Once full,
every member signs :func:`manifest_bytes`; once every coin is in, it is a :class:`ReadyTable`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import msgpack

from protocol.replication.manifest import SignedManifest, SilenceCost, manifest_document
from protocol.replication.public import TableSetup
from tarotd.lobby import frames
from tarotd.lobby.frames import ID_SIZE, Member, OfferState
from tarotd.lobby.invite import Invite

TABLE_DOMAIN: Final = b"tarot/v2/table"


def table_id_of(opener: bytes, nonce: bytes) -> bytes:
    """The id of the table ``opener`` opens with ``nonce``: nobody chooses it, and an offer
    under an id that is not its sender's is refused."""
    return hashlib.sha256(TABLE_DOMAIN + opener + nonce).digest()[:ID_SIZE]


@dataclass
class Offer:
    table_id: bytes
    name: str
    seats: int
    opener: bytes
    members: list[Member] = field(default_factory=list)
    state: OfferState = OfferState.OPEN
    nonce: bytes = b""  #: the id is :func:`table_id_of` the opener and this
    #: Its invite code, if we know it — we opened the offer, or its opener proved a code we
    #: were given — never on the wire.
    invite: Invite | None = None
    #: The daemons that proved its invite code to us, its opener: their joins are taken.
    invited: set[bytes] = field(default_factory=set)
    #: Why its opener refused the code we knocked with, if it did: ``code`` (not its code),
    #: ``wait`` or ``locked`` (:class:`~tarotd.lobby.frames.WhyRefused`) — or ``silent``, when it
    #: never answered.
    refused: str | None = None
    #: The table's rule for a seat timed out mid-deal: its opener's, in the manifest.
    silence: SilenceCost = SilenceCost.NOTHING
    #: The members that kept their coin: the first dealer was drawn without it.
    withheld: tuple[bytes, ...] = ()

    @property
    def full(self) -> bool:
        return len(self.members) >= self.seats

    def frame(self) -> frames.Offer:
        """The offer as its ``offer`` frame tells it."""
        return frames.Offer(
            self.table_id,
            self.name,
            self.seats,
            self.opener,
            tuple(self.members),
            self.state,
            self.nonce,
            self.silence,
        )


@dataclass(frozen=True)
class EventSlot:
    """A table of an event's round, as its plan seats it: the lobby forms it under ``table_id``
    with these members only, in this order.  A registered player is its daemon's own identity,
    so each key is also the key of the daemon hosting that seat; the first one opens."""

    table_id: bytes
    name: str
    keys: tuple[bytes, ...]  #: the members in seat order
    silence: SilenceCost

    @property
    def opener(self) -> bytes:
        return self.keys[0]


@dataclass(frozen=True)
class ReadyTable:
    """A table every member signed, with its first dealer."""

    setup: TableSetup
    members: tuple[Member, ...]
    first_dealer: int
    manifest: bytes  #: the signed manifest, as every member signed it
    signatures: tuple[bytes, ...]
    name: str = ""

    def to_bytes(self) -> bytes:
        """What the daemon stores, to take the table up again after a restart."""
        data: bytes = msgpack.packb(
            [self.manifest, list(self.signatures), self.first_dealer], use_bin_type=True
        )
        return data

    @classmethod
    def from_bytes(cls, data: bytes) -> ReadyTable:
        manifest, signatures, dealer = msgpack.unpackb(data, raw=False)
        document = SignedManifest(manifest, tuple(signatures)).verified()
        members = tuple(frames.member(raw) for raw in document.entries)
        frames.table_id(document.table_id)  # 16 bytes, as every table id
        return cls(
            TableSetup.from_manifest(document),
            members,
            int(dealer),
            manifest,
            tuple(signatures),
            document.name,
        )


def manifest_bytes(
    table_id: bytes,
    name: str,
    members: Sequence[Member],
    silence: SilenceCost = SilenceCost.NOTHING,
) -> bytes:
    """The canonical manifest every member signs: seat order, keys, names, endpoints and the
    table's rule for silence (:mod:`protocol.replication.manifest`)."""
    return manifest_document(table_id, name, [m.to_wire() for m in members], silence)
