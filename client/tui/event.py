"""The event a player's daemon takes part in (``tarot event``, docs/event.md), as the client
shows it: where to sit this round, the rows still awaited, the live ranking with the
player's own line marked — in the lobby between rounds, and beside the table (Tab) while a
round is played — and as ``tarot event show`` prints it, the organiser's screen.  The
daemon's ``event`` answer is the truth; nothing here ranks anything.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui.i18n import Texts
from client.tui.model import Model
from protocol.event.export import available

#: Ranking lines shown beside the table: the leaders, and the player's own line if lower.
COMPACT_RANKING = 6


def _one_or_many(texts: Texts, key: str, count: int) -> str:
    """``key``, or its singular ``key_one`` for one (none too, in French)."""
    return f"{key}_one" if (count <= 1 if texts.lang == "fr" else count == 1) else key


def event_line(
    texts: Texts, event: dict[str, Any], *, unregistered: str = "event_not_registered"
) -> str:
    """One event heard on the LAN or held here (the daemon's ``events``), for a list; an
    event not joined says how to join it (the text ``unregistered``: a key, or a command)."""
    role = texts(f"event_role_{event['role']}") if event.get("role") else texts(unregistered)
    progress = (
        ""
        if event.get("closed") is None
        else texts("event_progress", closed=event["closed"], rounds=event["rounds"])
    )
    count = event.get("players")
    players = (
        "" if count is None else texts(_one_or_many(texts, "event_players", count), count=count)
    )
    return texts(
        "event_heard",
        name=event["name"],
        organiser=str(event["organiser"]).split("-")[0],
        role=role,
        players=players,
        progress=progress,
    )


def _round_marks(texts: Texts, rounds: list[list[Any]], event: dict[str, Any]) -> str:
    """Each round's points, and what the round was when it was not played in full; the round
    in progress says how far its table is (``+12 (2/4 deals)``), or that none is scored yet —
    not a ``+0`` that reads as a round played for nothing."""
    marks = []
    for number, (points, mark, *scored) in enumerate(rounds, start=1):
        played = int(scored[0]) if scored else None
        if number == event.get("open") and played is not None and played < int(event["deals"]):
            marks.append(
                texts("event_round_open", points=int(points), played=played, deals=event["deals"])
                if played
                else texts("event_round_started")
            )
            continue
        text = f"{int(points):>+5d}"
        if mark != "played":
            text += f" ({available(texts.lang)[mark]})"
        marks.append(text)
    return "  ".join(marks)


def _ranking_line(
    texts: Texts,
    event: dict[str, Any],
    line: dict[str, Any],
    ours: bool,
    compact: bool,
    width: int,
) -> StyleAndTextTuples:
    """One player's line, its name padded to ``width`` so that the totals make a column."""
    arrow = "→" if ours else " "
    text = f"{arrow} {line['place']:>2}. {str(line['name']).ljust(width)} {int(line['total']):>+6d}"
    if not compact:
        short_key = str(line["fingerprint"]).split("-")[0]
        text += f"   [{short_key}]   {_round_marks(texts, line.get('rounds', []), event)}"
    return [("class:seat.you" if ours else "", text), ("", "\n")]


def _ranking_header(
    texts: Texts, lines: list[dict[str, Any]], compact: bool, width: int
) -> StyleAndTextTuples:
    """The names of the ranking's columns, over them: place, player, total — and the key and
    each round's points on the full screen."""
    text = (
        f"  {texts('event_column_place'):>3} {texts('event_column_player').ljust(width)} "
        f"{texts('event_column_total'):>6}"
    )
    if not compact:
        key = max(len(str(line["fingerprint"]).split("-")[0]) for line in lines) + 2
        rounds = max(len(line.get("rounds", ())) for line in lines)
        text += f"   {texts('event_column_key').ljust(key)}   " + "  ".join(
            f"{texts('event_column_round', round=n):>5}" for n in range(1, rounds + 1)
        )
    return [("class:sheet.header", text.rstrip()), ("", "\n")]


def _ranking(
    texts: Texts, event: dict[str, Any], ours: str | None, compact: bool
) -> StyleAndTextTuples:
    lines: list[dict[str, Any]] = list(event.get("ranking", ()))
    over = event.get("closed") == event.get("rounds")
    out: StyleAndTextTuples = [
        ("class:heading", texts("event_ranking_final" if over else "event_ranking")),
        ("", "\n"),
    ]
    if not lines:
        return [*out, ("class:dim", texts("event_ranking_none")), ("", "\n")]
    shown, below = (lines[:COMPACT_RANKING], lines[COMPACT_RANKING:]) if compact else (lines, [])
    below = [line for line in below if line.get("fingerprint") == ours]
    width = max(
        len(texts("event_column_player")), *(len(str(line["name"])) for line in shown + below)
    )
    out += _ranking_header(texts, lines, compact, width)
    for line in shown:
        out += _ranking_line(texts, event, line, line.get("fingerprint") == ours, compact, width)
    if len(lines) > len(shown):  # more players below
        out.append(("class:dim", "   …\n"))
    for line in below:
        out += _ranking_line(texts, event, line, True, compact, width)
    return out


def _plans(texts: Texts, event: dict[str, Any]) -> StyleAndTextTuples:
    """Each round's tables, as the movement seated them: the organiser's table plan."""
    out: StyleAndTextTuples = []
    for plan in event.get("plans", ()):
        out += [
            (
                "class:heading",
                texts(
                    "event_plan",
                    round=plan["round"],
                    movement=available(texts.lang)[plan["movement"]],
                ),
            ),
            ("", "\n"),
        ]
        for number, members in enumerate(plan["tables"], start=1):
            out += [
                ("", texts("event_plan_table", table=number, members=", ".join(map(str, members)))),
                ("", "\n"),
            ]
    return out


def _progress(texts: Texts, event: dict[str, Any]) -> StyleAndTextTuples:
    """Where the player sits and what the event waits for."""
    out: StyleAndTextTuples = []
    seat = event.get("seat")
    if seat is not None:
        out += [
            (
                "class:prompt",
                texts(
                    "event_seat",
                    table=seat["table"],
                    round=seat["round"],
                    others=", ".join(map(str, seat["with"])),
                ),
            ),
            ("", "\n"),
        ]
    if event.get("open") is not None:
        awaited: dict[int, list[int]] = {}
        for _, table, deal in event.get("pending", ()):
            awaited.setdefault(int(table), []).append(int(deal))
        out += [
            ("", texts("event_playing", round=event["open"], rows=len(event.get("pending", ())))),
            ("", "\n"),
        ]
        for table, deals in sorted(awaited.items()):
            key = "event_awaited_one" if len(deals) == 1 else "event_awaited"
            out += [
                (
                    "class:dim",
                    texts(key, table=table, deals=", ".join(map(str, deals))),
                ),
                ("", "\n"),
            ]
    elif event.get("closed") == event.get("rounds"):
        out += [("class:heading", texts("event_over")), ("", "\n")]
    elif not event.get("plans"):
        key = (
            "event_waiting_start_organiser"
            if event.get("role") == "organiser"
            else "event_waiting_start"
        )
        out += [("", texts(key, count=len(event.get("players", ())))), ("", "\n")]
    return out


def event_screen(
    texts: Texts,
    event: dict[str, Any],
    ours: str | None,
    *,
    compact: bool = False,
    plans: bool = False,
) -> StyleAndTextTuples:
    """The event: its header, each round's tables (``plans``), where we sit, what is awaited,
    any fault of its record, the ranking with our line (fingerprint ``ours``) marked.
    ``compact`` (beside the table) keeps the leaders and our own line."""
    header = texts(
        "event_header",
        name=event["name"],
        rounds=texts.counted("rounds", int(event["rounds"])),
        deals=texts.counted("deals", int(event["deals"])),
        tables=event["tables"],
        role=texts(f"event_role_{event['role']}"),
    )
    out: StyleAndTextTuples = [("class:heading", header), ("", "\n")]
    if plans:
        names = ", ".join(str(p["name"]) for p in event.get("players", ()))
        out += [
            (
                "",
                texts(
                    _one_or_many(texts, "event_registered", len(event.get("players", ()))),
                    count=len(event.get("players", ())),
                    names=names,
                ),
            ),
            ("", "\n"),
            *_plans(texts, event),
        ]
    out += _progress(texts, event)
    out += [
        ("class:error", texts("event_fault", finding=finding))
        for finding in event.get("findings", ())
    ]
    return [*out, ("", "\n"), *_ranking(texts, event, ours, compact)]


def event_fragments(
    model: Model, *, compact: bool = False, event: dict[str, Any] | None = None
) -> StyleAndTextTuples:
    """The event the player's daemon takes part in (tonight's, or ``event``), as the client
    shows it."""
    shown = event if event is not None else model.event
    if shown is None:
        return [("class:dim", model.texts("event_none"))]
    return event_screen(
        model.texts, shown, (model.status or {}).get("fingerprint"), compact=compact
    )
