"""``tarotd``: the daemon's command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from protocol.bots import BOTS
from protocol.cheats import CHEATS
from protocol.identity import is_valid_public_key
from tarotd.daemon import Daemon, Options, StaticPeer
from tarotd.home import HomeError, default_home
from tarotd.mesh import FaultPlan
from tarotd.store import StoreError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tarotd", description="The French Tarot daemon: finds peers on the LAN, forms tables, deals with no trusted dealer.")
    parser.add_argument("--home", type=Path, default=None, help="home directory (default: $XDG_DATA_HOME/tarot)")
    parser.add_argument("--name", default=None, help="the name other players see")
    parser.add_argument("--listen", default="0.0.0.0:0", metavar="HOST:PORT", help="peer endpoint (port 0: any free port)")
    parser.add_argument("--peer", action="append", type=static_peer, default=[], metavar="[KEY@]HOST:PORT",
                        help="a peer to connect to (repeatable); KEY is its daemon's key, 64 hex digits, as its log "
                             "says at start (or `tarot status --json`): needed with --curve")
    parser.add_argument("--curve", action="store_true",
                        help="encrypt all traffic between members (ZeroMQ CURVE, keys derived from the identities); "
                             "every member must use it")
    parser.add_argument("--no-discovery", action="store_true", help="no LAN broadcast beacons: static peers only")
    parser.add_argument("--discovery-port", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--bot", choices=sorted(BOTS), default=None, help="play this daemon's own seat with a bot")
    parser.add_argument("--bots", type=int, default=0, metavar="N", help="host N extra bot seats")
    parser.add_argument("--table", default=None, metavar="NAME", help="join the table of this name (open it if nobody has)")
    parser.add_argument("--seats", type=int, choices=(3, 4, 5), default=5)
    parser.add_argument("--deals", type=int, default=None, metavar="N", help="play N deals, save them, and exit")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="wait this long for a seat at a deck step, or for one whose daemon is away")
    parser.add_argument("--decision-timeout", type=float, default=300.0, metavar="SECONDS",
                        help="wait this long for a player deciding (a bid, a card) at a daemon that answers")
    parser.add_argument("--think", type=float, default=0.0, metavar="SECONDS", help="bots take this long to decide")
    parser.add_argument("--autoplay", type=float, default=None, metavar="SECONDS",
                        help="with no client connected, a bot decides for you after this long")
    parser.add_argument("--max-tables", type=int, default=4, metavar="K", help="play at most K tables at once")
    parser.add_argument("--faults", type=fault_plan, default=None, metavar="SPEC",
                        help="inject transport faults, for tests and soaks: drop=P,duplicate=P,reorder=P,delay=MS,seed=N")
    parser.add_argument("--cheat", choices=sorted(CHEATS), default=None, metavar="KIND",
                        help="the cheat lab: this daemon's own seat runs this attack (honest peers must name it)")
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    # Tests only, never for play: every seed of this daemon's seats (and its lobby's table ids
    # and dealer coins, and its bots) derived from N, so that a test gets the same cards on every
    # run — and anyone who knows N knows them too.  Hidden, and refused without TAROT_TESTING=1.
    parser.add_argument("--deal-seed", type=int, default=None, metavar="N", help=argparse.SUPPRESS)
    return parser


def static_peer(text: str) -> StaticPeer:
    """``KEY@HOST:PORT`` or ``HOST:PORT`` → a :class:`StaticPeer` (``tcp://`` is optional)."""
    key_text, at, address = text.rpartition("@")
    endpoint = address if address.startswith("tcp://") else f"tcp://{address}"
    host, _, port = endpoint[len("tcp://"):].rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{address!r} is not HOST:PORT")
    if not at:
        return StaticPeer(endpoint)
    try:
        key = bytes.fromhex(key_text)
    except ValueError:
        key = b""
    if not is_valid_public_key(key):
        raise argparse.ArgumentTypeError(f"{key_text!r} is not a daemon's key: 64 hex digits, as its log says at start")
    return StaticPeer(endpoint, key)


def fault_plan(spec: str) -> FaultPlan:
    """``drop=0.05,duplicate=0.02,reorder=0.05,delay=200,seed=7`` → a :class:`FaultPlan`."""
    given: dict[str, float] = {}
    for item in filter(None, spec.split(",")):
        name, _, value = item.partition("=")
        if name not in ("drop", "duplicate", "reorder", "delay", "seed"):
            raise argparse.ArgumentTypeError(f"unknown fault {name!r}: use drop, duplicate, reorder, delay, seed")
        try:
            given[name] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}={value!r} is not a number") from None
    for name in ("drop", "duplicate", "reorder"):
        if not 0 <= given.get(name, 0) < 1:
            raise argparse.ArgumentTypeError(f"{name} is a probability, from 0 up to (not including) 1")
    return FaultPlan(given.get("drop", 0), given.get("duplicate", 0), given.get("reorder", 0),
                     given.get("delay", 0), int(given.get("seed", 0)))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.deal_seed is not None and os.environ.get("TAROT_TESTING") != "1":
        parser.error("--deal-seed makes every deal predictable: it is for tests only (TAROT_TESTING=1)")
    if args.curve and any(peer.key is None for peer in args.peer):
        parser.error("--curve encrypts to each peer's key: give it as --peer KEY@HOST:PORT, KEY being the 64 hex "
                     "digits that peer's daemon logs at start (\"its key\") or `tarot status --json` shows as \"key\"")
    home = args.home or default_home()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    options = Options(
        home=home,
        name=args.name or home.name,
        listen=args.listen if args.listen.startswith("tcp://") else f"tcp://{args.listen}",
        peers=args.peer,
        discovery=not args.no_discovery,
        discovery_port=args.discovery_port,
        bot=args.bot,
        bots=args.bots,
        table=args.table,
        seats=args.seats,
        deals=args.deals,
        timeout=args.timeout,
        decision_timeout=args.decision_timeout,
        think=args.think,
        autoplay=args.autoplay,
        max_tables=args.max_tables,
        faults=args.faults,
        cheat=args.cheat,
        deal_seed=args.deal_seed,
        curve=args.curve,
    )
    try:
        return asyncio.run(_run(Daemon(options)))
    except (HomeError, StoreError) as error:
        print(f"tarotd: {error}", file=sys.stderr)
        return 1


async def _run(daemon: Daemon) -> int:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, daemon.done.set)
    return await daemon.run()


if __name__ == "__main__":
    sys.exit(main())
