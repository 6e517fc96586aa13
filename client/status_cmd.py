"""``tarot status``: what the daemon sees — peers, tables, this seat's state."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from client.api import DaemonRefused, DaemonUnavailable, ask, default_home
from client.cli import SubParsers
from protocol.replication.identity import fingerprint


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser("status", help="peers seen, tables, this seat's state")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home = args.home or default_home()
    try:
        status = asyncio.run(ask(home, "status"))
    except (DaemonUnavailable, DaemonRefused) as error:
        print(f"tarot status: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(status, ensure_ascii=False))
        return 0
    print(
        f"{status['name']} [{status['fingerprint']}] on "
        f"{status['endpoint']}{', CURVE' if status.get('curve') else ', UNENCRYPTED (--no-curve)'}"
    )
    print(f"  key {status['key']} (others give it as --peer KEY@HOST:PORT)")
    for peer in status["peers"]:
        print(f"  peer {peer['name']} [{peer['fingerprint']}] {peer['state']}")
    connections = status.get("connections")
    if connections:
        print(
            f"  connections: {connections['incoming']} incoming (at most "
            f"{connections['incoming_bound']}), "
            f"{connections['links']} links of ours"
        )
    if (status.get("discovery") or {}).get("reaching") is False:
        print(
            "  discovery reaches no network: no interface but loopback is up with an IPv4 address "
            "(peers are reached only with --peer KEY@HOST:PORT)"
        )
    for endpoint in status.get("unreachable") or []:
        print(
            f"  --peer {endpoint}: unreachable (no daemon answers there; check the address, the "
            "port and the key)"
        )
    discovery_refused = status.get("discovery_refused") or {}
    refused = {
        cause: n
        for cause, n in (status.get("refused") or {}).items()
        if cause not in discovery_refused
    }
    _counts("refused from the network", refused)
    # A flood of beacons: what discovery left out or dropped, and the links it did not keep.
    _counts("discovery refused", discovery_refused)
    _counts("mesh", status.get("mesh") or {})  # frames dropped, sent again, not handled
    _guesses(status.get("guesses") or {})
    for table in status["tables"]:
        waiting = f", waiting for seats {table['waiting_for']}" if table["waiting_for"] else ""
        deal = int(table["deal"]) + 1  # the daemon counts from 0, players (and the client) from 1
        print(
            f"  table {table['table'][:8]}: {', '.join(table['seats'])} — deal {deal}, "
            f"{table['scored']} scored{waiting}"
        )
        if table.get("unsettled"):
            print(
                f"    deal {deal} unsettled here: this daemon timed out as many members "
                "as answered, so it ends nothing alone; it asks every member it reaches how the "
                "deal ended, and takes that row"
            )
        if table.get("rows_awaited"):
            print(
                "    the table is over; waiting until "
                f"{', '.join(table['rows_awaited'])} hold its last row (it serves it to them)"
            )
    return 0


def _guesses(guesses: dict[str, Any]) -> None:
    """The wrong proofs of our invite codes, and who is locked out for them."""
    if guesses.get("wrong") or guesses.get("refused"):
        print(
            f"  invite code: {guesses.get('wrong', 0)} wrong guesses, "
            f"{guesses.get('refused', 0)} knocks refused, {guesses.get('right', 0)} proved"
        )
    for entry in guesses.get("locked") or []:
        who = entry["who"] if entry["kind"] == "host" else fingerprint(bytes.fromhex(entry["who"]))
        print(
            f"    locked out: {entry['kind']} {who} after {entry['wrong']} wrong guesses "
            f"({entry['refused']} knocks refused since) — tarot unlock lets it in again"
        )


def _counts(what: str, counts: dict[str, int]) -> None:
    if counts:
        print(
            f"  {what}: "
            + ", ".join(
                f"{name.replace('_', ' ')} {count}" for name, count in sorted(counts.items())
            )
        )
