"""The pure half of the mesh: the numbering, ordering, acknowledgement and retransmission of
the messages between this daemon and one peer, and whether that peer is up, with time passed
in and no sockets (as :mod:`tarotd.ticks`).  The socket layer (:mod:`tarotd.mesh.sockets`)
asks it what to send and when, and tells it what left and what came back; the rules are those
of "Delivery" in docs/protocol.md, "The mesh wire format".
"""

from __future__ import annotations

import enum
import math
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from tarotd.mesh.wire import MAX_MISS, TOKEN_SIZE

RETRANSMIT_AFTER: Final = 0.5  #: an unacknowledged message is sent again after this long ...
FAST_RETRANSMIT_AFTER: Final = 0.2  #: ... or this long if the receiver reports it missing,
MAX_RTO: Final = 10.0  #: ... or longer when the measured round trip is (up to this)
REORDERING: Final = 0.05  #: a message missing while one sent this much later arrived is lost
MAX_BACKOFF: Final = 16  #: the retransmission timeout doubles on expiry, up to this factor

Outgoing = tuple[int, str, bytes]  #: (seq, channel, body)


class TokenBucket:
    """``rate`` events per second on average, ``burst`` at once (full until first asked)."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp: float | None = None

    def take(self, now: float) -> bool:
        if self.stamp is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class PeerState(enum.Enum):
    CONNECTING = "connecting"  #: not yet authenticated both ways
    UP = "up"  #: authenticated, heard within ``timeout``
    AWAY = "away"  #: was up, silent for ``timeout``; reconnection goes on


def liveness(ever_up: bool, last_heard: float | None, now: float, timeout: float) -> PeerState:
    """A peer's state: up once it proved its key both ways and while heard within ``timeout``."""
    if not ever_up:
        return PeerState.CONNECTING
    if last_heard is not None and now - last_heard <= timeout:
        return PeerState.UP
    return PeerState.AWAY


class Arrival(enum.Enum):
    """What became of a data frame's message at its receiver."""

    KEPT = "kept"  #: buffered, to be handed over in order
    DUPLICATE = "duplicate"  #: already delivered or already buffered
    TOO_FAR = "too far"  #: beyond the window or the early bytes: the sender will send it again


@dataclass(eq=False)
class Pending:
    channel: str
    body: bytes
    sent_at: float | None = None  #: last transmission; None: not sent on the current session
    sends: int = 0  #: transmissions on the current session
    held: bool = False  #: the receiver reported holding it (early): no need to send it again

    def due(self, after: float) -> float:
        assert self.sent_at is not None
        return self.sent_at + after


class RoundTrip:
    """The smoothed round-trip time to one peer and its variation (RFC 6298), measured on
    acks of messages sent once, and Karn's backoff.  Under load a round trip includes the
    time a message waits in the peer's queue; timers that ignore it re-send what is merely
    waiting in line, and the copies lengthen the line.  When the line outgrows the timer,
    every message gets re-sent before its ack comes, so no ack makes a valid sample: the
    timeout doubles on each expiry until one does."""

    def __init__(self) -> None:
        self.smoothed: float | None = None
        self.variation = 0.0
        self.backoff = 1
        self.backed_off_at = -math.inf

    def sample(self, rtt: float) -> None:
        self.backoff = 1
        if self.smoothed is None:
            self.smoothed, self.variation = rtt, rtt / 2
            return
        self.variation = 0.75 * self.variation + 0.25 * abs(self.smoothed - rtt)
        self.smoothed = 0.875 * self.smoothed + 0.125 * rtt

    def expired(self, now: float, timeout: float) -> None:
        """A retransmission timer expired: back off, once per ``timeout`` (the messages of
        one window expire one after the other, and that is still a single expiry)."""
        if now - self.backed_off_at >= timeout:
            self.backoff = min(2 * self.backoff, MAX_BACKOFF)
            self.backed_off_at = now

    def timeout(self, floor: float) -> float:
        """How long a message may wait for its ack before it is sent again."""
        return min(MAX_RTO, self.worst(floor) * self.backoff)

    def worst(self, floor: float) -> float:
        """The longest an ack should take, as far as we know (``floor`` at least)."""
        estimate = floor if self.smoothed is None else self.smoothed + 4 * self.variation
        return min(MAX_RTO, max(floor, estimate))


