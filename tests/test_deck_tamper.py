"""Every way a seat can deviate from the deck protocol ends in a verdict naming that seat.

Each cheater is a SeatDeck that bends one step; the honest seats run the unmodified code.
A shuffle or lock that deviates is refused by its proof at the step that carries it, before
anything is dealt, and a wrong key when it comes; what no live check can see without the
secrets (an écart re-commitment, a blanket key not from the seed) the audit of the revealed
seeds names.  The attacks of the cheat lab (:mod:`lab.cheats.attacks`) are run here step by step,
and shown to pay when their step is taken unchecked: that is what the proofs prevent.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from deck_tables import (
    dealt_table,
    fresh_table,
    lock_rounds,
    plain,
    reveal_all,
    seed_for,
    truth,
    turn_chien,
)

from lab.cheats.attacks import (
    TRACED,
    BadKeyDeck,
    BadLockDeck,
    HalfFixLockTracerDeck,
    LockTracerDeck,
    TracerDeck,
)
from protocol.deck.audit_deck import audit_deck
from protocol.deck.group import (
    CARD_POINTS,
    GENERATOR,
    ORDER,
    add,
    base_mul,
    invert,
    mul,
    point_sum,
    scalar_from_digest,
    sub,
)
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import (
    ChienKeys,
    EcartCommitment,
    Lock,
    Open,
    Opening,
    OpenRecommitted,
    Shuffle,
)
from protocol.deck.public_deck import DeckPhase, PublicDeck
from protocol.deck.seat_deck import DeckUsageError, SeatDeck
from protocol.deck.seeds import derive
from protocol.replication.verdict import Code, Fault, Verdict, VerdictError
from protocol.rules.cards import DECK, Card, card

pytestmark = pytest.mark.heavy

#: The identity, ristretto255's one element of small order (order 1): libsodium 1.0.18's
#: ``is_valid_point`` accepts its encoding, the group module refuses it.
SMALL_ORDER_POINT = bytes(32)


def random_scalar(label: str) -> bytes:
    return scalar_from_digest(hashlib.sha512(label.encode()).digest())


def verdict_of(action: object) -> Verdict:
    assert callable(action)
    with pytest.raises(VerdictError) as caught:
        action()
    return caught.value.verdict


def deal_rounds(seats: list[SeatDeck], public: PublicDeck) -> None:
    """Commit, shuffle, lock and deal keys — without anybody decrypting yet."""
    lock_rounds(seats, public)
    for seat in seats:
        public.receive(seat.deal_keys())


def audited(seats: list[SeatDeck], public: PublicDeck) -> Verdict:
    verdict = audit_deck(public.record, {seat.seat: seat.seed for seat in seats}).verdict
    assert verdict is not None
    return verdict


def changed(points: tuple[bytes, ...], changes: dict[int, bytes]) -> tuple[bytes, ...]:
    """``points`` with the entries at the keys of ``changes`` replaced."""
    return tuple(changes.get(k, point) for k, point in enumerate(points))


def with_points(payload: Shuffle, changes: dict[int, bytes]) -> Shuffle:
    return replace(payload, points=changed(payload.points, changes))


# --- the shuffle -------------------------------------------------------------------------


class RepeatingShuffler(SeatDeck):
    """Not a permutation: one point twice, another dropped."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        return with_points(honest, {5: honest.points[40]})


class CardReplacingShuffler(SeatDeck):
    """The first shuffler swaps one card for another it likes better: a·M_c for a·M_KH."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        return with_points(honest, {0: mul(self.secrets.blanket, CARD_POINTS[card("KH").index])})


class ReplacingShuffler(SeatDeck):
    """One point replaced by a fresh one, without compensation."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        return with_points(honest, {7: add(honest.points[7], GENERATOR)})


