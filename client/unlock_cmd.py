"""``tarot unlock``: lift the lockouts of those who guessed our invite code wrong too often.

The daemon counts every wrong proof of the code of a table it opened, per key and per host,
makes them wait longer after each, and at last stops answering them (``tarot status`` lists
them under "locked out").  A player locked out by mistake — a code mistyped too often, or a
host shared with a guesser — is let in again by the opener with this command.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from client.api import DaemonRefused, DaemonUnavailable, ask, default_home
from client.cli import SubParsers


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "unlock", help="lift the lockouts of those who guessed our invite code wrong too often"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home = args.home or default_home()
    try:
        answer = asyncio.run(ask(home, "unlock"))
    except (DaemonUnavailable, DaemonRefused) as error:
        print(f"tarot unlock: {error}", file=sys.stderr)
        return 1
    lifted = answer.get("unlocked", 0) if isinstance(answer, dict) else 0
    print(
        f"{lifted} lockout{'s' if lifted != 1 else ''} lifted"
        if lifted
        else "nobody was locked out"
    )
    return 0
