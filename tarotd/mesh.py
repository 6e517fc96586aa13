"""The peer mesh: authenticated, ordered, exactly-once delivery between daemons, over ZeroMQ.

The game needs one thing from the network: every message a daemon sends to a peer arrives,
once, in the order it was sent, and only from the peer it claims to come from — across
dropped links, restarts and a hostile LAN.  This module gives exactly that and knows nothing
of tarot.

**Sockets.**  Each daemon binds one ROUTER and opens one DEALER per peer (``connect``),
plain ZeroMQ sockets the event loop drives directly (:mod:`tarotd.zsocket`: pyzmq's asyncio
layer cost a third of the mesh's CPU).  The ROUTER listens on loopback, behind the daemon's own
door on ``listen`` (:mod:`tarotd.gate`), which bounds the connections before ZeroMQ sees them.
Traffic *from* A *to* B always travels on A's DEALER to B's ROUTER, and B's answers about
that stream (the HELLO-ACK, acknowledgements) come back on the same connection, so each TCP
connection carries one direction of data and its own feedback.  A DEALER's
ZeroMQ routing id is drawn at random for each socket and bound to the peer's key by the
signed HELLO that arrives under it, answering the challenge issued under it: the ROUTER
answers (HELLO-ACK, acknowledgements) to the routing id the peer last proved itself on.  Nobody can guess that id, so a stranger cannot
knock a member's connection off the ROUTER by claiming its id, while ``ROUTER_HANDOVER`` lets
a DEALER that reconnects under its own id (after a frame too large, a broken TCP connection)
take it back at once, even if the ROUTER still holds the dead connection.  (Only someone
reading the LAN's traffic could learn an id — and could as well reset the TCP connection.)
Even then the id is only a name tag: nothing is accepted under it but a HELLO until one proved the
key, and after that only frames carrying the session token the HELLO-ACK issued.

**Wire frames** are one msgpack map each (``t`` is the kind); signed frames carry ``sig``, an
Ed25519 signature over ``"tarot/v2/mesh/" ‖ t ‖ 0x00 ‖ msgpack([the other fields in the
order below])``, a domain no protocol message or other handshake shares:

=============  ===================  =====================================================
kind           direction            fields
=============  ===================  =====================================================
``hi``         DEALER → ROUTER      (none) — "challenge me": a HELLO is due on this link
``challenge``  ROUTER → DEALER      key (the ROUTER's), c (16 B, drawn for this routing id)
``hello``      DEALER → ROUTER      key, to (the challenge's key), name, endpoint,
                                    challenge (its c), nonce (16 B), time (the sender's
                                    clock, unix s: only said, never checked),
                                    boot (16 B, new each process), sig
``hello-ack``  ROUTER → DEALER      key, to (the HELLO's key), name, nonce (the HELLO's),
                                    session (16 B), n (last seq from ``to`` delivered and on our
                                    disk), sig
``data``       DEALER → ROUTER      s (session), f (lowest seq the sender still holds),
                                    q (seq), c (channel), b (body)
``ping``       DEALER → ROUTER      s — sent when the link is idle for ``heartbeat``
``ack``        ROUTER → DEALER      s, n (cumulative: all seqs ≤ n delivered), top and
                                    miss (it holds every seq in (n, top] but those in miss)
``reauth``     ROUTER → DEALER      s — "I do not know that session": say HELLO again
=============  ===================  =====================================================

**Delivery.**  Messages to a peer are numbered from 1 and kept in its outbox until
acknowledged.  The DEALER sends them in order, at most ``window`` beyond the last
acknowledged seq, paced below the peer's inbound rate limit.  The receiver buffers early
arrivals, drops duplicates, hands each seq to ``on_message`` once and in order, and
acknowledges every :data:`TICK` while it has news or gaps, once what it acknowledges is on
its disk (``before_ack``; a ``ping`` is answered by an ``ack`` as soon as that allows: it
doubles as the pong).  A message the receiver reports missing is sent
again at once if one sent after it arrived, or once its ack is overdue by the measured round
trip; a message neither acknowledged nor reported held, after the retransmission timeout
(:data:`RETRANSMIT_AFTER`, or the measured round trip if longer, doubled on each expiry
until an ack times a round trip again); everything from ``n + 1``, after each HELLO-ACK.
Two rules keep the numbering consistent when one side lost its state in a restart: a
receiver told ``f`` skips the seqs the sender no longer holds (the sender had our ack for
them, so we delivered them before we lost track: counted in ``gaps``), and a sender
acknowledged beyond anything it remembers sending renumbers its messages past that point.

**Persistence** is the caller's: it may pass ``initial_outbox`` / ``next_seq`` / ``delivered``
after a restart, record deliveries in ``on_delivered`` and trim its copy in ``on_acked``.
The daemon passes none of them: a restarted daemon starts its links afresh (the two rules
above) and sends its own messages again from the transcripts (``TableRunner.resume``).

**Liveness.**  Any valid frame from a peer counts as hearing from it; an idle link pings every
``heartbeat``; a peer not heard from for ``timeout`` is ``away`` — not counting the time our
own event loop was held, when its frames waited unread in our sockets
(:meth:`Mesh._not_listening`).  ZeroMQ reconnects a broken TCP connection by itself
(``RECONNECT_IVL`` doubling up to ``RECONNECT_IVL_MAX``); a link whose frames leave but get
no answer for ``timeout`` gets a fresh socket (see :meth:`Mesh._recycle`).  A link says
HELLO again when the far end answers ``reauth`` (it restarted and lost our session) or when
the peer's own HELLO shows a new ``boot``.

**HELLO freshness, without clocks.**  A HELLO answers a challenge: the DEALER says ``hi``,
the ROUTER draws a challenge for that routing id (the last :data:`CHALLENGES_PER_ROUTE` of
it kept, all dropped by the first HELLO; those of the latest :data:`MAX_CHALLENGES` routing
ids), and the HELLO must be signed for the ROUTER's key (``to``) and one of those
challenges, and arrive under that routing id.  A copy of a member's HELLO replayed to
another daemon is addressed to the wrong key; replayed to the same daemon, on another
connection or later, it answers a challenge that daemon no longer holds: refused, counted
(``bad_hello``) and logged at a limited rate.  The DEALER's own ``nonce`` does the same for
the HELLO-ACK.  So nothing here needs the members' clocks to agree — a laptop an hour off,
or in the wrong time zone, plays like any other.  The HELLO still tells the sender's clock,
signed: a peer whose clock is :data:`CLOCK_NOTED` or more from ours is said once in the log
per run of it (``the clock of … is 1 h 0 min ahead of this machine's``), since the times in
its logs and files will not match ours.  A daemon of a version before the challenge and one
of this version do not half-talk: each drops the other's HELLO (or ``hi``) as malformed.

**Limits.**  Frames over ``max_frame`` are counted and dropped; ZeroMQ's own ``MAXMSGSIZE`` is
twice that and *disconnects* a peer that exceeds it (ZeroMQ reconnects; nothing is counted).
Inbound frames go through a token bucket per link and per known peer; all unknown routing
ids share one.  Nothing a peer sends can raise out of a receive loop: bad frames are counted
(:class:`MeshStats`) and dropped.

**Encryption** (``curve=True``: the daemon's default, off with ``tarotd --no-curve``).  Every
connection is ZeroMQ CURVE
(CurveZMQ: an X25519 handshake, then each frame encrypted and authenticated), so a reader of
the LAN sees who talks to whom and how much, but no longer names, tables, bids, cards played,
routing ids or session tokens.  A daemon's CURVE key pair is its Ed25519 identity converted
to X25519 (libsodium's ``crypto_sign_ed25519_*_to_curve25519``): a peer's CURVE key follows
from the identity key we already know it by (discovery, the lobby, ``--peer KEY@HOST:PORT``,
its HELLO), so there is nothing new to distribute or trust.  A DEALER must know the far
end's key before it connects (its ``curve_serverkey``), and the handshake fails unless the
far end holds that identity's secret.  The ROUTER lets every client key through the
handshake — a ZAP handler allowing any key runs only so that ZeroMQ tags each frame with the
client's key (``User-Id``) — and accepts a HELLO only on a connection made under the CURVE
key derived from the identity that signed it: whoever holds the other end of an encrypted
connection is the member it says HELLO as.  With and without ``curve``, daemons cannot
connect at all (ZeroMQ refuses the mechanism mismatch): each link says why, once, in the log.
Without it, a reader of the LAN reads every frame — the public record of the game, the
HELLOs, and the routing ids and session tokens, with which whoever can also send on the LAN
may speak in a member's session: for debugging only.
"""

