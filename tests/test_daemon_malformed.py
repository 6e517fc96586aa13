"""Hostile bytes at a real daemon while its table plays: nothing it is sent on the peer
socket or the local API may crash it, stall the game or change a score.

Three bot daemons play two deals on 127.0.0.1.  Meanwhile this test knocks on the first
daemon's ZeroMQ ROUTER with DEALER sockets of its own — random routing ids, and one that
claims a member's key — and sends random bytes, truncated msgpack, msgpack of the wrong
shape, multipart messages, frames over the 2 MiB limit (and over twice it, which ZeroMQ
answers by dropping the connection), a validly signed HELLO from a stranger's key followed
by data frames (lobby junk and deal messages signed by the stranger for the real table),
and random bytes and junk JSON on the local API.  The game must end with identical score
sheets, every audit ok, status 0, and no traceback in any log.  The junk is seeded.

After each burst on a connection, a ``ping`` with a session the daemon never issued must
come back as ``reauth``: the daemon read through the burst and still answers on that very
connection.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import time
from collections.abc import Callable
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

from client.api import DaemonUnavailable, ask
from protocol.identity import Identity, verify
from protocol.messages import Kind, sign_message
from protocol.messages import encode as encode_message
from tarotd.mesh import LINK_KINDS, MiB, decode, encode, encode_signed, signing_bytes

SEED = 20261130
TOKEN = 16


def _identity(rng: random.Random) -> Identity:
    return Identity.from_private_bytes(rng.randbytes(32))


def _routing_id(rng: random.Random) -> bytes:
    """A random ZeroMQ routing id (one that starts with a zero byte is ZeroMQ's own)."""
    return bytes([rng.randrange(1, 256)]) + rng.randbytes(rng.randrange(0, 40))


def _hello(identity: Identity, rng: random.Random, endpoint: str) -> dict[str, Any]:
    return {
        "key": identity.public_key,
        "name": "intrus",
        "endpoint": endpoint,
        "nonce": rng.randbytes(TOKEN),
        "time": int(time.time()),
        "boot": rng.randbytes(TOKEN),
    }


def _nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


def junk_frames(rng: random.Random, count: int) -> list[list[bytes]]:
    """Messages a ROUTER must drop: each a list of frames (most of them one frame)."""
    session = rng.randbytes(TOKEN)
    stranger = _identity(rng)
    signed_hello = encode_signed(stranger, "hello", _hello(stranger, rng, "tcp://127.0.0.1:9"))
    data = encode("data", {"s": session, "f": 1, "q": 1, "c": "deal", "b": rng.randbytes(64)})
    wrong_shapes: list[object] = [
        None, 0, -1, 2**64 - 1, 1.5, float("nan"), "hello", b"hello", [], [1, 2, 3], {},
        {"t": "hello"}, {"t": "data"}, {"t": 5}, {b"t": b"ping", b"s": session},
        {"t": "ack", "s": session, "n": 1, "top": 1, "miss": []},  # a DEALER's kind, not a ROUTER's
        {"t": "hello-ack", "key": stranger.public_key},
        {"t": "ping", "s": session[:5]},
        {"t": "ping", "s": session, "extra": 1},
        {"t": "ping", "s": "not bytes at all"},
        {"t": "data", "s": session, "f": -1, "q": 1, "c": "deal", "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 2**64 - 1, "c": "deal", "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 1, "c": "x" * 500, "b": b""},
        {"t": "data", "s": session, "f": 1, "q": 1, "c": 7, "b": "text"},
        {"t": "hello", "key": "k", "name": 1, "endpoint": "udp://x", "nonce": b"", "time": -5, "boot": None, "sig": b""},
        {"t": "hello", **_hello(stranger, rng, "tcp://127.0.0.1:9"), "sig": rng.randbytes(64)},  # a bad signature
        _nested(40),
        msgpack.ExtType(5, b"extension"),
        {"t": "ping", "s": session, "sig": [1, 2, {"x": None}]},
    ]
    frames: list[list[bytes]] = []
    for value in wrong_shapes:
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


def dealer(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, routing_id: bytes) -> zmq.Socket[bytes]:
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, routing_id)
    sock.connect(endpoint)
    return sock


