"""The peer mesh: authenticated, ordered, exactly-once delivery between daemons, over ZeroMQ.

The game needs one thing from the network: every message a daemon sends to a peer arrives,
once, in the order it was sent, and only from the peer it claims to come from — across
dropped links, restarts and a hostile LAN.  This package gives exactly that and knows nothing
of tarot.  Each daemon binds one ROUTER and opens one DEALER per peer; a DEALER proves its key
by a signed HELLO answering the ROUTER's challenge, then sends numbered data frames that the
ROUTER acknowledges once they are on its disk.

**The specification is docs/protocol.md, "The mesh wire format"**: the sockets, every frame
and its fields, HELLO freshness, delivery, liveness, limits and encryption
(``tests/test_docs_vectors.py`` holds its frame table to :data:`~tarotd.mesh.wire.SHAPES`).
Why plain ZeroMQ sockets driven by the event loop: docs/decisions/zeromq-sockets.md and
:mod:`tarotd.zsocket`.

**The parts.**  :mod:`~tarotd.mesh.wire` encodes the frames and checks them at the gate;
:mod:`~tarotd.mesh.core` is the delivery rules and a peer's liveness as plain state machines,
time passed in; :mod:`~tarotd.mesh.handshake` the challenges and clocks of the HELLO;
:mod:`~tarotd.mesh.bounds` the bounds on the peers no table needs; :mod:`~tarotd.mesh.keys`
derives the CURVE keys; :mod:`~tarotd.mesh.faults` injects faults into what leaves.  Over
ZeroMQ, :mod:`~tarotd.mesh.sockets` is the :class:`Mesh` that makes the sockets and tasks and
wires the roles: :mod:`~tarotd.mesh.registry` (the peers and links held),
:mod:`~tarotd.mesh.router` (our ROUTER), :mod:`~tarotd.mesh.links` (our DEALERs),
:mod:`~tarotd.mesh.incoming` (delivery, acknowledgements) and :mod:`~tarotd.mesh.outgoing`
(sending, resending), over :mod:`~tarotd.mesh.records`, :mod:`~tarotd.mesh.limits` and
:mod:`~tarotd.mesh.plumbing` (ZeroMQ's sockets and monitors).
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
