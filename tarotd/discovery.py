"""LAN discovery: signed UDP broadcast beacons, and the table of peers they reveal.

Every daemon broadcasts a small signed *beacon* once a second (the ZRE design of ZeroMQ's
Zyre): its name, its identity key, the port of its ZeroMQ peer socket and the tables it
hosts.  Whoever hears beacons keeps a :class:`PeerTable`; a peer whose beacons stop is
forgotten after a few intervals, and a daemon that shuts down says goodbye so it is
forgotten at once.

**Why UDP broadcast beacons rather than multicast DNS.**  Broadcast needs nothing beyond the
standard library (mDNS/DNS-SD means a dependency such as ``zeroconf`` or a system daemon,
Avahi or Bonjour, that is not always running); it works on any flat LAN with no multicast
routing or IGMP snooping to get right, and home routers and Wi-Fi access points that filter
or rate-limit multicast (mDNS included) are common; Zyre has shown the scheme works for
peer-to-peer ZeroMQ applications.  Networks that block broadcast as well (guest Wi-Fi with
client isolation) are what static peers are for (``--peer host:port``); :class:`Discovery`
can also send its beacons to explicit unicast addresses.

**What a beacon can and cannot claim.**  The peer's address is the UDP *source* address of the
datagram, never a field of the beacon, so a beacon cannot point others at a third party.
The beacon is signed by the identity it names, with a timestamp: a replayed older beacon or
a replayed goodbye is ignored (:class:`PeerTable`).  Discovery is still only a hint: the
mesh authenticates a peer's key when it connects, so a forged source address can make a
connection fail but never makes anyone talk to the wrong key.

The layers, so that all but the socket can be tested without a network:

* the codec: :class:`Beacon`, :func:`encode_beacon`, :func:`decode_beacon` (sans-IO);
* :class:`PeerTable` and :class:`RateLimiter` (sans-IO, time passed in explicitly);
* :func:`broadcast_addresses`: the broadcast address of every IPv4 interface;
* :class:`Discovery`: the asyncio UDP endpoint that ties them together;
* ``python -m tarotd.discovery``: a diagnostic that prints the peers it hears.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import fcntl
import ipaddress
import json
import logging
import socket
import struct
import sys
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgpack

from protocol.identity import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    fingerprint,
    is_valid_public_key,
    verify,
)
from protocol.messages import TABLE_ID_SIZE
from tarotd.refusals import Cause, Refusals

log = logging.getLogger(__name__)

DISCOVERY_PORT: Final = 47474
#: Magic and version open every beacon; as the signed data starts with them, a beacon's
#: signature can never pass for one of a protocol message (signed under another prefix).
BEACON_MAGIC: Final = b"TAROT"
BEACON_VERSION: Final = 1
#: Fits one Ethernet frame with room for IP/UDP headers and a tunnel or two.
MAX_BEACON_SIZE: Final = 1400
MAX_NAME_LENGTH: Final = 64
MAX_TABLES: Final = 16
MIN_SEATS: Final = 3
MAX_SEATS: Final = 5
MAX_TIMESTAMP: Final = 2**63 - 1
DEFAULT_INTERVAL: Final = 1.0
#: A peer is forgotten after this many intervals of silence: a lost datagram or two on a
#: busy Wi-Fi must not make a player vanish from the lobby.
EXPIRY_INTERVALS: Final = 5
#: Datagrams per second accepted from one source address: twenty daemons on one host at the
#: default interval, and a cap on the signature checks a flood can make us do.
MAX_RATE: Final = 20
MAX_PEERS: Final = 256

_HEADER: Final = BEACON_MAGIC + bytes([BEACON_VERSION])
_FIELDS: Final = ("name", "key", "port", "tables", "goodbye", "timestamp")
#: Characters a name may not hold: controls (a terminal escape sequence in a player's name),
#: surrogates (not encodable) and line or paragraph separators (they break a lobby line).
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})


class BeaconError(ValueError):
    """Bytes or fields that do not make a valid, correctly signed beacon; the text says
    which rule failed."""


# --- the codec ------------------------------------------------------------------------


@dataclass(frozen=True)
class TableInfo:
    """A table as the lobby lists it: enough to decide whether to ask to join."""

    name: str
    seats: int
    members: int
    open: bool
    table_id: bytes | None = None

    def __post_init__(self) -> None:
        check_text("table name", self.name)
        _check_int("seats", self.seats, MIN_SEATS, MAX_SEATS)
        _check_int("members", self.members, 0, self.seats)
        _check_bool("open", self.open)
        if self.table_id is not None:
            _check_bytes("table id", self.table_id, TABLE_ID_SIZE)


@dataclass(frozen=True)
class Beacon:
    """One beacon.  Constructing it checks every field, so a ``Beacon`` that exists is one
    that peers accept (but for its size, which :func:`encode_beacon` checks)."""

    name: str
    key: bytes
    port: int
    tables: tuple[TableInfo, ...]
    goodbye: bool
    timestamp: int

    def __post_init__(self) -> None:
        check_text("name", self.name)
        _check_bytes("key", self.key, PUBLIC_KEY_SIZE)
        if not is_valid_public_key(self.key):
            raise BeaconError("key is not a valid Ed25519 public key (small order or off the curve)")
        _check_int("port", self.port, 1, 65535)
        _check_tables(self.tables)
        _check_bool("goodbye", self.goodbye)
        _check_int("timestamp", self.timestamp, 0, MAX_TIMESTAMP)


def encode_beacon(beacon: Beacon, identity: Identity) -> bytes:
    """The datagram: magic ‖ version ‖ msgpack body ‖ Ed25519 signature of all that precedes.
    Raises :class:`BeaconError` if ``identity`` is not the beacon's key or the datagram
    would be over :data:`MAX_BEACON_SIZE` (see :func:`make_beacon`, which trims tables)."""
    if beacon.key != identity.public_key:
        raise BeaconError("the beacon's key is not the public key of the identity signing it")
    signed = _HEADER + _body(beacon)
    size = len(signed) + SIGNATURE_SIZE
    if size > MAX_BEACON_SIZE:
        raise BeaconError(
            f"beacon of {size} bytes is over the {MAX_BEACON_SIZE}-byte limit "
            "(announce fewer tables or shorter names)"
        )
    return signed + identity.sign(signed)


def decode_beacon(data: bytes) -> Beacon:
    """Parse and authenticate one datagram of untrusted bytes.  Returns a beacon its key
    really signed, or raises :class:`BeaconError`, and nothing else, saying why not."""
    signed, body, signature = _split(data)
    beacon = _beacon_from_wire(_unpack(body))
    if not verify(beacon.key, signature, signed):
        raise BeaconError("bad signature: the beacon was not signed by the key it names")
    return beacon


def make_beacon(
    name: str, key: bytes, port: int, tables: Sequence[TableInfo], goodbye: bool, timestamp: int
) -> Beacon:
    """A beacon that fits in a datagram: the first tables that fit are announced, the rest
    left out (the lobby shows them once others close), rather than no beacon at all."""
    kept = tuple(tables[:MAX_TABLES])
    while True:
        beacon = Beacon(name, key, port, kept, goodbye, timestamp)
        if not kept or len(_HEADER) + len(_body(beacon)) + SIGNATURE_SIZE <= MAX_BEACON_SIZE:
            return beacon
        kept = kept[:-1]


def _body(beacon: Beacon) -> bytes:
    tables = [[t.name, t.seats, t.members, t.open, t.table_id] for t in beacon.tables]
    fields = [beacon.name, beacon.key, beacon.port, tables, beacon.goodbye, beacon.timestamp]
    packed: bytes = msgpack.packb(dict(zip(_FIELDS, fields)), use_bin_type=True)
    return packed


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """The signed part, the body and the signature of a datagram, after its frame checks."""
    if type(data) is not bytes:
        raise BeaconError(f"a beacon is bytes, not {type(data).__name__}")
    if len(data) > MAX_BEACON_SIZE:
        raise BeaconError(f"beacon of {len(data)} bytes is over the {MAX_BEACON_SIZE}-byte limit")
    if not data.startswith(BEACON_MAGIC):
        raise BeaconError(f"bad magic: not a tarot beacon (starts {data[:8]!r})")
    if len(data) > len(BEACON_MAGIC) and data[len(BEACON_MAGIC)] != BEACON_VERSION:
        version = data[len(BEACON_MAGIC)]
        raise BeaconError(f"unsupported beacon version {version} (this daemon speaks {BEACON_VERSION})")
    if len(data) <= len(_HEADER) + SIGNATURE_SIZE:
        raise BeaconError(f"beacon of {len(data)} bytes is too short for a body and a signature")
    return data[:-SIGNATURE_SIZE], data[len(_HEADER) : -SIGNATURE_SIZE], data[-SIGNATURE_SIZE:]


def _unpack(body: bytes) -> object:
    """Exactly one msgpack value.  The parser fails in many ways (ExtraData, FormatError,
    StackError, UnicodeDecodeError…) that all mean the same to us: a malformed body."""
    try:
        return msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:
        raise BeaconError(f"malformed msgpack body ({type(exc).__name__}: {exc})") from None


def _beacon_from_wire(value: object) -> Beacon:
    if type(value) is not dict:
        raise BeaconError(f"the beacon body is a msgpack map, got {_describe(value)}")
    for name in _FIELDS:
        if name not in value:
            raise BeaconError(f"beacon field {name!r} is missing")
    unexpected = sorted(str(key) for key in value if key not in _FIELDS)
    if unexpected:
        raise BeaconError(f"unexpected beacon fields: {', '.join(unexpected)}")
    name, key, port, tables, goodbye, timestamp = (value[field] for field in _FIELDS)
    return Beacon(name, key, port, _tables_from_wire(tables), goodbye, timestamp)


def _tables_from_wire(value: object) -> tuple[TableInfo, ...]:
    if type(value) is not list:
        raise BeaconError(f"tables is a msgpack array, got {_describe(value)}")
    if len(value) > MAX_TABLES:
        raise BeaconError(f"{len(value)} tables announced, at most {MAX_TABLES} allowed")
    return tuple(_table_from_wire(index, entry) for index, entry in enumerate(value))


def _table_from_wire(index: int, value: object) -> TableInfo:
    if type(value) is not list or len(value) != 5:
        raise BeaconError(
            f"table {index} is an array [name, seats, members, open, table_id], got {_describe(value)}"
        )
    try:
        return TableInfo(*value)
    except BeaconError as exc:
        raise BeaconError(f"table {index}: {exc}") from None


def _check_tables(tables: object) -> None:
    if type(tables) is not tuple:
        raise BeaconError(f"tables is a tuple of TableInfo, got {_describe(tables)}")
    if len(tables) > MAX_TABLES:
        raise BeaconError(f"{len(tables)} tables announced, at most {MAX_TABLES} allowed")
    for table in tables:
        if type(table) is not TableInfo:
            raise BeaconError(f"a table is a TableInfo, got {_describe(table)}")


def check_text(what: str, value: object) -> None:
    """A name a beacon may carry (a daemon's, a table's): 1 to 64 characters, none of them a
    control or a line separator.  Also what ``tarotd --name`` and ``--table`` are held to."""
    if type(value) is not str:
        raise BeaconError(f"{what} is a string, got {_describe(value)}")
    if not 1 <= len(value) <= MAX_NAME_LENGTH:
        raise BeaconError(f"{what} is 1 to {MAX_NAME_LENGTH} characters, got {len(value)}")
    for char in value:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            raise BeaconError(f"{what} holds the control or separator character U+{ord(char):04X}")


def _check_int(what: str, value: object, low: int, high: int) -> None:
    # Exact type: a bool is an int to isinstance, and True is not a port.
    if type(value) is not int:
        raise BeaconError(f"{what} is an integer, got {_describe(value)}")
    if not low <= value <= high:
        raise BeaconError(f"{what} {value} is out of range {low}..{high}")


def _check_bool(what: str, value: object) -> None:
    if type(value) is not bool:
        raise BeaconError(f"{what} is a boolean, got {_describe(value)}")


def _check_bytes(what: str, value: object, size: int) -> None:
    if type(value) is not bytes:
        raise BeaconError(f"{what} is bytes, got {_describe(value)}")
    if len(value) != size:
        raise BeaconError(f"{what} is {size} bytes, got {len(value)}")


def _describe(value: object) -> str:
    """Type and a short repr: the value may be a kilobyte of someone's garbage."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