class OtherKeyShuffler(SeatDeck):
    """Shuffles with a key other than the one it committed to."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        committed = self.secrets
        self.secrets = derive(
            b"\x01" * 32, self.setup.table_id, self.setup.deal, self.seat, self.setup.variant
        )
        try:
            return super().shuffle(public)
        finally:
            self.secrets = committed


class SmallOrderShuffler(SeatDeck):
    def shuffle(self, public: PublicDeck) -> Shuffle:
        return with_points(super().shuffle(public), {3: SMALL_ORDER_POINT})


@pytest.mark.parametrize(
    ("cheater", "cheat", "reason"),
    [
        (0, RepeatingShuffler, "repeats a point"),
        (2, RepeatingShuffler, "repeats a point"),
        (0, CardReplacingShuffler, "repeats a point"),
        (1, ReplacingShuffler, "proof"),
        (3, OtherKeyShuffler, "proof"),
        (4, SmallOrderShuffler, "not a ristretto255 point"),
    ],
)
def test_a_bad_shuffle_is_refused_at_once_naming_the_shuffler(
    cheater: int, cheat: type[SeatDeck], reason: str
) -> None:
    seats, public = fresh_table(5, cheaters={cheater: cheat})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (cheater, "shuffle")
    assert reason in verdict.reason
    assert verdict.evidence == (f"shuffle/{cheater}@{5 + cheater}",)
    assert public.waiting_for() == {cheater}  # the bad payload was not accepted


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_tracer_is_refused_at_its_shuffle_before_anything_is_dealt(players: int) -> None:
    """The first shuffler marks T21 (``t·a·M``, the sum made right on a third point) and
    proves its shuffle as best it can: refused at the step.  Taken unchecked, it would have
    worked: after the last shuffle the pair related by ``t`` shows where T21 lies."""
    seats, public = fresh_table(players, cheaters={0: TracerDeck})
    verdict = verdict_of(lambda: lock_rounds(seats, public))
    assert (verdict.seat, verdict.step) == (0, "shuffle")
    assert "proof" in verdict.reason and verdict.evidence == (f"shuffle/0@{players}",)
    # nothing dealt, nothing locked
    assert public.phase is DeckPhase.SHUFFLE and public.waiting_for() == {0}

    seats, public = fresh_table(players, cheaters={0: TracerDeck})
    public.trusted = frozenset({0})  # as if nobody checked its proof
    lock_rounds(seats, public)
    tracer = seats[0]
    assert isinstance(tracer, TracerDeck)
    final = public.record.payloads[2 * players - 1]
    assert isinstance(final, Shuffle)
    found = tracer.trace(final.points)
    assert found is not None and truth(seats, public)[found] == TRACED.index
    verdict = audited(seats, public)  # the backstop: the audit replays the shuffle
    assert (verdict.seat, verdict.step) == (0, "shuffle")


class ChienSpoiler(SeatDeck):
    """The last shuffler knows where its output lands (the lock does not move points): it
    puts compensated garbage on two chien positions, out of every hand."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        j, k = self.setup.layout.chien_positions[:2]
        return with_points(
            honest, {j: add(honest.points[j], GENERATOR), k: sub(honest.points[k], GENERATOR)}
        )


def test_garbage_meant_for_the_chien_is_refused_at_the_shuffle() -> None:
    seats, public = fresh_table(5, cheaters={4: ChienSpoiler})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (4, "shuffle") and "proof" in verdict.reason


# --- the lock ----------------------------------------------------------------------------


def with_locked(payload: Lock, changes: dict[int, bytes]) -> Lock:
    return replace(payload, locked=changed(payload.locked, changes))


class WrongLockedPoint(SeatDeck):
    """One locked point that is not its key times the previous step, with the honest proof."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return with_locked(honest, {10: add(honest.locked[10], GENERATOR)})


class OtherKeyCommitted(SeatDeck):
    """Locks position 10 with its key but commits to another one there."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return replace(
            honest,
            commitments=changed(honest.commitments, {10: base_mul(random_scalar("another key"))}),
        )


