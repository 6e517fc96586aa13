"""``python -m tarotd.discovery``: beacon under a throwaway identity for a while and print
the peers heard — the diagnostic of a LAN where daemons do not find each other."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import sys
import time
from collections.abc import Sequence

from protocol.replication.identity import Identity
from tarotd.discovery.beacon import MAX_NAME_LENGTH, TableInfo
from tarotd.discovery.endpoint import DISCOVERY_PORT, Announcement, Discovery
from tarotd.discovery.peers import DEFAULT_INTERVAL, Peer


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tarotd.discovery",
        description="Beacon under a throwaway identity for a while and print the peers heard.",
    )
    parser.add_argument("--name", default=socket.gethostname()[:MAX_NAME_LENGTH])
    parser.add_argument(
        "--peer-port", type=int, default=DISCOVERY_PORT + 1, help="ZeroMQ port to announce"
    )
    parser.add_argument("--port", type=int, default=DISCOVERY_PORT, help="discovery UDP port")
    parser.add_argument("--bind", default="0.0.0.0", help="address to bind the UDP socket to")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL)
    parser.add_argument("--expiry", type=float, default=None, help="default: 5 intervals")
    parser.add_argument("--listen-seconds", type=float, default=5.0)
    parser.add_argument("--no-broadcast", action="store_true", help="only send to --target")
    parser.add_argument(
        "--target", action="append", default=[], metavar="IP:PORT", help="extra destination"
    )
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
        print(
            f"  {peer.name:<24} {peer.fingerprint}  {peer.endpoint}  {len(peer.tables)} table(s)",
            flush=True,
        )


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
    # until the final report: nothing is printed after it (a peer's goodbye, say)
    watching = args.watch
    discovery.on_change(
        lambda peers: _report(peers, time.monotonic() - started, args.json) if watching else None
    )
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
