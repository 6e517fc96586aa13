"""The mesh's HELLO tried as a member turned hostile, or a laptop with a wrong clock, would try
it (issue 26, item 3).

* **Replay.**  A member that received another's HELLO replays it to a third daemon, or to
  the same daemon on a connection of its own: neither gives it a session, so nothing it sends
  is delivered as the other member's.  Before the challenge, the HELLO named no recipient and
  its freshness was a clock: the third daemon took the copy and delivered a lobby frame under
  the victim's key.
* **Clocks.**  Three real daemons, one of them an hour ahead (``faketime``), form their table
  and play a deal: nothing asks the members' clocks to agree.  Each daemon says in its log
  whose clock is off and by how much.  Before, the HELLO's time had to be within ten minutes
  of the receiver's clock: the table never formed, and nobody said why.

The code here speaks only what every version of the mesh understands (raw msgpack, the
daemon's options of before), so that it runs against the mesh before the challenge — and
fails there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
import zmq.asyncio
from daemons import daemon_argv, free_ports, kill_all, log_path, scores, spawn, wait_all
from test_mesh import Node, challenge, hello, raw_socket, run, running, wait_for

from protocol.replication.identity import Identity
from tarotd.home import Home, load_or_create_identity
from tarotd.mesh import encode
from tarotd.refusals import Cause

pytestmark = pytest.mark.daemons

# --------------------------------------------------------------------------- replay


async def hello_to_a_member(a: Node, member: Identity) -> bytes:
    """The HELLO ``a`` says to ``member``, as that member receives it: a ROUTER holding the
    member's key, which answers a ``hi`` with a challenge of its own, as a daemon does."""
    async with raw_socket(zmq.ROUTER) as fake:
        port = fake.bind_to_random_port("tcp://127.0.0.1")
        a.mesh.connect(f"tcp://127.0.0.1:{port}", member.public_key)
        while True:
            rid, raw = await asyncio.wait_for(fake.recv_multipart(), timeout=5)
            kind = msgpack.unpackb(raw)["t"]
            if kind == "hi":
                await fake.send_multipart(
                    [rid, encode("challenge", {"key": member.public_key, "c": os.urandom(16)})]
                )
            elif kind == "hello":
                return bytes(raw)


async def replay(hello: bytes, target: Node) -> list[dict[str, Any]]:
    """Replay ``hello`` to ``target`` on a connection of our own, as a thief would: it asks for
    a challenge (which it cannot answer: the copy answers another), sends the copy, and at
    once a lobby frame under whatever session the copy earns.  Every frame ``target``
    answered within a second and a half, as msgpack maps."""
    async with raw_socket(zmq.DEALER) as thief:
        thief.connect(target.mesh.endpoint)
        await thief.send(encode("hi", {}))
        await thief.send(hello)
        answers: list[dict[str, Any]] = []
        deadline = time.monotonic() + 1.5
        while (left := deadline - time.monotonic()) > 0:
            try:
                answers.append(
                    msgpack.unpackb(
                        (await asyncio.wait_for(thief.recv_multipart(), timeout=left))[-1]
                    )
                )
            except TimeoutError:
                break
            if answers[-1]["t"] == "hello-ack":
                data = {
                    "s": answers[-1]["session"],
                    "f": 1,
                    "q": 1,
                    "c": "lobby",
                    "b": b"the victim's offer, forged",
                }
                await thief.send(encode("data", data))
        return answers


def test_a_hello_replayed_to_a_third_daemon_or_on_another_connection_gets_no_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test() -> None:
        a, c, b = Node("a"), Node("c"), Identity.generate()
        async with running(a, c):
            copy = await hello_to_a_member(a, b)  # b, a member of a's table, turns against a
            caplog.set_level(logging.WARNING, logger="tarotd.mesh")
            answers = await replay(copy, c)
            assert [frame["t"] for frame in answers] == ["challenge"], "the copy earned an answer"
            assert c.received == [] and c.state_of(a) is None
            assert c.mesh.stats.bad_hello == 1
            assert "made for another daemon: a copy of it replayed to us" in caplog.text
            # a's HELLO to c itself, taken on its way (it answers the challenge of whoever
            # took it), replayed to c on a connection of the thief's.
            copy = await hello_to_a_member(a, c.identity)
            answers = await replay(copy, c)
            assert [frame["t"] for frame in answers] == ["challenge"], "the copy earned an answer"
            assert c.received == [] and c.state_of(a) is None and c.mesh.stats.bad_hello == 2
            assert "for a challenge this connection does not hold" in caplog.text

    run(test)


# --------------------------------------------------------------------------- clocks


@pytest.mark.skipif(
    shutil.which("faketime") is None, reason="needs faketime (apt-get install faketime)"
)
def test_a_daemon_whose_clock_is_an_hour_off_forms_the_table_and_plays(tmp_path: Path) -> None:
    ports = free_ports(3)
    keys = [load_or_create_identity(Home(tmp_path / f"d{i}")).public_key.hex() for i in range(3)]
    processes = []
    for i in range(3):
        peers = [
            arg for j in range(3) if j != i for arg in ("--peer", f"{keys[j]}@127.0.0.1:{ports[j]}")
        ]
        argv = daemon_argv(
            tmp_path / f"d{i}", f"joueur{i}", ports[i], [], deals=1, timeout=30, extra=peers
        )
        if i == 1:
            argv = ["faketime", "-f", "+1h", *argv]  # its clock an hour ahead, from the start
        processes.append(spawn(argv, log_path(tmp_path, i)))
    try:
        wait_all(processes, tmp_path, timeout=60)
    finally:
        kill_all(processes)
    sheets = [scores(tmp_path / f"d{i}") for i in range(3)]
    assert all(sheet == sheets[0] for sheet in sheets)
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 1 and deals[0]["audit"] == "ok"
    said = [log_path(tmp_path, i).read_text() for i in range(3)]
    for i in (0, 2):
        assert "the clock of joueur1 is 1 h 0 min ahead of this machine's" in said[i], said[i][
            -3000:
        ]
    for i in (0, 2):
        assert f"the clock of joueur{i} is 1 h 0 min behind this machine's" in said[1], said[1][
            -3000:
        ]


def test_a_hello_for_an_earlier_hi_of_its_connection_is_taken() -> None:
    """On a slow machine a link says ``hi`` again before the first challenge came back, then
    answers the first: that HELLO is fresh (its connection asked for that challenge), not stale."""

    async def test() -> None:
        victim, member = Node("victim"), Identity.generate()
        async with running(victim), raw_socket(zmq.DEALER) as raw:
            raw.connect(victim.mesh.endpoint)
            to, first = await challenge(raw)
            await challenge(raw)  # asked again: a second challenge for the same connection
            await raw.send(hello(member, to, first))
            reply = await asyncio.wait_for(raw.recv_multipart(), timeout=5)
            assert b"hello-ack" in reply[0] and victim.mesh.refusals.counts() == {}
            # the same HELLO again: its challenges are spent
            await raw.send(hello(member, to, first))
            await wait_for(
                lambda: victim.mesh.refusals.count(Cause.HELLO_STALE) == 1, "the copy refused"
            )

    run(test)