class Outbox:
    """What we sent one peer and it has not acknowledged, in seq order.

    First transmissions go strictly in seq order, so the entries never sent on the current
    session are those from ``unsent`` on; those below it are in flight (or held early by the
    receiver), and none of them needs a retransmission before ``next_resend``.  That keeps
    the work per message constant however long the outbox gets.
    """

    def __init__(self, entries: Iterable[Outgoing] = ()) -> None:
        """``entries``: what a sender that kept its outbox across a restart still holds."""
        self.entries: OrderedDict[int, Pending] = OrderedDict(
            (seq, Pending(channel, body)) for seq, channel, body in sorted(entries)
        )
        self.next_seq = max([1, *(seq + 1 for seq in self.entries)])
        self.acked = self.head - 1
        self.unsent = self.head
        self.next_resend = math.inf
        self.round_trip = RoundTrip()
        self.latest_arrived = 0.0  #: when the latest message known to have arrived was sent

    @property
    def head(self) -> int:
        """The lowest seq still held: the receiver will never see anything below it again."""
        return next(iter(self.entries), self.next_seq)

    def add(self, channel: str, body: bytes) -> int:
        seq = self.next_seq
        self.entries[seq] = Pending(channel, body)
        self.next_seq += 1
        return seq

    def fresh(self, window: int) -> int | None:
        """The seq to send for the first time next, if the window allows one: at most
        ``window`` beyond the last acknowledged seq."""
        return self.unsent if self.unsent < min(self.next_seq, self.acked + window + 1) else None

    def sent(self, seq: int, now: float) -> None:
        """``seq`` left at ``now``.  The first transmission of one sets the retransmission
        timer if none is running."""
        entry = self.entries[seq]
        entry.sent_at = now
        entry.sends += 1
        if seq == self.unsent:
            self.unsent += 1
            self.next_resend = min(
                self.next_resend, now + self.round_trip.timeout(RETRANSMIT_AFTER)
            )

    def overdue(self, now: float) -> list[int]:
        """The seqs in flight, in order, whose ack is overdue and that the receiver did not
        report held: to send again (:meth:`rearm` afterwards)."""
        timeout = self.round_trip.timeout(RETRANSMIT_AFTER)
        return [seq for seq, entry in self._in_flight() if now >= entry.due(timeout)]

    def rearm(self, now: float, expired: bool) -> None:
        """Note when the next retransmission falls due, after those :meth:`overdue` gave
        were sent again (``expired``: at least one was), and back off if they were."""
        timeout = self.round_trip.timeout(RETRANSMIT_AFTER)
        self.next_resend = min(
            (entry.due(timeout) for _, entry in self._in_flight()), default=math.inf
        )
        if expired:
            self.round_trip.expired(now, timeout)

    def _in_flight(self) -> Iterable[tuple[int, Pending]]:
        """The entries sent on this session and not reported held, in seq order."""
        for seq, entry in self.entries.items():
            if seq >= self.unsent:
                return
            if not entry.held:
                yield seq, entry

    def receipt(self, n: int, top: int, miss: set[int], now: float) -> None:
        """Take in what an ack says arrived: every seq up to ``top`` but those in ``miss``.
        Messages it reports for the first time that were sent only once (for one sent twice,
        which copy arrived?) time a round trip, and move ``latest_arrived``: a message still
        missing though sent well before one that arrived was lost, not delayed."""
        newest: Pending | None = None
        for seq in range(self.acked + 1, min(max(n, top), self.unsent - 1) + 1):
            entry = self.entries.get(seq)
            if entry is None or entry.held or entry.sent_at is None or seq in miss:
                continue
            entry.held = seq > n
            if entry.sends == 1:
                self.latest_arrived = max(self.latest_arrived, entry.sent_at)
                newest = entry
        if newest is not None:
            assert newest.sent_at is not None
            self.round_trip.sample(now - newest.sent_at)

    def lost(self, miss: Iterable[int], now: float) -> list[int]:
        """The seqs among those the receiver reports missing that were lost rather than
        delayed, in order: a message sent after one arrived, or its ack is overdue (when
        nothing newer is in flight to tell, as when a re-sent copy is lost too)."""
        worst = self.round_trip.worst(FAST_RETRANSMIT_AFTER)
        lost = []
        for seq in sorted(miss):
            entry = self.entries.get(seq)
            if entry is None or entry.sent_at is None:
                continue
            if now >= entry.due(worst) or entry.sent_at + REORDERING < self.latest_arrived:
                lost.append(seq)
        return lost

    def acknowledge(self, n: int) -> bool:
        """Everything up to ``n`` is delivered; True if that is news.  An ``n`` beyond all we
        ever numbered means we restarted without our outbox while the peer kept its state:
        our unacknowledged messages get fresh numbers after ``n`` or it would drop them as
        duplicates."""
        if n >= self.next_seq:
            pending = [Pending(e.channel, e.body) for e in self.entries.values()]
            self.entries = OrderedDict((n + 1 + i, entry) for i, entry in enumerate(pending))
            self.next_seq = n + 1 + len(pending)
        elif n <= self.acked:
            return False
        while self.entries and next(iter(self.entries)) <= n:
            self.entries.popitem(last=False)
        self.acked = n
        self.unsent = max(self.unsent, self.head)
        return True

    def rewind(self) -> None:
        """A new session: nothing sent before it can be assumed on its way, nor still held
        (the receiver may have restarted)."""
        for entry in self.entries.values():
            entry.sent_at, entry.sends, entry.held = None, 0, False
        self.unsent = self.head
        self.next_resend = math.inf


