"""The mesh against strangers that take its room (issue 26, items 1 and 5): throw-away keys
that say HELLO, beacons that make it open links, idle connections.  Whatever they do, the
peer table, the links and the incoming connections stay bounded, what no table needs is
forgotten, every refusal is counted and said once — and the peers a table needs still get in.

Before, 256 throw-away keys filled the peer table for good (a ``--peer HOST:PORT`` then never
connected, silently), every beacon's key got a link that was never closed, and incoming
connections were bounded by nothing but the descriptors.
"""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
import zmq
from test_mesh import Node, challenge, hello, raw_socket, run, running, wait_for

from protocol.replication.identity import Identity
from tarotd.guard import MEMBERS_SHARE
from tarotd.mesh import Limits, PeerState
from tarotd.mesh.bounds import Standing
from tarotd.refusals import Cause

pytestmark = pytest.mark.daemons


async def say_hello(node: Node, source: str) -> bool:
    """A throw-away key says HELLO to ``node`` from ``source``: whether it got a session."""
    async with raw_socket(zmq.DEALER) as raw:
        raw.connect(f"tcp://{source}:0;{node.mesh.endpoint.removeprefix('tcp://')}")
        to, given = await challenge(raw)
        await raw.send(hello(Identity.generate(), to, given))
        try:
            reply = await asyncio.wait_for(raw.recv_multipart(), timeout=0.3)
        except TimeoutError:
            return False
        return b"hello-ack" in reply[0]


def unkept(node: Node, kept: set[bytes]) -> int:
    return sum(status.key not in kept for status in node.mesh.peers())


