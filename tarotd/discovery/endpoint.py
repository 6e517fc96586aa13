"""The discovery endpoint: the asyncio UDP socket that sends this daemon's beacons and feeds
the ones it hears to a :class:`~tarotd.discovery.peers.PeerTable`."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from protocol.replication.identity import Identity, fingerprint
from tarotd.discovery.beacon import (
    Beacon,
    BeaconError,
    TableInfo,
    encode_beacon,
    make_beacon,
    parse_beacon,
)
from tarotd.discovery.interfaces import broadcast_addresses
from tarotd.discovery.peers import (
    DEFAULT_INTERVAL,
    EXPIRY_INTERVALS,
    MAX_RATE,
    Peer,
    PeerTable,
    RateLimiter,
)
from tarotd.mesh.bounds import Room, stranger_share
from tarotd.refusals import Cause, Refusals

log = logging.getLogger(__name__)

DISCOVERY_PORT: Final = 47474


@dataclass(frozen=True)
class Announcement:
    """What this daemon announces.  :class:`Discovery` asks for it before every beacon, so
    a table opened or filled shows in the lobby at the next beacon."""

    name: str
    port: int
    tables: tuple[TableInfo, ...] = ()


@dataclass
class DiscoveryStats:
    """Counters for diagnostics: nothing received is ever raised, so this is where a
    misbehaving network shows."""

    sent: int = 0
    received: int = 0
    malformed: int = 0
    rate_limited: int = 0
    send_errors: int = 0


PeersCallback = Callable[[list[Peer]], None]


class Discovery:
    """Beacons out, beacons in, and the peers they reveal.

    The socket is bound to ``host:port`` with ``SO_REUSEADDR`` and ``SO_REUSEPORT`` so that
    several daemons on one machine share the discovery port: every broadcast datagram is
    delivered to each of them (a unicast one only to one of them).  Every ``interval``
    seconds the beacon goes to the broadcast address of each interface (``broadcast``)
    at the bound port, and to every explicit target ``(ip, port)``: a unicast peer across
    a router, or ``127.255.255.255`` to reach daemons on this machine only.

    ``port=0`` binds an ephemeral port (see :attr:`address`): with ``broadcast=False`` and
    explicit targets, that is how tests run several instances on loopback.
    """

    def __init__(
        self,
        identity: Identity,
        announce: Callable[[], Announcement],
        *,
        port: int = DISCOVERY_PORT,
        host: str = "0.0.0.0",
        interval: float = DEFAULT_INTERVAL,
        expiry: float | None = None,
        broadcast: bool = True,
        targets: Iterable[tuple[str, int]] = (),
        max_rate: int = MAX_RATE,
    ) -> None:
        self.identity = identity
        self.interval = interval
        self.broadcast = broadcast
        self.stats = DiscoveryStats()
        self.refusals = Refusals(log)
        self._announce = announce
        self._bind = (host, port)
        self._targets: list[tuple[str, int]] = []
        for target_host, target_port in targets:
            self.add_target(target_host, target_port)
        self._table = PeerTable(
            identity.public_key, EXPIRY_INTERVALS * interval if expiry is None else expiry
        )
        self._limiter = RateLimiter(max_rate)
        self._callbacks: list[PeersCallback] = []
        self._transport: asyncio.DatagramTransport | None = None
        self._closed: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_timestamp = 0
        self._reaching: bool | None = None  #: whether the last beacon had anywhere to go

    async def start(self) -> None:
        """Bind the socket and send the first beacon now, then one every interval."""
        loop = asyncio.get_running_loop()
        self._closed = loop.create_future()
        sock = _open_socket(*self._bind)
        endpoint = _Endpoint(self._received, self._send_failed, self._closed)
        self._transport, _ = await loop.create_datagram_endpoint(lambda: endpoint, sock=sock)
        self._task = loop.create_task(self._beacon_loop(), name="discovery beacons")

    async def close(self) -> None:
        """Stop beaconing, say goodbye so peers forget us at once, and close the socket."""
        if self._transport is None or self._closed is None:
            return
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._send_beacon(goodbye=True)
        self._transport.close()
        await self._closed
        self._transport = None

    async def __aenter__(self) -> Discovery:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def address(self) -> tuple[str, int]:
        """The address the socket is bound to (after :meth:`start`)."""
        if self._transport is None:
            raise RuntimeError("discovery is not started")
        host, port = self._transport.get_extra_info("sockname")[:2]
        return str(host), int(port)

    def add_target(self, host: str, port: int) -> None:
        """Also send beacons to ``host:port``.  ``host`` must be an IPv4 address: a name
        would be resolved by a blocking lookup before every beacon."""
        target = (str(ipaddress.IPv4Address(host)), port)
        if target not in self._targets:
            self._targets.append(target)

    def on_change(self, callback: PeersCallback) -> None:
        """Call ``callback(peers)`` whenever a peer comes, leaves or changes."""
        self._callbacks.append(callback)

    def peers(self) -> list[Peer]:
        return self._table.peers()

    def want(self, names: Iterable[str]) -> None:
        """The names of the tables this daemon opened or looks for: peers whose beacons name
        one are listed before strangers (and linked first: :attr:`Peer.standing`)."""
        if self._table.want(names):
            self._notify()

    def favour(self, key: bytes) -> None:
        """``key`` proved itself to this daemon (its invite code): listed before all others."""
        if self._table.favour(key):
            self._notify()

    @property
    def reaching(self) -> bool | None:
        """Whether the last beacon had a network to go to (None before the first): False
        is a laptop on no LAN, said once in the log and shown by ``tarot status``."""
        return self._reaching

    async def _beacon_loop(self) -> None:
        while True:
            self._send_beacon(goodbye=False)
            if self._table.expire(asyncio.get_running_loop().time()):
                self._notify()
            await asyncio.sleep(self.interval)

    def _send_beacon(self, goodbye: bool) -> None:
        # Whatever goes wrong here (a bug in the announce callable, say) is logged: the
        # beacon loop must keep running, and close() must still close the socket.
        transport = self._transport
        if transport is None:
            return
        try:
            datagram = self._encode(goodbye)
            for destination in self._destinations():
                transport.sendto(datagram, destination)
                self.stats.sent += 1
        except OSError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                log.exception("could not send a discovery beacon")
                return
            self.refusals.refuse(
                Cause.NO_DESCRIPTORS, time.monotonic(), "a beacon not sent: no file descriptor left"
            )
        except Exception:
            log.exception("could not send a discovery beacon")

    def _encode(self, goodbye: bool) -> bytes:
        announcement = self._announce()
        # Never go back in time, even if the wall clock does: peers drop older timestamps.
        self._last_timestamp = max(self._last_timestamp, int(time.time()))
        tables = () if goodbye else announcement.tables
        beacon = make_beacon(
            announcement.name,
            self.identity.public_key,
            announcement.port,
            tables,
            goodbye,
            self._last_timestamp,
        )
        return encode_beacon(beacon, self.identity)

    def _destinations(self) -> list[tuple[str, int]]:
        port = self.address[1]
        found = [(address, port) for address in broadcast_addresses()] if self.broadcast else []
        destinations = found + [target for target in self._targets if target not in found]
        self._say_reach(destinations)
        return destinations

    def _say_reach(self, destinations: list[tuple[str, int]]) -> None:
        """Say in the log, once, that the beacons reach no network, and once that they do
        again: otherwise a laptop on no LAN (cable out, Wi-Fi off, an interface with no IPv4
        address) looks exactly like a LAN where nobody plays.  Without broadcast, the targets
        are the caller's choice, none included."""
        reaching = bool(destinations) or not self.broadcast
        if reaching == self._reaching:
            return
        if not reaching:
            log.warning(
                "discovery reaches no network: no interface but loopback is up with an IPv4 "
                "address to broadcast to, so no daemon on a LAN can find this one, nor this one "
                "them, until one is (--peer KEY@HOST:PORT needs no discovery)"
            )
        elif self._reaching is not None:
            log.info(
                "discovery reaches a network again: beacons to %s",
                ", ".join(host for host, _ in destinations),
            )
        self._reaching = reaching

    def _received(self, data: bytes, source: str) -> None:
        now = asyncio.get_running_loop().time()
        if not self._limiter.allow(source, now):
            self.stats.rate_limited += 1
            self.refusals.refuse(
                Cause.BEACONS_FROM_HOST,
                now,
                f"beacons from {source}: more than {self._limiter.limit} a second",
            )
            return
        self.stats.received += 1
        table = self._table
        try:
            unverified = parse_beacon(data)
            beacon = unverified.beacon
            # No room for it: left out before its signature costs a check (said unverified).
            if (room := table.turns_away(beacon, source)) is not None:
                self._turned_away(room, beacon, source, now, " (its signature unchecked)")
                return
            unverified.authenticate()
        except BeaconError as exc:
            self.stats.malformed += 1
            log.debug("dropped a datagram from %s: %s", source, exc)
            return
        if table.heard(beacon, source, now):
            self._notify()
        if table.evicted is not None:
            self.refusals.refuse(
                Cause.DISCOVERY_EVICTED,
                now,
                f"{table.evicted.fingerprint} from {table.evicted.host} dropped from discovery "
                f"for {fingerprint(beacon.key)} from {source}: {table.max_peers} peers are "
                "listed, and it was a stranger or its host the most crowded",
            )
        if table.refused is not None:
            self._turned_away(table.refused, beacon, source, now)

    def _turned_away(
        self, room: Room, beacon: Beacon, source: str, now: float, unchecked: str = ""
    ) -> None:
        """Count and say (at a limited rate) a beacon left out for room."""
        table = self._table
        if room is Room.STRANGERS_FULL:
            self.refusals.refuse(
                Cause.DISCOVERY_STRANGERS_FULL,
                now,
                f"the beacon of {fingerprint(beacon.key)} from {source}{unchecked}: it names "
                f"none of our tables, and strangers hold the {stranger_share(table.max_peers)} "
                "entries they may, spread over their hosts",
            )
        elif room is Room.FULL:
            self.refusals.refuse(
                Cause.DISCOVERY_FULL,
                now,
                f"the beacon of {fingerprint(beacon.key)} from {source}{unchecked}: "
                f"{table.max_peers} peers are listed already, spread over their hosts",
            )

    def _send_failed(self, exc: Exception) -> None:
        self.stats.send_errors += 1
        log.debug("discovery socket error: %s", exc)

    def _notify(self) -> None:
        peers = self._table.peers()
        for callback in list(self._callbacks):
            try:
                callback(peers)
            except Exception:
                log.exception("a discovery on_change callback failed")


class _Endpoint(asyncio.DatagramProtocol):
    """asyncio's side of the socket: hands datagrams and errors to :class:`Discovery`."""

    def __init__(
        self,
        received: Callable[[bytes, str], None],
        failed: Callable[[Exception], None],
        closed: asyncio.Future[None],
    ) -> None:
        self._received = received
        self._failed = failed
        self._closed = closed

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self._received(data, str(addr[0]))

    def error_received(self, exc: Exception) -> None:
        self._failed(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


def _open_socket(host: str, port: int) -> socket.socket:
    """A UDP socket that may broadcast and shares its port with other daemons on the host.
    Made by hand because asyncio no longer offers SO_REUSEADDR for datagram endpoints."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.bind((host, port))
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
