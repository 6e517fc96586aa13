"""An event's round over, as the player sees it (issue 37, finding 1): the daemon moves the
player's seat to the next round's table as soon as the last row is in, but the client keeps
the finished table's last deal on screen — its summary, its sheet — until the player presses
Enter or n, and ``r`` replays the finished table's deals there and at the new table; an
all-pass as a table's last deal does not promise a next dealer.  Drawn without a daemon, at
the sizes players use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import fragment_list_to_text
from prompt_toolkit.output import DummyOutput
from test_tui_summary import result, scored
from test_tui_terminal import NAMES, playing

from client.tui.app import TarotApp
from client.tui.i18n import Texts
from client.tui.model import Model
from client.tui.summary import summary_fragments


class Sized(DummyOutput):
    """A terminal of ``columns`` × ``rows`` that draws nothing."""

    def __init__(self, columns: int, rows: int) -> None:
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


def finished() -> dict[str, Any]:
    """Round 1's table, its last deal scored and the table finished."""
    _, audit = scored()
    row = result(audit)
    return {
        **playing(),
        "view": None,
        "decision": None,
        "options": None,
        "between_deals": False,
        "finished": True,
        "results": [row],
        "scores": row["scores"],
        "deal": 1,
    }


def next_round() -> dict[str, Any]:
    """Round 2's table: another id, a bid asked of the player, nothing scored yet."""
    state = playing()
    return {
        **state,
        "table": "cd" * 16,
        "name": "club R2 T1",
        "deal": 0,
        "decision": "bidding",
        "view": {**state["view"], "phase": "bidding", "bids": [], "tricks": [], "current": []},
        "options": {"bids": ["pass", "petite", "garde"]},
        "results": [],
        "scores": [0] * 5,
    }


def app(lang: str, columns: int = 120, rows: int = 40) -> TarotApp:
    ui = TarotApp(Path("/nonexistent"), lang, output=Sized(columns, rows))
    ui.model.status = {"name": "moi", "fingerprint": "0abc-0000", "peers": []}
    return ui


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_last_deal_stays_until_a_key_and_r_replays_it(lang: str, size: tuple[int, int]) -> None:
    ui = app(lang, *size)
    texts, model = ui.texts, ui.model
    model.update(finished())
    last = fragment_list_to_text(summary_fragments(model)).splitlines()[0]
    model.update(next_round())  # the daemon has seated round 2
    screen = ui.screen_text()
    assert last in screen, screen  # the finished table's last deal, still on screen
    assert texts("round_over_next") in screen
    assert texts("keys_held") in screen
    assert texts("prompt_bid") not in screen  # the new table's bid is not asked yet
    ui.toggle_replay()
    assert model.replay is not None and "1/1" in ui.screen_text()
    ui.move(1)  # a trick on
    assert model.replay.trick == 1
    ui.toggle_replay()
    ui.confirm()  # Enter: the new table
    assert not model.holding
    screen = ui.screen_text()
    assert texts("round_over_next") not in screen and last not in screen
    ui.toggle_replay()  # r at the new table: the round before's last deal
    assert model.replay is not None, model.message
    assert texts("replay_title", deal=1, index=1, count=1, step=texts("replay_dealt")) in (
        ui.screen_text()
    )
    ui.toggle_replay()
    assert model.decision == "bidding"  # and the new table's decision is there to make


def test_n_also_moves_on_and_sends_nothing() -> None:
    ui = app("en")
    ui.model.update(finished())
    ui.model.update(next_round())
    ui._next_or_no()
    assert not ui.model.holding and ui.model.message == ""


def test_a_table_that_is_not_finished_is_not_held() -> None:
    """A regroup (w) or the lobby's next table: no finished table before it, nothing held."""
    ui = app("en")
    ui.model.update({**finished(), "finished": False, "between_deals": True})
    ui.model.update(next_round())
    assert not ui.model.holding


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_an_all_pass_as_the_last_deal_promises_no_next_dealer(lang: str) -> None:
    texts = Texts(lang)
    state = finished()
    row = dict(state["results"][0])
    breakdown = dict(row["breakdown"])
    breakdown["bids"] = [{"seat": s, "contract": None} for s in range(5)]
    breakdown["score"] = None
    row.update(contract=None, taker=None, scores=[0] * 5, breakdown=breakdown)
    model = Model(texts, Path("/x"))
    model.update({**state, "results": [row], "scores": [0] * 5})
    text = fragment_list_to_text(summary_fragments(model))
    assert texts("summary_passed_last", deal=1) in text
    assert texts("summary_passed", deal=1) not in text
    model.update({**state, "results": [row], "scores": [0] * 5, "finished": False})
    assert texts("summary_passed", deal=1) in fragment_list_to_text(summary_fragments(model))