def replies(sock: zmq.Socket[bytes], timeout: float, until: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
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


def knock_with_junk(context: Any, endpoint: str, rng: random.Random) -> None:
    """Random routing ids, each with a burst of junk; then oversized frames."""
    for _ in range(6):
        sock = dealer(context, endpoint, _routing_id(rng))
        try:
            for parts in junk_frames(rng, 60):
                sock.send_multipart(parts)
            barrier(sock, rng)
        finally:
            sock.close()
    sock = dealer(context, endpoint, _routing_id(rng))
    try:
        big = encode("data", {"s": rng.randbytes(TOKEN), "f": 1, "q": 1, "c": "deal", "b": bytes(2 * MiB + 1000)})
        sock.send(big)  # over the mesh's 2 MiB: counted and dropped
        sock.send(bytes(2 * MiB + 5))
        barrier(sock, rng)
        # Over ZeroMQ's own limit (twice the mesh's) the daemon's ZeroMQ drops the connection
        # (our DEALER would send the frame again on each reconnection: a new socket follows).
        sock.send(bytes(4 * MiB + 100))
        time.sleep(0.3)
    finally:
        sock.close()
    sock = dealer(context, endpoint, _routing_id(rng))
    try:
        barrier(sock, rng)
    finally:
        sock.close()


def claim_member(context: Any, endpoint: str, rng: random.Random, member: bytes) -> None:
    """A DEALER that takes a member's key as routing id and claims its key in a HELLO it
    signed itself: it gets no session, so nothing it sends is taken for the member's."""
    sock = dealer(context, endpoint, member)
    try:
        impostor = _identity(rng)
        hello = {**_hello(impostor, rng, "tcp://127.0.0.1:9"), "key": member}
        sock.send(encode_signed(impostor, "hello", hello))  # the member's key, our signature
        for seq in range(1, 20):
            body = rng.randbytes(rng.randrange(0, 400))
            sock.send(encode("data", {"s": rng.randbytes(TOKEN), "f": 1, "q": seq, "c": rng.choice(["deal", "lobby"]), "b": body}))
        for parts in junk_frames(rng, 20):
            sock.send_multipart(parts)
        barrier(sock, rng)
        assert not any(frame["t"] == "hello-ack" for frame in replies(sock, 0.1))
    finally:
        sock.close()


def stranger_session(context: Any, endpoint: str, rng: random.Random, daemon: bytes, table_id: bytes, deal: int) -> None:
    """A stranger with a key of its own says a valid HELLO, gets a session, and sends data:
    lobby junk, and deal messages it signed for the real table.  The daemon must take
    them off the wire (they are acknowledged) and act on none of them."""
    stranger = _identity(rng)
    sock = dealer(context, endpoint, stranger.public_key)
    try:
        hello = _hello(stranger, rng, f"tcp://127.0.0.1:{free_ports(1)[0]}")
        sock.send(encode_signed(stranger, "hello", hello))
        ack = next((f for f in replies(sock, 5, lambda f: f["t"] == "hello-ack") if f["t"] == "hello-ack"), None)
        assert ack is not None, "no HELLO-ACK for a validly signed HELLO"
        assert ack["key"] == daemon and ack["to"] == stranger.public_key and ack["nonce"] == hello["nonce"]
        assert verify(daemon, ack["sig"], signing_bytes("hello-ack", ack))
        session: bytes = ack["session"]

        bodies: list[tuple[str, bytes]] = []
        member = [stranger.public_key, "intrus", stranger.public_key, "tcp://127.0.0.1:9"]
        lobby_frames: list[object] = [
            {"t": "join", "table": table_id, "members": [member]},
            {"t": "manifest", "table": table_id, "members": [member, member, member]},
            {"t": "sign", "table": table_id, "key": stranger.public_key, "sig": rng.randbytes(64), "commit": rng.randbytes(32)},
            {"t": "coin", "table": table_id, "key": stranger.public_key, "coin": rng.randbytes(64)},
            {"t": "offer", "table": table_id, "name": "club", "seats": 3, "opener": stranger.public_key,
             "members": [member], "state": "withdrawn"},
            {"t": "offer", "table": "short", "name": None, "seats": "3"},
            {"t": None}, {"t": ["offer"]}, [], "offer", {"t": "join", "table": table_id, "members": [[1, 2]]},
        ]
        for frame in lobby_frames:
            bodies.append(("lobby", msgpack.packb(frame, use_bin_type=True)))
        bodies.append(("lobby", rng.randbytes(100)))
        bodies.append(("lobby", msgpack.packb({"t": "join"}) + b"trailing"))
        for kind in (Kind.COMMIT, Kind.BID, Kind.PLAY, Kind.ABANDON, Kind.REVEAL, Kind.SCORE_SIGN):
            for seat in range(3):
                for number in (deal, deal + 1):
                    payload: Any = {"card": rng.randrange(78), "key": rng.randbytes(32)}
                    message = sign_message(stranger, table_id, number, kind, seat, payload, rng.randbytes(32))
                    bodies.append(("deal", encode_message(message)))
        bodies.append(("deal", rng.randbytes(300)))
        bodies.append(("deal", b""))
        bodies.append(("", rng.randbytes(50)))
        bodies.append(("ünknown", msgpack.packb({"t": "offer"})))
        for seq, (channel, body) in enumerate(bodies, start=1):
            sock.send(encode("data", {"s": session, "f": 1, "q": seq, "c": channel, "b": body}))
        sock.send(encode("data", {"s": session, "f": 1, "q": 1, "c": "deal", "b": b"again"}))  # a duplicate
        sock.send(encode("data", {"s": session, "f": 1, "q": 100_000, "c": "deal", "b": b"far"}))  # out of window
        deadline = time.monotonic() + 10
        delivered = 0
        while delivered < len(bodies):
            assert time.monotonic() < deadline, f"only {delivered} of {len(bodies)} data frames acknowledged"
            sock.send(encode("ping", {"s": session}))
            for frame in replies(sock, 0.2):
                if frame["t"] == "ack" and frame["s"] == session:
                    delivered = max(delivered, frame["n"])
        assert delivered == len(bodies)
        sock.send(encode_signed(stranger, "hello", hello))  # a replayed HELLO: no new session
        assert not any(frame["t"] == "hello-ack" for frame in replies(sock, 0.3))
    finally:
        sock.close()


API_JUNK: list[bytes] = [
    b"{", b"}", b"[]", b"null", b"true", b'{"op": null}', b'{"op": ["status"]}', b'{"op": {"op": "status"}}',
    b'{"op": "play", "card": 123}', b'{"op": "play", "card": null}', b'{"op": "bid", "contract": ["garde"]}',
    b'{"op": "ecart", "cards": [1, 2]}', b'{"op": "poignee", "cards": {"T1": 1}}', b'{"op": "join"}',
    b'{"op": "join", "table": 5}', b'{"op": "open", "seats": [3]}', b'{"op": "open", "name": {"x": 1}}',
    b'{"op": "' + b"x" * 10_000 + b'"}', b'{"op": "\\u0000"}', b'{"op": "st\\ud83datus"}', b'{"id": {"deep": [[[]]]}, "op": 1}',
    b'{"op": "status"', b"\x00\x00\x00", b"NaN", b'{"op": "statu\xc3"}', b"[" * 3000, b'{"op": -0.0e99999}',
]
"""One line each, and each must get an error response."""


async def junk_on_the_api(path: Path, rng: random.Random) -> None:
    lines = [line.replace(b"\n", b" ") for line in API_JUNK]
    lines += [rng.randbytes(rng.randrange(1, 500)).replace(b"\n", b" ") for _ in range(40)]
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 22)
    try:
        writer.write(b"".join(line + b"\n" for line in lines))
        await writer.drain()
        answers: list[dict[str, Any]] = []
        while len(answers) < len(lines):
            line = await asyncio.wait_for(reader.readline(), 10)
            assert line, f"the daemon hung up after {len(answers)} answers"
            message = json.loads(line)
            if "event" not in message:
                answers.append(message)
        for sent, answer in zip(lines, answers):
            assert answer["ok"] is False and answer["error"], (sent[:80], answer)
            assert "internal error" not in answer["error"], (sent[:80], answer)
    finally:
        writer.close()
    # A connection that says a few random bytes and goes; one that sends 100 KiB of them.
    for size in (rng.randrange(1, 100), 100 * 1024):
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(rng.randbytes(size).replace(b"\n", b" "))
        try:
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()


