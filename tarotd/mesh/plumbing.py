"""The ZeroMQ side of a mesh: how its sockets are made, the monitors that say what ZeroMQ
does with their connections, and the receive loops' manners.  No mesh logic here."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from typing import Any, Final

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from protocol.replication.identity import fingerprint
from tarotd.guard import HANDSHAKE_DEADLINE_MS
from tarotd.mesh.keys import curve_public_key
from tarotd.mesh.limits import Limits
from tarotd.mesh.records import Link
from tarotd.mesh.wire import TOKEN_SIZE

log = logging.getLogger(__name__)

YIELD_EVERY: Final = 32  #: frames a receive loop handles before letting other tasks run
RECONNECT_IVL_MS: Final = 100  #: ZeroMQ's TCP reconnection starts here and doubles ...
RECONNECT_IVL_MAX_MS: Final = 5000  #: ... up to this
ROUTE_PREFIX: Final = b"r"  #: ZeroMQ reserves routing ids that begin with a zero byte
GUARDED_EVENTS: Final = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED
#: failed handshakes in a row before a link says it cannot connect
HANDSHAKE_FAILED_TIMES: Final = 3
HANDSHAKE_FAILURES: Final = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


async def yield_every(count: int) -> None:
    """Let the other tasks run every :data:`YIELD_EVERY` frames.  Awaiting a frame that is
    already queued does not yield to the event loop, so a receive loop under a flood would
    otherwise starve the housekeeping (acks, pings) of this mesh and everything else."""
    if count % YIELD_EVERY == 0:
        await asyncio.sleep(0)


_MONITOR_NUMBERS = itertools.count()


def monitor(sock: zmq.Socket[Any], events: int) -> zmq.asyncio.Socket:
    """A PAIR socket that receives ``sock``'s ``events``.  It stays on pyzmq's asyncio layer
    (a few events per connection): a plain socket makes it in its own context, which is the
    mesh's asyncio one, so it is an asyncio socket that :func:`watch` can await.

    Its endpoint has a number of its own.  pyzmq would name it after the socket's file
    descriptor, which a link replaced under load reuses while ZeroMQ still tears the old
    socket's monitor down: the new link's monitor then fails with "Address already in use"
    and the peer stays unreachable (seen with fifty daemons on two cores)."""
    monitor = sock.get_monitor_socket(
        events, addr=f"inproc://tarot-monitor-{os.getpid()}-{next(_MONITOR_NUMBERS)}"
    )
    assert isinstance(monitor, zmq.asyncio.Socket), "the mesh's context is an asyncio Context"
    return monitor


def frame_property(frame: zmq.Frame, name: str) -> str:
    """What ZeroMQ says of a frame's connection ("" if it cannot say): ``Peer-Address``, the
    IP address it came from; ``User-Id``, the CURVE key it was made under (z85)."""
    try:
        value = frame.get(name)
    except zmq.ZMQError:
        return ""
    return value if isinstance(value, str) else ""


def make_socket(context: zmq.asyncio.Context, limits: Limits, kind: int) -> zmq.Socket[Any]:
    """A plain socket, not an asyncio one: see :mod:`tarotd.zsocket` for why.  Made by the
    context, so that its ``destroy`` closes it too."""
    sock: zmq.Socket[Any] = context.socket(
        kind,
        socket_class=zmq.Socket,  # type: ignore[arg-type]  # pyzmq's stubs: the context's class
    )
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, limits.hwm)
    sock.setsockopt(zmq.RCVHWM, limits.hwm)
    sock.setsockopt(zmq.MAXMSGSIZE, 2 * limits.max_frame)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_DEADLINE_MS)
    return sock


def dealer(
    context: zmq.asyncio.Context,
    limits: Limits,
    endpoint: str,
    expected_key: bytes | None,
    curve: tuple[bytes, bytes] | None,
) -> tuple[zmq.Socket[Any], zmq.asyncio.Socket]:
    """A DEALER connecting to ``endpoint`` under a fresh random routing id, with the monitor of
    its handshakes (:func:`watch`)."""
    sock = make_socket(context, limits, zmq.DEALER)
    sock.setsockopt(zmq.ROUTING_ID, ROUTE_PREFIX + os.urandom(TOKEN_SIZE - 1))
    sock.setsockopt(zmq.IMMEDIATE, 1)  # no queueing for a dead connection: we retransmit
    sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
    sock.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
    if curve is not None:
        assert expected_key is not None, "connect() takes no link of unknown key under CURVE"
        public, secret = curve
        sock.setsockopt(zmq.CURVE_SERVERKEY, curve_public_key(expected_key))
        sock.setsockopt(zmq.CURVE_PUBLICKEY, public)
        sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
    try:
        handshakes = monitor(sock, HANDSHAKE_FAILURES | zmq.EVENT_HANDSHAKE_SUCCEEDED)
        sock.connect(endpoint)
    except zmq.ZMQError:
        sock.close(linger=0)  # no descriptor left behind (the caller sees the error)
        raise
    return sock, handshakes


async def watch(link: Link, curve: bool) -> None:
    """Say once why a link cannot connect, then stop watching.  ZeroMQ retries a failed
    handshake forever and silently: a daemon with ``curve`` and one without, or a link given
    a wrong key, would wait for each other with nothing in the log.  A mechanism mismatch
    is told at once; another failure (a peer that stopped mid-handshake, say) only after
    :data:`HANDSHAKE_FAILED_TIMES` in a row."""
    failures, mismatch = 0, False
    while not mismatch and failures < HANDSHAKE_FAILED_TIMES:
        event = parse_monitor_message(await link.monitor.recv_multipart())
        mismatch = event["value"] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
        failures = 0 if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED else failures + 1
    # The far end may hang up before we read why (a reset, no detail): then we can only
    # say what it may be.
    if mismatch:
        why = (
            "runs with --no-curve, unencrypted, and this one encrypts"
            if curve
            else "encrypts (CURVE, the default) and this one runs with --no-curve"
        )
        why += ": every member must encrypt, or every one run with --no-curve"
    elif curve and link.expected_key is not None:
        why = (
            f"fails the CURVE handshake: is it {fingerprint(link.expected_key)} (check the key "
            "given for it), and does it encrypt too (no --no-curve)?"
        )
    else:
        why = (
            "fails the handshake: does it encrypt (CURVE, the default: then every member "
            "must, and this one runs with --no-curve), or is it no tarotd?"
        )
    log.warning("mesh: cannot connect to %s: the daemon there %s", link.endpoint, why)
    link.sock.socket.disable_monitor()
    link.sock.rouse()  # any call on the socket may take in the FD's signal (tarotd.zsocket)
    link.monitor.close(linger=0)