from __future__ import annotations

import asyncio
import enum
import errno
import itertools
import logging
import math
import os
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

import msgpack
import zmq
import zmq.asyncio
import zmq.auth
from nacl.bindings import (
    crypto_sign_ed25519_pk_to_curve25519,
    crypto_sign_ed25519_sk_to_curve25519,
)
from zmq.auth.asyncio import AsyncioAuthenticator
from zmq.utils import z85
from zmq.utils.monitor import parse_monitor_message

from protocol.identity import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    fingerprint,
    is_valid_public_key,
    verify,
)
from tarotd.gate import CannotListen, Gate, gate_possible
from tarotd.guard import (
    HANDSHAKE_DEADLINE_MS,
    PER_HOST,
    ConnectionBounds,
    incoming_bound,
    is_this_machine,
    peer_of,
    turn_away,
)
from tarotd.refusals import Cause, Refusals
from tarotd.ticks import ticks
from tarotd.zsocket import LoopSocket

log = logging.getLogger(__name__)

MiB: Final = 1024 * 1024
TOKEN_SIZE: Final = 16  #: nonces, sessions and boot ids: unguessable, and cheap on every frame
SIGNING_DOMAIN: Final = b"tarot/v2/mesh/"

TICK: Final = 0.02  #: seconds between housekeeping rounds; also the acknowledgement delay
RETRANSMIT_AFTER: Final = 0.5  #: an unacknowledged message is sent again after this long ...
FAST_RETRANSMIT_AFTER: Final = 0.2  #: ... or this long if the receiver reports it missing,
MAX_RTO: Final = 10.0  #: ... or longer when the measured round trip is (up to this)
REORDERING: Final = 0.05  #: a message missing while one sent this much later arrived is lost
MAX_BACKOFF: Final = 16  #: the retransmission timeout doubles on expiry, up to this factor
HELLO_RETRY_UNSENT: Final = 0.1  #: retry delay when a HELLO could not even leave (no TCP yet)
RECONNECT_IVL_MS: Final = 100  #: ZeroMQ's TCP reconnection starts here and doubles ...
RECONNECT_IVL_MAX_MS: Final = 5000  #: ... up to this
SEND_SHARE: Final = 0.8  #: data frames are paced at this share of the peer's inbound rate limit
YIELD_EVERY: Final = 32  #: frames a receive loop handles before letting other tasks run
MAX_MISS: Final = 256  #: seqs listed in one ``ack``
MAX_CHALLENGES: Final = 1024  #: routing ids whose challenges await their HELLO (the latest kept)
CHALLENGES_PER_ROUTE: Final = 4  #: a link asks again after a heartbeat: its HELLO may answer an earlier ``hi``
CLOCK_NOTED: Final = 60.0  #: seconds between a peer's clock and ours that the log mentions
MAX_NAME: Final = 64
MAX_CHANNEL: Final = 64
MAX_ENDPOINT: Final = 256
FRAME_OVERHEAD: Final = 256  #: room a data frame's fields take around its body
ROUTE_PREFIX: Final = b"r"  #: ZeroMQ reserves routing ids that begin with a zero byte
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "*", "[::]"})
EXPIRE_EVERY: Final = 1.0  #: seconds between two looks for peers and links to forget
RECONCILE_EVERY: Final = 5.0  #: seconds between two checks of the incoming connections' count
GUARDED_EVENTS: Final = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED
HANDSHAKE_FAILED_TIMES: Final = 3  #: failed handshakes in a row before a link says it cannot connect
HANDSHAKE_FAILURES: Final = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


class PeerState(enum.Enum):
    CONNECTING = "connecting"  #: not yet authenticated both ways
    UP = "up"  #: authenticated, heard within ``timeout``
    AWAY = "away"  #: was up, silent for ``timeout``; reconnection goes on


@dataclass(frozen=True)
class PeerStatus:
    key: bytes
    name: str
    endpoint: str | None
    state: PeerState
    last_heard: float | None  #: wall-clock time (``time.time()``), None if never heard


