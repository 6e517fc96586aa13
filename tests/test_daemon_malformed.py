"""Hostile bytes at a real daemon while its table plays: nothing it is sent on the peer
socket or the local API may crash it, stall the game or change a score.

Three bot daemons play two deals on 127.0.0.1.  Meanwhile this test knocks on the first
daemon's ZeroMQ ROUTER with DEALER sockets of its own, encrypted as the daemons are (the
daemon's key is public, and any client key passes the CURVE handshake) — random routing
ids, and one that claims a member's key — and sends random bytes, truncated msgpack, msgpack of
the wrong shape, multipart messages, frames over the 2 MiB limit (and over twice it, which ZeroMQ
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
import time
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
    barrier,
    challenge,
    deal_bodies,
    dealer,
    handshake,
    hello_fields,
    identity,
    junk_frames,
    lobby_bodies,
    public_key,
    replies,
    routing_id,
    wait_for_deal,
)

from client.api import ask
from tarotd.mesh import MiB, encode, encode_signed

pytestmark = pytest.mark.daemons

SEED = 20261130


def knock_with_junk(context: Any, endpoint: str, rng: random.Random, daemon: bytes) -> None:
    """Random routing ids, each with a burst of junk; then oversized frames."""
    for _ in range(6):
        sock = dealer(context, endpoint, routing_id(rng), daemon)
        try:
            for parts in junk_frames(rng, 60):
                sock.send_multipart(parts)
            barrier(sock, rng)
        finally:
            sock.close()
    sock = dealer(context, endpoint, routing_id(rng), daemon)
    try:
        big = encode(
            "data",
            {"s": rng.randbytes(TOKEN), "f": 1, "q": 1, "c": "deal", "b": bytes(2 * MiB + 1000)},
        )
        sock.send(big)  # over the mesh's 2 MiB: counted and dropped
        sock.send(bytes(2 * MiB + 5))
        barrier(sock, rng)
        # Over ZeroMQ's own limit (twice the mesh's) the daemon's ZeroMQ drops the connection
        # (our DEALER would send the frame again on each reconnection: a new socket follows).
        sock.send(bytes(4 * MiB + 100))
        time.sleep(0.3)
    finally:
        sock.close()
    sock = dealer(context, endpoint, routing_id(rng), daemon)
    try:
        barrier(sock, rng)
    finally:
        sock.close()


def claim_member(
    context: Any, endpoint: str, rng: random.Random, daemon: bytes, member: bytes
) -> None:
    """A DEALER that takes a member's key as routing id and claims its key in a HELLO it
    signed itself, for the challenge it was given: it gets no session, so nothing it sends
    is taken for the member's."""
    impostor = identity(rng)
    sock = dealer(context, endpoint, member, daemon, impostor)
    try:
        hello = {
            **hello_fields(impostor, rng, "tcp://127.0.0.1:9", daemon, challenge(sock, daemon)),
            "key": member,
        }
        sock.send(encode_signed(impostor, "hello", hello))  # the member's key, our signature
        for seq in range(1, 20):
            body = rng.randbytes(rng.randrange(0, 400))
            sock.send(
                encode(
                    "data",
                    {
                        "s": rng.randbytes(TOKEN),
                        "f": 1,
                        "q": seq,
                        "c": rng.choice(["deal", "lobby"]),
                        "b": body,
                    },
                )
            )
        for parts in junk_frames(rng, 20):
            sock.send_multipart(parts)
        barrier(sock, rng)
        assert not any(frame["t"] == "hello-ack" for frame in replies(sock, 0.1))
    finally:
        sock.close()


def stranger_session(
    context: Any, endpoint: str, rng: random.Random, daemon: bytes, table_id: bytes, deal: int
) -> None:
    """A stranger with a key of its own says a valid HELLO, gets a session, and sends data:
    lobby junk, and deal messages it signed for the real table.  The daemon must take
    them off the wire (they are acknowledged) and act on none of them."""
    stranger = identity(rng)
    sock = dealer(context, endpoint, stranger.public_key, daemon, stranger)
    try:
        hello, session = handshake(
            sock, stranger, daemon, rng, f"tcp://127.0.0.1:{free_ports(1)[0]}"
        )
        bodies = [("lobby", body) for body in lobby_bodies(stranger, table_id, rng)]
        bodies += [("deal", body) for body in deal_bodies(stranger, table_id, deal, rng)]
        bodies.append(("deal", rng.randbytes(300)))
        bodies.append(("deal", b""))
        bodies.append(("", rng.randbytes(50)))
        bodies.append(("ünknown", msgpack.packb({"t": "offer"})))
        for seq, (channel, body) in enumerate(bodies, start=1):
            sock.send(encode("data", {"s": session, "f": 1, "q": seq, "c": channel, "b": body}))
        # a duplicate
        sock.send(encode("data", {"s": session, "f": 1, "q": 1, "c": "deal", "b": b"again"}))
        # out of window
        sock.send(encode("data", {"s": session, "f": 1, "q": 100_000, "c": "deal", "b": b"far"}))
        deadline = time.monotonic() + 10
        delivered = 0
        while delivered < len(bodies):
            assert time.monotonic() < deadline, (
                f"only {delivered} of {len(bodies)} data frames acknowledged"
            )
            sock.send(encode("ping", {"s": session}))
            for frame in replies(sock, 0.2):
                if frame["t"] == "ack" and frame["s"] == session:
                    delivered = max(delivered, frame["n"])
        assert delivered == len(bodies)
        sock.send(hello)  # a replayed HELLO: no new session
        assert not any(frame["t"] == "hello-ack" for frame in replies(sock, 0.3))
    finally:
        sock.close()


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


def test_junk_on_the_peer_socket_and_the_local_api_changes_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    ports = free_ports(3)
    # Paced, so that the junk lands during the deals; a third deal keeps the daemons up while
    # the junk of the second round lands (a table over is a daemon gone, not one that fell silent).
    processes, homes = start_daemons(tmp_path, 3, 3, "--think", "0.05", ports=ports)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    endpoint = f"tcp://127.0.0.1:{ports[0]}"
    rounds = 0
    try:
        keys = [public_key(home, process) for home, process in zip(homes, processes)]
        wait_for_path(homes[0] / "api.sock", processes[0])
        knock_with_junk(context, endpoint, rng, keys[0])  # while the table forms
        for deal in (0, 1):
            table = wait_for_deal(homes[0], processes[0], deal)
            if table is None:
                continue  # the deal went by too fast: the junk of the next round still lands
            rounds += 1
            stranger_session(context, endpoint, rng, keys[0], bytes.fromhex(table), deal)
            claim_member(context, endpoint, rng, keys[0], keys[1 + deal])
            knock_with_junk(context, endpoint, rng, keys[0])
            asyncio.run(junk_on_the_api(homes[0] / "api.sock", rng))
            # the stranger's lobby frames changed nothing
            offers = asyncio.run(ask(homes[0], "tables"))
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
    assert isinstance(deals, list) and len(deals) == 3
    for deal in deals:
        assert deal["audit"] == "ok" and sum(deal["scores"]) == 0
    assert_no_traceback(tmp_path, 3)
