"""Fuzz: 100,000 random and mutated frames at a daemon's peer socket and 100,000 random and
mutated lines at a daemon's local API while three bot daemons play a table on 127.0.0.1 —
no crash, no change to any game.

:mod:`test_daemon_malformed` sends a few hundred hand-picked hostile inputs; this run sends
what nobody thought of, at volume, while the deals go on.  Everything is drawn from one
seed (``FUZZ_SEED`` overrides :data:`SEED`; the run prints it), so a failure replays.

**Peer socket** (daemon 0's ZeroMQ ROUTER), from several DEALER sockets of ours, through the
CURVE handshake (the daemon's key is public, and any client key passes it): intruders
under random routing ids, and strangers that complete a valid HELLO with keys of their own
and then send with the session they were granted, so their data frames get past the session
check and their bodies reach the lobby and the deal.  The mix: random bytes; valid frames of
every kind (hi, challenge, hello, hello-ack, data, ping, ack, reauth) truncated, bit-flipped,
spliced, or with one field replaced, dropped, added or renamed; msgpack of the wrong shape;
multipart junk; frames between the mesh's 2 MiB limit and ZeroMQ's 4 MiB one; from the
strangers, data frames carrying mutated lobby frames and mutated deal messages signed for the
real table.  Sends never block: a frame the socket will not take within a second is dropped and
counted, so the test cannot hang on a daemon that stopped reading.

**Local API** (daemon 1's ``api.sock``): random bytes, mutated valid requests (wrong types,
unknown ops, bad card codes), huge numbers, deep nesting, unicode and invalid UTF-8, lines
over the 64 KiB limit.  The daemon's own seat is a bot's, but its API could still move for
that seat: a line the daemon could take as a move or a lobby step (parsed as it parses
requests, a move decoded by its own ``parse_move``) has its op defused (``~play``) before it is
sent, and the daemon must then accept only read-only requests — an accepted move fails the
test.  Every line gets one answer, never "internal error".

Then: the daemons were still playing when the fuzz ended, every one exits 0, the score
sheets are identical with every deal audited ok and every row summing to zero, the table is
still the one the members formed, the strangers' sessions still work, and no log holds a
traceback.  The daemon's mesh counters are not exposed (its ``status`` has none); its
answers (``reauth`` to unknown sessions, ``ack`` to the strangers' data) show it read the
frames.  Slow: ``-m slow``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from daemons import (
    assert_no_traceback,
    free_ports,
    kill_all,
    logs,
    scores,
    start_daemons,
    wait_all,
    wait_for_path,
)
from wire import (
    API_JUNK,
    TOKEN,
    Context,
    barrier,
    deal_bodies,
    dealer,
    handshake,
    hello_fields,
    identity,
    lobby_bodies,
    public_key,
    replies,
    routing_id,
    status,
    wait_for_deal,
    wrong_shapes,
)

from client.api import ask
from protocol.refusal import Refusal
from protocol.replication.identity import Identity
from tarotd.api import MAX_LINE
from tarotd.mesh import LINK_KINDS, MiB, decode, encode, encode_signed
from tarotd.requests import MoveOp, parse_move

SEED = 20261201
FRAMES = 100_000
LINES = 100_000
RATE = 2500.0  #: frames per second aimed at the peer socket: the intruders' share stays
#: under the 2,000 a second all unknown routing ids share, so most frames reach the decoder
PLAYERS = 3
DEALS = 5
THINK = "0.5"  #: seconds per bot decision: the deals outlast the fuzz (two to three minutes here)
INTRUDERS = 4
STRANGERS = 3
OVER_LIMIT = 10  #: API lines over the 64 KiB limit, each on a connection of its own
LINE_CAP = MAX_LINE - 1024  #: the longest line the main API connection sends
HUGE = 0.03  #: share of the random, deep and numeric lines that run to tens of kilobytes
WINDOW = 256  #: API requests in flight at once
SEND_WAIT_MS = 1000  #: how long a peer frame may wait for room in our socket before it is dropped

READ_ONLY = frozenset({"status", "state", "tables", "scores"})
LOBBY_OPS = frozenset({"next", "bot", "open", "join", "leave"})
CODES = frozenset(refusal.value for refusal in Refusal)  #: what a refusal's "code" may be
FRAME_FIELDS = (
    "t",
    "s",
    "f",
    "q",
    "c",
    "b",
    "n",
    "top",
    "miss",
    "key",
    "to",
    "name",
    "endpoint",
    "challenge",
    "nonce",
    "time",
    "boot",
    "session",
    "sig",
    "table",
    "members",
    "seats",
    "state",
)
API_FIELDS = ("op", "id", "card", "cards", "contract", "announce", "name", "seats", "table")
API_TEMPLATES: list[dict[str, Any]] = [
    {"op": "status"},
    {"op": "state"},
    {"op": "tables"},
    {"op": "scores"},
    {"id": 7, "op": "play", "card": "KH"},
    {"op": "bid", "contract": "garde"},
    {"op": "bid", "contract": "pass"},
    {"op": "call", "card": "KS"},
    {"op": "ecart", "cards": ["1H", "2H", "3H", "4H", "5H", "6H"]},
    {"op": "poignee", "cards": [f"T{i}" for i in range(1, 11)]},
    {"op": "chelem", "announce": True},
    {"op": "next"},
    {"op": "open", "name": "club", "seats": 3},
    {"op": "join", "table": "00" * 16},
    {"op": "leave"},
    {"op": "bot"},
]
#: Strings a request might hold; sorted, as a set's order changes from run to run.
MOVES = frozenset(op.value for op in MoveOp)  #: the requests that are a decision of the seat
WORDS = (*sorted(READ_ONLY | LOBBY_OPS | MOVES), "KH", "T21", "EX", "garde", "pass")
EDGE_INTS = (0, 1, -1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63))
ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz",
    "0123456789",
    "TKQCNJHSDEX",
    "éàçœ€ß",
    "\u200b\u202e\ufeff",
    "🂡🃏😀",
    "\x00\x01\x1f\x7f",
    "中文字",
)

pytestmark = [pytest.mark.daemons, pytest.mark.slow]

# --------------------------------------------------------------------------- random values


def random_text(rng: random.Random, surrogates: bool = False) -> str:
    """Text from odd alphabets (control characters, bidi marks, emoji…), of odd lengths; with
    ``surrogates``, maybe a lone surrogate, which JSON can carry and UTF-8 cannot."""
    text = "".join(
        rng.choice(rng.choice(ALPHABETS)) for _ in range(rng.choice((0, 1, 2, 5, 20, 300)))
    )
    return text + "\ud800" if surrogates and rng.random() < 0.2 else text


def random_msgpack(rng: random.Random, depth: int = 0) -> object:
    """Any msgpack value: every type, sizes and numbers at the edges, containers a few deep."""
    pick = rng.randrange(10 if depth < 3 else 8)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice(EDGE_INTS) if rng.random() < 0.5 else rng.randrange(-1000, 1000)
    if pick == 3:
        return rng.choice((0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 1e308))
    if pick == 4:
        return random_text(rng)
    if pick == 5:
        return rng.randbytes(rng.choice((0, 1, TOKEN - 1, TOKEN, TOKEN + 1, 32, 64, 500)))
    if pick == 6:
        return msgpack.ExtType(rng.randrange(128), rng.randbytes(rng.randrange(20)))
    if pick == 7:
        return rng.choice(
            (
                "hi",
                "challenge",
                "hello",
                "data",
                "ping",
                "ack",
                "reauth",
                "hello-ack",
                "deal",
                "lobby",
                "offer",
                "join",
            )
        )
    if pick == 8:
        return [random_msgpack(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {
        rng.choice(FRAME_FIELDS): random_msgpack(rng, depth + 1) for _ in range(rng.randrange(5))
    }


def random_json(rng: random.Random, depth: int = 0) -> object:
    """Any JSON value, with the numbers Python's parser takes but a client would not send
    (thousands of digits, NaN, infinities) and strings with lone surrogates."""
    pick = rng.randrange(8 if depth < 3 else 6)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return (
            rng.choice((*EDGE_INTS, 10**4000, -(10**300)))
            if rng.random() < 0.5
            else rng.randrange(-100, 100)
        )
    if pick == 3:
        return rng.choice((0.5, -0.0, float("nan"), float("inf"), 1e308))
    if pick == 4:
        return random_text(rng, surrogates=True)
    if pick == 5:
        return rng.choice(WORDS)
    if pick == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {rng.choice(API_FIELDS): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def mutate_bytes(raw: bytes, rng: random.Random) -> bytes:
    """A few byte-level edits: bits flipped, telling bytes (msgpack's never-used 0xc1, 0xff…)
    written, the tail cut off, bytes inserted or deleted, a run repeated."""
    data = bytearray(raw)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        if not data:
            data += rng.randbytes(rng.randrange(1, 8))
            continue
        i = rng.randrange(len(data))
        action = rng.randrange(6)
        if action == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif action == 1:
            data[i] = rng.choice((0x00, 0x7F, 0x80, 0xC1, 0xFF, rng.randrange(256)))
        elif action == 2:
            del data[i:]
        elif action == 3:
            data[i:i] = rng.randbytes(rng.randrange(1, 16))
        elif action == 4:
            del data[i : i + rng.randrange(1, 16)]
        else:
            data[i:i] = data[i : i + rng.randrange(1, 64)]
    return bytes(data)


def mutate_value(
    value: object,
    rng: random.Random,
    fresh: Callable[[random.Random], object],
    names: Sequence[str],
) -> object:
    """One change somewhere in a decoded frame or request: a field replaced (by ``fresh``),
    dropped, added or renamed (to one of ``names``), a list item changed, dropped or added,
    a number pushed to an edge, bytes or text cut or grown — the near misses a strict
    decoder must refuse, or take as the well-formed input they may have become."""
    if isinstance(value, dict) and value and rng.random() < 0.9:
        out = dict(value)
        key = rng.choice(list(out))
        action = rng.randrange(4)
        if action == 0:
            out[key] = mutate_value(out[key], rng, fresh, names)
        elif action == 1:
            del out[key]
        elif action == 2:
            out[rng.choice(names)] = fresh(rng)
        else:
            out[rng.choice(names)] = out.pop(key)
        return out
    if isinstance(value, list) and value and rng.random() < 0.9:
        items = list(value)
        i = rng.randrange(len(items))
        action = rng.randrange(3)
        if action == 0:
            items[i] = mutate_value(items[i], rng, fresh, names)
        elif action == 1:
            del items[i]
        else:
            items.insert(i, fresh(rng))
        return items
    if isinstance(value, bytes) and rng.random() < 0.8:
        return mutate_bytes(value, rng)
    if type(value) is int and rng.random() < 0.8:
        return rng.choice(
            [n for n in (value + 1, value - 1, -value, *EDGE_INTS) if -(2**63) <= n < 2**64]
        )
    if isinstance(value, str) and rng.random() < 0.8:
        return rng.choice(
            (value[:-1], value + random_text(rng), value.swapcase(), random_text(rng))
        )
    return fresh(rng)


def mutate_frame(raw: bytes, rng: random.Random) -> bytes:
    """A msgpack frame with one field mutated (:func:`mutate_value`), packed again; bytes
    that are not one msgpack value (some bodies are junk already) get byte edits instead."""
    try:
        value = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except Exception:  # msgpack raises many types; each means "not msgpack"
        return mutate_bytes(raw, rng)
    packed: bytes = msgpack.packb(
        mutate_value(value, rng, random_msgpack, FRAME_FIELDS), use_bin_type=True
    )
    return packed


# --------------------------------------------------------------------------- the peer socket


@dataclass
class Sender:
    """One DEALER of ours on the daemon's ROUTER.  A stranger holds a ``session`` the daemon
    granted it, so its data frames are delivered; an intruder has none."""

    sock: zmq.Socket[bytes]
    templates: list[bytes]  #: valid frames of every kind, mutated into the junk
    wrong: list[bytes]  #: packed msgpack of the wrong shape
    session: bytes | None = None
    bodies: list[bytes] = field(default_factory=list)  #: lobby frames and deal messages to mutate
    seq: int = 0


@dataclass
class PeerTally:
    sent: Counter[str] = field(default_factory=Counter)  #: frames sent, by what they were
    dropped: int = 0  #: frames our socket would not take (the daemon not reading fast enough)
    replies: Counter[str] = field(default_factory=Counter)  #: the daemon's answers, by kind
    seconds: float = 0.0


def frame_templates(key: Identity, session: bytes, hello: bytes, rng: random.Random) -> list[bytes]:
    """One valid frame of each kind, as ``key`` would send it (``hello`` is its signed HELLO)."""
    ack = {
        "key": key.public_key,
        "to": rng.randbytes(32),
        "name": "intrus",
        "nonce": rng.randbytes(TOKEN),
        "session": session,
        "n": 0,
    }
    return [
        encode("hi", {}),
        encode("challenge", {"key": key.public_key, "c": rng.randbytes(TOKEN)}),
        hello,
        encode_signed(key, "hello-ack", ack),
        encode("data", {"s": session, "f": 1, "q": 1, "c": "deal", "b": rng.randbytes(64)}),
        encode("ping", {"s": session}),
        encode("ack", {"s": session, "n": 3, "top": 9, "miss": [5, 7]}),
        encode("reauth", {"s": session}),
    ]


def intruder(context: Context, endpoint: str, daemon: bytes, rng: random.Random) -> Sender:
    """A DEALER under a random routing id, with no session.  Its templates include a HELLO
    validly signed by a fresh key but for no daemon and no challenge: the daemon refuses it."""
    key, session = identity(rng), rng.randbytes(TOKEN)
    hello = encode_signed(key, "hello", hello_fields(key, rng, "tcp://127.0.0.1:9"))
    wrong = [msgpack.packb(value, use_bin_type=True) for value in wrong_shapes(session, key, rng)]
    return Sender(
        dealer(context, endpoint, routing_id(rng), daemon),
        frame_templates(key, session, hello, rng),
        wrong,
    )


def stranger(
    context: Context, endpoint: str, daemon: bytes, table_id: bytes, deal: int, rng: random.Random
) -> Sender:
    """A DEALER that completes a valid HELLO with a key of its own, and will send data under
    the session granted: lobby frames and deal messages for the real table, mutated."""
    key = identity(rng)
    sock = dealer(context, endpoint, key.public_key, daemon, key)
    hello, session = handshake(sock, key, daemon, rng, f"tcp://127.0.0.1:{free_ports(1)[0]}")
    wrong = [msgpack.packb(value, use_bin_type=True) for value in wrong_shapes(session, key, rng)]
    bodies = lobby_bodies(key, table_id, rng) + deal_bodies(key, table_id, deal, rng)
    return Sender(sock, frame_templates(key, session, hello, rng), wrong, session, bodies)


def junk(sender: Sender, rng: random.Random) -> tuple[str, list[bytes]]:
    """A frame nobody may act on, and what it is."""
    pick = rng.randrange(1000)
    if pick == 0:
        # dropped, not disconnected
        return "oversized", [bytes(2 * MiB + rng.randrange(1, 2 * MiB - 4096))]
    if pick < 200:
        return "random", [
            rng.randbytes(rng.choice((rng.randrange(16), rng.randrange(300), rng.randrange(5000))))
        ]
    if pick < 500:
        return "bytes-mutated", [mutate_bytes(rng.choice(sender.templates), rng)]
    if pick < 750:
        return "field-mutated", [mutate_frame(rng.choice(sender.templates), rng)]
    if pick < 900:
        wrong = (
            rng.choice(sender.wrong)
            if rng.random() < 0.3
            else msgpack.packb(random_msgpack(rng), use_bin_type=True)
        )
        return "wrong-shape", [wrong]
    parts = [
        rng.choice((rng.randbytes(rng.randrange(100)), rng.choice(sender.templates)))
        for _ in range(rng.randrange(2, 6))
    ]
    return "multipart", parts


def session_frame(sender: Sender, session: bytes, rng: random.Random) -> tuple[str, list[bytes]]:
    """A stranger's frame under its valid session: mostly data, numbered on from the last
    (``f`` = ``q``, so the frames our socket or the rate limit dropped leave no gap that
    would hold the rest back), with a body the lobby or the deal must refuse."""
    pick = rng.randrange(100)
    if pick < 5:
        return "session-ping", [encode("ping", {"s": session})]
    sender.seq += 1
    body = rng.choice(sender.bodies)
    if pick < 40:
        body = mutate_frame(body, rng)
    elif pick < 75:
        body = mutate_bytes(body, rng)
    elif pick < 90:
        body = msgpack.packb(random_msgpack(rng), use_bin_type=True)
    channel = rng.choice(("deal", "lobby", "deal", "lobby", "", random_text(rng)[:64]))
    data = encode("data", {"s": session, "f": sender.seq, "q": sender.seq, "c": channel, "b": body})
    if rng.random() < 0.1:
        return "session-data-mutated", [mutate_frame(data, rng)]
    return "session-data", [data]


def drain(senders: Sequence[Sender], tally: PeerTally) -> None:
    """Read what the daemon sent back, so that our sockets never fill with its answers."""
    for sender in senders:
        while True:
            try:
                raw = sender.sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                break
            frame = decode(raw, LINK_KINDS)
            tally.replies[frame["t"] if frame is not None else "undecodable"] += 1


def send(sender: Sender, parts: list[bytes], senders: Sequence[Sender], tally: PeerTally) -> bool:
    """Never blocks for long: a full socket gets one second, while we drain the answers."""
    for attempt in range(2):
        try:
            sender.sock.send_multipart(parts, flags=zmq.NOBLOCK)
            return True
        except zmq.Again:
            if attempt == 0:
                drain(senders, tally)
                sender.sock.poll(SEND_WAIT_MS, zmq.POLLOUT)
    tally.dropped += 1
    return False


def session_alive(sender: Sender, session: bytes, timeout: float = 10) -> None:
    """A ping under the stranger's session is acknowledged, not answered ``reauth``: the
    daemon kept the session through the fuzz, and answers on it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sender.sock.send(encode("ping", {"s": session}))
        for frame in replies(sender.sock, 0.5):
            if frame.get("s") == session:
                assert frame["t"] == "ack", f"the stranger's session was dropped: {frame}"
                return
    pytest.fail(f"no answer to a stranger's ping in {timeout} s")


def fuzz_peer_socket(
    context: Context, endpoint: str, daemon: bytes, table_id: bytes, deal: int, rng: random.Random
) -> PeerTally:
    tally = PeerTally()
    senders = [intruder(context, endpoint, daemon, rng) for _ in range(INTRUDERS)]
    senders += [stranger(context, endpoint, daemon, table_id, deal, rng) for _ in range(STRANGERS)]
    try:
        started = time.monotonic()
        for i in range(FRAMES):
            sender = rng.choice(senders)
            session = sender.session
            kind, parts = (
                session_frame(sender, session, rng)
                if session is not None and rng.random() < 0.5
                else junk(sender, rng)
            )
            tally.sent[kind] += send(sender, parts, senders, tally)
            if i % 250 == 249:
                drain(senders, tally)
                ahead = (i + 1) / RATE - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
        tally.seconds = time.monotonic() - started
        for sender in senders:
            if sender.session is not None:
                session_alive(sender, sender.session)
            barrier(sender.sock, rng)
        drain(senders, tally)
    finally:
        for sender in senders:
            sender.sock.close()
    return tally


# --------------------------------------------------------------------------- the local API


@dataclass
class ApiTally:
    sent: int = 0
    defused: int = 0  #: lines the daemon could have taken as a move or a lobby step, made harmless
    accepted: Counter[str] = field(default_factory=Counter)  #: read-only requests answered, by op
    refused: Counter[str] = field(default_factory=Counter)  #: errors, by their first words
    events: int = 0  #: game events streamed to us meanwhile
    seconds: float = 0.0


def api_line(rng: random.Random) -> bytes:
    """One line for the local API, without its newline and under the length limit."""
    pick = rng.randrange(100)
    if pick < 10:
        line = rng.choice(API_JUNK)
        line = mutate_bytes(line, rng) if rng.random() < 0.5 else line
    elif pick < 25:
        line = rng.randbytes(
            rng.randrange(LINE_CAP if rng.random() < HUGE else rng.choice((64, 2000)))
        )
    elif pick < 60:
        request = mutate_value(rng.choice(API_TEMPLATES), rng, random_json, API_FIELDS)
        line = json.dumps(request, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    elif pick < 80:
        line = mutate_bytes(json.dumps(rng.choice(API_TEMPLATES)).encode(), rng)
    elif pick < 90:  # nesting around the parser's recursion limit, and far beyond it
        depth = (
            rng.randrange(1100, 30_000)
            if rng.random() < HUGE
            else rng.choice((rng.randrange(1, 200), rng.randrange(900, 1100)))
        )
        line = (
            rng.choice((b'{"op": "status", "id": ', b'{"op": ', b""))
            + b"[" * depth
            + b"]" * depth
            + b"}"
        )
    else:  # numbers past what int(), float() and card codes take
        digits = 50_000 if rng.random() < HUGE else rng.choice((20, 4300, 4301))
        number = rng.choice((b"9" * digits, b"1e999999", b"-0", b"NaN", b"-Infinity"))
        field_name = rng.choice((b"id", b"card", b"seats", b"contract", b"op"))
        line = (
            b'{"op": "'
            + rng.choice((b"status", b"play", b"open"))
            + b'", "'
            + field_name
            + b'": '
            + number
            + b"}"
        )
    return line.replace(b"\n", b" ")[:LINE_CAP]


def may_act(line: bytes) -> bool:
    """Whether the daemon could take ``line`` as a request that changes something — a move
    for its seat or a lobby step — parsed as it parses requests, a move decoded by its own
    ``parse_move`` (which raises ApiError for whatever the daemon would refuse)."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
        return False
    op = request["op"]
    if op in MOVES:
        try:
            parse_move(op, request).action(0)
        except Exception:  # a ValueError the daemon refuses too, or a bug its answer shows
            return False
        return True
    return op in LOBBY_OPS


def defuse(line: bytes) -> bytes:
    """The same request under an op nobody knows, so that the daemon must refuse it."""
    request = json.loads(line)
    request["op"] = "~" + request["op"]
    return json.dumps(request).encode()


def check_answer(line: bytes, answer: dict[str, Any], tally: ApiTally) -> None:
    """A read-only request may succeed; anything else gets a plain refusal, never an
    internal error, and no move is ever taken."""
    if answer.get("ok") is True:
        op = json.loads(line)["op"]
        assert op in READ_ONLY, f"the daemon acted on a fuzzed request {line[:300]!r}: {answer}"
        tally.accepted[op] += 1
        return
    error = answer.get("error")
    assert answer.get("ok") is False and isinstance(error, str) and error, (line[:300], answer)
    assert "internal error" not in error, (line[:300], answer)
    assert answer.get("code") in CODES - {Refusal.INTERNAL.value}, (line[:300], answer)
    tally.refused[" ".join(error.split()[:4])] += 1


async def fuzz_api(path: Path, rng: random.Random) -> ApiTally:
    tally = ApiTally()
    started = time.monotonic()
    count = LINES - OVER_LIMIT
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 22)
    window = asyncio.Semaphore(WINDOW)
    pending: deque[bytes] = deque()

    async def send_lines() -> None:
        for _ in range(count):
            line = api_line(rng)
            if may_act(line):
                line = defuse(line)
                tally.defused += 1
            await window.acquire()
            pending.append(line)
            writer.write(line + b"\n")
            await writer.drain()
            tally.sent += 1

    async def read_answers() -> None:
        for _ in range(count):
            while True:
                raw = await asyncio.wait_for(reader.readline(), 30)
                assert raw, f"the daemon hung up after {tally.sent - len(pending)} answers"
                answer = json.loads(raw)
                if "event" not in answer:
                    break
                tally.events += 1
            check_answer(pending.popleft(), answer, tally)
            window.release()

    try:
        await asyncio.gather(send_lines(), read_answers())
    finally:
        writer.close()
    for _ in range(OVER_LIMIT):  # a line over the limit is refused, and the connection closed
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 22)
        writer.write(
            rng.randbytes(MAX_LINE + rng.randrange(1, MAX_LINE)).replace(b"\n", b" ") + b"\n"
        )
        answer = json.loads(await asyncio.wait_for(reader.readline(), 30))
        assert answer["ok"] is False and "longer than" in answer["error"], answer
        assert await asyncio.wait_for(reader.read(), 30) == b"", "the connection stayed open"
        writer.close()
        tally.sent += 1
    tally.seconds = time.monotonic() - started
    return tally


class ApiFuzz(threading.Thread):
    """The API fuzz in a thread of its own, alongside the peer fuzz; its error, if any, is
    kept for the test to raise."""

    def __init__(self, path: Path, rng: random.Random) -> None:
        super().__init__(name="api-fuzz", daemon=True)
        self.path, self.rng = path, rng
        self.tally: ApiTally | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.tally = asyncio.run(fuzz_api(self.path, self.rng))
        except BaseException as error:  # re-raised by result() in the test's thread
            self.error = error

    def result(self, timeout: float) -> ApiTally:
        self.join(timeout)
        if self.error is not None:
            raise self.error
        assert self.tally is not None, f"the API fuzz did not finish in {timeout} s"
        return self.tally


# --------------------------------------------------------------------------- the run


def scored(home: Path) -> int | None:
    """The deals the daemon's table has scored, or None if it no longer plays one."""
    found = status(home)
    return int(found["tables"][0]["scored"]) if found is not None and found["tables"] else None


def test_fuzz_the_peer_socket_and_the_local_api_while_a_table_plays(tmp_path: Path) -> None:
    seed = int(os.environ.get("FUZZ_SEED", SEED))
    print(f"\nfuzz seed {seed} (replay with FUZZ_SEED={seed})")
    ports = free_ports(PLAYERS)
    processes, homes = start_daemons(
        tmp_path, PLAYERS, DEALS, "--think", THINK, ports=ports, timeout=60
    )
    context: Context = zmq.Context()
    try:
        key = public_key(homes[0], processes[0])
        wait_for_path(homes[1] / "api.sock", processes[1])
        table = wait_for_deal(homes[0], processes[0], 0, timeout=120)
        assert table is not None, (
            f"the table never started its first deal:\n{logs(tmp_path, PLAYERS)}"
        )
        api = ApiFuzz(homes[1] / "api.sock", random.Random(f"{seed}/api"))
        api.start()
        peer = fuzz_peer_socket(
            context,
            f"tcp://127.0.0.1:{ports[0]}",
            key,
            bytes.fromhex(table),
            0,
            random.Random(f"{seed}/peer"),
        )
        lines = api.result(timeout=600)
        during = [scored(home) for home in homes]
        assert all(count is not None and count < DEALS for count in during), (
            f"the game ended before the fuzz did (raise THINK or DEALS): deals scored {during}"
        )
        offers = asyncio.run(ask(homes[0], "tables"))
        assert [o["state"] for o in offers if o["table"] == table] == ["ready"], offers
        wait_all(processes, tmp_path, timeout=600)
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, PLAYERS))
        raise
    finally:
        context.destroy(linger=0)
    sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets), sheets
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == DEALS, sheets[0]
    for deal in deals:
        assert deal["audit"] == "ok" and sum(deal["scores"]) == 0, deal
    assert_no_traceback(tmp_path, PLAYERS)
    assert peer.replies["reauth"] > 0 and peer.replies["ack"] > 0, peer.replies
    assert peer.replies["undecodable"] == 0, peer.replies
    print(
        f"peer socket: {sum(peer.sent.values())} frames in {peer.seconds:.1f} s "
        f"({sum(peer.sent.values()) / peer.seconds:.0f}/s), {peer.dropped} dropped by our full "
        "sockets; "
        f"{dict(peer.sent)}; answers {dict(peer.replies)}"
    )
    print(
        f"local API: {lines.sent} lines in {lines.seconds:.1f} s "
        f"({lines.sent / lines.seconds:.0f}/s), "
        f"{lines.defused} defused, accepted {dict(lines.accepted)}, {lines.events} events; "
        f"refusals {lines.refused.most_common(6)}"
    )
    print(
        f"the table had scored {during} of {DEALS} deals at the three daemons when the fuzz ended; "
        f"all {DEALS} audited ok, identical sheets"
    )
