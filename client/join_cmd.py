"""``tarot join [CODE] --name NAME``: one command per player at a club night.

It finds the player's daemon running on the home, or starts one in the background — detached
from the terminal (a session of its own, so that closing the window or Ctrl-C in the client
leaves it playing), its log appended to ``HOME/tarotd.log`` — then joins the table whose
invite code is CODE as soon as the daemon hears of it on the LAN, and opens the client on it.
Without CODE it opens the client's lobby (the tables and the events heard on the LAN: Enter on
the club's event registers). Typed again later, it finds the same daemon and only opens the
client.

What it cannot do is said in one line: a wrong option or code, or a daemon that cannot start
(its own error, from its log), exit with status 2, before any table is joined; no table of
that code heard within ``--wait`` seconds exits 1, the daemon left running for the player to
type the code in the lobby (``i``) when the opener's table shows up.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

from client.api import DaemonRefused, DaemonUnavailable, ask, default_home
from client.cli import SubParsers
from protocol.localapi import StateDocument

#: How long a daemon just started may take to answer on its socket (a loaded laptop imports
#: the crypto libraries and opens its store first).
START_TIMEOUT: Final = 60.0
POLL: Final = 0.2
LOG_NAME: Final = "tarotd.log"  #: in the home: the log of a daemon ``tarot join`` started


class CannotStart(Exception):
    """The daemon could not be started (or did not answer): the text says why, for the player."""


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "join",
        help="one command per player: start your daemon in the background (or find it), join "
        "the table of CODE, open the client",
        description="Start your daemon in the background (or find it running on --home), join "
        "the table whose invite code is CODE when it is heard on the LAN, and open the client. "
        "Without CODE, the client opens on the lobby: the tables and events on the LAN.",
    )
    parser.add_argument(
        "code",
        nargs="?",
        default=None,
        metavar="CODE",
        help="the table's invite code, as its opener's screen shows it (such as 7KQ2-M9XD)",
    )
    parser.add_argument(
        "--name",
        default=None,
        help="your name at the tables, when the daemon starts (default: your login name)",
    )
    parser.add_argument(
        "--tarotd",
        default="",
        metavar="OPTIONS",
        help='more options for the daemon, when it starts, in one argument after "=": such as '
        '--tarotd="--listen 0.0.0.0:47475" (a fixed peer port, to open in a firewall) or '
        '--tarotd="--no-discovery --peer KEY@HOST:PORT" (see tarotd --help)',
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="how long to look for the table of CODE on the LAN (default 120)",
    )
    parser.add_argument(
        "--no-client",
        action="store_true",
        help="join, and leave the client closed (open it later with: tarot)",
    )
    parser.add_argument(
        "--lang", choices=("fr", "en"), default=argparse.SUPPRESS, help="the client's language"
    )
    parser.set_defaults(run=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 86_400:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 86400")
    return value


def run(args: argparse.Namespace) -> int:
    home: Path = args.home or default_home()
    name = args.name or _login_name()
    code = _code(args.code) if args.code is not None else None
    daemon = _daemon_options(home, name, args.tarotd)  # checked before anything starts
    try:
        status = _status(home)
        if status is None:
            _start(home, daemon)
        elif args.name is not None and status.get("name") != args.name:
            print(
                f"tarot join: your daemon on {home} already runs as {status.get('name')!r}; "
                f"--name {args.name} is for a daemon that starts",
                file=sys.stderr,
            )
    except CannotStart as error:
        print(f"tarot join: {error}", file=sys.stderr)
        return 2
    if code is not None:
        found = _join(home, code, args.wait)
        if found is not None:
            print(f"tarot join: {found}", file=sys.stderr)
            return 1
    if args.no_client:
        print(
            f"tarot join: your daemon plays on in the background (its log: {home / LOG_NAME}); "
            f"open the client with: tarot --home {home}"
        )
        return 0
    from client.play_cmd import run as play

    return play(args)


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name to be had (a container): tarotd's own default
        return "joueur"


def _code(text: str) -> str:
    """CODE as the daemon shows it (``7KQ2-M9XD``), or a usage error saying what one is."""
    from client.cli import UsageError
    from tarotd.lobby import invite_code

    try:
        code = invite_code(text)
    except ValueError as error:
        raise UsageError(f"argument CODE: {error}") from None
    return f"{code[:4]}-{code[4:]}"


def _daemon_options(home: Path, name: str, more: str) -> list[str]:
    """The daemon's command line, checked by ``tarotd``'s own rules (a name too long, a home
    whose socket path would not fit, an option it does not know): a wrong one exits 2 here,
    before anything starts."""
    from client.cli import UsageError
    from tarotd.cli import parse

    try:
        extra = shlex.split(more)
    except ValueError as error:
        raise UsageError(f"argument --tarotd: {error}") from None
    for given in ("--home", "--name"):
        if any(word == given or word.startswith(given + "=") for word in extra):
            raise UsageError(f"argument --tarotd: give {given} to tarot join itself")
    argv = ["--home", str(home), "--name", name, *extra]
    parse(argv, prog="tarot join")
    return argv


def _status(home: Path) -> dict[str, Any] | None:
    """The running daemon's status, or None if none runs on ``home``."""
    try:
        status: dict[str, Any] = asyncio.run(ask(home, "status", timeout=10.0))
    except DaemonUnavailable as error:
        if "another user" in str(error) or "did not answer" in str(error):
            raise CannotStart(str(error)) from None
        return None
    except DaemonRefused as error:  # its clients' places all taken: it runs all the same
        return {"refused": str(error)}
    return status


