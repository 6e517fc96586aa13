"""How many of a daemon's file descriptors the network may take.

A descriptor is what a daemon needs to open its log database, write a proof file or the
score sheet, and connect to a member.  Anybody on the LAN can open TCP connections to the
peer port, and every one takes a descriptor even if it never says a word: about 1,100 idle
ones exhausted the usual soft limit of 1,024, and the daemon could no longer write what the
game needed.  So:

- at start the soft limit is raised to the hard one (up to :data:`WANTED_DESCRIPTORS`),
  where the system allows;
- a connection that has not finished its ZeroMQ handshake within
  :data:`HANDSHAKE_DEADLINE_MS` is closed;
- incoming connections are bounded per host (:data:`PER_HOST`) and in total (a sixth of what
  the limit leaves after :data:`RESERVED`: each takes up to three descriptors, and as many are
  left for the links a flood of HELLOs makes the daemon open back, four descriptors each), so
  that the daemon keeps descriptors for its own files and links.  Connections from this
  machine (127.0.0.1) count only in the total: they are the other daemons of this machine, as
  many as a test or ``scripts/play`` starts, and no host of the LAN can send from that address.

The bounds are kept by :mod:`tarotd.gate`, which accepts the connections itself and closes
the excess before ZeroMQ hears of it.  Where the gate cannot run, ZeroMQ listens itself and
tells of each connection only through its socket monitor (the descriptor's number): the
excess is then shut down once accepted (:func:`peer_of`, :func:`turn_away`), and a flood far
faster than that (thousands a second) still takes the descriptors for a moment where the
limit could not be raised.  A monitor event may be read late, or lost under a flood (its
queue is bounded), so that count is checked against the descriptors themselves
(:meth:`ConnectionBounds.reconcile`).
"""

from __future__ import annotations

import logging
import os
import resource
import socket
from collections import Counter
from typing import Final, NamedTuple

from tarotd.refusals import Cause

log = logging.getLogger(__name__)

WANTED_DESCRIPTORS: Final = 65_536  #: the soft limit a daemon asks for at start
RESERVED: Final = 256  #: descriptors never given to incoming connections: files, links, sockets
MAX_INCOMING: Final = 4096  #: incoming connections in total, however high the limit
MIN_INCOMING: Final = 64
DESCRIPTORS_A_CONNECTION: Final = (
    6  #: three an incoming connection takes (:mod:`tarotd.gate`), three left for links
)
PER_HOST: Final = (
    32  #: incoming connections from one host (a member needs one, two while it reconnects)
)
HANDSHAKE_DEADLINE_MS: Final = (
    5000  #: a connection silent or slow in its handshake this long is closed
)


def raise_descriptor_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` towards the hard limit, and return the soft limit now
    in force.  Where the system refuses, the limit stays and the bounds follow it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = WANTED_DESCRIPTORS if hard == resource.RLIM_INFINITY else min(hard, WANTED_DESCRIPTORS)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError) as error:
            log.warning(
                "cannot raise the limit of open files from %d (%s): incoming connections are "
                "bounded lower",
                soft,
                error,
            )
    return soft


def incoming_bound(soft_limit: int | None = None) -> int:
    """Incoming connections allowed in total under ``soft_limit`` descriptors (None: the
    soft limit in force)."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY:
        return MAX_INCOMING
    return max(MIN_INCOMING, min(MAX_INCOMING, (soft_limit - RESERVED) // DESCRIPTORS_A_CONNECTION))


def is_this_machine(host: str) -> bool:
    """Whether ``host`` is this machine's own loopback address (127.0.0.1 or ::1): what its
    other daemons connect from, and what no host of the LAN can send from."""
    return host in ("127.0.0.1", "::1")


class Far(NamedTuple):
    """The far end of an incoming connection: its address and port."""

    host: str
    port: int


def peer_of(fd: int, local_port: int) -> Far | None:
    """Who is at the far end of descriptor ``fd``, if it is still a TCP connection to our
    ``local_port`` (None if ZeroMQ closed it since, or the number now names something else)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            if sock.type != socket.SOCK_STREAM or sock.getsockname()[1] != local_port:
                return None
            host, port = sock.getpeername()[:2]
    except OSError:
        return None
    return Far(str(host), int(port))


def turn_away(fd: int) -> None:
    """End the connection of ``fd``: ZeroMQ reads its end and closes the descriptor, as for any
    connection that broke.  (Closing the number ourselves would pull it from under ZeroMQ.)"""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class ConnectionBounds:
    """The incoming connections held, by descriptor: at most ``per_host`` from one host
    (this machine excepted) and ``total`` in all."""

    def __init__(self, total: int, per_host: int = PER_HOST) -> None:
        self.total = total
        self.per_host = per_host
        self._held: dict[int, Far] = {}
        self._hosts: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._held)

    def admit(self, fd: int, far: Far, member: bool = False) -> Cause | None:
        """Count the connection of ``fd`` and return None, or return why it must be turned away.
        A ``member``'s host (one a peer a table needs proved itself from) is bounded per host
        only: a flood from strangers that takes every place must not lock out a member
        reconnecting after a cut."""
        self.closed(fd)  # a number seen again: the connection it named before is gone
        if len(self._held) >= self.total and not member:
            return Cause.CONNECTIONS_TOTAL
        if not is_this_machine(far.host) and self._hosts[far.host] >= self.per_host:
            return Cause.CONNECTIONS_FROM_HOST
        self._held[fd] = far
        self._hosts[far.host] += 1
        return None

    def closed(self, fd: int) -> None:
        far = self._held.pop(fd, None)
        if far is not None:
            self._hosts[far.host] -= 1
            if not self._hosts[far.host]:
                del self._hosts[far.host]

    def reconcile(self, local_port: int) -> None:
        """Forget every descriptor that no longer holds the connection it was counted for."""
        for fd, far in list(self._held.items()):
            if peer_of(fd, local_port) != far:
                self.closed(fd)
