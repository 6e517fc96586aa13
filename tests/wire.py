"""Hostile input for a real daemon's two wires, shared by the malformed-input tests and the
fuzz run: frames for its ZeroMQ peer socket (DEALER sockets of our own, a stranger's signed
HELLO and the session it earns, junk of every shape) and lines for its local API, plus the
probes that tell whether the daemon still answers on each.

Everything random here is drawn from the ``random.Random`` passed in, so that a run is
reproducible from its seed (only HELLO timestamps, and the challenges and sessions the
daemon issues, differ between runs).
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from daemons import wait_for_path

from client.api import DaemonUnavailable, ask
from protocol.replication.identity import Identity, verify
from protocol.replication.messages import Kind, sign_message
from protocol.replication.messages import encode as encode_message
from tarotd.mesh import (
    LINK_KINDS,
    curve_public_key,
    curve_secret_key,
    decode,
    encode,
    encode_signed,
    signing_bytes,
)

TOKEN = 16  #: bytes of a mesh nonce, session or boot id

Context = zmq.Context[zmq.Socket[bytes]]


def identity(rng: random.Random) -> Identity:
    """A key pair drawn from ``rng``: the same stranger on every run of a seed."""
    return Identity.from_private_bytes(rng.randbytes(32))


def routing_id(rng: random.Random) -> bytes:
    """A random ZeroMQ routing id (one that starts with a zero byte is ZeroMQ's own)."""
    return bytes([rng.randrange(1, 256)]) + rng.randbytes(rng.randrange(0, 40))


def hello_fields(
    key: Identity,
    rng: random.Random,
    endpoint: str,
    to: bytes | None = None,
    challenge: bytes | None = None,
) -> dict[str, Any]:
    """The fields of a HELLO from ``key`` to the daemon ``to`` answering its ``challenge``
    (random ones if not given), with a new nonce, not yet signed."""
    return {
        "key": key.public_key,
        "to": rng.randbytes(32) if to is None else to,
        "name": "intrus",
        "endpoint": endpoint,
        "challenge": rng.randbytes(TOKEN) if challenge is None else challenge,
        "nonce": rng.randbytes(TOKEN),
        "time": int(time.time()),
        "boot": rng.randbytes(TOKEN),
    }


def nested(depth: int) -> object:
    """A list nested ``depth`` deep: parsers that recurse must not blow their stack."""
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


def wrong_shapes(session: bytes, stranger: Identity, rng: random.Random) -> list[object]:
    """Msgpack values a ROUTER must refuse: near misses of each frame kind, wrong types,
    out-of-range numbers, a bad signature, deep nesting, an extension type."""
    return [
        None,
        0,
        -1,
        2**64 - 1,
        1.5,
        float("nan"),
        "hello",
        b"hello",
        [],
        [1, 2, 3],
        {},
        {"t": "hello"},
        {"t": "data"},
        {"t": 5},
        {b"t": b"ping", b"s": session},
        {"t": "ack", "s": session, "n": 1, "top": 1, "miss": []},  # a DEALER's kind, not a ROUTER's
        {"t": "hello-ack", "key": stranger.public_key},
        {"t": "challenge", "key": stranger.public_key, "c": session},  # a DEALER's kind too
        {"t": "hi", "key": stranger.public_key},
        {"t": "ping", "s": session[:5]},
        {"t": "ping", "s": session, "extra": 1},
        {"t": "ping", "s": "not bytes at all"},
        {"t": "data", "s": session, "f": -1, "q": 1, "c": "deal", "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 2**64 - 1, "c": "deal", "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 1, "c": "x" * 500, "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 1, "c": 7, "b": "text"},
        {
            "t": "hello",
            "key": "k",
            "to": 1,
            "name": 1,
            "endpoint": "udp://x",
            "challenge": b"",
            "nonce": b"",
            "time": -5,
            "boot": None,
            "sig": b"",
        },
        {
            "t": "hello",
            **{
                k: v
                for k, v in hello_fields(stranger, rng, "tcp://127.0.0.1:9").items()
                if k not in ("to", "challenge")
            },
            "sig": rng.randbytes(64),
        },  # a HELLO of before the challenge
        {
            "t": "hello",
            **hello_fields(stranger, rng, "tcp://127.0.0.1:9"),
            "sig": rng.randbytes(64),
        },  # a bad signature
        nested(40),
        msgpack.ExtType(5, b"extension"),
        {"t": "ping", "s": session, "sig": [1, 2, {"x": None}]},
    ]


def junk_frames(rng: random.Random, count: int) -> list[list[bytes]]:
    """Messages a ROUTER must drop: each a list of frames (most of them one frame)."""
    session = rng.randbytes(TOKEN)
    stranger = identity(rng)
    signed_hello = encode_signed(
        stranger, "hello", hello_fields(stranger, rng, "tcp://127.0.0.1:9")
    )
    data = encode("data", {"s": session, "f": 1, "q": 1, "c": "deal", "b": rng.randbytes(64)})
    frames: list[list[bytes]] = []
    for value in wrong_shapes(session, stranger, rng):
        frames.append([msgpack.packb(value, use_bin_type=True)])
    frames.append([msgpack.packb({1: 2, 3: 4})])  # integer map keys
    frames.append([b"\xdf\xff\xff\xff\xff"])  # a map announcing 4 billion entries, and none
    frames.append([b"\xc6\x7f\xff\xff\xff" + b"x" * 10])  # a bin of 2 GiB, 10 bytes there
    frames.append([b"\xc1"])  # the one byte msgpack never uses
    frames.append([b""])
    frames.append([data, data])  # multipart
    frames.append([signed_hello, b"", b"more"])
    while len(frames) < count:
        choice = rng.randrange(3)
        if choice == 0:
            frames.append([rng.randbytes(rng.randrange(0, 3000))])
        elif choice == 1:
            whole = rng.choice([signed_hello, data])
            frames.append([whole[: rng.randrange(1, len(whole))]])  # truncated msgpack
        else:
            flipped = bytearray(rng.choice([signed_hello, data]))
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)  # one bit flipped
            frames.append([bytes(flipped)])
    rng.shuffle(frames)
    return frames


def lobby_bodies(stranger: Identity, table_id: bytes, rng: random.Random) -> list[bytes]:
    """Bodies for the ``lobby`` channel from a stranger: well-formed lobby frames naming the
    real table (a join, a manifest, signatures and coins it has no business sending, an offer
    withdrawing the table) and ill-formed ones.  A daemon must act on none of them."""
    member = [stranger.public_key, "intrus", stranger.public_key, "tcp://127.0.0.1:9"]
    frames: list[object] = [
        {"t": "join", "table": table_id, "members": [member]},
        {"t": "manifest", "table": table_id, "members": [member, member, member]},
        {
            "t": "sign",
            "table": table_id,
            "key": stranger.public_key,
            "sig": rng.randbytes(64),
            "commit": rng.randbytes(32),
        },
        {"t": "coin", "table": table_id, "key": stranger.public_key, "coin": rng.randbytes(64)},
        {
            "t": "offer",
            "table": table_id,
            "name": "club",
            "seats": 3,
            "opener": stranger.public_key,
            "members": [member],
            "state": "withdrawn",
        },
        {"t": "offer", "table": "short", "name": None, "seats": "3"},
        {"t": None},
        {"t": ["offer"]},
        [],
        "offer",
        {"t": "join", "table": table_id, "members": [[1, 2]]},
    ]
    bodies: list[bytes] = [msgpack.packb(frame, use_bin_type=True) for frame in frames]
    bodies.append(rng.randbytes(100))
    bodies.append(msgpack.packb({"t": "join"}) + b"trailing")
    return bodies


def deal_bodies(stranger: Identity, table_id: bytes, deal: int, rng: random.Random) -> list[bytes]:
    """Bodies for the ``deal`` channel: deal messages of several kinds, for every seat, this
    deal and the next, validly signed by a stranger who holds no seat at the table."""
    bodies: list[bytes] = []
    for kind in (Kind.COMMIT, Kind.BID, Kind.PLAY, Kind.ABANDON, Kind.REVEAL, Kind.SCORE_SIGN):
        for seat in range(3):
            for number in (deal, deal + 1):
                payload: Any = {"card": rng.randrange(78), "key": rng.randbytes(32)}
                message = sign_message(
                    stranger, table_id, number, kind, seat, payload, rng.randbytes(32)
                )
                bodies.append(encode_message(message))
    return bodies


def dealer(
    context: Context, endpoint: str, routing: bytes, daemon: bytes, speaker: Identity | None = None
) -> zmq.Socket[bytes]:
    """A DEALER of ours on the ROUTER of the daemon whose key is ``daemon``, under the routing
    id ``routing``; closing it drops whatever it has not sent (no linger), so a test never
    waits on a full queue.  It encrypts, as the daemon does by default: knowing the daemon's
    key lets anyone through the CURVE handshake, under a throw-away CURVE key, or the one
    derived from ``speaker``'s identity — the only one under which a HELLO of ``speaker``'s
    is taken."""
    public, secret = (
        zmq.curve_keypair()
        if speaker is None
        else (curve_public_key(speaker.public_key), curve_secret_key(speaker))
    )
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, routing)
    sock.setsockopt(zmq.CURVE_SERVERKEY, curve_public_key(daemon))
    sock.setsockopt(zmq.CURVE_PUBLICKEY, public)
    sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
    sock.connect(endpoint)
    return sock