def _start(home: Path, daemon: list[str]) -> None:
    """Start ``tarotd`` on ``home`` in the background, and wait until it answers on its socket
    (:class:`CannotStart` with its own last words if it stops first, or if it never does)."""
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        log_path = home / LOG_NAME
        with open(log_path, "ab") as log:
            start = log.tell()
            process = subprocess.Popen(
                [sys.executable, "-m", "tarotd.cli", *daemon],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=home,
                start_new_session=True,  # not in the terminal's session: its signals are not ours
            )
    except OSError as error:
        raise CannotStart(f"cannot start your daemon on {home}: {error}") from None
    print(
        f"tarot join: your daemon starts in the background (its log: {log_path})", file=sys.stderr
    )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = _last_words(log_path, start)
            raise CannotStart(
                f"your daemon did not start (exit status {process.returncode}): {said} — its "
                f"log: {log_path}"
            )
        if _answers(home):
            return
        time.sleep(POLL)
    process.terminate()
    raise CannotStart(
        f"your daemon did not answer within {START_TIMEOUT:.0f} s, and was stopped; its log: "
        f"{log_path}"
    )


def _answers(home: Path) -> bool:
    try:
        asyncio.run(ask(home, "status", timeout=5.0))
    except (DaemonUnavailable, DaemonRefused):
        return False
    return True


def _last_words(log_path: Path, start: int) -> str:
    """The daemon's error: the last line it wrote since it started (a traceback's last)."""
    with open(log_path, "rb") as log:
        log.seek(start)
        lines = log.read().decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "it said nothing"


def _join(home: Path, code: str, wait: float) -> str | None:
    """Join the table that proves ``code`` once the daemon hears of it; None once joined (or
    already at it), else why not, for the player."""
    try:
        seated: StateDocument = asyncio.run(ask(home, "state"))
    except (DaemonUnavailable, DaemonRefused) as error:
        return f"your daemon stopped answering: {error}"
    if seated["table"] is not None and not seated["finished"]:
        # Typed again at the table (a finished one, the evening's last, is no reason to wait).
        print(
            f"tarot join: your daemon is at a table already ({seated['name']}): opening it",
            file=sys.stderr,
        )
        return None
    tried: set[str] = set()
    said = False
    deadline = time.monotonic() + wait
    while True:
        try:
            tables: list[dict[str, Any]] = asyncio.run(ask(home, "tables"))
            status: dict[str, Any] = asyncio.run(ask(home, "status"))
        except (DaemonUnavailable, DaemonRefused) as error:
            return f"your daemon stopped answering: {error}"
        for table in tables:
            if table.get("invite") == code and status.get("name") in table.get("members", []):
                return None  # joined already: this command typed again
        for table in tables:
            if table.get("state") != "open" or table["table"] in tried:
                continue
            tried.add(table["table"])
            try:
                asyncio.run(ask(home, "join", table=table["table"], invite=code))
            except DaemonRefused as error:
                if "is not the invite code" in str(error):
                    continue  # another table: the code proves the one its opener holds
                return f"the table {table.get('name')!r} of {code} refused: {error}"
            except DaemonUnavailable as error:
                return f"your daemon stopped answering: {error}"
            print(f"tarot join: joined the table {table.get('name')!r}", file=sys.stderr)
            return None
        if time.monotonic() >= deadline:
            return (
                f"no table with the invite code {code} heard on the LAN in {wait:.0f} s: is its "
                "opener's tarotd running, on this network, with UDP port 47474 open? Your daemon "
                f"runs on: open the client (tarot --home {home}) and type the code there (i)"
            )
        if not said:
            print(f"tarot join: looking for the table of {code} on the LAN…", file=sys.stderr)
            said = True
        time.sleep(POLL * 2)
