"""The strong bot (protocol/bots/strong.py) and its sampler: the samples never break what the view
shows, the choice depends on the view alone, and textbook positions are played right."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from protocol.bots.bots import BasicPolicy, make_bot
from protocol.bots.players import decide
from protocol.bots.sampler import constraints, sample
from protocol.bots.strong import StrongPolicy
from protocol.rules.cards import DECK, PETIT, Card, Suit, card, cards
from protocol.rules.deal import AnnounceChelem, Bid, Call, Deal, Phase, Play
from protocol.rules.rules import may_discard
from protocol.rules.variants import Contract, variant
from protocol.rules.view import SeatView, seat_view

# --- Helpers ----------------------------------------------------------------------------


def partial_deal(players: int, seed: int, actions: int) -> Deal:
    """A deal played by basic bots for ``actions`` actions (or to its last card)."""
    deal = Deal.from_seed(variant(players), seed % players, seed)
    bot = BasicPolicy()
    done = 0
    while not deal.finished and done < actions:
        pending = decide(deal, bot)
        for action in pending:
            deal.push(action)
        done += 1
    return deal


def shown_facts(view: SeatView) -> tuple[list[set[Suit]], list[int]]:
    """Voids and trump ceilings from the tricks, computed here again, independently."""
    n = view.players
    voids: list[set[Suit]] = [set() for _ in range(n)]
    ceiling = [21] * n
    for leader, trick in [(t.leader, t.cards) for t in view.tricks] + [(view.leader, view.current)]:
        led = next((c.suit for c in trick if not c.is_excuse), None)
        top = 0
        for i, c in enumerate(trick):
            seat = (leader + i) % n
            if c.is_excuse:
                continue
            if c.suit is not led:
                assert led is not None
                voids[seat].add(led)
                if not c.is_trump:
                    voids[seat].add(Suit.TRUMPS)
            if c.is_trump:
                if c.rank < top:
                    ceiling[seat] = min(ceiling[seat], top - 1)
                top = max(top, c.rank)
    return voids, ceiling


def check_sample(deal: Deal, seat: int, rng: random.Random) -> None:
    view = seat_view(deal, seat)
    n = view.players
    cons = constraints(view)
    truth = [set(deal.hand(s)) for s in range(n)]
    for s in range(n):
        if s != seat:
            for c in truth[s]:
                assert c.index in cons.fixed[s] or cons.allowed[c.index] >> s & 1, (c, s)
    voids, ceiling = shown_facts(view)
    chien_turned = bool(view.chien)
    for _ in range(8):
        world = sample(cons, [c.index for c in view.hand], rng)
        places = [{DECK[i] for i in world.hands[p]} for p in range(n + 1)]
        assert places[seat] == set(view.hand)
        for s in range(n):
            assert len(places[s]) == len(truth[s])
            if s == seat:
                continue
            for c in places[s]:
                assert not (c.suit.is_colour and c.suit in voids[s]), (c, s)
                assert not (c.is_trump and (Suit.TRUMPS in voids[s] or c.rank > ceiling[s])), (c, s)
            for p in view.poignees:
                if p.seat == s:
                    assert {c for c in p.cards if c not in view.played} <= places[s]
        dealt = set().union(*places)
        assert len(dealt) == sum(len(p) for p in places)  # each card in one place
        assert dealt | view.played | set(view.ecart) == set(DECK)
        if chien_turned and seat != view.taker and view.phase is Phase.PLAYING:
            assert view.taker is not None
            # the écart's hidden part
            assert all(not c.is_trump and may_discard(c) for c in places[n])
            assert all(
                c in places[view.taker] or c in places[n]
                for c in view.chien
                if c not in view.played
            )


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_sampler_never_deals_against_the_view(players: int) -> None:
    rng = random.Random(players)
    checked = 0
    for seed in range(60):
        deal = partial_deal(players, seed, rng.randrange(1, 4 * variant(players).tricks))
        if deal.phase is Phase.VOID or deal.phase is Phase.ECART:
            continue
        for seat in range(players):
            check_sample(deal, seat, rng)
            checked += 1
    assert checked >= 40


def test_the_called_card_is_not_dealt_to_the_taker() -> None:
    """A taker calls a king it lacks (but to play alone): the samples give it to another seat."""
    for seed in range(40):
        deal = partial_deal(5, seed, 10)
        if deal.called is None or deal.phase is not Phase.PLAYING or deal.taker is None:
            continue
        for seat in range(5):
            view = seat_view(deal, seat)
            if seat == deal.taker or deal.called in view.hand or view.partner is not None:
                continue
            world = sample(constraints(view), [c.index for c in view.hand], random.Random(seed))
            assert deal.called.index not in world.hands[deal.taker]
            return
    pytest.fail("no five-player deal with a hidden called card")


# --- The view alone decides -----------------------------------------------------------------


def two_deals_one_view() -> tuple[Deal, Deal]:
    """Two deals that differ only in two cards swapped between seats 1 and 2: seat 0, the taker
    at Garde Sans, sees the same in both."""
    base = Deal.from_seed(variant(4), 3, 12)
    hands = [list(h or ()) for h in base.dealt]
    hands[1][0], hands[2][0] = hands[2][0], hands[1][0]
    other = Deal(variant(4), 3, tuple(tuple(h) for h in hands), base.chien)
    for deal in (base, other):
        for seat in range(4):
            deal.push(Bid(seat, Contract.GARDE_SANS if seat == 0 else None))
        deal.push(AnnounceChelem(0, False))
    return base, other


def test_same_view_same_seed_same_choice() -> None:
    first, second = two_deals_one_view()
    view = seat_view(first, 0)
    assert view == seat_view(second, 0)
    choices = {
        StrongPolicy(random.Random(5), worlds=4).play(v, list(v.legal))
        for v in (view, seat_view(second, 0))
    }
    assert len(choices) == 1
    bids = {
        StrongPolicy(random.Random(5), worlds=4).bid(seat_view(d, 0), list(Contract))
        for d in (first, second)
    }
    assert len(bids) == 1


def test_strong_levels_come_from_the_registry() -> None:
    assert isinstance(make_bot("strong", random.Random(0)), StrongPolicy)
    strong = make_bot("strong:3", random.Random(0))
    assert isinstance(strong, StrongPolicy) and strong.worlds == 3
    for bad in ("strong:0", "strong:x", "strong:"):
        with pytest.raises(ValueError, match="strong:N"):
            make_bot(bad, random.Random(0))


# --- Textbook positions -----------------------------------------------------------------------


def position(
    players: int,
    dealer: int,
    fixed: dict[int, str],
    banned: dict[int, Sequence[Suit]],
    seed: int = 0,
) -> Deal:
    """A deal where some seats hold the given cards and lack the given suits; the rest shuffled."""
    v = variant(players)
    rng = random.Random(seed)
    for _ in range(500):
        hands = [cards(fixed.get(s, "")) for s in range(players)]
        rest = [c for c in DECK if all(c not in h for h in hands)]
        rng.shuffle(rest)
        chien: list[Card] = []
        for c in rest:
            open_seats = [
                s
                for s in range(players)
                if len(hands[s]) < v.hand_size and c.suit not in banned.get(s, ())
            ]
            if open_seats:
                hands[rng.choice(open_seats)].append(c)
            else:
                chien.append(c)
        if len(chien) == v.chien_size:
            deal = Deal(v, dealer, tuple(tuple(h) for h in hands), tuple(chien))
            if deal.phase is Phase.BIDDING:
                return deal
    raise AssertionError("no such deal")


def garde_sans(deal: Deal, taker: int, called: Card | None = None) -> None:
    while deal.phase is Phase.BIDDING:
        seat = deal.to_act
        assert seat is not None
        deal.push(Bid(seat, Contract.GARDE_SANS if seat == taker else None))
    if called is not None:
        deal.push(Call(taker, called))
    deal.push(AnnounceChelem(taker, False))


def strong_play(deal: Deal, worlds: int = 12) -> Card:
    seat = deal.to_act
    assert seat is not None
    view = seat_view(deal, seat)
    return StrongPolicy(random.Random(1), worlds=worlds).play(view, list(view.legal))


def test_the_petit_goes_under_a_partners_21() -> None:
    """A defender who must trump, the 21 of its camp winning the trick: it saves its Petit from
    the taker's long trumps."""
    fixed = {0: "3H T20 T18 T17 T15 T14 T13 T12 T10", 1: "T21", 2: "T1 T2 T3 T8", 3: "EX"}
    deal = position(4, 3, fixed, {1: [Suit.HEARTS], 2: [Suit.HEARTS]}, seed=2)
    garde_sans(deal, 0)
    deal.push(Play(0, card("3H")))
    deal.push(Play(1, card("T21")))
    assert strong_play(deal) is PETIT


