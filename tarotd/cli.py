"""``tarotd``: the daemon's command line.

Every value is checked before anything starts — no home made, no port bound — by
:func:`parse`: a wrong one ends the command with one line on stderr, ``tarotd: error:
argument --OPTION: what is wrong: what it takes``, and exit status 2, argparse's convention.
Each option's type says what it accepts (a port 0–65535, seconds above 0, a probability
below 1, a name a beacon can carry); what an option cannot judge alone — against another
option, or the name a daemon takes from its home — :func:`_conflict` does.  Only the system
can say whether the address of ``--listen`` is one of this machine's and its port free: that
is found when the daemon binds it, and said the same way (:class:`~tarotd.daemon.OptionError`).

Nothing is taken modulo or rounded into range: a port of 99999 is refused, not bound as
34463 (ZeroMQ would), and neither a negative count nor a non-finite number gets through.
``scripts/play`` checks its own options with :func:`parse` too, before it starts anything.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NoReturn

from protocol.bots.bots import BOTS
from protocol.deck.group import binding_file, use_scheduler
from protocol.plugins import cheat_lab, not_installed
from protocol.replication.identity import is_valid_public_key
from protocol.replication.manifest import DEFAULT_SILENCE, SilenceCost
from tarotd.daemon import Daemon, OptionError, Options, StaticPeer, bot_name
from tarotd.discovery import MAX_NAME_LENGTH, MAX_SEATS, BeaconError, check_text
from tarotd.home import (
    Home,
    HomeError,
    Unwritable,
    default_home,
    load_or_create_identity,
    path_problem,
)
from tarotd.lobby import Invite
from tarotd.mesh import MAX_ENDPOINT, WILDCARD_HOSTS, FaultPlan
from tarotd.store import StoreError
from tarotd.workers import DAEMON

#: A player's name leaves room for the names of the bots its daemon may host, NAME-bot1 to
#: NAME-bot4, which the other daemons take up to the same 64 characters.
MAX_PLAYER_NAME: Final = MAX_NAME_LENGTH - len(bot_name("", MAX_SEATS - 1))


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (the usage is long; the reason must show)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def build_parser(prog: str = "tarotd") -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="The French Tarot daemon: finds peers on the LAN, forms tables, deals with no "
        "trusted dealer.",
    )
    parser.add_argument(
        "--home",
        type=home_directory,
        default=None,
        metavar="DIR",
        help="home directory (default: $XDG_DATA_HOME/tarot)",
    )
    parser.add_argument(
        "--name",
        type=player_name,
        default=None,
        help=f"the name other players see, 1 to {MAX_PLAYER_NAME} characters (default: the home's "
        "directory name)",
    )
    parser.add_argument(
        "--listen",
        type=listen_endpoint,
        default="tcp://0.0.0.0:0",
        metavar="HOST:PORT",
        help="peer endpoint: an address of this machine (0.0.0.0: all) and a port (0: any free "
        "port)",
    )
    parser.add_argument(
        "--peer",
        action="append",
        type=static_peer,
        default=[],
        metavar="KEY@HOST:PORT",
        help="a peer to connect to (repeatable); KEY is its daemon's key, 64 hex digits, as "
        "`tarotd --print-key` prints it in that peer's home (or its log at start, or `tarot "
        "status`): "
        "the traffic is encrypted to it (HOST:PORT alone only with --no-curve)",
    )
    encryption = parser.add_mutually_exclusive_group()
    encryption.add_argument(
        "--no-curve",
        action="store_true",
        help="for debugging only: no encryption between members, so that anyone on the LAN reads "
        "the "
        "whole public record of the game (names, tables, bids, cards played, scores) and the "
        "HELLOs, and whoever can also send on it may speak in a member's session; every member "
        "must use it, or none",
    )
    encryption.add_argument(
        "--curve",
        action="store_true",
        help="encrypt the traffic between members (ZeroMQ CURVE, keys derived from the "
        "identities): "
        "the default, accepted so that older command lines still work",
    )
    parser.add_argument(
        "--print-key",
        action="store_true",
        help="print this daemon's key (the identity of --home, made if the home is new), as "
        "others give "
        "it in --peer KEY@HOST:PORT, and exit",
    )
    parser.add_argument(
        "--no-discovery", action="store_true", help="no LAN broadcast beacons: static peers only"
    )
    parser.add_argument(
        "--discovery-port", type=whole(1, 65535), default=None, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--bot", choices=sorted(BOTS), default=None, help="play this daemon's own seat with a bot"
    )
    parser.add_argument(
        "--bots",
        type=whole(
            0,
            MAX_SEATS - 1,
            f" (a table has at most {MAX_SEATS} seats, this daemon's own among them)",
        ),
        default=0,
        metavar="N",
        help="host N extra bot seats",
    )
    parser.add_argument(
        "--table",
        type=table_name,
        default=None,
        metavar="NAME",
        help="join the table of this name (open it if nobody has)",
    )
    parser.add_argument(
        "--seats",
        type=int,
        choices=(3, 4, 5),
        default=None,
        help=f"the seats of the --table (default {MAX_SEATS})",
    )
    parser.add_argument(
        "--invite",
        type=invite,
        default=None,
        metavar="CODE",
        help="the --table's invite code, as its opener's log or screen shows it: joins it though "
        "its daemon is none of your --peer (without it, this daemon draws a code and shows it)",
    )
    parser.add_argument(
        "--deals",
        type=whole(1),
        default=None,
        metavar="N",
        help="play N deals, save them, and exit",
    )
    parser.add_argument(
        "--timeout",
        type=seconds(),
        default=30.0,
        metavar="SECONDS",
        help="wait this long for a seat at a deck step, or for one whose daemon is away",
    )
    parser.add_argument(
        "--decision-timeout",
        type=seconds(),
        default=300.0,
        metavar="SECONDS",
        help="wait this long for a player deciding (a bid, a card) at a daemon that answers",
    )
    parser.add_argument(
        "--think",
        type=seconds(zero=True),
        default=0.0,
        metavar="SECONDS",
        help="bots take this long to decide",
    )
    parser.add_argument(
        "--autoplay",
        type=seconds(),
        default=None,
        metavar="SECONDS",
        help="with no client connected, a bot decides for you after this long",
    )
    parser.add_argument(
        "--max-tables", type=whole(1), default=4, metavar="K", help="play at most K tables at once"
    )
    parser.add_argument(
        "--silence",
        choices=[cost.value for cost in SilenceCost],
        default=DEFAULT_SILENCE.value,
        help="what a seat that stops answering before the reveal costs at the tables this daemon "
        "opens, and the only rule it joins a table under: after-seeing (the default: the "
        "100-point penalty row once it could read its hand, nothing before — leaving after "
        "seeing one's cards is no free redeal, a cable cut before is no crime), nothing, or "
        "penalty (always, as a proven deviation); every member signs it",
    )
    parser.add_argument(
        "--faults",
        type=fault_plan,
        default=None,
        metavar="SPEC",
        help="inject transport faults, for tests and soaks: "
        "drop=P,duplicate=P,reorder=P,delay=MS,seed=N",
    )
    lab = cheat_lab()  # the cheat lab's kinds, for --cheat's choices; without it, refused
    parser.add_argument(
        "--cheat",
        choices=lab.kinds if lab is not None else None,
        type=str if lab is not None else _no_cheat_lab,
        default=None,
        metavar="KIND",
        help="the cheat lab: this daemon's own seat runs this attack (honest peers must name it)",
    )
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    # Tests only, never for play: every seed of this daemon's seats (and its lobby's table ids
    # and dealer coins, and its bots) derived from N, so that a test gets the same cards on every
    # run — and anyone who knows N knows them too.  Hidden, and refused without TAROT_TESTING=1.
    parser.add_argument("--deal-seed", type=int, default=None, metavar="N", help=argparse.SUPPRESS)
    return parser


# --- What each option takes -------------------------------------------------------------


def _no_cheat_lab(text: str) -> str:
    """``--cheat`` where the cheat lab is not installed."""
    raise argparse.ArgumentTypeError(not_installed("the cheat lab"))


def whole(low: int, high: int | None = None, why: str = "") -> Callable[[str], int]:
    """The argparse type of a whole number from ``low`` (to ``high``);
    ``why`` explains the bounds."""
    accepted = (
        f"a whole number from {low} to {high}"
        if high is not None
        else f"a whole number, {low} or more"
    )

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number: give {accepted}{why}"
            ) from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range: give {accepted}{why}")
        return value

    return parse


def seconds(zero: bool = False) -> Callable[[str], float]:
    """The argparse type of a duration: finite seconds, above 0 (or 0 too, with ``zero``).
    ``inf`` would never time out and ``nan`` compares false with everything."""
    accepted = "0 or more" if zero else "more than 0"

    def parse(text: str) -> float:
        value = _finite(text)
        if value is None:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number of seconds: give one {accepted}, such as 30 or 0.5"
            )
        if value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(
                f"{text} is out of range: give a number of seconds {accepted}, such as 30 or 0.5"
            )
        return value

    return parse


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def home_directory(text: str) -> Path:
    """``--home``: a directory, made at start if it does not exist.  Not empty: that would be
    the current directory, whatever it is."""
    if not text:
        raise argparse.ArgumentTypeError("empty: give a directory (made if it does not exist)")
    problem = path_problem(Path(text))
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def _text(what: str, longest: int, why: str = "") -> Callable[[str], str]:
    """The argparse type of a name a beacon can carry (:func:`~tarotd.discovery.check_text`),
    of at most ``longest`` characters, and not blank: the lobby shows nothing for it."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{what} is empty: give 1 to {longest} characters")
        if len(text) > longest:
            raise argparse.ArgumentTypeError(
                f"{what} has {len(text)} characters: give at most {longest}{why}"
            )
        try:
            check_text(what, text)
        except BeaconError as error:
            raise argparse.ArgumentTypeError(f"{error}: give one without it") from None
        return text

    return parse


