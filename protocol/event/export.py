"""An event's ranking as CSV and as one static HTML page — strings only, nothing written here.

The page is what an organiser projects on the wall or prints: the table plan of every round,
each round's results by table, and the ranking, in large type, one self-contained file (its CSS
inline, no script, no font or image to fetch).  Every name comes from a player's signed
registration and may hold anything, so every one is escaped (HTML) or defused (CSV: a cell a
spreadsheet would read as a formula gets a leading apostrophe).

**Languages.**  The client's catalogue (``client/tui/i18n.py``) cannot be imported from
``protocol/``, so the words are a parameter: :data:`LABELS` holds the French and English sets
(the client may take them from here, or pass its own), the same keys in each.  The game's
words stay French in both, as the client's do: « donne », « position ».
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping
from typing import Final

from protocol.event.event import EventReport
from protocol.event.movement import Movement, Orientation
from protocol.event.ranking import Mark, Standing
from protocol.replication.identity import fingerprint

Labels = Mapping[str, str]

LABELS: Final[Mapping[str, Labels]] = {
    "fr": {
        "lang": "fr",
        "ranking": "Classement",
        "ranking_after": "Classement après la position {round}",
        "plan": "Plan de table",
        "results": "Résultats",
        "round": "Position {round}",
        "table": "Table {table}",
        "place": "Place",
        "player": "Joueur",
        "fingerprint": "Empreinte",
        "total": "Total",
        "won_rounds": "Positions gagnées",
        "best_round": "Meilleure position",
        "tied": "ex æquo",
        "tied_column": "Ex æquo",
        "yes": "oui",
        "no": "non",
        "mark_column": "{round} : marque",
        "format": "{rounds} de {deals}",
        "rounds_one": "{count} position",
        "rounds_many": "{count} positions",
        "deals_one": "{count} donne",
        "deals_many": "{count} donnes",
        "organiser": "Organisateur : {fingerprint}",
        "movement": "Mouvement : {movement}",
        "movement_rounds": "{movement} (position {rounds})",
        "movement_asked": "{movement} demandé",
        Movement.FFT.value: "FFT",
        Movement.RANDOM.value: "aléatoire",
        Movement.BEST.value: "meilleurs contre meilleurs",
        Mark.PLAYED.value: "",
        Mark.ABANDONED.value: "abandon",
        Mark.ABSENT.value: "absent",
        Mark.INCOMPLETE.value: "donnes perdues",
        "pending_one": "En cours : {count} donne attendue",
        "pending_many": "En cours : {count} donnes attendues",
        "verified": "Chaque donne est signée par tous les joueurs de sa table ; ce classement en "
        "découle.",
        "findings": "Anomalies relevées : ce classement ne peut pas être certifié",
    },
    "en": {
        "lang": "en",
        "ranking": "Ranking",
        "ranking_after": "Ranking after round {round}",
        "plan": "Table plan",
        "results": "Results",
        "round": "Round {round}",
        "table": "Table {table}",
        "place": "Place",
        "player": "Player",
        "fingerprint": "Fingerprint",
        "total": "Total",
        "won_rounds": "Rounds won",
        "best_round": "Best round",
        "tied": "tied",
        "tied_column": "Tied",
        "yes": "yes",
        "no": "no",
        "mark_column": "{round} mark",
        "format": "{rounds} of {deals}",
        "rounds_one": "{count} round",
        "rounds_many": "{count} rounds",
        "deals_one": "{count} deal",
        "deals_many": "{count} deals",
        "organiser": "Organiser: {fingerprint}",
        "movement": "Movement: {movement}",
        "movement_rounds": "{movement} (round {rounds})",
        "movement_asked": "{movement} asked",
        Movement.FFT.value: "FFT",
        Movement.RANDOM.value: "random",
        Movement.BEST.value: "best against best",
        Mark.PLAYED.value: "",
        Mark.ABANDONED.value: "abandoned",
        Mark.ABSENT.value: "absent",
        Mark.INCOMPLETE.value: "deals lost",
        "pending_one": "In progress: {count} deal still to come",
        "pending_many": "In progress: {count} deals still to come",
        "verified": "Every deal is signed by every player of its table; this ranking follows from "
        "them.",
        "findings": "Faults found: this ranking cannot be certified",
    },
}

_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def counted(labels: Labels, key: str, count: int) -> str:
    """``count`` things as the language says them: "1 deal", "2 deals" ("0 donne" in
    French, whose singular goes up to one)."""
    one = count <= 1 if labels["lang"] == "fr" else count == 1
    return labels[f"{key}_{'one' if one else 'many'}"].format(count=count)


def movement_used(report: EventReport, labels: Labels) -> str:
    """The movement that seated the rounds, as it was (the FFT's, when the players do not fit
    its tables, seats at random): one name, or each round's; the one asked for if no round
    is seated yet, or said beside the one used when they differ."""
    config = report.config
    asked = config.movement if config is not None else None
    used = [plan.movement for plan in report.plans]
    if not used:
        return labels[asked.value] if asked is not None else "?"
    if len(set(used)) == 1:
        said = labels[used[0].value]
    else:
        rounds: dict[Movement, list[str]] = {}
        for round_, movement in enumerate(used, start=1):
            rounds.setdefault(movement, []).append(str(round_))
        said = ", ".join(
            labels["movement_rounds"].format(movement=labels[m.value], rounds=", ".join(r))
            for m, r in rounds.items()
        )
    if asked is not None and set(used) != {asked}:
        said += f" ({labels['movement_asked'].format(movement=labels[asked.value])})"
    return said


def ranking_csv(report: EventReport, labels: Labels) -> str:
    """The ranking after the closed rounds, every column named: the place (a number), whether
    it is tied, name, fingerprint, total, tie-breakers, then each round's points and mark."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    rounds = report.closed
    header = [
        labels["place"],
        labels["tied_column"],
        labels["player"],
        labels["fingerprint"],
        labels["total"],
        labels["won_rounds"],
        labels["best_round"],
    ]
    for round_ in range(1, rounds + 1):
        name = labels["round"].format(round=round_)
        header += [name, labels["mark_column"].format(round=name)]
    writer.writerow(header)
    for line in report.standings:
        row: list[object] = [
            line.place,
            labels["yes"] if line.tied else labels["no"],
            _cell(_name(report, line.player)),
            fingerprint(line.player),
            line.total,
            line.won_rounds,
            line.best_round,
        ]
        for result in line.rounds:
            row += [result.points, labels[result.mark.value]]
        writer.writerow(row)
    return out.getvalue()


