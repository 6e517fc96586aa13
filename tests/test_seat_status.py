"""What a seat may still sign in a deal and whose word it waits for, seen from outside: the
combinations of "timed out as many seats as answered" (``outvoted``), "voted to void the deal"
and "signed a score that can never close" (``signed_dead_end``), and what each makes the seat,
its runner and its settlement do.

These pin the behaviour the machine had when they were three separate values, so that folding
them into one status (:data:`~protocol.replication.machine.SAY`) changes none of it: every state
is reached the way a deal reaches it — a timeout, a message, a voter heard, a vote — never set
by hand."""

from __future__ import annotations

import pytest
from test_deal_tamper import PLAYERS, Table
from test_runner import make_runners
from test_settlement import TIMEOUT, Closings

from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Kind, Message, decode
from protocol.replication.public import Stage
from protocol.rules.rules import RuleError
from tarotd.runner import TableRunner
from tarotd.settlement import ASK_EVERY, FrameKind, Settlement, parse

pytestmark = pytest.mark.heavy

SEAT = 0
OTHERS = frozenset(range(1, PLAYERS))


def outvoted_at_commit() -> tuple[Table, SeatMachine]:
    """Seat 0 has sent its commitment and heard nobody: timing the three others out, it would
    be one against three — it waits for their word."""
    table = Table()
    machine = table.machines[SEAT]
    assert machine.stall(unreachable=OTHERS) == []
    return table, machine


def the_chain_moves(table: Table, machine: SeatMachine) -> list[Message]:
    """The others' commitments reach ``machine``: the round closes, its chain moves on."""
    head = machine.transcript.head
    sent = [out for m in table.queue if m.seat != machine.seat for out in machine.receive(m)]
    assert machine.transcript.head != head
    return sent


def test_a_seat_that_cannot_settle_waits_and_may_vote() -> None:
    _, machine = outvoted_at_commit()
    assert machine.outvoted and not machine.voted and not machine.signed_dead_end
    assert not machine.done and machine.public.stage is Stage.COMMIT


def test_the_chain_moving_ends_the_wait_and_with_it_the_vote() -> None:
    table, machine = outvoted_at_commit()
    the_chain_moves(table, machine)
    assert not machine.outvoted and not machine.voted
    assert machine.vote_void() is None and not machine.voted


def test_a_seat_neither_outvoted_nor_voted_gives_no_vote() -> None:
    machine = Table().machines[SEAT]
    assert machine.vote_void() is None
    assert not (machine.voted or machine.outvoted)


def test_a_vote_leaves_the_seat_outvoted_until_the_chain_moves_and_voted_for_good() -> None:
    table, machine = outvoted_at_commit()
    vote = machine.vote_void()
    assert vote is not None
    assert machine.voted and machine.outvoted, "a vote is no answer: it still waits"
    sent = the_chain_moves(table, machine)
    assert not machine.outvoted and machine.voted
    assert all(m.seat != SEAT for m in sent), "a seat that voted signs nothing more"
    assert machine.vote_void() == vote, "asked again, it gives the same vote"
    assert machine.decision() is None
    with pytest.raises(RuleError, match="voted to void"):
        machine.act(None)  # type: ignore[arg-type]  # refused before the action is looked at


def test_a_seat_that_voted_may_be_outvoted_again() -> None:
    table, machine = outvoted_at_commit()
    machine.vote_void()
    the_chain_moves(table, machine)
    assert machine.stall(unreachable=OTHERS) == []
    assert machine.voted and machine.outvoted


def test_a_voter_heard_before_the_seat_signs_changes_nothing() -> None:
    table, machine = outvoted_at_commit()
    machine.note_voters({1, 2})
    assert not machine.signed_dead_end
    assert machine.vote_void() is not None


def at_own_signature() -> tuple[Table, SeatMachine, set[int]]:
    """Seat 0 has signed the score, and waits for the others' signatures (returned): two of
    them refusing leave its head no quorum that could close it, at four."""
    table = Table()
    table.run_until(lambda: any(m.seat == SEAT and m.kind is Kind.SCORE_SIGN for m in table.queue))
    machine = table.machines[SEAT]
    assert machine.public.stage is Stage.SIGN and machine.waiting_for() == OTHERS
    return table, machine, {1, 2}


def test_a_seat_that_signed_a_score_that_may_close_never_votes() -> None:
    _, machine, _ = at_own_signature()
    assert machine.stall(unreachable=OTHERS) == []
    assert machine.outvoted and not machine.signed_dead_end
    assert machine.vote_void() is None and not machine.voted


def test_a_voter_not_needed_by_its_signed_score_changes_nothing() -> None:
    _, machine, _ = at_own_signature()
    machine.note_voters(set(range(PLAYERS)) - machine.waiting_for())
    assert not machine.signed_dead_end


def test_one_refusing_seat_leaves_a_quorum_that_may_close_the_head() -> None:
    """Three of four may still sign it, and a timeout of the fourth closes it: the seat that
    signed must not vote (fault simulator, four players, seed 280)."""
    _, machine, _ = at_own_signature()
    machine.note_voters({2})
    assert not machine.signed_dead_end
    assert machine.stall(unreachable=OTHERS) == []
    assert machine.outvoted and machine.vote_void() is None