def test_points_go_on_a_partners_sure_trick() -> None:
    """A defender following suit on its partner's sure trick gives its queen, not a low card."""
    deal = position(4, 3, {0: "3H", 1: "T21", 2: "QH 2H"}, {1: [Suit.HEARTS]}, seed=3)
    garde_sans(deal, 0)
    deal.push(Play(0, card("3H")))
    deal.push(Play(1, card("T21")))
    assert strong_play(deal) is card("QH")


def test_the_taker_does_not_lead_the_petit_while_trumps_are_out() -> None:
    deal = position(4, 3, {0: "T1 T5 T9 T12 T14 KS QS 4S KH 3H 2D 5D 7C 9C"}, {}, seed=4)
    garde_sans(deal, 0)
    assert strong_play(deal) is not PETIT


def test_the_called_suit_is_led_to_find_the_partner() -> None:
    """At five, a defender on lead plays the called suit, not its trumps: the king falls and
    shows the attack."""
    fixed = {
        0: "2S QS NS",
        1: "KS 1H 2H 3H 4H 5H 6H 7H 8H T2 T3 T4 T5 T6 T7",
        2: "KH 5S",
        3: "6S",
        4: "7S QH",
    }
    deal = position(5, 4, fixed, {}, seed=5)
    garde_sans(deal, 0, called=card("KH"))
    deal.push(Play(0, card("2S")))
    deal.push(Play(1, card("KS")))
    for seat, code in ((2, "5S"), (3, "6S"), (4, "7S")):
        deal.push(Play(seat, card(code)))
    assert deal.tricks[0].winner == 1
    assert strong_play(deal).suit is Suit.HEARTS
