"""The daemon's own door to its peer port, in front of ZeroMQ.

ZeroMQ accepts every incoming TCP connection itself, as fast as connections come, with no
bound of its own: the count could only be kept after the fact, and a flood of thousands a
second took every descriptor of a daemon whose limit could not be raised before the excess
was shut.  So the peer port is the gate's.  It accepts each connection itself and, before
ZeroMQ hears of it:

- closes at once what is over the bounds (:class:`~tarotd.guard.ConnectionBounds`: per host
  and in total, this machine's address like any other), so that a flood costs one descriptor
  for the moment of its ``close``;
- waits :data:`~tarotd.guard.HANDSHAKE_DEADLINE_MS` for the ZMTP greeting's first bytes, and
  closes a connection that sends nothing, or anything else (a port scanner, a web browser);
- only then opens a connection of its own to the mesh's ROUTER, which listens on loopback
  alone (below), and copies the bytes both ways.  CURVE runs end to end through it: the gate
  sees ciphertext only, and ZeroMQ still closes a connection whose handshake does not finish.

An admitted connection takes three descriptors (the far end's, and both ends of the one to the
ROUTER): :func:`~tarotd.guard.incoming_bound` leaves room for them.

**Who is at the far end.**  ZeroMQ tells the mesh where each connection comes from
(``Peer-Address``), and the mesh needs it: to connect back to a peer that listens on a
wildcard address, to bound the keys one host speaks for, and to tell the gate which
connection a member proved its key on (:meth:`Gate.prove`: that one leaves the bounds).
Since every connection to the ROUTER comes from the gate, the gate opens each one from an
address of its own in ``127.1.0.0``–``127.254.255.255`` — on Linux the whole of 127.0.0.0/8 is
this machine — and :meth:`Gate.host_of` turns it back into the far host's.  One address a
connection, not a far host: ``Peer-Address`` is an address without its port, and a member's
connection must be told from a stranger's on the same host (127.0.0.1 above all).

**Nobody but the gate reaches the ROUTER.**  Its listener is the gate's too
(:meth:`Gate.take_inner`, given to ZeroMQ as a socket already listening): TCP on 127.0.0.1,
whose every segment from 127.0.0.0/8 must carry a TCP MD5 signature (RFC 2385) under a key
the gate draws at start and no other process ever sees.  The kernel drops a connection
without it at its first packet, before there is a descriptor for it or ZeroMQ hears of it, so
a process of this machine cannot go round the gate (before, 1,100 idle connections made to
the ROUTER directly were all held).  The obvious alternatives lose what the mesh needs or
keep the hole: behind an ``ipc://`` path in a private directory the ROUTER would see every
connection as ``localhost:UID:GID:PID``, the gate's, and the far host would be lost; an
abstract Unix socket has no permissions at all; ZeroMQ's own accept filter takes addresses,
and any process may connect from any address of 127.0.0.0/8.

Where the system has no such addresses or no TCP signatures (:func:`gate_possible` is false:
macOS, a network namespace whose loopback is down, a kernel without ``CONFIG_TCP_MD5SIG``),
the mesh lets ZeroMQ listen itself and keeps the bounds after the fact, as before.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import os
import socket
import struct
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Final

from tarotd.guard import HANDSHAKE_DEADLINE_MS, ConnectionBounds, Far
from tarotd.refusals import Cause, Refusals

log = logging.getLogger(__name__)

ZMTP_SIGNATURE: Final = 10  #: a ZMTP greeting begins with 0xFF, 8 bytes of padding, 0x7F
ACCEPTS_AT_ONCE: Final = 64  #: connections accepted before the event loop runs other work
PAUSE_WITHOUT_DESCRIPTORS: Final = 0.1  #: seconds the gate stops accepting when none is left
ALIASES_KEPT: Final = 4096  #: closed connections whose far host is still told (late frames)
FIRST_ALIAS: Final = "127.1.0.0"
INNER_HOST: Final = "127.0.0.1"  #: where the ROUTER listens, behind the gate
_ALIAS_SPACE: Final = 254 * 65_536  #: 127.1.0.0 … 127.254.255.255
_NO_DESCRIPTOR: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_TCP_MD5SIG_EXT: Final = 32  #: <linux/tcp.h>: a TCP MD5 signature key for an address prefix
_TCP_MD5SIG_FLAG_PREFIX: Final = 1
_SIGNATURE_KEY: Final = 32  #: bytes of the key (the kernel takes up to 80)


class CannotListen(Exception):
    """The peer port cannot be opened where the user asked (``errno`` says why)."""

    def __init__(self, errno_: int, reason: str) -> None:
        super().__init__(reason)
        self.errno = errno_


def gate_possible() -> bool:
    """Whether this machine lets the gate open connections from addresses of 127.0.0.0/8
    other than 127.0.0.1, and sign them (see the module)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((FIRST_ALIAS, 0))
            _sign(probe, os.urandom(_SIGNATURE_KEY), INNER_HOST, 32)
    except OSError:
        return False
    return True


