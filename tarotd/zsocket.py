"""ZeroMQ sockets driven by the asyncio event loop directly, without pyzmq's asyncio layer.

**Why.**  pyzmq's ``zmq.asyncio`` makes a future for every frame sent or received, keeps
queues of them, and converts flags through Python enums on each: a third of the mesh's own
CPU (two meshes exchanging 20,000 messages each way: 7.4 s before, 4.8 s after), about 5 % of
a daemon's at a table.  The mesh needs none of it: it only ever sends without waiting (a frame
ZeroMQ cannot take now is the retransmission's business) and reads each socket in one loop.
So a :class:`LoopSocket` is a plain ``zmq.Socket`` whose sends are plain calls, and whose
receive waits on the event loop only when nothing is queued.

**The edge-triggered rule.**  ZeroMQ's ``FD`` does not say "a message is queued": it says
"the socket has commands to process", and it is shared by sending and receiving.  Any call
that processes those commands — a receive, a send, reading ``EVENTS`` — takes the signal in,
and may leave a message queued with the FD no longer readable.  So a receiver may wait on the
FD only after ``EVENTS`` said nothing is queued, and every later call that may take the
signal in while it waits must look at ``EVENTS`` again and wake it: the reader callback does,
:meth:`LoopSocket.send` does after each send, and :meth:`LoopSocket.rouse` is there for any
other call on :attr:`LoopSocket.socket`.  Once ``EVENTS`` said nothing is queued, ZeroMQ
raises the FD for the next message that comes in, so nothing else can be missed.  (The same
rule as pyzmq's ``_schedule_remaining_events``, without the futures.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final, cast

import zmq

#: pyzmq's constants are enums, and ``int & enum`` goes through the enum machinery each time:
#: plain ints for the calls made on every frame.
EVENTS: Final = int(zmq.EVENTS)
POLLIN: Final = int(zmq.POLLIN)
NOBLOCK: Final = int(zmq.NOBLOCK)
SNDMORE_NOBLOCK: Final = int(zmq.SNDMORE) | NOBLOCK


class LoopSocket:
    """A plain ZeroMQ socket read in one loop and written without waiting, on the running
    event loop.  Make the socket with its context's ``socket(kind, socket_class=zmq.Socket)``
    (an asyncio context would make an asyncio socket; and ``zmq.Socket(context, kind)`` is not
    registered with the context, whose ``destroy`` would then wait for it forever).

    The reader stays registered on the FD for the socket's life: registering it for each wait
    would cost two system calls per wait.  :meth:`close` removes it before closing the socket.
    """

    def __init__(self, socket: zmq.Socket[Any]) -> None:
        self.socket = socket  #: for options, bind, connect, monitoring: :meth:`rouse` after
        self._fd: int = socket.FD
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None  #: the receive waiting for a message
        self._loop.add_reader(self._fd, self._on_fd)

    @property
    def closed(self) -> bool:
        return self.socket.closed

    async def recv(self) -> list[bytes] | None:
        """The next message, as bytes; None once the socket is closed (its loop ends)."""
        while not self.closed:
            try:
                return self.socket.recv_multipart(NOBLOCK)
            except zmq.Again:
                await self._readable()
        return None

    async def recv_frames(self) -> list[zmq.Frame] | None:
        """The next message, as frames (which tell their connection's ``Peer-Address`` and
        ``User-Id``); None once the socket is closed."""
        while not self.closed:
            try:
                return self.socket.recv_multipart(NOBLOCK, copy=False)
            except zmq.Again:
                await self._readable()
        return None

    def send(self, parts: Sequence[bytes]) -> bool:
        """Hand a message to ZeroMQ without waiting: False if it cannot take it now (closed,
        no connection, high-water mark, unknown routing id).  Part by part with int flags,
        as ``send_multipart`` does but without its enum ``SNDMORE | flags``; a message is
        atomic in ZeroMQ, so a refusal comes on its first part.  A send may take in the FD's
        signal of a message that came meanwhile: a waiting receive is woken if one is in."""
        if self.closed:
            return False
        try:
            for part in parts[:-1]:
                self.socket.send(part, SNDMORE_NOBLOCK)
            self.socket.send(parts[-1], NOBLOCK)
            sent = True
        except zmq.ZMQError:
            sent = False
        self.rouse()
        return sent

    def rouse(self) -> None:
        """Wake the waiting receive if a message is queued: call after anything done on
        :attr:`socket` while a receive may wait (the edge-triggered rule).  Nothing to do when
        no receive waits: the next one tries to receive before it waits."""
        if self._waiter is not None:
            self._on_fd()

    def _on_fd(self) -> None:
        """The FD's reader: reading ``EVENTS`` processes the socket's commands, which also
        resets the FD — even when no receive waits, or a busy receiver would have this called
        on every turn of the event loop until it came back."""
        if not self.closed and self._queued():
            self._wake()

    def close(self) -> None:
        """Close at once (LINGER 0), after removing the reader (no callback on a closed FD,
        whose number the system may give to another file); a waiting receive returns None."""
        if self.closed:
            return
        self._loop.remove_reader(self._fd)
        self.socket.close(linger=0)
        self._wake()

    async def _readable(self) -> None:
        """Until a message may be queued, or the socket closed.  ``EVENTS`` first: the FD may
        already have been reset with a message queued (the edge-triggered rule)."""
        if self._queued():
            return
        assert self._waiter is None, "one loop receives on a socket"
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _queued(self) -> bool:
        """Whether a message is queued (``EVENTS`` is an int; pyzmq's stubs allow bytes)."""
        return bool(cast(int, self.socket.getsockopt(EVENTS)) & POLLIN)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
