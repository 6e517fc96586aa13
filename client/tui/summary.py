"""The summary of a scored deal, as a player checks it by hand in the FFT's terms — from the
breakdown the daemon's audit computed (``results[i]["breakdown"]``, see tarotd/views.py):
the attack's points against the target for its bouts, won or lost by how much, the
contract's multiplier, the petit au bout, poignée and chelem lines, the split, the penalty
rows, and — once the audit has passed — the chien, the écart and every hand as dealt."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui import cards
from client.tui.i18n import CONTRACTS
from client.tui.model import Model, sorted_codes
from client.tui.sheet import verdict_line


def half(half_points: int, lang: str) -> str:
    """Half points as a player writes them: 87 → ``43.5`` (``43,5`` in French)."""
    whole, odd = divmod(half_points, 2)
    return f"{whole}{',' if lang == 'fr' else '.'}5" if odd else str(whole)


def summary_fragments(
    model: Model, index: int = -1, *, with_cards: bool = True
) -> StyleAndTextTuples:
    """The summary of the deal ``index`` of the results (the last one by default); without
    the hidden cards when ``with_cards`` is False (the replay shows them its own way)."""
    state, texts = model.state or {}, model.texts
    results: list[dict[str, Any]] = list(state.get("results", ()))
    if not results:
        return [("class:dim", texts("sheet_empty")), ("", "\n")]
    row = results[index]
    names = [str(n) for n in state.get("seats", ())]
    deal = int(row["deal"]) + 1
    breakdown: dict[str, Any] | None = row.get("breakdown")
    out: StyleAndTextTuples = []

    def line(text: str, style: str = "") -> None:
        out.extend([(style, text), ("", "\n")])

    if row.get("contract") is None:
        reason = row.get("void")
        passed = (
            breakdown is not None
            and all(b["contract"] is None for b in breakdown.get("bids", ()))
            and row.get("audit") == "ok"
        )
        # No next dealer at a finished table; at an event's, its round is over.
        last = state.get("finished") and row is results[-1]
        over = "summary_passed_round_over" if model.event is not None else "summary_passed_last"
        line(
            texts(over if last else "summary_passed", deal=deal)
            if passed or reason is None
            else texts("summary_void", deal=deal, reason=reason),
            "class:heading",
        )
    else:
        title = texts(
            "summary_title",
            deal=deal,
            taker=names[row["taker"]],
            contract=CONTRACTS[row["contract"]],
        )
        if breakdown is not None and breakdown.get("called"):
            partner = breakdown.get("partner")
            title += (
                texts("summary_partner", partner=names[partner])
                if partner is not None
                else texts("summary_alone")
            )
            title += texts("summary_call", card=cards.symbol(breakdown["called"], texts.lang))
        line(title, "class:heading")
    verdict = verdict_line(model, row)
    if verdict:
        line(verdict, "class:error")
    if breakdown is None:
        line(texts("summary_no_breakdown"), "class:dim")
        return out
    if breakdown.get("score") is not None:
        out += _score_lines(model, row, breakdown["score"], breakdown)
    for seat in row.get("penalties", ()):
        rule = row["audit"].get("rule") if isinstance(row.get("audit"), dict) else None
        line(texts("summary_penalty", who=names[seat], rule=rule or texts("summary_penalty_rule")))
    return out + hidden_cards(model, breakdown) if with_cards else out


def _score_lines(
    model: Model, row: dict[str, Any], score: dict[str, Any], breakdown: dict[str, Any]
) -> StyleAndTextTuples:
    texts, lang = model.texts, model.texts.lang
    names = [str(n) for n in (model.state or {}).get("seats", ())]
    won, difference, multiplier = score["won"], score["difference"], score["multiplier"]
    result = texts("summary_made" if won else "summary_failed", difference=difference)
    if score["attack_half_points"] % 2:
        result += texts("summary_half")
    lines = [
        texts(
            "summary_points",
            points=half(score["attack_half_points"], lang),
            bouts=score["bouts"],
            needed=score["needed"],
            result=result,
        ),
        texts(
            "summary_contract",
            sign="" if won else "−",
            difference=difference,
            multiplier=multiplier,
            contract=CONTRACTS[str(row["contract"])],
            points=score["contract_points"],
        ),
    ]
    if score["petit_au_bout"]:
        lines.append(
            texts(
                "summary_petit",
                camp=texts(f"camp_{score['petit_au_bout']}"),
                multiplier=multiplier,
                points=score["petit_au_bout_points"],
            )
        )
    for poignee in breakdown.get("poignees", ()):
        lines.append(
            texts(
                "summary_poignee",
                size=poignee["size"],
                who=names[poignee["seat"]],
                bonus=poignee["points"],
                points=poignee["points"] if won else -poignee["points"],
            )
        )
    if score["chelem_points"]:
        what = (
            ("chelem_made_announced" if score["chelem_announced"] else "chelem_made")
            if score["chelem"] == "attack"
            else (
                "chelem_defence"
                if score["chelem"] == "defence" and not score["chelem_announced"]
                else "chelem_failed"
            )
        )
        lines.append(texts("summary_chelem", what=texts(what), points=score["chelem_points"]))
    taker, partner = int(row["taker"]), breakdown.get("partner")
    split = [f"{names[taker]} {score['taker']:+d}"]
    if score.get("partner") is not None and partner is not None:
        split.append(f"{names[partner]} {score['partner']:+d}")
    split.append(texts("summary_each_defender", points=score["defender"]))
    lines.append(texts("summary_unit", unit=score["unit"], split=", ".join(split)))
    out: StyleAndTextTuples = []
    for text in lines:
        out += [("", text), ("", "\n")]
    return out


def hidden_cards(model: Model, breakdown: dict[str, Any]) -> StyleAndTextTuples:
    """The chien, the écart and the hands as dealt — only in a breakdown that holds them,
    which the daemon gives once the deal's audit has passed."""
    texts, lang = model.texts, model.texts.lang
    if "hands" not in breakdown:
        return [("class:dim", texts("summary_hidden")), ("", "\n")]
    names = [str(n) for n in (model.state or {}).get("seats", ())]
    out: StyleAndTextTuples = [
        ("", texts("summary_chien")),
        *cards.fragments(breakdown["chien"], lang),
    ]
    if breakdown.get("ecart"):
        out += [
            ("", texts("summary_ecart")),
            *cards.fragments(sorted_codes(breakdown["ecart"]), lang),
        ]
    out += [("", "\n"), ("class:heading", texts("summary_hands")), ("", "\n")]
    width = max(len(n) for n in names)
    for seat, hand in enumerate(breakdown["hands"]):
        out += [
            ("", f"  {names[seat].ljust(width)}  "),
            *cards.fragments(sorted_codes(hand), lang),
            ("", "\n"),
        ]
    return out