@pytest.mark.parametrize("cheat", [WrongLockedPoint, BadLockDeck, OtherKeyCommitted])
def test_a_lock_that_does_not_bind_every_position_to_its_key_is_refused_at_once(
    cheat: type[SeatDeck],
) -> None:
    """One wrong point, a compensated pair (the sum is right: the first design's proof held),
    a commitment to another key: the proof binds each position on its own."""
    seats, public = fresh_table(5, cheaters={2: cheat})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (2, "lock") and "proof" in verdict.reason
    assert verdict.evidence == ("lock/2@12",)
    assert public.phase is DeckPhase.LOCK and public.waiting_for() == {2}


class HonestProof(SeatDeck):
    """Mixed into a lock tracer: it sends the proof of its honest step instead of one run on
    the forged points."""

    def lock(self, public: PublicDeck) -> Lock:
        forged = super().lock(public)
        return replace(forged, proof=SeatDeck.lock(self, public).proof)


class HonestProofLockTracer(HonestProof, LockTracerDeck):
    pass


class HonestProofHalfFixLockTracer(HonestProof, HalfFixLockTracerDeck):
    pass


LOCK_TRACERS = [
    LockTracerDeck,
    HalfFixLockTracerDeck,
    HonestProofLockTracer,
    HonestProofHalfFixLockTracer,
]


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("cheat", LOCK_TRACERS)
@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_lock_tracer_is_refused_at_its_lock_in_both_shapes(
    players: int, cheat: type[HalfFixLockTracerDeck], last: bool
) -> None:
    """The first (or last) locker puts into its own positions the points of the chien's
    positions and of one card of each of the next two seats — as multiples with the sum made
    right (the shape the first design's proof over sums let through), or as copies keyed as
    its own (the half-fix's) — with the proof run on the forged step or its honest one:
    refused at the lock, before any key is dealt."""
    seat = players - 1 if last else 0
    seats, public = fresh_table(players, cheaters={seat: cheat})
    tracer = seats[seat]
    assert isinstance(tracer, HalfFixLockTracerDeck)
    layout = public.setup.layout
    targets = tracer.targets()
    assert set(layout.chien_positions) < set(targets.values())
    assert len(targets) == min(layout.variant.hand_size - 1, layout.variant.chien_size + 2)
    verdict = verdict_of(lambda: lock_rounds(seats, public))
    assert (verdict.seat, verdict.step) == (seat, "lock") and "proof" in verdict.reason
    assert verdict.evidence == (f"lock/{seat}@{2 * players + seat}",)
    assert public.phase is DeckPhase.LOCK and public.waiting_for() == {seat}


@pytest.mark.parametrize("cheat", [LockTracerDeck, HalfFixLockTracerDeck])
@pytest.mark.parametrize("players", [3, 4, 5])
def test_an_unchecked_lock_tracer_would_read_the_chien_before_the_first_bid(
    players: int, cheat: type[HalfFixLockTracerDeck]
) -> None:
    """What the lock proof is for: taken unchecked, the lock tracer reads every target from
    its own positions as soon as the deal keys are in — the chien's cards and two of its
    opponents' — and only the audit would name it."""
    seats, public = fresh_table(players, cheaters={0: cheat})
    public.trusted = frozenset({0})  # as if nobody checked its proof
    deal_rounds(seats, public)
    tracer = seats[0]
    assert isinstance(tracer, HalfFixLockTracerDeck)
    cards = truth(seats, public)
    read = tracer.read(public)
    assert set(read) == set(tracer.targets().values())
    assert all(cards[p] == c.index for p, c in read.items())
    s, lock = tracer.secrets, public.record.payloads[2 * players]
    assert isinstance(lock, Lock)
    if cheat is LockTracerDeck:  # the unlocked points F = b⁻¹·E still sum to a⁻¹·ΣE'
        before = public.record.payloads[2 * players - 1].points  # type: ignore[union-attr]  # the payload before the lock is the last shuffle
        unlocked = [mul(invert(b), e) for b, e in zip(s.lock_keys, lock.locked)]
        assert point_sum(unlocked) == mul(s.blanket_inverse, point_sum(before))
    else:  # plain copies: its own hand decrypts, the targets' cards in it
        assert set(tracer.hand(public).values()) >= set(read.values())
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "lock") and "differ from its keys" in verdict.reason