def test_throwaway_keys_are_bounded_per_host_per_second_and_in_all_and_a_peer_still_gets_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = Limits(max_peers=12, new_keys_rate=0.01, new_keys_burst=10, keys_per_host=3)

    async def test() -> None:
        victim, friend = Node("victim", limits=limits), Node("friend")
        async with running(victim, friend):
            from_one = [await say_hello(victim, "127.0.0.2") for _ in range(8)]
            assert sum(from_one) == 3, "one host speaks for at most keys_per_host keys"
            from_many = await asyncio.gather(
                *(say_hello(victim, f"127.0.0.{n}") for n in range(3, 40))
            )
            assert sum(from_many) == 10 - 3, "new keys beyond the burst wait for the rate"
            assert unkept(victim, set()) <= limits.max_peers
            # A peer the user named (--peer) is never refused for room, however full the table.
            victim.mesh.connect(friend.mesh.endpoint, friend.key, keep=True)
            await wait_for(lambda: victim.state_of(friend) is PeerState.UP, "the friend up")
            refused = victim.mesh.refusals.counts()
            assert refused["keys-from-host"] == 5 and refused["new-keys"] >= 20, refused

    with caplog.at_level(logging.WARNING, logger="tarotd.mesh"):
        run(test)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused (")]
    # Said once per cause, then at most every ten seconds with how many more: not once per HELLO.
    assert sorted({line.split(")")[0] for line in lines}) == [
        "refused (keys-from-host",
        "refused (new-keys",
    ]
    assert len(lines) <= 4, lines


def test_what_no_table_needs_is_forgotten_once_silent_and_the_rest_is_kept() -> None:
    async def test() -> None:
        needed, other = Identity.generate(), Identity.generate()
        victim = Node(
            "victim", limits=Limits(forget_after=0.5), keeps={needed.public_key}.__contains__
        )
        dead = socket.socket()
        dead.bind(("127.0.0.1", 0))  # bound, never listening: nothing answers there
        nowhere = f"tcp://127.0.0.1:{dead.getsockname()[1]}"
        async with running(victim):
            assert await say_hello(victim, "127.0.0.2")
            victim.mesh.connect(nowhere, other.public_key)  # discovery's: forgotten
            victim.mesh.connect(
                nowhere.replace("127.0.0.1", "127.0.0.3"), Identity.generate().public_key, keep=True
            )
            # a table's
            victim.mesh.connect(nowhere.replace("127.0.0.1", "127.0.0.4"), needed.public_key)
            # The stranger's HELLO made the victim connect back to the endpoint it gave: one more
            # link.
            assert victim.mesh.connections()["links"] == 4 and len(victim.mesh.peers()) == 3
            await wait_for(lambda: len(victim.mesh.peers()) == 2, "the silent stranger forgotten")
            await wait_for(
                lambda: victim.mesh.connections()["links"] == 2,
                "its link and the unproven one closed",
            )
            assert {s.key for s in victim.mesh.peers()} >= {needed.public_key}
        dead.close()

    run(test)


def test_links_opened_for_discovery_are_bounded_and_strangers_never_hold_them_all() -> None:
    """Issue 36, item 1: strangers hold three links of four at most; a key whose beacon names
    our table takes the fourth, then the place of a stranger's; links to ports where nothing
    answers close after ``unanswered_after``."""

    async def test() -> None:
        victim = Node("victim", limits=Limits(links=4, unanswered_after=1.0))
        async with running(victim):
            for n in range(10):  # beacons of ten fresh keys, each pointing somewhere
                victim.mesh.connect(f"tcp://127.0.0.{n + 2}:9", Identity.generate().public_key)
            victim.mesh.connect("tcp://127.0.0.99:9", Identity.generate().public_key, keep=True)
            assert victim.mesh.connections()["links"] == 3 + 1
            assert victim.mesh.refusals.counts() == {"links-strangers-full": 7}
            for n in range(2):  # two beacons that name our table
                victim.mesh.connect(
                    f"tcp://127.0.1.{n + 2}:9",
                    Identity.generate().public_key,
                    standing=Standing.WANTED,
                )
            assert victim.mesh.connections()["links"] == 4 + 1
            assert victim.mesh.refusals.counts()["links-evicted"] == 1
            await wait_for(
                lambda: victim.mesh.connections()["links"] == 1, "the unanswered links closed"
            )
            assert victim.mesh.refusals.counts()["links-unanswered"] == 4

    run(test)


@pytest.mark.parametrize("gate", [True, False], ids=["gate", "zeromq-listening"])
def test_incoming_connections_are_bounded_per_host_and_in_all(gate: bool) -> None:
    """Through the gate, or where it cannot run, with ZeroMQ listening itself.  None of the
    hosts is a member's: the places kept for members stay free."""
    strangers = 10 - 10 // MEMBERS_SHARE

    async def test() -> None:
        victim = Node("victim", limits=Limits(connections=10, connections_per_host=3, gate=gate))
        async with running(victim):
            # five from each of eight hosts: three each would be 24
            held = idle(victim, [f"127.0.0.{n}" for n in range(2, 10) for _ in range(5)])
            await wait_for(
                lambda: sum(victim.mesh.refusals.counts().values()) == 40 - strangers,
                "the excess turned away",
            )
            assert victim.mesh.connections()["incoming"] == strangers
            counts = victim.mesh.refusals.counts()
            assert counts["connections-from-host"] > 0 and counts["connections-total"] > 0, counts
            for sock in held:
                sock.close()
            await wait_for(
                lambda: victim.mesh.connections()["incoming"] == 0,
                "the closed ones no longer counted",
            )

    run(test)


def test_a_member_reconnecting_gets_in_while_strangers_hold_every_place() -> None:
    """A member's host may take the places kept for members: strangers' idle connections filling
    every other place must not lock out a member whose connection broke (before it, the member
    waited until the strangers' handshake deadline let a place go — and a flood reopens its
    connections at once)."""

    async def test() -> None:
        member = Node("member")
        victim = Node(
            "victim",
            limits=Limits(connections=4, connections_per_host=3),
            keeps={member.key}.__contains__,
        )
        async with running(victim):
            async with running(member):
                member.mesh.connect(victim.mesh.endpoint, victim.key)
                await wait_for(lambda: victim.state_of(member) is PeerState.UP, "the member up")
                # the victim notes where the peers it keeps are (every second)
                await asyncio.sleep(1.2)
            await wait_for(
                lambda: victim.mesh.connections()["incoming"] == 0, "the member's connection gone"
            )
            strangers = idle(victim, [host for host in ("127.0.0.2", "127.0.0.3") for _ in "abc"])
            await wait_for(lambda: victim.mesh.connections()["incoming"] == 3, "every place taken")
            back = Node("member", identity=member.identity)
            async with running(back):
                back.mesh.connect(victim.mesh.endpoint, victim.key)
                await wait_for(
                    lambda: back.state_of(victim) is PeerState.UP, "the member back", timeout=3.0
                )
            # the strangers beyond the total
            assert victim.mesh.refusals.count(Cause.CONNECTIONS_TOTAL) == 3
            for sock in strangers:
                sock.close()

    run(test)


def test_this_machine_is_bounded_like_any_host_but_a_members_proven_connection() -> None:
    """127.0.0.1 — a member's host here — takes ``connections_per_host`` like any host: a
    flood from a process of this machine neither goes past it nor counts the member's own
    connection, which proved its key, against it.  Before, 127.0.0.1 was bounded by nothing
    but the descriptors."""

    async def test() -> None:
        member = Node("member")
        victim = Node(
            "victim",
            limits=Limits(connections=40, connections_per_host=3),
            keeps={member.key}.__contains__,
        )
        async with running(victim, member):
            member.mesh.connect(victim.mesh.endpoint, victim.key)
            await wait_for(lambda: victim.state_of(member) is PeerState.UP, "the member up")
            flood = idle(victim, ["127.0.0.1"] * 10)
            await wait_for(
                lambda: victim.mesh.refusals.count(Cause.CONNECTIONS_FROM_HOST) == 10 - 3,
                "the flood beyond the host's bound turned away",
            )
            assert victim.mesh.connections()["incoming"] == 3 + 1  # and the member's
            victim.mesh.send(member.key, "deal", b"still there")
            await wait_for(lambda: member.bodies_from(victim) == [b"still there"], "delivered")
            for sock in flood:
                sock.close()

    run(test)


def idle(victim: Node, hosts: list[str]) -> list[socket.socket]:
    """Idle TCP connections to ``victim``'s peer port, one from each of ``hosts``."""
    held = []
    for host in hosts:
        sock = socket.socket()
        sock.bind((host, 0))
        sock.connect(("127.0.0.1", victim.mesh.port))
        held.append(sock)
    return held


def test_a_discovered_peer_that_says_hello_keeps_its_link_against_throwaway_keys() -> None:
    """A link discovery opened to a key naming our table becomes ``PROVEN`` once that key says
    HELLO to us: links back to throw-away keys that said HELLO, ``PROVEN`` too, cannot take
    its place (before, one of lower standing goes first), and close once nothing answers at
    the ports they gave."""

    async def test() -> None:
        victim = Node("victim", limits=Limits(links=2, unanswered_after=1.0))
        friend = Node("friend")
        async with running(victim, friend):
            victim.mesh.connect(friend.mesh.endpoint, friend.key, standing=Standing.WANTED)
            friend.mesh.connect(victim.mesh.endpoint, victim.key)  # its HELLO to the victim
            await wait_for(lambda: victim.state_of(friend) is PeerState.UP, "the friend up")
            link = victim.mesh._registry.links[friend.mesh.endpoint]
            await wait_for(lambda: link.standing is Standing.PROVEN, "the friend's link proven")
            held = [await say_hello(victim, f"127.0.0.{n}") for n in range(2, 6)]
            assert all(held)  # four throw-away keys in; their links back go to dead ports
            assert victim.mesh._registry.links.get(friend.mesh.endpoint) is link
            await wait_for(
                lambda: victim.mesh.connections()["links"] == 1, "the links back to nowhere closed"
            )
            assert victim.mesh.refusals.count(Cause.LINKS_UNANSWERED) >= 1

    run(test)
