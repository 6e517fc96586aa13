"""The mesh over ZeroMQ: the sockets, the handshake, the bounds on what strangers may cost,
and the tasks that drive them.  What to send and when is :mod:`tarotd.mesh.core`'s; the frames
are :mod:`tarotd.mesh.wire`'s; the whole is specified in :mod:`tarotd.mesh`."""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

import zmq
import zmq.asyncio
import zmq.auth
from zmq.auth.asyncio import AsyncioAuthenticator
from zmq.utils.monitor import parse_monitor_message

from protocol.replication.identity import PUBLIC_KEY_SIZE, Identity, fingerprint, verify
from tarotd.gate import CannotListen, Gate, gate_possible
from tarotd.guard import (
    HANDSHAKE_DEADLINE_MS,
    PER_HOST,
    ConnectionBounds,
    incoming_bound,
    peer_of,
    turn_away,
)
from tarotd.mesh.bounds import (
    Room,
    Standing,
    refusal,
    room_for,
    room_from,
    silent_since,
    stranger_share,
    unanswered,
)
from tarotd.mesh.core import Arrival, Inbound, Outbox, PeerState, TokenBucket, liveness
from tarotd.mesh.faults import FaultPlan, Wire
from tarotd.mesh.handshake import Challenges, clock_offset
from tarotd.mesh.keys import curve_public_key, curve_secret_key
from tarotd.mesh.wire import (
    LINK_KINDS,
    MAX_CHANNEL,
    MAX_FRAME,
    MAX_NAME,
    ROUTER_KINDS,
    TOKEN_SIZE,
    MiB,
    decode,
    encode,
    encode_signed,
    is_channel,
    is_endpoint,
    reachable,
    signing_bytes,
    tcp_endpoint,
)
from tarotd.refusals import Cause, Refusals
from tarotd.ticks import ticks
from tarotd.zsocket import LoopSocket

log = logging.getLogger(__name__)


TICK: Final = 0.02  #: seconds between housekeeping rounds; also the acknowledgement delay
HELLO_RETRY_UNSENT: Final = 0.1  #: retry delay when a HELLO could not even leave (no TCP yet)
RECONNECT_IVL_MS: Final = 100  #: ZeroMQ's TCP reconnection starts here and doubles ...
RECONNECT_IVL_MAX_MS: Final = 5000  #: ... up to this
SEND_SHARE: Final = 0.8  #: data frames are paced at this share of the peer's inbound rate limit
YIELD_EVERY: Final = 32  #: frames a receive loop handles before letting other tasks run
FRAME_OVERHEAD: Final = 256  #: room a data frame's fields take around its body
ROUTE_PREFIX: Final = b"r"  #: ZeroMQ reserves routing ids that begin with a zero byte
EXPIRE_EVERY: Final = 1.0  #: seconds between two looks for peers and links to forget
RECONCILE_EVERY: Final = 5.0  #: seconds between two checks of the incoming connections' count
GUARDED_EVENTS: Final = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED
#: failed handshakes in a row before a link says it cannot connect
HANDSHAKE_FAILED_TIMES: Final = 3
HANDSHAKE_FAILURES: Final = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


@dataclass(frozen=True)
class PeerStatus:
    key: bytes
    name: str
    endpoint: str | None
    state: PeerState
    last_heard: float | None  #: wall-clock time (``time.time()``), None if never heard


@dataclass(frozen=True)
class Limits:
    max_frame: int = MAX_FRAME  #: largest frame accepted (and so the largest body, less overhead)
    rate: float = 2000.0  #: inbound frames per second per peer (we pace our sends under it) ...
    burst: float = 4000.0  #: ... with this burst
    window: int = 512  #: data frames in flight beyond the last acknowledged seq (bounds queues)
    outbox: int = 10_000  #: unacknowledged messages per peer before ``send`` refuses
    early_bytes: int = 32 * MiB  #: bytes of early (out-of-order) messages buffered per sender
    #: peer records no table needs (see ``keeps``); then a HELLO from one more key is refused
    max_peers: int = 256
    hwm: int = 10_000  #: ZeroMQ send and receive high-water marks, per connection
    #: incoming connections in all (None: from the descriptor limit, :mod:`tarotd.guard`)
    connections: int | None = None
    #: incoming connections from one host, 127.0.0.1 too (a member's, once proven, apart)
    connections_per_host: int = PER_HOST
    #: accept through :mod:`tarotd.gate` where the system allows (False: ZeroMQ listens itself)
    gate: bool = True
    links: int = 64  #: links no table needs (opened on behalf of discovery) held at once
    new_keys_rate: float = 2.0  #: unknown keys taken in per second, from every host together ...
    new_keys_burst: float = 32.0  #: ... with this burst
    keys_per_host: int = 8  #: peers no table needs that one host (127.0.0.1 excepted) may speak for
    #: a peer or link no table needs, silent (or never proven) this long, is forgotten
    forget_after: float = 60.0
    #: a link no table needs whose far end has not answered for this long closes (a dead port)
    unanswered_after: float = 5.0


@dataclass
class MeshStats:
    """Counters of what was dropped and why, and of what was sent again or went wrong; they
    only ever grow.  ``tarot status`` shows those that are not zero: a network that loses
    frames, a peer of another version, a disk that refuses."""

    malformed: int = 0  #: not msgpack, wrong shape, unknown kind, wrong types
    oversized: int = 0  #: over ``max_frame`` (ZeroMQ disconnects beyond twice that, uncounted)
    rate_limited: int = 0
    unauthenticated: int = 0  #: no valid session for the routing id or link
    bad_hello: int = 0  #: bad signature, wrong key, not for us or not for our challenge (a replay)
    strangers: int = 0  #: validly signed, but ourselves, or one key too many
    duplicates: int = 0  #: data already delivered or already buffered
    gaps: int = 0  #: seqs skipped because the sender no longer held them (we lost state)
    retransmits: int = 0
    errors: int = 0  #: exceptions caught in the loops (a callback's, or a bug): logged
    #: deliveries ``on_message`` refused for a local fault (:class:`NotHandled`), to try again
    not_handled: int = 0

    def counted(self) -> dict[str, int]:
        """The counters that are not zero, by name."""
        return {name: count for name, count in vars(self).items() if count}


