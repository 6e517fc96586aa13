"""``tarot event``: club nights and tournaments (issue 23, ``docs/event.md``).

The organiser opens an event on their daemon (``open``), the players' daemons see it on the
LAN or by ``--peer`` (``list``) and register (``join``); the organiser starts it (``start``)
once everybody is in, and every daemon then seats its player round by round, by the event's
movement, and plays the round's deals at that table.  ``show`` is the organiser's and a
player's screen: the players, each round's tables, where to sit, the live ranking.
``export`` writes the ranking as CSV, the whole event as a static HTML page, or the signed
record itself, which ``tarot audit FILE`` checks offline (:func:`audit_event`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from prompt_toolkit.formatted_text import fragment_list_to_text

from client.api import DaemonRefused, DaemonUnavailable, ask, default_home
from client.cli import SubParsers, UsageError, _home
from client.tui.event import event_line, event_screen
from client.tui.i18n import Texts, language_from_environment
from protocol.bots.bots import BOTS
from protocol.event.event import (
    FFT_FORMATS,
    MAGIC,
    EventError,
    EventReport,
    read_event,
    verify_event,
)
from protocol.event.export import available, event_html, ranking_csv
from protocol.replication.identity import fingerprint

MOVEMENTS = ("fft", "random", "best")
WATCH_EVERY = 1.0  #: seconds between two looks of ``show --watch``
#: The cursor home and the screen cleared, for ``show --watch`` on a terminal.
CLEAR = "\x1b[H\x1b[2J"


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "event",
        help="club nights and tournaments: open, join, follow an event",
        description="The organiser opens an event on their daemon; the players' daemons see it on "
        "the LAN or by "
        "--peer and register; once the organiser starts it, every daemon seats its player round "
        "by round, by the "
        "event's movement, and plays the round's deals there. Every row is signed by its table: "
        "tarot audit FILE "
        "checks an exported record offline.",
    )
    commands = parser.add_subparsers(dest="event_command", metavar="ACTION", required=True)
    _also_here(parser)
    opening = commands.add_parser(
        "open", help="open an event on this daemon: you are its organiser"
    )
    _also_here(opening)
    opening.add_argument("name")
    opening.add_argument(
        "--format",
        choices=sorted(FFT_FORMATS),
        default=None,
        help="the FFT's free-deal formats, rounds x deals (default 6x4)",
    )
    opening.add_argument("--rounds", type=int, default=None)
    opening.add_argument("--deals", type=int, default=None, help="deals per round")
    opening.add_argument(
        "--tables", type=int, choices=(4, 5), default=4, help="the table size preferred"
    )
    opening.add_argument("--movement", choices=MOVEMENTS, default="fft")
    opening.set_defaults(run=run_open)
    listing = commands.add_parser("list", help="the events this daemon sees or takes part in")
    _also_here(listing)
    listing.set_defaults(run=run_list)
    for action, text in (
        ("join", "register your player with an event"),
        ("start", "the organiser: seat round 1"),
        ("show", "the players, each round's tables, where to sit, the ranking"),
        ("close", "the organiser: close the round now, the rows still awaited declared lost"),
    ):
        sub = commands.add_parser(action, help=text)
        sub.add_argument(
            "event",
            nargs="?",
            default="",
            help="the event's id, or its first digits (default: the only one)",
        )
        sub.add_argument("--json", action="store_true")
        _also_here(sub)
        if action == "join":
            sub.add_argument(
                "--bots",
                type=int,
                default=None,
                metavar="N",
                help="register N bots hosted by this daemon instead of your player: each a player "
                "of its own, seated by the movement (the daemon can read their hands)",
            )
            sub.add_argument(
                "--bot-level",
                choices=sorted(BOTS),
                default=None,
                help="the hosted bots' level (default: the daemon's --bot-level)",
            )
        if action == "show":
            sub.add_argument(
                "--watch",
                action="store_true",
                help="show it again at every change (rows, rounds) until Ctrl-C",
            )
        sub.set_defaults(run=run_action)
    withdraw = commands.add_parser(
        "withdraw", help="the organiser: leave a player's place empty from the next round"
    )
    withdraw.add_argument(
        "player", help="the player's name, or the first digits of its fingerprint"
    )
    withdraw.add_argument("event", nargs="?", default="")
    withdraw.add_argument("--json", action="store_true")
    _also_here(withdraw)
    withdraw.set_defaults(run=run_action)
    substitute = commands.add_parser(
        "substitute",
        help="the organiser: a newcomer registered takes a player's place from the next round",
    )
    substitute.add_argument(
        "newcomer", help="the newcomer's name, or the first digits of its fingerprint"
    )
    substitute.add_argument("player", help="the player whose place it takes")
    substitute.add_argument("event", nargs="?", default="")
    substitute.add_argument("--json", action="store_true")
    _also_here(substitute)
    substitute.set_defaults(run=run_action)
    export = commands.add_parser(
        "export", help="the ranking as CSV, the event as an HTML page, or its signed record"
    )
    _also_here(export)
    export.add_argument("event", nargs="?", default="")
    kinds = export.add_mutually_exclusive_group(required=True)
    kinds.add_argument("--csv", type=Path, metavar="FILE")
    kinds.add_argument("--html", type=Path, metavar="FILE")
    kinds.add_argument(
        "--record", type=Path, metavar="FILE", help="the signed record, for tarot audit FILE"
    )
    export.set_defaults(run=run_export)


def _also_here(parser: argparse.ArgumentParser) -> None:
    """``--lang`` and ``--home`` after the action too (``tarot event show --lang fr``), as
    well as before ``event``: given here they win, left out they change nothing."""
    parser.add_argument(
        "--lang", choices=("fr", "en"), default=argparse.SUPPRESS, help="the language shown"
    )
    parser.add_argument(
        "--home",
        type=_home,
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="the daemon's home directory",
    )


def _ask(args: argparse.Namespace, op: str, **params: Any) -> Any:
    return asyncio.run(ask(args.home or default_home(), op, **params))


def _fails(error: Exception) -> int:
    print(f"tarot event: {error}", file=sys.stderr)
    return 1


def run_open(args: argparse.Namespace) -> int:
    if args.format is not None and (args.rounds is not None or args.deals is not None):
        raise UsageError("give --format, or --rounds and --deals, not both")
    if args.format is None and (args.rounds is None) != (args.deals is None):
        raise UsageError("--rounds and --deals go together")
    shape: dict[str, Any] = (
        {"rounds": args.rounds, "deals": args.deals}
        if args.rounds is not None
        else {"format": args.format or "6x4"}
    )
    try:
        opened = _ask(
            args, "event-open", name=args.name, tables=args.tables, movement=args.movement, **shape
        )
    except (DaemonUnavailable, DaemonRefused) as error:
        return _fails(error)
    english = Texts("en")
    print(
        f"event {opened['event'][:12]} « {opened['name']} »: "
        f"{english.counted('rounds', opened['rounds'])} of "
        f"{english.counted('deals', opened['deals'])} — "
        "the players register with tarot event join; then tarot event start"
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    try:
        events = _ask(args, "events")
    except (DaemonUnavailable, DaemonRefused) as error:
        return _fails(error)
    texts = Texts(_lang(args))
    if not events:
        print(texts("event_none_heard"))
    for event in events:
        print(
            f"{event['event'][:12]}  "
            f"{event_line(texts, event, unregistered='event_not_registered_cli')}"
        )
    return 0


def run_action(args: argparse.Namespace) -> int:
    op = {
        "join": "event-join",
        "start": "event-start",
        "show": "event",
        "close": "event-close",
        "withdraw": "event-withdraw",
        "substitute": "event-substitute",
    }[args.event_command]
    params = {name: getattr(args, name) for name in ("player", "newcomer") if hasattr(args, name)}
    if getattr(args, "bots", None) is not None:
        params["bots"] = args.bots
        if args.bot_level is not None:
            params["level"] = args.bot_level
    elif getattr(args, "bot_level", None) is not None:
        raise UsageError("--bot-level goes with --bots")
    if getattr(args, "watch", False):
        return watch(args)
    try:
        answer = _ask(args, op, event=args.event, **params)
    except (DaemonUnavailable, DaemonRefused) as error:
        return _fails(error)
    if args.json:
        print(json.dumps(answer, ensure_ascii=False))
    elif op == "event":
        print("\n".join(screen(answer, _lang(args), _our_fingerprint(args))))
    elif op == "event-withdraw":
        print(f"{answer['withdrawn']}: no place from the next round on")
    elif op == "event-substitute":
        print(f"{answer['newcomer']} takes the place of {answer['player']} from the next round on")
    elif "bots" in answer:
        print(f"join: event {answer['joined'][:12]}, bots hosted here: {', '.join(answer['bots'])}")
    else:
        print(f"{args.event_command}: event {next(iter(answer.values()))[:12]}")
    return 0


def _lang(args: argparse.Namespace) -> str:
    return str(args.lang or language_from_environment())


def _our_fingerprint(args: argparse.Namespace) -> str | None:
    """Our player's fingerprint, to mark its ranking line (None if the daemon does not say)."""
    try:
        status = _ask(args, "status")
    except (DaemonUnavailable, DaemonRefused):
        return None
    return (
        str(status["fingerprint"]) if isinstance(status, dict) and "fingerprint" in status else None
    )