def _sign(sock: socket.socket, key: bytes, host: str, prefix: int) -> None:
    """Sign every TCP segment ``sock`` exchanges with ``host``/``prefix`` under ``key``, and
    take none that is not (RFC 2385; Linux's ``struct tcp_md5sig``)."""
    address = struct.pack("=H2s4s", socket.AF_INET, b"", socket.inet_aton(host)).ljust(128, b"\0")
    flags = struct.pack("=BBHi", _TCP_MD5SIG_FLAG_PREFIX, prefix, len(key), 0)
    sock.setsockopt(socket.IPPROTO_TCP, _TCP_MD5SIG_EXT, address + flags + key.ljust(80, b"\0"))


def _aliases() -> Iterator[str]:
    for n in itertools.cycle(range(_ALIAS_SPACE)):
        yield f"127.{1 + n // 65_536}.{n // 256 % 256}.{n % 256}"


def looks_like_zmtp(head: bytes) -> bool:
    """Whether ``head`` (the first :data:`ZMTP_SIGNATURE` bytes) opens a ZMTP 3 greeting."""
    return len(head) == ZMTP_SIGNATURE and head[0] == 0xFF and head[-1] == 0x7F


def _far(address: tuple[str, int] | tuple[str, int, int, int]) -> Far:
    host = address[0].removeprefix("::ffff:")  # an IPv4 host on a dual-stack listener
    return Far(host, address[1])