class OutboxFull(Exception):
    """``send`` refused: the peer has ``Limits.outbox`` messages unacknowledged.  Dropping one
    would break delivery for good; whether to wait, or give the peer up, is the daemon's call."""


class NotHandled(Exception):
    """Raised by ``on_message``: the message could not be handled, not yet — for a reason of
    this machine's (its disk full, no descriptor free), or because what it belongs to has not
    begun here (a table another member started first) — and nothing of it was kept.  The mesh
    neither counts it delivered nor acknowledges it (nor anything after it): it keeps it, and
    hands it over again with the next frame from its sender (a ping at least every
    ``heartbeat``) until it is handled.  Nobody is blamed, and nothing is lost."""


OnMessage = Callable[[bytes, str, bytes], Awaitable[None]]
OnStatus = Callable[[PeerStatus], None]


@dataclass(eq=False)
class _Link:
    """Our DEALER to one endpoint; ``peer`` once the far end proved its key."""

    endpoint: str
    expected_key: bytes | None
    sock: LoopSocket
    bucket: TokenBucket  #: inbound frames
    pace: TokenBucket  #: outbound data frames: stay under the far end's inbound limit
    monitor: zmq.asyncio.Socket  #: ``sock``'s failed handshakes (see :meth:`Mesh._watch`)
    #: connected to for a table or by the user (``connect(keep=True)``), never forgotten
    kept: bool = False
    #: what the key has shown of itself: links no table needs make room by it (:func:`room_for`)
    standing: Standing = Standing.STRANGER
    opened: float = field(default_factory=time.monotonic)
    #: with no session since (across recycling)
    down_since: float = field(default_factory=time.monotonic)
    peer: _Peer | None = None
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
class _Peer:
    key: bytes
    outbox: Outbox
    inbound: Inbound
    bucket: TokenBucket
    name: str = ""
    endpoint: str | None = None
    boot: bytes | None = None
    link: _Link | None = None
    ever_up: bool = False
    last_heard: float | None = None  #: monotonic
    last_heard_wall: float | None = None
    reported: PeerState = PeerState.CONNECTING
    route: bytes | None = None  #: the routing id of the DEALER it last proved its key on
    host: str = ""  #: the address it last proved its key from (bounds the keys a host speaks for)
    kept: bool = False  #: proved on a kept link: never forgotten
    created: float = field(default_factory=time.monotonic)


async def _yield_every(count: int) -> None:
    """Let the other tasks run every :data:`YIELD_EVERY` frames.  Awaiting a frame that is
    already queued does not yield to the event loop, so a receive loop under a flood would
    otherwise starve the housekeeping (acks, pings) of this mesh and everything else."""
    if count % YIELD_EVERY == 0:
        await asyncio.sleep(0)


#: An acknowledgement as taken before its wait for the disk: to whom, in which session, and
#: the ``n``, ``top`` and ``miss`` it says.
_Ack = tuple[_Peer, bytes | None, int, int, list[int]]

_MONITOR_NUMBERS = itertools.count()


def _monitor(sock: zmq.Socket[Any], events: int) -> zmq.asyncio.Socket:
    """A PAIR socket that receives ``sock``'s ``events``.  It stays on pyzmq's asyncio layer
    (a few events per connection): a plain socket makes it in its own context, which is the
    mesh's asyncio one, so it is an asyncio socket that :meth:`Mesh._watch` can await.

    Its endpoint has a number of its own.  pyzmq would name it after the socket's file
    descriptor, which a link replaced under load reuses while ZeroMQ still tears the old
    socket's monitor down: the new link's monitor then fails with "Address already in use"
    and the peer stays unreachable (seen with fifty daemons on two cores)."""
    monitor = sock.get_monitor_socket(
        events, addr=f"inproc://tarot-monitor-{os.getpid()}-{next(_MONITOR_NUMBERS)}"
    )
    assert isinstance(monitor, zmq.asyncio.Socket), "the mesh's context is an asyncio Context"
    return monitor


