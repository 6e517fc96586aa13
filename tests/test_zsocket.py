"""LoopSocket: plain ZeroMQ sockets on the event loop, and the edge-triggered FD rule.

Every test runs under a timeout: a missed wake-up shows as a timeout, not a hung run.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest
import zmq
import zmq.asyncio

from tarotd.zsocket import LoopSocket

pytestmark = pytest.mark.daemons

DEALER_ID = b"dealer"


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), timeout=30))


@asynccontextmanager
async def pair(kind: int = zmq.DEALER) -> AsyncIterator[tuple[LoopSocket, LoopSocket]]:
    """Two connected sockets over TCP, in an asyncio context like the mesh's: ``kind`` bound,
    a DEALER (routing id :data:`DEALER_ID`) connected to it."""
    context = zmq.asyncio.Context()
    sockets: list[LoopSocket] = []
    try:
        for socket_kind in (kind, zmq.DEALER):
            sock: zmq.Socket[Any] = context.socket(
                socket_kind,
                socket_class=zmq.Socket,  # type: ignore[arg-type]  # pyzmq's stubs want the context's class
            )
            sock.setsockopt(zmq.LINGER, 0)
            sockets.append(LoopSocket(sock))
        bound, connected = sockets
        if kind == zmq.ROUTER:  # refuse, rather than drop, what it cannot route yet
            bound.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        connected.socket.setsockopt(zmq.ROUTING_ID, DEALER_ID)
        port = bound.socket.bind_to_random_port("tcp://127.0.0.1")
        connected.socket.connect(f"tcp://127.0.0.1:{port}")
        yield bound, connected
    finally:
        for loop_socket in sockets:
            loop_socket.close()
        context.destroy(linger=0)


async def first(sock: LoopSocket) -> list[bytes]:
    parts = await sock.recv()
    assert parts is not None
    return parts


async def send_all(sock: LoopSocket, parts: list[bytes]) -> None:
    """Send, waiting a little whenever ZeroMQ cannot take it now (no connection yet, HWM)."""
    while not sock.send(parts):
        await asyncio.sleep(0.001)


def fd_readable(sock: LoopSocket) -> bool:
    readable, _, _ = select.select([sock.socket.FD], [], [], 0)
    return bool(readable)


def test_messages_pass_both_ways() -> None:
    async def test() -> None:
        async with pair() as (a, b):
            await send_all(b, [b"one", b"two"])
            assert await first(a) == [b"one", b"two"]
            await send_all(a, [b"back"])
            assert await first(b) == [b"back"]

    run(test)


def test_a_send_that_takes_in_the_signal_of_a_waiting_message_wakes_the_receiver() -> None:
    """The edge-triggered trap, set up on purpose: ``a``'s receive waits, a message for it
    arrives while the event loop is busy (its FD readable, the reader not yet run), and ``a``
    sends before the loop gets there — the send takes the FD's signal in.  Without the look at
    ``EVENTS`` after the send, the receive would wait for ever."""

    async def test() -> None:
        async with pair() as (a, b):
            await send_all(b, [b"hello"])
            assert await first(a) == [b"hello"]  # connected both ways
            receiving = asyncio.ensure_future(first(a))
            await asyncio.sleep(0.05)  # a's receive now waits on its FD
            assert not receiving.done()
            b.send([b"the trap"])
            deadline = time.monotonic() + 5
            while not fd_readable(a) and time.monotonic() < deadline:
                time.sleep(0.001)  # the loop stays busy: no reader runs
            assert fd_readable(a)
            time.sleep(0.01)  # and the send processes its commands (throttled)
            assert a.send([b"meanwhile"])
            assert not fd_readable(a), "the send took the FD's signal in: the trap is set"
            assert await asyncio.wait_for(receiving, timeout=5) == [b"the trap"]
            assert await first(b) == [b"meanwhile"]

    run(test)


@pytest.mark.parametrize("kind", [zmq.DEALER, zmq.ROUTER])
def test_many_messages_both_ways_at_once_all_arrive(kind: int) -> None:
    """Both sides send while their own receives wait, over and over: every send is a chance
    to take in the signal of a message for the other loop.  All must arrive, in order, and no
    loop may wait for ever."""
    count = 5000

    async def test() -> None:
        async with pair(kind) as (bound, connected):
            got: dict[int, list[bytes]] = {id(bound): [], id(connected): []}

            async def receive(sock: LoopSocket) -> None:
                while len(got[id(sock)]) < count:
                    got[id(sock)].append((await first(sock))[-1])

            async def send(sock: LoopSocket, route: list[bytes]) -> None:
                for n in range(count):
                    await send_all(sock, [*route, b"%d" % n])
                    if n % 7 == 0:
                        await asyncio.sleep(0)

            route = [] if kind == zmq.DEALER else [DEALER_ID]
            tasks = [receive(bound), receive(connected), send(bound, route), send(connected, [])]
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=25)
            expected = [b"%d" % n for n in range(count)]
            assert got == {id(bound): expected, id(connected): expected}

    run(test)


def test_closing_a_socket_ends_its_receive_loop_and_its_reader() -> None:
    async def test() -> None:
        async with pair() as (a, b):
            frames: list[list[bytes]] = []

            async def loop() -> None:
                while (parts := await a.recv()) is not None:
                    frames.append(parts)

            task = asyncio.ensure_future(loop())
            await send_all(b, [b"before"])
            await asyncio.sleep(0.1)
            assert frames == [[b"before"]] and not task.done()
            fd = a.socket.FD
            a.close()
            await asyncio.wait_for(task, timeout=5)  # ended, not cancelled, no exception
            assert a.closed and await a.recv() is None and await a.recv_frames() is None
            assert not a.send([b"after"])
            assert not asyncio.get_running_loop().remove_reader(fd), "the reader was removed"
            a.close()  # twice is harmless

    run(test)


def test_frames_tell_their_bytes_and_a_router_refuses_an_unknown_route() -> None:
    async def test() -> None:
        async with pair(zmq.ROUTER) as (router, dealer):
            await send_all(dealer, [b"hi"])
            frames = await router.recv_frames()
            assert frames is not None and frames[1].bytes == b"hi"
            assert router.send([frames[0].bytes, b"answer"])
            assert await first(dealer) == [b"answer"]
            assert not router.send([b"nobody", b"lost"])

    run(test)


def test_a_busy_receiver_does_not_make_the_reader_spin() -> None:
    """A message queued while its loop is busy elsewhere leaves the FD readable; the reader
    resets it (reading ``EVENTS``) rather than being called on every turn of the event loop."""

    async def test() -> None:
        async with pair() as (a, b):
            calls = 0
            on_fd = a._on_fd

            def counted() -> None:
                nonlocal calls
                calls += 1
                on_fd()

            loop = asyncio.get_running_loop()
            loop.remove_reader(a.socket.FD)
            loop.add_reader(a.socket.FD, counted)
            for n in range(3):
                await send_all(b, [str(n).encode()])
            for _ in range(200):  # nobody receives on a meanwhile
                await asyncio.sleep(0)
            await asyncio.sleep(0.05)
            assert calls <= 10
            assert [await first(a) for _ in range(3)] == [[b"0"], [b"1"], [b"2"]]

    run(test)
