"""The gate in front of ZeroMQ (:mod:`tarotd.gate`), against a stand-in for the ROUTER on the
gate's inner listener: what it passes on, what it closes before the ROUTER hears of it, that
the mesh still learns which host each connection comes from, that a member's connection
leaves the bounds, and that nobody reaches the ROUTER but through the gate.

The far hosts are 127.0.0.2, 127.0.0.3, … — other hosts as far as the gate can tell.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import pytest

from tarotd.gate import (
    INNER_HOST,
    ZMTP_SIGNATURE,
    CannotListen,
    Gate,
    gate_possible,
    looks_like_zmtp,
)
from tarotd.guard import ConnectionBounds, Far
from tarotd.refusals import Refusals

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(not gate_possible(), reason="needs 127.0.0.0/8 as this machine's (Linux)"),
]

GREETING = b"\xff" + bytes(8) + b"\x7f"  #: the signature that opens every ZMTP 3 greeting
DEADLINE = 0.3


class Router:
    """A TCP server standing for the ROUTER: echoes what it gets, and notes where each
    connection came from."""

    def __init__(self) -> None:
        self.sources: list[str] = []
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.sources.append(writer.get_extra_info("peername")[0])
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])


@asynccontextmanager
async def gate(
    total: int = 12, per_host: int = 3, members: Callable[[str], bool] = lambda host: False
) -> AsyncIterator[tuple[Gate, Router, Refusals]]:
    refusals = Refusals(logging.getLogger("test-gate"))
    bounds = ConnectionBounds(total, per_host)
    door = Gate("127.0.0.1", 0, bounds, refusals, deadline=DEADLINE, members=members)
    router = Router()
    router.server = await asyncio.start_server(router._serve, sock=door.take_inner())
    try:
        yield door, router, refusals
    finally:
        await door.close()
        router.server.close()
        await router.server.wait_closed()


async def connect(door: Gate, host: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", door.address[1], local_addr=(host, 0))


async def closed(reader: asyncio.StreamReader, within: float = 3.0) -> bool:
    """Whether the gate closes the connection of ``reader`` within ``within`` seconds."""
    try:
        return await asyncio.wait_for(reader.read(1), within) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_a_zeromq_greeting_is_passed_on_both_ways_and_its_host_is_known_behind_the_gate() -> None:
    async def test() -> None:
        async with gate() as (door, router, _):
            reader, writer = await connect(door, "127.0.0.5")
            writer.write(GREETING + b"the rest of the stream")
            assert (
                await reader.readexactly(ZMTP_SIGNATURE + 22)
                == GREETING + b"the rest of the stream"
            )
            other_reader, other = await connect(door, "127.0.0.6")
            other.write(GREETING)
            await other_reader.readexactly(ZMTP_SIGNATURE)
            first, second = router.sources
            assert first != second and not {first, second} & {"127.0.0.1", "127.0.0.5", "127.0.0.6"}
            assert door.host_of(first) == "127.0.0.5" and door.host_of(second) == "127.0.0.6"
            assert door.host_of("127.0.0.9") == "127.0.0.9"  # not the gate's: as it is
            assert len(door) == 2
            writer.close()
            other.close()

    asyncio.run(test())


def test_a_connection_that_says_something_else_is_closed_before_the_router_hears_of_it() -> None:
    async def test() -> None:
        async with gate() as (door, router, refusals):
            reader, writer = await connect(door, "127.0.0.5")
            writer.write(b"GET / HTTP/1.1\r\n\r\n")
            assert await closed(reader)
            assert router.sources == [] and refusals.counts() == {"not-zeromq": 1}
            writer.close()

    asyncio.run(test())


def test_a_connection_that_hangs_up_before_its_greeting_is_no_refusal() -> None:
    async def test() -> None:
        async with gate() as (door, router, refusals):
            reader, writer = await connect(door, "127.0.0.5")
            writer.write(GREETING[:4])
            writer.close()
            await asyncio.sleep(0.1)
            assert len(door) == 0 and router.sources == [] and refusals.counts() == {}

    asyncio.run(test())


def test_a_silent_connection_is_closed_at_the_deadline_and_frees_its_place() -> None:
    async def test() -> None:
        async with gate(per_host=1) as (door, router, refusals):
            reader, writer = await connect(door, "127.0.0.5")
            assert await closed(reader, within=DEADLINE + 2)
            assert refusals.counts() == {"connections-silent": 1} and len(door) == 0
            again_reader, again = await connect(door, "127.0.0.5")  # its place is free again
            again.write(GREETING)
            assert await again_reader.readexactly(ZMTP_SIGNATURE) == GREETING
            writer.close()
            again.close()

    asyncio.run(test())


def test_connections_beyond_the_bounds_are_closed_at_once() -> None:
    """Per host, and in all: the last quarter of the total only for a host a member proved
    itself from."""

    async def test() -> None:
        member_host = "127.0.0.8"
        async with gate(total=4, per_host=2, members=member_host.__eq__) as (door, _, refusals):
            held = [await connect(door, "127.0.0.5") for _ in range(2)]
            over_host = await connect(door, "127.0.0.5")
            assert await closed(over_host[0], within=DEADLINE / 2)  # long before any deadline
            held.append(await connect(door, "127.0.0.6"))
            over_total = await connect(door, "127.0.0.7")
            assert await closed(over_total[0], within=DEADLINE / 2)
            held.append(await connect(door, member_host))  # the place kept for members
            assert not await closed(held[-1][0], within=DEADLINE / 2)
            assert refusals.counts() == {"connections-from-host": 1, "connections-total": 1}
            assert len(door) == 4
            for _, writer in [*held, over_host, over_total]:
                writer.close()

    asyncio.run(test())


def test_this_machine_is_bounded_like_any_host_until_a_connection_proves_a_members_key() -> None:
    """127.0.0.1 takes ``per_host`` connections like any host; one that proved a member's key
    leaves the bounds, one a key: the member's earlier one counts again."""

    async def test() -> None:
        async with gate(per_host=2) as (door, router, refusals):
            member = await connect(door, "127.0.0.1")
            member[1].write(GREETING)
            await member[0].readexactly(ZMTP_SIGNATURE)
            door.prove(router.sources[0], b"member key")
            idle = [await connect(door, "127.0.0.1") for _ in range(2)]
            over = await connect(door, "127.0.0.1")
            assert await closed(over[0], within=DEADLINE / 2)
            assert refusals.counts() == {"connections-from-host": 1} and len(door) == 3
            idle[0][1].close()
            await asyncio.sleep(0.1)
            again = await connect(door, "127.0.0.1")  # the member's second connection
            again[1].write(GREETING)
            await again[0].readexactly(ZMTP_SIGNATURE)
            door.prove(router.sources[1], b"member key")  # the first one counts again
            assert await closed((await connect(door, "127.0.0.1"))[0], within=DEADLINE / 2)
            assert refusals.counts() == {"connections-from-host": 2}
            door.prove("127.0.0.9", b"member key")  # no connection of the gate's: nothing
            for _, writer in [member, *idle, over, again]:
                writer.close()

    asyncio.run(test())