def watch(args: argparse.Namespace) -> int:
    """``tarot event show --watch``: the screen again whenever the record grows — the live
    ranking on the organiser's projector, or a player's table for the next round.  On a
    terminal each look replaces the last one; into a pipe or a file they follow each other."""
    shown, ours, clear = -1, _our_fingerprint(args), sys.stdout.isatty()
    try:
        while True:
            try:
                event = _ask(args, "event", event=args.event)
            except (DaemonUnavailable, DaemonRefused) as error:
                return _fails(error)
            if event["entries"] != shown:
                shown = event["entries"]
                print(
                    CLEAR if clear else "", *screen(event, _lang(args), ours), sep="\n", flush=True
                )
            time.sleep(WATCH_EVERY)
    except KeyboardInterrupt:
        return 0


def screen(event: dict[str, Any], lang: str, ours: str | None = None) -> list[str]:
    """The organiser's or a player's screen, from the daemon's ``event`` answer: the client's
    event panel with every round's table plan, in ``lang``."""
    return (
        fragment_list_to_text(event_screen(Texts(lang), event, ours, plans=True))
        .rstrip("\n")
        .splitlines()
    )


def run_export(args: argparse.Namespace) -> int:
    try:
        answer = _ask(args, "event-record", event=args.event)
    except (DaemonUnavailable, DaemonRefused) as error:
        return _fails(error)
    data = bytes.fromhex(answer["record"])
    labels = available(args.lang or language_from_environment())
    try:
        if args.record is not None:
            args.record.write_bytes(data)
            path = args.record
        else:
            report = verify_event(read_event(data))
            path = args.csv or args.html
            path.write_text(
                ranking_csv(report, labels) if args.csv else event_html(report, labels),
                encoding="utf-8",
            )
    except OSError as error:
        return _fails(error)
    print(f"wrote {path}")
    return 0


