"""The records a mesh keeps: one per peer, one per link (our DEALER to an endpoint), and
what the roles of a mesh share (:class:`Shared`).  Plain state: the roles
(:mod:`~tarotd.mesh.registry`, :mod:`~tarotd.mesh.links`, :mod:`~tarotd.mesh.router`…) change
it."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import zmq.asyncio

from protocol.replication.identity import Identity
from tarotd.mesh.bounds import Standing
from tarotd.mesh.core import Inbound, Outbox, PeerState, TokenBucket
from tarotd.mesh.faults import Wire
from tarotd.mesh.limits import Limits, MeshStats
from tarotd.mesh.wire import TOKEN_SIZE
from tarotd.refusals import Refusals
from tarotd.zsocket import LoopSocket

Spawn = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]


@dataclass(frozen=True)
class PeerStatus:
    key: bytes
    name: str
    endpoint: str | None
    state: PeerState
    last_heard: float | None  #: wall-clock time (``time.time()``), None if never heard


@dataclass(eq=False)
class Link:
    """Our DEALER to one endpoint; ``peer`` once the far end proved its key."""

    endpoint: str
    expected_key: bytes | None
    sock: LoopSocket
    bucket: TokenBucket  #: inbound frames
    pace: TokenBucket  #: outbound data frames: stay under the far end's inbound limit
    #: ``sock``'s failed handshakes (see :func:`~tarotd.mesh.plumbing.watch`)
    monitor: zmq.asyncio.Socket
    #: connected to for a table or by the user (``connect(keep=True)``), never forgotten
    kept: bool = False
    #: what the key has shown of itself: links no table needs make room by it (:func:`room_for`)
    standing: Standing = Standing.STRANGER
    opened: float = field(default_factory=time.monotonic)
    #: with no session since (across recycling)
    down_since: float = field(default_factory=time.monotonic)
    peer: Peer | None = None
    session: bytes | None = None  #: the far end's token for us; None: not authenticated
    asked: bool = False  #: a ``hi`` is out: the next challenge gets our HELLO
    nonce: bytes | None = None  #: of the HELLO awaiting its ack ...
    to: bytes | None = None  #: ... and the key it was signed for, the one that must sign the ack
    hello_due: float = 0.0
    sent_at: float = 0.0  #: last frame that left
    heard_at: float = field(default_factory=time.monotonic)  #: last valid frame from the far end
    task: asyncio.Task[None] | None = None  #: the loop reading ``sock``
    watch: asyncio.Task[None] | None = None  #: the loop reading ``monitor``

    @property
    def host(self) -> str:
        return self.endpoint.removeprefix("tcp://").rpartition(":")[0]

    @property
    def settled(self) -> bool:
        """The far end proved its key here: it answers."""
        return self.peer is not None

    @property
    def since(self) -> float:
        return self.opened

    def close(self) -> None:
        self.sock.close()
        self.monitor.close(linger=0)


@dataclass(eq=False)
class Peer:
    key: bytes
    outbox: Outbox
    inbound: Inbound
    bucket: TokenBucket
    name: str = ""
    endpoint: str | None = None
    boot: bytes | None = None
    link: Link | None = None
    ever_up: bool = False
    last_heard: float | None = None  #: monotonic
    last_heard_wall: float | None = None
    reported: PeerState = PeerState.CONNECTING
    route: bytes | None = None  #: the routing id of the DEALER it last proved its key on
    host: str = ""  #: the address it last proved its key from (bounds the keys a host speaks for)
    kept: bool = False  #: proved on a kept link: never forgotten
    created: float = field(default_factory=time.monotonic)


@dataclass(eq=False)
class Shared:
    """What every role of one mesh reads: who we are, our bounds and counters, how frames
    leave (through the fault plan), and how a role starts a task the mesh stops on close."""

    identity: Identity
    name: str
    heartbeat: float
    timeout: float
    limits: Limits
    stats: MeshStats
    wire: Wire
    refusals: Refusals
    spawn: Spawn
    curve: tuple[bytes, bytes] | None  #: our CURVE public and secret keys, None without CURVE
    endpoint: str | None = None  #: where we listen, once started
    #: new for each process: a peer that sees another in our HELLO knows we restarted
    boot: bytes = field(default_factory=lambda: os.urandom(TOKEN_SIZE))

    @property
    def key(self) -> bytes:
        return self.identity.public_key