@dataclass(frozen=True)
class Limits:
    max_frame: int = 2 * MiB  #: largest frame accepted (and so the largest body, less overhead)
    rate: float = 2000.0  #: inbound frames per second per peer (we pace our sends under it) ...
    burst: float = 4000.0  #: ... with this burst
    window: int = 512  #: data frames in flight beyond the last acknowledged seq (bounds queues)
    outbox: int = 10_000  #: unacknowledged messages per peer before ``send`` refuses
    early_bytes: int = 32 * MiB  #: bytes of early (out-of-order) messages buffered per sender
    max_peers: int = 256  #: peer records no table needs (see ``keeps``); then a HELLO from one more key is refused
    hwm: int = 10_000  #: ZeroMQ send and receive high-water marks, per connection
    connections: int | None = None  #: incoming connections in all (None: from the descriptor limit, :mod:`tarotd.guard`)
    connections_per_host: int = PER_HOST  #: incoming connections from one host (127.0.0.1 excepted)
    gate: bool = True  #: accept through :mod:`tarotd.gate` where the system allows (False: ZeroMQ listens itself)
    links: int = 64  #: links no table needs (opened on behalf of discovery) held at once
    new_keys_rate: float = 2.0  #: unknown keys taken in per second, from every host together ...
    new_keys_burst: float = 32.0  #: ... with this burst
    keys_per_host: int = 8  #: peers no table needs that one host (127.0.0.1 excepted) may speak for
    forget_after: float = 60.0  #: a peer or link no table needs, silent (or never proven) this long, is forgotten


@dataclass(frozen=True)
class FaultPlan:
    """Faults applied to every frame this mesh sends, for tests and soaks.  ``seed`` makes a
    run reproducible, as far as the event loop's timing allows."""

    drop: float = 0.0  #: probability a frame is silently lost
    duplicate: float = 0.0  #: probability it is sent twice
    reorder: float = 0.0  #: probability it is held back and sent after the next one
    delay_ms: float = 0.0  #: every frame is delayed uniformly in [0, delay_ms]
    seed: int = 0


@dataclass
class MeshStats:
    """Counters of what was dropped and why; they only ever grow."""

    malformed: int = 0  #: not msgpack, wrong shape, unknown kind, wrong types
    oversized: int = 0  #: over ``max_frame`` (ZeroMQ disconnects beyond twice that, uncounted)
    rate_limited: int = 0
    unauthenticated: int = 0  #: no valid session for the routing id or link
    bad_hello: int = 0  #: bad signature, wrong key, not for us or not for our challenge (a replay)
    strangers: int = 0  #: validly signed, but not allowed (or ourselves, or too many peers)
    duplicates: int = 0  #: data already delivered or already buffered
    out_of_window: int = 0  #: data too far ahead to buffer; the sender will send it again
    gaps: int = 0  #: seqs skipped because the sender no longer held them (we lost state)
    retransmits: int = 0
    errors: int = 0  #: exceptions caught in the loops (a callback's, or a bug): logged
    not_handled: int = 0  #: deliveries ``on_message`` refused for a local fault (:class:`NotHandled`), to try again


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
OnSeq = Callable[[bytes, int], None]
OnStatus = Callable[[PeerStatus], None]
Outgoing = tuple[int, str, bytes]  #: (seq, channel, body)


# --------------------------------------------------------------------------- wire frames


def _uint(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**63


def _blob(size: int) -> Callable[[object], bool]:
    return lambda value: type(value) is bytes and len(value) == size


def _text(max_len: int) -> Callable[[object], bool]:
    return lambda value: type(value) is str and len(value) <= max_len


def _bytes(value: object) -> bool:
    return type(value) is bytes


def _seqs(value: object) -> bool:
    return type(value) is list and len(value) <= MAX_MISS and all(_uint(q) for q in value)


def _endpoint(value: object) -> bool:
    if type(value) is not str or len(value) > MAX_ENDPOINT or not value.startswith("tcp://"):
        return False
    host, _, port = value[len("tcp://") :].rpartition(":")
    return bool(host) and port.isdigit()


_KEY, _TOKEN, _SIG = _blob(PUBLIC_KEY_SIZE), _blob(TOKEN_SIZE), _blob(SIGNATURE_SIZE)

#: Every frame kind with its fields, in signing order.  A frame must have exactly these.
SHAPES: Final[Mapping[str, Mapping[str, Callable[[object], bool]]]] = {
    "hi": {},
    "challenge": {"key": _KEY, "c": _TOKEN},
    "hello": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "endpoint": _endpoint,
        "challenge": _TOKEN,
        "nonce": _TOKEN,
        "time": _uint,
        "boot": _TOKEN,
        "sig": _SIG,
    },
    "hello-ack": {
        "key": _KEY,
        "to": _KEY,
        "name": _text(MAX_NAME),
        "nonce": _TOKEN,
        "session": _TOKEN,
        "n": _uint,
        "sig": _SIG,
    },
    "data": {"s": _TOKEN, "f": _uint, "q": _uint, "c": _text(MAX_CHANNEL), "b": _bytes},
    "ping": {"s": _TOKEN},
    "ack": {"s": _TOKEN, "n": _uint, "top": _uint, "miss": _seqs},
    "reauth": {"s": _TOKEN},
}
ROUTER_KINDS: Final = frozenset({"hi", "hello", "data", "ping"})  #: what a ROUTER may receive
LINK_KINDS: Final = frozenset({"challenge", "hello-ack", "ack", "reauth"})  #: what a DEALER may receive


def encode(kind: str, fields: Mapping[str, object]) -> bytes:
    packed: bytes = msgpack.packb({"t": kind, **fields}, use_bin_type=True)
    return packed


def signing_bytes(kind: str, fields: Mapping[str, Any]) -> bytes:
    """What a ``kind`` frame's signature covers: its fields re-encoded in a fixed order, so
    the signature does not depend on how the sender's msgpack laid out the map."""
    values = [fields[name] for name in SHAPES[kind] if name != "sig"]
    packed: bytes = msgpack.packb(values, use_bin_type=True)
    return SIGNING_DOMAIN + kind.encode() + b"\x00" + packed


def encode_signed(identity: Identity, kind: str, fields: Mapping[str, object]) -> bytes:
    return encode(kind, {**fields, "sig": identity.sign(signing_bytes(kind, fields))})


def decode(raw: bytes, kinds: frozenset[str]) -> dict[str, Any] | None:
    """The frame as a map of exactly the fields of its kind, or None for anything else:
    the one gate untrusted bytes pass through, and it never raises."""
    try:
        msg = msgpack.unpackb(raw, raw=False)
    except Exception:  # noqa: BLE001 -- msgpack raises many types; each means "not a frame"
        return None
    if type(msg) is not dict:
        return None
    kind = msg.get("t")
    if type(kind) is not str or kind not in kinds:
        return None
    shape = SHAPES[kind]
    if msg.keys() != {"t", *shape} or not all(check(msg[name]) for name, check in shape.items()):
        return None
    return msg


# --------------------------------------------------------------------------- CURVE keys


@lru_cache(maxsize=1024)
def curve_public_key(key: bytes) -> bytes:
    """The CURVE public key, z85-encoded as ZeroMQ takes it and reports it (``User-Id``), of
    the daemon whose Ed25519 identity key is ``key``.  Cached: the ROUTER derives it for every
    HELLO.  ValueError for bytes that are no identity key."""
    if not is_valid_public_key(key):
        raise ValueError("not an Ed25519 public key: no CURVE key derives from it")
    return z85.encode(crypto_sign_ed25519_pk_to_curve25519(key))


