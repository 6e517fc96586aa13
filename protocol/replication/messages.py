"""The signed envelope every protocol message travels in, and its one canonical byte string.

A message says *who* (seat), *where* (table, deal), *what* (kind, payload) and *after what*
(``prev``: the transcript head it builds on), and is signed by the seat's identity key.
The transcript chains messages by the hash of their bytes and proves equivocation by
showing two signed messages for one slot, so a message must have exactly one byte string:

* The body is a msgpack **array** ``[version, table_id, deal, kind, seat, payload, prev]``:
  an array, not a map, so the field order is not a matter of taste.
* The wire form is the msgpack array ``[body, signature]`` where ``body`` is the body's
  bytes as a msgpack ``bin``.  The signature covers exactly those bytes, as they travelled,
  prefixed by :data:`SIGNING_DOMAIN` so that no other signature made with the same identity
  key (a lobby handshake, say) can ever pass for a message.
* Maps inside a payload are written with their keys sorted, and only types that survive a
  round trip exactly are allowed (no floats, tuples, enums or other subclasses).
  :func:`decode` re-encodes what it parsed and rejects the input unless the bytes are
  identical, so unsorted keys, duplicate keys or a needlessly long integer never get in.

:func:`decode` is the gate for untrusted bytes (:mod:`protocol.wire` unpacks them): whatever
it is fed, it returns a valid :class:`Message` or raises :class:`MessageError` with the
precise reason.  Checking the
signature is a separate step (:func:`verify_signature`), because only the transcript knows
which key the claimed seat has.  A message object remembers the key its signature was proven
for — by checking it, or by :func:`sign_message` making it — so that the seat that signed a
message, and every other seat hosted in the same process, do not check it again: a check
costs about 0.15 ms, on the path of every step of a deal.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Final, TypeAlias

import msgpack

from protocol import wire
from protocol.replication.identity import SIGNATURE_SIZE, Identity, verify

PROTOCOL_VERSION: Final = 2
SIGNING_DOMAIN: Final = b"tarot/v2/message\x00"

TABLE_ID_SIZE: Final = 16
HASH_SIZE: Final = 32  #: SHA-256, the size of ``prev`` and of a digest
MAX_SEATS: Final = 5
MAX_DEAL: Final = 2**64 - 1  #: the transcript hashes the deal number as 8 bytes
MAX_PAYLOAD_DEPTH: Final = 8  #: containers inside containers; real payloads use 3 at most
INT_MIN: Final = -(2**63)  #: the integers msgpack can carry
INT_MAX: Final = 2**64 - 1


class Kind(enum.Enum):
    """The message kinds of a deal.  The value is what goes on the wire."""

    COMMIT = "commit"  # seed commitment and blanket public key (concurrent round)
    SHUFFLE = "shuffle"  # re-encrypted, permuted deck with its proof (seat order)
    LOCK = "lock"  # per-position lock step with its proof (seat order)
    DEAL_KEYS = "deal_keys"  # keys of the positions dealt to others (concurrent round)
    PETIT_SEC = "petit_sec"  # a hand with the petit sec, shown to cancel the deal
    BID = "bid"
    CALL = "call"  # the called card at five players
    CHIEN_OPEN = "chien_open"  # everyone's keys of the chien positions (concurrent round)
    ECART = "ecart"  # the taker's re-committed hand and discard
    CHELEM = "chelem"  # announcing a slam
    POIGNEE = "poignee"  # trumps shown with their keys
    PLAY = "play"  # a card played, i.e. its position's key
    REVEAL = "reveal"  # the seed, at the end of the deal (concurrent round)
    SCORE_SIGN = "score_sign"  # signature of the computed score (concurrent round)
    ABANDON = "abandon"  # a seat gives up, or records one that stopped answering


KiB: Final = 1024

#: Largest msgpack-encoded payload of each kind.  Sized from DESIGN §4 with room to spare:
#: 78 curve points are 2.7 KiB; the shuffle leaves room for a proof of correct shuffle and
#: the écart for a 1-of-n proof per re-commitment (the two stretch goals).  Everything else
#: is a handful of keys or a choice.
PAYLOAD_LIMITS: Final[Mapping[Kind, int]] = MappingProxyType(
    {
        Kind.COMMIT: 1 * KiB,
        Kind.SHUFFLE: 1024 * KiB,
        Kind.LOCK: 64 * KiB,
        Kind.DEAL_KEYS: 16 * KiB,
        Kind.PETIT_SEC: 16 * KiB,
        Kind.BID: 1 * KiB,
        Kind.CALL: 4 * KiB,
        Kind.CHIEN_OPEN: 4 * KiB,
        Kind.ECART: 256 * KiB,
        Kind.CHELEM: 1 * KiB,
        Kind.POIGNEE: 4 * KiB,
        Kind.PLAY: 1 * KiB,
        Kind.REVEAL: 1 * KiB,
        Kind.SCORE_SIGN: 4 * KiB,
        Kind.ABANDON: 4 * KiB,
    }
)

#: Bytes of a frame that are not payload (headers, table id, prev, signature…), rounded up.
ENVELOPE_OVERHEAD: Final = 256
#: Default frame limit of :func:`decode`: the largest payload plus its envelope.
MAX_FRAME_SIZE: Final = max(PAYLOAD_LIMITS.values()) + ENVELOPE_OVERHEAD

#: What a payload may contain: exactly the values msgpack gives back unchanged.
WireValue: TypeAlias = dict[str, "WireValue"] | list["WireValue"] | bytes | int | bool | str | None


class MessageError(ValueError):
    """Bytes or fields that do not make a valid message; the text says which rule failed."""


@dataclass(frozen=True, repr=False)
class Message:
    """One signed message.  Constructing it checks every field, so a ``Message`` that exists
    is always encodable and round-trips to itself; its wire bytes are computed once, here.

    The payload is copied (maps re-ordered by key) so that later changes to the caller's
    dict cannot make the payload disagree with the bytes that were signed; treat
    ``payload`` as read-only.
    """

    version: int
    table_id: bytes
    deal: int
    kind: Kind
    seat: int
    payload: WireValue = field(hash=False)
    prev: bytes
    signature: bytes
    _body: bytes = field(init=False, compare=False)
    _wire: bytes = field(init=False, compare=False)
    #: The key the signature is known to check against (see :func:`verify_signature`).
    _signer: bytes | None = field(init=False, compare=False, default=None)

    def __post_init__(self) -> None:
        payload, body = _make_body(
            self.version, self.table_id, self.deal, self.kind, self.seat, self.payload, self.prev
        )
        with wire.refused_as(MessageError):
            wire.blob("signature", self.signature, SIGNATURE_SIZE)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "_body", body)
        object.__setattr__(self, "_wire", _pack([body, self.signature]))

    def __repr__(self) -> str:
        # Short: a payload can be a megabyte of curve points.
        digest = self.digest.hex()[:16]
        return (
            f"Message(deal={self.deal}, kind={self.kind.value}, seat={self.seat}, digest={digest})"
        )

    @property
    def signed_data(self) -> bytes:
        """The bytes the signature is over: the domain, then the body."""
        return SIGNING_DOMAIN + self._body

    @cached_property
    def digest(self) -> bytes:
        """SHA-256 of the wire bytes: the message's name in the hash chain and in verdicts."""
        return hashlib.sha256(self._wire).digest()