def status(home: Path) -> dict[str, Any] | None:
    try:
        result: dict[str, Any] = asyncio.run(ask(home, "status"))
    except (DaemonUnavailable, ConnectionError, OSError):
        return None
    return result


def wait_for_deal(home: Path, process: subprocess.Popen[bytes], deal: int, timeout: float = 30) -> str | None:
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
    wait_for_path(home / "identity.key", process)
    deadline = time.monotonic() + 5
    while True:
        try:
            return Identity.from_private_bytes((home / "identity.key").read_bytes()).public_key
        except ValueError:  # being written
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_junk_on_the_peer_socket_and_the_local_api_changes_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    ports = free_ports(3)
    processes, homes = start_daemons(tmp_path, 3, 2, ports=ports)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    endpoint = f"tcp://127.0.0.1:{ports[0]}"
    rounds = 0
    try:
        keys = [public_key(home, process) for home, process in zip(homes, processes)]
        wait_for_path(homes[0] / "api.sock", processes[0])
        knock_with_junk(context, endpoint, rng)  # while the table forms
        for deal in (0, 1):
            table = wait_for_deal(homes[0], processes[0], deal)
            if table is None:
                continue  # the deal went by too fast: the junk of the next round still lands
            rounds += 1
            stranger_session(context, endpoint, rng, keys[0], bytes.fromhex(table), deal)
            claim_member(context, endpoint, rng, keys[1 + deal])
            knock_with_junk(context, endpoint, rng)
            asyncio.run(junk_on_the_api(homes[0] / "api.sock", rng))
            offers = asyncio.run(ask(homes[0], "tables"))  # the stranger's lobby frames changed nothing
            assert {o["name"] for o in offers} == {"club"}, offers
            assert [o["state"] for o in offers if o["table"] == table] == ["ready"], offers
        wait_all(processes, tmp_path, timeout=60)
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, 3))
        raise
    finally:
        context.destroy(linger=0)
    assert rounds >= 1, "the junk never landed during a deal"
    sheets = [scores(home) for home in homes]
    assert sheets[0] == sheets[1] == sheets[2]
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 2
    for deal in deals:
        assert deal["audit"] == "ok" and sum(deal["scores"]) == 0
    assert_no_traceback(tmp_path, 3)
