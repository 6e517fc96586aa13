"""The settlement between members (tarotd/settlement.py): its one gate for untrusted frames,
whom it answers, when it asks, and when a finished table's member may leave — on a fake clock,
with real runners (``test_runner.make_runners``)."""

from __future__ import annotations

import re

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_runner import make_runners, run

from protocol.replication.messages import Message
from tarotd.runner import TableRunner
from tarotd.settlement import (
    ASK_EVERY,
    LINGER_TIMEOUTS,
    FrameError,
    FrameKind,
    SettleFrame,
    Settlement,
    parse,
)

TIMEOUT = 10.0


class Closings:
    """The store's closings, in memory."""

    def __init__(self) -> None:
        self.chains: dict[tuple[bytes, int], list[Message]] = {}

    def closing(self, table_id: bytes, deal: int) -> list[Message] | None:
        return self.chains.get((table_id, deal))


def finished_table(deals: int = 1) -> list[TableRunner]:
    runners = make_runners([1, 1, 1], deals=deals)
    run(runners)
    return runners


def want(runner: TableRunner, deal: int) -> bytes:
    return SettleFrame(FrameKind.WANT, runner.table_id, deal).encode()


frames = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.binary(max_size=40)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(["t", "table", "deal", "chain", "x"]), inner, max_size=5)
    ),
    max_leaves=20,
)


@given(frames)
def test_the_gate_refuses_anything_but_a_settle_frame_with_one_error(value: object) -> None:
    body = msgpack.packb(value, use_bin_type=True)
    try:
        frame = parse(body)
    except FrameError:
        return
    assert frame.kind in FrameKind and len(frame.table_id) == 16


@given(st.binary(max_size=200))
def test_the_gate_takes_any_bytes_without_raising_anything_else(body: bytes) -> None:
    try:
        parse(body)
    except FrameError:
        pass


T = bytes(16)


@pytest.mark.parametrize(
    "value, why",
    [
        ({"t": "want", "table": T, "deal": True}, "deal is an integer, got bool"),
        ({"t": "want", "table": T, "deal": 2**31}, "deal 2147483648 is out of range"),
        ({"t": "want", "table": T[:15], "deal": 0}, "table is 16 bytes, got 15"),
        ({"t": "wants", "table": T, "deal": 0}, "t is one of"),
        ({"t": "want", "table": T, "deal": 0, "outvoted": [0] * 6}, "at most 5 items"),
        ({"t": "want", "table": T, "deal": 0, "outvoted": [5]}, "outvoted[0] 5 is out of range"),
        ({"t": "void", "table": T, "deal": 0, "votes": {5: bytes(64)}}, "a voting seat 5"),
        ({"t": "void", "table": T, "deal": 0, "votes": {0: bytes(63)}}, "vote of seat 0 is 64"),
        ({"t": "void", "table": T, "deal": 0, "votes": [bytes(64)]}, "votes is a map"),
        ({"t": "closing", "table": T, "deal": 0, "chain": ["m"]}, "chain[0] is bytes"),
        ({"t": "closing", "table": T, "deal": 0, "chain": [b"m"]}, "does not decode"),
        ({"t": "closing", "table": T, "deal": 0}, "chain is a msgpack array, got NoneType"),
    ],
)
def test_the_gate_says_which_field_it_refuses(value: object, why: str) -> None:
    with pytest.raises(FrameError, match=re.escape(why)):
        parse(msgpack.packb(value, use_bin_type=True))


def test_a_frame_round_trips_through_the_gate() -> None:
    runners = finished_table()
    chain = tuple(runners[0].journal.messages(runners[0].table_id, 0))
    frame = SettleFrame(FrameKind.CLOSING, runners[0].table_id, 0, chain)
    assert parse(frame.encode()) == frame


def serving() -> tuple[TableRunner, TableRunner, Settlement]:
    """A finished table's first member, holding deal 0's closing, and another member."""
    runners = finished_table()
    server, member = runners[0], runners[1]
    closings = Closings()
    closings.chains[(server.table_id, 0)] = server.journal.messages(server.table_id, 0)
    return server, member, Settlement(server, closings, TIMEOUT)


def test_a_member_is_served_the_closing_a_stranger_is_not() -> None:
    server, member, settlement = serving()
    answer = settlement.receive(member.daemon_key, want(server, 0), now=0.0)
    assert [destination for destination, _ in answer] == [member.daemon_key]
    served = parse(answer[0][1])
    assert served.kind is FrameKind.CLOSING and served.deal == 0 and served.chain
    assert settlement.receive(b"\x01" * 32, want(server, 0), now=5.0) == [], "a stranger"
    assert settlement.receive(member.daemon_key, want(server, 1), now=5.0) == [], "not scored"


def test_a_member_asking_again_at_once_is_not_served_twice() -> None:
    server, member, settlement = serving()
    assert settlement.receive(member.daemon_key, want(server, 0), now=0.0)
    assert not settlement.receive(member.daemon_key, want(server, 0), now=ASK_EVERY / 4)
    assert settlement.receive(member.daemon_key, want(server, 0), now=ASK_EVERY)


