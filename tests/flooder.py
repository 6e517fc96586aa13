"""A hostile host of the simulated LAN (issue 26): it floods one daemon, and says what it did.

Run inside an attacker's namespace (``Lan.run``), from the repository's root::

    python tests/flooder.py connections --target 198.18.0.2 --count 11000 --sources 198.18.0.100,…
    python tests/flooder.py hellos --target 198.18.0.2 --key HEX --count 2560 --sources …
    python tests/flooder.py beacons --count 10000 --sources …

- ``connections``: ``count`` idle TCP connections to the peer port held open at once (no
  ZMTP greeting), spread over the source addresses, each opened again as the daemon shuts it;
- ``hellos``: ``count`` throw-away Ed25519 keys, each through the CURVE handshake (encrypted to
  the daemon's key, ``--key``), a ``hi``, the challenge, and a signed HELLO answering it;
- ``beacons``: ``count`` signed discovery beacons, each from a fresh key announcing a made-up
  peer port, broadcast to the LAN from the source addresses in turn.

The sources must be addresses of this host (``Lan.add_address``).  Once ``count`` is reached
(``reached_at``, wall clock) the flood goes on — fresh keys again, connections held — until
``--duration`` or SIGTERM; then one JSON line on stdout: the counts and rates.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import resource
import signal
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the packages

import zmq
import zmq.asyncio

from lab.lansim import BROADCAST
from protocol.replication.identity import Identity
from tarotd.discovery import DISCOVERY_PORT, TableInfo, encode_beacon, make_beacon
from tarotd.mesh import curve_public_key, curve_secret_key, decode, encode, encode_signed

PEER_PORT = 47400  #: the daemons' peer port on the simulated LAN (tests/lan.py)
ANSWER_WAIT = 1.0  #: seconds a HELLO waits for the daemon's challenge, then its answer


@dataclass
class Report:
    """What the flood did: printed as one JSON line at the end."""

    mode: str
    count: int  #: what was asked: connections at once, keys or beacons
    sources: int
    reached_at: float | None = None  #: wall clock when ``count`` was first reached
    seconds: float = 0.0
    sent: int = 0  #: connections opened, HELLOs signed or beacons sent, in all
    rate: float = 0.0  #: ``sent`` a second
    extra: dict[str, int] = field(default_factory=dict)

    def reached(self) -> None:
        if self.reached_at is None:
            self.reached_at = time.time()


class Stop:
    """Set by SIGTERM or the duration: every flood loop checks it."""

    def __init__(self, duration: float | None) -> None:
        self.until = None if duration is None else time.monotonic() + duration
        self.signalled = False
        signal.signal(signal.SIGTERM, self._signal)
        signal.signal(signal.SIGINT, self._signal)

    def _signal(self, signum: int, frame: FrameType | None) -> None:
        self.signalled = True

    def __bool__(self) -> bool:
        return self.signalled or (self.until is not None and time.monotonic() >= self.until)


# --------------------------------------------------------------------------- connections


def _is_gone(sock: socket.socket) -> bool:
    """Whether the far end shut this connection (or refused it)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _is_established(sock: socket.socket) -> bool:
    try:
        sock.getpeername()
    except OSError:
        return False
    return True


def flood_connections(
    report: Report, target: str, port: int, sources: Sequence[str], stop: Stop
) -> None:
    held: list[socket.socket] = []
    shut = peak_established = 0
    turn = itertools.cycle(sources)
    try:
        while not stop:
            alive = []
            for sock in held:
                if _is_gone(sock):
                    sock.close()
                    shut += 1
                else:
                    alive.append(sock)
            held = alive
            while len(held) < report.count and not stop:
                sock = socket.socket()
                try:
                    sock.bind((next(turn), 0))
                    sock.setblocking(False)
                    sock.connect_ex((target, port))
                except OSError:
                    sock.close()
                    break
                held.append(sock)
                report.sent += 1
            if len(held) >= report.count:
                report.reached()
            peak_established = max(peak_established, sum(_is_established(sock) for sock in held))
            time.sleep(0.5)
    finally:
        for sock in held:
            sock.close()
    report.extra = {"shut_by_the_daemon": shut, "peak_established": peak_established}


# --------------------------------------------------------------------------- hellos


