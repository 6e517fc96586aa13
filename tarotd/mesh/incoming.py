"""What arrives on the ROUTER from a peer that proved its key: data frames taken in
(:class:`~tarotd.mesh.core.Inbound` orders them), handed to ``on_message`` once each and in
order, and acknowledged once on our disk (``before_ack``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from tarotd.mesh.core import Arrival
from tarotd.mesh.records import Peer, Shared
from tarotd.mesh.wire import encode
from tarotd.zsocket import LoopSocket

log = logging.getLogger(__name__)


class NotHandled(Exception):
    """Raised by ``on_message``: the message could not be handled, not yet — for a reason of
    this machine's (its disk full, no descriptor free), or because what it belongs to has not
    begun here (a table another member started first) — and nothing of it was kept.  The mesh
    neither counts it delivered nor acknowledges it (nor anything after it): it keeps it, and
    hands it over again with the next frame from its sender (a ping at least every
    ``heartbeat``) until it is handled.  Nobody is blamed, and nothing is lost."""


OnMessage = Callable[[bytes, str, bytes], Awaitable[None]]
BeforeAck = Callable[[], Awaitable[None] | None]

#: An acknowledgement as taken before its wait for the disk: to whom, in which session, and
#: the ``n``, ``top`` and ``miss`` it says.
_Ack = tuple[Peer, bytes | None, int, int, list[int]]


class Incoming:
    """Delivery to ``on_message`` and the acknowledgements that follow, for every peer."""

    def __init__(
        self,
        shared: Shared,
        router: Callable[[], LoopSocket],
        on_message: OnMessage,
        before_ack: BeforeAck | None,
    ) -> None:
        self.shared = shared
        self._router = router
        self._on_message = on_message
        self._before_ack = before_ack
        self._acks_held = False  #: before_ack failed last time (logged once)
        #: acks waiting for before_ack's awaitable
        self._durable_wait: asyncio.Task[None] | None = None

    async def on_data(self, peer: Peer, msg: dict[str, Any]) -> None:
        self.skip_to(peer, msg["f"] - 1)
        limits = self.shared.limits
        arrival = peer.inbound.arrive(
            msg["q"], msg["c"], msg["b"], limits.window, limits.early_bytes
        )
        if arrival is Arrival.DUPLICATE:
            self.shared.stats.duplicates += 1
        elif arrival is Arrival.KEPT:
            await self.deliver(peer)

    def skip_to(self, peer: Peer, held_below: int) -> None:
        """Skip what the sender no longer holds (:meth:`Inbound.skip_to`): lost, unless it was
        on our disk before we acknowledged it."""
        skipped = peer.inbound.skip_to(held_below)
        if skipped and self._before_ack is None:  # with it, what we acknowledged was on our disk
            log.warning(
                "mesh: %d messages from %s are lost (acknowledged before we lost our state)",
                skipped,
                peer.name or peer.key.hex()[:16],
            )
        self.shared.stats.gaps += skipped

    async def deliver(self, peer: Peer) -> None:
        inbound = peer.inbound
        while (message := inbound.take()) is not None:
            seq, channel, body = message
            try:
                await self._on_message(peer.key, channel, body)
            except NotHandled as fault:
                self.shared.stats.not_handled += 1
                log.debug(
                    "mesh: a message from %s is kept, to hand over again: %s",
                    peer.name or peer.key.hex()[:16],
                    fault,
                )
                # held, unacknowledged: the sender need not send it again
                inbound.put_back(seq, channel, body)
                return
            except Exception:
                self.shared.stats.errors += 1
                log.exception("mesh: on_message failed; the message counts as delivered")
            inbound.delivered = seq

    def acknowledge(self, peers: list[Peer]) -> None:
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
            self.hold_acks(peers)
            return
        # Taken with nothing delivered since before_ack(): they tell only what it covered.
        acks = [
            (peer, peer.inbound.session, peer.inbound.delivered, *peer.inbound.holdings())
            for peer in peers
        ]
        for peer in peers:
            peer.inbound.ack_due = False
        if pending is None:
            self.send_acks(acks)
        else:
            self._durable_wait = self.shared.spawn(self.ack_when_durable(pending, acks))

    async def ack_when_durable(self, pending: Awaitable[None], acks: list[_Ack]) -> None:
        try:
            await pending
        except Exception:
            self.hold_acks([peer for peer, *_ in acks])
            return
        finally:
            self._durable_wait = None
        self.send_acks(acks)

    def send_acks(self, acks: list[_Ack]) -> None:
        self._acks_held = False
        for peer, session, delivered, top, miss in acks:
            inbound = peer.inbound
            inbound.durable = max(inbound.durable, delivered)
            if session != inbound.session or peer.route is None:
                continue  # the peer said HELLO since: it resends what our HELLO-ACK did not cover
            ack = encode("ack", {"s": session, "n": delivered, "top": top, "miss": miss})
            if not self.shared.wire.send(self._router(), [peer.route, ack]):
                inbound.ack_due = True

    def hold_acks(self, peers: list[Peer]) -> None:
        self.shared.stats.errors += 1
        if not self._acks_held:  # once, not every tick
            log.exception("mesh: before_ack failed; acknowledgements wait until it succeeds")
        self._acks_held = True
        for peer in peers:
            peer.inbound.ack_due = True
