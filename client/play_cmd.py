"""``tarot`` / ``tarot play``: the full-screen terminal client on the daemon of ``--home``."""

from __future__ import annotations

import argparse
import asyncio
import sys

from client.api import DaemonUnavailable, ask, default_home
from client.cli import SubParsers


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "play", help="the terminal client: the lobby and your seat at the table (the default)"
    )
    # Also accepted after the subcommand; the global one is the default.
    parser.add_argument(
        "--lang", choices=("fr", "en"), default=argparse.SUPPRESS, help="the client's language"
    )
    parser.add_argument(
        "--quitting",
        choices=("stays", "kept", "gone"),
        default="stays",
        help="what quitting does to the game, said when q asks to confirm: the daemon stays and "
        "keeps "
        "the seat (the default), or every daemon stops and the game is kept or gone (scripts/play)",
    )
    parser.add_argument(
        "--bot-level",
        action="append",
        default=[],
        metavar="NAME=LEVEL",
        type=_bot_level,
        help="the level of the bot called NAME, shown by its name (scripts/play; repeat for each "
        "bot)",
    )
    parser.add_argument(
        "--no-bell",
        dest="bell",
        action="store_false",
        help="no turn alert: the terminal's bell stays silent when a decision waits for you "
        "(the key a switches it during the game)",
    )
    parser.set_defaults(run=run)


def _bot_level(text: str) -> tuple[str, str]:
    name, equals, level = text.partition("=")
    if not equals or not name or not level:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=LEVEL")
    return name, level


def run(args: argparse.Namespace) -> int:
    # prompt-toolkit is imported only when the screen opens: the tools stay quick to start.
    from client.tui.app import TarotApp
    from client.tui.i18n import Texts, language_from_environment
    from client.tui.model import Quitting

    home = args.home or default_home()
    lang = getattr(args, "lang", None) or language_from_environment()
    texts = Texts(lang)
    try:
        # Before the screen opens: a missing daemon is said plainly.
        asyncio.run(ask(home, "status"))
        quitting = Quitting(getattr(args, "quitting", "stays"))
        levels = dict(getattr(args, "bot_level", []))
        bell = getattr(args, "bell", True)
        return asyncio.run(
            TarotApp(home, lang, quitting=quitting, bot_levels=levels, bell=bell).run()
        )
    except DaemonUnavailable as error:
        # Not running, or running as another user (whose socket we may not open): say which.
        reason = str(error) if "another user" in str(error) else texts("daemon_missing", home=home)
        print(f"tarot: {reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
