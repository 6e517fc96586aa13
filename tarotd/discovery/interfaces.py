"""Where beacons go: the IPv4 broadcast address of every interface that can broadcast."""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct
import sys
from typing import Final

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
        own, netmask = (
            _ioctl_address(probe, code, request) for code in (_SIOCGIFADDR, _SIOCGIFNETMASK)
        )
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