async def _say_hello(
    context: zmq.asyncio.Context, source: str, target: str, port: int, victim: bytes
) -> str:
    """One throw-away key's HELLO; what became of it: "acked", "unanswered" (refused: the
    daemon says nothing) or "no-challenge" (no handshake, or no challenge)."""
    identity = Identity.generate()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.curve_secretkey = curve_secret_key(identity)
    sock.curve_publickey = curve_public_key(identity.public_key)
    sock.curve_serverkey = curve_public_key(victim)
    try:
        sock.connect(f"tcp://{source}:0;{target}:{port}")
        await sock.send(encode("hi", {}))
        try:
            frames = await asyncio.wait_for(sock.recv_multipart(), ANSWER_WAIT)
        except TimeoutError:
            return "no-challenge"
        given = decode(frames[0], frozenset({"challenge"}))
        if given is None:
            return "no-challenge"
        await sock.send(
            encode_signed(
                identity,
                "hello",
                {
                    "key": identity.public_key,
                    "to": given["key"],
                    "name": "intrus",
                    "endpoint": f"tcp://{source}:{random.randint(1024, 65535)}",
                    "challenge": given["c"],
                    "nonce": os.urandom(16),
                    "time": int(time.time()),
                    "boot": os.urandom(16),
                },
            )
        )
        try:
            answer = await asyncio.wait_for(sock.recv_multipart(), ANSWER_WAIT)
        except TimeoutError:
            return "unanswered"
        return "acked" if decode(answer[0], frozenset({"hello-ack"})) is not None else "unanswered"
    finally:
        sock.close(linger=0)


async def _hellos(
    report: Report,
    target: str,
    port: int,
    sources: Sequence[str],
    victim: bytes,
    stop: Stop,
    concurrency: int,
) -> None:
    context = zmq.asyncio.Context()
    outcomes: dict[str, int] = {}
    turn = itertools.cycle(sources)

    async def worker() -> None:
        while not stop:
            report.sent += 1
            outcome = await _say_hello(context, next(turn), target, port, victim)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if report.sent - outcomes.get("no-challenge", 0) >= report.count:
                report.reached()

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        context.destroy(linger=0)
    report.extra = outcomes


# --------------------------------------------------------------------------- beacons


def flood_beacons(
    report: Report,
    sources: Sequence[str],
    rate: float,
    stop: Stop,
    broadcast: str = BROADCAST,
    table: str | None = None,
) -> None:
    """``table``: every beacon also announces an open table of that name (three seats), as
    an attacker who read the victim's own beacons would."""
    tables = () if table is None else (TableInfo(table, 3, 1, True, None),)
    senders = []
    for source in sources:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.bind((source, 0))
        senders.append(sock)
    errors = 0
    start = time.monotonic()
    try:
        for sock in itertools.cycle(senders):
            if stop:
                break
            identity = Identity.generate()
            beacon = make_beacon(
                f"intrus{report.sent}",
                identity.public_key,
                random.randint(1024, 65535),
                tables,
                False,
                int(time.time()),
            )
            try:
                sock.sendto(encode_beacon(beacon, identity), (broadcast, DISCOVERY_PORT))
            except OSError:
                errors += 1
            report.sent += 1
            if report.sent >= report.count:
                report.reached()
            ahead = start + report.sent / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    finally:
        for sock in senders:
            sock.close()
    report.extra = {"send_errors": errors}


# --------------------------------------------------------------------------- main


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="flooder", description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("connections", "hellos", "beacons"))
    parser.add_argument("--target", default=None, help="the victim's address (connections, hellos)")
    parser.add_argument("--port", type=int, default=PEER_PORT, help="the victim's peer port")
    parser.add_argument("--key", default=None, help="the victim's identity key, in hex (hellos)")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument(
        "--sources", required=True, help="this host's addresses to send from, comma-separated"
    )
    parser.add_argument("--rate", type=float, default=1000.0, help="beacons a second")
    parser.add_argument("--broadcast", default=BROADCAST, help="where beacons go (beacons)")
    parser.add_argument("--table", default=None, help="a table name every beacon announces")
    parser.add_argument("--concurrency", type=int, default=128, help="HELLOs under way at once")
    parser.add_argument(
        "--duration", type=float, default=None, help="seconds at most (default: until SIGTERM)"
    )
    args = parser.parse_args(argv)
    if args.mode != "beacons" and args.target is None:
        parser.error(f"{args.mode} needs --target")
    if args.mode == "hellos" and args.key is None:
        parser.error("hellos need the victim's --key (CURVE encrypts to it)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # one descriptor a connection
    sources = args.sources.split(",")
    report = Report(args.mode, args.count, len(sources))
    stop = Stop(args.duration)
    start = time.monotonic()
    if args.mode == "connections":
        flood_connections(report, args.target, args.port, sources, stop)
    elif args.mode == "hellos":
        asyncio.run(
            _hellos(
                report,
                args.target,
                args.port,
                sources,
                bytes.fromhex(args.key),
                stop,
                args.concurrency,
            )
        )
    else:
        flood_beacons(report, sources, args.rate, stop, args.broadcast, args.table)
    report.seconds = round(time.monotonic() - start, 1)
    report.rate = round(report.sent / max(report.seconds, 0.1), 1)
    out: dict[str, Any] = asdict(report)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
