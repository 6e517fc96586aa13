"""The seats' labels at the widths players have (issue 37, finding 5): at 100 to 104 columns
the two top seats' labels (and the two side seats' at five) never run into each other, long
names and bot tags included — the fingerprint gives way first, then the name, never the bot
tag; the bots a daemon hosts (``tarotd --bots N``, not only those added with ``b``) are tagged
"(bot LEVEL)", from the daemon's ``status``.  Without a daemon."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text
from test_tui_round_change import Sized
from test_tui_terminal import playing

from client.tui.app import TarotApp
from client.tui.geometry import Geometry
from client.tui.i18n import Texts
from client.tui.model import Model
from client.tui.table import info_lines, table_fragments

LONG = "Jean-Christophe"


def seated(players: int) -> dict[str, Any]:
    state = playing()
    names = [LONG] + [f"{LONG}-{k}" for k in range(1, players)]
    view = {
        **state["view"],
        "players": players,
        "dealer": 0,
        "taker": None,
        "contract": None,
        "bids": [],
        "current": [],
        "tricks": [],
        "poignees": [],
    }
    return {
        **state,
        "seats": names,
        "fingerprints": [f"{k}abc-0000" for k in range(players)],
        "dealer": 0,
        "view": view,
    }


def labels(row: str) -> list[str]:
    """The labels on a row of the table: runs of text two spaces or more apart."""
    return [part for part in re.split(r"\s{2,}", row.strip()) if part]


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("columns", [100, 101, 102, 103, 104, 120])
def test_the_top_seats_labels_never_overlap(lang: str, players: int, columns: int) -> None:
    state = seated(players)
    levels = {name: "strong" for name in state["seats"][1:]}
    model = Model(Texts(lang), Path("/x"), bot_levels=levels)
    model.update(state)
    width, height = Geometry(columns, 30).table(8)
    lines = fragment_list_to_text(table_fragments(model, width, height)).splitlines()
    tag = f"({Texts(lang)('bot_level', level='strong')})"
    tagged = [line for line in lines if tag in line]
    assert sum(line.count(tag) for line in tagged) == players - 1, "\n".join(lines)
    names = state["seats"]
    for line in tagged:
        seats = [label for label in labels(line) if tag in label]
        assert len(seats) == line.count(tag), line  # two labels, apart
        for label in seats:  # each whole: a seat's name (maybe cut), its fingerprint, its tag
            assert label.endswith(tag), (label, line)
            name = re.split(r" \[| \(", label.removeprefix("▶ "))[0].removesuffix("…")
            assert any(n.startswith(name) for n in names[1:]) and len(name) >= 4, (label, line)
    assert all(len(line) <= width for line in lines)


def test_the_bots_the_daemon_hosts_are_tagged() -> None:
    class Daemon:
        async def request(self, op: str, **params: Any) -> Any:
            return {
                "status": {
                    "name": LONG,
                    "fingerprint": "0abc-0000",
                    "peers": [],
                    "bots": {f"{LONG}-1": "strong", f"{LONG}-2": "basic"},
                },
                "state": seated(3),
                "tables": [],
                "events": [],
            }[op]

    ui = TarotApp(Path("/nonexistent"), "en", output=Sized(120, 40))
    ui.client = Daemon()  # type: ignore[assignment]
    asyncio.run(ui.refresh())
    assert ui.model.bot_levels == {f"{LONG}-1": "strong", f"{LONG}-2": "basic"}
    screen = ui.screen_text()
    assert f"{LONG}-1" in screen and "(bot strong)" in screen and "(bot basic)" in screen


def test_the_ecart_line_reads_the_same_whatever_order_it_comes_in() -> None:
    """A game taken up again (scripts/play --home) gives the écart in another order: the
    line shows it sorted as the hand is, the chien too (issue 37, finding 6)."""
    shown = []
    for ecart, chien in (
        (["5C", "2H", "9S"], ["QD", "T3", "4C"]),
        (["9S", "5C", "2H"], ["4C", "QD", "T3"]),
    ):
        state = seated(5)
        state["view"] = {
            **state["view"],
            "taker": 0,
            "contract": "garde",
            "ecart": ecart,
            "chien": chien,
        }
        model = Model(Texts("en"), Path("/x"))
        model.update(state)
        shown.append(fragment_list_to_text(info_lines(model)))
    assert shown[0] == shown[1], shown