def test_a_finished_member_stays_until_every_member_holds_the_last_row() -> None:
    runners = finished_table()
    settlements = [Settlement(r, Closings(), TIMEOUT) for r in runners]
    for settlement in settlements:
        settlement._told = 0  # as if each scored the deal just now
    outs = {r.daemon_key: s.after_step(now=0.0) for r, s in zip(runners, settlements)}
    first = settlements[0]
    assert not first.may_leave(1.0) and len(first.waiting_for_rows()) == 2
    for sender, frames_out in outs.items():
        for destination, body in frames_out:
            if destination == runners[0].daemon_key:
                first.receive(sender, body, now=1.0)
    assert first.waiting_for_rows() == [] and first.may_leave(1.0)


def test_a_finished_member_leaves_after_its_bound_without_everybody() -> None:
    runners = finished_table()
    settlement = Settlement(runners[0], Closings(), TIMEOUT)
    settlement._told = 0
    settlement.after_step(now=0.0)
    assert not settlement.may_leave(LINGER_TIMEOUTS * TIMEOUT - 1)
    assert settlement.may_leave(LINGER_TIMEOUTS * TIMEOUT)


def test_a_table_that_moves_asks_for_nothing() -> None:
    runners = make_runners([1, 1, 1], deals=1)
    for runner in runners:
        runner.start_deal()
    settlement = Settlement(runners[0], Closings(), TIMEOUT)
    members = runners[0].other_daemons()
    assert settlement.heartbeat(0.0, members) == []
    assert settlement.heartbeat(TIMEOUT / 2, members) == []
    asked = settlement.heartbeat(TIMEOUT + 1, members)  # it stood still for the timeout
    assert sorted(d for d, _ in asked) == sorted(members)
    assert all(parse(body).kind is FrameKind.WANT for _, body in asked)
    assert settlement.heartbeat(TIMEOUT + 1.5, members) == [], "not again at once"
    back = settlement.heartbeat(TIMEOUT + 1.6, members[:1])  # one member went away …
    assert back == []
    again = settlement.heartbeat(TIMEOUT + 1.7, members)  # … and came back: asked at once
    assert [d for d, _ in again] == members[1:]


def test_a_closing_from_a_stranger_or_of_another_deal_is_not_adopted() -> None:
    runners = make_runners([1, 1, 1], deals=1)
    for runner in runners:
        runner.start_deal()
    settlement = Settlement(runners[0], Closings(), TIMEOUT)
    body = SettleFrame(FrameKind.CLOSING, runners[0].table_id, 0, ()).encode()
    settlement.receive(b"\x02" * 32, body, now=0.0)
    assert settlement._pending is None
    other = SettleFrame(FrameKind.CLOSING, runners[0].table_id, 7, ()).encode()
    settlement.receive(runners[1].daemon_key, other, now=0.0)
    assert settlement._pending is None


# --- The void certificate -------------------------------------------------------------------


def stuck_table() -> list[TableRunner]:
    """Three runners whose seats all timed the others out without a quorum (outvoted)."""
    runners = make_runners([1, 1, 1], deals=2)
    for runner in runners:
        runner.start_deal()
        for machine in runner.machines.values():  # one against two: it waits for their word
            assert machine.stall(unreachable={0, 1, 2} - {machine.seat}) == []
    return runners


def test_a_quorum_of_votes_voids_the_deal_for_nobody_s_fault() -> None:
    runners = stuck_table()
    votes = {**runners[0].vote_void(), **runners[1].vote_void()}
    assert len(votes) == 2
    target = runners[2]
    outs = target.void(0, votes)
    assert target.completed == 1 and target.deal_number == 1 and outs, "the next deal is dealt"
    row = target.results[0]
    assert row["audit"] == "void" and row["penalties"] == [] and row["scores"] == [0, 0, 0]
    assert "could not agree" in str(row["void"])


def test_votes_that_are_not_a_quorum_or_not_the_seats_own_void_nothing() -> None:
    runners = stuck_table()
    one = runners[0].vote_void()
    assert runners[2].void(0, one) == [] and runners[2].completed == 0, "one seat of three"
    seat, vote = next(iter(one.items()))
    forged = {seat: vote, (seat + 1) % 3: vote}  # the same signature passed off as another's
    assert runners[2].void(0, forged) == [] and runners[2].completed == 0
    other_deal = {**runners[0].vote_void(), **runners[1].vote_void()}
    assert runners[2].void(1, other_deal) == [], "votes of another deal"


def test_a_seat_that_signed_a_score_never_votes() -> None:
    """A score signature may count in a closing: a seat that gave one cannot also void."""
    runners = finished_table()
    assert all(not r.machines for r in runners)  # scored: nothing left to vote on
    table = make_runners([1, 1, 1], deals=1)
    run(table)
    assert table[0].vote_void() == {}


def test_members_that_cannot_settle_vote_when_a_quorum_says_so() -> None:
    runners = stuck_table()
    settlements = [Settlement(r, Closings(), TIMEOUT) for r in runners]
    keys = [r.daemon_key for r in runners]
    now = TIMEOUT + 1
    frames: list[tuple[bytes, bytes, bytes]] = []  # (from, to, body)
    for _ in range(3):  # ask, hear, vote, hear the votes
        for runner, settlement in zip(runners, settlements):
            others = [k for k in keys if k != runner.daemon_key]
            frames += [
                (runner.daemon_key, to, body) for to, body in settlement.heartbeat(now, others)
            ]
        for sender, to, body in frames:
            settlements[keys.index(to)].receive(sender, body, now)
        frames = []
        now += ASK_EVERY
    for runner, settlement in zip(runners, settlements):
        settlement.take_adopted()
        assert runner.completed == 1 and runner.results[0]["audit"] == "void"
