"""The score sheet: a row per deal scored, the totals, and the verdict of any deal whose
audit named a cheater — who, at which step, which rule, and where the proof is."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui.i18n import CONTRACTS
from client.tui.model import Model

COLUMN = 8


def _cell(text: object, width: int = COLUMN) -> str:
    return str(text)[: width - 1].rjust(width - 1) + " "


def sheet_fragments(model: Model, *, compact: bool = False) -> StyleAndTextTuples:
    """The sheet; ``compact`` (beside the table) leaves out the contracts and the verdicts."""
    state, texts = model.state or {}, model.texts
    names: list[str] = [str(n) for n in state.get("seats", ())]
    results: list[dict[str, Any]] = list(state.get("results", ()))
    out: StyleAndTextTuples = [("class:heading", texts("sheet")), ("", "\n\n")]
    if not results:
        return [*out, ("class:dim", texts("sheet_empty")), ("", "\n")]
    width, contract = (7, 0) if compact else (COLUMN, 18)
    header = _cell(texts("sheet_deal"), 6) + texts("sheet_contract")[:contract].ljust(contract) + "".join(_cell(n, width) for n in names)
    out += [("class:sheet.header", header), ("", "\n")]
    for row in results:
        if not contract:
            what = ""
        elif row.get("contract"):
            what = f"{CONTRACTS[row['contract']]} ({names[row['taker']][:8]})"
        else:
            what = texts("sheet_void")
        scores = "".join(_cell(f"{s:+d}", width) for s in row["scores"])
        out += [("", _cell(int(row["deal"]) + 1, 6) + what[: contract - 1].ljust(contract) + scores), ("", "\n")]
    totals = "".join(_cell(f"{s:+d}", width) for s in state.get("scores") or [])
    out += [("class:sheet.total", _cell(texts("sheet_total"), 6) + " " * contract + totals), ("", "\n")]
    for verdict in [] if compact else verdicts(model):
        out += [("", "\n"), ("class:error", verdict)]
    return out


def verdicts(model: Model) -> list[str]:
    """A polite sentence for each deal the audit stopped, with where its proof lies: the
    signed transcript in the daemon's store, which ``tarot audit`` re-checks."""
    state, texts = model.state or {}, model.texts
    names = [str(n) for n in state.get("seats", ())]
    lines = []
    for row in state.get("results", ()):
        audit = row.get("audit")
        if not isinstance(audit, dict):
            continue
        deal, step, rule = int(row["deal"]) + 1, audit.get("step", "?"), audit.get("rule", "?")
        culprit = audit.get("culprit")
        if isinstance(culprit, int) and 0 <= culprit < len(names):
            line = texts("verdict", deal=deal, who=names[culprit], step=step, rule=rule)
        else:
            line = texts("verdict_unattributed", deal=deal, step=step, rule=rule)
        proof = audit.get("proof") or str(model.home / "tarot.db")
        lines.append(f"{line} {texts('verdict_proof', path=proof)}")
    return lines
