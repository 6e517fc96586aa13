"""The bounds on the peers no table needs — the keys a stranger on the LAN can make us hold:
so many from one host, so many a second from every host together, so many in all (``Limits``
in :mod:`tarotd.mesh.sockets`) — and the room of discovery's entries and links, kept first
for the keys that name our tables or proved themselves (:class:`Standing`, :func:`room_for`).
Pure, time passed in; the mesh and discovery apply what they say."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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


class Standing(enum.IntEnum):
    """How far a key has shown it is someone we may play with: what discovery lists, and the
    mesh links to, first.  Anyone can claim a table's name in a beacon, so ``WANTED`` only
    outranks strangers; the room it has is shared fairly between hosts (:func:`room_for`)."""

    STRANGER = 0  #: an unknown key whose beacon names none of our tables
    WANTED = 1  #: its beacon names a table this daemon opened or is looking for
    #: it proved its key to us (a HELLO) or our invite code (``Daemon.favour``)
    PROVEN = 2


class Room(enum.Enum):
    """What :func:`room_for` says of one more entry."""

    FREE = "free"  #: there is room: take it
    EVICT = "evict"  #: there is room once the entry it names goes
    STRANGERS_FULL = "strangers-full"  #: strangers hold their share, fairly spread over hosts
    FULL = "full"  #: every place is held by an entry as wanted, fairly spread over hosts


class Held(Protocol):
    """What :func:`room_for` looks at of a discovery entry or a link."""

    @property
    def host(self) -> str: ...  # where it came from, or points to

    @property
    def standing(self) -> Standing: ...

    @property
    def settled(self) -> bool: ...  # a link whose far end answered: only a better one evicts it

    @property
    def since(self) -> float: ...  # when it was taken in


H = TypeVar("H", bound=Held)

#: Of every ``RESERVED_SHARE`` places, one at least is kept from strangers.
RESERVED_SHARE = 4


def stranger_share(total: int) -> int:
    """The places strangers may hold of ``total``: never every one (``total`` of 1 excepted,
    which has nothing to spare)."""
    return max(1, total - max(1, total // RESERVED_SHARE))


def room_for(held: Sequence[H], host: str, standing: Standing, total: int) -> tuple[Room, H | None]:
    """Whether a newcomer of ``standing`` from ``host`` may join the ``held`` entries, of which
    there may be ``total``, strangers holding :func:`stranger_share` at most.

    When full, the newcomer takes the place of an entry of lower standing (the one of the host
    holding the most, then the oldest) or of its own standing, unsettled, from a host holding
    at least two more such entries than the newcomer's: one host sending fresh keys as fast as
    the LAN carries them then churns only its own entries, and a host with one daemon keeps
    its place among a thousand keys from forty addresses.  Settled entries (a link that
    answered) go only for a better standing."""
    strangers = sum(entry.standing is Standing.STRANGER for entry in held)
    crowded = standing is Standing.STRANGER and strangers >= stranger_share(total)
    if not crowded and len(held) < total:
        return Room.FREE, None
    lower = [entry for entry in held if entry.standing < standing]
    if lower and not crowded:
        return Room.EVICT, _most_crowded(lower)
    peers = [entry for entry in held if entry.standing is standing and not entry.settled]
    if peers:
        victim = _most_crowded(peers)
        theirs = sum(entry.host == victim.host for entry in peers)
        ours = sum(entry.host == host for entry in peers)
        if theirs >= ours + 2:
            return Room.EVICT, victim
    return (Room.STRANGERS_FULL if crowded else Room.FULL), None


def _most_crowded(entries: Sequence[H]) -> H:
    """Of ``entries``, of the lowest standing, unsettled first: the oldest of the host holding
    the most."""
    lowest = min(entry.standing for entry in entries)
    entries = [entry for entry in entries if entry.standing is lowest]
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.host] = counts.get(entry.host, 0) + 1
    return min(entries, key=lambda entry: (entry.settled, -counts[entry.host], entry.since))


@dataclass
class Census:
    """How many entries of each standing there are, and from each host: :func:`room_for`'s
    verdict without a pass over the entries, for entries never settled (discovery's).  A flood
    of fresh keys is mostly refused, which changes nothing: the census taken once answers them
    all, until an entry comes or goes."""

    held: int = 0
    sizes: dict[Standing, int] = field(default_factory=dict)
    hosts: dict[Standing, dict[str, int]] = field(default_factory=dict)
    top: dict[Standing, int] = field(default_factory=dict)  #: the most one host holds

    @classmethod
    def of(cls, held: Iterable[Held]) -> Census:
        census = cls()
        for entry in held:
            census.held += 1
            census.sizes[entry.standing] = census.sizes.get(entry.standing, 0) + 1
            hosts = census.hosts.setdefault(entry.standing, {})
            hosts[entry.host] = hosts.get(entry.host, 0) + 1
        census.top = {standing: max(hosts.values()) for standing, hosts in census.hosts.items()}
        return census

    def verdict(self, host: str, standing: Standing, total: int) -> Room:
        """What :func:`room_for` says of a newcomer, if no entry is settled (which victim, if
        one goes, only :func:`room_for` finds)."""
        crowded = standing is Standing.STRANGER and self.sizes.get(
            Standing.STRANGER, 0
        ) >= stranger_share(total)
        if not crowded and self.held < total:
            return Room.FREE
        if not crowded and any(self.sizes.get(lower, 0) for lower in Standing if lower < standing):
            return Room.EVICT
        ours = self.hosts.get(standing, {}).get(host, 0)
        if self.top.get(standing, 0) >= ours + 2:
            return Room.EVICT
        return Room.STRANGERS_FULL if crowded else Room.FULL


def unanswered(horizon: float, links: Sequence[H]) -> list[H]:
    """The links taken in before ``horizon`` whose far end never answered: a dead port that a
    beacon or a throw-away key's HELLO announced, to close quickly — a daemon that is up
    answers within a second on a LAN, and discovery offers it again (a HELLO, the link back)."""
    return [link for link in links if not link.settled and link.since < horizon]