def invite(text: str) -> str:
    """``--invite``: an invite code, normalised (:func:`~tarotd.lobby.invite_code`), and strong
    enough: one a player made up that repeats, counts or is digits only is refused with the
    reason (:func:`~tarotd.lobby.weakness`) — it is what a guesser tries first."""
    try:
        return Invite.parse(text).code
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


player_name = _text(
    "the name", MAX_PLAYER_NAME, ", to leave room for the names of its bots, NAME-bot1 to NAME-bot4"
)
table_name = _text("the table's name", MAX_NAME_LENGTH)


def _endpoint(text: str, lowest: int, ports: str) -> tuple[str, str]:
    """``HOST:PORT`` (``tcp://`` optional) → its host and ``tcp://HOST:PORT``, the port from
    ``lowest`` to 65535 (``ports`` says so to the user).  Digits only, and in range: ZeroMQ
    takes the port modulo 65,536."""
    host, colon, port = text.removeprefix("tcp://").rpartition(":")
    if (
        not colon
        or not host
        or any(char.isspace() for char in host)
        or not re.fullmatch("[0-9]+", port)
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT, such as 192.168.1.20:47400")
    if not lowest <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"port {int(port)} is out of range: give {ports}")
    endpoint = f"tcp://{host}:{int(port)}"
    if len(endpoint) > MAX_ENDPOINT:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r}… is too long for an endpoint (at most {MAX_ENDPOINT} characters)"
        )
    return host, endpoint