class RepeatingLocker(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return with_locked(honest, {1: honest.locked[0]})


class InvalidLocker(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        return with_locked(super().lock(public), {0: SMALL_ORDER_POINT})


class InvalidCommitment(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return replace(honest, commitments=changed(honest.commitments, {0: SMALL_ORDER_POINT}))


@pytest.mark.parametrize(
    ("cheat", "reason"),
    [
        (RepeatingLocker, "locked repeats a point"),
        (InvalidLocker, "locked[0]"),
        (InvalidCommitment, "commitments[0]"),
    ],
)
def test_a_lock_with_a_repeated_or_invalid_point_is_refused(
    cheat: type[SeatDeck], reason: str
) -> None:
    seats, public = fresh_table(4, cheaters={1: cheat})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (1, "lock")
    assert reason in verdict.reason


# --- the deal round ----------------------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_wrong_deal_key_is_refused_at_once_naming_its_sender(players: int) -> None:
    """Checked against its commitment when it comes, before anybody decrypts anything."""
    cheater = players - 1
    seats, public = fresh_table(players, cheaters={cheater: BadKeyDeck})
    verdict = verdict_of(lambda: deal_rounds(seats, public))
    assert (verdict.seat, verdict.step) == (cheater, "deal")
    assert "does not match its lock" in verdict.reason
    assert verdict.evidence == (
        f"deal-keys/{cheater}@{3 * players + cheater}",
        f"lock/{cheater}@{2 * players + cheater}",
    )
    assert public.waiting_for() == {cheater}  # the bad payload was not accepted


def test_a_position_that_does_not_open_is_blamed_by_code_and_position() -> None:
    """What a seat reports when its hand does not decrypt comes from the verdict's fields,
    not from its words: a key that does not match its lock, else a step taken unchecked."""
    seats, public = fresh_table(3)
    deal_rounds(seats, public)
    j = public.setup.layout.positions_of(0)[0]
    keys = public.published_keys(j)
    unchecked = public.blame("deal", j, keys)
    assert (unchecked.seat, unchecked.code, unchecked.position) == (None, Code.NO_CARD, j)
    other = next(iter(keys))
    wrong = {**keys, other: (keys[other][0][::-1], keys[other][1])}
    named = public.blame("deal", j, wrong)
    assert (named.seat, named.code, named.position) == (other, Code.BAD_KEY, j)


def test_malformed_deal_keys_are_refused_at_once() -> None:
    seats, public = fresh_table(3)
    lock_rounds(seats, public)
    honest = seats[1].deal_keys()
    verdict = verdict_of(lambda: public.receive(replace(honest, keys=honest.keys[1:])))
    assert (verdict.seat, verdict.step) == (1, "deal") and "instead of" in verdict.reason
    not_canonical = (ORDER + 5).to_bytes(32, "little")
    verdict = verdict_of(
        lambda: public.receive(replace(honest, keys=(not_canonical, *honest.keys[1:])))
    )
    assert (verdict.seat, verdict.step) == (1, "deal") and "not canonical" in verdict.reason
    verdict = verdict_of(
        lambda: public.receive(replace(honest, keys=(bytes(32), *honest.keys[1:])))
    )
    assert "zero" in verdict.reason


class WrongChienKey(SeatDeck):
    def chien_keys(self) -> ChienKeys:
        honest = super().chien_keys()
        return replace(honest, keys=(random_scalar("chien"), *honest.keys[1:]))


def test_a_wrong_chien_key_is_named_when_the_chien_is_turned() -> None:
    seats, public = fresh_table(4, cheaters={2: WrongChienKey})
    deal_in_one_process(seats, [public])
    verdict = verdict_of(lambda: turn_chien(seats, public))
    assert (verdict.seat, verdict.step) == (2, "chien")
    assert public.chien() is None


def test_withholding_deal_keys_after_seeing_ones_own_hand_is_named() -> None:
    seats, public = fresh_table(5)
    lock_rounds(seats, public)
    for seat in seats:
        if seat.seat != 3:
            public.receive(seat.deal_keys())
    assert len(seats[3].hand(public)) == 15  # seat 3 sees its hand...
    assert public.waiting_for() == {3}  # ... and keeps its keys
    for other in (0, 1, 2, 4):
        with pytest.raises(DeckUsageError):
            seats[other].hand(public)
    assert public.stalled() == [
        Verdict(3, "deal", "withheld its deal keys", ("no deal payload from seat 3",))
    ]


# --- opening -----------------------------------------------------------------------------


def test_opening_a_position_with_a_key_that_does_not_match_is_named() -> None:
    seats, public = dealt_table(5)
    position, card_ = min(seats[2].hand(public).items())
    verdict = verdict_of(
        lambda: public.receive(Open(2, (Opening(position, random_scalar("k"), card_.index),)))
    )
    assert (verdict.seat, verdict.step) == (2, "open")
    assert "does not match its lock" in verdict.reason


def test_claiming_a_card_that_is_not_at_the_opened_position_is_named() -> None:
    seats, public = dealt_table(5)
    hand = seats[2].hand(public)
    (position, _), (_, other) = sorted(hand.items())[:2]
    key = seats[2].secrets.lock_keys[position]
    verdict = verdict_of(lambda: public.receive(Open(2, (Opening(position, key, other.index),))))
    assert (verdict.seat, verdict.step) == (2, "open")
    assert f"claimed {other.code} at position {position}" in verdict.reason


def test_opening_a_position_dealt_to_another_seat_is_named() -> None:
    seats, public = dealt_table(4)
    position, card_ = min(seats[1].hand(public).items())
    verdict = verdict_of(
        lambda: public.receive(
            Open(0, (Opening(position, seats[0].secrets.lock_keys[position], card_.index),))
        )
    )
    assert (verdict.seat, verdict.step) == (0, "open") and "not dealt to it" in verdict.reason


# --- the écart ---------------------------------------------------------------------------


def recommit(
    taker: SeatDeck, cards: list[Card], discard: list[Card], show: list[Card]
) -> EcartCommitment:
    """An écart payload for any list of cards, made the way SeatDeck.ecart makes it."""
    s = taker.secrets
    committed = [sorted(cards)[k] for k in s.recommit_order]
    return EcartCommitment(
        taker.seat,
        tuple(mul(r, CARD_POINTS[c.index]) for r, c in zip(s.recommit_keys, committed)),
        tuple(k for k, c in enumerate(committed) if c in discard),
        tuple(
            Opening(k, s.recommit_keys[k], c.index) for k, c in enumerate(committed) if c in show
        ),
    )


def ecart_table(
    players: int = 5, salt: int = 0
) -> tuple[list[SeatDeck], PublicDeck, SeatDeck, list[Card]]:
    seats, public = dealt_table(players, salt)
    chien = turn_chien(seats, public)
    taker = seats[0]
    return seats, public, taker, [*taker.hand(public).values(), *chien]


def test_an_ecart_with_a_card_the_taker_never_had_is_named_by_the_audit() -> None:
    seats, public, taker, held = ecart_table()
    foreign = min(seats[3].hand(public).values())
    kept = [c for c in held if c not in plain(held)[:3]]
    fake = [foreign if c is kept[0] else c for c in held]
    public.receive(recommit(taker, fake, plain(held)[:3], []))  # hidden: nobody can tell yet
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "ecart")
    assert f"re-committed {foreign.code}, which it never had" in verdict.reason


def test_playing_a_re_committed_card_that_another_seat_showed_is_named_at_once() -> None:
    seats, public, taker, held = ecart_table()
    foreign = min(seats[3].hand(public).values())
    public.receive(seats[3].open([foreign]))
    fake = [foreign if c is held[0] else c for c in held]
    ecart = recommit(taker, fake, plain(held)[1:4], [])
    public.receive(ecart)
    k = next(
        k
        for k in range(len(fake))
        if mul(taker.secrets.recommit_keys[k], CARD_POINTS[foreign.index]) == ecart.commitments[k]
    )
    verdict = verdict_of(
        lambda: public.receive(
            OpenRecommitted(0, (Opening(k, taker.secrets.recommit_keys[k], foreign.index),))
        )
    )
    assert (verdict.seat, verdict.step) == (0, "open")
    assert f"re-committed {foreign.code}, which was dealt to seat 3" in verdict.reason


def _ecart_with(
    salt: int, want: str
) -> tuple[list[SeatDeck], PublicDeck, SeatDeck, list[Card], Card]:
    """A table whose taker holds a card of the wanted kind (searching a few seeds)."""
    for s in range(salt, salt + 20):
        seats, public, taker, held = ecart_table(5, s)
        for c in held:
            if (
                (want == "king" and c.is_king)
                or (want == "excuse" and c.is_excuse)
                or (want == "high bout" and c.is_trump and c.is_bout)
            ):
                return seats, public, taker, held, c
    raise AssertionError(f"no taker with a {want}")


@pytest.mark.parametrize("want", ["king", "excuse"])
def test_a_king_or_the_excuse_hidden_in_the_ecart_is_named_by_the_audit(want: str) -> None:
    seats, public, taker, held, bad = _ecart_with(0, want)
    public.receive(taker.ecart(public, [bad, *plain(held)[:2]]))  # not a trump: not shown
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "ecart")
    assert f"discarded {bad.code}: a king or a bout never goes to the écart" in verdict.reason


def test_a_trump_bout_in_the_ecart_is_shown_and_named_at_once() -> None:
    seats, public, taker, held, bout = _ecart_with(0, "high bout")
    verdict = verdict_of(lambda: public.receive(taker.ecart(public, [bout, *plain(held)[:2]])))
    assert (verdict.seat, verdict.step) == (0, "ecart") and bout.code in verdict.reason


def test_a_trump_discarded_while_plain_cards_were_left_is_named_by_the_audit() -> None:
    seats, public, taker, held = ecart_table()
    trump = next(c for c in held if c.is_trump and not c.is_bout)
    assert len(plain(held)) >= 3
    public.receive(taker.ecart(public, [trump, *plain(held)[:2]]))  # shown, as it must be
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "ecart")
    assert "1 trumps where 0 were unavoidable" in verdict.reason