def _no_delay(sock: socket.socket) -> None:
    """Nagle's algorithm off: each frame crosses the gate at once.  With it on, a small frame
    written while an earlier one is unacknowledged waits for that acknowledgement — which, with
    nothing else going the other way, comes with the far end's next ack frame, up to a mesh
    tick later: the play's tail (p99 20–40 ms, 7–10 ms without).  asyncio turns Nagle off only
    for sockets made with ``IPPROTO_TCP``, and a plain ``socket(AF_INET, SOCK_STREAM)`` is not."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _listener(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``0.0.0.0``, ``*`` or ``[::]``: every address)."""
    host = {"*": "0.0.0.0", "[::]": "::"}.get(host, host.strip("[]"))
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise CannotListen(
            errno.EADDRNOTAVAIL, f"{host} is no address of this machine ({error.strerror})"
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
    except OSError as error:
        sock.close()
        raise CannotListen(error.errno or errno.EINVAL, error.strerror or str(error)) from None
    sock.setblocking(False)
    return sock


class Gate:
    """The peer port: accepts on ``host:port``, admits under ``bounds``, and hands what it
    admits to the ROUTER listening on :meth:`take_inner`.  Refusals go to ``refusals``;
    ``members(host)`` says whether a member of a table proved itself from ``host`` (see
    :meth:`~tarotd.guard.ConnectionBounds.admit`)."""

    def __init__(
        self,
        host: str,
        port: int,
        bounds: ConnectionBounds,
        refusals: Refusals,
        deadline: float = HANDSHAKE_DEADLINE_MS / 1000,
        members: Callable[[str], bool] = lambda host: False,
    ) -> None:
        self._signature = os.urandom(_SIGNATURE_KEY)
        self._listening = _listener(host, port)
        try:
            inner = _listener(INNER_HOST, 0)
            _sign(inner, self._signature, "127.0.0.0", 8)
        except BaseException:
            self._listening.close()
            raise
        self._inner: socket.socket | None = inner
        self._inner_port: int = inner.getsockname()[1]
        self._bounds = bounds
        self._refusals = refusals
        self._deadline = deadline
        self._members = members
        self._open: dict[str, tuple[int, str]] = {}  #: alias → far end's descriptor and host
        self._closed: OrderedDict[str, str] = OrderedDict()  #: alias → far host, once closed
        self._next_alias = _aliases()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._listening, self._accept)

    @property
    def address(self) -> tuple[str, int]:
        """The host and port listened on (the real port when asked for port 0)."""
        host, port = self._listening.getsockname()[:2]
        return str(host), int(port)

    def __len__(self) -> int:
        """Connections admitted and open now."""
        return len(self._bounds)

    def take_inner(self) -> socket.socket:
        """The ROUTER's listener, already listening, on :data:`INNER_HOST` (see the module):
        the caller's from now on, to close."""
        inner, self._inner = self._inner, None
        assert inner is not None, "the ROUTER's listener is taken once"
        return inner

    def host_of(self, address: str) -> str:
        """The far host behind ``address``, the ``Peer-Address`` ZeroMQ gives a connection from
        the gate (an address it does not know it returns as is)."""
        held = self._open.get(address)
        return held[1] if held is not None else self._closed.get(address, address)

    def prove(self, address: str, key: bytes) -> None:
        """A HELLO proved ``key``, a member's, on the connection from ``address`` (its
        ``Peer-Address``): it counts against the bounds no more
        (:meth:`~tarotd.guard.ConnectionBounds.exempt`).  Nothing if it is closed already."""
        held = self._open.get(address)
        if held is not None:
            self._bounds.exempt(held[0], key)

    async def close(self) -> None:
        self._loop.remove_reader(self._listening)
        self._listening.close()
        if self._inner is not None:
            self._inner.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _accept(self) -> None:
        for _ in range(ACCEPTS_AT_ONCE):
            try:
                sock, address = self._listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # gone before it was accepted
            except OSError as error:
                if error.errno in _NO_DESCRIPTOR:
                    self._out_of_descriptors()
                return
            self._admit(sock, _far(address))

    def _out_of_descriptors(self) -> None:
        """No descriptor for one more connection: it waits in the kernel's queue while the
        gate stops accepting for a moment (accepting again at once would only spin)."""
        self._refusals.refuse(
            Cause.NO_DESCRIPTORS,
            time.monotonic(),
            "a connection not accepted: this daemon has "
            f"no file descriptor left; accepting again in {PAUSE_WITHOUT_DESCRIPTORS} s",
        )
        self._loop.remove_reader(self._listening)
        self._loop.call_later(PAUSE_WITHOUT_DESCRIPTORS, self._resume_accepting)

    def _resume_accepting(self) -> None:
        if self._listening.fileno() >= 0:
            self._loop.add_reader(self._listening, self._accept)

    def _admit(self, sock: socket.socket, far: Far) -> None:
        cause = self._bounds.admit(sock.fileno(), far, self._members(far.host))
        if cause is not None:
            sock.close()
            self._refusals.refuse(
                cause,
                time.monotonic(),
                f"a connection from {far.host}: {self._bounds.counted} held, "
                f"at most {self._bounds.per_host} from one host and {self._bounds.total} in all "
                "(a member's, once proven, apart)",
            )
            return
        sock.setblocking(False)
        _no_delay(sock)
        task = self._loop.create_task(self._serve(sock, far))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, sock: socket.socket, far: Far) -> None:
        """One admitted connection, from its greeting to its end, whichever side ends it."""
        fd = sock.fileno()
        router: socket.socket | None = None
        alias: str | None = None
        handed = False  #: both sockets now :meth:`_pass_on`'s, which closes them
        try:
            head = await asyncio.wait_for(self._read_head(sock), self._deadline)
            if len(head) < ZMTP_SIGNATURE:
                return  # it hung up before its greeting
            if not looks_like_zmtp(head):
                self._refusals.refuse(
                    Cause.NOT_ZEROMQ,
                    time.monotonic(),
                    f"a connection from {far.host} that does not speak ZeroMQ",
                )
                return
            alias = self._alias()
            self._open[alias] = fd, far.host
            router = await self._open_router(alias)
            await self._loop.sock_sendall(router, head)
            handed = True
            await self._pass_on(sock, router)
        except TimeoutError:
            self._refusals.refuse(
                Cause.CONNECTION_SILENT,
                time.monotonic(),
                f"a connection from {far.host}: no ZeroMQ greeting within {self._deadline:g} s",
            )
        except OSError as error:
            if error.errno in _NO_DESCRIPTOR:
                self._refusals.refuse(
                    Cause.NO_DESCRIPTORS,
                    time.monotonic(),
                    f"a connection from {far.host} closed: "
                    "this daemon has no file descriptor left to pass it on",
                )
        finally:
            self._bounds.closed(fd)
            if alias is not None:
                self._forget(alias)
            if not handed:
                sock.close()
                if router is not None:
                    router.close()

    async def _read_head(self, sock: socket.socket) -> bytes:
        head = b""
        while len(head) < ZMTP_SIGNATURE:
            part = await self._loop.sock_recv(sock, ZMTP_SIGNATURE - len(head))
            if not part:
                break
            head += part
        return head

    async def _open_router(self, alias: str) -> socket.socket:
        """A connection to the ROUTER from ``alias``, signed with the gate's key."""
        router = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            router.setblocking(False)
            _no_delay(router)
            router.bind((alias, 0))
            _sign(router, self._signature, INNER_HOST, 32)
            await self._loop.sock_connect(router, (INNER_HOST, self._inner_port))
        except BaseException:
            router.close()
            raise
        return router

    def _alias(self) -> str:
        """A loopback address of its own for one more connection (see the module): none an
        open connection has."""
        alias = next(self._next_alias)
        while alias in self._open:
            alias = next(self._next_alias)
        return alias

    def _forget(self, alias: str) -> None:
        """The connection from ``alias`` is closed: its far host is still told for a while,
        to the frames ZeroMQ read from it before."""
        _, far_host = self._open.pop(alias)
        self._closed.pop(alias, None)
        self._closed[alias] = far_host
        if len(self._closed) > ALIASES_KEPT:
            self._closed.popitem(last=False)

    async def _pass_on(self, far: socket.socket, router: socket.socket) -> None:
        """Copy both ways until either side ends; then both connections close.  Transports, not
        a coroutine per direction: a frame crosses the gate in one callback of the event loop."""
        ended: asyncio.Future[None] = self._loop.create_future()
        far_end, router_end = _End(ended), _End(ended)
        far_end.other, router_end.other = router_end, far_end
        try:
            await self._loop.create_connection(lambda: router_end, sock=router)
            await self._loop.connect_accepted_socket(lambda: far_end, sock=far)
            await ended
        finally:
            for end, sock in ((far_end, far), (router_end, router)):
                if end.transport is None:
                    sock.close()
                else:
                    end.transport.close()


class _End(asyncio.Protocol):
    """One end of a connection the gate passes on: what it receives goes to the other end,
    and the other end reading pauses while this one cannot write.  Either side may speak first
    (ZeroMQ's greetings cross), so what comes before this end is connected waits for it."""

    def __init__(self, ended: asyncio.Future[None]) -> None:
        self.ended = ended
        self.transport: asyncio.Transport | None = None
        self.other: _End = self
        self._early: list[bytes] = []

    def send(self, data: bytes) -> None:
        if self.transport is None:
            self._early.append(data)
        else:
            self.transport.write(data)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(b"".join(self._early))
        self._early.clear()

    def data_received(self, data: bytes) -> None:
        self.other.send(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.other.transport is not None:
            self.other.transport.close()
        if not self.ended.done():
            self.ended.set_result(None)

    def pause_writing(self) -> None:
        if self.other.transport is not None:
            self.other.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.other.transport is not None:
            self.other.transport.resume_reading()