def listen_endpoint(text: str) -> str:
    """``--listen HOST:PORT`` → ``tcp://HOST:PORT``; port 0 is any free port."""
    return _endpoint(text, 0, "1 to 65535, or 0 for any free port")[1]


def static_peer(text: str) -> StaticPeer:
    """``KEY@HOST:PORT`` or ``HOST:PORT`` → a :class:`StaticPeer` (``tcp://`` is optional)."""
    key_text, at, address = text.rpartition("@")
    host, endpoint = _endpoint(address, 1, "1 to 65535, the port the peer listens on")
    if host in WILDCARD_HOSTS:
        raise argparse.ArgumentTypeError(
            f"{host} is every address of a machine, none to connect to: give the peer's own"
        )
    if not at:
        return StaticPeer(endpoint)
    try:
        key = bytes.fromhex(key_text)
    except ValueError:
        key = b""
    if not is_valid_public_key(key):
        raise argparse.ArgumentTypeError(
            f"{key_text!r} is not a daemon's key: 64 hex digits, as its log says at start"
        )
    return StaticPeer(endpoint, key)


def _probability(item: str, text: str) -> float:
    value = _finite(text)
    if value is None or not 0 <= value < 1:
        raise argparse.ArgumentTypeError(
            f"{item}: a probability is a number from 0 up to (not including) 1, such as 0.05"
        )
    return value