def _property(frame: zmq.Frame, name: str) -> str:
    """What ZeroMQ says of a frame's connection ("" if it cannot say): ``Peer-Address``, the
    IP address it came from; ``User-Id``, the CURVE key it was made under (z85)."""
    try:
        value = frame.get(name)
    except zmq.ZMQError:
        return ""
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------- the mesh


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
        before_ack: Callable[[], Awaitable[None] | None] | None = None,
        on_status: OnStatus | None = None,
        heartbeat: float = 1.0,
        timeout: float = 5.0,
        limits: Limits = Limits(),
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
        self._identity = identity
        self._listen = listen
        self._name = name
        self._on_message = on_message
        self._before_ack = before_ack
        self._acks_held = False  #: before_ack failed last time (logged once)
        #: acks waiting for before_ack's awaitable
        self._durable_wait: asyncio.Task[None] | None = None
        self._on_status = on_status
        self._heartbeat = heartbeat
        self._timeout = timeout
        self._limits = limits
        self._wire = Wire(faults)
        self._boot = os.urandom(TOKEN_SIZE)
        self._context = zmq.asyncio.Context()
        self._router: LoopSocket | None = None
        self._gate: Gate | None = None
        #: where the peers a table needs proved their keys from
        self._member_hosts: frozenset[str] = frozenset()
        self._endpoint: str | None = None
        self._peers: dict[bytes, _Peer] = {}
        #: routing id → the peer that proved itself under it
        self._routes: dict[bytes, _Peer] = {}
        self._challenges = Challenges()
        self._links: dict[str, _Link] = {}
        self._stranger_bucket = TokenBucket(limits.rate, limits.burst)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._curve = (curve_public_key(self.key), curve_secret_key(identity)) if curve else None
        self._authenticator: AsyncioAuthenticator | None = None
        self.refusals = Refusals(log)
        self._keeps = keeps or (lambda key: False)
        self._new_keys = TokenBucket(limits.new_keys_rate, limits.new_keys_burst)
        self._bounds = ConnectionBounds(
            limits.connections or incoming_bound(), limits.connections_per_host
        )
        self._next_expiry = self._next_reconcile = 0.0

    # ----------------------------------------------------------------- public API

    @property
    def endpoint(self) -> str:
        """The bound endpoint, with the real port when ``listen`` asked for port 0."""
        if self._endpoint is None:
            raise RuntimeError("the mesh is not started")
        return self._endpoint

    @property
    def port(self) -> int:
        """The bound TCP port, for discovery beacons to announce."""
        return int(self.endpoint.rpartition(":")[2])

    async def start(self) -> None:
        router = self._socket(zmq.ROUTER)
        router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        # a DEALER reconnecting under its id is not refused
        router.setsockopt(zmq.ROUTER_HANDOVER, 1)
        if self._curve is not None:
            # Any client key completes the handshake; the ZAP handler is there so that ZeroMQ
            # tags each frame with it (User-Id), which _on_hello checks against the HELLO's key.
            self._authenticator = AsyncioAuthenticator(self._context)
            self._authenticator.configure_curve(domain="*", location=zmq.auth.CURVE_ALLOW_ANY)
            self._authenticator.start()
            router.setsockopt(zmq.CURVE_SERVER, 1)
            router.setsockopt(zmq.CURVE_SECRETKEY, self._curve[1])
        gated = self._limits.gate and gate_possible()
        try:
            if gated:
                self._endpoint = self._open_gate(router)
            else:
                router.bind(self._listen)
                self._endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
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
        self._spawn(self._router_loop(self._router))
        if not gated:
            self._spawn(self._guard_loop(_monitor(router, GUARDED_EVENTS)))
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
            members=lambda host: host in self._member_hosts,
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
        self._wire.close()
        for link in list(self._links.values()):
            link.close()
        self._links.clear()
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
        if self._curve is not None and expected_key is None:
            raise ValueError(f"CURVE encrypts to the peer's key: connecting to {endpoint} needs it")
        link = self._links.get(endpoint)
        if link is not None:
            link.kept |= keep
            link.standing = max(link.standing, standing)
            return
        kept = keep or (expected_key is not None and self._keeps(expected_key))
        if not kept and not self._room_for_link(endpoint, standing):
            return
        if kept and expected_key is not None:
            self._peer(expected_key).kept = True
        opened = self._try_open_link(endpoint, expected_key)
        if opened is not None:
            opened.kept, opened.standing = kept, standing

    def send(self, peer_key: bytes, channel: str, body: bytes) -> int:
        """Queue ``body`` for ``peer_key`` and return its seq.  It goes out at once if the peer
        is up, and otherwise as soon as it is; it is kept until acknowledged."""
        if len(peer_key) != PUBLIC_KEY_SIZE or peer_key == self.key:
            raise ValueError("a peer key is 32 bytes, and not ours")
        if not is_channel(channel):
            raise ValueError(f"a channel is a str of at most {MAX_CHANNEL} characters")
        if len(body) > self._limits.max_frame - FRAME_OVERHEAD:
            raise ValueError(f"a body is at most {self._limits.max_frame - FRAME_OVERHEAD} bytes")
        peer = self._peer(peer_key)
        outbox = peer.outbox
        if len(outbox.entries) >= self._limits.outbox:
            raise OutboxFull(f"{len(outbox.entries)} messages unacknowledged")
        seq = outbox.add(channel, body)
        link = peer.link
        if link is not None and link.session is not None:
            self._send_fresh(peer, link, time.monotonic())
        return seq

    def unacknowledged(self) -> int:
        """Messages sent to peers that are up and not yet acknowledged by them: what a daemon
        about to exit waits for (a peer that is away would keep it waiting for nothing)."""
        return sum(
            len(peer.outbox.entries)
            for peer in self._peers.values()
            if peer.reported is PeerState.UP
        )

    def unreachable(self) -> dict[str, float]:
        """The kept links (``connect(keep=True)``: the user's ``--peer``, a table's members)
        with no session now, and for how many seconds (since last heard, or opened)."""
        now = time.monotonic()
        return {
            link.endpoint: now - link.down_since
            for link in self._links.values()
            if link.kept and link.session is None
        }

    def connections(self) -> dict[str, int]:
        """Incoming connections held now and the most allowed; links open (ours)."""
        return {
            "incoming": len(self._bounds),
            "incoming_bound": self._bounds.total,
            "links": len(self._links),
        }

    def host_of(self, key: bytes) -> str:
        """The address ``key`` last proved itself from ("" if never): the lobby counts the
        guesses of an invite code per host."""
        peer = self._peers.get(key)
        return "" if peer is None else peer.host

    def peers(self) -> list[PeerStatus]:
        """Every peer we know of: connected to, heard from, sent to, or restored."""
        return [self._status(peer) for peer in self._peers.values()]

    # ----------------------------------------------------------------- records

    def _peer(self, key: bytes) -> _Peer:
        peer = self._peers.get(key)
        if peer is None:
            bucket = TokenBucket(self._limits.rate, self._limits.burst)
            peer = self._peers[key] = _Peer(key, Outbox(), Inbound(), bucket)
        return peer

    def _kept(self, peer: _Peer) -> bool:
        return peer.kept or self._keeps(peer.key)

    def _admits(self, key: bytes, host: str, kept: bool, now: float) -> bool:
        """Whether a key that proved itself may talk to us.  A known key may; an unknown one
        only within the bounds on keys no table needs (``Limits``): so many from one host
        (this machine's own address excepted: its daemons), so many per second from every host
        together, so many in all — a peer of those silent longest, and not up, makes room.
        The keys a table needs, and those on a kept link, are never refused for room."""
        if key == self.key:
            self.stats.strangers += 1
            return False
        if key in self._peers or kept or self._keeps(key):
            return True
        loose = [peer for peer in self._peers.values() if not self._kept(peer)]
        limits = self._limits
        refused = refusal(host, loose, limits.keys_per_host, limits.max_peers, self._new_keys, now)
        if refused is not None:
            self.stats.strangers += 1
            cause, why = refused
            self.refusals.refuse(
                cause,
                now,
                f"a HELLO signed by {fingerprint(key)} from {host or 'an unknown address'}: {why}",
            )
            return False
        if (oldest := room_from(loose, limits.max_peers)) is not None:
            self._forget(oldest)
        return True

    def _forget(self, peer: _Peer) -> None:
        """Drop a peer no table needs, its link and everything we held for it.  Should it come
        back, it starts afresh: the delivery rules for a side that lost its state apply."""
        if peer.link is not None:
            self._close_link(peer.link)
        if peer.route is not None:
            self._routes.pop(peer.route, None)
        del self._peers[peer.key]

    def _expire(self, now: float) -> None:
        """Forget the peers and links no table needs that have been silent, or never proved
        their key, for ``Limits.forget_after`` (see :meth:`connect`)."""
        horizon = now - self._limits.forget_after
        for peer in silent_since(
            horizon, [peer for peer in self._peers.values() if not self._kept(peer)]
        ):
            self._forget(peer)
        loose = [link for link in self._links.values() if not self._link_kept(link)]
        for link in loose:
            if link.peer is None and link.opened < horizon:
                self._close_link(link)
        for link in unanswered(now - self._limits.unanswered_after, loose):  # dead ports
            if self._links.get(link.endpoint) is link:
                self.refusals.refuse(
                    Cause.LINKS_UNANSWERED,
                    now,
                    f"the link to {link.endpoint} closed: nothing answered there for "
                    f"{self._limits.unanswered_after:g} s",
                )
                self._close_link(link)

    def _link_kept(self, link: _Link) -> bool:
        return link.kept or (link.expected_key is not None and self._keeps(link.expected_key))

    def _status(self, peer: _Peer) -> PeerStatus:
        return PeerStatus(peer.key, peer.name, peer.endpoint, peer.reported, peer.last_heard_wall)

    def _heard(self, peer: _Peer, now: float) -> None:
        peer.last_heard = now
        peer.last_heard_wall = time.time()
        self._update_state(peer, now)

    def _update_state(self, peer: _Peer, now: float) -> None:
        state = liveness(peer.ever_up, peer.last_heard, now, self._timeout)
        if state is not peer.reported:
            peer.reported = state
            if self._on_status is not None:
                self._call(self._on_status, self._status(peer))

    def _call(self, callback: Callable[..., None], *args: object) -> None:
        try:
            callback(*args)
        except Exception:
            self.stats.errors += 1
            log.exception("mesh callback %r failed", callback)

    # ----------------------------------------------------------------- sockets and tasks

    def _socket(self, kind: int) -> zmq.Socket[Any]:
        """A plain socket, not an asyncio one: see :mod:`tarotd.zsocket` for why.  Made by the
        context, so that its ``destroy`` closes it too."""
        sock: zmq.Socket[Any] = self._context.socket(
            kind,
            socket_class=zmq.Socket,  # type: ignore[arg-type]  # pyzmq's stubs: the context's class
        )
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDHWM, self._limits.hwm)
        sock.setsockopt(zmq.RCVHWM, self._limits.hwm)
        sock.setsockopt(zmq.MAXMSGSIZE, 2 * self._limits.max_frame)
        sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_DEADLINE_MS)
        return sock

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _open_link(self, endpoint: str, expected_key: bytes | None) -> _Link:
        sock = self._socket(zmq.DEALER)
        sock.setsockopt(zmq.ROUTING_ID, ROUTE_PREFIX + os.urandom(TOKEN_SIZE - 1))
        sock.setsockopt(zmq.IMMEDIATE, 1)  # no queueing for a dead connection: we retransmit
        sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
        if self._curve is not None:
            assert expected_key is not None, "connect() takes no link of unknown key under CURVE"
            public, secret = self._curve
            sock.setsockopt(zmq.CURVE_SERVERKEY, curve_public_key(expected_key))
            sock.setsockopt(zmq.CURVE_PUBLICKEY, public)
            sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
        try:
            monitor = _monitor(sock, HANDSHAKE_FAILURES | zmq.EVENT_HANDSHAKE_SUCCEEDED)
            sock.connect(endpoint)
        except zmq.ZMQError:
            sock.close(linger=0)  # no descriptor left behind (the caller sees the error)
            raise
        limits = self._limits
        bucket = TokenBucket(limits.rate, limits.burst)
        pace = TokenBucket(limits.rate * SEND_SHARE, limits.burst * SEND_SHARE)
        link = _Link(endpoint, expected_key, LoopSocket(sock), bucket, pace, monitor)
        self._links[endpoint] = link
        link.task = self._spawn(self._link_loop(link))
        link.watch = self._spawn(self._watch(link))
        return link

    def _try_open_link(self, endpoint: str, expected_key: bytes | None) -> _Link | None:
        """:meth:`_open_link`, or None when this machine has no descriptor left for it (a flood
        of connections, say): counted, said once, and tried again when next asked."""
        try:
            return self._open_link(endpoint, expected_key)
        except zmq.ZMQError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            self.refusals.refuse(
                Cause.NO_DESCRIPTORS,
                time.monotonic(),
                f"no link opened to {endpoint}: this daemon has no file descriptor left "
                "(a flood of connections, or a limit too low: ulimit -n)",
            )
            return None

    def _close_link(self, link: _Link) -> None:
        if self._links.get(link.endpoint) is link:
            del self._links[link.endpoint]
        if link.peer is not None and link.peer.link is link:
            link.peer.link = None
        for task in (link.task, link.watch):
            if task is not None:
                task.cancel()
        link.close()

    async def _router_loop(self, router: LoopSocket) -> None:
        count = 0
        while (frames := await router.recv_frames()) is not None:  # None: closed
            try:
                await self._on_router_frames(frames)
            except Exception:
                self.stats.errors += 1
                log.exception("mesh: error handling an inbound frame")
            count += 1
            await _yield_every(count)

    async def _link_loop(self, link: _Link) -> None:
        count = 0
        # None: the socket closed, perhaps by a handler here (its link took a stranger, say)
        while (parts := await link.sock.recv()) is not None:
            try:
                self._on_link_frames(link, parts)
            except Exception:
                self.stats.errors += 1
                log.exception("mesh: error handling a frame from %s", link.endpoint)
            count += 1
            await _yield_every(count)

    async def _watch(self, link: _Link) -> None:
        """Say once why a link cannot connect, then stop watching.  ZeroMQ retries a failed
        handshake forever and silently: a daemon with ``curve`` and one without, or a link given
        a wrong key, would wait for each other with nothing in the log.  A mechanism mismatch
        is told at once; another failure (a peer that stopped mid-handshake, say) only after
        :data:`HANDSHAKE_FAILED_TIMES` in a row."""
        failures, mismatch = 0, False
        while not mismatch and failures < HANDSHAKE_FAILED_TIMES:
            event = parse_monitor_message(await link.monitor.recv_multipart())
            mismatch = event["value"] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
            failures = 0 if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED else failures + 1
        # The far end may hang up before we read why (a reset, no detail): then we can only
        # say what it may be.
        if mismatch:
            why = (
                "runs with --no-curve, unencrypted, and this one encrypts"
                if self._curve is not None
                else "encrypts (CURVE, the default) and this one runs with --no-curve"
            )
            why += ": every member must encrypt, or every one run with --no-curve"
        elif self._curve is not None and link.expected_key is not None:
            why = (
                f"fails the CURVE handshake: is it {fingerprint(link.expected_key)} (check the key "
                "given for it), and does it encrypt too (no --no-curve)?"
            )
        else:
            why = (
                "fails the handshake: does it encrypt (CURVE, the default: then every member "
                "must, and this one runs with --no-curve), or is it no tarotd?"
            )
        log.warning("mesh: cannot connect to %s: the daemon there %s", link.endpoint, why)
        link.sock.socket.disable_monitor()
        link.sock.rouse()  # any call on the socket may take in the FD's signal (tarotd.zsocket)
        link.monitor.close(linger=0)

    async def _guard_loop(self, monitor: zmq.asyncio.Socket) -> None:
        """Count the ROUTER's incoming connections and turn away those beyond the bounds
        (:mod:`tarotd.guard`): a flood of connections from the LAN must not take the
        descriptors the daemon needs for its own files and links."""
        try:
            while True:
                event = parse_monitor_message(await monitor.recv_multipart())
                try:
                    self._guard(int(event["event"]), int(event["value"]))
                except Exception:
                    self.stats.errors += 1
                    log.exception("mesh: error counting an incoming connection")
        finally:
            monitor.close(linger=0)

    def _guard(self, event: int, fd: int) -> None:
        """One event of the ROUTER's monitor (see :meth:`_guard_loop`)."""
        if event != zmq.EVENT_ACCEPTED:
            self._bounds.closed(fd)
        else:
            far = peer_of(fd, self.port)
            cause = (
                None if far is None else self._bounds.admit(fd, far, far.host in self._member_hosts)
            )
            if far is not None and cause is not None:
                turn_away(fd)
                self.refusals.refuse(
                    cause,
                    time.monotonic(),
                    f"a connection from {far.host}: "
                    f"{len(self._bounds)} held, at most {self._bounds.per_host} from one host "
                    f"and {self._bounds.total} in all",
                )

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
        for link in self._links.values():
            link.heard_at += seconds
        for peer in self._peers.values():
            if peer.last_heard is not None:
                peer.last_heard += seconds

    def _screen(
        self, bucket: TokenBucket, parts: list[bytes], kinds: frozenset[str], now: float
    ) -> dict[str, Any] | None:
        """The checks every inbound frame passes, cheapest first."""
        if not bucket.take(now):
            self.stats.rate_limited += 1
            return None
        if len(parts) != 1:
            self.stats.malformed += 1
            return None
        if len(parts[0]) > self._limits.max_frame:
            self.stats.oversized += 1
            return None
        msg = decode(parts[0], kinds, self._limits.max_frame)
        if msg is None:
            self.stats.malformed += 1
        return msg

    # ----------------------------------------------------------------- ROUTER side: receiving

    async def _on_router_frames(self, frames: list[zmq.Frame]) -> None:
        now = time.monotonic()
        rid = frames[0].bytes
        peer = self._routes.get(rid)
        bucket = peer.bucket if peer is not None else self._stranger_bucket
        msg = self._screen(bucket, [frame.bytes for frame in frames[1:]], ROUTER_KINDS, now)
        if msg is None:
            return
        if msg["t"] == "hi":
            self._challenge(rid)
            return
        if msg["t"] == "hello":
            self._on_hello(rid, msg, frames[1], now)
            return
        if peer is None or peer.inbound.session is None or msg["s"] != peer.inbound.session:
            self.stats.unauthenticated += 1
            self._wire.send(self._router_sock(), [rid, encode("reauth", {"s": msg["s"]})])
            return
        self._heard(peer, now)
        if msg["t"] == "ping":
            peer.inbound.ack_due = True
            self._acknowledge([peer])
            await self._deliver(peer)  # again what on_message could not handle (NotHandled)
        else:
            await self._on_data(peer, msg)

    def _challenge(self, rid: bytes) -> None:
        """Give the DEALER under ``rid`` a challenge for its HELLO: a HELLO made for it is fresh
        without any clock, and good on this connection only, once (see the module's "HELLO
        freshness" and :class:`~tarotd.mesh.handshake.Challenges`)."""
        challenge = self._challenges.issue(rid)
        self._wire.send(
            self._router_sock(), [rid, encode("challenge", {"key": self.key, "c": challenge})]
        )

    def _on_hello(self, rid: bytes, msg: dict[str, Any], frame: zmq.Frame, now: float) -> None:
        key: bytes = msg["key"]
        challenges = self._challenges.spend(rid)
        if not verify(key, msg["sig"], signing_bytes("hello", msg)):
            self.stats.bad_hello += 1
            return
        peer_address = _property(frame, "Peer-Address")
        seen_from = self._far_host(peer_address)
        if msg["to"] != self.key or msg["challenge"] not in challenges:
            self.stats.bad_hello += 1
            if msg["to"] != self.key:
                cause, why = (
                    Cause.HELLO_MISADDRESSED,
                    "made for another daemon: a copy of it replayed to us",
                )
            else:
                cause, why = (
                    Cause.HELLO_STALE,
                    "for a challenge this connection does not hold: a copy replayed, "
                    "or an answer too late",
                )
            self._log_refusal(cause, key, seen_from, now, why)
            return
        if (
            self._curve is not None
            and _property(frame, "User-Id") != curve_public_key(key).decode()
        ):
            self.stats.bad_hello += 1
            self._log_refusal(
                Cause.HELLO_IMPERSONATION,
                key,
                seen_from,
                now,
                "its connection's CURVE key is not the one derived from that identity "
                "(someone without the member's secret key speaking as it)",
            )
            return
        if not self._admits(key, seen_from, False, now):
            return
        peer = self._peer(key)
        peer.host = seen_from
        if self._gate is not None and self._kept(peer):
            self._gate.prove(peer_address, key)  # a member's connection: out of the bounds
        if peer.route != rid:  # a new connection of the peer's: answer there from now on
            self._routes.pop(peer.route or b"", None)
            peer.route, self._routes[rid] = rid, peer
        restarted = peer.boot is not None and peer.boot != msg["boot"]
        if (
            peer.boot != msg["boot"]
            and (offset := clock_offset(msg["time"] - time.time())) is not None
        ):
            log.warning(
                "mesh: the clock of %s is %s this machine's (one of the two is wrong; nothing here "
                "depends on it, but the times in its logs and files will not match ours)",
                msg["name"] or fingerprint(key),
                offset,
            )
        peer.boot = msg["boot"]
        peer.name = msg["name"]
        peer.inbound.new_session()
        ack = {
            "key": self.key,
            "to": key,
            "name": self._name,
            "nonce": msg["nonce"],
            "session": peer.inbound.session,
            "n": peer.inbound.durable,
        }
        self._wire.send(self._router_sock(), [rid, encode_signed(self._identity, "hello-ack", ack)])
        self._heard(peer, now)
        self._follow(peer, reachable(msg["endpoint"], seen_from), restarted, now)

    def _far_host(self, peer_address: str) -> str:
        """The host a connection to the ROUTER comes from, through the gate or not."""
        return peer_address if self._gate is None else self._gate.host_of(peer_address)

    def _log_refusal(self, cause: Cause, key: bytes, seen_from: str, now: float, why: str) -> None:
        """Count a refused HELLO and say why (:class:`~tarotd.refusals.Refusals`: a hostile peer
        repeating it must not fill the log, nor hide another cause)."""
        self.refusals.refuse(
            cause,
            now,
            f"a HELLO signed by {fingerprint(key)} from {seen_from or 'an unknown address'}: {why}",
        )

    def _follow(self, peer: _Peer, endpoint: str, restarted: bool, now: float) -> None:
        """Make sure we have a link back to a peer that said HELLO.  A restarted peer lost our
        session, so our link must say HELLO again; if it came back elsewhere, we follow it.
        The peer proved its key: its link, discovery's included, is ``PROVEN`` from now on."""
        link = peer.link
        waiting = self._links.get(endpoint)
        if waiting is not None and waiting.expected_key == peer.key:
            waiting.standing = Standing.PROVEN
        if link is not None:
            link.standing = Standing.PROVEN
            if not restarted:
                return
            if link.endpoint == endpoint:
                link.session, link.down_since = None, now
                link.hello_due = now
                return
            self._close_link(link)
        if endpoint not in self._links and (
            self._kept(peer) or self._room_for_link(endpoint, Standing.PROVEN)
        ):
            peer.endpoint = endpoint
            opened = self._try_open_link(endpoint, peer.key)
            if opened is not None:
                opened.standing = Standing.PROVEN

    def _room_for_link(self, endpoint: str, standing: Standing) -> bool:
        """Whether one more link no table needs may open (to ``endpoint``, for a key of
        ``standing``): four descriptors each, and a flood of beacons or HELLOs from fresh
        keys asks for one per key — so strangers hold a share at most, and a better link
        takes the place of a worse one (:func:`~tarotd.mesh.bounds.room_for`)."""
        total = self._limits.links
        loose = [link for link in self._links.values() if not link.kept]
        host = endpoint.removeprefix("tcp://").rpartition(":")[0]
        room, victim = room_for(loose, host, standing, total)
        now = time.monotonic()
        if victim is not None:
            self.refusals.refuse(
                Cause.LINKS_EVICTED,
                now,
                f"the link to {victim.endpoint} closed for one to {endpoint}: {total} links no "
                "table needs are open, and it was a stranger's or its host the most crowded",
            )
            self._close_link(victim)
        if room is Room.STRANGERS_FULL:
            self.refusals.refuse(
                Cause.LINKS_STRANGERS_FULL,
                now,
                f"no link opened to {endpoint}: strangers hold the {stranger_share(total)} "
                "links they may, spread over their hosts",
            )
        elif room is Room.FULL:
            self.refusals.refuse(
                Cause.LINKS_FULL,
                now,
                f"no link opened to {endpoint}: {total} links no table needs are open already",
            )
        return room in (Room.FREE, Room.EVICT)

    async def _on_data(self, peer: _Peer, msg: dict[str, Any]) -> None:
        self._skip_to(peer, msg["f"] - 1)
        limits = self._limits
        arrival = peer.inbound.arrive(
            msg["q"], msg["c"], msg["b"], limits.window, limits.early_bytes
        )
        if arrival is Arrival.DUPLICATE:
            self.stats.duplicates += 1
        elif arrival is Arrival.KEPT:
            await self._deliver(peer)

    def _skip_to(self, peer: _Peer, held_below: int) -> None:
        """Skip what the sender no longer holds (:meth:`Inbound.skip_to`): lost, unless it was
        on our disk before we acknowledged it."""
        skipped = peer.inbound.skip_to(held_below)
        if skipped and self._before_ack is None:  # with it, what we acknowledged was on our disk
            log.warning(
                "mesh: %d messages from %s are lost (acknowledged before we lost our state)",
                skipped,
                peer.name or peer.key.hex()[:16],
            )
        self.stats.gaps += skipped

    async def _deliver(self, peer: _Peer) -> None:
        inbound = peer.inbound
        while (message := inbound.take()) is not None:
            seq, channel, body = message
            try:
                await self._on_message(peer.key, channel, body)
            except NotHandled as fault:
                self.stats.not_handled += 1
                log.debug(
                    "mesh: a message from %s is kept, to hand over again: %s",
                    peer.name or peer.key.hex()[:16],
                    fault,
                )
                # held, unacknowledged: the sender need not send it again
                inbound.put_back(seq, channel, body)
                return
            except Exception:
                self.stats.errors += 1
                log.exception("mesh: on_message failed; the message counts as delivered")
            inbound.delivered = seq

    def _acknowledge(self, peers: list[_Peer]) -> None:
        """Acknowledge what ``peers`` delivered once it is on our disk: ``before_ack()`` puts
        it there, at once or by the awaitable it returns.  Meanwhile the loop goes on
        delivering; what arrives then is acknowledged by a later round, and while one round
        waits for the disk no other starts (they would only wait for the same disk)."""
        peers = [
            peer for peer in peers if peer.inbound.session is not None and peer.route is not None
        ]
        if not peers or self._durable_wait is not None:
            return  # nobody to tell (a peer struck off), or the round waiting says it soon
        try:
            pending = self._before_ack() if self._before_ack is not None else None
        except Exception:  # e.g. the disk is full: unacknowledged, the peer sends again
            self._hold_acks(peers)
            return
        # Taken with nothing delivered since before_ack(): they tell only what it covered.
        acks = [
            (peer, peer.inbound.session, peer.inbound.delivered, *peer.inbound.holdings())
            for peer in peers
        ]
        for peer in peers:
            peer.inbound.ack_due = False
        if pending is None:
            self._send_acks(acks)
        else:
            self._durable_wait = self._spawn(self._ack_when_durable(pending, acks))

    async def _ack_when_durable(self, pending: Awaitable[None], acks: list[_Ack]) -> None:
        try:
            await pending
        except Exception:
            self._hold_acks([peer for peer, *_ in acks])
            return
        finally:
            self._durable_wait = None
        self._send_acks(acks)

    def _send_acks(self, acks: list[_Ack]) -> None:
        self._acks_held = False
        for peer, session, delivered, top, miss in acks:
            inbound = peer.inbound
            inbound.durable = max(inbound.durable, delivered)
            if session != inbound.session or peer.route is None:
                continue  # the peer said HELLO since: it resends what our HELLO-ACK did not cover
            ack = encode("ack", {"s": session, "n": delivered, "top": top, "miss": miss})
            if not self._wire.send(self._router_sock(), [peer.route, ack]):
                inbound.ack_due = True

    def _hold_acks(self, peers: list[_Peer]) -> None:
        self.stats.errors += 1
        if not self._acks_held:  # once, not every tick
            log.exception("mesh: before_ack failed; acknowledgements wait until it succeeds")
        self._acks_held = True
        for peer in peers:
            peer.inbound.ack_due = True

    def _router_sock(self) -> LoopSocket:
        assert self._router is not None, "frames only arrive once started"
        return self._router

    # ----------------------------------------------------------------- DEALER side: our links

    def _on_link_frames(self, link: _Link, parts: list[bytes]) -> None:
        now = time.monotonic()
        msg = self._screen(link.bucket, parts, LINK_KINDS, now)
        if msg is None:
            return
        if msg["t"] == "challenge":
            self._on_challenge(link, msg, now)
            return
        if msg["t"] == "hello-ack":
            self._on_hello_ack(link, msg, now)
            return
        peer = link.peer
        if peer is None or link.session is None or msg["s"] != link.session:
            self.stats.unauthenticated += 1
            return
        link.heard_at = now
        self._heard(peer, now)
        if msg["t"] == "reauth":
            link.session, link.down_since = None, now
            link.hello_due = now
        else:
            self._on_ack(peer, link, msg, now)

    def _on_hello_ack(self, link: _Link, msg: dict[str, Any], now: float) -> None:
        if link.nonce is None or msg["nonce"] != link.nonce or msg["to"] != self.key:
            return  # a late answer to an older HELLO (or a copy): the newest one counts
        key: bytes = msg["key"]
        if key != link.to or not verify(key, msg["sig"], signing_bytes("hello-ack", msg)):
            self.stats.bad_hello += 1
            return
        host = link.endpoint[len("tcp://") :].rpartition(":")[0].strip("[]")
        if not self._admits(key, host, link.kept, now):
            self._close_link(link)
            return
        peer = self._peer(key)
        peer.kept |= link.kept
        peer.host = peer.host or host
        if peer.link is not None and peer.link is not link:
            self._close_link(peer.link)
        peer.link, link.peer = link, peer
        link.session, link.nonce = msg["session"], None
        peer.name, peer.endpoint, peer.ever_up = msg["name"], link.endpoint, True
        link.heard_at = now
        self._heard(peer, now)
        self._acknowledged(peer, msg["n"])
        peer.outbox.rewind()
        self._send_fresh(peer, link, now)

    def _on_ack(self, peer: _Peer, link: _Link, msg: dict[str, Any], now: float) -> None:
        """Take in what arrived, forget what is acknowledged, and re-send at once what the
        receiver misses although something we sent after it arrived."""
        outbox = peer.outbox
        n: int = msg["n"]
        miss = set(msg["miss"])
        outbox.receipt(n, msg["top"], miss, now)
        if self._acknowledged(peer, n):
            self._send_fresh(peer, link, now)  # the window moved
        for seq in outbox.lost(miss, now):
            if link.pace.take(now):
                self.stats.retransmits += self._transmit(link, seq, now)

    def _acknowledged(self, peer: _Peer, n: int) -> bool:
        """The peer has every seq up to ``n`` (an ack's, or a HELLO-ACK's): True if that is news."""
        return peer.outbox.acknowledge(n)

    def _ask_challenge(self, link: _Link, now: float) -> None:
        """Start (or restart) the handshake: ``hi``, answered by the challenge our HELLO signs.
        Asked again after a heartbeat if no HELLO-ACK came by then."""
        if self._send(link, encode("hi", {}), now):
            link.asked = True
            link.hello_due = now + self._heartbeat
        else:
            link.hello_due = now + HELLO_RETRY_UNSENT

    def _on_challenge(self, link: _Link, msg: dict[str, Any], now: float) -> None:
        """Answer the challenge we asked for with a HELLO signed for that daemon and that
        challenge: copied to another daemon or another connection, or kept for later, it is
        refused.  One HELLO per ``hi``: a far end sending challenges unasked gets no more."""
        key: bytes = msg["key"]
        if not link.asked or link.session is not None:
            return
        if link.expected_key is not None and key != link.expected_key:
            self.stats.bad_hello += 1  # the far end says it is someone else: no HELLO for it
            return
        link.asked = False
        nonce = os.urandom(TOKEN_SIZE)
        hello = {
            "key": self.key,
            "to": key,
            "name": self._name,
            "endpoint": self.endpoint,
            "challenge": msg["c"],
            "nonce": nonce,
            "time": int(time.time()),
            "boot": self._boot,
        }
        if self._send(link, encode_signed(self._identity, "hello", hello), now):
            link.nonce, link.to = nonce, key

    def _send(self, link: _Link, frame: bytes, now: float) -> bool:
        sent = self._wire.send(link.sock, [frame])
        if sent:
            link.sent_at = now
        return sent

    def _transmit(self, link: _Link, seq: int, now: float) -> bool:
        assert link.peer is not None and link.session is not None
        outbox = link.peer.outbox
        entry = outbox.entries[seq]
        data = {"s": link.session, "f": outbox.head, "q": seq, "c": entry.channel, "b": entry.body}
        if not self._send(link, encode("data", data), now):
            return False
        outbox.sent(seq, now)
        return True

    def _send_fresh(self, peer: _Peer, link: _Link, now: float) -> None:
        """First transmissions, in seq order, as far as the window and the pace allow."""
        outbox = peer.outbox
        while (seq := outbox.fresh(self._limits.window)) is not None and link.pace.take(now):
            if not self._transmit(link, seq, now):
                break

    def _resend_overdue(self, peer: _Peer, link: _Link, now: float) -> None:
        """Send again, in seq order and as far as the pace allows, what waited too long for
        its ack."""
        resent = 0
        for seq in peer.outbox.overdue(now):
            if not link.pace.take(now):
                break
            resent += 1
            self.stats.retransmits += self._transmit(link, seq, now)
        peer.outbox.rearm(now, expired=resent > 0)

    # ----------------------------------------------------------------- housekeeping

    def _tick(self, now: float) -> None:
        self._wire.flush()
        self._rouse_sockets()
        for link in list(self._links.values()):
            self._service_link(link, now)
        # With gaps (early arrivals), keep the sender informed.
        self._acknowledge(
            [peer for peer in self._peers.values() if peer.inbound.ack_due or peer.inbound.early]
        )
        for peer in self._peers.values():
            self._update_state(peer, now)
        if now >= self._next_expiry:
            self._next_expiry = now + EXPIRE_EVERY
            self._expire(now)
            self._member_hosts = frozenset(
                peer.host for peer in self._peers.values() if peer.host and self._kept(peer)
            )
        if now >= self._next_reconcile and self._gate is None:  # the gate counts as it goes
            self._next_reconcile = now + RECONCILE_EVERY
            self._bounds.reconcile(self.port)

    def _rouse_sockets(self) -> None:
        """Look once a tick whether a receive loop waits with a message queued.  The
        edge-triggered rule (:mod:`tarotd.zsocket`) is kept on every call, and this is defence
        in depth: should a wake-up ever be missed, a loop waits a tick, not for ever — a
        ROUTER that waited for ever would lose the game.  One ``EVENTS`` per socket per tick."""
        self._router_sock().rouse()
        for link in self._links.values():
            link.sock.rouse()

    def _service_link(self, link: _Link, now: float) -> None:
        if link.sent_at > link.heard_at and now - link.heard_at > self._timeout:
            self._recycle(link)
            return
        peer = link.peer
        if link.session is None or peer is None:
            if now >= link.hello_due:
                self._ask_challenge(link, now)
            return
        self._send_fresh(peer, link, now)  # what could not leave before (no TCP, high-water mark)
        if now >= peer.outbox.next_resend:
            self._resend_overdue(peer, link, now)
        if now - link.sent_at >= self._heartbeat:
            self._send(link, encode("ping", {"s": link.session}), now)

    def _recycle(self, link: _Link) -> None:
        """Replace a link whose frames leave but get no answer.  ZeroMQ reconnects when TCP
        breaks, but not when it does not: a peer whose machine vanished leaves a half-open
        connection.  A new socket is a new connection, under a new routing id, that says
        HELLO again."""
        key = link.peer.key if link.peer is not None else link.expected_key
        fresh = self._try_open_link(link.endpoint, key)
        if fresh is None:
            link.heard_at = time.monotonic()  # kept as it is, and tried again after another timeout
            return
        self._close_link(link)
        fresh.kept, fresh.standing = link.kept, link.standing
        fresh.down_since = link.down_since if link.session is None else link.heard_at
