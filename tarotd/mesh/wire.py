"""The mesh's wire frames: one msgpack map each, checked field by field on the way in.

:func:`decode` is the one gate untrusted bytes pass through; :func:`signing_bytes` is what a
signed frame's Ed25519 signature covers.  The frame kinds and their fields are specified in
docs/protocol.md, "The mesh wire format".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgpack

from protocol import wire
from protocol.replication.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity

MiB: Final = 1024 * 1024
MAX_FRAME: Final = 2 * MiB  #: the default of ``Limits.max_frame``
MAX_BIN: Final = 2**32 - 1  #: msgpack's largest bin: a body is bounded by its frame's size
TOKEN_SIZE: Final = 16  #: nonces, sessions and boot ids: unguessable, and cheap on every frame
SIGNING_DOMAIN: Final = b"tarot/v2/mesh/"
MAX_MISS: Final = 256  #: seqs listed in one ``ack``
MAX_NAME: Final = 64
MAX_CHANNEL: Final = 64
MAX_ENDPOINT: Final = 256
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "*", "[::]"})


#: A field's check: its value as it may be, or :class:`~protocol.wire.FieldError` saying why not.
Check = Callable[[str, object], object]


def _blob(size: int) -> Check:
    return lambda name, value: wire.blob(name, value, size)


def _text(max_len: int) -> Check:
    return lambda name, value: wire.text(name, value, max_len)


def _bytes(name: str, value: object) -> bytes:
    return wire.binary(name, value, MAX_BIN)


def _seqs(name: str, value: object) -> list[int]:
    return wire.array_of(name, value, wire.uint, max_length=MAX_MISS)


def is_channel(value: object) -> bool:
    return type(value) is str and len(value) <= MAX_CHANNEL


def is_endpoint(value: object) -> bool:
    """Whether ``value`` is a ``tcp://HOST:PORT`` endpoint a HELLO may advertise."""
    if type(value) is not str or len(value) > MAX_ENDPOINT or not value.startswith("tcp://"):
        return False
    host, _, port = value[len("tcp://") :].rpartition(":")
    return bool(host) and port.isdigit()


def _endpoint(name: str, value: object) -> str:
    endpoint = wire.text(name, value, MAX_ENDPOINT)
    if not is_endpoint(endpoint):
        raise wire.FieldError(name, f"is a tcp://HOST:PORT endpoint, got {wire.describe(value)}")
    return endpoint


_KEY, _TOKEN, _SIG = _blob(PUBLIC_KEY_SIZE), _blob(TOKEN_SIZE), _blob(SIGNATURE_SIZE)

#: Every frame kind with its fields, in signing order.  A frame must have exactly these.
SHAPES: Final[Mapping[str, Mapping[str, Check]]] = {
    "hi": {},
    "challenge": {"key": _KEY, "c": _TOKEN},
    "hello": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "endpoint": _endpoint,
        "challenge": _TOKEN,
        "nonce": _TOKEN,
        "time": wire.uint,
        "boot": _TOKEN,
        "sig": _SIG,
    },
    "hello-ack": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "nonce": _TOKEN,
        "session": _TOKEN,
        "n": wire.uint,
        "sig": _SIG,
    },
    "data": {"s": _TOKEN, "f": wire.uint, "q": wire.uint, "c": _text(MAX_CHANNEL), "b": _bytes},
    "ping": {"s": _TOKEN},
    "ack": {"s": _TOKEN, "n": wire.uint, "top": wire.uint, "miss": _seqs},
    "reauth": {"s": _TOKEN},
}
_KEYS: Final = {kind: ("t", *shape) for kind, shape in SHAPES.items()}
#: what a ROUTER may receive
ROUTER_KINDS: Final = frozenset({"hi", "hello", "data", "ping"})
#: what a DEALER may receive
LINK_KINDS: Final = frozenset({"challenge", "hello-ack", "ack", "reauth"})


def encode(kind: str, fields: Mapping[str, object]) -> bytes:
    packed: bytes = msgpack.packb({"t": kind, **fields}, use_bin_type=True)
    return packed


def signing_bytes(kind: str, fields: Mapping[str, Any]) -> bytes:
    """What a ``kind`` frame's signature covers: its fields re-encoded in a fixed order, so
    the signature does not depend on how the sender's msgpack laid out the map."""
    values = [fields[name] for name in SHAPES[kind] if name != "sig"]
    packed: bytes = msgpack.packb(values, use_bin_type=True)
    return SIGNING_DOMAIN + kind.encode() + b"\x00" + packed


def encode_signed(identity: Identity, kind: str, fields: Mapping[str, object]) -> bytes:
    return encode(kind, {**fields, "sig": identity.sign(signing_bytes(kind, fields))})


def decode(raw: bytes, kinds: frozenset[str], max_size: int = MAX_FRAME) -> dict[str, Any] | None:
    """The frame as a map of exactly the fields of its kind, or None for anything else:
    untrusted bytes pass :mod:`protocol.wire`'s gate, and this never raises."""
    try:
        return _frame(wire.unpack(raw, max_size=max_size, max_depth=2), kinds)
    except wire.FieldError:
        return None


def _frame(value: object, kinds: frozenset[str]) -> dict[str, Any]:
    if type(value) is not dict:
        raise wire.FieldError("a frame", f"is a msgpack map, got {wire.describe(value)}")
    kind = value.get("t")
    if type(kind) is not str or kind not in kinds:
        raise wire.FieldError("t", f"is a kind this socket takes, got {wire.describe(kind)}")
    shape = SHAPES[kind]
    frame = wire.fields(f"a {kind} frame", value, _KEYS[kind])
    for name, check in shape.items():
        check(name, frame[name])
    return frame


def tcp_endpoint(host: str, port: int | str) -> str:
    """``tcp://HOST:PORT``, an IPv6 host in brackets."""
    return f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}"


def reachable(claimed: str, seen_from: str) -> str:
    """The endpoint to connect back to: a peer bound on a wildcard address advertises it as
    is, and the address its connection came from is the one that works from here."""
    host, _, port = claimed[len("tcp://") :].rpartition(":")
    if host not in WILDCARD_HOSTS or not seen_from:
        return claimed
    return tcp_endpoint(seen_from, port)
