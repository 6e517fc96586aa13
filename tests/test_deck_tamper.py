"""Every way a seat can deviate from the deck protocol ends in a verdict naming that seat.

Each cheater is a SeatDeck that bends one step; the honest seats run the unmodified code.
Where the cheap checks of the deal cannot tell who deviated (a compensated tracer: every key
checks out, yet a dealt card is garbage), the deal stops before any card is played with an
unattributed verdict, and the audit of the revealed seeds names the culprit.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from nacl.bindings import crypto_core_ed25519_sub as sub

from deck_tables import dealt_table, fresh_table, lock_rounds, plain, reveal_all, seed_for, truth, turn_chien
from protocol.audit_deck import audit_deck
from protocol.cards import DECK, Card, card
from protocol.deck import (
    ChienKeys,
    DealKeys,
    DeckUsageError,
    Ecart,
    Lock,
    Open,
    Opening,
    OpenRecommitted,
    PublicDeck,
    SeatDeck,
    Shuffle,
    deal_in_one_process,
)
from protocol.group import CARD_POINTS, GENERATOR, ORDER, add, card_of, invert, mul, scalar_from_digest, scalar_product
from protocol.layout import CHIEN
from protocol.seeds import derive
from protocol.verdict import Verdict, VerdictError

T = scalar_from_digest(hashlib.sha512(b"the tracer's secret multiple").digest())
SMALL_ORDER_POINT = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


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


def with_points(payload: Shuffle, changes: dict[int, bytes]) -> Shuffle:
    points = list(payload.points)
    for k, point in changes.items():
        points[k] = point
    return replace(payload, points=tuple(points))


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
        self.secrets = derive(b"\x01" * 32, self.setup.table_id, self.setup.deal, self.seat, self.setup.variant)
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
        (4, SmallOrderShuffler, "small order"),
    ],
)
def test_a_bad_shuffle_is_refused_at_once_naming_the_shuffler(cheater: int, cheat: type[SeatDeck], reason: str) -> None:
    seats, public = fresh_table(5, cheaters={cheater: cheat})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (cheater, "shuffle")
    assert reason in verdict.reason
    assert verdict.evidence == (f"shuffle/{cheater}@{5 + cheater}",)
    assert public.waiting_for() == {cheater}  # the bad payload was not accepted


TARGET, VICTIM, PARTNER = card("T21"), card("3S"), card("4S")


class Tracer(SeatDeck):
    """The tracer of DESIGN §4, by the first shuffler, the only one who sees the plain cards:
    put ``t·a·M_target`` where ``a·M_victim`` belongs, and make the sum right again on
    ``a·M_partner``.  Every point is valid and distinct, the sum proof holds."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        where = {index: p for p, index in enumerate(self.secrets.permutation)}  # D₀ is in card order
        at_victim, at_partner = honest.points[where[VICTIM.index]], honest.points[where[PARTNER.index]]
        tracer = mul(T, mul(self.secrets.blanket, CARD_POINTS[TARGET.index]))
        return with_points(
            honest,
            {where[VICTIM.index]: tracer, where[PARTNER.index]: add(at_partner, sub(at_victim, tracer))},
        )


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_tracer_is_caught_at_the_deal_before_any_card_is_played(players: int) -> None:
    seats, public = fresh_table(players, cheaters={0: Tracer})
    deal_rounds(seats, public)  # every step verifies: the sum proof cannot see the tracer
    # ... and it works: the tracer finds the pair related by t in the public deck, so it
    # knows where the target card lies.
    deck = public.record.payloads[2 * players - 1].points  # type: ignore[union-attr]
    cards = truth(seats, public)
    found = [p for p in range(78) if mul(T, deck[p]) in set(deck)]
    assert [cards[p] for p in found] == [TARGET.index]
    # But it costs garbage, and garbage in an honest hand stops the deal at once.
    garbage = [j for j in range(78) if cards[j] is None]
    assert len(garbage) == 2
    owners = {public.setup.layout.owner[j] for j in garbage}
    assert owners - {0, CHIEN}, "choose seeds where the garbage reaches an honest hand"
    for seat in seats[1:]:
        if seat.seat in owners:
            verdict = verdict_of(lambda: seat.hand(public))
            assert (verdict.seat, verdict.step) == (None, "deal")
            assert "reveal the seeds and audit" in verdict.reason
        else:
            assert len(seat.hand(public)) == public.setup.variant.hand_size
    # The seeds are revealed; the audit names the first shuffler.
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "shuffle")
    assert verdict.evidence == ("shuffle/0@" + str(players),)