def test_a_discarded_trump_that_is_not_shown_is_named_by_the_audit() -> None:
    seats, public, taker, held = ecart_table()
    trump = next(c for c in held if c.is_trump and not c.is_bout)
    public.receive(recommit(taker, held, [trump, *plain(held)[:2]], show=[]))
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "ecart")


def test_the_taker_opens_re_commitments_only_and_never_a_discarded_one() -> None:
    seats, public, taker, held = ecart_table()
    discard = plain(held)[:3]
    ecart = taker.ecart(public, discard)
    public.receive(ecart)
    position, original = min(taker.hand(public).items())
    verdict = verdict_of(
        lambda: public.receive(
            Open(0, (Opening(position, taker.secrets.lock_keys[position], original.index),))
        )
    )
    assert (verdict.seat, verdict.step) == (0, "open") and "after re-committing" in verdict.reason
    k = ecart.discarded[0]
    thrown = Opening(k, taker.secrets.recommit_keys[k], discard[0].index)
    verdict = verdict_of(lambda: public.receive(OpenRecommitted(0, (thrown,))))
    assert (verdict.seat, verdict.step) == (0, "open") and "which it discarded" in verdict.reason
    kept = next(c for c in held if c not in discard)
    honest = taker.open([kept])
    assert isinstance(honest, OpenRecommitted)
    lie = replace(honest, openings=(replace(honest.openings[0], card=discard[1].index),))
    verdict = verdict_of(lambda: public.receive(lie))
    assert (verdict.seat, verdict.step) == (0, "open") and "does not open to" in verdict.reason
    verdict = verdict_of(lambda: public.receive(OpenRecommitted(1, honest.openings)))
    assert verdict.seat == 1 and "without having made an écart" in verdict.reason
    public.receive(honest)


