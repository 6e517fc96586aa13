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

The parts, so that all but the socket can be tested without a network:

* :mod:`~tarotd.discovery.beacon`, the codec: :class:`Beacon`, :func:`encode_beacon`,
  :func:`decode_beacon`, and :func:`~tarotd.discovery.beacon.parse_beacon` — every check but
  the signature, so that a beacon with no room is turned away before it costs one (sans-IO);
* :mod:`~tarotd.discovery.peers`: :class:`PeerTable` and :class:`RateLimiter` (sans-IO, time
  passed in explicitly); the table's room goes to the players first — the keys that proved
  themselves, then beacons naming a table this daemon opened or wants, strangers never
  holding every entry (:mod:`tarotd.mesh.bounds`);
* :mod:`~tarotd.discovery.interfaces`: :func:`broadcast_addresses`, the broadcast address of
  every IPv4 interface;
* :mod:`~tarotd.discovery.endpoint`: :class:`Discovery`, the asyncio UDP endpoint that ties
  them together;
* ``python -m tarotd.discovery`` (``__main__.py``): a diagnostic that prints the peers it hears.
"""

from tarotd.discovery.beacon import (
    BEACON_MAGIC,
    BEACON_VERSION,
    MAX_BEACON_SIZE,
    MAX_NAME_LENGTH,
    MAX_SEATS,
    MAX_TABLES,
    MAX_TIMESTAMP,
    Beacon,
    BeaconError,
    TableInfo,
    check_text,
    decode_beacon,
    encode_beacon,
    make_beacon,
)
from tarotd.discovery.endpoint import DISCOVERY_PORT, Announcement, Discovery
from tarotd.discovery.interfaces import broadcast_addresses, subnet_broadcast
from tarotd.discovery.peers import Peer, PeerTable, RateLimiter

__all__ = [
    "BEACON_MAGIC",
    "BEACON_VERSION",
    "DISCOVERY_PORT",
    "MAX_BEACON_SIZE",
    "MAX_NAME_LENGTH",
    "MAX_SEATS",
    "MAX_TABLES",
    "MAX_TIMESTAMP",
    "Announcement",
    "Beacon",
    "BeaconError",
    "Discovery",
    "Peer",
    "PeerTable",
    "RateLimiter",
    "TableInfo",
    "broadcast_addresses",
    "check_text",
    "decode_beacon",
    "encode_beacon",
    "make_beacon",
    "subnet_broadcast",
]