# --- the peer table -------------------------------------------------------------------


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
        # key -> (timestamp, host, goodbye) of its latest accepted beacon, oldest first.
        self._latest: OrderedDict[bytes, tuple[int, str, bool]] = OrderedDict()

    def heard(self, beacon: Beacon, address: str, now: float) -> bool:
        """Take in a beacon that came from ``address``.  True if the list of peers changed
        (a peer came, left, or changed name, address, port or tables).  A new key while
        ``max_peers`` are listed is left out, and counted in :attr:`full`."""
        if beacon.key == self.own_key or not self._is_fresh(beacon, address):
            return False
        self._remember(beacon, address)
        if beacon.goodbye:
            return self._peers.pop(beacon.key, None) is not None
        old = self._peers.get(beacon.key)
        if old is None and len(self._peers) >= self.max_peers:
            self.full += 1
            return False
        new = Peer(beacon.key, beacon.name, address, beacon.port, beacon.tables, now)
        self._peers[beacon.key] = new
        return old is None or _announced(old) != _announced(new)

    def expire(self, now: float) -> list[Peer]:
        """Forget and return the peers silent for more than ``expiry`` seconds."""
        gone = [peer for peer in self._peers.values() if now - peer.last_seen > self.expiry]
        for peer in gone:
            del self._peers[peer.key]
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


