"""Every refusal of the rules engine carries its :class:`Rule` code, and the screen says each
one in French and in English from that code — the screen asks the engine why a card is
refused instead of working the rule out again, so the two cannot disagree."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest
from test_deal_tamper import PLAYERS, Table

from client.tui.choose import Refusal, card_refusal
from client.tui.i18n import LANGUAGES, Texts
from protocol.bots.players import RandomPolicy, decide
from protocol.refusal import rule_params
from protocol.rules import rules
from protocol.rules.cards import EXCUSE, Card, Suit, card, cards
from protocol.rules.deal import (
    Action,
    AnnounceChelem,
    Bid,
    Call,
    Deal,
    Ecart,
    Phase,
    Play,
    ShowPoignee,
)
from protocol.rules.rules import Rule, RuleError
from protocol.rules.variants import Contract, PoigneeSize, variant
from protocol.rules.view import seat_view
from tarotd.views import view_json

FIVE, FOUR = variant(5), variant(4)


def follow(referee: Deal, replicas: list[Deal], action: Action) -> None:
    """Give every replica what its seat learns from ``action``."""
    for seat, replica in enumerate(replicas):
        if isinstance(action, Ecart) and seat != action.seat:
            replica.hidden_ecart(tuple(c for c in action.cards if c.is_trump))
        else:
            replica.push(action)
        if replica.phase is Phase.ECART and replica.chien is None:
            assert referee.chien is not None
            replica.turn_chien(referee.chien)


def bid_garde(seed: int, players: int = 4) -> tuple[Deal, list[Deal]]:
    """A referee and every seat's replica once the first seat to speak took a Garde (and, at
    five, called the first card it may)."""
    referee = Deal.from_seed(variant(players), 0, seed)
    replicas = [
        Deal.observed(variant(players), 0, s, referee.dealt[s] or ()) for s in range(players)
    ]
    first = referee.to_act
    assert first is not None
    for i in range(players):
        seat = (first + i) % players
        action = Bid(seat, Contract.GARDE if i == 0 else None)
        referee.push(action)
        follow(referee, replicas, action)
    if players == 5:
        call = Call(first, rules.callable_cards(referee.hand(first))[0])
        referee.push(call)
        follow(referee, replicas, call)
    return referee, replicas


def watcher() -> Deal:
    """Seat 0's replica of a deal at four, before any bid."""
    return Deal.observed(FOUR, 0, 0, Deal.from_seed(FOUR, 0, 1).dealt[0] or ())


def played_out(seed: int) -> list[Deal]:
    """Replicas of a whole deal at four, played by random players to the end."""
    referee = Deal.from_seed(FOUR, 0, seed)
    replicas = [Deal.observed(FOUR, 0, s, referee.dealt[s] or ()) for s in range(4)]
    policies = [RandomPolicy(random.Random(seed * 10 + s)) for s in range(4)]
    while not referee.finished:
        seat = referee.to_act
        assert seat is not None
        for action in decide(referee, policies[seat]):
            referee.push(action)
            follow(referee, replicas, action)
    assert referee.phase is Phase.DONE
    return replicas


def replica_refuses_a_card_elsewhere() -> None:
    referee, replicas = bid_garde(7)
    taker = referee.taker
    assert taker is not None
    ecart = Ecart(taker, tuple(referee.ecart_candidates()[0][:6]))
    referee.push(ecart)
    follow(referee, replicas, ecart)
    chelem = AnnounceChelem(taker, False)
    referee.push(chelem)
    follow(referee, replicas, chelem)
    leader = referee.to_act
    assert leader is not None
    other = (leader + 1) % 4
    replicas[other].push(Play(leader, replicas[other].hand(other)[0]))


def call_a_five_unseen() -> None:
    """A replica at five cannot see the taker's four kings: it takes no call below a valet."""
    referee = Deal.from_seed(FIVE, 0, 11)
    first = referee.to_act
    assert first is not None
    watcher = (first + 1) % 5
    replica = Deal.observed(FIVE, 0, watcher, referee.dealt[watcher] or ())
    for i in range(5):
        replica.push(Bid((first + i) % 5, Contract.GARDE if i == 0 else None))
    replica.push(Call(first, card("5S")))