def event_html(report: EventReport, labels: Labels) -> str:
    """The whole event as one printable page."""
    config = report.config
    title = html.escape(config.name if config else "?")
    parts = [
        f'<!DOCTYPE html>\n<html lang="{html.escape(labels["lang"])}">\n<head>\n<meta '
        'charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<h1>{title}</h1>",
        _summary(report, labels),
        _ranking_section(report, labels),
    ]
    for index, plan in enumerate(report.plans):
        round_ = index + 1
        heading = f"{labels['round'].format(round=round_)} ({labels[plan.movement.value]})"
        parts.append(f'<section class="round"><h2>{html.escape(heading)}</h2>')
        parts.append(_plan_table(report, round_, labels))
        parts.append("</section>")
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def _summary(report: EventReport, labels: Labels) -> str:
    config = report.config
    lines = []
    if config is not None:
        shape = labels["format"].format(
            rounds=counted(labels, "rounds", config.rounds),
            deals=counted(labels, "deals", config.deals),
        )
        lines.append(html.escape(shape))
        lines.append(html.escape(labels["movement"].format(movement=movement_used(report, labels))))
        lines.append(
            html.escape(labels["organiser"].format(fingerprint=fingerprint(config.organiser)))
        )
    if report.pending:
        lines.append(html.escape(counted(labels, "pending", len(report.pending))))
    verdict = (
        f'<p class="ok">{html.escape(labels["verified"])}</p>'
        if report.ok
        else f'<div class="bad"><p>{html.escape(labels["findings"])}</p><ul>'
        + "".join(f"<li>{html.escape(str(f))}</li>" for f in report.findings)
        + "</ul></div>"
    )
    return f'<p class="meta">{" — ".join(lines)}</p>\n{verdict}'