def _announced(peer: Peer) -> tuple[str, str, int, tuple[TableInfo, ...]]:
    """What a lobby shows of a peer, i.e. everything but when it was last heard."""
    return peer.name, peer.host, peer.port, peer.tables


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


# --- interfaces -----------------------------------------------------------------------

# Linux ioctls on an AF_INET socket, and the interface flags they report (<linux/if.h>).
_SIOCGIFFLAGS: Final = 0x8913
_SIOCGIFADDR: Final = 0x8915
_SIOCGIFBRDADDR: Final = 0x8919
_SIOCGIFNETMASK: Final = 0x891B
_IFF_UP: Final = 0x1
_IFF_BROADCAST: Final = 0x2
_IFF_LOOPBACK: Final = 0x8
_IFNAMSIZ: Final = 16
#: Limited broadcast: where beacons go where interfaces cannot be enumerated.
LIMITED_BROADCAST: Final = "255.255.255.255"


def broadcast_addresses() -> list[str]:
    """The IPv4 broadcast address of every interface that is up, is not loopback and can
    broadcast, e.g. ``["192.168.1.255"]``.  Asked again before every beacon, so a laptop that
    joins a network is heard on it within a second.  An address given no broadcast address
    (``ip addr add 10.0.0.2/24 dev eth0``, without ``brd``) gets the one of its subnet,
    derived from the netmask: the kernel reports 0.0.0.0 for it, and the LAN is there all the
    same.

    Why this way: ``socket.if_nameindex()`` plus the ``SIOCGIFFLAGS``/``SIOCGIFBRDADDR``
    ioctls is standard library only, needs neither iproute2 nor a subprocess, and costs
    microseconds.  Its limit: an interface's secondary IPv4 addresses are not seen, only
    its primary one.  Where the ioctls do not exist (not Linux), the limited broadcast
    address is used, which leaves by the interface of the default route.
    """
    if not sys.platform.startswith("linux"):
        return [LIMITED_BROADCAST]
    found: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            address = _interface_broadcast(probe, name)
            if address is not None and address not in found:
                found.append(address)
    return found


