"""The gate in front of ZeroMQ (:mod:`tarotd.gate`), against a stand-in for the ROUTER: what
it passes on, what it closes before the ROUTER hears of it, and that the mesh still learns
which host each connection comes from.

The far hosts are 127.0.0.2, 127.0.0.3, … — other hosts as far as the gate can tell.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tarotd.gate import ZMTP_SIGNATURE, CannotListen, Gate, gate_possible, looks_like_zmtp
from tarotd.guard import ConnectionBounds
from tarotd.refusals import Refusals

pytestmark = pytest.mark.skipif(
    not gate_possible(), reason="needs 127.0.0.0/8 as this machine's (Linux)"
)

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
async def gate(total: int = 10, per_host: int = 3) -> AsyncIterator[tuple[Gate, Router, Refusals]]:
    router = Router()
    router.server = await asyncio.start_server(router._serve, "127.0.0.1", 0)
    refusals = Refusals(logging.getLogger("test-gate"))
    door = Gate(
        "127.0.0.1", 0, router.port, ConnectionBounds(total, per_host), refusals, deadline=DEADLINE
    )
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
    async def test() -> None:
        async with gate(total=4, per_host=2) as (door, _, refusals):
            held = [await connect(door, "127.0.0.5") for _ in range(2)]
            over_host = await connect(door, "127.0.0.5")
            assert await closed(over_host[0], within=DEADLINE / 2)  # long before any deadline
            held += [await connect(door, "127.0.0.6") for _ in range(2)]
            over_total = await connect(door, "127.0.0.7")
            assert await closed(over_total[0], within=DEADLINE / 2)
            assert refusals.counts() == {"connections-from-host": 1, "connections-total": 1}
            assert len(door) == 4
            for _, writer in [*held, over_host, over_total]:
                writer.close()

    asyncio.run(test())


def test_a_port_taken_is_refused_with_its_reason() -> None:
    async def test() -> None:
        async with gate() as (door, router, refusals):
            with pytest.raises(CannotListen) as raised:
                Gate("127.0.0.1", door.address[1], router.port, ConnectionBounds(1), refusals)
            assert raised.value.errno == errno.EADDRINUSE
            with pytest.raises(CannotListen) as raised:
                Gate("no-such-host.invalid", 0, router.port, ConnectionBounds(1), refusals)
            assert raised.value.errno == errno.EADDRNOTAVAIL

    asyncio.run(test())


def test_the_greeting_signature() -> None:
    assert looks_like_zmtp(GREETING)
    assert not looks_like_zmtp(GREETING[:-1] + b"\x00")
    assert not looks_like_zmtp(b"\x16\x03\x01" + bytes(7))  # a TLS ClientHello
    assert not looks_like_zmtp(GREETING[:5])  # the far end closed before ten bytes