class ChienSpoiler(SeatDeck):
    """The last shuffler knows where its output lands (the lock does not move points): it
    puts compensated garbage on two chien positions, out of every hand."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        j, k = self.setup.layout.chien_positions[:2]
        return with_points(honest, {j: add(honest.points[j], GENERATOR), k: sub(honest.points[k], GENERATOR)})


def test_garbage_that_lands_only_in_the_chien_is_caught_when_the_chien_is_turned() -> None:
    seats, public = fresh_table(5, cheaters={4: ChienSpoiler})
    deal_in_one_process(seats, [public])  # every hand decrypts
    verdict = verdict_of(lambda: turn_chien(seats, public))
    assert (verdict.seat, verdict.step) == (None, "chien")
    assert public.chien() is None
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (4, "shuffle")


# --- the lock ----------------------------------------------------------------------------


def relocked(seat: SeatDeck, honest: Lock, unlocked: dict[int, bytes]) -> Lock:
    """The lock payload with some F changed and their E made consistent (so keys check out)."""
    f = list(honest.unlocked)
    e = list(honest.locked)
    for j, point in unlocked.items():
        f[j] = point
        e[j] = mul(seat.secrets.lock_keys[j], point)
    return replace(honest, unlocked=tuple(f), locked=tuple(e))


class WrongF(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return relocked(self, honest, {10: add(honest.unlocked[10], GENERATOR)})


class CompensatedWrongF(SeatDeck):
    """Two wrong F whose sum is right, on positions of the next seat's hand."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        victim = (self.seat + 1) % self.setup.players
        j, k = self.setup.layout.positions_of(victim)[:2]
        return relocked(self, honest, {j: add(honest.unlocked[j], GENERATOR), k: sub(honest.unlocked[k], GENERATOR)})


def test_a_wrong_f_is_refused_at_once_naming_the_locker() -> None:
    seats, public = fresh_table(5, cheaters={2: WrongF})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (2, "lock")
    assert "proof" in verdict.reason


def test_a_compensated_wrong_f_stops_the_deal_and_the_audit_names_the_locker() -> None:
    seats, public = fresh_table(5, cheaters={2: CompensatedWrongF})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (None, "deal")  # seat 3 finds garbage in its hand
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (2, "lock")
    assert "unlocked points F" in verdict.reason


def test_with_the_weighted_lock_proof_a_compensated_wrong_f_is_named_at_once() -> None:
    seats, public = fresh_table(5, weighted=True, cheaters={2: CompensatedWrongF})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (2, "lock")