def show_a_colour_card_from_the_ecart() -> None:
    referee, replicas = bid_garde(7)
    taker = referee.taker
    assert taker is not None
    replicas[(taker + 1) % 4].hidden_ecart(tuple(cards("5S")))


def make_ecart_before_the_chien() -> None:
    referee, replicas = bid_garde(7)
    taker = referee.taker
    assert taker is not None
    replica = Deal.observed(FOUR, 0, taker, referee.dealt[taker] or ())
    for bid in referee.bids:
        replica.push(bid)
    replica.push(Ecart(taker, tuple((referee.dealt[taker] or ())[:6])))


def poignee_after_the_first_trick() -> None:
    deal = Deal.from_seed(FOUR, 0, 3)
    policy = RandomPolicy(random.Random(3))
    while not deal.tricks:
        seat = deal.to_act
        assert seat is not None
        for action in decide(deal, policy):
            deal.push(action)
    seat = deal.to_act
    assert seat is not None
    deal.push(ShowPoignee(seat, tuple(c for c in deal.hand(seat) if c.is_trump)[:10]))


def everybody_passed_then_bid() -> None:
    deal = Deal.from_seed(FOUR, 0, 5)
    while not deal.finished:
        seat = deal.to_act
        assert seat is not None
        deal.push(Bid(seat, None))
    deal.check(Bid(0, Contract.GARDE))


def garde_then_petite() -> None:
    deal = Deal.from_seed(FOUR, 0, 5)
    first = deal.to_act
    assert first is not None
    deal.push(Bid(first, Contract.GARDE))
    deal.push(Bid((first + 1) % 4, Contract.PETITE))


def out_of_turn() -> None:
    deal = Deal.from_seed(FOUR, 0, 5)
    assert deal.to_act is not None
    deal.push(Bid((deal.to_act + 1) % 4, None))


def chelem_during_the_bidding() -> None:
    deal = Deal.from_seed(FOUR, 0, 5)
    assert deal.to_act is not None
    deal.push(AnnounceChelem(deal.to_act, True))


def from_outside_the_rules() -> None:
    """A refusal with no rule of its own (a caller's): text only."""
    raise RuleError("the table is paused")


# A seat's own machine refuses before the rules are asked: no decision is owed, the seat voted
# the deal void, the action is another seat's.  Four real seats, pumped by hand.


def not_the_seats_decision() -> None:
    Table().machines[0].act(Bid(0, Contract.PETITE))


def after_its_vote() -> None:
    machine = Table().machines[0]
    machine.stall(unreachable=range(1, PLAYERS))  # one against three: it waits, and may vote
    assert machine.vote_void() is not None
    machine.act(Bid(0, Contract.PETITE))


def for_another_seat() -> None:
    table = Table()
    table.run_until(lambda: any(m.decision() is not None for m in table.machines))
    deciding = next(m for m in table.machines if m.decision() is not None)
    deciding.act(Bid((deciding.seat + 1) % PLAYERS, Contract.PETITE))


HAND = cards("T1 T2 T3 T4 T5 T6 T7 T8 T9 T10 KS 5S 3H")