def _interface_broadcast(probe: socket.socket, name: str) -> str | None:
    # struct ifreq: the name (IFNAMSIZ bytes), then a union in which the flags are a short
    # and an address a struct sockaddr_in (family, port, then the IPv4 address at byte 20).
    request = struct.pack("40s", name.encode()[: _IFNAMSIZ - 1])
    try:
        (flags,) = struct.unpack_from("H", fcntl.ioctl(probe, _SIOCGIFFLAGS, request), _IFNAMSIZ)
        if flags & _IFF_LOOPBACK or not flags & _IFF_UP or not flags & _IFF_BROADCAST:
            return None
        address = _ioctl_address(probe, _SIOCGIFBRDADDR, request)
        if address != "0.0.0.0":
            return address
        own, netmask = (_ioctl_address(probe, code, request) for code in (_SIOCGIFADDR, _SIOCGIFNETMASK))
    except OSError:  # no IPv4 address on it (EADDRNOTAVAIL), or it just went away
        return None
    return subnet_broadcast(own, netmask)


def _ioctl_address(probe: socket.socket, code: int, request: bytes) -> str:
    return socket.inet_ntoa(fcntl.ioctl(probe, code, request)[20:24])


def subnet_broadcast(address: str, netmask: str) -> str | None:
    """The broadcast address of the subnet of ``address`` under ``netmask``, or None where
    there is none: a /31 or /32 has no room for one, and a netmask with holes is no subnet."""
    try:
        network = ipaddress.IPv4Network(f"{address}/{netmask}", strict=False)
    except ValueError:
        return None
    return str(network.broadcast_address) if network.prefixlen < 31 else None