def replies(
    sock: zmq.Socket[bytes], timeout: float, until: Callable[[dict[str, Any]], bool] | None = None
) -> list[dict[str, Any]]:
    """The frames the daemon sends back within ``timeout`` seconds, decoded (up to the first
    one ``until`` accepts, if given)."""
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not sock.poll(int(left * 1000) + 1):
            break
        frame = decode(sock.recv(), LINK_KINDS)
        if frame is not None:
            out.append(frame)
            if until is not None and until(frame):
                break
    return out


def barrier(sock: zmq.Socket[bytes], rng: random.Random, timeout: float = 10) -> None:
    """A ping with a session nobody issued gets ``reauth`` back: the daemon has read every
    frame sent before on this connection, and still answers."""
    session = rng.randbytes(TOKEN)
    deadline = time.monotonic() + timeout

    def answer(frame: dict[str, Any]) -> bool:
        return bool(frame["t"] == "reauth" and frame["s"] == session)

    while time.monotonic() < deadline:
        sock.send(encode("ping", {"s": session}))
        if any(answer(frame) for frame in replies(sock, 0.5, answer)):
            return
    pytest.fail(f"the daemon stopped answering on the peer socket for {timeout} s")


def challenge(sock: zmq.Socket[bytes], daemon: bytes) -> bytes:
    """Say ``hi`` on ``sock``: the challenge the daemon (key ``daemon``) gives that connection."""
    sock.send(encode("hi", {}))
    answer = next(
        (f for f in replies(sock, 5, lambda f: f["t"] == "challenge") if f["t"] == "challenge"),
        None,
    )
    assert answer is not None and answer["key"] == daemon, "no challenge for a hi"
    return bytes(answer["c"])


