"""What a peer may cost this mesh (:class:`Limits`), the counters of what it refused
(:class:`MeshStats`), and :func:`screen`, the checks every inbound frame passes first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tarotd.guard import PER_HOST
from tarotd.mesh.core import TokenBucket
from tarotd.mesh.wire import MAX_FRAME, MiB, decode

SEND_SHARE: Final = 0.8  #: data frames are paced at this share of the peer's inbound rate limit
FRAME_OVERHEAD: Final = 256  #: room a data frame's fields take around its body


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


DEFAULT_LIMITS: Final = Limits()


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


def screen(
    stats: MeshStats,
    limits: Limits,
    bucket: TokenBucket,
    parts: list[bytes],
    kinds: frozenset[str],
    now: float,
) -> dict[str, Any] | None:
    """The checks every inbound frame passes, cheapest first; what fails is counted."""
    if not bucket.take(now):
        stats.rate_limited += 1
        return None
    if len(parts) != 1:
        stats.malformed += 1
        return None
    if len(parts[0]) > limits.max_frame:
        stats.oversized += 1
        return None
    msg = decode(parts[0], kinds, limits.max_frame)
    if msg is None:
        stats.malformed += 1
    return msg
