"""The mesh's delivery rules (tarotd/mesh/core.py) with a fake clock: numbering, the window,
acknowledgements, retransmission timers and their backoff, fast retransmission, and the two
rules for a side that lost its state — no sockets, no sleeps, time passed in; and the pure
parts of its HELLO (tarotd/mesh/handshake.py), a peer's liveness, and the bounds on the peers
no table needs (tarotd/mesh/bounds.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from tarotd.mesh.bounds import refusal, room_from, silent_since
from tarotd.mesh.core import (
    MAX_BACKOFF,
    MAX_RTO,
    RETRANSMIT_AFTER,
    Arrival,
    Inbound,
    Outbox,
    PeerState,
    TokenBucket,
    liveness,
)
from tarotd.mesh.handshake import CHALLENGES_PER_ROUTE, MAX_CHALLENGES, Challenges, clock_offset
from tarotd.mesh.wire import MAX_MISS
from tarotd.refusals import Cause

WINDOW = 512
EARLY_BYTES = 1 << 20


def outbox_of(count: int) -> Outbox:
    outbox = Outbox()
    for i in range(count):
        outbox.add("game", b"m%d" % i)
    return outbox


def send_fresh(outbox: Outbox, now: float, window: int = WINDOW) -> list[int]:
    """What a link sends for the first time at ``now``, as the socket layer does."""
    sent = []
    while (seq := outbox.fresh(window)) is not None:
        outbox.sent(seq, now)
        sent.append(seq)
    return sent


# --------------------------------------------------------------------------- the sender


def test_messages_are_numbered_from_one_and_first_sent_in_order_within_the_window() -> None:
    outbox = outbox_of(5)
    assert list(outbox.entries) == [1, 2, 3, 4, 5] and outbox.head == 1
    assert send_fresh(outbox, 0.0, window=3) == [1, 2, 3]
    assert outbox.acknowledge(2)
    assert list(outbox.entries) == [3, 4, 5] and outbox.head == 3
    assert send_fresh(outbox, 0.1, window=3) == [4, 5]
    assert outbox.fresh(3) is None


def test_an_acknowledgement_already_had_is_no_news() -> None:
    outbox = outbox_of(3)
    send_fresh(outbox, 0.0)
    assert outbox.acknowledge(2) and not outbox.acknowledge(2) and not outbox.acknowledge(1)
    assert outbox.acked == 2


def test_what_waits_too_long_for_its_ack_is_due_again_and_the_timer_backs_off() -> None:
    outbox = outbox_of(2)
    send_fresh(outbox, 0.0)
    assert outbox.next_resend == RETRANSMIT_AFTER
    assert outbox.overdue(RETRANSMIT_AFTER - 0.01) == []
    assert outbox.overdue(RETRANSMIT_AFTER) == [1, 2]
    for seq in (1, 2):
        outbox.sent(seq, RETRANSMIT_AFTER)
    outbox.rearm(RETRANSMIT_AFTER, expired=True)
    assert outbox.round_trip.backoff == 2
    assert outbox.next_resend == 2 * RETRANSMIT_AFTER  # armed before the backoff: ...
    assert outbox.overdue(2 * RETRANSMIT_AFTER) == []  # ... the doubled timeout counts then
    assert outbox.overdue(3 * RETRANSMIT_AFTER) == [1, 2]


def test_the_backoff_doubles_once_per_timeout_and_stops_at_its_bound() -> None:
    outbox = outbox_of(1)
    send_fresh(outbox, 0.0)
    now = 0.0
    for _ in range(10):
        now += MAX_RTO
        outbox.rearm(now, expired=True)
        outbox.rearm(now, expired=True)  # the same expiry, seen for another message
    assert outbox.round_trip.backoff == MAX_BACKOFF
    assert outbox.round_trip.timeout(RETRANSMIT_AFTER) == min(
        MAX_RTO, MAX_BACKOFF * RETRANSMIT_AFTER
    )
    outbox.round_trip.sample(0.01)  # an ack times a round trip again
    assert outbox.round_trip.timeout(RETRANSMIT_AFTER) == RETRANSMIT_AFTER


def test_a_measured_round_trip_longer_than_the_floor_lengthens_the_timeout() -> None:
    outbox = outbox_of(2)
    send_fresh(outbox, 0.0)
    outbox.receipt(1, 1, set(), 2.0)  # two seconds for one message sent once
    assert outbox.round_trip.smoothed == 2.0
    assert outbox.round_trip.timeout(RETRANSMIT_AFTER) == pytest.approx(2.0 + 4 * 1.0)


def test_a_message_sent_twice_times_no_round_trip() -> None:
    outbox = outbox_of(1)
    send_fresh(outbox, 0.0)
    outbox.sent(1, 0.5)  # re-sent: which copy the ack answers is unknown
    outbox.receipt(1, 1, set(), 0.6)
    assert outbox.round_trip.smoothed is None


def test_a_message_reported_missing_after_a_later_one_arrived_is_lost_and_not_before() -> None:
    outbox = outbox_of(3)
    for seq, at in ((1, 0.0), (2, 0.08), (3, 0.1)):
        outbox.sent(seq, at)
    outbox.receipt(0, 3, {1, 2}, 0.12)  # 3 arrived; 1 and 2 did not
    # 1 left well before 3 (more than the reordering allowance): lost; 2 may just be late.
    assert outbox.lost({1, 2}, 0.12) == [1]
    assert outbox.lost({1, 2}, 0.3) == [1, 2]  # overdue, and nothing newer to tell
    assert outbox.lost({7}, 0.12) == []  # never numbered


def test_what_the_receiver_holds_early_is_not_sent_again_on_a_timer() -> None:
    outbox = outbox_of(3)
    send_fresh(outbox, 0.0)
    outbox.receipt(0, 3, {1}, 0.1)  # holds 2 and 3, misses 1
    assert outbox.overdue(RETRANSMIT_AFTER) == [1]


def test_an_ack_beyond_anything_numbered_renumbers_the_rest_after_it() -> None:
    """A sender restarted without its outbox numbers from 1 again; a receiver that kept its
    state has delivered further: the new messages must not look like duplicates to it."""
    outbox = outbox_of(2)
    assert outbox.acknowledge(5)
    assert list(outbox.entries) == [6, 7] and outbox.next_seq == 8
    assert [entry.body for entry in outbox.entries.values()] == [b"m0", b"m1"]
    assert send_fresh(outbox, 0.0) == [6, 7]


def test_a_new_session_sends_everything_unacknowledged_again_from_the_head() -> None:
    outbox = outbox_of(3)
    send_fresh(outbox, 0.0)
    outbox.acknowledge(1)
    outbox.rewind()
    assert outbox.overdue(10.0) == [] and outbox.next_resend == float("inf")
    assert send_fresh(outbox, 1.0) == [2, 3]


def test_an_outbox_kept_across_a_restart_goes_on_from_its_lowest_seq() -> None:
    outbox = Outbox([(5, "game", b"e"), (4, "game", b"d")])
    assert outbox.head == 4 and outbox.acked == 3 and outbox.next_seq == 6
    assert outbox.add("game", b"f") == 6
    assert send_fresh(outbox, 0.0) == [4, 5, 6]


def test_a_token_bucket_allows_its_burst_then_its_rate() -> None:
    bucket = TokenBucket(rate=2.0, burst=3.0)
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(100.5) and not bucket.take(100.5)
    assert [bucket.take(200.0) for _ in range(4)] == [
        True,
        True,
        True,
        False,
    ]  # full again, no more


# --------------------------------------------------------------------------- the receiver


def test_messages_are_handed_over_in_order_once_each() -> None:
    inbound = Inbound()
    assert inbound.arrive(2, "c", b"two", WINDOW, EARLY_BYTES) is Arrival.KEPT
    assert inbound.take() is None  # 1 is missing
    assert inbound.arrive(1, "c", b"one", WINDOW, EARLY_BYTES) is Arrival.KEPT
    handed = []
    while (message := inbound.take()) is not None:
        handed.append(message)
        inbound.delivered = message[0]
    assert handed == [(1, "c", b"one"), (2, "c", b"two")] and inbound.early_bytes == 0
    assert inbound.arrive(2, "c", b"two", WINDOW, EARLY_BYTES) is Arrival.DUPLICATE


def test_every_data_frame_makes_an_ack_due_even_a_duplicate() -> None:
    inbound = Inbound(delivered=3)
    assert inbound.arrive(3, "c", b"x", WINDOW, EARLY_BYTES) is Arrival.DUPLICATE
    assert inbound.ack_due


def test_an_early_message_already_held_is_a_duplicate() -> None:
    inbound = Inbound()
    inbound.arrive(3, "c", b"x", WINDOW, EARLY_BYTES)
    assert inbound.arrive(3, "c", b"x", WINDOW, EARLY_BYTES) is Arrival.DUPLICATE
    assert inbound.early_bytes == 1


def test_what_is_too_far_ahead_is_not_buffered_but_the_next_in_order_always_is() -> None:
    inbound = Inbound()
    assert inbound.arrive(11, "c", b"x", 10, EARLY_BYTES) is Arrival.TOO_FAR
    assert inbound.arrive(3, "c", b"12345", WINDOW, 8) is Arrival.KEPT
    assert inbound.arrive(4, "c", b"12345", WINDOW, 8) is Arrival.TOO_FAR  # 10 early bytes > 8
    assert inbound.arrive(1, "c", b"123456789", WINDOW, 8) is Arrival.KEPT  # next in order
    assert inbound.early_bytes == 14


def test_a_message_not_handled_is_put_back_and_handed_over_again() -> None:
    inbound = Inbound()
    inbound.arrive(1, "c", b"one", WINDOW, EARLY_BYTES)
    taken = inbound.take()
    assert taken == (1, "c", b"one")
    inbound.put_back(*taken)  # NotHandled: not delivered
    assert inbound.delivered == 0 and inbound.holdings() == (1, [])
    assert inbound.take() == (1, "c", b"one")


def test_an_ack_tells_what_is_held_beyond_the_delivered_and_lists_what_is_missing() -> None:
    inbound = Inbound(delivered=1)
    for seq in (3, 5):
        inbound.arrive(seq, "c", b"x", WINDOW, EARLY_BYTES)
    assert inbound.holdings() == (5, [2, 4])
    assert Inbound(delivered=4).holdings() == (4, [])


def test_too_many_missing_to_list_stop_the_ack_at_the_last_one_listed() -> None:
    inbound = Inbound()
    inbound.arrive(2 * MAX_MISS + 10, "c", b"x", 4 * MAX_MISS, EARLY_BYTES)
    top, miss = inbound.holdings()
    assert len(miss) == MAX_MISS and miss == list(range(1, MAX_MISS + 1)) and top == MAX_MISS


def test_a_receiver_that_lost_its_state_skips_what_the_sender_no_longer_holds() -> None:
    inbound = Inbound()
    for seq in (2, 5):
        inbound.arrive(seq, "c", b"xy", WINDOW, EARLY_BYTES)
    assert inbound.skip_to(3) == 3
    assert inbound.delivered == 3 and list(inbound.early) == [5] and inbound.early_bytes == 2
    assert inbound.skip_to(2) == 0 and inbound.delivered == 3


def test_a_new_session_drops_early_arrivals_numbered_before_it() -> None:
    inbound = Inbound()
    inbound.arrive(4, "c", b"x", WINDOW, EARLY_BYTES)
    inbound.new_session()
    assert inbound.session is not None and inbound.early == {} and inbound.early_bytes == 0
    assert not inbound.ack_due


# --------------------------------------------------------------------------- both, on a lossy line


@pytest.mark.parametrize("seed", range(5))
def test_exactly_once_in_order_over_a_line_that_loses_delays_and_reorders(seed: int) -> None:
    """A sender and a receiver joined by a line that loses a third of the frames each way and
    delays the rest by up to 80 ms (so they overtake each other), driven as the socket layer
    drives them every tick: every message arrives once, in order, and is acknowledged."""
    rng = random.Random(seed)
    tick, count, window = 0.02, 200, 16
    outbox, inbound = outbox_of(count), Inbound()
    to_receiver: list[tuple[float, int]] = []  # (arrival time, seq)
    to_sender: list[tuple[float, int, int, list[int]]] = []  # (arrival time, n, top, miss)
    handed: list[bytes] = []
    transmissions = 0

    def line(now: float) -> float | None:
        return None if rng.random() < 1 / 3 else now + rng.uniform(0, 0.08)

    def transmit(seq: int, now: float) -> None:
        nonlocal transmissions
        transmissions += 1
        outbox.sent(seq, now)
        if (at := line(now)) is not None:
            to_receiver.append((at, seq))

    def receive(now: float) -> None:
        for data in sorted(f for f in to_receiver if f[0] <= now):
            to_receiver.remove(data)
            seq = data[1]
            inbound.arrive(seq, "game", b"m%d" % (seq - 1), window, EARLY_BYTES)
            while (message := inbound.take()) is not None:
                handed.append(message[2])
                inbound.delivered = message[0]

    def take_acks(now: float) -> None:
        for ack in sorted(f for f in to_sender if f[0] <= now):
            to_sender.remove(ack)
            _, n, top, miss = ack
            outbox.receipt(n, top, set(miss), now)
            outbox.acknowledge(n)
            for seq in outbox.lost(set(miss), now):
                transmit(seq, now)

    def send(now: float) -> None:
        while (fresh := outbox.fresh(window)) is not None:
            transmit(fresh, now)
        if now >= outbox.next_resend:
            due = outbox.overdue(now)
            for seq in due:
                transmit(seq, now)
            outbox.rearm(now, expired=bool(due))

    now = 0.0
    while outbox.entries and now < 120.0:
        now += tick
        receive(now)
        take_acks(now)
        send(now)
        if inbound.ack_due or inbound.early:
            inbound.ack_due = False
            if (at := line(now)) is not None:
                to_sender.append((at, inbound.delivered, *inbound.holdings()))
    assert handed == [b"m%d" % i for i in range(count)]
    assert not outbox.entries and outbox.acked == count
    assert transmissions > 1.2 * count  # the line really lost frames, and they were sent again


# --------------------------------------------------------------------------- the HELLO's challenges


def test_a_route_holds_its_latest_challenges_and_a_hello_spends_them_all() -> None:
    challenges = Challenges()
    given = [challenges.issue(b"r1") for _ in range(CHALLENGES_PER_ROUTE + 2)]
    other = challenges.issue(b"r2")
    assert challenges.spend(b"r1") == given[-CHALLENGES_PER_ROUTE:]
    assert challenges.spend(b"r1") == []  # once: a replayed HELLO finds none
    assert challenges.spend(b"r2") == [other]


def test_a_flood_of_routes_pushes_out_the_oldest_only() -> None:
    challenges = Challenges()
    first = challenges.issue(b"first")
    for i in range(MAX_CHALLENGES - 1):
        challenges.issue(b"flood%d" % i)
    assert challenges.spend(b"first") == [first]
    challenges.issue(b"first")
    challenges.issue(b"one more")
    assert challenges.spend(b"flood0") == [] and len(challenges.spend(b"first")) == 1


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (59.4, None),
        (-59.4, None),
        (60.0, "1 min 0 s ahead of"),
        (-95.0, "1 min 35 s behind"),
        (3600.0, "1 h 0 min ahead of"),
        (-5430.0, "1 h 30 min behind"),
    ],
)
def test_a_peer_clock_a_minute_or_more_off_is_said_with_its_offset(
    offset: float, said: str | None
) -> None:
    assert clock_offset(offset) == said


# --------------------------------------------------------------------------- liveness and bounds


def test_a_peer_is_connecting_until_proven_then_up_while_heard_within_the_timeout() -> None:
    assert liveness(False, 10.0, 10.0, 5.0) is PeerState.CONNECTING
    assert liveness(True, 10.0, 15.0, 5.0) is PeerState.UP
    assert liveness(True, 10.0, 15.1, 5.0) is PeerState.AWAY
    assert liveness(True, None, 0.0, 5.0) is PeerState.AWAY


@dataclass
class Stranger:
    host: str
    reported: PeerState = PeerState.UP
    last_heard: float | None = None
    created: float = 0.0


def test_a_host_speaks_for_so_many_keys_but_this_machine_for_any() -> None:
    loose = [Stranger("192.0.2.7") for _ in range(3)] + [Stranger("127.0.0.1") for _ in range(3)]
    bucket = TokenBucket(rate=2.0, burst=32.0)
    refused = refusal("192.0.2.7", loose, 3, 256, bucket, 0.0)
    assert refused is not None and refused[0] is Cause.KEYS_FROM_HOST
    assert refusal("127.0.0.1", loose, 3, 256, bucket, 0.0) is None
    assert refusal("192.0.2.8", loose, 3, 256, bucket, 0.0) is None


def test_new_keys_are_taken_in_at_a_rate_from_every_host_together() -> None:
    bucket = TokenBucket(rate=2.0, burst=2.0)
    said = [refusal(f"192.0.2.{i}", [], 8, 256, bucket, 0.0) for i in range(3)]
    assert said[:2] == [None, None] and said[2] is not None and said[2][0] is Cause.NEW_KEYS
    assert refusal("192.0.2.9", [], 8, 256, bucket, 0.5) is None  # a second later, one more


def test_a_full_table_makes_room_by_forgetting_the_peer_silent_longest_not_one_up() -> None:
    up, old, older = (
        Stranger("a"),
        Stranger("b", PeerState.AWAY, 5.0),
        Stranger("c", PeerState.AWAY, 2.0),
    )
    never = Stranger("d", PeerState.CONNECTING, None, created=3.0)
    bucket = TokenBucket(rate=2.0, burst=32.0)
    assert refusal("e", [up, old, older, never], 8, 4, bucket, 0.0) is None
    assert room_from([up, old, older, never], 4) is older
    assert room_from([up, old, older, never], 5) is None  # room enough
    refused = refusal("e", [up, Stranger("f")], 8, 2, bucket, 0.0)
    assert refused is not None and refused[0] is Cause.PEER_TABLE_FULL  # all up: nobody to forget


def test_the_peers_silent_since_the_horizon_are_forgotten() -> None:
    heard, silent, never = (
        Stranger("a", last_heard=9.0),
        Stranger("b", last_heard=4.0),
        Stranger("c", created=1.0),
    )
    assert silent_since(5.0, [heard, silent, never]) == [silent, never]