def sign_message(
    identity: Identity,
    table_id: bytes,
    deal: int,
    kind: Kind,
    seat: int,
    payload: WireValue,
    prev: bytes,
) -> Message:
    """Sign a message of the current protocol version.  Raises :class:`MessageError` for
    anything peers would reject, so a local bug fails here rather than on every other seat."""
    payload, body = _make_body(PROTOCOL_VERSION, table_id, deal, kind, seat, payload, prev)
    signature = identity.sign(SIGNING_DOMAIN + body)
    message = Message(PROTOCOL_VERSION, table_id, deal, kind, seat, payload, prev, signature)
    object.__setattr__(message, "_signer", identity.public_key)  # made here: nothing to check
    return message


def encode(message: Message) -> bytes:
    """The message's one wire byte string."""
    return message._wire


def verify_signature(message: Message, public_key: bytes) -> bool:
    """True if ``public_key`` signed this message.  Never raises.  A message checked once, or
    signed in this process, is not checked again for the same key."""
    if message._signer == public_key:
        return True
    if not verify(public_key, message.signature, message.signed_data):
        return False
    object.__setattr__(message, "_signer", public_key)
    return True


def decode(data: bytes, *, max_size: int = MAX_FRAME_SIZE) -> Message:
    """Parse one frame of untrusted bytes.  Raises :class:`MessageError`, and nothing else,
    on anything but the canonical encoding of a well-formed message.  The signature is not
    checked here (see :func:`verify_signature`)."""
    with wire.refused_as(MessageError):
        frame = wire.unpack(data, max_size=max_size, what="frame", max_depth=1)
        if type(frame) is not list or len(frame) != 2:
            raise MessageError(
                f"a frame is a msgpack array [body, signature], got {wire.describe(frame)}"
            )
        body, signature = frame
        if type(body) is not bytes:
            raise MessageError(f"the body is msgpack bin, got {wire.describe(body)}")
        fields = wire.unpack(body, max_size=max_size, what="body")
    if type(fields) is not list or len(fields) != 7:
        raise MessageError(
            "a body is a msgpack array [version, table_id, deal, kind, seat, payload, prev], "
            f"got {wire.describe(fields)}"
        )
    version, table_id, deal, kind, seat, payload, prev = fields
    message = Message(version, table_id, deal, _kind(kind), seat, payload, prev, signature)
    if message._wire != data:
        raise MessageError("non-canonical encoding: the same message re-encodes to other bytes")
    return message


