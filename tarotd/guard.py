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
  that the daemon keeps descriptors for its own files and links.  Every host is bounded so,
  this machine (127.0.0.1) too: a flood from a local process is no better than one from the
  LAN, and the daemons of this machine — as many as a test or ``scripts/play`` starts — are
  members, whose connections leave the bounds once proven (below);
- a connection leaves both bounds once a HELLO on it proved the key of a member (a peer a
  table needs, or a ``--peer``; :meth:`ConnectionBounds.exempt`), one connection a key, so
  that a member cannot make room for itself by opening more.  Until then it counts like any
  other, wherever it comes from; those few (one a member) come out of :data:`RESERVED`;
- a share of the total (:data:`MEMBERS_SHARE`) is kept for the hosts members proved their keys
  from, so that strangers filling every place they may take do not lock out a member whose
  connection broke, while it proves itself again.

The bounds are kept by :mod:`tarotd.gate`, which accepts the connections itself and closes
the excess before ZeroMQ hears of it.  Where the gate cannot run, ZeroMQ listens itself and
tells of each connection only through its socket monitor (the descriptor's number): the
excess is then shut down once accepted (:func:`peer_of`, :func:`turn_away`), and a flood far
faster than that (thousands a second) still takes the descriptors for a moment where the
limit could not be raised; nor can a connection be told to be a member's there (the monitor
does not say which connection a HELLO came on), so every one counts.  A monitor event may be
read late, or lost under a flood (its queue is bounded), so that count is checked against the
descriptors themselves (:meth:`ConnectionBounds.reconcile`).
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
#: three an incoming connection takes (:mod:`tarotd.gate`), three left for links
DESCRIPTORS_A_CONNECTION: Final = 6
#: incoming connections from one host (a member needs one, two while it reconnects)
PER_HOST: Final = 32
MEMBERS_SHARE: Final = 4  #: the last quarter of the total is for the hosts of members only
#: a connection silent or slow in its handshake this long is closed
HANDSHAKE_DEADLINE_MS: Final = 5000


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
    other daemons connect from, and what no host of the LAN can send from.  It speaks for any
    number of keys (:mod:`tarotd.mesh.bounds`), but its connections are bounded like any
    host's."""
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
    """The incoming connections held, by descriptor: at most ``per_host`` from one host and
    ``total`` in all, of which the hosts of no member may take all but a
    :data:`MEMBERS_SHARE`; the connections proven a member's (:meth:`exempt`) count in
    neither."""

    def __init__(self, total: int, per_host: int = PER_HOST) -> None:
        self.total = total
        self.per_host = per_host
        self._held: dict[int, Far] = {}  #: every connection held
        self._hosts: Counter[str] = Counter()  #: those counted (not a member's), by host
        self._members: dict[int, bytes] = {}  #: connection → the member's key it proved
        self._member_connection: dict[bytes, int] = {}  #: and back

    def __len__(self) -> int:
        return len(self._held)

    @property
    def counted(self) -> int:
        """Connections held that count against the bounds: all but the members' proven ones."""
        return len(self._held) - len(self._members)

    def admit(self, fd: int, far: Far, member_host: bool = False) -> Cause | None:
        """Count the connection of ``fd`` and return None, or return why it must be turned away.
        A ``member_host`` (one a peer a table needs proved itself from) may take the places kept
        for members: a flood from strangers that takes every other place must not lock out a
        member reconnecting after a cut."""
        self.closed(fd)  # a number seen again: the connection it named before is gone
        kept = 0 if member_host else self.total // MEMBERS_SHARE
        if self.counted >= self.total - kept:
            return Cause.CONNECTIONS_TOTAL
        if self._hosts[far.host] >= self.per_host:
            return Cause.CONNECTIONS_FROM_HOST
        self._held[fd] = far
        self._hosts[far.host] += 1
        return None

    def exempt(self, fd: int, key: bytes) -> None:
        """The connection of ``fd`` proved ``key``, a member's: it counts no more.  The key's
        connection exempt before, if still held, counts again: one connection a key, or a
        member (who may cheat) could hold any number."""
        if fd not in self._held or self._members.get(fd) == key:
            return
        self._count_again(fd)  # it proved another key before
        earlier = self._member_connection.get(key)
        if earlier is not None:
            self._count_again(earlier)
        self._members[fd], self._member_connection[key] = key, fd
        self._uncount(self._held[fd].host)

    def closed(self, fd: int) -> None:
        far = self._held.pop(fd, None)
        if far is None:
            return
        key = self._members.pop(fd, None)
        if key is None:
            self._uncount(far.host)
        else:
            del self._member_connection[key]

    def reconcile(self, local_port: int) -> None:
        """Forget every descriptor that no longer holds the connection it was counted for."""
        for fd, far in list(self._held.items()):
            if peer_of(fd, local_port) != far:
                self.closed(fd)

    def _count_again(self, fd: int) -> None:
        key = self._members.pop(fd, None)
        if key is not None:
            del self._member_connection[key]
            self._hosts[self._held[fd].host] += 1

    def _uncount(self, host: str) -> None:
        self._hosts[host] -= 1
        if not self._hosts[host]:
            del self._hosts[host]
