"""The mesh over ZeroMQ: :class:`Mesh` makes the sockets and tasks, and wires the roles that
drive them — :mod:`~tarotd.mesh.registry` (the peers and links held, and who may become
one), :mod:`~tarotd.mesh.router` (our ROUTER: challenges, HELLOs, sessions),
:mod:`~tarotd.mesh.links` (our DEALERs and their handshake), :mod:`~tarotd.mesh.incoming`
(delivery and acknowledgements) and :mod:`~tarotd.mesh.outgoing` (sending and resending).
What to send and when is :mod:`tarotd.mesh.core`'s; the frames are :mod:`tarotd.mesh.wire`'s;
the wire format is specified in docs/protocol.md, "The mesh wire format"."""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Final

import zmq
import zmq.asyncio
import zmq.auth
from zmq.auth.asyncio import AsyncioAuthenticator

from protocol.replication.identity import PUBLIC_KEY_SIZE, Identity
from tarotd.gate import CannotListen, Gate, gate_possible
from tarotd.guard import ConnectionBounds, incoming_bound
from tarotd.mesh.bounds import Standing
from tarotd.mesh.core import PeerState
from tarotd.mesh.faults import FaultPlan, Wire
from tarotd.mesh.incoming import BeforeAck, Incoming, NotHandled, OnMessage
from tarotd.mesh.keys import curve_public_key, curve_secret_key
from tarotd.mesh.limits import DEFAULT_LIMITS, FRAME_OVERHEAD, Limits, MeshStats
from tarotd.mesh.links import Links
from tarotd.mesh.outgoing import Outgoing
from tarotd.mesh.plumbing import GUARDED_EVENTS, make_socket, monitor
from tarotd.mesh.records import PeerStatus, Shared
from tarotd.mesh.registry import OnStatus, Registry
from tarotd.mesh.router import Router
from tarotd.mesh.wire import MAX_CHANNEL, MAX_NAME, is_channel, is_endpoint, tcp_endpoint
from tarotd.refusals import Refusals
from tarotd.ticks import ticks
from tarotd.zsocket import LoopSocket

__all__ = ["Limits", "Mesh", "MeshStats", "NotHandled", "OutboxFull", "PeerStatus"]

log = logging.getLogger(__name__)

TICK: Final = 0.02  #: seconds between housekeeping rounds; also the acknowledgement delay
EXPIRE_EVERY: Final = 1.0  #: seconds between two looks for peers and links to forget
RECONCILE_EVERY: Final = 5.0  #: seconds between two checks of the incoming connections' count


class OutboxFull(Exception):
    """``send`` refused: the peer has ``Limits.outbox`` messages unacknowledged.  Dropping one
    would break delivery for good; whether to wait, or give the peer up, is the daemon's call."""