@dataclass(eq=False)
class Inbound:
    """One sender's stream as we receive it."""

    delivered: int = 0
    session: bytes | None = None  #: issued in our HELLO-ACK; None until the sender proved its key
    early: dict[int, tuple[str, bytes]] = field(default_factory=dict)
    early_bytes: int = 0
    ack_due: bool = False
    #: Every seq up to this is on our disk (``before_ack`` was done after its delivery): what
    #: a HELLO-ACK may tell the sender it need not send again.
    durable: int = 0

    def new_session(self) -> None:
        """The sender said HELLO: it re-sends everything after ``delivered`` from now on, and
        what it sent before may have been numbered by a process that has since died (one that
        kept no outbox), so early arrivals from before are dropped rather than trusted."""
        self.session = os.urandom(TOKEN_SIZE)
        self.early.clear()
        self.early_bytes = 0
        self.ack_due = False

    def arrive(
        self, seq: int, channel: str, body: bytes, window: int, max_early_bytes: int
    ) -> Arrival:
        """Take in a data frame's message: kept to hand over in order, unless it is a
        duplicate or too far ahead to buffer (beyond ``window``, or ``max_early_bytes`` of
        early arrivals).  Every data frame makes an ack due."""
        self.ack_due = True
        if seq <= self.delivered or seq in self.early:
            return Arrival.DUPLICATE
        too_far = seq > self.delivered + window
        too_big = seq > self.delivered + 1 and self.early_bytes + len(body) > max_early_bytes
        if too_far or too_big:
            return Arrival.TOO_FAR
        self.put_back(seq, channel, body)
        return Arrival.KEPT

    def take(self) -> tuple[int, str, bytes] | None:
        """The next message in order, if it arrived: taken out, to be handed over and then
        counted ``delivered`` (or, not handled, :meth:`put_back`)."""
        seq = self.delivered + 1
        if seq not in self.early:
            return None
        channel, body = self.early.pop(seq)
        self.early_bytes -= len(body)
        return seq, channel, body

    def put_back(self, seq: int, channel: str, body: bytes) -> None:
        self.early[seq] = (channel, body)
        self.early_bytes += len(body)

    def skip_to(self, held_below: int) -> int:
        """The sender no longer holds anything up to ``held_below``: it had our ack for them,
        so if we have not delivered them we lost our state, and waiting would wait forever.
        Returns how many seqs are skipped."""
        skipped = max(0, held_below - self.delivered)
        if skipped:
            for seq in [seq for seq in self.early if seq <= held_below]:
                self.early_bytes -= len(self.early.pop(seq)[1])
            self.delivered = held_below
        return skipped

    def holdings(self) -> tuple[int, list[int]]:
        """``(top, miss)`` for an ack: we hold every seq in (delivered, top] except ``miss``.
        When too many are missing to list, ``top`` stops at the last one listed."""
        top = max(self.early, default=self.delivered)
        miss = [q for q in range(self.delivered + 1, top) if q not in self.early]
        if len(miss) > MAX_MISS:
            miss = miss[:MAX_MISS]
            top = miss[-1]
        return top, miss
