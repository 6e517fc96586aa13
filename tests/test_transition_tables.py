"""The transition tables of a deal's machines: the public deal's stages
(:mod:`protocol.replication.public`) and a seat's say (:mod:`protocol.replication.machine`) —
every pair in them either listed or refused, and a move they do not list refused, never
silently taken."""

from __future__ import annotations

import itertools

import pytest

from protocol.replication.identity import Identity
from protocol.replication.machine import (
    DEAD_END_SAYS,
    OUTVOTED_SAYS,
    SAY,
    SIGNING,
    VOTED_SAYS,
    Say,
    SayError,
    SayEvent,
    SeatMachine,
)
from protocol.replication.messages import Kind, Message, sign_message
from protocol.replication.payloads import has_payload
from protocol.replication.public import (
    MOVES,
    REFUSED,
    TRANSITIONS,
    Cause,
    PublicDeal,
    Stage,
    TableSetup,
    TransitionError,
)
from protocol.replication.transcript import genesis

PLAYERS = 3
IDENTITIES = [Identity.generate() for _ in range(PLAYERS)]
TABLE = TableSetup(
    b"h4-table".ljust(16, b"\0"), tuple(i.public_key for i in IDENTITIES), ("a", "b", "c")
)


def _signed(kind: Kind, seat: int, payload: dict[str, object]) -> Message:
    head = genesis(TABLE.table_id, 0, TABLE.members)
    return sign_message(IDENTITIES[seat], TABLE.table_id, 0, kind, seat, payload, head)  # type: ignore[arg-type]


def test_every_stage_and_cause_is_a_transition_or_a_refusal() -> None:
    pairs = set(itertools.product(Stage, Cause))
    assert set(TRANSITIONS) | REFUSED == pairs
    assert not set(TRANSITIONS) & REFUSED


def test_every_stage_lists_its_moves_and_every_kind_a_deal_uses_has_a_stage() -> None:
    assert set(MOVES) == set(Stage)
    used = {kind for kind in Kind if has_payload(kind)}
    assert set().union(*MOVES.values()) == used


def test_a_refused_transition_raises_naming_the_stage_and_the_cause() -> None:
    deal = PublicDeal(TABLE, 0, 0)
    deal.stage = Stage.DONE
    with pytest.raises(TransitionError, match="done stage on stall") as raised:
        deal._advance(Cause.STALL)
    assert (raised.value.stage, raised.value.cause) == (Stage.DONE, Cause.STALL)
    assert deal.stage is Stage.DONE


def test_a_bid_at_the_commit_stage_stops_the_deal_naming_its_signer() -> None:
    """Before, the deal stopped on a verdict that named nobody ("the deal has not started")."""
    deal = PublicDeal(TABLE, 0, 0)
    message = _signed(Kind.BID, 1, {"contract": "garde"})
    deal.apply(message)
    assert deal.verdict is not None
    assert deal.verdict.seat == 1
    assert deal.verdict.reason == "sent a bid message at the commit stage"
    assert deal.verdict.evidence == (message.digest.hex(),)
    assert deal.game_messages == []
    assert deal.stage is Stage.REVEAL


def test_a_closing_message_is_taken_at_any_stage() -> None:
    """A seat that stopped the deal on a proof kept beside the chain reveals from where it
    stopped: the chain replayed without the proof must take its reveal, not blame it."""
    for stage in Stage:
        assert {Kind.REVEAL, Kind.SCORE_SIGN} <= MOVES[stage]
    deal = PublicDeal(TABLE, 0, 0)
    deal.apply(_signed(Kind.SCORE_SIGN, 1, {"scores": [0, 0, 0]}))
    assert deal.verdict is None and deal.stage is Stage.COMMIT


def _machine() -> SeatMachine:
    return SeatMachine(TABLE, 0, 0, 1, IDENTITIES[1])


@pytest.mark.parametrize(("say", "event"), list(itertools.product(Say, SayEvent)))
def test_a_seats_say_changes_only_as_its_table_lists(say: Say, event: SayEvent) -> None:
    machine = _machine()
    machine.say = say
    if (say, event) in SAY:
        machine._turn(event)
        assert machine.say is SAY[say, event]
    else:
        with pytest.raises(SayError, match=f"from {say.value} on {event.value}"):
            machine._turn(event)
        assert machine.say is say


def _facts(say: Say) -> tuple[bool, bool, bool]:
    """Whether a seat in ``say`` voted, is outvoted, and signed a dead end."""
    return say in VOTED_SAYS, say in OUTVOTED_SAYS, say in DEAD_END_SAYS


def test_each_say_is_its_own_combination_of_facts() -> None:
    assert len({(say in SIGNING, *_facts(say)) for say in Say}) == len(Say)
    assert not SIGNING & VOTED_SAYS
    assert set(Say) - SIGNING - VOTED_SAYS == {Say.FOLLOWING}
    assert not {Say.FOLLOWING} & (OUTVOTED_SAYS | DEAD_END_SAYS)


#: What an event does to a seat's facts (voted, outvoted, dead end): sets one (True), clears
#: it (False) or leaves it (None) — and leaves the others as they were.
EFFECTS = {
    SayEvent.VOTE: (True, None, None),
    SayEvent.OUTVOTED: (None, True, None),
    SayEvent.MOVED: (None, False, None),
    SayEvent.DEAD_END: (None, None, True),
}


@pytest.mark.parametrize(("say", "event"), [pair for pair in SAY if pair[1] in EFFECTS])
def test_an_event_changes_its_own_fact_and_no_other(say: Say, event: SayEvent) -> None:
    after = SAY[say, event]
    expected = tuple(
        fact if effect is None else effect
        for fact, effect in zip(_facts(say), EFFECTS[event], strict=True)
    )
    assert _facts(after) == expected
    assert (after is Say.FOLLOWING) == (say is Say.FOLLOWING)


def test_every_say_is_reached_from_a_fresh_seat() -> None:
    reached, frontier = {Say.PLAYING}, [Say.PLAYING]
    while frontier:
        say = frontier.pop()
        for (source, _), target in SAY.items():
            if source is say and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert reached == set(Say)


def test_a_muted_seat_has_voted_and_sends_nothing_but_may_vote_again() -> None:
    muted = SeatMachine.mute(TABLE, 0, 0, 1, IDENTITIES[1], bytes(32), [])
    assert muted.say is Say.VOTED and muted.voted
    assert muted.start() == []
    assert muted.vote_void() is not None and muted.say is Say.VOTED