def is_event_file(data: bytes) -> bool:
    """Whether ``data`` starts as an event record does (``tarot audit`` hands those here)."""
    return MAGIC in data[:16]


def audit_event(data: bytes) -> int:
    """``tarot audit EVENT``: every signature, plan, row and ranking of the record, offline.
    Exit 0 when it holds, 1 with every fault named, 2 when the file is no record."""
    try:
        record = read_event(data)
    except EventError as error:
        print(f"tarot audit: not an event record: {error}", file=sys.stderr)
        return 2
    report = verify_event(record)
    for line in audit_lines(report, len(record.entries)):
        print(line)
    return 0 if report.ok else 1


def audit_lines(report: EventReport, entries: int) -> list[str]:
    config = report.config
    if config is None:
        return [f"FAULT: {finding}" for finding in report.findings]
    rows = sum(len(rows) for rows in report.results.values())
    lines = [
        f"event {config.event_id.hex()} « {config.name} », organiser "
        f"[{fingerprint(config.organiser)}]: "
        f"{entries} entries, {len(report.names)} players, {report.closed} of {config.rounds} "
        "rounds closed, "
        f"{rows} rows signed by their tables"
    ]
    lines += [f"FAULT: {finding}" for finding in report.findings]
    lines.append(
        "the record holds: every signature, plan, row and ranking checks"
        if report.ok
        else f"the record DOES NOT HOLD: {len(report.findings)} faults"
    )
    ranked = report.standings or report.live
    if not ranked:  # no round opened yet
        lines.append(
            "registered: "
            + ", ".join(f"{name} [{fingerprint(key)}]" for key, name in report.names.items())
        )
    for line in ranked:
        lines.append(
            f"  {line.place:>3}. {report.names.get(line.player, '?')} "
            f"[{fingerprint(line.player)}] {line.total:+d}"
        )
    return lines