# --- the asyncio endpoint -------------------------------------------------------------


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
        self._table = PeerTable(identity.public_key, EXPIRY_INTERVALS * interval if expiry is None else expiry)
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
            self.refusals.refuse(Cause.NO_DESCRIPTORS, time.monotonic(), "a beacon not sent: no file descriptor left")
        except Exception:
            log.exception("could not send a discovery beacon")

    def _encode(self, goodbye: bool) -> bytes:
        announcement = self._announce()
        # Never go back in time, even if the wall clock does: peers drop older timestamps.
        self._last_timestamp = max(self._last_timestamp, int(time.time()))
        tables = () if goodbye else announcement.tables
        beacon = make_beacon(
            announcement.name, self.identity.public_key, announcement.port, tables, goodbye, self._last_timestamp
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
                "discovery reaches no network: no interface but loopback is up with an IPv4 address to broadcast to, so no "
                "daemon on a LAN can find this one, nor this one them, until one is (--peer KEY@HOST:PORT needs no discovery)"
            )
        elif self._reaching is not None:
            log.info("discovery reaches a network again: beacons to %s", ", ".join(host for host, _ in destinations))
        self._reaching = reaching

    def _received(self, data: bytes, source: str) -> None:
        now = asyncio.get_running_loop().time()
        if not self._limiter.allow(source, now):
            self.stats.rate_limited += 1
            self.refusals.refuse(Cause.BEACONS_FROM_HOST, now, f"beacons from {source}: more than {self._limiter.limit} "
                                 f"a second")
            return
        self.stats.received += 1
        try:
            beacon = decode_beacon(data)
        except BeaconError as exc:
            self.stats.malformed += 1
            log.debug("dropped a datagram from %s: %s", source, exc)
            return
        full = self._table.full
        if self._table.heard(beacon, source, now):
            self._notify()
        elif self._table.full > full:
            self.refusals.refuse(Cause.DISCOVERY_FULL, now, f"the beacon of {fingerprint(beacon.key)} from {source}: "
                                 f"{self._table.max_peers} peers are listed already")

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


# --- diagnostics: python -m tarotd.discovery ------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tarotd.discovery",
        description="Beacon under a throwaway identity for a while and print the peers heard.",
    )
    parser.add_argument("--name", default=socket.gethostname()[:MAX_NAME_LENGTH])
    parser.add_argument("--peer-port", type=int, default=DISCOVERY_PORT + 1, help="ZeroMQ port to announce")
    parser.add_argument("--port", type=int, default=DISCOVERY_PORT, help="discovery UDP port")
    parser.add_argument("--bind", default="0.0.0.0", help="address to bind the UDP socket to")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL)
    parser.add_argument("--expiry", type=float, default=None, help="default: 5 intervals")
    parser.add_argument("--listen-seconds", type=float, default=5.0)
    parser.add_argument("--no-broadcast", action="store_true", help="only send to --target")
    parser.add_argument("--target", action="append", default=[], metavar="IP:PORT", help="extra destination")
    parser.add_argument("--watch", action="store_true", help="print the peers at every change")
    parser.add_argument("--json", action="store_true", help="one JSON document per line")
    return parser.parse_args(argv)


def _table_json(table: TableInfo) -> dict[str, object]:
    return {
        "name": table.name,
        "seats": table.seats,
        "members": table.members,
        "open": table.open,
        "table_id": None if table.table_id is None else table.table_id.hex(),
    }


def _peer_json(peer: Peer) -> dict[str, object]:
    return {
        "name": peer.name,
        "fingerprint": peer.fingerprint,
        "key": peer.key.hex(),
        "host": peer.host,
        "port": peer.port,
        "tables": [_table_json(table) for table in peer.tables],
    }


def _report(peers: list[Peer], elapsed: float, as_json: bool, **extra: object) -> None:
    if as_json:
        document = {"elapsed": round(elapsed, 3), "peers": [_peer_json(p) for p in peers], **extra}
        print(json.dumps(document), flush=True)
        return
    print(f"{elapsed:7.2f}s  {len(peers)} peer(s)", flush=True)
    for peer in peers:
        print(f"  {peer.name:<24} {peer.fingerprint}  {peer.endpoint}  {len(peer.tables)} table(s)", flush=True)


def _target(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


async def _diagnose(args: argparse.Namespace) -> None:
    identity = Identity.generate()
    announcement = Announcement(args.name, args.peer_port)
    discovery = Discovery(
        identity,
        lambda: announcement,
        port=args.port,
        host=args.bind,
        interval=args.interval,
        expiry=args.expiry,
        broadcast=not args.no_broadcast,
        targets=[_target(target) for target in args.target],
    )
    started = time.monotonic()
    watching = args.watch  # until the final report: nothing is printed after it (a peer's goodbye, say)
    discovery.on_change(lambda peers: _report(peers, time.monotonic() - started, args.json) if watching else None)
    async with discovery:
        await asyncio.sleep(args.listen_seconds)
        watching = False
        elapsed = time.monotonic() - started
        stats = vars(discovery.stats)
        _report(discovery.peers(), elapsed, args.json, final=True, name=args.name, stats=stats)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(_diagnose(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