def _delay(item: str, text: str) -> float:
    value = _finite(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(
            f"{item}: a delay is a number of milliseconds, 0 or more, such as 200"
        )
    return value


def _seed(item: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{item}: a seed is a whole number, such as 7") from None


#: Each fault of ``--faults``, with what its value must be.
_FAULTS: Final[dict[str, Callable[[str, str], float]]] = {
    "drop": _probability,
    "duplicate": _probability,
    "reorder": _probability,
    "delay": _delay,
    "seed": _seed,
}


def fault_plan(spec: str) -> FaultPlan:
    """``drop=0.05,duplicate=0.02,reorder=0.05,delay=200,seed=7`` → a :class:`FaultPlan`."""
    given: dict[str, float] = {}
    for item in filter(None, spec.split(",")):
        name, _, value = item.partition("=")
        check = _FAULTS.get(name)
        if check is None:
            raise argparse.ArgumentTypeError(
                f"unknown fault {name!r}: use {', '.join(_FAULTS)}, as in drop=0.05,delay=200"
            )
        if name in given:
            raise argparse.ArgumentTypeError(f"{name} is given twice")
        given[name] = check(item, value)
    return FaultPlan(
        given.get("drop", 0.0),
        given.get("duplicate", 0.0),
        given.get("reorder", 0.0),
        given.get("delay", 0.0),
        int(given.get("seed", 0)),
    )


# --- The command line as a whole ----------------------------------------------------------


def parse(argv: Sequence[str] | None = None, prog: str = "tarotd") -> argparse.Namespace:
    """The command line, every value checked, before anything is made or bound: on the first
    wrong one, one line on stderr and ``SystemExit(2)``.  ``prog`` names the command in that
    line (``scripts/play`` checks the options it passes on with it)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    args.home = args.home or default_home()
    if args.name is None:
        try:
            args.name = player_name(args.home.name)
        except argparse.ArgumentTypeError as error:
            parser.error(
                f"--name is not given, and the name of the home's directory, {args.home.name!r}, "
                "cannot stand for it: "
                f"{error}; give --name NAME"
            )
    problem = _conflict(args)
    if problem is not None:
        parser.error(problem)
    return args


def _conflict(args: argparse.Namespace) -> str | None:
    """What is wrong with the options together, though each is right alone; None if nothing."""
    if args.deal_seed is not None and os.environ.get("TAROT_TESTING") != "1":
        return "--deal-seed makes every deal predictable: it is for tests only (TAROT_TESTING=1)"
    if not args.no_curve and any(peer.key is None for peer in args.peer):
        return (
            "the traffic is encrypted to each peer's key (the default): give it as --peer "
            "KEY@HOST:PORT, KEY being the "
            "64 hex digits `tarotd --print-key` prints in that peer's home (its log says them "
            'too at start, "its key", '
            "and `tarot status`); or --no-curve, unencrypted, to connect to whatever key proves "
            "itself at HOST:PORT"
        )
    if args.invite is not None and args.table is None:
        return (
            "--invite is the code of the --table NAME: give both "
            "(the client takes the code of a table it joins)"
        )
    if args.seats is not None and args.table is None:
        return (
            "--seats is the number of seats at the --table NAME: give both, or neither "
            "(the client chooses the seats of the tables it opens)"
        )
    seats = args.seats or MAX_SEATS
    if args.table is not None and args.bots >= seats:
        return (
            f"--bots {args.bots} and this daemon's own seat make {args.bots + 1} seats at a table "
            f"of {seats}: "
            f"give --bots 0 to {seats - 1}"
        )
    for option, value, what in (
        ("--think", args.think, "a bot would be timed out before it decides"),
        ("--autoplay", args.autoplay, "your seat would be timed out before a bot stands in"),
    ):
        if value is not None and value >= args.decision_timeout:
            return (
                f"{option} {value:g} is not shorter than "
                f"--decision-timeout {args.decision_timeout:g}: {what}"
            )
    return None


def _options(args: argparse.Namespace) -> Options:
    return Options(
        home=args.home,
        name=args.name,
        listen=args.listen,
        peers=args.peer,
        discovery=not args.no_discovery,
        discovery_port=args.discovery_port,
        bot=args.bot,
        bots=args.bots,
        table=args.table,
        seats=args.seats or MAX_SEATS,
        invite=args.invite,
        deals=args.deals,
        timeout=args.timeout,
        decision_timeout=args.decision_timeout,
        think=args.think,
        autoplay=args.autoplay,
        max_tables=args.max_tables,
        faults=args.faults,
        cheat=args.cheat,
        deal_seed=args.deal_seed,
        curve=not args.no_curve,
        silence=SilenceCost(args.silence),
    )


def main(argv: list[str] | None = None) -> int:
    if (loaded := binding_file()) is not None:  # rbcl's copy of libsodium, loaded already
        with contextlib.suppress(OSError):
            os.unlink(loaded)
    args = parse(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        # before the daemon starts, so that the others can list it in their --peer
        if args.print_key:
            print(load_or_create_identity(Home(args.home)).public_key.hex())
            return 0
        use_scheduler(DAEMON)  # the deck's arithmetic over the cores, its idle checks niced
        return asyncio.run(_run(Daemon(_options(args))))
    except OptionError as error:
        print(f"tarotd: error: {error}", file=sys.stderr)
        return 2
    except (HomeError, StoreError, OSError) as error:
        # A home the system will not let us write is the player's to mend, like a bad option:
        # one line and status 2.  Any other OSError is a bug, for its traceback.
        unwritable = Unwritable.of(error, args.home)
        if unwritable is not None:
            print(f"tarotd: {unwritable.advice(args.home, error)}", file=sys.stderr)
            return 2
        if isinstance(error, OSError):
            raise
        print(f"tarotd: {error}", file=sys.stderr)
        return 1


async def _run(daemon: Daemon) -> int:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, daemon.interrupt)
    return await daemon.run()


if __name__ == "__main__":
    sys.exit(main())
