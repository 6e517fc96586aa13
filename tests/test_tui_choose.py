"""The client's picking rules, without a screen or a daemon: the cursor stays on what may be
taken, the écart and the poignée refuse a wrong card with the reason, the words exist in
both languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.tui.choose import Choice, EcartPicker, HandCursor, PoigneePicker, Refusal
from client.tui.i18n import _TEXT, Texts, language_from_environment
from client.tui.model import Model, sorted_codes
from protocol.rules.cards import card
from protocol.rules.rules import Rule


def test_a_choice_cursor_stays_inside_and_selects_only_what_is_offered() -> None:
    choice = Choice(["pass", "garde", "garde-sans"])
    choice.move(-1)
    assert choice.current == "pass"
    choice.move(5)
    assert choice.current == "garde-sans"
    assert not choice.select("petite") and choice.current == "garde-sans"
    assert choice.select("garde") and choice.current == "garde"


def test_the_hand_cursor_lands_only_on_enabled_cards() -> None:
    cursor = HandCursor(["T21", "T3", "KS", "2S", "EX"], {"KS", "EX"})
    assert cursor.current == "KS"
    cursor.move(-1)
    assert cursor.current == "KS"  # nothing enabled to the left: no move
    cursor.move(1)
    assert cursor.current == "EX"
    assert not cursor.select("T3") and cursor.select("KS")
    assert HandCursor(["T21"], set()).current is None


def test_the_ecart_refuses_a_trump_while_other_cards_may_go() -> None:
    picker = EcartPicker(
        allowed=["QS", "2S", "3H", "4H", "5D", "6D", "7C"], size=6, trumps_needed=0
    )
    assert picker.toggle("T5") == Refusal.by(Rule.ECART_TRUMP)
    assert picker.toggle("KS") == Refusal.by(Rule.ECART_KING_OR_BOUT, card=card("KS"))
    # A bout, not merely a trump.
    assert picker.toggle("T21") == Refusal.by(Rule.ECART_KING_OR_BOUT, card=card("T21"))
    for code in ["QS", "2S", "3H", "4H", "5D", "6D"]:
        assert picker.toggle(code) is None
    assert picker.toggle("7C") == Refusal("ecart_full", {"size": 6}) and picker.missing == 0
    assert picker.toggle("QS") is None and picker.missing == 1  # taken back
    assert picker.toggle("7C") is None and sorted(picker.picked) == sorted(
        ["2S", "3H", "4H", "5D", "6D", "7C"]
    )


def test_the_ecart_takes_exactly_the_trumps_it_cannot_avoid() -> None:
    # Two cards other than kings and trumps: one trump must go with them (chien of 3).
    picker = EcartPicker(allowed=["2S", "3H", "T4", "T7"], size=3, trumps_needed=1)
    assert picker.toggle("T4") is None
    assert picker.toggle("T7") == Refusal("ecart_trumps_enough", {"needed": 1})
    assert picker.toggle("2S") is None and picker.toggle("3H") is None and picker.missing == 0
    other = EcartPicker(allowed=["2S", "3H", "T4", "T7"], size=3, trumps_needed=1)
    assert other.toggle("2S") is None and other.toggle("3H") is None
    assert other.toggle("T4") is None  # the last place was kept for the trump
    keep = EcartPicker(allowed=["2S", "3H", "4H", "T4"], size=3, trumps_needed=1)
    assert keep.toggle("2S") is None and keep.toggle("3H") is None
    assert keep.toggle("4H") == Refusal("ecart_not_trump", {"needed": 1})


def test_a_poignee_starts_with_the_lowest_trumps_and_checks_the_count_and_the_excuse() -> None:
    trumps = ["T21", "T18", "T15", "T12", "T9", "T7", "T5", "T3", "T2", "EX"]
    picker = PoigneePicker(trumps, {"simple": 8})
    assert sorted(picker.picked) == sorted(["T2", "T3", "T5", "T7", "T9", "T12", "T15", "T18"])
    assert picker.size == "simple" and picker.problem() is None
    assert picker.toggle("T21") == Refusal("poignee_full", {"count": 8})
    assert picker.toggle("KS") == Refusal.by(Rule.POIGNEE_NOT_TRUMP, card=card("KS"))
    assert picker.toggle("T2") is None and picker.size is None
    assert picker.problem() == Refusal("poignee_size", {"sizes": "8"})
    assert picker.toggle("EX") is None
    # The Excuse while T2 and T21 stay hidden.
    assert picker.problem() == Refusal.by(Rule.POIGNEE_EXCUSE)
    short = PoigneePicker(["T9", "T7", "T5", "T4", "T3", "T2", "T1", "EX"], {"simple": 8})
    assert "EX" in short.picked and short.problem() is None  # the Excuse completes all trumps


def test_a_poignee_starts_with_the_trumps_of_the_takers_ecart() -> None:
    # « l'atout écarté doit être remontré avec la triple Poignée »: the écart's trump, which
    # is not in the hand to be marked, is in the poignée from the start.
    hand = [f"T{r}" for r in range(1, 15)]
    picker = PoigneePicker([*hand, "T15"], {"simple": 10, "double": 13, "triple": 15}, ["T15"])
    assert picker.picked == ["T15", *hand[:9]] and picker.size == "simple"
    for code in hand[9:]:
        assert picker.toggle(code) is None
    assert picker.size == "triple" and picker.problem() is None


def test_every_sentence_exists_in_both_languages_and_refusals_are_said_by_their_code() -> None:
    assert set(_TEXT["fr"]) == set(_TEXT["en"])
    fr, en = Texts("fr"), Texts("en")
    message = "a trump may go to the écart only when you have no other card to put there"
    assert fr.refusal(message, "rule", {"rule": "ecart-trump"}) == (
        "Un atout ne va à l'écart que si vous ne pouvez faire autrement."
    )
    assert en.refusal(message) == f"Refused: {message}"  # an older daemon: its words
    assert fr.refusal(message) == f"Refusé : {message}"  # never read back from them
    with pytest.raises(ValueError):
        Texts("de")


def test_the_language_comes_from_the_locale() -> None:
    assert language_from_environment({"LANG": "fr_FR.UTF-8"}) == "fr"
    assert language_from_environment({"LC_ALL": "en_GB.UTF-8", "LANG": "fr_FR.UTF-8"}) == "en"
    assert language_from_environment({"LC_MESSAGES": "fr_CA"}) == "fr"
    assert language_from_environment({}) == "en"


def test_the_picks_start_afresh_with_each_new_decision() -> None:
    model = Model(Texts("en"), Path("/nonexistent"))
    view = {
        "hand": ["2S", "T4", "EX", "KH", "3D", "T21"],
        "bids": [],
        "tricks": [],
        "current": [],
        "poignees": [],
    }
    ecart = {"allowed": ["2S", "3D"], "size": 1, "trumps_needed": 0}
    model.update(
        {"table": "t", "deal": 0, "decision": "ecart", "view": view, "options": {"ecart": ecart}}
    )
    assert model.hand == [
        "T21",
        "T4",
        "2S",
        "KH",
        "3D",
        "EX",
    ]  # trumps, suits alternating colours, the Excuse
    assert model.ecart is not None and model.ecart.toggle("2S") is None
    model.update(
        {"table": "t", "deal": 0, "decision": "ecart", "view": view, "options": {"ecart": ecart}}
    )
    assert model.ecart.picked == ["2S"]  # the same decision: the marks stay
    model.update(
        {
            "table": "t",
            "deal": 0,
            "decision": "playing",
            "view": view,
            "options": {"cards": ["3D"], "poignee": None},
        }
    )
    assert model.ecart is None and model.cursor is not None and model.cursor.current == "3D"
    assert not model.start_poignee()
    assert sorted_codes(["EX", "2S"]) == ["2S", "EX"]
