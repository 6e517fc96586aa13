"""The deck: 78 cards, their codes, values and names."""

import pytest

from protocol.rules.cards import (
    DECK,
    EXCUSE,
    PETIT,
    TOTAL_HALF_POINTS,
    CardCodeError,
    Suit,
    card,
    cards,
    from_index,
    sort_hand,
)


def test_deck_has_78_distinct_cards_with_stable_indexes() -> None:
    assert len(DECK) == 78
    assert [c.index for c in DECK] == list(range(78))
    assert len({c.code for c in DECK}) == 78
    assert sum(1 for c in DECK if c.is_trump) == 21
    assert sum(1 for c in DECK if c.suit.is_colour) == 56


def test_card_points_total_91_and_three_bouts() -> None:
    assert TOTAL_HALF_POINTS == 182
    assert {c.code for c in DECK if c.is_bout} == {"T1", "T21", "EX"}
    assert not EXCUSE.is_trump and PETIT.is_trump


@pytest.mark.parametrize(
    "code, half",
    [
        ("KH", 9),
        ("QS", 7),
        ("ND", 5),
        ("JC", 3),
        ("10H", 1),
        ("1S", 1),
        ("T21", 9),
        ("T1", 9),
        ("EX", 9),
        ("T20", 1),
    ],
)
def test_values_in_half_points(code: str, half: int) -> None:
    assert card(code).half_points == half


def test_every_code_round_trips_and_parses_case_insensitively() -> None:
    for c in DECK:
        assert card(c.code) is c
        assert card(c.code.lower()) is c
        assert from_index(c.index) is c


@pytest.mark.parametrize("bad", ["", "KX", "T0", "T22", "11S", "ZZ", "EXX", "K"])
def test_bad_codes_are_refused_with_a_clear_message(bad: str) -> None:
    with pytest.raises(CardCodeError, match="is not a card"):
        card(bad)


@pytest.mark.parametrize("bad", [-1, 78, True, "3"])
def test_bad_indexes_are_refused(bad: object) -> None:
    with pytest.raises(CardCodeError):
        from_index(bad)  # type: ignore[arg-type]  # a bool and a str among them on purpose: refused


def test_names_and_symbols_in_french_and_english() -> None:
    assert card("KH").name("fr") == "Roi de cœur"
    assert card("KH").name("en") == "King of hearts"
    assert card("KH").symbol("fr") == "R♥"
    assert card("KH").symbol("en") == "K♥"
    assert card("NC").name("fr") == "Cavalier de trèfle"
    assert card("NC").symbol("fr") == "C♣"
    assert card("NC").symbol("en") == "N♣"
    assert card("JD").name("en") == "Jack of diamonds"
    assert card("1S").name("fr") == "As de pique"
    assert card("T1").name("fr") == "Petit"
    assert card("T21").name("en") == "Trump 21"
    assert EXCUSE.symbol() == "★"
    with pytest.raises(ValueError, match="unknown language"):
        card("KH").name("de")


def test_sorted_hand_trumps_first_then_alternating_colours_excuse_last() -> None:
    hand = sort_hand(cards("EX 3S KH T5 T21 QD 1C 7S"))
    assert [c.code for c in hand] == ["T21", "T5", "7S", "3S", "KH", "1C", "QD", "EX"]
    suits = [c.suit for c in hand if c.suit.is_colour]
    assert suits == [Suit.SPADES, Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS]