#: For every rule, a position where the engine refuses by it.
POSITIONS: dict[Rule, Callable[[], object]] = {
    Rule.NOT_IN_HAND: lambda: rules.check_play(cards("5S"), [], card("6S")),
    Rule.CALLED_SUIT_LEAD: lambda: rules.check_play(
        cards("5S 3H"), [], card("5S"), forbidden_lead_suit=Suit.SPADES, called=card("KS")
    ),
    Rule.FOLLOW_SUIT: lambda: rules.check_play(cards("KH 5S"), cards("7H"), card("5S")),
    Rule.FOLLOW_TRUMP: lambda: rules.check_play(cards("T15 5S"), cards("T3"), card("5S")),
    Rule.TRUMP: lambda: rules.check_play(cards("T15 5S"), cards("7D"), card("5S")),
    Rule.OVERTRUMP: lambda: rules.check_play(cards("T15 T2 5S"), cards("7D T14"), card("T2")),
    Rule.CARD_ELSEWHERE: replica_refuses_a_card_elsewhere,
    Rule.TRICK_WITHOUT_WINNER: lambda: rules.trick_winner([EXCUSE]),
    Rule.BID_NOT_HIGHER: garde_then_petite,
    Rule.CALL_HIGHER_RANK: lambda: rules.check_call(HAND, card("QS")),
    Rule.CALL_NOT_A_KING: lambda: rules.check_call(HAND, card("5S")),
    Rule.CALL_NOT_A_FACE: call_a_five_unseen,
    Rule.CHIEN_KNOWN: lambda: Deal.from_seed(FOUR, 0, 1).turn_chien(tuple(HAND[:6])),
    Rule.CHIEN_SIZE: lambda: watcher().turn_chien(tuple(HAND[:5])),
    Rule.ECART_BEFORE_CHIEN: make_ecart_before_the_chien,
    Rule.ECART_SIZE: lambda: rules.check_ecart(HAND, cards("5S"), 6),
    Rule.ECART_KING_OR_BOUT: lambda: rules.check_ecart(HAND, cards("KS 5S 3H T2 T3 T4"), 6),
    Rule.ECART_TRUMP: lambda: rules.check_ecart(
        [*HAND, *cards("6S 7S 8S 9S")], cards("T2 5S 3H 6S 7S 8S"), 6
    ),
    Rule.ECART_NOT_LISTED: lambda: bid_garde(7)[0].legal_actions(),
    Rule.ECART_OWN: lambda: bid_garde(7)[0].hidden_ecart(()),
    Rule.ECART_SHOWN_NOT_TRUMP: show_a_colour_card_from_the_ecart,
    Rule.POIGNEE_REPEATED: lambda: rules.check_poignee(HAND, cards("T1 T1"), FOUR),
    Rule.POIGNEE_NOT_HELD: lambda: rules.check_poignee(
        HAND, cards("T21"), FOUR, ecart=cards("T11")
    ),
    Rule.POIGNEE_NOT_TRUMP: lambda: rules.check_poignee(HAND, cards("KS"), FOUR),
    Rule.POIGNEE_SIZE: lambda: rules.check_poignee(HAND, cards("T1 T2 T3"), FOUR),
    Rule.POIGNEE_EXCUSE: lambda: rules.check_poignee(
        [*HAND, EXCUSE], [*cards("T1 T2 T3 T4 T5 T6 T7 T8 T9"), EXCUSE], FOUR
    ),
    Rule.POIGNEE_TOO_FEW: lambda: rules.default_poignee(HAND, FOUR, PoigneeSize.DOUBLE),
    Rule.POIGNEE_LATE: poignee_after_the_first_trick,
    Rule.NOT_YOUR_TURN: out_of_turn,
    Rule.WRONG_PHASE: chelem_during_the_bidding,
    Rule.HAND_HIDDEN: lambda: watcher().hand(1),
    Rule.DEAL_OVER: everybody_passed_then_bid,
    Rule.DEAL_NOT_OVER: lambda: Deal.from_seed(FOUR, 0, 1).piles(),
    Rule.PILES_UNKNOWN: lambda: played_out(2)[0].piles(),
    Rule.NOT_TO_DECIDE: not_the_seats_decision,
    Rule.VOTED_VOID: after_its_vote,
    Rule.OTHER_SEAT: for_another_seat,
    Rule.OTHER: from_outside_the_rules,
}


def refusal(rule: Rule) -> RuleError:
    with pytest.raises(RuleError) as caught:
        POSITIONS[rule]()
    return caught.value


def test_every_rule_has_a_position() -> None:
    assert set(POSITIONS) == set(Rule)


#: The positions that run a deck to a seat's decision: seconds of CPU.
DEALT = (Rule.OTHER_SEAT,)


