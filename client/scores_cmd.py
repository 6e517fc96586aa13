"""``tarot scores``: the score sheet of the last table, daemon running or not.  ``--json``
prints it whole: each deal's ``breakdown`` (tarotd/views.py ``deal_breakdown``) holds its
score term by term and, once audited, its chien, écart and hands as dealt.

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


def _why(deal: dict[str, Any], names: list[str]) -> str:
    """After a deal's scores: how the attack did (from the breakdown), or what stopped the
    deal — a proven deviation is cheating; a silence is not (protocol/verdict.py, Fault)."""
    audit = deal["audit"]
    if isinstance(audit, dict):
        who = names[audit["culprit"]] if isinstance(audit.get("culprit"), int) else "unattributed"
        if audit.get("fault") == "silence":
            said = ", ".join(
                names[s]
                for s in audit.get("reported_by", [])
                if isinstance(s, int) and 0 <= s < len(names)
            )
            return (
                f"  abandoned: {who} stopped answering at the {audit['step']} step "
                f"(unproven: reported silent by {said})"
            )
        return f"  cheating proven: {who} ({audit['rule']})"
    score = (deal.get("breakdown") or {}).get("score")
    if not score:
        return ""
    whole, half = divmod(score["attack_half_points"], 2)
    points = f"{whole}.5" if half else str(whole)
    made = "made" if score["won"] else "failed"
    return f"  {points}/{score['needed']} {made} by {score['difference']}"


def run(args: argparse.Namespace) -> int:
    home = args.home or default_home()
    path = home / "scores.json"
    try:
        sheet: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        print(
            f"tarot scores: no score sheet in {home} yet: no deal has been scored there",
            file=sys.stderr,
        )
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
        print(
            f"{deal['deal'] + 1:>3}  {contract:<12}"
            + "".join(f"{s:>+11d}" for s in deal["scores"])
            + _why(deal, names)
        )
    print(f"{'total':<17}" + "".join(f"{t:>+11d}" for t in sheet["totals"]))
    return 0