def test_an_ecart_before_the_chien_is_turned_is_refused() -> None:
    seats, public = dealt_table(5)
    fake = recommit(seats[0], list(DECK[:18]), list(DECK[:3]), [])
    verdict = verdict_of(lambda: public.receive(fake))
    assert (verdict.seat, verdict.step) == (0, "ecart") and "before the chien" in verdict.reason


# --- reveal ------------------------------------------------------------------------------


def test_a_seed_that_does_not_match_its_commitment_is_named() -> None:
    seats, public = dealt_table(4)
    lie = replace(seats[1].reveal(), seed=seed_for(4, 1, salt=99))
    verdict = verdict_of(lambda: public.receive(lie))
    assert (verdict.seat, verdict.step) == (1, "reveal")
    assert verdict.evidence[1] == "commit/1@1"
    revealed = reveal_all(seats)
    revealed[1] = lie.seed
    audited_verdict = audit_deck(public.record, revealed).verdict
    assert audited_verdict is not None and (audited_verdict.seat, audited_verdict.step) == (
        1,
        "reveal",
    )


def test_refusing_to_reveal_is_named() -> None:
    seats, public = dealt_table(4)
    for seat in seats:
        if seat.seat != 2:
            public.receive(seat.reveal())
    assert public.waiting_for() == {2}
    assert [(v.seat, v.step) for v in public.stalled()] == [(2, "reveal")]
    revealed = reveal_all(seats)
    revealed[2] = None
    verdict = audit_deck(public.record, revealed).verdict
    assert verdict == Verdict(
        2, "reveal", "did not reveal its seed (found by the audit)", ("commit/2@2",), Fault.SILENCE
    )


