"""What each phase of a deal accepts: every kind of action, pushed at every phase by the seat
to act, is refused with the same rule, text and parameters as when :meth:`Deal.check` refused
each out of phase by its own code (these were written against that code) — and a refused action
changes nothing."""

from __future__ import annotations

import copy
import random
from typing import get_args

import pytest

from protocol.bots.players import RandomPolicy, decide
from protocol.rules import rules
from protocol.rules.cards import card
from protocol.rules.deal import (
    PHASES,
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
from protocol.rules.rules import RuleError
from protocol.rules.variants import Contract, variant

FIVE = variant(5)


def at(phase: Phase, seed: int = 3) -> Deal:
    """A deal at five at ``phase``: the first seat takes (a Garde Sans, skipping the écart,
    but for the écart itself), calls its first callable card, and nobody announces a chelem."""
    deal = Deal.from_seed(FIVE, 0, seed)
    if phase is Phase.BIDDING:
        return deal
    first = deal.to_act
    assert first is not None
    contract = Contract.GARDE if phase is Phase.ECART else Contract.GARDE_SANS
    for i in range(FIVE.players):
        seat = (first + i) % FIVE.players
        taking = i == 0 and phase is not Phase.VOID
        deal.push(Bid(seat, contract if taking else None))
    if phase in (Phase.CALL, Phase.VOID):
        return deal
    deal.push(Call(first, rules.callable_cards(deal.hand(first))[0]))
    if phase in (Phase.ECART, Phase.CHELEM):
        return deal
    deal.push(AnnounceChelem(first, False))
    if phase is Phase.PLAYING:
        return deal
    policy = RandomPolicy(random.Random(3))
    while not deal.finished:
        for action in decide(deal, policy):
            deal.push(action)
    return deal


def every_kind(deal: Deal) -> list[Action]:
    """One action of each kind, by the seat to act (seat 0 once the deal is over)."""
    seat = deal.to_act if deal.to_act is not None else 0
    hand = deal.hand(seat)
    return [
        Bid(seat, None),
        Call(seat, card("KH")),
        Ecart(seat, ()),
        AnnounceChelem(seat, False),
        ShowPoignee(seat, ()),
        Play(seat, hand[0] if hand else card("KH")),
    ]


def refusal(deal: Deal, action: Action) -> tuple[str, str, dict[str, object]] | None:
    """How ``deal`` refuses ``action`` (None: it takes it); the deal must not change."""
    before = copy.deepcopy(deal)
    try:
        deal.check(action)
    except RuleError as error:
        refused: tuple[str, str, dict[str, object]] | None = (
            error.code.value,
            str(error),
            dict(error.params),
        )
    else:
        refused = None
    assert deal == before
    try:
        deal.push(action)
    except RuleError as error:
        assert refused is not None and (error.code.value, str(error)) == refused[:2]
        assert deal == before, "a refused action changed the deal"
    else:
        assert refused is None
    return refused


def out_of(phase: Phase, what: str, expected: Phase) -> tuple[str, str, dict[str, object]]:
    return (
        "wrong-phase",
        f"{what} is not possible now: the deal is at the {phase.value} phase",
        {"expected": expected, "phase": phase},
    )


OVER = ("deal-over", "the deal is over", {})
WHAT = {
    Bid: ("bidding", Phase.BIDDING),
    Call: ("calling a card", Phase.CALL),
    Ecart: ("the écart", Phase.ECART),
    AnnounceChelem: ("announcing a chelem", Phase.CHELEM),
    ShowPoignee: ("showing a poignée", Phase.PLAYING),
    Play: ("playing a card", Phase.PLAYING),
}
#: What each phase does with an action of each kind it takes (None: it takes this one).
TAKEN: dict[tuple[Phase, type], tuple[str, str, dict[str, object]] | None] = {
    (Phase.BIDDING, Bid): None,
    (Phase.CALL, Call): None,
    (Phase.ECART, Ecart): (
        "ecart-size",
        "the écart must be exactly 3 different cards",
        {"size": 3},
    ),
    (Phase.CHELEM, AnnounceChelem): None,
    (Phase.PLAYING, ShowPoignee): (
        "poignee-size",
        "a poignée shows exactly 8/10/13 trumps at 5 players",
        {"counts": "8/10/13", "players": 5},
    ),
    (Phase.PLAYING, Play): None,
}


@pytest.mark.parametrize("phase", list(Phase))
def test_each_phase_takes_its_kinds_and_refuses_the_others_as_before(phase: Phase) -> None:
    for action in every_kind(at(phase)):
        kind = type(action)
        if phase in (Phase.DONE, Phase.VOID):
            expected = OVER
        elif (phase, kind) in TAKEN:
            expected = TAKEN[phase, kind]
        else:
            what, phase_of_kind = WHAT[kind]
            expected = out_of(phase, what, phase_of_kind)
        assert refusal(at(phase), action) == expected, (phase, kind)


@pytest.mark.parametrize("phase", [p for p in Phase if p is not Phase.ECART])
def test_a_replica_records_a_hidden_ecart_only_at_the_ecart(phase: Phase) -> None:
    deal = at(phase)
    with pytest.raises(RuleError) as caught:
        deal.hidden_ecart(())
    error = caught.value
    assert (error.code.value, str(error), dict(error.params)) == out_of(
        phase, "the écart", Phase.ECART
    )


# --- The table itself -------------------------------------------------------------------------


def test_every_phase_is_listed_and_every_kind_of_action_taken_at_one_phase() -> None:
    assert set(PHASES) == set(Phase)
    taken = [kind for kinds in PHASES.values() for kind in kinds]
    assert sorted(taken, key=str) == sorted(get_args(Action), key=str)
    assert not PHASES[Phase.DONE] and not PHASES[Phase.VOID]


def a_legal(phase: Phase, kind: type[Action]) -> tuple[Deal, Action]:
    """A deal at ``phase`` and an action of ``kind`` it takes: the taker's first écart, its
    "no chelem", the first eight trumps of a seat that holds them (seed 41)."""
    deal = at(phase, seed=41)
    seat = deal.to_act
    assert seat is not None
    if kind is Ecart:
        allowed, _ = deal.ecart_candidates()
        return deal, Ecart(seat, tuple(allowed[: FIVE.chien_size]))
    if kind is AnnounceChelem:
        return deal, AnnounceChelem(seat, False)
    assert kind is ShowPoignee
    return deal, ShowPoignee(seat, tuple(c for c in deal.hand(seat) if c.is_trump)[:8])


@pytest.mark.parametrize(
    ("phase", "kind"),
    [(phase, kind) for phase, kinds in PHASES.items() for kind, after in kinds.items() if after],
)
def test_an_action_goes_to_the_phase_its_table_names(phase: Phase, kind: type[Action]) -> None:
    deal, action = a_legal(phase, kind)
    deal.push(action)
    assert deal.phase is PHASES[phase][kind]
    assert deal.history[-1] == action
