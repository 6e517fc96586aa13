"""The score sheet: a row per deal scored, the totals, and the verdict of any deal the audit
stopped — a proven deviation as cheating, with where its proof is; a silence as a deal
abandoned, never as cheating (``Verdict.fault``, protocol/replication/verdict.py)."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui.i18n import CONTRACTS
from client.tui.model import Model

#: The score column when there is room: a score such as ``-1234`` and a space (narrower on
#: a narrow panel, down to the widest score written and a space).
COLUMN = 7


def _cell(text: object, width: int) -> str:
    """``text`` right-aligned in ``width`` columns, one of them a space; cut with an ellipsis
    only when it cannot fit."""
    text = str(text)
    if len(text) > width - 1:
        text = text[: width - 2] + "…"
    return text.rjust(width - 1) + " "


def _what(model: Model, row: dict[str, Any], names: list[str]) -> str:
    if row.get("contract"):
        return f"{CONTRACTS[row['contract']]} ({names[row['taker']]})"
    return model.texts("sheet_void")


def sheet_fragments(model: Model, *, compact: bool = False, width: int = 80) -> StyleAndTextTuples:
    """The sheet in ``width`` columns; ``compact`` (beside the table) leaves out the contracts
    and the verdicts.  A column is as wide as its name, names cut only when the sheet cannot
    fit; a deal that scored nothing (all passed, abandoned) shows no scores."""
    state, texts = model.state or {}, model.texts
    names: list[str] = [str(n) for n in state.get("seats", ())]
    results: list[dict[str, Any]] = list(state.get("results", ()))
    out: StyleAndTextTuples = [("class:heading", texts("sheet")), ("", "\n\n")]
    if not results or not names:
        return [*out, ("class:dim", texts("sheet_empty")), ("", "\n")]
    if compact and not _fits(texts, names, results, state, width):
        return out + _by_player(model, names, results, state, width)
    deal_width = max(len(texts("sheet_deal")), len(texts("sheet_total"))) + 1
    contract = (
        0
        if compact
        else max(len(texts("sheet_contract")), *(len(_what(model, r, names)) for r in results)) + 1
    )
    floor = min(COLUMN, _widest_score(results, state) + 1)  # a score always whole
    column = max(COLUMN, *(len(n) + 1 for n in names))
    room = (width - deal_width - contract) // len(names)
    if column > room:
        column = max(floor, room)
        if not compact and deal_width + contract + column * len(names) > width:
            contract = max(
                len(texts("sheet_contract")) + 1, width - deal_width - column * len(names)
            )
    header = (
        _cell(texts("sheet_deal"), deal_width)
        + _cell(texts("sheet_contract"), contract)[:contract].ljust(contract)
        + "".join(_cell(n, column) for n in names)
    )
    out += [("class:sheet.header", header.rstrip() if compact else header), ("", "\n")]
    for row in results:
        what = _cell(_what(model, row, names), contract).strip().ljust(contract) if contract else ""
        scored = row.get("contract") is not None or any(row["scores"])
        scores = "".join(_cell(f"{s:+d}" if scored else "·", column) for s in row["scores"])
        out += [("", _cell(int(row["deal"]) + 1, deal_width) + what + scores), ("", "\n")]
    totals = "".join(_cell(f"{s:+d}", column) for s in state.get("scores") or [])
    out += [
        ("class:sheet.total", _cell(texts("sheet_total"), deal_width) + " " * contract + totals),
        ("", "\n"),
    ]
    for verdict in [] if compact else verdicts(model):
        out += [("", "\n"), ("class:error", verdict)]
    return out


def _scored(row: dict[str, Any]) -> bool:
    return row.get("contract") is not None or any(row["scores"])


def _widest_score(results: list[dict[str, Any]], state: dict[str, Any]) -> int:
    """The widest score the sheet writes (a row's, or a total)."""
    scores = [s for row in results if _scored(row) for s in row["scores"]]
    return max(len(f"{s:+d}") for s in [*scores, *(state.get("scores") or [0])])


def _fits(
    texts: Any, names: list[str], results: list[dict[str, Any]], state: dict[str, Any], width: int
) -> bool:
    """Whether a column per player fits ``width``, every score whole."""
    deal_width = max(len(texts("sheet_deal")), len(texts("sheet_total"))) + 1
    return deal_width + (_widest_score(results, state) + 1) * len(names) <= width


def _by_player(
    model: Model,
    names: list[str],
    results: list[dict[str, Any]],
    state: dict[str, Any],
    width: int,
) -> StyleAndTextTuples:
    """The sheet turned a quarter (a narrow panel at five): a line per player, its name, the
    last deals that fit and its total — every number whole, the names cut if they must."""
    texts = model.texts
    total = texts("sheet_total")
    cell = max(_widest_score(results, state), len(total), len(str(len(results)))) + 1
    shown = max(0, min(len(results), (width - 8 - cell) // cell))
    name_width = max(4, min(max(len(n) for n in names) + 1, width - cell * (shown + 1)))
    kept = results[len(results) - shown :] if shown else []
    header = (
        texts("sheet_deal")[: name_width - 1].ljust(name_width)
        + "".join(_cell(int(row["deal"]) + 1, cell) for row in kept)
        + _cell(total, cell)
    )
    out: StyleAndTextTuples = [("class:sheet.header", header.rstrip()), ("", "\n")]
    for seat, name in enumerate(names):
        shown_name = name if len(name) < name_width else name[: name_width - 2] + "…"
        cells = "".join(
            _cell(f"{row['scores'][seat]:+d}" if _scored(row) else "·", cell) for row in kept
        )
        totals = state.get("scores") or [0] * len(names)
        out += [
            ("class:seat.you" if seat == model.seat else "", shown_name.ljust(name_width) + cells),
            ("class:sheet.total", _cell(f"{totals[seat]:+d}", cell).rstrip()),
            ("", "\n"),
        ]
    return out


def verdicts(model: Model) -> list[str]:
    """The verdict of each deal the audit stopped."""
    return [
        line for row in (model.state or {}).get("results", ()) if (line := verdict_line(model, row))
    ]


#: The protocol's steps (``Verdict.step``, a message kind or a stage) as players say them.
STEPS = {
    "fr": {
        "commit": "engagement",
        "shuffle": "mélange",
        "lock": "verrouillage",
        "deal_keys": "distribution des clés",
        "deal-keys": "distribution des clés",
        "hand_check": "vérification des mains",
        "petit_sec": "petit sec",
        "bid": "enchères",
        "bidding": "enchères",
        "call": "appel",
        "chien": "chien",
        "chien_open": "chien",
        "ecart": "écart",
        "chelem": "chelem",
        "poignee": "poignée",
        "play": "jeu de la carte",
        "reveal": "révélation des graines",
        "sign": "signature du score",
        "score_sign": "signature du score",
        "score": "signature du score",
        "abandon": "abandon",
    },
    "en": {
        "commit": "commitment",
        "deal_keys": "deal keys",
        "deal-keys": "deal keys",
        "hand_check": "hand check",
        "petit_sec": "petit sec",
        "bid": "bidding",
        "chien_open": "chien",
        "reveal": "seed reveal",
        "sign": "score signature",
        "score_sign": "score signature",
        "score": "score signature",
    },
}

#: The rules the audit names most, in French (a fragment of the English reason, its French).
_RULES_FR: tuple[tuple[str, str], ...] = (
    ("did not reveal its seed", "n'a pas révélé sa graine"),
    ("held the petit sec and did not show it", "a gardé le petit sec sans le montrer"),
    ("signed a score that the audit does not give", "a signé un score que l'audit ne donne pas"),
    ("you must follow suit", "renonce : n'a pas fourni à la couleur demandée"),
    ("you must play a trump higher", "renonce : n'a pas monté à l'atout"),
    ("you must play a trump", "renonce : n'a pas coupé"),
    ("does not open its position", "une clé n'ouvre pas sa position"),
    ("two different messages", "a signé deux messages différents pour la même étape"),
    (
        "a message of a kind the deal does not use",
        "un message d'un genre que la donne n'emploie pas",
    ),
    ("is not in your hand", "a joué une carte qu'il n'avait pas"),
    ("the proof does not check", "sa preuve ne se vérifie pas"),
)


def _rule(model: Model, rule: str) -> str:
    """A verdict's rule in the player's language: French when it is one the audit names
    often, and otherwise a pointer to the proof rather than an English sentence."""
    if model.texts.lang != "fr":
        return rule
    lowered = rule.lower()
    return next(
        (french for fragment, french in _RULES_FR if fragment in lowered),
        model.texts("verdict_rule_unknown"),
    )


def verdict_line(model: Model, row: dict[str, Any]) -> str | None:
    """A deal's verdict as a sentence, or None: a proven deviation names its culprit and
    where the proof lies (the signed transcript, which ``tarot audit`` re-checks); a silence
    says the deal was abandoned, by whom, and that only the other seats' word backs it."""
    state, texts = model.state or {}, model.texts
    audit = row.get("audit")
    if not isinstance(audit, dict):
        return None
    names = [str(n) for n in state.get("seats", ())]
    deal, raw_step = int(row["deal"]) + 1, str(audit.get("step", "?"))
    step = STEPS.get(texts.lang, {}).get(raw_step, raw_step.replace("_", " "))
    culprit = audit.get("culprit")
    who = names[culprit] if isinstance(culprit, int) and 0 <= culprit < len(names) else None
    if audit.get("fault") == "silence" and who is not None:
        reporters = audit.get("reported_by")
        said = (
            reporters
            if isinstance(reporters, list)
            else [s for s in range(len(names)) if s != culprit]
        )
        others = ", ".join(names[s] for s in said if isinstance(s, int) and 0 <= s < len(names))
        # Played out and scored without the seat's seed, or abandoned for its silence.
        said_key = "verdict_silence_scored" if row.get("contract") else "verdict_silence"
        line = texts(said_key, deal=deal, who=who, step=step, reporters=others)
        penalised = row.get("penalties")
        if isinstance(penalised, list) and culprit in penalised:
            line += " " + texts("verdict_penalty", who=who)
        return line
    rule = _rule(model, str(audit.get("rule", "?")))
    line = (
        texts("verdict_proven", deal=deal, who=who, step=step, rule=rule)
        if who is not None
        else texts("verdict_unattributed", deal=deal, step=step, rule=rule)
    )
    proof = audit.get("proof") or str(model.home / "tarot.db")
    return f"{line} {texts('verdict_proof', path=proof)}"
