"""The peers heard on the LAN and the bound on what one source may make us check — sans-IO,
the time passed in, so that expiry and limits are tested without waiting.

The table's room goes first to the peers we may play with: a key whose beacon names a table
this daemon opened or wants, or that proved itself (:class:`~tarotd.mesh.bounds.Standing`);
strangers never hold every entry, and a newcomer takes the place of a stranger, or of an
entry of its standing from a host crowding the table (:func:`~tarotd.mesh.bounds.room_for`):
a flood of fresh keys, at whatever rate, cannot keep a player out."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from protocol.replication.identity import fingerprint
from tarotd.discovery.beacon import Beacon, TableInfo
from tarotd.mesh.bounds import Census, Room, Standing, room_for

DEFAULT_INTERVAL: Final = 1.0
#: A peer is forgotten after this many intervals of silence: a lost datagram or two on a
#: busy Wi-Fi must not make a player vanish from the lobby.
EXPIRY_INTERVALS: Final = 5
#: Datagrams per second accepted from one source address: twenty daemons on one host at the
#: default interval, and a cap on the signature checks a flood can make us do.
MAX_RATE: Final = 20
MAX_PEERS: Final = 256
MAX_FAVOURED: Final = 256  #: keys that proved themselves remembered at once (oldest go first)


@dataclass(frozen=True)
class Peer:
    """A daemon heard on the LAN.  ``host`` is where its beacon came from; ``last_seen`` is
    on the clock the :class:`PeerTable` was given."""

    key: bytes
    name: str
    host: str
    port: int
    tables: tuple[TableInfo, ...]
    last_seen: float
    standing: Standing = Standing.STRANGER
    first_seen: float = 0.0  #: when this key came into the table

    @property
    def since(self) -> float:
        return self.first_seen

    @property
    def settled(self) -> bool:
        """A beacon proves nothing of its port: an entry is never settled (links are)."""
        return False

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    @property
    def endpoint(self) -> str:
        """The peer's ZeroMQ socket."""
        return f"tcp://{self.host}:{self.port}"