def test_the_replay_shows_the_chien() -> None:
    ui = app("en")
    ui.model.update({**finished(), "finished": False, "between_deals": True})
    ui.toggle_replay()
    screen = ui.screen_text()
    breakdown = ui.model.state["results"][0]["breakdown"]  # type: ignore[index]
    assert breakdown["chien"] and "Chien: " in screen, screen
    assert NAMES[0] in screen


def _from_the_daemon(**changes: Any) -> dict[str, Any]:
    """Round 2's table as a daemon gives it to a client that did not see round 1 end: with
    round 1's finished table as ``earlier``."""
    return {**next_round(), "earlier": finished(), **changes}


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
@pytest.mark.parametrize("before", ["connected since", "on the lobby"])
def test_a_client_that_did_not_see_the_round_end_holds_its_last_deal(
    lang: str, size: tuple[int, int], before: str
) -> None:
    """Connected (or reconnected) after the round's last row, or on the lobby screen when
    it came: the daemon's ``earlier`` is held all the same, until a key."""
    ui = app(lang, *size)
    texts, model = ui.texts, ui.model
    if before == "on the lobby":
        model.update({"table": None})
    model.update(_from_the_daemon())
    assert model.holding
    screen = ui.screen_text()
    held = Model(texts, Path("/x"))
    held.update(finished())
    last = fragment_list_to_text(summary_fragments(held)).splitlines()[0]
    assert last in screen and texts("round_over_next") in screen, screen
    assert texts("prompt_bid") not in screen
    ui.confirm()  # Enter: the new table, and the next answer does not hold it again
    model.update(_from_the_daemon())
    assert not model.holding and texts("prompt_bid") in ui.screen_text()
    ui.toggle_replay()  # r: round 1's deal
    assert model.replay is not None and "1/1" in ui.screen_text()


def test_a_client_back_once_the_new_table_scored_does_not_hold_but_replays() -> None:
    """A deal of the new round already scored: the player has been at it; round 1's table is
    kept all the same (r replays it once the new table has nothing to replay)."""
    ui = app("en")
    ui.model.update(_from_the_daemon(results=finished()["results"]))
    assert not ui.model.holding
    assert (ui.model.earlier or {}).get("table") == finished()["table"]  # kept, for r


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_an_all_pass_that_ends_an_events_round_says_the_round_is_over(lang: str) -> None:
    texts = Texts(lang)
    state = finished()
    row = dict(state["results"][0])
    breakdown = dict(row["breakdown"])
    breakdown["bids"] = [{"seat": s, "contract": None} for s in range(5)]
    row.update(contract=None, taker=None, scores=[0] * 5, breakdown={**breakdown, "score": None})
    model = Model(texts, Path("/x"))
    model.event = {"rounds": 2, "closed": 0, "open": 1}
    model.update({**state, "results": [row], "scores": [0] * 5})
    text = fragment_list_to_text(summary_fragments(model))
    assert texts("summary_passed_round_over", deal=1) in text, text
    assert texts("summary_passed", deal=1) not in text
    said = "the round is over" if lang == "en" else "la position est finie"
    assert said in text


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_r_after_a_round_whose_last_deal_everybody_passed_says_why_nothing_replays(
    lang: str,
) -> None:
    """A round's last deal passed by all has no trick to replay: ``r`` at the new table says
    so, not that no deal was scored (one was: the sheet shows it)."""
    ui = app(lang)
    state = finished()
    row = dict(state["results"][0])
    row.update(contract=None, taker=None, breakdown={**row["breakdown"], "tricks": []})
    ui.model.update({**state, "results": [row]})
    ui.model.update(next_round())
    ui.confirm()  # the finished table read
    ui.toggle_replay()
    assert ui.model.replay is None and ui.model.error
    assert ui.model.message == ui.texts("no_replay_unplayed")
    fresh = app(lang)  # a table with no deal scored anywhere: the plain answer
    fresh.model.update(next_round())
    fresh.toggle_replay()
    assert fresh.model.message == fresh.texts("no_replay")
