"""Our links: one DEALER per endpoint we talk to, its handshake (``hi``, the challenge, our
HELLO, the far end's HELLO-ACK), what it hears back (acks, ``reauth``), and its upkeep each
tick — a HELLO due, a ping when idle, a fresh socket when nothing answers."""

from __future__ import annotations

import errno
import logging
import os
import time
from typing import Any, Final

import zmq
import zmq.asyncio

from protocol.replication.identity import verify
from tarotd.mesh.bounds import Standing
from tarotd.mesh.core import TokenBucket
from tarotd.mesh.limits import SEND_SHARE, screen
from tarotd.mesh.outgoing import Outgoing
from tarotd.mesh.plumbing import dealer, watch, yield_every
from tarotd.mesh.records import Link, Peer, Shared
from tarotd.mesh.registry import Registry
from tarotd.mesh.wire import LINK_KINDS, TOKEN_SIZE, encode, encode_signed, signing_bytes
from tarotd.refusals import Cause
from tarotd.zsocket import LoopSocket

log = logging.getLogger(__name__)

HELLO_RETRY_UNSENT: Final = 0.1  #: retry delay when a HELLO could not even leave (no TCP yet)


class Links:
    """Our DEALERs, kept in the registry by endpoint; each has a task reading it."""

    def __init__(
        self,
        shared: Shared,
        registry: Registry,
        outgoing: Outgoing,
        context: zmq.asyncio.Context,
    ) -> None:
        self.shared = shared
        self._registry = registry
        self._outgoing = outgoing
        self._context = context

    def open(self, endpoint: str, expected_key: bytes | None) -> Link:
        shared = self.shared
        sock, monitor = dealer(self._context, shared.limits, endpoint, expected_key, shared.curve)
        limits = shared.limits
        bucket = TokenBucket(limits.rate, limits.burst)
        pace = TokenBucket(limits.rate * SEND_SHARE, limits.burst * SEND_SHARE)
        link = Link(endpoint, expected_key, LoopSocket(sock), bucket, pace, monitor)
        self._registry.links[endpoint] = link
        link.task = shared.spawn(self._loop(link))
        link.watch = shared.spawn(watch(link, shared.curve is not None))
        return link

    def connect(
        self, endpoint: str, expected_key: bytes | None, keep: bool, standing: Standing
    ) -> None:
        """Open a link to ``endpoint`` unless one is open (then it is kept, or raised to
        ``standing``), within the bounds on links no table needs (see
        :meth:`~tarotd.mesh.Mesh.connect`)."""
        registry = self._registry
        link = registry.links.get(endpoint)
        if link is not None:
            link.kept |= keep
            link.standing = max(link.standing, standing)
            return
        kept = keep or (expected_key is not None and registry.keeps(expected_key))
        if not kept and not registry.room_for_link(endpoint, standing):
            return
        if kept and expected_key is not None:
            registry.peer(expected_key).kept = True
        opened = self.try_open(endpoint, expected_key)
        if opened is not None:
            opened.kept, opened.standing = kept, standing

    def try_open(self, endpoint: str, expected_key: bytes | None) -> Link | None:
        """:meth:`open`, or None when this machine has no descriptor left for it (a flood
        of connections, say): counted, said once, and tried again when next asked."""
        try:
            return self.open(endpoint, expected_key)
        except zmq.ZMQError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            self.shared.refusals.refuse(
                Cause.NO_DESCRIPTORS,
                time.monotonic(),
                f"no link opened to {endpoint}: this daemon has no file descriptor left "
                "(a flood of connections, or a limit too low: ulimit -n)",
            )
            return None

    async def _loop(self, link: Link) -> None:
        count = 0
        # None: the socket closed, perhaps by a handler here (its link took a stranger, say)
        while (parts := await link.sock.recv()) is not None:
            try:
                self.on_frames(link, parts)
            except Exception:
                self.shared.stats.errors += 1
                log.exception("mesh: error handling a frame from %s", link.endpoint)
            count += 1
            await yield_every(count)

    def follow(self, peer: Peer, endpoint: str, restarted: bool, now: float) -> None:
        """Make sure we have a link back to a peer that said HELLO.  A restarted peer lost our
        session, so our link must say HELLO again; if it came back elsewhere, we follow it.
        The peer proved its key: its link, discovery's included, is ``PROVEN`` from now on."""
        link = peer.link
        waiting = self._registry.links.get(endpoint)
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
            self._registry.close_link(link)
        if endpoint not in self._registry.links and (
            self._registry.kept(peer) or self._registry.room_for_link(endpoint, Standing.PROVEN)
        ):
            peer.endpoint = endpoint
            opened = self.try_open(endpoint, peer.key)
            if opened is not None:
                opened.standing = Standing.PROVEN

    def on_frames(self, link: Link, parts: list[bytes]) -> None:
        now = time.monotonic()
        shared = self.shared
        msg = screen(shared.stats, shared.limits, link.bucket, parts, LINK_KINDS, now)
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
            self.shared.stats.unauthenticated += 1
            return
        link.heard_at = now
        self._registry.heard(peer, now)
        if msg["t"] == "reauth":
            link.session, link.down_since = None, now
            link.hello_due = now
        else:
            self._outgoing.on_ack(peer, link, msg, now)

    def _on_hello_ack(self, link: Link, msg: dict[str, Any], now: float) -> None:
        if link.nonce is None or msg["nonce"] != link.nonce or msg["to"] != self.shared.key:
            return  # a late answer to an older HELLO (or a copy): the newest one counts
        key: bytes = msg["key"]
        if key != link.to or not verify(key, msg["sig"], signing_bytes("hello-ack", msg)):
            self.shared.stats.bad_hello += 1
            return
        host = link.endpoint[len("tcp://") :].rpartition(":")[0].strip("[]")
        if not self._registry.admits(key, host, link.kept, now):
            self._registry.close_link(link)
            return
        peer = self._registry.peer(key)
        peer.kept |= link.kept
        peer.host = peer.host or host
        if peer.link is not None and peer.link is not link:
            self._registry.close_link(peer.link)
        peer.link, link.peer = link, peer
        link.session, link.nonce = msg["session"], None
        peer.name, peer.endpoint, peer.ever_up = msg["name"], link.endpoint, True
        link.heard_at = now
        self._registry.heard(peer, now)
        self._outgoing.acknowledged(peer, msg["n"])
        peer.outbox.rewind()
        self._outgoing.send_fresh(peer, link, now)

    def _ask_challenge(self, link: Link, now: float) -> None:
        """Start (or restart) the handshake: ``hi``, answered by the challenge our HELLO signs.
        Asked again after a heartbeat if no HELLO-ACK came by then."""
        if self._outgoing.send(link, encode("hi", {}), now):
            link.asked = True
            link.hello_due = now + self.shared.heartbeat
        else:
            link.hello_due = now + HELLO_RETRY_UNSENT

    def _on_challenge(self, link: Link, msg: dict[str, Any], now: float) -> None:
        """Answer the challenge we asked for with a HELLO signed for that daemon and that
        challenge: copied to another daemon or another connection, or kept for later, it is
        refused.  One HELLO per ``hi``: a far end sending challenges unasked gets no more."""
        key: bytes = msg["key"]
        if not link.asked or link.session is not None:
            return
        if link.expected_key is not None and key != link.expected_key:
            # the far end says it is someone else: no HELLO for it
            self.shared.stats.bad_hello += 1
            return
        link.asked = False
        nonce = os.urandom(TOKEN_SIZE)
        hello = {
            "key": self.shared.key,
            "to": key,
            "name": self.shared.name,
            "endpoint": self.shared.endpoint,
            "challenge": msg["c"],
            "nonce": nonce,
            "time": int(time.time()),
            "boot": self.shared.boot,
        }
        if self._outgoing.send(link, encode_signed(self.shared.identity, "hello", hello), now):
            link.nonce, link.to = nonce, key

    def service(self, link: Link, now: float) -> None:
        if link.sent_at > link.heard_at and now - link.heard_at > self.shared.timeout:
            self._recycle(link)
            return
        peer = link.peer
        if link.session is None or peer is None:
            if now >= link.hello_due:
                self._ask_challenge(link, now)
            return
        # what could not leave before (no TCP, high-water mark)
        self._outgoing.send_fresh(peer, link, now)
        if now >= peer.outbox.next_resend:
            self._outgoing.resend_overdue(peer, link, now)
        if now - link.sent_at >= self.shared.heartbeat:
            self._outgoing.send(link, encode("ping", {"s": link.session}), now)

    def _recycle(self, link: Link) -> None:
        """Replace a link whose frames leave but get no answer.  ZeroMQ reconnects when TCP
        breaks, but not when it does not: a peer whose machine vanished leaves a half-open
        connection.  A new socket is a new connection, under a new routing id, that says
        HELLO again."""
        key = link.peer.key if link.peer is not None else link.expected_key
        fresh = self.try_open(link.endpoint, key)
        if fresh is None:
            link.heard_at = time.monotonic()  # kept as it is, and tried again after another timeout
            return
        self._registry.close_link(link)
        fresh.kept, fresh.standing = link.kept, link.standing
        fresh.down_since = link.down_since if link.session is None else link.heard_at
