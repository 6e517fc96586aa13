"""The FFT rules of play, position by position (rulebook 2012, "Le jeu de la carte")."""

import pytest

from protocol.rules.cards import Card, Suit, card, cards
from protocol.rules.rules import (
    RuleError,
    callable_cards,
    check_call,
    check_ecart,
    check_play,
    check_poignee,
    default_poignee,
    has_petit_sec,
    higher_contracts,
    legal_plays,
    poignee_sizes_available,
    trick_winner,
    trumps_needed_in_ecart,
)
from protocol.rules.variants import Contract, PoigneeSize, variant


def codes(cs: list[Card]) -> set[str]:
    return {c.code for c in cs}


# --- Following -----------------------------------------------------------------------


def test_must_follow_suit_but_need_not_go_higher() -> None:
    hand = cards("2H KH T5 EX 3S")
    assert codes(legal_plays(hand, cards("QH"))) == {"2H", "KH", "EX"}


def test_void_in_suit_must_trump() -> None:
    hand = cards("T5 T12 3S EX")
    assert codes(legal_plays(hand, cards("QH"))) == {"T5", "T12", "EX"}


def test_must_overtrump_a_trump_already_in_the_trick() -> None:
    hand = cards("T5 T12 3S")
    assert codes(legal_plays(hand, cards("QH T8"))) == {"T12"}


def test_pisser_when_unable_to_overtrump() -> None:
    hand = cards("T5 T6 3S")
    assert codes(legal_plays(hand, cards("QH T8"))) == {"T5", "T6"}


def test_trump_lead_must_go_higher_if_possible() -> None:
    hand = cards("T3 T9 T15 KH")
    assert codes(legal_plays(hand, cards("T10"))) == {"T15"}
    assert codes(legal_plays(hand, cards("T10 T18"))) == {"T3", "T9", "T15"}


def test_trump_lead_without_trumps_discards_anything() -> None:
    hand = cards("KH 3S QC")
    assert codes(legal_plays(hand, cards("T10"))) == {"KH", "3S", "QC"}


def test_no_suit_and_no_trump_discards_anything() -> None:
    hand = cards("KS 3C")
    assert codes(legal_plays(hand, cards("QH T2"))) == {"KS", "3C"}


def test_excuse_may_always_be_played() -> None:
    for trick in (cards("QH"), cards("QH T8"), cards("T10"), []):
        assert card("EX") in legal_plays(cards("2H T5 EX"), trick)


def test_excuse_lead_lets_the_next_card_set_the_suit() -> None:
    assert codes(legal_plays(cards("2H KS T5"), cards("EX"))) == {"2H", "KS", "T5"}
    assert codes(legal_plays(cards("2H KS T5"), cards("EX KH"))) == {"2H"}


def test_first_lead_at_five_not_in_the_called_suit_except_the_called_card() -> None:
    hand = cards("KH 2H 3S T4")
    legal = legal_plays(hand, [], forbidden_lead_suit=Suit.HEARTS, called=card("KH"))
    assert codes(legal) == {"KH", "3S", "T4"}
    only_hearts = cards("2H 3H")
    assert codes(
        legal_plays(only_hearts, [], forbidden_lead_suit=Suit.HEARTS, called=card("KH"))
    ) == {"2H", "3H"}


def test_check_play_explains_the_rule() -> None:
    with pytest.raises(RuleError, match="follow suit"):
        check_play(cards("2H T5"), cards("QH"), card("T5"))
    with pytest.raises(RuleError, match="higher than 8"):
        check_play(cards("T5 T12"), cards("QH T8"), card("T5"))
    with pytest.raises(RuleError, match="must play a trump"):
        check_play(cards("T5 3S"), cards("QH"), card("3S"))
    with pytest.raises(RuleError, match="not in your hand"):
        check_play(cards("T5"), [], card("T6"))
    with pytest.raises(RuleError, match="called suit"):
        check_play(
            cards("2H 3S"), [], card("2H"), forbidden_lead_suit=Suit.HEARTS, called=card("KH")
        )


# --- Who takes the trick -------------------------------------------------------------


@pytest.mark.parametrize(
    "trick, winner",
    [
        ("QH 2H KH 5H", 2),  # highest of the led suit
        ("QH KS 2H", 0),  # another suit never wins
        ("QH T2 KH", 1),  # any trump beats the suit
        ("QH T2 T14 T3", 2),  # highest trump
        ("EX QH KH 2H", 2),  # the Excuse never wins; the next card sets the suit
        ("QH EX 2H T1", 3),  # the Petit is a trump
        ("T21 EX T20", 0),
    ],
)
def test_trick_winner(trick: str, winner: int) -> None:
    assert trick_winner(cards(trick)) == winner


def test_excuse_wins_only_as_last_card_of_a_chelem() -> None:
    assert trick_winner(cards("KH EX 2H"), excuse_wins=True) == 1
    assert trick_winner(cards("KH EX 2H"), excuse_wins=False) == 0