def handshake(
    sock: zmq.Socket[bytes], stranger: Identity, daemon: bytes, rng: random.Random, endpoint: str
) -> tuple[bytes, bytes]:
    """A valid HELLO from ``stranger`` on ``sock``, answering the challenge it asks for: the
    daemon (key ``daemon``) must answer with a HELLO-ACK it signed for us.  Returns the HELLO
    sent and the session granted."""
    hello = encode_signed(
        stranger, "hello", hello_fields(stranger, rng, endpoint, daemon, challenge(sock, daemon))
    )
    sock.send(hello)
    ack = next(
        (f for f in replies(sock, 5, lambda f: f["t"] == "hello-ack") if f["t"] == "hello-ack"),
        None,
    )
    assert ack is not None, "no HELLO-ACK for a validly signed HELLO"
    sent = decode(hello, frozenset({"hello"}))
    assert sent is not None
    assert (
        ack["key"] == daemon and ack["to"] == stranger.public_key and ack["nonce"] == sent["nonce"]
    )
    assert verify(daemon, ack["sig"], signing_bytes("hello-ack", ack))
    return hello, ack["session"]


API_JUNK: list[bytes] = [
    b"{",
    b"}",
    b"[]",
    b"null",
    b"true",
    b'{"op": null}',
    b'{"op": ["status"]}',
    b'{"op": {"op": "status"}}',
    b'{"op": "play", "card": 123}',
    b'{"op": "play", "card": null}',
    b'{"op": "bid", "contract": ["garde"]}',
    b'{"op": "ecart", "cards": [1, 2]}',
    b'{"op": "poignee", "cards": {"T1": 1}}',
    b'{"op": "join"}',
    b'{"op": "join", "table": 5}',
    b'{"op": "open", "seats": [3]}',
    b'{"op": "open", "name": {"x": 1}}',
    b'{"op": "' + b"x" * 10_000 + b'"}',
    b'{"op": "\\u0000"}',
    b'{"op": "st\\ud83datus"}',
    b'{"id": {"deep": [[[]]]}, "op": 1}',
    b'{"op": "status"',
    b"\x00\x00\x00",
    b"NaN",
    b'{"op": "statu\xc3"}',
    b"[" * 3000,
    b'{"op": -0.0e99999}',
]
"""Local API lines that must each get an error response, whatever the game's state."""


def status(home: Path) -> dict[str, Any] | None:
    """The daemon's ``status``, or None if it does not answer (gone, or not up yet)."""
    try:
        result: dict[str, Any] = asyncio.run(ask(home, "status"))
    except (DaemonUnavailable, ConnectionError, OSError):
        return None
    return result


def wait_for_deal(
    home: Path, process: subprocess.Popen[bytes], deal: int, timeout: float = 30
) -> str | None:
    """The table id once deal ``deal`` is under way there (None if the daemon is past it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        found = status(home)
        tables = found["tables"] if found else []
        if tables and tables[0]["deal"] == deal and tables[0]["scored"] == deal:
            return str(tables[0]["table"])
        if tables and tables[0]["scored"] > deal:
            return None
        time.sleep(0.02)
    return None


def public_key(home: Path, process: subprocess.Popen[bytes]) -> bytes:
    """The daemon's identity key, read from its home once it has written it."""
    wait_for_path(home / "identity.key", process)
    deadline = time.monotonic() + 5
    while True:
        try:
            return Identity.from_private_bytes((home / "identity.key").read_bytes()).public_key
        except ValueError:  # being written
            assert time.monotonic() < deadline
            time.sleep(0.02)
