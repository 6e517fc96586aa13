"""``tarot scores``: the score sheet of the last table, daemon running or not.  ``--json``
prints it whole: each deal's ``breakdown`` (tarotd/views.py ``deal_breakdown``) holds its
score term by term and, once audited, its chien, écart and hands as dealt.

The daemon writes ``scores.json`` in its home after every deal; reading that file lets a
player look at the sheet after the daemon has gone (``tarotd --deals N`` exits when done).

The text is the sheet as the daemon keeps it (tarotd/runner.py ``_record``): each deal's row,
then one row for each seat its audit penalised (``DealAudit.charge``), so that the totals are
the sum of the lines shown.  The file names the penalised seats (``penalties``), not their
rows: those are made again by the sheet's own :meth:`ScoreSheet.add_penalty`, and the totals
must then be the file's, or the file is not one this program reads right.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from client.api import default_home
from client.cli import SubParsers
from protocol.replication.verdict import Fault
from protocol.rules.scoring import ScoreSheet, ScoreSheetError

#: The columns of the deal's number and contract (or ``penalty``), before the scores.
LABEL = 17


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser("scores", help="the score sheet of the last table")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)


def _score(deal: dict[str, Any]) -> str:
    """How the attack did, from the breakdown; nothing for a deal that scored no contract."""
    score = (deal.get("breakdown") or {}).get("score")
    if not score:
        return ""
    whole, half = divmod(score["attack_half_points"], 2)
    points = f"{whole}.5" if half else str(whole)
    made = "made" if score["won"] else "failed"
    return f"{points}/{score['needed']} {made} by {score['difference']}"


def _verdict(deal: dict[str, Any], names: Sequence[str]) -> str:
    """What the audit found.  A proven deviation is cheating; a silence is not (Fault,
    protocol/replication/verdict.py), and it stopped the deal only before the last card: a seat that
    then keeps its seed is not waited for, the deal is scored and its penalty row follows."""
    audit = deal["audit"]
    if not isinstance(audit, dict):
        return ""
    who = names[audit["culprit"]] if isinstance(audit.get("culprit"), int) else "unattributed"
    if audit.get("fault") != Fault.SILENCE.value:
        return f"cheating proven: {who} ({audit['rule']})"
    said = ", ".join(
        names[s] for s in audit.get("reported_by", []) if isinstance(s, int) and 0 <= s < len(names)
    )
    ended = "scored" if deal["contract"] is not None else "abandoned"
    return f"{ended}: {who} {audit['rule']} (unproven: reported silent by {said})"


def _penalty(deal: dict[str, Any], seat: int, names: Sequence[str]) -> str:
    """Whose penalty row it is, and the rule when it is the deal's verdict (the file keeps no
    other seat's reason)."""
    audit = deal["audit"]
    if isinstance(audit, dict) and audit.get("culprit") == seat:
        return f"{names[seat]}: {audit['rule']}"
    return names[seat]


def _line(label: str, scores: Sequence[int], note: str = "") -> str:
    return (f"{label:<{LABEL}}" + "".join(f"{s:>+11d}" for s in scores) + f"  {note}").rstrip()


def render(document: dict[str, Any]) -> list[str]:
    """``scores.json`` as lines of text: every row of the sheet — deals, void deals and
    penalties — then the totals, their sum.  :class:`ScoreSheetError` when the file's own
    totals are not that sum."""
    names: list[str] = document["seats"]
    sheet = ScoreSheet(names)
    lines = [f"Table {document['table']}", " " * LABEL + "".join(f"{n[:10]:>11}" for n in names)]
    for deal in document["deals"]:
        notes = (note for note in (_score(deal), _verdict(deal, names)) if note)
        lines.append(
            _line(
                f"{deal['deal'] + 1:>3}  {deal['contract'] or '—'}",
                sheet.add_deal(deal["scores"]).scores,
                " — ".join(notes),
            )
        )
        for seat in deal["penalties"]:
            row = sheet.add_penalty(seat)
            lines.append(_line("     penalty", row.scores, _penalty(deal, seat, names)))
    if sheet.totals() != document["totals"]:
        raise ScoreSheetError(
            f"its rows add up to {sheet.totals()}, but its totals are {document['totals']}"
        )
    return [*lines, _line("total", sheet.totals())]


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
    try:
        lines = render(sheet)
    except (ScoreSheetError, KeyError, TypeError, IndexError) as error:
        print(
            f"tarot scores: {path} is not a score sheet this tarot reads ({error!r}): "
            "its daemon writes it again after the next deal; tarot scores --json shows it as is",
            file=sys.stderr,
        )
        return 1
    print("\n".join(lines))
    return 0