class LockTracer(SeatDeck):
    """A tracer at the lock: the locker knows the layout, so it can put ``t·F_j'`` (j' in
    another seat's hand) and the compensation on positions of its *own* hand, where no
    honest recipient will ever decrypt them."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        mine = self.setup.layout.positions_of(self.seat)
        j, k = mine[0], mine[1]
        spied = self.setup.layout.positions_of(self.seat + 1)[0]
        tracer = mul(T, honest.unlocked[spied])
        compensation = add(honest.unlocked[k], sub(honest.unlocked[j], tracer))
        return relocked(self, honest, {j: tracer, k: compensation})


def test_a_lock_tracer_into_its_own_hand_passes_the_sum_proofs_and_is_named_by_the_audit() -> None:
    """The residual risk of sum proofs (see the report): the deal goes on, the cheater reads
    one card of the next seat, and only the audit — or its own garbage, which it cannot
    play — exposes it.  The weighted lock proof closes it at once."""
    seats, public = fresh_table(5, cheaters={0: LockTracer})
    deal_rounds(seats, public)
    for seat in seats[1:]:
        assert len(seat.hand(public)) == 15  # no honest hand sees anything wrong
    layout = public.setup.layout
    j, spied = layout.positions_of(0)[0], layout.positions_of(1)[0]
    keys = [key for key, _ in public.published_keys(j).values()] + [seats[0].secrets.lock_keys[j]]
    read = mul(invert(T), mul(invert(scalar_product(keys)), public.final_point(j)))
    assert card_of(read) == seats[1].hand(public)[spied].index
    verdict = audited(seats, public)
    assert (verdict.seat, verdict.step) == (0, "lock")

    seats, public = fresh_table(5, weighted=True, cheaters={0: LockTracer})
    verdict = verdict_of(lambda: deal_rounds(seats, public))
    assert (verdict.seat, verdict.step) == (0, "lock")


class RepeatingLocker(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        locked = list(honest.locked)
        locked[1] = locked[0]
        return replace(honest, locked=tuple(locked))


class InvalidLocker(SeatDeck):
    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        return replace(honest, unlocked=(SMALL_ORDER_POINT, *honest.unlocked[1:]))


@pytest.mark.parametrize(("cheat", "reason"), [(RepeatingLocker, "locked repeats a point"), (InvalidLocker, "unlocked[0]")])
def test_a_lock_with_a_repeated_or_invalid_point_is_refused(cheat: type[SeatDeck], reason: str) -> None:
    seats, public = fresh_table(4, cheaters={1: cheat})
    verdict = verdict_of(lambda: deal_in_one_process(seats, [public]))
    assert (verdict.seat, verdict.step) == (1, "lock")
    assert reason in verdict.reason


# --- the deal round ----------------------------------------------------------------------


class WrongDealKey(SeatDeck):
    """Publishes a wrong key for the first position of the next seat."""

    def deal_keys(self) -> DealKeys:
        honest = super().deal_keys()
        victim = self.setup.layout.positions_of((self.seat + 1) % self.setup.players)[0]
        keys = list(honest.keys)
        keys[self.setup.dealt_to_others(self.seat).index(victim)] = random_scalar("wrong")
        return replace(honest, keys=tuple(keys))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_wrong_lock_key_is_named_by_its_recipient(players: int) -> None:
    cheater = players - 1
    seats, public = fresh_table(players, cheaters={cheater: WrongDealKey})
    deal_rounds(seats, public)
    verdict = verdict_of(lambda: seats[0].hand(public))
    assert (verdict.seat, verdict.step) == (cheater, "deal")
    assert "does not match its lock" in verdict.reason
    assert verdict.evidence == (f"deal-keys/{cheater}@{3 * players + cheater}", f"lock/{cheater}@{2 * players + cheater}")
    assert len(seats[1].hand(public)) == public.setup.variant.hand_size  # the others are fine


def test_malformed_deal_keys_are_refused_at_once() -> None:
    seats, public = fresh_table(3)
    lock_rounds(seats, public)
    honest = seats[1].deal_keys()
    verdict = verdict_of(lambda: public.receive(replace(honest, keys=honest.keys[1:])))
    assert (verdict.seat, verdict.step) == (1, "deal") and "instead of" in verdict.reason
    not_canonical = (ORDER + 5).to_bytes(32, "little")
    verdict = verdict_of(lambda: public.receive(replace(honest, keys=(not_canonical, *honest.keys[1:]))))
    assert (verdict.seat, verdict.step) == (1, "deal") and "not canonical" in verdict.reason
    verdict = verdict_of(lambda: public.receive(replace(honest, keys=(bytes(32), *honest.keys[1:]))))
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
    for seat in (0, 1, 2, 4):
        with pytest.raises(DeckUsageError):
            seats[seat].hand(public)
    assert public.stalled() == [Verdict(3, "deal", "withheld its deal keys", ("no deal payload from seat 3",))]


# --- opening -----------------------------------------------------------------------------


def test_opening_a_position_with_a_key_that_does_not_match_is_named() -> None:
    seats, public = dealt_table(5)
    position, card_ = min(seats[2].hand(public).items())
    verdict = verdict_of(lambda: public.receive(Open(2, (Opening(position, random_scalar("k"), card_.index),))))
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
    verdict = verdict_of(lambda: public.receive(Open(0, (Opening(position, seats[0].secrets.lock_keys[position], card_.index),))))
    assert (verdict.seat, verdict.step) == (0, "open") and "not dealt to it" in verdict.reason


# --- the écart ---------------------------------------------------------------------------


def recommit(taker: SeatDeck, cards: list[Card], discard: list[Card], show: list[Card]) -> Ecart:
    """An écart payload for any list of cards, made the way SeatDeck.ecart makes it."""
    s = taker.secrets
    committed = [sorted(cards)[k] for k in s.recommit_order]
    return Ecart(
        taker.seat,
        tuple(mul(r, CARD_POINTS[c.index]) for r, c in zip(s.recommit_keys, committed)),
        tuple(k for k, c in enumerate(committed) if c in discard),
        tuple(Opening(k, s.recommit_keys[k], c.index) for k, c in enumerate(committed) if c in show),
    )


def ecart_table(players: int = 5, salt: int = 0) -> tuple[list[SeatDeck], PublicDeck, SeatDeck, list[Card]]:
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
    k = next(k for k in range(len(fake)) if mul(taker.secrets.recommit_keys[k], CARD_POINTS[foreign.index]) == ecart.commitments[k])
    verdict = verdict_of(lambda: public.receive(OpenRecommitted(0, (Opening(k, taker.secrets.recommit_keys[k], foreign.index),))))
    assert (verdict.seat, verdict.step) == (0, "open")
    assert f"re-committed {foreign.code}, which was dealt to seat 3" in verdict.reason


def _ecart_with(salt: int, want: str) -> tuple[list[SeatDeck], PublicDeck, SeatDeck, list[Card], Card]:
    """A table whose taker holds a card of the wanted kind (searching a few seeds)."""
    for s in range(salt, salt + 20):
        seats, public, taker, held = ecart_table(5, s)
        for c in held:
            if (want == "king" and c.is_king) or (want == "excuse" and c.is_excuse) or (want == "high bout" and c.is_trump and c.is_bout):
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
    verdict = verdict_of(lambda: public.receive(Open(0, (Opening(position, taker.secrets.lock_keys[position], original.index),))))
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
    verdict = audit_deck(public.record, revealed).verdict
    assert verdict is not None and (verdict.seat, verdict.step) == (1, "reveal")


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
    assert verdict == Verdict(2, "reveal", "did not reveal its seed (found by the audit)", ("commit/2@2",))


class UncommittedKey(SeatDeck):
    """Commits to a seed but works with a blanket key from elsewhere, consistently."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        committed_seed = self.secrets.seed
        other = derive(b"\x07" * 32, self.setup.table_id, self.setup.deal, self.seat, self.setup.variant)
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
    verdict = verdict_of(lambda: public.receive(replace(commits[1], blanket_public=SMALL_ORDER_POINT)))
    assert (verdict.seat, verdict.step) == (1, "commit")
    for commit in commits[1:]:
        public.receive(commit)
    public.receive(seats[0].shuffle(public))
    stolen = replace(public.record.payloads[-1], seat=2)
    verdict = verdict_of(lambda: public.receive(stolen))
    assert (verdict.seat, verdict.step) == (2, "shuffle") and "out of turn" in verdict.reason
    verdict = verdict_of(lambda: public.receive(seats[2].deal_keys()))
    assert (verdict.seat, verdict.step) == (2, "deal") and "during the shuffle round" in verdict.reason
    next_shuffle = seats[1].shuffle(public)
    public.receive(seats[2].reveal())  # revealing ends the deal (an abort): nothing else goes
    verdict = verdict_of(lambda: public.receive(next_shuffle))
    assert (verdict.seat, verdict.step) == (1, "shuffle") and "during the reveal round" in verdict.reason