def _ranking_section(report: EventReport, labels: Labels) -> str:
    heading = (
        labels["ranking_after"].format(round=report.closed) if report.closed else labels["ranking"]
    )
    head = [labels["place"], labels["player"], labels["total"]]
    head += [labels["round"].format(round=r) for r in range(1, report.closed + 1)]
    head += [labels["won_rounds"], labels["best_round"]]
    rows = []
    for line in report.standings:
        cells = [
            f'<td class="num">{html.escape(_place(line, labels))}</td>',
            f"<td>{_player(report, line.player)}</td>",
            f'<td class="num total">{line.total}</td>',
        ]
        for result in line.rounds:
            mark = labels[result.mark.value]
            note = f' <span class="mark">{html.escape(mark)}</span>' if mark else ""
            cells.append(f'<td class="num">{result.points}{note}</td>')
        cells += [
            f'<td class="num">{line.won_rounds}</td>',
            f'<td class="num">{line.best_round}</td>',
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    header = "".join(f"<th>{html.escape(cell)}</th>" for cell in head)
    return (
        f'<section class="ranking"><h2>{html.escape(heading)}</h2>\n'
        f"<table>\n<thead><tr>{header}</tr></thead>\n"
        f"<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n</section>"
    )


def _plan_table(report: EventReport, round_: int, labels: Labels) -> str:
    """One round: each table, its players in seat order and their points this round."""
    plan = report.plans[round_ - 1]
    points = {
        result.player: result
        for line in report.live
        for result in line.rounds
        if result.round == round_
    }
    blocks = []
    for number, members in enumerate(plan.tables, start=1):
        rows = []
        for seat, key in enumerate(members):
            orientation = _orientation(plan.movement, seat)
            result = points.get(key)
            score = "" if result is None else str(result.points)
            mark = "" if result is None else labels[result.mark.value]
            note = f' <span class="mark">{html.escape(mark)}</span>' if mark else ""
            rows.append(
                f'<tr><td class="seat">{orientation}</td><td>{_player(report, key)}</td>'
                f'<td class="num">{score}{note}</td></tr>'
            )
        caption = html.escape(labels["table"].format(table=number))
        blocks.append(
            f'<table class="table"><caption>{caption}</caption>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return f'<div class="tables">{"".join(blocks)}</div>'


def _orientation(movement: Movement, seat: int) -> str:
    """The FFT's orientation of a seat at an FFT table (N, O, S, E), else the seat's number."""
    orientations = list(Orientation)
    return (
        orientations[seat].value
        if movement is Movement.FFT and seat < len(orientations)
        else str(seat + 1)
    )


def _place(line: Standing, labels: Labels) -> str:
    return f"{line.place} ({labels['tied']})" if line.tied else str(line.place)


def _name(report: EventReport, key: bytes) -> str:
    return report.names.get(key, fingerprint(key))


def _player(report: EventReport, key: bytes) -> str:
    return f'{html.escape(_name(report, key))} <span class="fp">{fingerprint(key)}</span>'


def _cell(text: str) -> str:
    """A name as a CSV cell no spreadsheet runs as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


_CSS: Final = """
body {
  font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 24px; margin: 1.5em;
  color: #000; background: #fff;
}
h1 { font-size: 2.2em; margin: 0 0 .2em; }
h2 { font-size: 1.6em; margin: 1.2em 0 .4em; border-bottom: 3px solid #000; }
.meta { font-size: 1em; }
.ok { font-weight: bold; }
.bad { border: 4px solid #b00; padding: .3em .8em; color: #b00; }
table { border-collapse: collapse; }
th, td { border: 1px solid #444; padding: .25em .6em; text-align: left; }
th { background: #ddd; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.total { font-weight: bold; }
.mark { font-size: .75em; font-style: italic; }
.fp { font-size: .6em; color: #444; font-family: monospace; white-space: nowrap; }
.tables { display: flex; flex-wrap: wrap; gap: 1em; }
.table caption { font-weight: bold; font-size: 1.1em; text-align: left; }
.seat { font-weight: bold; width: 2em; }
@media print {
  body { font-size: 14pt; margin: 0; }
  section.round { break-before: page; }
  .tables { display: block; }
  .table { margin-bottom: .8em; break-inside: avoid; }
}
"""


def available(language: str) -> Labels:
    """The labels of ``language`` (``fr`` or ``en``)."""
    if language not in LABELS:
        raise ValueError(f"no labels for {language!r}: one of {', '.join(LABELS)}")
    return LABELS[language]
