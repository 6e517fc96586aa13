"""Our ROUTER, where every peer's DEALER speaks to us: a ``hi`` gets a challenge, a HELLO
that answers one is screened (its signature, its addressee, its connection's CURVE key, room
for its key) and answered with a session, and what comes under that session goes to
:mod:`~tarotd.mesh.incoming`.  Without the gate, the ROUTER's own monitor bounds its
connections (:meth:`Router.guard_loop`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from protocol.replication.identity import fingerprint, verify
from tarotd.gate import Gate
from tarotd.guard import ConnectionBounds, peer_of, turn_away
from tarotd.mesh.core import TokenBucket
from tarotd.mesh.handshake import Challenges, clock_offset
from tarotd.mesh.incoming import Incoming
from tarotd.mesh.keys import curve_public_key
from tarotd.mesh.limits import screen
from tarotd.mesh.links import Links
from tarotd.mesh.plumbing import frame_property, yield_every
from tarotd.mesh.records import Shared
from tarotd.mesh.registry import Registry
from tarotd.mesh.wire import ROUTER_KINDS, encode, encode_signed, reachable, signing_bytes
from tarotd.refusals import Cause
from tarotd.zsocket import LoopSocket

log = logging.getLogger(__name__)


class Router:
    """The ROUTER's side of the handshake and of every session (see the module)."""

    def __init__(
        self,
        shared: Shared,
        registry: Registry,
        links: Links,
        incoming: Incoming,
        router: Callable[[], LoopSocket],
        gate: Callable[[], Gate | None],
        bounds: ConnectionBounds,
        port: Callable[[], int],
    ) -> None:
        self.shared = shared
        self._registry = registry
        self._links = links
        self._incoming = incoming
        self._router = router
        self._gate_of = gate
        self._bounds = bounds
        self._port = port
        self._challenges = Challenges()
        #: the inbound frames of every routing id that proved no key, together
        self._strangers = TokenBucket(shared.limits.rate, shared.limits.burst)

    async def loop(self, router: LoopSocket) -> None:
        count = 0
        while (frames := await router.recv_frames()) is not None:  # None: closed
            try:
                await self._on_frames(frames)
            except Exception:
                self.shared.stats.errors += 1
                log.exception("mesh: error handling an inbound frame")
            count += 1
            await yield_every(count)

    async def _on_frames(self, frames: list[zmq.Frame]) -> None:
        now = time.monotonic()
        rid = frames[0].bytes
        peer = self._registry.routes.get(rid)
        bucket = peer.bucket if peer is not None else self._strangers
        parts = [frame.bytes for frame in frames[1:]]
        msg = screen(self.shared.stats, self.shared.limits, bucket, parts, ROUTER_KINDS, now)
        if msg is None:
            return
        if msg["t"] == "hi":
            self._challenge(rid)
            return
        if msg["t"] == "hello":
            self._on_hello(rid, msg, frames[1], now)
            return
        if peer is None or peer.inbound.session is None or msg["s"] != peer.inbound.session:
            self.shared.stats.unauthenticated += 1
            self.shared.wire.send(self._router(), [rid, encode("reauth", {"s": msg["s"]})])
            return
        self._registry.heard(peer, now)
        if msg["t"] == "ping":
            peer.inbound.ack_due = True
            self._incoming.acknowledge([peer])
            # again what on_message could not handle (NotHandled)
            await self._incoming.deliver(peer)
        else:
            await self._incoming.on_data(peer, msg)

    def _challenge(self, rid: bytes) -> None:
        """Give the DEALER under ``rid`` a challenge for its HELLO: a HELLO made for it is fresh
        without any clock, and good on this connection only, once (see "HELLO freshness"
        in docs/protocol.md and :class:`~tarotd.mesh.handshake.Challenges`)."""
        challenge = self._challenges.issue(rid)
        self.shared.wire.send(
            self._router(), [rid, encode("challenge", {"key": self.shared.key, "c": challenge})]
        )

    def _on_hello(self, rid: bytes, msg: dict[str, Any], frame: zmq.Frame, now: float) -> None:
        key: bytes = msg["key"]
        challenges = self._challenges.spend(rid)
        if not verify(key, msg["sig"], signing_bytes("hello", msg)):
            self.shared.stats.bad_hello += 1
            return
        peer_address = frame_property(frame, "Peer-Address")
        seen_from = self._far_host(peer_address)
        if msg["to"] != self.shared.key or msg["challenge"] not in challenges:
            self.shared.stats.bad_hello += 1
            if msg["to"] != self.shared.key:
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
            self.shared.curve is not None
            and frame_property(frame, "User-Id") != curve_public_key(key).decode()
        ):
            self.shared.stats.bad_hello += 1
            self._log_refusal(
                Cause.HELLO_IMPERSONATION,
                key,
                seen_from,
                now,
                "its connection's CURVE key is not the one derived from that identity "
                "(someone without the member's secret key speaking as it)",
            )
            return
        if not self._registry.admits(key, seen_from, False, now):
            return
        peer = self._registry.peer(key)
        peer.host = seen_from
        gate = self._gate_of()
        if gate is not None and self._registry.kept(peer):
            gate.prove(peer_address, key)  # a member's connection: out of the bounds
        if peer.route != rid:  # a new connection of the peer's: answer there from now on
            self._registry.routes.pop(peer.route or b"", None)
            peer.route, self._registry.routes[rid] = rid, peer
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
            "key": self.shared.key,
            "to": key,
            "name": self.shared.name,
            "nonce": msg["nonce"],
            "session": peer.inbound.session,
            "n": peer.inbound.durable,
        }
        self.shared.wire.send(
            self._router(), [rid, encode_signed(self.shared.identity, "hello-ack", ack)]
        )
        self._registry.heard(peer, now)
        self._links.follow(peer, reachable(msg["endpoint"], seen_from), restarted, now)

    def _far_host(self, peer_address: str) -> str:
        """The host a connection to the ROUTER comes from, through the gate or not."""
        gate = self._gate_of()
        return peer_address if gate is None else gate.host_of(peer_address)

    def _log_refusal(self, cause: Cause, key: bytes, seen_from: str, now: float, why: str) -> None:
        """Count a refused HELLO and say why (:class:`~tarotd.refusals.Refusals`: a hostile peer
        repeating it must not fill the log, nor hide another cause)."""
        self.shared.refusals.refuse(
            cause,
            now,
            f"a HELLO signed by {fingerprint(key)} from {seen_from or 'an unknown address'}: {why}",
        )

    async def guard_loop(self, monitor: zmq.asyncio.Socket) -> None:
        """Count the ROUTER's incoming connections and turn away those beyond the bounds
        (:mod:`tarotd.guard`): a flood of connections from the LAN must not take the
        descriptors the daemon needs for its own files and links."""
        try:
            while True:
                event = parse_monitor_message(await monitor.recv_multipart())
                try:
                    self._guard(int(event["event"]), int(event["value"]))
                except Exception:
                    self.shared.stats.errors += 1
                    log.exception("mesh: error counting an incoming connection")
        finally:
            monitor.close(linger=0)

    def _guard(self, event: int, fd: int) -> None:
        """One event of the ROUTER's monitor (see :meth:`guard_loop`)."""
        if event != zmq.EVENT_ACCEPTED:
            self._bounds.closed(fd)
        else:
            far = peer_of(fd, self._port())
            cause = (
                None
                if far is None
                else self._bounds.admit(fd, far, far.host in self._registry.member_hosts)
            )
            if far is not None and cause is not None:
                turn_away(fd)
                self.shared.refusals.refuse(
                    cause,
                    time.monotonic(),
                    f"a connection from {far.host}: "
                    f"{len(self._bounds)} held, at most {self._bounds.per_host} from one host "
                    f"and {self._bounds.total} in all",
                )