def test_refusals_heard_one_at_a_time_add_up_to_a_dead_end() -> None:
    _, machine, _ = at_own_signature()
    machine.note_voters({1})
    machine.note_voters({1})
    assert not machine.signed_dead_end, "one seat heard twice is one seat"
    machine.note_voters({3})
    assert machine.signed_dead_end


def test_signed_then_dead_end_then_outvoted_it_votes() -> None:
    _, machine, needed = at_own_signature()
    machine.note_voters(needed)
    assert machine.signed_dead_end and not machine.outvoted
    assert machine.vote_void() is None, "a dead end alone is no reason to vote"
    assert machine.stall(unreachable=OTHERS) == []
    assert machine.outvoted and machine.signed_dead_end
    assert machine.vote_void() is not None
    assert machine.voted and machine.outvoted and machine.signed_dead_end


def test_a_dead_end_outlives_the_wait() -> None:
    table, machine, needed = at_own_signature()
    assert machine.stall(unreachable=OTHERS) == []
    machine.note_voters(needed)
    head = machine.transcript.head
    table.run_until(lambda: machine.transcript.head != head)
    assert not machine.outvoted and machine.signed_dead_end


def muted(signed: bool) -> SeatMachine:
    """Seat 0's machine for a deal it could not take up, with its score signature or not."""
    table = Table()
    score = table.signed(SEAT, Kind.SCORE_SIGN, {"scores": [0] * PLAYERS})
    stored = [score] if signed else []
    return SeatMachine.mute(table.table, 0, 0, SEAT, table.identities[SEAT], bytes(32), stored)


def test_a_muted_seat_votes_unless_it_signed_a_score_that_may_close() -> None:
    machine = muted(signed=False)
    assert machine.voted and not machine.outvoted and machine.decision() is None
    assert machine.vote_void() is not None
    signer = muted(signed=True)
    assert signer.voted and signer.vote_void() is None
    signer.note_voters({1})  # three of four may still close its head
    assert not signer.signed_dead_end and signer.vote_void() is None
    signer.note_voters({2})  # two of four cannot
    assert signer.signed_dead_end and signer.vote_void() is not None and signer.voted


# --- What the runner and its settlement read ------------------------------------------------


def stuck_runners() -> tuple[list[tuple[TableRunner, SeatMachine]], list[Message]]:
    """Three daemons of a seat each, each seat outvoted at the commitments; and these."""
    runners = make_runners([1, 1, 1], deals=1)
    commits = [decode(body) for runner in runners for body in {b for _, b in runner.start_deal()}]
    stuck = []
    for runner in runners:
        (machine,) = runner.machines.values()
        assert machine.stall(unreachable={0, 1, 2} - {machine.seat}) == []
        stuck.append((runner, machine))
    return stuck, commits


def moves(machine: SeatMachine, commits: list[Message]) -> None:
    """The others' commitments reach ``machine``: its chain moves on."""
    head = machine.transcript.head
    for message in commits:
        if message.seat != machine.seat:
            machine.receive(message)
    assert machine.transcript.head != head


def wanted(settlement: Settlement, now: float, up: list[bytes]) -> tuple[int, ...] | None:
    """The seats a heartbeat's ``want`` says cannot settle (None: no ``want`` sent)."""
    for _, body in settlement.heartbeat(now, up):
        frame = parse(body)
        if frame.kind is FrameKind.WANT:
            return frame.outvoted
    return None


def test_the_runner_and_its_settlement_read_outvoted_and_voted_as_before() -> None:
    ((first, machine), (second, _), _), commits = stuck_runners()
    settlement = Settlement(first, Closings(), TIMEOUT)
    up = [second.daemon_key]
    assert first.unsettled and wanted(settlement, 0.0, up) == (machine.seat,)
    votes = first.vote_void()
    assert votes and machine.voted and machine.outvoted
    assert first.unsettled and wanted(settlement, ASK_EVERY, up) == (machine.seat,)
    # The chain moves: voted, no longer outvoted — the runner is not "unsettled" any more,
    # but its settlement still lists the seat as one that cannot settle when it asks.
    moves(machine, commits)
    assert machine.voted and not machine.outvoted
    assert not first.unsettled
    assert first.vote_void() == votes, "a seat that voted votes again when asked"
    assert wanted(settlement, 2 * ASK_EVERY, up) is None, "not unsettled, and not still long"
    assert wanted(settlement, 2 * ASK_EVERY + TIMEOUT, up) == (machine.seat,)


def test_a_runner_whose_seat_waits_no_more_neither_votes_nor_lists_it() -> None:
    ((first, machine), (second, _), _), commits = stuck_runners()
    moves(machine, commits)
    assert not machine.outvoted and not first.unsettled
    assert first.vote_void() == {} and not machine.voted
    settlement = Settlement(first, Closings(), TIMEOUT)
    up = [second.daemon_key]
    assert wanted(settlement, 0.0, up) is None
    assert wanted(settlement, TIMEOUT, up) == ()
