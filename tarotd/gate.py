"""The daemon's own door to its peer port, in front of ZeroMQ.

ZeroMQ accepts every incoming TCP connection itself, as fast as connections come, with no
bound of its own: the count could only be kept after the fact, and a flood of thousands a
second took every descriptor of a daemon whose limit could not be raised before the excess
was shut.  So the peer port is the gate's.  It accepts each connection itself and, before
ZeroMQ hears of it:

- closes at once what is over the bounds (:class:`~tarotd.guard.ConnectionBounds`: per host
  and in total), so that a flood costs one descriptor for the moment of its ``close``;
- waits :data:`~tarotd.guard.HANDSHAKE_DEADLINE_MS` for the ZMTP greeting's first bytes, and
  closes a connection that sends nothing, or anything else (a port scanner, a web browser);
- only then opens a connection of its own to the mesh's ROUTER, which listens on loopback
  alone, and copies the bytes both ways.  CURVE runs end to end through it: the gate sees
  ciphertext only, and ZeroMQ still closes a connection whose handshake does not finish.

An admitted connection takes three descriptors (the far end's, and both ends of the one to the
ROUTER): :func:`~tarotd.guard.incoming_bound` leaves room for them.

**Who is at the far end.**  ZeroMQ tells the mesh where each connection comes from
(``Peer-Address``), and the mesh needs it: to connect back to a peer that listens on a
wildcard address, and to bound the keys one host speaks for.  Since every connection to the
ROUTER now comes from the gate, the gate opens each far host's connections from an address of
its own in ``127.1.0.0``–``127.254.255.255`` — on Linux the whole of 127.0.0.0/8 is this
machine — and :meth:`Gate.host_of` turns it back into the far host's.  Where the system has no
such addresses (:func:`gate_possible` is false: macOS, or a network namespace whose loopback
is down), the mesh lets ZeroMQ listen itself and keeps the bounds after the fact, as before.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import socket
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
ALIASES_KEPT: Final = 65_536  #: far hosts remembered, each with its loopback address
FIRST_ALIAS: Final = "127.1.0.0"
_ALIAS_SPACE: Final = 254 * 65_536  #: 127.1.0.0 … 127.254.255.255
_NO_DESCRIPTOR: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class CannotListen(Exception):
    """The peer port cannot be opened where the user asked (``errno`` says why)."""

    def __init__(self, errno_: int, reason: str) -> None:
        super().__init__(reason)
        self.errno = errno_


def gate_possible() -> bool:
    """Whether this machine lets the gate open connections from addresses of 127.0.0.0/8
    other than 127.0.0.1 (see the module's "Who is at the far end")."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((FIRST_ALIAS, 0))
    except OSError:
        return False
    return True


def _aliases() -> Iterator[str]:
    for n in itertools.cycle(range(_ALIAS_SPACE)):
        yield f"127.{1 + n // 65_536}.{n // 256 % 256}.{n % 256}"


def looks_like_zmtp(head: bytes) -> bool:
    """Whether ``head`` (the first :data:`ZMTP_SIGNATURE` bytes) opens a ZMTP 3 greeting."""
    return len(head) == ZMTP_SIGNATURE and head[0] == 0xFF and head[-1] == 0x7F


def _far(address: tuple[str, int] | tuple[str, int, int, int]) -> Far:
    host = address[0].removeprefix("::ffff:")  # an IPv4 host on a dual-stack listener
    return Far(host, address[1])


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
    admits to the ROUTER listening on ``127.0.0.1:router_port``.  Refusals go to ``refusals``;
    ``members(host)`` says whether a member of a table is at ``host`` (see
    :meth:`~tarotd.guard.ConnectionBounds.admit`)."""

    def __init__(
        self,
        host: str,
        port: int,
        router_port: int,
        bounds: ConnectionBounds,
        refusals: Refusals,
        deadline: float = HANDSHAKE_DEADLINE_MS / 1000,
        members: Callable[[str], bool] = lambda host: False,
    ) -> None:
        self._listening = _listener(host, port)
        self._router_port = router_port
        self._bounds = bounds
        self._refusals = refusals
        self._deadline = deadline
        self._members = members
        self._hosts: OrderedDict[str, str] = OrderedDict()  #: far host → its loopback address
        self._far_hosts: dict[str, str] = {}  #: loopback address → far host
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

    def host_of(self, address: str) -> str:
        """The far host behind ``address``, the ``Peer-Address`` ZeroMQ gives a connection from
        the gate (an address it does not know it returns as is)."""
        return self._far_hosts.get(address, address)

    async def close(self) -> None:
        self._loop.remove_reader(self._listening)
        self._listening.close()
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
                f"a connection from {far.host}: {len(self._bounds)} held, "
                f"at most {self._bounds.per_host} from one host and {self._bounds.total} in all",
            )
            return
        sock.setblocking(False)
        task = self._loop.create_task(self._serve(sock, far))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, sock: socket.socket, far: Far) -> None:
        """One admitted connection, from its greeting to its end, whichever side ends it."""
        fd = sock.fileno()
        router: socket.socket | None = None
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
            router = await self._open_router(far.host)
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

    async def _open_router(self, far_host: str) -> socket.socket:
        router = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            router.setblocking(False)
            router.bind((self._alias(far_host), 0))
            await self._loop.sock_connect(router, ("127.0.0.1", self._router_port))
        except BaseException:
            router.close()
            raise
        return router

    def _alias(self, far_host: str) -> str:
        """The loopback address ``far_host``'s connections come from (see the module)."""
        alias = self._hosts.get(far_host)
        if alias is None:
            alias = next(self._next_alias)
            self._hosts[far_host], self._far_hosts[alias] = alias, far_host
            if len(self._hosts) > ALIASES_KEPT:
                _, forgotten = self._hosts.popitem(last=False)
                del self._far_hosts[forgotten]
        self._hosts.move_to_end(far_host)
        return alias

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