@pytest.mark.parametrize(
    "rule",
    [pytest.param(r, marks=pytest.mark.heavy) if r in DEALT else r for r in Rule],
    ids=lambda r: r.value,
)
def test_the_engine_refuses_by_each_rule_and_the_screen_says_it_in_both_languages(
    rule: Rule,
) -> None:
    error = refusal(rule)
    assert error.code is rule, str(error)
    said = {lang: Texts(lang).rule(error) for lang in LANGUAGES}
    assert said["fr"] != said["en"] or rule is Rule.OTHER
    for lang, sentence in said.items():
        assert sentence and "{" not in sentence
        assert Texts(lang)(Refusal.of(error).key, **Refusal.of(error).params) == sentence
        for value in error.params.values():
            if isinstance(value, Card):
                assert value.name(lang) in sentence
            elif type(value) in (int, str):
                assert str(value) in sentence


def test_the_screen_names_the_rules_words_in_french() -> None:
    texts = Texts("fr")
    assert texts.rule(refusal(Rule.FOLLOW_SUIT)) == "Il faut fournir à ♥."
    assert texts.rule(refusal(Rule.OVERTRUMP)) == "Il faut monter sur le 14."
    assert texts.rule(refusal(Rule.BID_NOT_HIGHER)) == "Il faut annoncer plus haut que Garde."
    assert (
        texts.rule(refusal(Rule.ECART_KING_OR_BOUT)) == "Roi de pique : ni roi ni bout à l'écart."
    )
    assert texts.rule(refusal(Rule.WRONG_PHASE)) == (
        "Pas maintenant : cela se fait à l'étape « chelem », et la donne en est à l'étape "
        "« annonces »."
    )


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_clicked_card_is_refused_as_the_engine_refuses_it(players: int) -> None:
    """Whole deals by random players: at every card to play, each card of the hand is refused
    on screen exactly when the referee refuses it, with the referee's rule in words."""
    texts = [Texts(lang) for lang in LANGUAGES]
    refused = set()
    for seed in range(12):
        deal = Deal.from_seed(variant(players), seed % players, seed)
        policies = [RandomPolicy(random.Random(seed * 10 + s)) for s in range(players)]
        while not deal.finished:
            seat = deal.to_act
            assert seat is not None
            if deal.phase is Phase.PLAYING:
                view = view_json(seat_view(deal, seat))
                for held in deal.hand(seat):
                    try:
                        deal.check(Play(seat, held))
                        error = None
                    except RuleError as refused_by_engine:
                        error = refused_by_engine
                    shown = card_refusal(view, view["hand"], held.code)
                    assert (shown is None) == (error is None), (view, held)
                    if error is not None and shown is not None:
                        refused.add(error.code)
                        for say in texts:
                            assert say(shown.key, **shown.params) == say.rule(error)
            for action in decide(deal, policies[seat]):
                deal.push(action)
    assert {Rule.FOLLOW_SUIT, Rule.TRUMP, Rule.OVERTRUMP} <= refused


#: The words that name each rule of play in French, on screen and in a daemon's refusal.
PLAY_WORDS = {
    Rule.CALLED_SUIT_LEAD: "couleur appelée",
    Rule.FOLLOW_SUIT: "fournir",
    Rule.FOLLOW_TRUMP: "jouer atout",
    Rule.TRUMP: "couper",
    Rule.OVERTRUMP: "monter",
}


@pytest.mark.parametrize("rule", list(PLAY_WORDS), ids=lambda r: r.value)
def test_a_daemons_refusal_of_a_card_names_the_rule_the_screen_names(rule: Rule) -> None:
    """The daemon replies with the engine's code and parameters, which the client says as the
    screen does (trumps led were once said « il faut couper », as if the player were void in a
    colour, when the client read the daemon's English)."""
    error = refusal(rule)
    texts = Texts("fr")
    assert PLAY_WORDS[rule] in texts.rule(error).lower()
    wired = json.loads(json.dumps(rule_params(error)))
    assert texts.refusal(str(error), "rule", wired) == texts.rule(error)
