"""What leaves on a link once its far end proved its key: data frames, first sent in seq order
within the window and the pace, sent again when reported missing or overdue, forgotten once
acknowledged.  The rules of what to send are :mod:`tarotd.mesh.core`'s :class:`Outbox`; this
puts its decisions on the link."""

from __future__ import annotations

from typing import Any

from tarotd.mesh.records import Link, Peer, Shared
from tarotd.mesh.wire import encode


class Outgoing:
    """The sending side of every link: it holds no state but the shared settings."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def send(self, link: Link, frame: bytes, now: float) -> bool:
        sent = self.shared.wire.send(link.sock, [frame])
        if sent:
            link.sent_at = now
        return sent

    def on_ack(self, peer: Peer, link: Link, msg: dict[str, Any], now: float) -> None:
        """Take in what arrived, forget what is acknowledged, and re-send at once what the
        receiver misses although something we sent after it arrived."""
        outbox = peer.outbox
        n: int = msg["n"]
        miss = set(msg["miss"])
        outbox.receipt(n, msg["top"], miss, now)
        if self.acknowledged(peer, n):
            self.send_fresh(peer, link, now)  # the window moved
        for seq in outbox.lost(miss, now):
            if link.pace.take(now):
                self.shared.stats.retransmits += self.transmit(link, seq, now)

    def acknowledged(self, peer: Peer, n: int) -> bool:
        """The peer has every seq up to ``n`` (an ack's, or a HELLO-ACK's): True if that is news."""
        return peer.outbox.acknowledge(n)

    def transmit(self, link: Link, seq: int, now: float) -> bool:
        assert link.peer is not None and link.session is not None
        outbox = link.peer.outbox
        entry = outbox.entries[seq]
        data = {"s": link.session, "f": outbox.head, "q": seq, "c": entry.channel, "b": entry.body}
        if not self.send(link, encode("data", data), now):
            return False
        outbox.sent(seq, now)
        return True

    def send_fresh(self, peer: Peer, link: Link, now: float) -> None:
        """First transmissions, in seq order, as far as the window and the pace allow."""
        outbox = peer.outbox
        window = self.shared.limits.window
        while (seq := outbox.fresh(window)) is not None and link.pace.take(now):
            if not self.transmit(link, seq, now):
                break

    def resend_overdue(self, peer: Peer, link: Link, now: float) -> None:
        """Send again, in seq order and as far as the pace allows, what waited too long for
        its ack."""
        resent = 0
        for seq in peer.outbox.overdue(now):
            if not link.pace.take(now):
                break
            resent += 1
            self.shared.stats.retransmits += self.transmit(link, seq, now)
        peer.outbox.rearm(now, expired=resent > 0)