class Mesh:
    """The daemon's transport to its peers: ``await start()``, ``connect`` to peers (those
    that connect to us are connected back to), ``send``, and ``await close()``.

    Deliveries go to ``on_message(peer_key, channel, body)``, awaited one at a time in order.
    A callback rather than a queue, so that a message is handed over, then kept on the disk
    (``before_ack``), then acknowledged, in that order; and an awaited callback is
    back-pressure: nothing else is read meanwhile, so it should return promptly (a peer that
    hears nothing from us for its ``timeout`` reports us away).  :class:`NotHandled` from it
    keeps the message to hand over again; any other exception is logged and the message
    still counts as delivered.  The other callbacks are plain functions for bookkeeping:
    ``before_ack()`` before any acknowledgement leaves (the daemon puts what it wrote on the
    disk there: once for a burst of messages rather than after each; if it returns an
    awaitable, the acknowledgements wait for that while the loop goes on — the daemon's
    ``fdatasync`` runs on a thread), and ``on_status(PeerStatus)`` when a peer's state changes
    (``away`` carries the time it was last heard).
    """

    def __init__(
        self,
        identity: Identity,
        listen: str,
        *,
        on_message: OnMessage,
        name: str = "",
        before_ack: BeforeAck | None = None,
        on_status: OnStatus | None = None,
        heartbeat: float = 1.0,
        timeout: float = 5.0,
        limits: Limits = DEFAULT_LIMITS,
        faults: FaultPlan | None = None,
        curve: bool = False,
        keeps: Callable[[bytes], bool] | None = None,
    ) -> None:
        if len(name) > MAX_NAME:
            raise ValueError(f"a name has at most {MAX_NAME} characters")
        if not is_endpoint(listen):
            raise ValueError("the mesh listens on a tcp://HOST:PORT endpoint")
        if not 0 < heartbeat < timeout:
            raise ValueError("the heartbeat must be shorter than the timeout")
        self.key = identity.public_key
        self.stats = MeshStats()
        self.refusals = Refusals(log)
        self._identity = identity
        self._listen = listen
        self._limits = limits
        self._context = zmq.asyncio.Context()
        self._router: LoopSocket | None = None
        self._gate: Gate | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._authenticator: AsyncioAuthenticator | None = None
        self._bounds = ConnectionBounds(
            limits.connections or incoming_bound(), limits.connections_per_host
        )
        self._next_expiry = self._next_reconcile = 0.0
        # The roles, over the records and settings they share:
        self._shared = shared = Shared(
            identity,
            name,
            heartbeat,
            timeout,
            limits,
            self.stats,
            Wire(faults),
            self.refusals,
            self._spawn,
            (curve_public_key(self.key), curve_secret_key(identity)) if curve else None,
        )
        self._registry = Registry(shared, keeps or (lambda key: False), on_status)
        self._outgoing = Outgoing(shared)
        self._incoming = Incoming(shared, self._router_sock, on_message, before_ack)
        self._links = Links(shared, self._registry, self._outgoing, self._context)
        self._routing = Router(
            shared,
            self._registry,
            self._links,
            self._incoming,
            self._router_sock,
            lambda: self._gate,
            self._bounds,
            lambda: self.port,
        )

    # ----------------------------------------------------------------- public API

    @property
    def endpoint(self) -> str:
        """The bound endpoint, with the real port when ``listen`` asked for port 0."""
        if self._shared.endpoint is None:
            raise RuntimeError("the mesh is not started")
        return self._shared.endpoint

    @property
    def port(self) -> int:
        """The bound TCP port, for discovery beacons to announce."""
        return int(self.endpoint.rpartition(":")[2])

    async def start(self) -> None:
        router = make_socket(self._context, self._limits, zmq.ROUTER)
        router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        # a DEALER reconnecting under its id is not refused
        router.setsockopt(zmq.ROUTER_HANDOVER, 1)
        if self._shared.curve is not None:
            # Any client key completes the handshake; the ZAP handler is there so that ZeroMQ
            # tags each frame with it (User-Id), which _on_hello checks against the HELLO's key.
            self._authenticator = AsyncioAuthenticator(self._context)
            self._authenticator.configure_curve(domain="*", location=zmq.auth.CURVE_ALLOW_ANY)
            self._authenticator.start()
            router.setsockopt(zmq.CURVE_SERVER, 1)
            router.setsockopt(zmq.CURVE_SECRETKEY, self._shared.curve[1])
        gated = self._limits.gate and gate_possible()
        try:
            if gated:
                self._shared.endpoint = self._open_gate(router)
            else:
                router.bind(self._listen)
                self._shared.endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
        except zmq.ZMQError as error:
            router.close(linger=0)
            if self._gate is not None:
                await self._gate.close()
                self._gate = None
            raise CannotListen(error.errno or errno.EINVAL, error.strerror) from None
        except CannotListen:
            router.close(linger=0)
            raise
        self._router = LoopSocket(router)
        self._spawn(self._routing.loop(self._router))
        if not gated:
            self._spawn(self._routing.guard_loop(monitor(router, GUARDED_EVENTS)))
        self._spawn(self._tick_loop())

    def _open_gate(self, router: zmq.Socket[Any]) -> str:
        """Listen on ``listen`` through the gate, and ``router`` on the gate's inner listener
        (handed over as a descriptor already listening, ``USE_FD``: ZeroMQ closes it); return
        the endpoint."""
        host, _, port = self._listen[len("tcp://") :].rpartition(":")
        self._gate = Gate(
            host,
            int(port),
            self._bounds,
            self.refusals,
            members=lambda host: host in self._registry.member_hosts,
        )
        inner = self._gate.take_inner()
        inner_host, inner_port = inner.getsockname()[:2]
        router.setsockopt(zmq.USE_FD, inner.detach())
        router.bind(tcp_endpoint(inner_host, inner_port))
        return tcp_endpoint(*self._gate.address)

    async def close(self) -> None:
        """Stop every task and close every socket at once (LINGER 0): what is unacknowledged
        stays in the outbox the daemon persisted, so nothing is lost by not flushing."""
        if self._closed:
            return
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._gate is not None:
            await self._gate.close()
        self._shared.wire.close()
        for link in list(self._registry.links.values()):
            link.close()
        self._registry.links.clear()
        if self._router is not None:
            self._router.close()
        if self._authenticator is not None:
            self._authenticator.stop()
        self._context.destroy(linger=0)

    def connect(
        self,
        endpoint: str,
        expected_key: bytes | None = None,
        *,
        keep: bool = False,
        standing: Standing = Standing.STRANGER,
    ) -> None:
        """Keep a link to ``endpoint`` (ZeroMQ retries the TCP connection forever).  With
        ``expected_key`` the far end must prove that key, otherwise whatever key it
        proves becomes the peer (with CURVE the key is needed: it is what we encrypt to).  Peers
        that connect to us are connected back to on their own.

        ``keep``: the link is the user's or a table's (``--peer``, a member) and is never
        forgotten.  Other links — discovery's, and those back to peers that said HELLO
        (``PROVEN``) — count against ``Limits.links``, ``standing`` saying who goes first
        (:func:`~tarotd.mesh.bounds.room_for`: strangers never hold every link; one more is
        refused, counted and logged, or takes the place of a worse one); they are closed when
        nothing answers for ``Limits.unanswered_after``, and with their peer
        forgotten once silent, or never proven, for ``Limits.forget_after``, unless ``keeps``
        says a table needs the key."""
        if self._router is None or self._closed:
            raise RuntimeError("the mesh is not running")
        if not is_endpoint(endpoint):
            raise ValueError(f"not a tcp:// endpoint: {endpoint!r}")
        if self._shared.curve is not None and expected_key is None:
            raise ValueError(f"CURVE encrypts to the peer's key: connecting to {endpoint} needs it")
        self._links.connect(endpoint, expected_key, keep, standing)

    def send(self, peer_key: bytes, channel: str, body: bytes) -> int:
        """Queue ``body`` for ``peer_key`` and return its seq.  It goes out at once if the peer
        is up, and otherwise as soon as it is; it is kept until acknowledged."""
        if len(peer_key) != PUBLIC_KEY_SIZE or peer_key == self.key:
            raise ValueError("a peer key is 32 bytes, and not ours")
        if not is_channel(channel):
            raise ValueError(f"a channel is a str of at most {MAX_CHANNEL} characters")
        if len(body) > self._limits.max_frame - FRAME_OVERHEAD:
            raise ValueError(f"a body is at most {self._limits.max_frame - FRAME_OVERHEAD} bytes")
        peer = self._registry.peer(peer_key)
        outbox = peer.outbox
        if len(outbox.entries) >= self._limits.outbox:
            raise OutboxFull(f"{len(outbox.entries)} messages unacknowledged")
        seq = outbox.add(channel, body)
        link = peer.link
        if link is not None and link.session is not None:
            self._outgoing.send_fresh(peer, link, time.monotonic())
        return seq

    def unacknowledged(self) -> int:
        """Messages sent to peers that are up and not yet acknowledged by them: what a daemon
        about to exit waits for (a peer that is away would keep it waiting for nothing)."""
        return sum(
            len(peer.outbox.entries)
            for peer in self._registry.peers.values()
            if peer.reported is PeerState.UP
        )

    def unreachable(self) -> dict[str, float]:
        """The kept links (``connect(keep=True)``: the user's ``--peer``, a table's members)
        with no session now, and for how many seconds (since last heard, or opened)."""
        now = time.monotonic()
        return {
            link.endpoint: now - link.down_since
            for link in self._registry.links.values()
            if link.kept and link.session is None
        }

    def connections(self) -> dict[str, int]:
        """Incoming connections held now and the most allowed; links open (ours)."""
        return {
            "incoming": len(self._bounds),
            "incoming_bound": self._bounds.total,
            "links": len(self._registry.links),
        }

    def host_of(self, key: bytes) -> str:
        """The address ``key`` last proved itself from ("" if never): the lobby counts the
        guesses of an invite code per host."""
        peer = self._registry.peers.get(key)
        return "" if peer is None else peer.host

    def peers(self) -> list[PeerStatus]:
        """Every peer we know of: connected to, heard from, sent to, or restored."""
        return [self._registry.status(peer) for peer in self._registry.peers.values()]

    # ----------------------------------------------------------------- tasks

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _router_sock(self) -> LoopSocket:
        assert self._router is not None, "frames only arrive once started"
        return self._router

    # ----------------------------------------------------------------- housekeeping

    async def _tick_loop(self) -> None:
        async for now, held in ticks(TICK):
            if held:
                self._not_listening(held)
            try:
                self._tick(now)
            except Exception:
                self.stats.errors += 1
                log.exception("mesh: error in housekeeping")

    def _not_listening(self, seconds: float) -> None:
        """Our event loop was held for ``seconds`` (a long computation of the caller's): what
        the peers sent meanwhile waits unread in our sockets, so that time is not their
        silence.  Counted as such, every link that had sent last would be recycled at once,
        the answers queued in its socket thrown away with it, and every peer reported away."""
        for link in self._registry.links.values():
            link.heard_at += seconds
        for peer in self._registry.peers.values():
            if peer.last_heard is not None:
                peer.last_heard += seconds

    def _tick(self, now: float) -> None:
        self._shared.wire.flush()
        self._rouse_sockets()
        registry = self._registry
        for link in list(registry.links.values()):
            self._links.service(link, now)
        # With gaps (early arrivals), keep the sender informed.
        self._incoming.acknowledge(
            [peer for peer in registry.peers.values() if peer.inbound.ack_due or peer.inbound.early]
        )
        for peer in registry.peers.values():
            registry.update_state(peer, now)
        if now >= self._next_expiry:
            self._next_expiry = now + EXPIRE_EVERY
            registry.expire(now)
        if now >= self._next_reconcile and self._gate is None:  # the gate counts as it goes
            self._next_reconcile = now + RECONCILE_EVERY
            self._bounds.reconcile(self.port)

    def _rouse_sockets(self) -> None:
        """Look once a tick whether a receive loop waits with a message queued.  The
        edge-triggered rule (:mod:`tarotd.zsocket`) is kept on every call, and this is defence
        in depth: should a wake-up ever be missed, a loop waits a tick, not for ever — a
        ROUTER that waited for ever would lose the game.  One ``EVENTS`` per socket per tick."""
        self._router_sock().rouse()
        for link in self._registry.links.values():
            link.sock.rouse()
