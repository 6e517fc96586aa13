"""``tarot scores``: the score sheet of the last table, daemon running or not.

The daemon writes ``scores.json`` in its home after every deal; reading that file lets a
player look at the sheet after the daemon has gone (``tarotd --deals N`` exits when done).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from client.api import default_home
from client.cli import SubParsers


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser("scores", help="the score sheet of the last table")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home = args.home or default_home()
    path = home / "scores.json"
    try:
        sheet: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        print(f"tarot scores: no score sheet in {home} yet: no deal has been scored there", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"tarot scores: cannot read {path}: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(sheet, ensure_ascii=False))
        return 0
    names = sheet["seats"]
    print(f"Table {sheet['table']}")
    print(" " * 17 + "".join(f"{name[:10]:>11}" for name in names))
    for deal in sheet["deals"]:
        contract = deal["contract"] or "—"
        audit = "" if deal["audit"] == "ok" else f"  triche : siège {deal['audit']['culprit']} ({deal['audit']['rule']})"
        print(f"{deal['deal'] + 1:>3}  {contract:<12}" + "".join(f"{s:>+11d}" for s in deal["scores"]) + audit)
    print(f"{'total':<17}" + "".join(f"{t:>+11d}" for t in sheet["totals"]))
    return 0
