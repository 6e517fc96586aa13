"""The player's turn (issue 37, finding 10 and build item 5): the terminal's bell rings when a
decision waits, on by default, silenced by ``a`` or ``tarot play --no-bell``; the écart's
cursor starts on a card that may go, not a trump; the log names who played each card, the
last trick's too; the README says how the chelem is answered.  Without a daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import fragment_list_to_text
from prompt_toolkit.output import DummyOutput
from test_tui_round_change import next_round
from test_tui_screens import model as screen_model
from test_tui_screens import state as screen_state
from test_tui_terminal import HAND, playing

from client.cli import build_parser
from client.tui.app import TarotApp
from client.tui.i18n import Texts
from client.tui.journal import deal_log
from client.tui.model import Model
from protocol.rules.cards import card

ROOT = Path(__file__).resolve().parent.parent


class Sized80(DummyOutput):
    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


class Ringing(DummyOutput):
    """A terminal of 120×40 that counts its bells."""

    def __init__(self) -> None:
        self.bells = 0

    def get_size(self) -> Size:
        return Size(rows=40, columns=120)

    def bell(self) -> None:
        self.bells += 1


def app(bell: bool = True) -> tuple[TarotApp, Ringing]:
    output = Ringing()
    ui = TarotApp(Path("/nonexistent"), "en", output=output, bell=bell)
    return ui, output


def waiting() -> dict[str, Any]:
    state = playing()
    return {**state, "decision": None, "options": None, "waiting_for": [2]}


def test_the_bell_rings_once_when_a_decision_waits() -> None:
    ui, output = app()
    ui.take(waiting())
    assert output.bells == 0  # someone else's turn
    ui.take(playing())
    assert output.bells == 1  # ours: one ring
    ui.take(playing())
    assert output.bells == 1  # the same decision asked again: no second ring
    ui.take(next_round())
    assert output.bells == 2  # a bid asked


def test_a_silences_the_bell_and_no_bell_starts_silent() -> None:
    ui, output = app()
    ui.toggle_bell()
    assert ui.model.message == ui.texts("bell_off")
    ui.take(playing())
    assert output.bells == 0
    ui.toggle_bell()
    ui.take(next_round())
    assert output.bells == 1
    quiet, rung = app(bell=False)
    quiet.take(playing())
    assert rung.bells == 0
    args = build_parser().parse_args(["play", "--no-bell"])
    assert args.bell is False
    assert build_parser().parse_args(["play"]).bell is True


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_help_says_the_alert_key_and_fits_80_by_24(lang: str) -> None:
    """The help names the alert's key, and at 80×24 the whole of it is on screen with the
    lines below it (the prompt, the status, the keys)."""
    assert "  a / q  " in Texts(lang)("help")
    ui = TarotApp(Path("/nonexistent"), lang, output=Sized80())
    ui.model.status = {"name": "moi", "fingerprint": "0abc-0000", "peers": []}
    ui.model.update(playing())
    ui.model.say(ui.texts("connected", home="/home/marie/.local/share/tarot"))
    ui.model.show_help = True
    main = fragment_list_to_text(ui._main()).splitlines()
    below = sum(ui._rows(part) for part in (ui._prompt, ui._status, ui._help_line))
    assert 1 + len(main) + below <= 24, (len(main), below)
    assert all(len(line) <= 80 for line in main)


def test_the_ecart_cursor_starts_on_a_card_that_may_go() -> None:
    model = Model(Texts("en"), Path("/x"))
    state = playing()
    allowed = [c for c in HAND if not card(c).is_bout and c[0] != "K" and c != "EX"]
    model.update(
        {
            **state,
            "decision": "ecart",
            "options": {"ecart": {"allowed": allowed, "size": 3, "trumps_needed": 0}},
        }
    )
    assert model.cursor is not None and model.cursor.current is not None
    first = card(model.cursor.current)
    assert not first.is_trump and model.cursor.current in allowed, model.cursor.current
    assert model.ecart is not None and model.ecart.toggle(model.cursor.current) is None
    model.update(  # trumps needed: a trump may go, the first one the rules allow
        {
            **state,
            "deal": 5,
            "decision": "ecart",
            "options": {"ecart": {"allowed": ["T18", "T7"], "size": 3, "trumps_needed": 1}},
        }
    )
    assert model.cursor is not None and model.cursor.current == "T18"


def test_the_log_names_who_played_each_card_the_last_trick_too() -> None:
    tricks = [{"leader": 0, "cards": ["2S", "KH", "3S", "4S", "5S"], "winner": 1}] + [
        {"leader": 1, "cards": ["2C", "3C", "4C", "5C", "6C"], "winner": 2}
    ] * 13
    m = screen_model("en", screen_state(tricks=tricks, partner=1))
    m.last_view = m.view
    m.state = {**m.state, "view": None, "between_deals": True, "results": [{"deal": 2}]}  # type: ignore[dict-item]
    m.last_trick = {"cards": ["T1", "3D", "4D", "5D", "6D"], "winner": 3}  # no leader in it
    log = deal_log(m)
    assert "Trick 1 to bob: ana 2♠, bob K♥, cid 3♠, dan 4♠, eve 5♠" in log, log
    # led by the winner before
    assert "Trick 15 to dan: cid 1, dan 3♦, eve 4♦, ana 5♦, bob 6♦" in log, log


def test_the_readme_says_how_the_chelem_is_answered() -> None:
    for page in (ROOT / "README.md", ROOT / "docs" / "client.md"):
        row = next(
            line for line in page.read_text().splitlines() if line.startswith("| `y`/`o`, `n` |")
        )
        assert "`Enter` answers" in row, (page, row)
