"""The peer mesh: authenticated, ordered, exactly-once delivery between daemons, over ZeroMQ.

The game needs one thing from the network: every message a daemon sends to a peer arrives,
once, in the order it was sent, and only from the peer it claims to come from — across
dropped links, restarts and a hostile LAN.  This package gives exactly that and knows nothing
of tarot.

**Sockets.**  Each daemon binds one ROUTER and opens one DEALER per peer (``connect``), plain
ZeroMQ sockets the event loop drives directly (:mod:`tarotd.zsocket`: pyzmq's asyncio layer
cost a third of the mesh's CPU).  The ROUTER listens on loopback, behind the daemon's own door
on ``listen`` (:mod:`tarotd.gate`), which bounds the connections before ZeroMQ sees them, from
127.0.0.1 as from any host, and alone can reach it; a connection whose HELLO proves the key of
a peer a table needs leaves the bounds (:meth:`~tarotd.gate.Gate.prove`).
Traffic *from* A *to* B always travels on A's DEALER to B's ROUTER, and B's answers about that
stream (the HELLO-ACK, acknowledgements) come back on the same connection, so each TCP
connection carries one direction of data and its own feedback.  A DEALER's ZeroMQ routing id is
drawn at random for each socket and bound to the peer's key by the signed HELLO that arrives
under it, answering the challenge issued under it: the ROUTER answers (HELLO-ACK,
acknowledgements) to the routing id the peer last proved itself on.  Nobody can guess that id,
so a stranger cannot knock a member's connection off the ROUTER by claiming its id, while
``ROUTER_HANDOVER`` lets a DEALER that reconnects under its own id (after a frame too large, a
broken TCP connection) take it back at once, even if the ROUTER still holds the dead
connection.  (Only someone reading the LAN's traffic could learn an id — and could as well
reset the TCP connection.)  Even then the id is only a name tag: nothing is accepted under it
but a HELLO until one proved the key, and after that only frames carrying the session token the
HELLO-ACK issued.

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
acknowledges every ``TICK`` while it has news or gaps, once what it acknowledges is on
its disk (``before_ack``; a ``ping`` is answered by an ``ack`` as soon as that allows: it
doubles as the pong).  A message the receiver reports missing is sent
again at once if one sent after it arrived, or once its ack is overdue by the measured round
trip; a message neither acknowledged nor reported held, after the retransmission timeout
(``RETRANSMIT_AFTER``, or the measured round trip if longer, doubled on each expiry
until an ack times a round trip again); everything from ``n + 1``, after each HELLO-ACK.
Two rules keep the numbering consistent when one side lost its state in a restart: a
receiver told ``f`` skips the seqs the sender no longer holds (the sender had our ack for
them, so we delivered them before we lost track: counted in ``gaps``), and a sender
acknowledged beyond anything it remembers sending renumbers its messages past that point.

**Persistence.**  The mesh keeps nothing on disk: a restarted daemon starts its links afresh
(the two rules above) and sends its own messages again from the transcripts
(``TableRunner.resume``).

**Liveness.**  Any valid frame from a peer counts as hearing from it; an idle link pings every
``heartbeat``; a peer not heard from for ``timeout`` is ``away`` — not counting the time our
own event loop was held, when its frames waited unread in our sockets
(:meth:`Mesh._not_listening`).  ZeroMQ reconnects a broken TCP connection by itself
(``RECONNECT_IVL`` doubling up to ``RECONNECT_IVL_MAX``); a link whose frames leave but get
no answer for ``timeout`` gets a fresh socket (see :meth:`Mesh._recycle`).  A link says
HELLO again when the far end answers ``reauth`` (it restarted and lost our session) or when
the peer's own HELLO shows a new ``boot``.

**HELLO freshness, without clocks.**  A HELLO answers a challenge: the DEALER says ``hi``,
the ROUTER draws a challenge for that routing id (the last ``CHALLENGES_PER_ROUTE`` of
it kept, all dropped by the first HELLO; those of the latest ``MAX_CHALLENGES`` routing
ids), and the HELLO must be signed for the ROUTER's key (``to``) and one of those
challenges, and arrive under that routing id.  A copy of a member's HELLO replayed to
another daemon is addressed to the wrong key; replayed to the same daemon, on another
connection or later, it answers a challenge that daemon no longer holds: refused, counted
(``bad_hello``) and logged at a limited rate.  The DEALER's own ``nonce`` does the same for
the HELLO-ACK.  So nothing here needs the members' clocks to agree — a laptop an hour off,
or in the wrong time zone, plays like any other.  The HELLO still tells the sender's clock,
signed: a peer whose clock is ``CLOCK_NOTED`` or more from ours is said once in the log
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

**The parts.**  :mod:`~tarotd.mesh.wire` encodes and checks the frames above;
:mod:`~tarotd.mesh.keys` derives the CURVE keys; :mod:`~tarotd.mesh.core` is the delivery
rules and a peer's liveness as plain state machines, time passed in;
:mod:`~tarotd.mesh.handshake` the challenges and clocks of the HELLO;
:mod:`~tarotd.mesh.bounds` the bounds on the peers no table needs; :mod:`~tarotd.mesh.faults`
injects faults into what leaves; and :mod:`~tarotd.mesh.sockets` is the :class:`Mesh` over
ZeroMQ that drives them all.
"""

from tarotd.mesh.core import PeerState
from tarotd.mesh.faults import FaultPlan
from tarotd.mesh.incoming import NotHandled
from tarotd.mesh.keys import curve_public_key, curve_secret_key
from tarotd.mesh.limits import Limits, MeshStats
from tarotd.mesh.records import PeerStatus
from tarotd.mesh.sockets import Mesh, OutboxFull
from tarotd.mesh.wire import (
    LINK_KINDS,
    MAX_ENDPOINT,
    ROUTER_KINDS,
    WILDCARD_HOSTS,
    MiB,
    decode,
    encode,
    encode_signed,
    signing_bytes,
)

__all__ = [
    "LINK_KINDS",
    "MAX_ENDPOINT",
    "ROUTER_KINDS",
    "WILDCARD_HOSTS",
    "FaultPlan",
    "Limits",
    "Mesh",
    "MeshStats",
    "MiB",
    "NotHandled",
    "OutboxFull",
    "PeerState",
    "PeerStatus",
    "curve_public_key",
    "curve_secret_key",
    "decode",
    "encode",
    "encode_signed",
    "signing_bytes",
]
