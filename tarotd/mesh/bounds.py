"""The bounds on the peers no table needs — the keys a stranger on the LAN can make us hold:
so many from one host, so many a second from every host together, so many in all (``Limits``
in :mod:`tarotd.mesh.sockets`).  Pure, time passed in; the mesh applies what they say."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from tarotd.guard import is_this_machine
from tarotd.mesh.core import PeerState, TokenBucket
from tarotd.refusals import Cause


class Loose(Protocol):
    """What the bounds look at of a peer no table needs."""

    host: str  #: the address it last proved its key from
    reported: PeerState
    last_heard: float | None
    created: float


P = TypeVar("P", bound=Loose)


def refusal(
    host: str,
    loose: Sequence[Loose],
    keys_per_host: int,
    max_peers: int,
    new_keys: TokenBucket,
    now: float,
) -> tuple[Cause, str] | None:
    """Why a new key that proved itself from ``host`` may not join the ``loose`` peers, if it
    may not: its host speaks for ``keys_per_host`` of them already (this machine's own address
    excepted: its daemons), ``max_peers`` of them are up, or more new keys came this second
    than ``new_keys`` allows (a token is taken when none of the others refuses)."""
    if (
        host
        and not is_this_machine(host)
        and sum(peer.host == host for peer in loose) >= keys_per_host
    ):
        return Cause.KEYS_FROM_HOST, f"that host speaks for {keys_per_host} keys already"
    if len(loose) >= max_peers and all(peer.reported is PeerState.UP for peer in loose):
        return Cause.PEER_TABLE_FULL, f"{max_peers} peers no table needs are up"
    if not new_keys.take(now):
        return Cause.NEW_KEYS, f"more new keys than {new_keys.rate:g} a second"
    return None


def room_from(loose: Sequence[P], max_peers: int) -> P | None:
    """The peer to forget so that one more fits, if ``max_peers`` are held: of those not up,
    the one silent longest (or, never heard, made first)."""
    if len(loose) < max_peers:
        return None
    idle = [peer for peer in loose if peer.reported is not PeerState.UP]
    return min(idle, key=lambda peer: peer.last_heard or peer.created, default=None)


def silent_since(horizon: float, loose: Sequence[P]) -> list[P]:
    """The peers not heard since ``horizon`` (or, never heard, made before it): to forget."""
    return [peer for peer in loose if (peer.last_heard or peer.created) < horizon]
