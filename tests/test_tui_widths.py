"""The panels at the widths players have (issue 37, finding 3): beside the table at 100, 120
and 200 columns, with 3, 4 and 5 players and long names, the score sheet never breaks inside
a number (+56 read "+5" at 120 columns at five) and the event panel, the sheet, the log and
the help line break between words, never inside one ("deal"/"s").  Drawn without a daemon."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text
from test_tui_app import _event_summary
from test_tui_round_change import Sized

from client.tui.app import TarotApp
from client.tui.event import event_fragments
from client.tui.wrap import wrap_fragments, wrap_text

LONG = ["Bernadette-Marie", "Jean-Christophe", "Marie-Hélène", "moi", "Maximilien"]
SCORES = [
    [112, -28, 56, -28, -112],
    [-1012, 56, 1056, -28, -72],
    [56, 56, -168, 28, 28],
]


def sheet_state(players: int) -> dict[str, Any]:
    rows = [
        {"deal": n, "contract": "garde", "taker": 0, "scores": scores[:players]}
        for n, scores in enumerate(SCORES)
    ]
    for row in rows:  # each row adds up to nothing, as a real one does
        row["scores"][-1] -= sum(row["scores"])
    return {
        "table": "ab" * 16,
        "name": "club",
        "seats": LONG[:players],
        "fingerprints": ["0abc-0000"] * players,
        "seat": min(3, players - 1),
        "deal": len(rows),
        "dealer": 0,
        "view": None,
        "waiting_for": [],
        "away": [],
        "decision": None,
        "options": None,
        "between_deals": True,
        "finished": False,
        "results": rows,
        "scores": [sum(r["scores"][s] for r in rows) for s in range(players)],
    }


def app(lang: str, columns: int, rows: int, players: int) -> TarotApp:
    ui = TarotApp(Path("/nonexistent"), lang, output=Sized(columns, rows))
    ui.model.status = {"name": "moi", "fingerprint": "0abc-0000", "peers": []}
    ui.model.update(sheet_state(players))
    ui.model.event = _event_summary()
    return ui


def words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("columns", [100, 104, 120, 160, 200])
def test_the_side_panel_keeps_every_number_whole(lang: str, players: int, columns: int) -> None:
    ui = app(lang, columns, 40, players)
    width = ui.geometry().side
    assert width > 0
    for panel in ("sheet", "event", "log"):
        ui.model.panel = panel
        text = fragment_list_to_text(ui._side())
        lines = text.splitlines()
        assert all(len(line) <= width for line in lines), (panel, width, text)
        if panel == "sheet":
            shown = set(re.findall(r"[+-]\d+", text))
            totals = {f"{t:+d}" for t in ui.model.state["scores"]}  # type: ignore[index]
            assert totals <= shown, (totals - shown, text)


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_event_panel_breaks_between_words(lang: str, columns: int) -> None:
    ui = app(lang, columns, 24, 5)
    ui.model.panel = ui.model.folded = "event"
    geometry = ui.geometry()
    shown = [(ui._main(), False, geometry.main)]  # folded in the table's place, or beside it
    if geometry.side:
        shown = [(ui._side(), True, geometry.side)]
    for part, compact, width in shown:
        whole = fragment_list_to_text(event_fragments(ui.model, compact=compact))
        text = fragment_list_to_text(part)
        assert words(text) == words(whole), text  # no word cut in two
        assert all(len(line) <= width for line in text.splitlines()), text


def test_wrapping_keeps_styles_and_cuts_only_a_word_wider_than_the_window() -> None:
    fragments = [("class:a", "3 rounds of "), ("class:b", "1 deal, tables of 4")]
    wrapped = wrap_fragments(fragments, 12)
    assert fragment_list_to_text(wrapped).splitlines() == ["3 rounds of", "1 deal,", "tables of 4"]
    assert {style for style, *_ in wrapped} == {"class:a", "class:b", ""}
    assert wrap_text("Jean-Christophe-Marie-Hélène x", 10) == [
        "Jean-Chris",
        "tophe-Mari",
        "e-Hélène x",
    ]
    assert wrap_text("+56", 2) == ["+5", "6"]  # only when nothing else can hold it


def test_the_lobby_takes_the_whole_width() -> None:
    """No panel beside the lobby: its lines break at the terminal's width, not the table's."""
    ui = TarotApp(Path("/nonexistent"), "en", output=Sized(160, 40))
    ui.model.status = {"name": "moi", "fingerprint": "0abc-0000", "peers": []}
    ui.model.state = {"table": None}
    ui.model.event = _event_summary(name="A club night whose name is long enough to need room " * 2)
    lines = fragment_list_to_text(ui._main()).splitlines()
    assert max(len(line) for line in lines) > 110, lines
    assert all(len(line) <= 160 for line in lines)
