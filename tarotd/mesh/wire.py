"""The mesh's wire frames: one msgpack map each, checked field by field on the way in.

:func:`decode` is the one gate untrusted bytes pass through; :func:`signing_bytes` is what a
signed frame's Ed25519 signature covers.  The frame kinds and their fields are specified in
:mod:`tarotd.mesh`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgpack

from protocol.replication.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity

MiB: Final = 1024 * 1024
TOKEN_SIZE: Final = 16  #: nonces, sessions and boot ids: unguessable, and cheap on every frame
SIGNING_DOMAIN: Final = b"tarot/v2/mesh/"
MAX_MISS: Final = 256  #: seqs listed in one ``ack``
MAX_NAME: Final = 64
MAX_CHANNEL: Final = 64
MAX_ENDPOINT: Final = 256
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "*", "[::]"})


def _uint(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**63


def _blob(size: int) -> Callable[[object], bool]:
    return lambda value: type(value) is bytes and len(value) == size


def _text(max_len: int) -> Callable[[object], bool]:
    return lambda value: type(value) is str and len(value) <= max_len


def _bytes(value: object) -> bool:
    return type(value) is bytes


def _seqs(value: object) -> bool:
    return type(value) is list and len(value) <= MAX_MISS and all(_uint(q) for q in value)


def is_channel(value: object) -> bool:
    return type(value) is str and len(value) <= MAX_CHANNEL


def is_endpoint(value: object) -> bool:
    """Whether ``value`` is a ``tcp://HOST:PORT`` endpoint a HELLO may advertise."""
    if type(value) is not str or len(value) > MAX_ENDPOINT or not value.startswith("tcp://"):
        return False
    host, _, port = value[len("tcp://") :].rpartition(":")
    return bool(host) and port.isdigit()


_KEY, _TOKEN, _SIG = _blob(PUBLIC_KEY_SIZE), _blob(TOKEN_SIZE), _blob(SIGNATURE_SIZE)

#: Every frame kind with its fields, in signing order.  A frame must have exactly these.
SHAPES: Final[Mapping[str, Mapping[str, Callable[[object], bool]]]] = {
    "hi": {},
    "challenge": {"key": _KEY, "c": _TOKEN},
    "hello": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "endpoint": is_endpoint,
        "challenge": _TOKEN,
        "nonce": _TOKEN,
        "time": _uint,
        "boot": _TOKEN,
        "sig": _SIG,
    },
    "hello-ack": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "nonce": _TOKEN,
        "session": _TOKEN,
        "n": _uint,
        "sig": _SIG,
    },
    "data": {"s": _TOKEN, "f": _uint, "q": _uint, "c": is_channel, "b": _bytes},
    "ping": {"s": _TOKEN},
    "ack": {"s": _TOKEN, "n": _uint, "top": _uint, "miss": _seqs},
    "reauth": {"s": _TOKEN},
}
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


def decode(raw: bytes, kinds: frozenset[str]) -> dict[str, Any] | None:
    """The frame as a map of exactly the fields of its kind, or None for anything else:
    the one gate untrusted bytes pass through, and it never raises."""
    try:
        msg = msgpack.unpackb(raw, raw=False)
    except Exception:  # msgpack raises many types; each means "not a frame"
        return None
    if type(msg) is not dict:
        return None
    kind = msg.get("t")
    if type(kind) is not str or kind not in kinds:
        return None
    shape = SHAPES[kind]
    if msg.keys() != {"t", *shape} or not all(check(msg[name]) for name, check in shape.items()):
        return None
    return msg


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
