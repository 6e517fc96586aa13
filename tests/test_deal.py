"""Whole deals driven action by action through the referee, :class:`protocol.rules.deal.Deal`."""

from __future__ import annotations

import pytest

from protocol.rules.cards import DECK, EXCUSE, card, cards
from protocol.rules.deal import AnnounceChelem, Bid, Call, Deal, Ecart, Phase, Play, ShowPoignee
from protocol.rules.rules import RuleError
from protocol.rules.scoring import Camp, score_deal
from protocol.rules.variants import Contract, PoigneeSize, variant
from protocol.rules.view import seat_view


def make_deal(players: int, dealer: int, hands: list[str], chien: str) -> Deal:
    return Deal(
        variant(players), dealer, tuple(tuple(cards(h)) for h in hands), tuple(cards(chien))
    )


def play_out(deal: Deal, scripts: dict[int, list[str]]) -> None:
    """Play every trick: seats with a script play its cards in order,
    others their first legal card."""
    queues = {seat: cards(s) for seat, s in scripts.items()}
    while deal.phase is Phase.PLAYING:
        seat = deal.to_act
        assert seat is not None
        chosen = queues[seat].pop(0) if queues.get(seat) else deal.legal_cards(seat)[0]
        deal.push(Play(seat, chosen))


SPADES = " ".join(f"{r}S" for r in "1 2 3 4 5 6 7 8 9 10 J N Q K".split())
HEARTS = SPADES.replace("S", "H")

# A 4-player deal where seat 1 holds the Excuse, the Petit and sixteen high trumps.
CHELEM_HANDS = [
    "5D 6D 7D 8D 9D 10D JD ND QD KD 1C 2C 3C 4C 5C 6C 7C 8C",
    "EX T1 " + " ".join(f"T{r}" for r in range(6, 22)),
    "T2 T3 T4 T5 " + SPADES,
    HEARTS + " 1D 2D 3D 4D",
]
CHELEM_CHIEN = "9C 10C JC NC QC KC"


def test_all_pass_is_a_void_deal() -> None:
    deal = Deal.from_seed(variant(4), 0, 7)
    assert deal.to_act == 1  # the player at the dealer's right speaks first
    for seat in (1, 2, 3, 0):
        deal.push(Bid(seat, None))
    assert deal.phase is Phase.VOID and deal.void_reason == "everybody passed"
    assert deal.outcome() is None


def test_petit_sec_voids_the_deal_before_bidding() -> None:
    hands = list(CHELEM_HANDS)
    hands[2] = "T1 " + SPADES + " T3 T4 T5"  # T1 with other trumps: not sec
    hands[1] = "EX T2 " + " ".join(f"T{r}" for r in range(6, 22))
    assert make_deal(4, 0, hands, CHELEM_CHIEN).phase is Phase.BIDDING
    hands[2] = "T1 " + SPADES + " 9C 10C JC"
    deal = make_deal(4, 0, hands, "T3 T4 T5 NC QC KC")
    assert deal.phase is Phase.VOID and "petit sec" in (deal.void_reason or "")


def test_bids_only_higher_each_seat_once_in_turn() -> None:
    deal = Deal.from_seed(variant(4), 3, 1)
    assert deal.to_act == 0
    deal.push(Bid(0, Contract.GARDE))
    with pytest.raises(RuleError, match="higher than Garde"):
        deal.push(Bid(1, Contract.PETITE))
    with pytest.raises(RuleError, match="not seat 2's turn"):
        deal.push(Bid(2, Contract.GARDE_SANS))
    deal.push(Bid(1, Contract.GARDE_SANS))
    deal.push(Bid(2, None))
    deal.push(Bid(3, None))
    assert deal.taker == 1 and deal.contract is Contract.GARDE_SANS
    assert deal.phase is Phase.CHELEM  # no chien to see on a Garde Sans