# --- Bidding, call, petit sec ---------------------------------------------------------


def test_each_bid_must_be_higher() -> None:
    assert higher_contracts(None) == list(Contract)
    assert higher_contracts(Contract.GARDE) == [Contract.GARDE_SANS, Contract.GARDE_CONTRE]
    assert higher_contracts(Contract.GARDE_CONTRE) == []


def test_petit_sec() -> None:
    assert has_petit_sec(cards("T1 KH 2S 3D"))
    assert not has_petit_sec(cards("T1 EX 2S"))  # the Excuse protects it
    assert not has_petit_sec(cards("T1 T2 2S"))
    assert not has_petit_sec(cards("T2 2S"))


def test_call_a_king_or_lower_with_all_higher_honours() -> None:
    assert codes(callable_cards(cards("2S 3H"))) == {"KS", "KH", "KD", "KC"}
    four_kings = cards("KS KH KD KC")
    assert codes(callable_cards(four_kings)) == {"KS", "KH", "KD", "KC", "QS", "QH", "QD", "QC"}
    kings_queens = cards("KS KH KD KC QS QH QD QC")
    assert "NS" in codes(callable_cards(kings_queens)) and "JS" not in codes(
        callable_cards(kings_queens)
    )
    mariages = cards("KS KH KD KC QS QH QD QC NS NH ND NC")
    assert "JC" in codes(callable_cards(mariages))
    check_call(cards("KH 2S"), card("KH"))  # calling oneself is allowed
    with pytest.raises(RuleError, match="four cards"):
        check_call(cards("KS KH KD 2C"), card("QS"))
    with pytest.raises(RuleError, match="cannot be called"):
        check_call(cards("KS"), card("T21"))


# --- Écart -----------------------------------------------------------------------------


def test_ecart_no_king_no_bout() -> None:
    hand = cards("KH T1 EX T21 2S 3S 4S 5S 6S 7S")
    check_ecart(hand, cards("2S 3S 4S"), 3)
    for bad in ("KH 2S 3S", "T1 2S 3S", "EX 2S 3S", "T21 2S 3S"):
        with pytest.raises(RuleError, match="neither a king nor a bout"):
            check_ecart(hand, cards(bad), 3)


def test_ecart_trump_refused_while_another_card_is_allowed() -> None:
    hand = cards("T5 T6 2S 3S 4S KH")
    with pytest.raises(RuleError, match="no other card"):
        check_ecart(hand, cards("T5 2S 3S"), 3)
    check_ecart(hand, cards("2S 3S 4S"), 3)


def test_ecart_trumps_when_unavoidable() -> None:
    hand = cards("T5 T6 T7 2S KH KD T21")
    assert trumps_needed_in_ecart(hand, 3) == 2
    check_ecart(hand, cards("T5 T6 2S"), 3)
    with pytest.raises(RuleError):
        check_ecart(hand, cards("T5 T6 T7"), 3)  # 2S must go before a third trump


def test_ecart_size_and_ownership() -> None:
    hand = cards("2S 3S 4S 5S")
    with pytest.raises(RuleError, match="exactly 3"):
        check_ecart(hand, cards("2S 3S"), 3)
    with pytest.raises(RuleError, match="exactly 3"):
        check_ecart(hand, cards("2S 2S 3S"), 3)
    with pytest.raises(RuleError, match="not in your hand"):
        check_ecart(hand, cards("2S 3S 9S"), 3)


# --- Poignées --------------------------------------------------------------------------


def test_poignee_thresholds_per_variant() -> None:
    five, four, three = variant(5), variant(4), variant(3)
    trumps8 = cards("T2 T3 T4 T5 T6 T7 T8 T9")
    assert check_poignee(trumps8 + cards("KH"), trumps8, five) is PoigneeSize.SIMPLE
    trumps10 = cards("T2 T3 T4 T5 T6 T7 T8 T9 T10 T11")
    assert check_poignee(trumps10, trumps10, four) is PoigneeSize.SIMPLE
    assert check_poignee(trumps10, trumps10, five) is PoigneeSize.DOUBLE
    with pytest.raises(RuleError, match="exactly 13/15/18"):
        check_poignee(trumps10, trumps10, three)


def test_poignee_must_show_exactly_the_threshold() -> None:
    nine = cards("T2 T3 T4 T5 T6 T7 T8 T9 T10")
    with pytest.raises(RuleError, match="exactly 8/10/13"):
        check_poignee(nine, nine, variant(5))
    assert check_poignee(nine, nine[:8], variant(5)) is PoigneeSize.SIMPLE  # hide one


