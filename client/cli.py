"""The ``tarot`` command: the terminal client and the tools (DESIGN §7).

Each tool is a subcommand living in its own module, ``client/<name>_cmd.py`` (``tarot bench``'s
is the lab's, found through its hook, ``protocol/plugins.py``, as the parser is built), that
exposes ``register(subparsers)``: it adds its parser with ``subparsers.add_parser(...)`` and
sets the function to run with ``parser.set_defaults(run=...)``, a ``run(args) -> int`` returning
the exit status.  A ``run`` may raise :class:`UsageError` for a mistake in the command line that
argparse itself cannot see (an option valid only with another); it is reported like argparse's
own errors.  Listing the modules here keeps the order of ``tarot --help`` stable; a module
that is not written yet is left out of the help instead of breaking the command.

Errors in the command line are **one line** on stderr, ``tarot <cmd>: error: ...``, naming the
allowed values, with exit status 2: a player who mistypes a contract should not have to read a
usage dump to find the line that matters.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import NoReturn, TypeAlias

from client.workers import TOOLS
from protocol.deck.group import binding_file, use_scheduler
from protocol.plugins import LAB_COMMANDS, commands, not_installed

PROG = "tarot"

#: (subcommand, module): the tools of DESIGN §7, in the order of the help.
SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("play", "client.play_cmd"),
    ("join", "client.join_cmd"),
    ("sim", "client.sim_cmd"),
    ("match", "client.match_cmd"),
    ("audit", "client.audit_cmd"),
    ("score", "client.score_cmd"),
    ("scores", "client.scores_cmd"),
    ("status", "client.status_cmd"),
    ("unlock", "client.unlock_cmd"),
    ("event", "client.event_cmd"),
)

#: What ``tarot`` with no subcommand runs: the terminal client on the daemon of ``--home``.
DEFAULT_COMMAND = SUBCOMMANDS[0]

#: The type of the object ``register`` receives (a string: argparse's class is not
#: subscriptable at run time).
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class UsageError(Exception):
    """A command line that parsed but makes no sense; reported as a one-line usage error."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its errors on a single line.

    argparse prints the whole usage before the error; with many options that pushes the reason
    off the screen.  Subparsers are created with the parser's own class, so every subcommand
    gets this behaviour.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)}\n")


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _home(text: str) -> Path:
    """``--home``: not empty, which would be the current directory, whatever it is."""
    if not text:
        raise argparse.ArgumentTypeError(
            "empty: give the daemon's home directory, as it was given to tarotd"
        )
    return Path(text)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="French Tarot on the LAN, with no trusted dealer: the client and its tools.",
    )
    parser.add_argument(
        "--home",
        type=_home,
        default=None,
        metavar="DIR",
        help="the daemon's home directory (default: $XDG_DATA_HOME/tarot)",
    )
    parser.add_argument(
        "--lang",
        choices=("fr", "en"),
        default=None,
        help="the client's language (default: from LC_ALL, LC_MESSAGES or LANG)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _name, module_name in SUBCOMMANDS:
        if importlib.util.find_spec(module_name) is None:
            continue  # not written yet
        module = importlib.import_module(module_name)
        module.register(subparsers)
    for command in commands().values():  # the lab's, after the product's
        command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``tarot`` with ``argv`` (default: the process's arguments); return the exit status."""
    if (loaded := binding_file()) is not None:  # rbcl's copy of libsodium, loaded already
        with contextlib.suppress(OSError):
            os.unlink(loaded)
    arguments = list(argv) if argv is not None else sys.argv[1:]
    if arguments[:1] and arguments[0] in LAB_COMMANDS and arguments[0] not in commands():
        command = f"{PROG} {arguments[0]}"
        print(f"{command}: error: {not_installed(command)}", file=sys.stderr)
        return 2
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, or an error already printed by ArgumentParser.error
        return exc.code if isinstance(exc.code, int) else 2
    run = getattr(args, "run", None)
    if run is None and importlib.util.find_spec(DEFAULT_COMMAND[1]) is not None:
        # ``tarot`` alone opens the terminal client: the command a player types most.
        args.command, run = DEFAULT_COMMAND[0], importlib.import_module(DEFAULT_COMMAND[1]).run
    if run is None:
        names = [name for name, module in SUBCOMMANDS if importlib.util.find_spec(module)]
        names += commands()
        print(
            f"{PROG}: error: choose a command: {', '.join(names)} (tarot --help for more)",
            file=sys.stderr,
        )
        return 2
    use_scheduler(TOOLS)  # the tools that deal or audit here use the cores
    try:
        status = run(args)
    except UsageError as exc:
        print(f"{PROG} {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    return int(status)


if __name__ == "__main__":
    # Run the main of the module ``client.cli``, not of ``__main__``: the subcommands import
    # ``client.cli`` (for UsageError), and under ``python -m client.cli`` that would otherwise
    # be a second copy whose exceptions this copy's ``main`` does not catch.
    from client.cli import main as _main

    sys.exit(_main())