class UncommittedKey(SeatDeck):
    """Commits to a seed but works with a blanket key from elsewhere, consistently."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]  # the arguments of SeatDeck, passed through
        committed_seed = self.secrets.seed
        other = derive(
            b"\x07" * 32, self.setup.table_id, self.setup.deal, self.seat, self.setup.variant
        )
        self.secrets = replace(other, seed=committed_seed)


def test_a_blanket_key_that_does_not_come_from_the_seed_is_named_by_the_audit() -> None:
    seats, public = fresh_table(3, cheaters={1: UncommittedKey})
    deal_in_one_process(seats, [public])  # consistent with itself: every check passes
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (1, "commit")


# --- protocol order -----------------------------------------------------------------------


def test_payloads_out_of_turn_twice_or_from_elsewhere_are_named() -> None:
    seats, public = fresh_table(3)
    commits = [seat.commit() for seat in seats]
    public.receive(commits[0])
    verdict = verdict_of(lambda: public.receive(commits[0]))
    assert (verdict.seat, verdict.step) == (0, "commit") and "twice" in verdict.reason
    verdict = verdict_of(lambda: public.receive(replace(commits[1], seat=4)))
    assert verdict.seat is None and "not at this table" in verdict.reason
    verdict = verdict_of(
        lambda: public.receive(replace(commits[1], blanket_public=SMALL_ORDER_POINT))
    )
    assert (verdict.seat, verdict.step) == (1, "commit")
    for commit in commits[1:]:
        public.receive(commit)
    public.receive(seats[0].shuffle(public))
    stolen = replace(public.record.payloads[-1], seat=2)
    verdict = verdict_of(lambda: public.receive(stolen))
    assert (verdict.seat, verdict.step) == (2, "shuffle") and "out of turn" in verdict.reason
    verdict = verdict_of(lambda: public.receive(seats[2].deal_keys()))
    assert (verdict.seat, verdict.step) == (
        2,
        "deal",
    ) and "during the shuffle round" in verdict.reason
    next_shuffle = seats[1].shuffle(public)
    public.receive(seats[2].reveal())  # revealing ends the deal (an abort): nothing else goes
    verdict = verdict_of(lambda: public.receive(next_shuffle))
    assert (verdict.seat, verdict.step) == (
        1,
        "shuffle",
    ) and "during the reveal round" in verdict.reason