def test_announced_chelem_ending_on_the_excuse_with_petit_au_bout_before_it() -> None:
    deal = make_deal(4, 0, CHELEM_HANDS, CHELEM_CHIEN)
    for seat, bid in ((1, Contract.GARDE_SANS), (2, None), (3, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, True))
    assert deal.leader == 1  # the taker leads after announcing a chelem
    order = " ".join(f"T{r}" for r in range(21, 5, -1)) + " T1 EX"
    play_out(deal, {1: order.split()})
    assert deal.phase is Phase.DONE
    assert all(t.winner == 1 for t in deal.tricks)  # the Excuse takes the last trick
    outcome = deal.outcome()
    assert outcome is not None
    assert outcome.chelem is Camp.ATTACK and outcome.chelem_announced
    assert outcome.attack_half_points == 182 and outcome.bouts == 3
    assert outcome.petit_au_bout is Camp.ATTACK  # Petit in the penultimate trick counts
    # 91 points, 3 bouts: d = 91 - 36 = 55.  u = (25+55)*4 + 10*4 + 400 = 760; taker 3u.
    score = score_deal(outcome)
    assert (score.taker, score.defender) == (2280, -760)


def test_excuse_on_the_last_trick_outside_a_chelem_changes_camp() -> None:
    deal = make_deal(4, 3, CHELEM_HANDS, CHELEM_CHIEN)
    for seat, bid in ((0, None), (1, Contract.GARDE_SANS), (2, None), (3, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, False))
    assert deal.leader == 0  # no announcement: the dealer's right leads
    # Seat 0 leads a diamond; the taker trumps with the Petit, seat 2 overtrumps with the 2:
    # the defence takes the first trick, so the Excuse played last is no chelem's.
    play_out(deal, {1: ("T1 " + " ".join(f"T{r}" for r in range(21, 5, -1)) + " EX").split()})
    assert deal.tricks[0].winner == 2
    assert deal.tricks[-1].winner != 1
    assert EXCUSE in deal.piles()[Camp.DEFENCE]
    assert sum(deal.half_points().values()) == 182
    outcome = deal.outcome()
    assert outcome is not None and outcome.bouts == 1 and outcome.chelem is None


def test_excuse_exchange_gives_half_a_point() -> None:
    deal = make_deal(4, 0, CHELEM_HANDS, CHELEM_CHIEN)
    for seat, bid in ((1, Contract.GARDE_SANS), (2, None), (3, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, True))
    # The taker plays the Excuse first: the trick goes to the defence (a spade is led after it? no:
    # seat 2 must then play; the next card sets the suit) — the Excuse comes back to the taker,
    # who gives half a point to the defence.
    play_out(deal, {1: ("EX " + " ".join(f"T{r}" for r in range(21, 5, -1)) + " T1").split()})
    first = deal.tricks[0]
    assert first.cards[0] is EXCUSE and first.winner != 1
    piles = deal.piles()
    assert EXCUSE in piles[Camp.ATTACK]
    points = deal.half_points()
    trick_points = sum(c.half_points for c in first.cards) - EXCUSE.half_points
    assert points[Camp.DEFENCE] == trick_points + 1
    assert points[Camp.ATTACK] == 182 - points[Camp.DEFENCE]
    outcome = deal.outcome()
    assert outcome is not None and outcome.chelem is None  # the defence took a trick