class PeerTable:
    """The peers heard recently, fed with decoded beacons.  Sans-IO: the caller passes the
    time (any monotonic clock, in seconds) so expiry can be tested without waiting.

    Each key's latest beacon timestamp is remembered (even after it leaves, for a while) so
    that a replayed older beacon cannot bring back a peer that left or move it to another
    address, and a replayed goodbye cannot remove a peer that has beaconed since.  A beacon
    with the same timestamp is only a refresh from the same address.

    What a daemon wants (:meth:`want`) and the keys that proved themselves (:meth:`favour`)
    set each peer's :class:`Standing`; room goes by it (:func:`room_for`).  After each
    :meth:`heard`, :attr:`refused` says whether the beacon was left out for room and
    :attr:`evicted` which peer made room for it, if one did.
    """

    def __init__(
        self,
        own_key: bytes,
        expiry: float = EXPIRY_INTERVALS * DEFAULT_INTERVAL,
        max_peers: int = MAX_PEERS,
    ) -> None:
        self.own_key = own_key
        self.expiry = expiry
        self.max_peers = max_peers
        self._peers: dict[bytes, Peer] = {}
        self.full = 0  #: beacons of new keys left out for want of room
        self.refused: Room | None = None  #: why the last beacon was left out, if it was
        self.evicted: Peer | None = None  #: the peer the last beacon took the place of
        self._wanted: frozenset[str] = frozenset()
        self._favoured: OrderedDict[bytes, None] = OrderedDict()
        self._census: Census | None = None  #: of the peers listed; None once they changed
        # key -> (timestamp, host, goodbye) of its latest accepted beacon, oldest first.
        self._latest: OrderedDict[bytes, tuple[int, str, bool]] = OrderedDict()

    def heard(self, beacon: Beacon, address: str, now: float) -> bool:
        """Take in a beacon that came from ``address``.  True if the list of peers changed
        (a peer came, left, or changed name, address, port or tables).  A new key while
        ``max_peers`` are listed takes a place :func:`room_for` gives it, or is left out and
        counted in :attr:`full`."""
        self.refused = self.evicted = None
        if beacon.key == self.own_key or not self._is_fresh(beacon, address):
            return False
        self._remember(beacon, address)
        if beacon.goodbye:
            if self._peers.pop(beacon.key, None) is None:
                return False
            self._census = None
            return True
        old = self._peers.get(beacon.key)
        standing = self._standing(beacon.key, beacon.tables)
        if old is None:
            room = self._room(address, standing)
            if room in (Room.STRANGERS_FULL, Room.FULL):
                self.full += 1
                self.refused = room
                return False
            if room is Room.EVICT:
                _, victim = room_for(list(self._peers.values()), address, standing, self.max_peers)
                if victim is None:  # not so: the census counts what room_for looks at
                    self.full += 1
                    self.refused = Room.FULL
                    return False
                del self._peers[victim.key]
                self.evicted = victim
        first_seen = now if old is None else old.first_seen
        new = Peer(
            beacon.key, beacon.name, address, beacon.port, beacon.tables, now, standing, first_seen
        )
        self._peers[beacon.key] = new
        if old is None or (old.host, old.standing) != (new.host, new.standing):
            self._census = None
        return old is None or _announced(old) != _announced(new)

    def turns_away(self, beacon: Beacon, address: str) -> Room | None:
        """Whether :meth:`heard` would leave ``beacon`` out for room (and why), asked before
        its signature is checked — the check costs more than all the rest, and a flood of
        fresh keys, refused, then costs none.  Nothing changes."""
        if beacon.key == self.own_key or beacon.goodbye or beacon.key in self._peers:
            return None
        if not self._is_fresh(beacon, address):
            return None
        room = self._room(address, self._standing(beacon.key, beacon.tables))
        return room if room in (Room.STRANGERS_FULL, Room.FULL) else None

    def _room(self, address: str, standing: Standing) -> Room:
        if self._census is None:
            self._census = Census.of(self._peers.values())
        return self._census.verdict(address, standing, self.max_peers)

    def want(self, names: Iterable[str]) -> bool:
        """The names of the tables this daemon opened or is looking for: a beacon naming one
        is ``WANTED``.  True if a listed peer's standing changed."""
        wanted = frozenset(names)
        if wanted == self._wanted:
            return False
        self._wanted = wanted
        return self._restand()

    def favour(self, key: bytes) -> bool:
        """``key`` proved itself (its HELLO, our invite code): ``PROVEN`` from now on (the
        latest :data:`MAX_FAVOURED` keys).  True if a listed peer's standing changed."""
        self._favoured[key] = None
        self._favoured.move_to_end(key)
        while len(self._favoured) > MAX_FAVOURED:
            self._favoured.popitem(last=False)
        return self._restand()

    def _standing(self, key: bytes, tables: tuple[TableInfo, ...]) -> Standing:
        if key in self._favoured:
            return Standing.PROVEN
        if any(table.name in self._wanted for table in tables):
            return Standing.WANTED
        return Standing.STRANGER

    def _restand(self) -> bool:
        changed = False
        for key, peer in list(self._peers.items()):
            standing = self._standing(key, peer.tables)
            if standing is not peer.standing:
                self._peers[key] = Peer(
                    key,
                    peer.name,
                    peer.host,
                    peer.port,
                    peer.tables,
                    peer.last_seen,
                    standing,
                    peer.first_seen,
                )
                changed = True
        if changed:
            self._census = None
        return changed

    def expire(self, now: float) -> list[Peer]:
        """Forget and return the peers silent for more than ``expiry`` seconds."""
        gone = [peer for peer in self._peers.values() if now - peer.last_seen > self.expiry]
        for peer in gone:
            del self._peers[peer.key]
        if gone:
            self._census = None
        return gone

    def peers(self) -> list[Peer]:
        """The current peers, by name then key, so that listings are stable."""
        return sorted(self._peers.values(), key=lambda peer: (peer.name, peer.key))

    def _is_fresh(self, beacon: Beacon, address: str) -> bool:
        latest = self._latest.get(beacon.key)
        if latest is None:
            return True
        timestamp, host, goodbye = latest
        if beacon.timestamp != timestamp:
            return beacon.timestamp > timestamp
        return host == address and not goodbye

    def _remember(self, beacon: Beacon, address: str) -> None:
        self._latest[beacon.key] = (beacon.timestamp, address, beacon.goodbye)
        self._latest.move_to_end(beacon.key)
        while len(self._latest) > 4 * self.max_peers:
            self._latest.popitem(last=False)


def _announced(peer: Peer) -> tuple[str, str, int, tuple[TableInfo, ...], Standing]:
    """What a lobby shows of a peer, and its standing: everything but when it was heard."""
    return peer.name, peer.host, peer.port, peer.tables, peer.standing


class RateLimiter:
    """At most ``limit`` datagrams per ``window`` seconds from one source address (fixed
    windows), so one noisy or hostile machine cannot make us check signatures all day.
    At most ``max_sources`` sources are tracked; past that, new sources are refused until
    windows end, which keeps memory bounded under a flood of spoofed addresses."""

    def __init__(self, limit: int = MAX_RATE, window: float = 1.0, max_sources: int = 4096) -> None:
        self.limit = limit
        self.window = window
        self.max_sources = max_sources
        self._windows: dict[str, tuple[float, int]] = {}  # source -> (window start, count)

    def allow(self, source: str, now: float) -> bool:
        current = self._windows.get(source)
        if current is None or now - current[0] >= self.window:
            if current is None and not self._has_room(now):
                return False
            current = (now, 0)
        start, count = current
        if count >= self.limit:
            return False
        self._windows[source] = (start, count + 1)
        return True

    def _has_room(self, now: float) -> bool:
        if len(self._windows) >= self.max_sources:
            self._windows = {s: w for s, w in self._windows.items() if now - w[0] < self.window}
        return len(self._windows) < self.max_sources