def test_a_connection_exempt_counts_again_when_it_closes_or_its_key_moves() -> None:
    bounds = ConnectionBounds(total=8, per_host=2)
    for fd in (3, 4):
        assert bounds.admit(fd, Far("127.0.0.1", 1000 + fd)) is None
    bounds.exempt(3, b"a")
    bounds.exempt(3, b"a")  # again: nothing changes
    assert bounds.counted == 1 and len(bounds) == 2
    bounds.exempt(3, b"b")  # the connection proves another key: one exempt still
    bounds.exempt(4, b"a")
    assert bounds.counted == 0
    bounds.exempt(4, b"b")  # key b moves to 4: 3 counts again
    assert bounds.counted == 1
    bounds.closed(4)
    bounds.closed(3)
    assert bounds.counted == 0 and len(bounds) == 0
    bounds.exempt(5, b"b")  # not held: nothing
    assert bounds.admit(5, Far("127.0.0.1", 5)) is None and bounds.counted == 1


def test_nobody_reaches_the_router_but_through_the_gate() -> None:
    """The ROUTER's listener takes signed connections only: the kernel drops one made to it
    directly at its first packet, from any address of this machine."""

    async def test() -> None:
        async with gate() as (door, router, _):
            inner = router.port
            for source in ("127.0.0.1", "127.1.0.0"):
                with socket.socket() as direct:
                    direct.bind((source, 0))
                    direct.settimeout(1.0)
                    with pytest.raises(TimeoutError):
                        direct.connect((INNER_HOST, inner))
            assert router.sources == [] and len(door) == 0

    asyncio.run(test())


def _tcp_sockets() -> Iterator[socket.socket]:
    """Every connected TCP socket this process holds, as a duplicate to read its options."""
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue  # not a socket, or closed meanwhile
        try:
            connected = sock.type == socket.SOCK_STREAM and bool(sock.getpeername())
        except OSError:
            connected = False  # a listener, or not TCP
        if connected:
            yield sock
        else:
            sock.close()


def test_a_frame_crosses_the_gate_at_once_nagle_is_off_on_both_of_its_sockets() -> None:
    """With Nagle on, a small frame sent while the last is unacknowledged waits for that ack —
    for the far end's next frame, a mesh tick later: the play's tail latency.  Both sockets the
    gate holds for a connection (the far end's and its own to the ROUTER) must have it off."""

    async def test() -> None:
        async with gate() as (door, router, _):
            reader, writer = await connect(door, "127.0.0.5")
            writer.write(GREETING)
            await reader.readexactly(ZMTP_SIGNATURE)
            held = []
            for sock in _tcp_sockets():
                with sock:
                    local, far = sock.getsockname(), sock.getpeername()
                    far_end = local[1] == door.address[1]  # accepted by the gate
                    to_router = far[1] == router.port and local[0] != "127.0.0.1"
                    if far_end or to_router:
                        held.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            assert len(held) == 2, "the far end's socket and the gate's own to the ROUTER"
            assert all(held), "Nagle's algorithm is on where the gate passes frames on"
            writer.close()

    asyncio.run(test())


def test_a_port_taken_is_refused_with_its_reason() -> None:
    async def test() -> None:
        async with gate() as (door, router, refusals):
            with pytest.raises(CannotListen) as raised:
                Gate("127.0.0.1", door.address[1], ConnectionBounds(1), refusals)
            assert raised.value.errno == errno.EADDRINUSE
            with pytest.raises(CannotListen) as raised:
                Gate("no-such-host.invalid", 0, ConnectionBounds(1), refusals)
            assert raised.value.errno == errno.EADDRNOTAVAIL

    asyncio.run(test())


def test_the_greeting_signature() -> None:
    assert looks_like_zmtp(GREETING)
    assert not looks_like_zmtp(GREETING[:-1] + b"\x00")
    assert not looks_like_zmtp(b"\x16\x03\x01" + bytes(7))  # a TLS ClientHello
    assert not looks_like_zmtp(GREETING[:5])  # the far end closed before ten bytes