_KINDS: Final[Mapping[str, Kind]] = MappingProxyType({kind.value: kind for kind in Kind})


def _kind(value: object) -> Kind:
    kind = _KINDS.get(value) if type(value) is str else None
    if kind is None:
        raise MessageError(f"unknown message kind {wire.describe(value)}")
    return kind


def _make_body(
    version: int, table_id: bytes, deal: int, kind: Kind, seat: int, payload: object, prev: bytes
) -> tuple[WireValue, bytes]:
    """Check every field of the body and encode it.  Returns the canonical copy of the
    payload (maps sorted by key) with the body bytes."""
    with wire.refused_as(MessageError):
        if wire.integer("version", version, INT_MIN, INT_MAX) != PROTOCOL_VERSION:
            raise MessageError(
                f"unsupported protocol version {version} (this is version {PROTOCOL_VERSION})"
            )
        wire.blob("table_id", table_id, TABLE_ID_SIZE)
        wire.integer("deal", deal, 0, MAX_DEAL)
        if type(kind) is not Kind:
            raise MessageError(f"kind is a Kind, got {wire.describe(kind)}")
        wire.integer("seat", seat, 0, MAX_SEATS - 1)
        wire.blob("prev", prev, HASH_SIZE)
        canonical = _canonical(payload, depth=0)
    size, limit = len(_pack(canonical)), PAYLOAD_LIMITS[kind]
    if size > limit:
        raise MessageError(f"{kind.value} payload of {size} bytes is over the limit of {limit}")
    return canonical, _pack([version, table_id, deal, kind.value, seat, canonical, prev])


def _pack(value: object) -> bytes:
    """msgpack, with bin for bytes and str for str: the only encoder of this module."""
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def _canonical(value: object, depth: int) -> WireValue:
    # Exact type checks: a subclass (bool is an int, an IntEnum is an int, a StrEnum is a
    # str) would be encoded as its base type and decode as something unequal to it.
    if value is None or type(value) is bool or type(value) is bytes:
        return value
    if type(value) is int:
        wire.integer("payload integer", value, INT_MIN, INT_MAX)
        return value
    if type(value) is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise MessageError("payload string is not valid Unicode (lone surrogate)") from None
        return value
    if depth >= MAX_PAYLOAD_DEPTH and type(value) in (list, dict):
        raise MessageError(f"payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels")
    if type(value) is list:
        return [_canonical(item, depth + 1) for item in value]
    if type(value) is dict:
        for key in value:
            if type(key) is not str:
                raise MessageError(f"payload map keys are strings, got {wire.describe(key)}")
        return {key: _canonical(value[key], depth + 1) for key in sorted(value)}
    raise MessageError(f"a payload cannot hold {wire.describe(value)}")