def five_player_deal(called_holder: str) -> Deal:
    """Seat 1 takes; the king of hearts is with ``called_holder`` ("other", "taker", "chien")."""
    deal = Deal.from_seed(variant(5), 0, 11)
    kh = card("KH")
    where = next((s for s, h in enumerate(deal.dealt) if kh in h), None)
    target = {"other": 3, "taker": 1, "chien": None}[called_holder]
    if where != target:
        hands = [list(h) for h in deal.dealt]
        chien = list(deal.chien)
        src = hands[where] if where is not None else chien
        dst = hands[target] if target is not None else chien
        swap = next(c for c in dst if c is not kh and not c.is_trump and c is not card("T1"))
        src[src.index(kh)], dst[dst.index(swap)] = swap, kh
        deal = Deal(variant(5), 0, tuple(tuple(h) for h in hands), tuple(chien))
    for seat, bid in ((1, Contract.GARDE), (2, None), (3, None), (4, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(Call(1, kh))
    return deal


def test_five_players_called_king_makes_a_secret_partner() -> None:
    deal = five_player_deal("other")
    assert deal.phase is Phase.ECART and deal.partner == 3
    assert seat_view(deal, 3).partner == 3  # the holder knows
    assert seat_view(deal, 1).partner is None  # the taker does not
    assert seat_view(deal, 2).partner is None
    candidates, needed = deal.ecart_candidates()
    deal.push(Ecart(1, tuple(c for c in candidates if not c.is_trump)[:3]))
    deal.push(AnnounceChelem(1, False))
    while (
        deal.phase is Phase.PLAYING
        and deal.called not in [c for t in deal.tricks for c in t.cards] + deal.current
    ):
        seat = deal.to_act
        assert seat is not None
        deal.push(Play(seat, deal.legal_cards(seat)[0]))
    assert seat_view(deal, 2).partner == 3  # revealed once the king is played


def test_five_players_self_call_or_king_in_chien_plays_alone() -> None:
    for where in ("taker", "chien"):
        deal = five_player_deal(where)
        assert deal.partner is None
        assert deal.camp(1) is Camp.ATTACK
        assert all(deal.camp(s) is Camp.DEFENCE for s in (0, 2, 3, 4))


def test_ecart_turns_the_chien_and_checks_the_rules() -> None:
    deal = five_player_deal("other")
    hand = deal.hands[1]
    assert len(hand) == 18 and set(deal.chien) <= set(hand)
    kings = [c for c in hand if c.is_king]
    if kings:
        with pytest.raises(RuleError, match="king nor a bout"):
            deal.push(
                Ecart(
                    1,
                    (
                        kings[0],
                        *[c for c in hand if not c.is_king and not c.is_trump and not c.is_bout][
                            :2
                        ],
                    ),
                )
            )
    candidates, _ = deal.ecart_candidates()
    deal.push(Ecart(1, tuple(candidates[:3])))
    assert len(deal.hands[1]) == 15 and deal.phase is Phase.CHELEM


def test_poignee_once_before_the_first_card_only() -> None:
    hands = list(CHELEM_HANDS)
    deal = make_deal(4, 0, hands, CHELEM_CHIEN)
    for seat, bid in ((1, Contract.GARDE_SANS), (2, None), (3, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, True))
    assert deal.poignee_allowed(1)
    shown = tuple(cards(" ".join(f"T{r}" for r in range(6, 19))))  # 13 trumps: double at four
    deal.push(ShowPoignee(1, shown))
    assert not deal.poignee_allowed(1)
    with pytest.raises(RuleError, match="once"):
        deal.push(ShowPoignee(1, shown))
    deal.push(Play(1, card("T21")))
    assert not deal.poignee_allowed(2)  # seat 2 has four trumps only


def test_played_card_must_be_legal_and_in_turn() -> None:
    deal = make_deal(4, 3, CHELEM_HANDS, CHELEM_CHIEN)
    for seat, bid in ((0, None), (1, Contract.GARDE_SANS), (2, None), (3, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, False))
    with pytest.raises(RuleError, match="not seat 1's turn"):
        deal.push(Play(1, card("T21")))
    deal.push(Play(0, card("5D")))
    deal.push(Play(1, card("T21")))
    with pytest.raises(RuleError, match="must play a trump"):
        deal.push(Play(2, card("KS")))  # void in diamonds: must trump
    before = (list(deal.current), [list(h) for h in deal.hands])
    with pytest.raises(RuleError, match="not in your hand"):
        deal.push(Play(2, card("T6")))
    assert (deal.current, deal.hands) == before  # a refused action changes nothing
    deal.push(Play(2, card("T2")))  # cannot overtrump the 21: "pisser"
    with pytest.raises(RuleError, match="follow suit"):
        deal.push(Play(3, card("KH")))
    deal.push(Play(3, card("1D")))
    assert deal.tricks[0].winner == 1 and deal.leader == 1


def test_deal_refuses_a_pack_that_is_not_78_distinct_cards() -> None:
    hands = list(CHELEM_HANDS)
    hands[0] = hands[0].replace("8C", "7C 7C").replace("1C ", "")
    with pytest.raises(ValueError, match="78 cards"):
        make_deal(4, 0, hands, CHELEM_CHIEN)


def test_from_seed_is_reproducible() -> None:
    a = Deal.from_seed(variant(5), 2, "seed")
    b = Deal.from_seed(variant(5), 2, "seed")
    assert a.dealt == b.dealt and a.chien == b.chien
    assert Deal.from_seed(variant(5), 2, "other").dealt != a.dealt
    assert sorted(c for h in a.dealt for c in h) + sorted(a.chien) != list(DECK)  # shuffled


def test_after_an_excuse_lead_the_called_suit_stays_forbidden_on_the_first_trick() -> None:
    # Seed 15 at five: seat 1 holds the Excuse, seat 2 holds hearts but not the king of hearts.
    deal = Deal.from_seed(variant(5), 0, 15)
    for seat, bid in ((1, Contract.GARDE_SANS), (2, None), (3, None), (4, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(Call(1, card("KH")))
    deal.push(AnnounceChelem(1, False))
    deal.push(Play(1, EXCUSE))
    hand = deal.hands[2] or []
    assert any(c.suit.value == "H" for c in hand) and any(c.suit.value != "H" for c in hand)
    assert all(c.suit.value != "H" for c in deal.legal_cards(2))
    with pytest.raises(RuleError, match="called suit"):
        deal.push(Play(2, next(c for c in hand if c.suit.value == "H")))


# --- The écart's trumps in the taker's poignée -------------------------------------------


def garde_with(players: int, held: str) -> Deal:
    """Seat 1 takes a Garde with ``held`` as its hand and the chien (the chien last); the other
    cards go to the other seats in deck order."""
    v = variant(players)
    taker = cards(held)
    rest = [c for c in DECK if c not in taker]
    others = [tuple(rest[k * v.hand_size : (k + 1) * v.hand_size]) for k in range(players - 1)]
    hands = (others[0], tuple(taker[: v.hand_size]), *others[1:])
    deal = Deal(v, 0, hands, tuple(taker[v.hand_size :]))
    for seat in range(1, players + 1):
        deal.push(Bid(seat % players, Contract.GARDE if seat == 1 else None))
    if v.calls_a_card:
        deal.push(Call(1, card("KS")))  # its own king: the taker plays alone
    return deal


@pytest.mark.parametrize(
    "players, held, ecart",
    [
        # « Lorsque le preneur possède 4 Rois et 15 atouts, l'atout écarté doit être remontré
        # avec la triple Poignée qui est alors comptabilisée. »  4 players: 24 cards, 5 of
        # them neither a king nor a trump, so the écart of 6 takes a trump; 14 stay in hand.
        (
            4,
            "KS KH KD KC " + " ".join(f"T{r}" for r in range(1, 16)) + " 1S 2S 3S 4S 5S",
            "1S 2S 3S 4S 5S T15",
        ),
        # The same with the Excuse: 4 kings, 14 trumps and the Excuse leave 5 other cards;
        # 13 trumps in hand, the écart's and the Excuse make the 15 of the triple.
        (
            4,
            "KS KH KD KC EX " + " ".join(f"T{r}" for r in range(1, 15)) + " 1S 2S 3S 4S 5S",
            "1S 2S 3S 4S 5S T14",
        ),
        # 5 players: 4 kings and 13 trumps among 18 cards leave one other card, so the écart
        # of 3 takes two trumps; 11 stay in hand, two short of the triple's 13.
        (5, "KS KH KD KC " + " ".join(f"T{r}" for r in range(1, 14)) + " 1S", "1S T12 T13"),
    ],
    ids=["4p-four-kings-fifteen-trumps", "4p-with-the-excuse", "5p-two-trumps-in-the-ecart"],
)
def test_the_taker_shows_the_trumps_of_its_ecart_again_in_a_triple_poignee(
    players: int, held: str, ecart: str
) -> None:
    deal = garde_with(players, held)
    deal.push(Ecart(1, tuple(cards(ecart))))
    deal.push(AnnounceChelem(1, False))
    shown = tuple(c for c in cards(held) if c.is_trump or c.is_excuse)
    threshold = variant(players).threshold(PoigneeSize.TRIPLE)
    assert len(shown) == threshold and sum(1 for c in deal.hand(1) if c.is_trump) < threshold
    assert deal.poignee_allowed(1)
    deal.push(ShowPoignee(1, shown))
    play_out(deal, {})
    outcome = deal.outcome()
    assert outcome is not None and outcome.poignees == ((Camp.ATTACK, PoigneeSize.TRIPLE),)


# --- Petit au bout ------------------------------------------------------------------------


def test_petit_in_the_last_trick_taken_by_the_excuse_of_a_chelem_is_au_bout() -> None:
    # « Le camp qui réalise la dernière levée, à condition que cette levée comprenne le Petit,
    # bénéficie d'une prime ».  The taker (seat 1) leads every trick of its chelem and keeps
    # the Excuse for the last (« s'il détient l'Excuse, la jouer en dernier »); seat 2 follows
    # the spades and trumps led until only its Petit is left: the last trick is EX T1 QD ND,
    # and the Excuse takes it, Petit included, for the attack.
    hands = [
        "4D 5D 6D 7D 8D 9D 10D JD ND KD 1C 2C 3C 4C 5C 6C 7C 8C",
        "EX KS QS NS JS 10S 9S 8S " + " ".join(f"T{r}" for r in range(12, 22)),
        "1S 2S 3S 4S 5S 6S 7S " + " ".join(f"T{r}" for r in range(1, 12)),
        HEARTS + " 1D 2D 3D QD",
    ]
    deal = make_deal(4, 0, hands, "9C 10C JC NC QC KC")
    for seat, bid in ((1, Contract.GARDE_SANS), (2, None), (3, None), (0, None)):
        deal.push(Bid(seat, bid))
    deal.push(AnnounceChelem(1, True))
    spades = "KS QS NS JS 10S 9S 8S"
    play_out(
        deal,
        {
            1: f"{spades} {' '.join(f'T{r}' for r in range(21, 11, -1))} EX".split(),
            2: f"7S 6S 5S 4S 3S 2S 1S {' '.join(f'T{r}' for r in range(11, 0, -1))}".split(),
            3: (HEARTS + " 1D 2D 3D QD").split(),
            0: "4D 5D 6D 7D 8D 9D 10D JD KD 1C 2C 3C 4C 5C 6C 7C 8C ND".split(),
        },
    )
    last = deal.tricks[-1]
    assert last.cards == tuple(cards("EX T1 QD ND")) and last.winner == 1
    outcome = deal.outcome()
    assert outcome is not None and outcome.chelem is Camp.ATTACK
    assert outcome.petit_au_bout is Camp.ATTACK
    # 91 points, 3 bouts: d = 55.  u = (25+55)·4 + 10·4 + 400 = 760; the taker 3u.
    score = score_deal(outcome)
    assert (score.taker, score.defender) == (2280, -760)