def curve_secret_key(identity: Identity) -> bytes:
    """The CURVE secret key, z85-encoded, that pairs with :func:`curve_public_key` of
    ``identity``'s public key.  It goes to ZeroMQ and nowhere else."""
    secret = crypto_sign_ed25519_sk_to_curve25519(identity.private_bytes() + identity.public_key)
    return z85.encode(secret)


# --------------------------------------------------------------------------- small parts


class TokenBucket:
    """``rate`` events per second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class _Wire:
    """Puts frames on sockets, through the fault plan when there is one."""

    def __init__(self, faults: FaultPlan | None) -> None:
        self._faults = faults
        self._rng = random.Random(faults.seed if faults else 0)
        self._held: dict[tuple[int, bytes], tuple[LoopSocket, list[bytes]]] = {}
        self._timers: set[asyncio.TimerHandle] = set()

    def send(self, sock: LoopSocket, parts: list[bytes]) -> bool:
        """True if the frame left, or the fault plan took charge of it (so a dropped frame
        looks sent: finding out is the retransmission's job, as on a real network).  A frame
        the fault plan delays finds its socket closed if its link was recycled meanwhile."""
        faults = self._faults
        if faults is None:
            return sock.send(parts)
        rng = self._rng
        if rng.random() < faults.drop:
            return True
        copies = 2 if rng.random() < faults.duplicate else 1
        destination = (id(sock), parts[0] if len(parts) > 1 else b"")
        if destination not in self._held and rng.random() < faults.reorder:
            self._held[destination] = (sock, parts)
            return True
        for _ in range(copies):
            self._send_later(sock, parts)
        held = self._held.pop(destination, None)
        if held is not None:
            self._send_later(*held)
        return True

    def flush(self) -> None:
        """Release held-back frames that no later frame overtook."""
        held, self._held = self._held, {}
        for sock, parts in held.values():
            self._send_later(sock, parts)

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        self._held.clear()

    def _send_later(self, sock: LoopSocket, parts: list[bytes]) -> None:
        assert self._faults is not None
        delay = self._rng.uniform(0, self._faults.delay_ms) / 1000
        if delay <= 0:
            sock.send(parts)
            return

        def fire() -> None:
            self._timers.discard(timer)
            sock.send(parts)

        timer = asyncio.get_running_loop().call_later(delay, fire)
        self._timers.add(timer)


@dataclass(eq=False)
class _Pending:
    channel: str
    body: bytes
    sent_at: float | None = None  #: last transmission; None: not sent on the current session
    sends: int = 0  #: transmissions on the current session
    held: bool = False  #: the receiver reported holding it (early): no need to send it again

    def due(self, after: float) -> float:
        assert self.sent_at is not None
        return self.sent_at + after


class _RoundTrip:
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


class _Outbox:
    """What we sent one peer and it has not acknowledged, in seq order.

    First transmissions go strictly in seq order, so the entries never sent on the current
    session are those from ``unsent`` on; those below it are in flight (or held early by the
    receiver), and none of them needs a retransmission before ``next_resend``.  That keeps
    the work per message constant however long the outbox gets.
    """

    def __init__(self, entries: Iterable[Outgoing] = (), next_seq: int = 1) -> None:
        self.entries: OrderedDict[int, _Pending] = OrderedDict(
            (seq, _Pending(channel, body)) for seq, channel, body in sorted(entries)
        )
        self.next_seq = max([next_seq, *(seq + 1 for seq in self.entries)])
        self.acked = self.head - 1
        self.unsent = self.head
        self.next_resend = math.inf
        self.round_trip = _RoundTrip()
        self.latest_arrived = 0.0  #: when the latest message known to have arrived was sent

    @property
    def head(self) -> int:
        """The lowest seq still held: the receiver will never see anything below it again."""
        return next(iter(self.entries), self.next_seq)

    def add(self, channel: str, body: bytes) -> int:
        seq = self.next_seq
        self.entries[seq] = _Pending(channel, body)
        self.next_seq += 1
        return seq

    def receipt(self, n: int, top: int, miss: set[int], now: float) -> None:
        """Take in what an ack says arrived: every seq up to ``top`` but those in ``miss``.
        Messages it reports for the first time that were sent only once (for one sent twice,
        which copy arrived?) time a round trip, and move ``latest_arrived``: a message still
        missing though sent well before one that arrived was lost, not delayed."""
        newest: _Pending | None = None
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

    def lost(self, entry: _Pending, now: float) -> bool:
        """Whether a message the receiver reports missing was lost rather than delayed: a
        message sent after it arrived, or its ack is overdue (when nothing newer is in flight
        to tell, as when a re-sent copy is lost too)."""
        assert entry.sent_at is not None
        overdue = now >= entry.due(self.round_trip.worst(FAST_RETRANSMIT_AFTER))
        return overdue or entry.sent_at + REORDERING < self.latest_arrived

    def acknowledge(self, n: int) -> bool:
        """Everything up to ``n`` is delivered; True if that is news.  An ``n`` beyond all we
        ever numbered means we restarted without our outbox while the peer kept its state:
        our unacknowledged messages get fresh numbers after ``n`` or it would drop them as
        duplicates."""
        if n >= self.next_seq:
            pending = [_Pending(e.channel, e.body) for e in self.entries.values()]
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
class _Inbound:
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

    def holdings(self) -> tuple[int, list[int]]:
        """``(top, miss)`` for an ack: we hold every seq in (delivered, top] except ``miss``.
        When too many are missing to list, ``top`` stops at the last one listed."""
        top = max(self.early, default=self.delivered)
        miss = [q for q in range(self.delivered + 1, top) if q not in self.early]
        if len(miss) > MAX_MISS:
            miss = miss[:MAX_MISS]
            top = miss[-1]
        return top, miss


@dataclass(eq=False)
class _Link:
    """Our DEALER to one endpoint; ``peer`` once the far end proved its key."""

    endpoint: str
    expected_key: bytes | None
    sock: LoopSocket
    bucket: TokenBucket  #: inbound frames
    pace: TokenBucket  #: outbound data frames: stay under the far end's inbound limit
    monitor: zmq.asyncio.Socket  #: ``sock``'s failed handshakes (see :meth:`Mesh._watch`)
    kept: bool = False  #: connected to for a table or by the user (``connect(keep=True)``), never forgotten
    opened: float = field(default_factory=time.monotonic)
    down_since: float = field(default_factory=time.monotonic)  #: with no session since (across recycling)
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

    def close(self) -> None:
        self.sock.close()
        self.monitor.close(linger=0)


@dataclass(eq=False)
class _Peer:
    key: bytes
    outbox: _Outbox
    inbound: _Inbound
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
    monitor = sock.get_monitor_socket(events, addr=f"inproc://tarot-monitor-{os.getpid()}-{next(_MONITOR_NUMBERS)}")
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


def _tcp_endpoint(host: str, port: int | str) -> str:
    """``tcp://HOST:PORT``, an IPv6 host in brackets."""
    return f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}"