def test_excuse_in_a_poignee_only_without_other_trump() -> None:
    seven = cards("T2 T3 T4 T5 T6 T7 T8")
    assert check_poignee(seven + cards("EX"), seven + cards("EX"), variant(5)) is PoigneeSize.SIMPLE
    eight = seven + cards("T9")
    with pytest.raises(RuleError, match="no other trump"):
        check_poignee(eight + cards("EX"), seven + cards("EX"), variant(5))


def test_poignee_only_trumps_of_the_hand() -> None:
    seven = cards("T2 T3 T4 T5 T6 T7 T8")
    with pytest.raises(RuleError, match="not a trump"):
        check_poignee(seven + cards("KH"), seven + cards("KH"), variant(5))
    with pytest.raises(RuleError, match="not in your hand"):
        check_poignee(seven, seven + cards("T9"), variant(5))


def test_poignee_sizes_and_default_choice() -> None:
    hand = cards("T2 T3 T4 T5 T6 T7 T8 T9 T10 T11 EX")
    assert poignee_sizes_available(hand, variant(5)) == [PoigneeSize.SIMPLE, PoigneeSize.DOUBLE]
    shown = default_poignee(hand, variant(5), PoigneeSize.SIMPLE)
    assert codes(shown) == {f"T{r}" for r in range(2, 10)}
    almost = cards("T2 T3 T4 T5 T6 T7 T8 EX")
    assert card("EX") in default_poignee(almost, variant(5), PoigneeSize.SIMPLE)


# The FFT on the taker whose écart had to take a trump: « Lorsque le preneur possède 4 Rois et
# 15 atouts, l'atout écarté doit être remontré avec la triple Poignée qui est alors
# comptabilisée. »  The écart's trumps were shown to the table: they count in its poignée.
TRUMPS_1_TO_14 = cards(" ".join(f"T{r}" for r in range(1, 15)))


def test_the_ecart_trump_is_shown_again_with_the_triple_poignee() -> None:
    # 4 players: 4 kings and 15 trumps among the 24 cards of hand and chien leave 5 other
    # cards for an écart of 6, so one trump goes there; 14 stay in hand, one short of 15.
    hand = cards("KS KH KD KC") + TRUMPS_1_TO_14
    ecart = cards("1S 2S 3S 4S 5S T15")
    triple = TRUMPS_1_TO_14 + cards("T15")
    assert poignee_sizes_available(hand, variant(4)) == [PoigneeSize.SIMPLE, PoigneeSize.DOUBLE]
    assert poignee_sizes_available(hand, variant(4), ecart) == list(PoigneeSize)
    assert check_poignee(hand, triple, variant(4), ecart) is PoigneeSize.TRIPLE
    # The trump the table has already seen is the first one shown, for any poignée.
    assert default_poignee(hand, variant(4), PoigneeSize.TRIPLE, ecart) == [
        card("T15"),
        *TRUMPS_1_TO_14,
    ]
    assert default_poignee(hand, variant(4), PoigneeSize.SIMPLE, ecart)[0] is card("T15")
    # Only the taker has an écart; and its other cards were never shown.
    with pytest.raises(RuleError, match="T15 is not in your hand"):
        check_poignee(hand, triple, variant(4))
    with pytest.raises(
        RuleError, match="1S is not in your hand nor among the trumps of your écart"
    ):
        check_poignee(hand, [*TRUMPS_1_TO_14, card("1S")], variant(4), ecart)


def test_the_ecart_trump_counts_as_a_trump_held_beside_the_excuse() -> None:
    # 4 players, 4 kings, 14 trumps and the Excuse: 5 other cards, so one trump in the écart.
    # « L'Excuse peut remplacer un Atout manquant mais la présentation de l'Excuse dans la
    # Poignée implique que l'annonceur n'a pas d'autre Atout »: with the écart's trump, the
    # thirteen of the hand and the Excuse make the fifteen of a triple.
    hand = cards("KS KH KD KC EX") + TRUMPS_1_TO_14[:13]
    ecart = cards("1S 2S 3S 4S 5S T14")
    shown = TRUMPS_1_TO_14 + cards("EX")
    assert check_poignee(hand, shown, variant(4), ecart) is PoigneeSize.TRIPLE
    assert default_poignee(hand, variant(4), PoigneeSize.TRIPLE, ecart) == [
        card("T14"),
        *TRUMPS_1_TO_14[:13],
        card("EX"),
    ]
    # 5 players, 2 kings, 13 trumps and the Excuse among 18: 2 other cards, a trump in the
    # écart of 3.  Twelve trumps and the Excuse would hide that trump: the Excuse is refused.
    hand = cards("KS KH EX") + TRUMPS_1_TO_14[:12]
    ecart = cards("1S 2S T13")
    with pytest.raises(RuleError, match="no other trump"):
        check_poignee(hand, [*TRUMPS_1_TO_14[:12], card("EX")], variant(5), ecart)
    assert check_poignee(hand, TRUMPS_1_TO_14[:13], variant(5), ecart) is PoigneeSize.TRIPLE
