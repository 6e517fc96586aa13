"""The mesh's frames at the gate (tarotd/mesh/wire.py), from a hostile peer's side: a frame
is exactly the fields of its kind, each of its type and size, or it is nothing (None)."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from tarotd.mesh.wire import LINK_KINDS, MAX_MISS, ROUTER_KINDS, decode, encode

S = bytes(16)
DATA: dict[str, Any] = {"s": S, "f": 1, "q": 2, "c": "lobby", "b": b"body"}
HELLO: dict[str, Any] = {
    "key": bytes(32),
    "to": bytes(32),
    "name": "alice",
    "endpoint": "tcp://10.0.0.1:5555",
    "challenge": S,
    "nonce": S,
    "time": 1_700_000_000,
    "boot": S,
    "sig": bytes(64),
}


def test_honest_frames_pass() -> None:
    assert decode(encode("data", DATA), ROUTER_KINDS) == {"t": "data", **DATA}
    assert decode(encode("hello", HELLO), ROUTER_KINDS) == {"t": "hello", **HELLO}
    ack = {"s": S, "n": 3, "top": 9, "miss": list(range(4, 4 + MAX_MISS))}
    assert decode(encode("ack", ack), LINK_KINDS) == {"t": "ack", **ack}


@pytest.mark.parametrize(
    "raw",
    [
        encode("data", {**DATA, "q": True}),  # a bool is no seq
        encode("data", {**DATA, "q": -1}),
        encode("data", {**DATA, "q": 2**63}),
        encode("data", {**DATA, "f": 1.0}),
        encode("data", {**DATA, "s": bytes(15)}),
        encode("data", {**DATA, "c": "x" * 65}),
        encode("data", {**DATA, "b": "text"}),
        encode("data", {k: v for k, v in DATA.items() if k != "b"}),  # a field missing
        encode("data", {**DATA, "x": 1}),  # one too many
        encode("ack", {"s": S, "n": 1, "top": 1, "miss": []}),  # a DEALER's kind, on the ROUTER
        encode("teleport", {}),
        encode("hello", {**HELLO, "endpoint": "udp://10.0.0.1:5555"}),
        encode("hello", {**HELLO, "endpoint": "tcp://" + "h" * 300 + ":1"}),
        encode("hello", {**HELLO, "name": "n" * 65}),
        encode("hi", {}) + b"\x00",  # two values
        msgpack.packb({"t": "hi", 1: 2}),  # a key that is not text
        msgpack.packb({"t": "ping", "s": [[S]]}),  # nested too deep
        msgpack.packb({"t": "data", **DATA, "b": msgpack.ExtType(1, b"x")}),
        msgpack.packb(["data", S]),
        b"\xc1",
    ],
)
def test_anything_else_is_nothing(raw: bytes) -> None:
    assert decode(raw, ROUTER_KINDS) is None


def test_an_ack_lists_at_most_so_many_misses_each_a_seq() -> None:
    assert (
        decode(encode("ack", {"s": S, "n": 1, "top": 1, "miss": [0] * (MAX_MISS + 1)}), LINK_KINDS)
        is None
    )
    assert decode(encode("ack", {"s": S, "n": 1, "top": 1, "miss": [1, False]}), LINK_KINDS) is None


def test_a_frame_over_the_limit_is_nothing() -> None:
    raw = encode("data", DATA)
    assert decode(raw, ROUTER_KINDS, max_size=len(raw)) is not None
    assert decode(raw, ROUTER_KINDS, max_size=len(raw) - 1) is None