def _reachable(claimed: str, seen_from: str) -> str:
    """The endpoint to connect back to: a peer bound on a wildcard address advertises it as
    is, and the address its connection came from is the one that works from here."""
    host, _, port = claimed[len("tcp://") :].rpartition(":")
    if host not in WILDCARD_HOSTS or not seen_from:
        return claimed
    return _tcp_endpoint(seen_from, port)


def _note_clock(peer: str, offset: float) -> None:
    """Say how far ``peer``'s clock is from ours (``offset`` seconds ahead), if that is
    :data:`CLOCK_NOTED` or more.  Nothing in the mesh or the game depends on it; but the
    times in that peer's log, proof files and score sheet will not match ours, and a player
    comparing them — or wondering why another machine's times look wrong — should know whose
    clock is off, and by how much."""
    if abs(offset) < CLOCK_NOTED:
        return
    minutes, seconds = round(abs(offset) / 60), round(abs(offset))  # a HELLO's time is in whole seconds
    amount = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{seconds // 60} min {seconds % 60} s"
    log.warning("mesh: the clock of %s is %s %s this machine's (one of the two is wrong; nothing here depends on "
                "it, but the times in its logs and files will not match ours)", peer, amount,
                "ahead of" if offset > 0 else "behind")


# --------------------------------------------------------------------------- the mesh


class Mesh:
    """The daemon's transport to its peers: ``await start()``, ``connect`` to peers (those
    that connect to us are connected back to), ``send``, and ``await close()``.

    Deliveries go to ``on_message(peer_key, channel, body)``, awaited one at a time in order.
    A callback rather than a queue, so that a message is handed over, then recorded
    (``on_delivered``), then acknowledged, in that order; and an awaited callback is
    back-pressure: nothing else is read meanwhile, so it should return promptly (a peer that
    hears nothing from us for its ``timeout`` reports us away).  :class:`NotHandled` from it
    keeps the message to hand over again; any other exception is logged and the message
    still counts as delivered.  The other callbacks are plain
    functions for bookkeeping: ``on_delivered(peer_key, seq)`` right after each delivery and
    before it is acknowledged, ``before_ack()`` before any acknowledgement leaves (the
    daemon puts what it wrote on the disk there: once for a burst of messages rather than
    after each; if it returns an awaitable, the acknowledgements wait for that while the
    loop goes on — the daemon's ``fdatasync`` runs on a thread), ``on_acked(peer_key, n)``
    when a peer acknowledges every seq up to ``n`` (the daemon may forget those), and
    ``on_status(PeerStatus)`` when a peer's state changes (``away`` carries the time it was
    last heard).
    """

    def __init__(
        self,
        identity: Identity,
        listen: str,
        *,
        on_message: OnMessage,
        name: str = "",
        advertise: str | None = None,
        on_delivered: OnSeq | None = None,
        before_ack: Callable[[], Awaitable[None] | None] | None = None,
        on_acked: OnSeq | None = None,
        on_status: OnStatus | None = None,
        heartbeat: float = 1.0,
        timeout: float = 5.0,
        limits: Limits = Limits(),
        faults: FaultPlan | None = None,
        initial_outbox: Mapping[bytes, Iterable[Outgoing]] | None = None,
        next_seq: Mapping[bytes, int] | None = None,
        delivered: Mapping[bytes, int] | None = None,
        context: zmq.asyncio.Context | None = None,
        curve: bool = False,
        keeps: Callable[[bytes], bool] | None = None,
    ) -> None:
        if len(name) > MAX_NAME:
            raise ValueError(f"a name has at most {MAX_NAME} characters")
        if not _endpoint(listen) or (advertise is not None and not _endpoint(advertise)):
            raise ValueError("the mesh listens on, and advertises, tcp://HOST:PORT endpoints")
        if not 0 < heartbeat < timeout:
            raise ValueError("the heartbeat must be shorter than the timeout")
        if curve and context is not None:
            raise ValueError("a mesh with CURVE makes its own context: it runs the context's ZAP handler")
        self.key = identity.public_key
        self.stats = MeshStats()
        self._identity = identity
        self._listen = listen
        self._name = name
        self._advertise = advertise
        self._on_message = on_message
        self._on_delivered = on_delivered
        self._before_ack = before_ack
        self._acks_held = False  #: before_ack failed last time (logged once)
        self._durable_wait: asyncio.Task[None] | None = None  #: acks waiting for before_ack's awaitable
        self._on_acked = on_acked
        self._on_status = on_status
        self._heartbeat = heartbeat
        self._timeout = timeout
        self._limits = limits
        self._wire = _Wire(faults)
        self._boot = os.urandom(TOKEN_SIZE)
        self._own_context = context is None
        self._context = context or zmq.asyncio.Context()
        self._router: LoopSocket | None = None
        self._gate: Gate | None = None
        self._member_hosts: frozenset[str] = frozenset()  #: where the peers a table needs proved their keys from
        self._endpoint: str | None = None
        self._allowed: frozenset[bytes] | None = None
        self._peers: dict[bytes, _Peer] = {}
        self._routes: dict[bytes, _Peer] = {}  #: routing id → the peer that proved itself under it
        self._challenges: OrderedDict[bytes, list[bytes]] = OrderedDict()  #: routing id → its latest challenges
        self._links: dict[str, _Link] = {}
        self._stranger_bucket = TokenBucket(limits.rate, limits.burst)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._curve = (curve_public_key(self.key), curve_secret_key(identity)) if curve else None
        self._authenticator: AsyncioAuthenticator | None = None
        self.refusals = Refusals(log)
        self._keeps = keeps or (lambda key: False)
        self._new_keys = TokenBucket(limits.new_keys_rate, limits.new_keys_burst)
        self._bounds = ConnectionBounds(limits.connections or incoming_bound(), limits.connections_per_host)
        self._next_expiry = self._next_reconcile = 0.0
        self._restore(initial_outbox or {}, next_seq or {}, delivered or {})

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
        router.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a DEALER reconnecting under its id is not refused
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
            router.bind("tcp://127.0.0.1:0" if gated else self._listen)
            self._endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
            if gated:
                self._endpoint = self._open_gate(int(self._endpoint.rpartition(":")[2]))
        except zmq.ZMQError as error:
            router.close(linger=0)
            raise CannotListen(error.errno or errno.EINVAL, error.strerror) from None
        except CannotListen:
            router.close(linger=0)
            raise
        self._router = LoopSocket(router)
        self._spawn(self._router_loop(self._router))
        if not gated:
            self._spawn(self._guard_loop(_monitor(router, GUARDED_EVENTS)))
        self._spawn(self._tick_loop())

    def _open_gate(self, router_port: int) -> str:
        """Listen on ``listen`` through the gate, for the ROUTER on ``router_port``; return the endpoint."""
        host, _, port = self._listen[len("tcp://") :].rpartition(":")
        self._gate = Gate(host, int(port), router_port, self._bounds, self.refusals,
                          members=lambda host: host in self._member_hosts)
        return _tcp_endpoint(*self._gate.address)

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
        if self._own_context:
            self._context.destroy(linger=0)

    def connect(self, endpoint: str, expected_key: bytes | None = None, *, keep: bool = False) -> None:
        """Keep a link to ``endpoint`` (ZeroMQ retries the TCP connection forever).  With
        ``expected_key`` the far end must prove that key, otherwise whatever allowed key it
        proves becomes the peer (with CURVE the key is needed: it is what we encrypt to).  Peers
        that connect to us are connected back to on their own.

        ``keep``: the link is the user's or a table's (``--peer``, a member) and is never
        forgotten.  Other links — discovery's, and those back to strangers that said HELLO —
        count against ``Limits.links`` (one more is
        refused, counted and logged), and with their peer are forgotten once silent, or
        never proven, for ``Limits.forget_after``, unless ``keeps`` says a table needs the key."""
        if self._router is None or self._closed:
            raise RuntimeError("the mesh is not running")
        if not _endpoint(endpoint):
            raise ValueError(f"not a tcp:// endpoint: {endpoint!r}")
        if self._curve is not None and expected_key is None:
            raise ValueError(f"CURVE encrypts to the peer's key: connecting to {endpoint} needs it")
        link = self._links.get(endpoint)
        if link is not None:
            link.kept |= keep
            return
        kept = keep or (expected_key is not None and self._keeps(expected_key))
        if not kept and not self._room_for_link(endpoint):
            return
        if kept and expected_key is not None:
            self._peer(expected_key).kept = True
        opened = self._try_open_link(endpoint, expected_key)
        if opened is not None:
            opened.kept = kept

    def allow(self, keys: Iterable[bytes] | None) -> None:
        """Only these keys may talk to us (None: any key that proves itself).  Peers no longer
        allowed lose their sessions and links at once."""
        self._allowed = None if keys is None else frozenset(keys)
        for peer in self._peers.values():
            if not self._allowed_key(peer.key):
                peer.inbound.session = None
                if peer.link is not None:
                    self._close_link(peer.link)

    def send(self, peer_key: bytes, channel: str, body: bytes) -> int:
        """Queue ``body`` for ``peer_key`` and return its seq.  It goes out at once if the peer
        is up, and otherwise as soon as it is; it is kept until acknowledged."""
        if len(peer_key) != PUBLIC_KEY_SIZE or peer_key == self.key:
            raise ValueError("a peer key is 32 bytes, and not ours")
        if not _text(MAX_CHANNEL)(channel):
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
            len(peer.outbox.entries) for peer in self._peers.values() if peer.reported is PeerState.UP
        )

    def unreachable(self) -> dict[str, float]:
        """The kept links (``connect(keep=True)``: the user's ``--peer``, a table's members)
        with no session now, and for how many seconds (since last heard, or opened)."""
        now = time.monotonic()
        return {link.endpoint: now - link.down_since for link in self._links.values() if link.kept and link.session is None}

    def connections(self) -> dict[str, int]:
        """Incoming connections held now and the most allowed; links open (ours)."""
        return {"incoming": len(self._bounds), "incoming_bound": self._bounds.total, "links": len(self._links)}

    def peers(self) -> list[PeerStatus]:
        """Every peer we know of: connected to, heard from, sent to, or restored."""
        return [self._status(peer) for peer in self._peers.values()]

    # ----------------------------------------------------------------- records

    def _restore(
        self,
        outbox: Mapping[bytes, Iterable[Outgoing]],
        next_seq: Mapping[bytes, int],
        delivered: Mapping[bytes, int],
    ) -> None:
        for key in {*outbox, *next_seq, *delivered}:
            peer = self._peer(key)
            peer.outbox = _Outbox(outbox.get(key, ()), next_seq.get(key, 1))
            peer.inbound.delivered = peer.inbound.durable = delivered.get(key, 0)

    def _peer(self, key: bytes) -> _Peer:
        peer = self._peers.get(key)
        if peer is None:
            bucket = TokenBucket(self._limits.rate, self._limits.burst)
            peer = self._peers[key] = _Peer(key, _Outbox(), _Inbound(), bucket)
        return peer

    def _allowed_key(self, key: bytes) -> bool:
        return key != self.key and (self._allowed is None or key in self._allowed)

    def _kept(self, peer: _Peer) -> bool:
        return peer.kept or self._keeps(peer.key)

    def _admits(self, key: bytes, host: str, kept: bool, now: float) -> bool:
        """Whether a key that proved itself may talk to us.  A known key may; an unknown one
        only within the bounds on keys no table needs (``Limits``): so many from one host
        (this machine's own address excepted: its daemons), so many per second from every host
        together, so many in all — a peer of those silent longest, and not up, makes room.
        The keys a table needs, and those on a kept link, are never refused for room."""
        if not self._allowed_key(key):
            self.stats.strangers += 1
            return False
        if key in self._peers or kept or self._keeps(key):
            return True
        limits, who = self._limits, f"{fingerprint(key)} from {host or 'an unknown address'}"
        loose = [peer for peer in self._peers.values() if not self._kept(peer)]
        if host and not is_this_machine(host) and sum(peer.host == host for peer in loose) >= limits.keys_per_host:
            return self._refuse_key(Cause.KEYS_FROM_HOST, now, f"{who}: that host speaks for {limits.keys_per_host} keys already")
        idle = [peer for peer in loose if peer.reported is not PeerState.UP]
        if len(loose) >= limits.max_peers and not idle:
            return self._refuse_key(Cause.PEER_TABLE_FULL, now, f"{who}: {limits.max_peers} peers no table needs are up")
        if not self._new_keys.take(now):
            return self._refuse_key(Cause.NEW_KEYS, now, f"{who}: more new keys than {limits.new_keys_rate:g} a second")
        if len(loose) >= limits.max_peers:
            self._forget(min(idle, key=lambda peer: peer.last_heard or peer.created))
        return True

    def _refuse_key(self, cause: Cause, now: float, detail: str) -> bool:
        self.stats.strangers += 1
        self.refusals.refuse(cause, now, f"a HELLO signed by {detail}")
        return False

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
        for peer in list(self._peers.values()):
            if not self._kept(peer) and (peer.last_heard or peer.created) < horizon:
                self._forget(peer)
        for link in list(self._links.values()):
            if link.peer is None and not link.kept and link.opened < horizon and not (
                link.expected_key is not None and self._keeps(link.expected_key)
            ):
                self._close_link(link)

    def _status(self, peer: _Peer) -> PeerStatus:
        return PeerStatus(peer.key, peer.name, peer.endpoint, peer.reported, peer.last_heard_wall)

    def _heard(self, peer: _Peer, now: float) -> None:
        peer.last_heard = now
        peer.last_heard_wall = time.time()
        self._update_state(peer, now)

    def _update_state(self, peer: _Peer, now: float) -> None:
        if not peer.ever_up:
            state = PeerState.CONNECTING
        elif peer.last_heard is not None and now - peer.last_heard <= self._timeout:
            state = PeerState.UP
        else:
            state = PeerState.AWAY
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
        # pyzmq's stubs tie socket_class to the context's own socket class
        sock: zmq.Socket[Any] = self._context.socket(kind, socket_class=zmq.Socket)  # type: ignore[arg-type]
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
            self.refusals.refuse(Cause.NO_DESCRIPTORS, time.monotonic(), f"no link opened to {endpoint}: this daemon "
                                 "has no file descriptor left (a flood of connections, or a limit too low: ulimit -n)")
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
            why = ("runs with --no-curve, unencrypted, and this one encrypts" if self._curve is not None else
                   "encrypts (CURVE, the default) and this one runs with --no-curve")
            why += ": every member must encrypt, or every one run with --no-curve"
        elif self._curve is not None and link.expected_key is not None:
            why = (f"fails the CURVE handshake: is it {fingerprint(link.expected_key)} (check the key "
                   "given for it), and does it encrypt too (no --no-curve)?")
        else:
            why = ("fails the handshake: does it encrypt (CURVE, the default: then every member must, and this one "
                   "runs with --no-curve), or is it no tarotd?")
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
            cause = None if far is None else self._bounds.admit(fd, far)
            if far is not None and cause is not None:
                turn_away(fd)
                self.refusals.refuse(cause, time.monotonic(), f"a connection from {far.host}: "
                                     f"{len(self._bounds)} held, at most {self._bounds.per_host} from one host "
                                     f"and {self._bounds.total} in all")

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
        msg = decode(parts[0], kinds)
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
        freshness").  A new ``hi`` adds a challenge, the latest :data:`CHALLENGES_PER_ROUTE` kept:
        on a slow machine a link asks again before the first answer came, and its HELLO for
        the first must not be refused as stale.  A flood of them from strangers only pushes the
        oldest routing ids out, whose DEALER asks again after its heartbeat."""
        challenge = os.urandom(TOKEN_SIZE)
        self._challenges[rid] = [*self._challenges.pop(rid, [])[1 - CHALLENGES_PER_ROUTE :], challenge]
        while len(self._challenges) > MAX_CHALLENGES:
            self._challenges.popitem(last=False)
        self._wire.send(self._router_sock(), [rid, encode("challenge", {"key": self.key, "c": challenge})])

    def _on_hello(self, rid: bytes, msg: dict[str, Any], frame: zmq.Frame, now: float) -> None:
        key: bytes = msg["key"]
        challenges = self._challenges.pop(rid, [])  # used once, whatever comes of it
        if not verify(key, msg["sig"], signing_bytes("hello", msg)):
            self.stats.bad_hello += 1
            return
        seen_from = self._far_host(_property(frame, "Peer-Address"))
        if msg["to"] != self.key or msg["challenge"] not in challenges:
            self.stats.bad_hello += 1
            if msg["to"] != self.key:
                cause, why = Cause.HELLO_MISADDRESSED, "made for another daemon: a copy of it replayed to us"
            else:
                cause, why = Cause.HELLO_STALE, "for a challenge this connection does not hold: a copy replayed, or an answer too late"
            self._log_refusal(cause, key, seen_from, now, why)
            return
        if self._curve is not None and _property(frame, "User-Id") != curve_public_key(key).decode():
            self.stats.bad_hello += 1
            self._log_refusal(Cause.HELLO_IMPERSONATION, key, seen_from, now, "its connection's CURVE key is not the "
                              "one derived from that identity (someone without the member's secret key speaking as it)")
            return
        if not self._admits(key, seen_from, False, now):
            return
        peer = self._peer(key)
        peer.host = seen_from
        if peer.route != rid:  # a new connection of the peer's: answer there from now on
            self._routes.pop(peer.route or b"", None)
            peer.route, self._routes[rid] = rid, peer
        restarted = peer.boot is not None and peer.boot != msg["boot"]
        if peer.boot != msg["boot"]:
            _note_clock(msg["name"] or fingerprint(key), msg["time"] - time.time())
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
        self._follow(peer, _reachable(msg["endpoint"], seen_from), restarted, now)

    def _far_host(self, peer_address: str) -> str:
        """The host a connection to the ROUTER comes from, through the gate or not."""
        return peer_address if self._gate is None else self._gate.host_of(peer_address)

    def _log_refusal(self, cause: Cause, key: bytes, seen_from: str, now: float, why: str) -> None:
        """Count a refused HELLO and say why (:class:`~tarotd.refusals.Refusals`: a hostile peer
        repeating it must not fill the log, nor hide another cause)."""
        self.refusals.refuse(cause, now, f"a HELLO signed by {fingerprint(key)} from "
                             f"{seen_from or 'an unknown address'}: {why}")

    def _follow(self, peer: _Peer, endpoint: str, restarted: bool, now: float) -> None:
        """Make sure we have a link back to a peer that said HELLO.  A restarted peer lost our
        session, so our link must say HELLO again; if it came back elsewhere, we follow it."""
        link = peer.link
        if link is not None:
            if not restarted:
                return
            if link.endpoint == endpoint:
                link.session, link.down_since = None, now
                link.hello_due = now
                return
            self._close_link(link)
        if endpoint not in self._links and (self._kept(peer) or self._room_for_link(endpoint)):
            peer.endpoint = endpoint
            self._try_open_link(endpoint, peer.key)

    def _room_for_link(self, endpoint: str) -> bool:
        """Whether one more link no table needs may open (to ``endpoint``): four descriptors
        each, and a flood of beacons or HELLOs from fresh keys asks for one per key."""
        if sum(not link.kept for link in self._links.values()) < self._limits.links:
            return True
        self.refusals.refuse(Cause.LINKS_FULL, time.monotonic(), f"no link opened to {endpoint}: "
                             f"{self._limits.links} links no table needs are open already")
        return False

    async def _on_data(self, peer: _Peer, msg: dict[str, Any]) -> None:
        inbound = peer.inbound
        seq: int = msg["q"]
        self._skip_to(peer, msg["f"] - 1)
        inbound.ack_due = True
        if seq <= inbound.delivered or seq in inbound.early:
            self.stats.duplicates += 1
            return
        body: bytes = msg["b"]
        too_far = seq > inbound.delivered + self._limits.window
        too_big = seq > inbound.delivered + 1 and (
            inbound.early_bytes + len(body) > self._limits.early_bytes
        )
        if too_far or too_big:
            self.stats.out_of_window += 1
            return
        inbound.early[seq] = (msg["c"], body)
        inbound.early_bytes += len(body)
        await self._deliver(peer)

    def _skip_to(self, peer: _Peer, held_below: int) -> None:
        """The sender no longer holds anything up to ``held_below``: it had our ack for them,
        so if we have not delivered them we lost our state, and waiting would wait forever."""
        inbound = peer.inbound
        if held_below <= inbound.delivered:
            return
        if self._before_ack is None:  # with it, what we acknowledged was on our disk: a restart lost none of it
            log.warning(
                "mesh: %d messages from %s are lost (acknowledged before we lost our state)",
                held_below - inbound.delivered,
                peer.name or peer.key.hex()[:16],
            )
        self.stats.gaps += held_below - inbound.delivered
        for seq in [seq for seq in inbound.early if seq <= held_below]:
            inbound.early_bytes -= len(inbound.early.pop(seq)[1])
        inbound.delivered = held_below

    async def _deliver(self, peer: _Peer) -> None:
        inbound = peer.inbound
        while inbound.delivered + 1 in inbound.early:
            seq = inbound.delivered + 1
            channel, body = inbound.early.pop(seq)
            inbound.early_bytes -= len(body)
            try:
                await self._on_message(peer.key, channel, body)
            except NotHandled as fault:
                self.stats.not_handled += 1
                log.debug("mesh: a message from %s is kept, to hand over again: %s", peer.name or peer.key.hex()[:16], fault)
                inbound.early[seq] = (channel, body)  # held, unacknowledged: the sender need not send it again
                inbound.early_bytes += len(body)
                return
            except Exception:
                self.stats.errors += 1
                log.exception("mesh: on_message failed; the message counts as delivered")
            inbound.delivered = seq
            if self._on_delivered is not None:
                self._call(self._on_delivered, peer.key, seq)

    def _acknowledge(self, peers: list[_Peer]) -> None:
        """Acknowledge what ``peers`` delivered once it is on our disk: ``before_ack()`` puts
        it there, at once or by the awaitable it returns.  Meanwhile the loop goes on
        delivering; what arrives then is acknowledged by a later round, and while one round
        waits for the disk no other starts (they would only wait for the same disk)."""
        peers = [peer for peer in peers if peer.inbound.session is not None and peer.route is not None]
        if not peers or self._durable_wait is not None:
            return  # nobody to tell (a peer struck off), or the round waiting says it soon
        try:
            pending = self._before_ack() if self._before_ack is not None else None
        except Exception:  # e.g. the disk is full: unacknowledged, the peer sends again
            self._hold_acks(peers)
            return
        # Taken with nothing delivered since before_ack(): they tell only what it covered.
        acks = [(peer, peer.inbound.session, peer.inbound.delivered, *peer.inbound.holdings()) for peer in peers]
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
        host = link.endpoint[len("tcp://"):].rpartition(":")[0].strip("[]")
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
        for seq in sorted(miss):
            entry = outbox.entries.get(seq)
            if entry is None or entry.sent_at is None or not outbox.lost(entry, now):
                continue
            if link.pace.take(now):
                self.stats.retransmits += self._transmit(link, seq, now)

    def _acknowledged(self, peer: _Peer, n: int) -> bool:
        if not peer.outbox.acknowledge(n):
            return False
        if self._on_acked is not None:
            self._call(self._on_acked, peer.key, peer.outbox.acked)
        return True

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
            "endpoint": self._advertise or self.endpoint,
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
        entry.sent_at = now
        entry.sends += 1
        return True

    def _send_fresh(self, peer: _Peer, link: _Link, now: float) -> None:
        """First transmissions, in seq order, as far as the window allows."""
        outbox = peer.outbox
        limit = min(outbox.next_seq, outbox.acked + self._limits.window + 1)
        first = outbox.unsent
        while outbox.unsent < limit and link.pace.take(now):
            if not self._transmit(link, outbox.unsent, now):
                break
            outbox.unsent += 1
        if outbox.unsent > first:
            timeout = outbox.round_trip.timeout(RETRANSMIT_AFTER)
            outbox.next_resend = min(outbox.next_resend, now + timeout)

    def _resend_overdue(self, peer: _Peer, link: _Link, now: float) -> None:
        """Send again, in seq order, what waited too long for its ack (and is not reported
        held), and note when the next one falls due."""
        outbox = peer.outbox
        timeout = outbox.round_trip.timeout(RETRANSMIT_AFTER)
        next_resend = math.inf
        expired = False
        for seq, entry in outbox.entries.items():
            if seq >= outbox.unsent:
                break
            if entry.held:
                continue
            if now >= entry.due(timeout) and link.pace.take(now):
                expired = True
                self.stats.retransmits += self._transmit(link, seq, now)
            next_resend = min(next_resend, entry.due(timeout))
        outbox.next_resend = next_resend
        if expired:
            outbox.round_trip.expired(now, timeout)

    # ----------------------------------------------------------------- housekeeping

    def _tick(self, now: float) -> None:
        self._wire.flush()
        self._rouse_sockets()
        for link in list(self._links.values()):
            self._service_link(link, now)
        # With gaps (early arrivals), keep the sender informed.
        self._acknowledge([peer for peer in self._peers.values() if peer.inbound.ack_due or peer.inbound.early])
        for peer in self._peers.values():
            self._update_state(peer, now)
        if now >= self._next_expiry:
            self._next_expiry = now + EXPIRE_EVERY
            self._expire(now)
            self._member_hosts = frozenset(peer.host for peer in self._peers.values() if peer.host and self._kept(peer))
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
        fresh.kept, fresh.down_since = link.kept, link.down_since if link.session is None else link.heard_at
