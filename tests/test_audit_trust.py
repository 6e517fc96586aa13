"""A daemon may take its own seats' deck steps as published, live and in the end-of-deal
audit (issue 9).

A daemon computed its own seats' shuffle and lock itself, from their seeds and the steps
published before them: checking or replaying them proves nothing to it.  Trusting them must
change no honest audit, save exactly their multiplications, still name any other seat that
deviates, and never let an audit made with one trusted set serve a caller with another.
"""

from __future__ import annotations

import pytest
from deck_tables import (
    commit_round,
    dealt_table,
    fresh_table,
    lock_rounds,
    plain,
    reveal_all,
    turn_chien,
)

from client.simulation import Cheat, play_one_deal, sim_table
from lab.cheats.attacks import BadLockDeck, BadShuffleDeck, TracerDeck
from protocol.deck.audit_deck import DeckAudit, audit_deck
from protocol.deck.group import MULTS
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import Lock, Open, Opening, Shuffle
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.replication.audit import Audits, DealAudit, audit_public
from protocol.replication.machine import SeatMachine
from protocol.replication.public import PublicDeal
from protocol.replication.verdict import VerdictError

pytestmark = pytest.mark.heavy

EVERYONE = frozenset(range(5))


def whole_deck(salt: int) -> tuple[list[SeatDeck], PublicDeck]:
    """Five seats: deal, turn the chien, an écart by seat 0, a card opened by each, reveal."""
    seats, public = fresh_table(5, salt=salt)
    deal_in_one_process(seats, [public])
    chien = turn_chien(seats, public)
    taker = seats[0]
    pool = sorted(plain([*taker.hand(public).values(), *chien]))
    public.receive(taker.ecart(public, pool[: len(chien)]))
    public.receive(taker.open([pool[len(chien)]]))  # after its écart, from its re-commitments
    for seat in seats[1:]:
        public.receive(seat.open([min(seat.hand(public).values())]))
    reveal_all(seats, public)
    return seats, public


def counted(
    record_and_seeds: tuple[list[SeatDeck], PublicDeck], trusted: frozenset[int]
) -> tuple[DeckAudit, int]:
    seats, public = record_and_seeds
    MULTS.reset()
    result = audit_deck(public.record, {seat.seat: seat.seed for seat in seats}, trusted)
    return result, MULTS.value


def steps_of(public: PublicDeck, seat: int) -> int:
    """The multiplications a seat's shuffle and lock cost the replay, from the payloads."""
    total = 0
    for payload in public.record.payloads:
        if isinstance(payload, Shuffle) and payload.seat == seat:
            total += len(payload.points)
        elif isinstance(payload, Lock) and payload.seat == seat:
            # B by G, E by the previous step
            total += len(payload.commitments) + len(payload.locked)
    return total


@pytest.mark.parametrize("salt", [0, 7])
def test_trusting_seats_changes_nothing_in_an_honest_deck_audit_and_saves_their_steps(
    salt: int,
) -> None:
    table = whole_deck(salt)
    full, everything = counted(table, frozenset())
    assert full.clean, full.verdict
    assert full.ecart is not None and len(full.hands) == 5
    for trusted in (frozenset({0}), frozenset({3}), frozenset({1, 4}), EVERYONE):
        result, mults = counted(table, trusted)
        assert result == full  # verdict, hands, chien and écart
        saved = sum(steps_of(table[1], seat) for seat in trusted)
        assert saved == 234 * len(trusted)  # 78 for the shuffle, 78 for the lock and 78 by G
        assert mults == everything - saved


def _audited_deal(
    seed: int, cheat: Cheat | None = None
) -> tuple[list[SeatMachine], PublicDeal, bytes]:
    table, identities = sim_table(5, seed=seed)
    machines = play_one_deal(table, identities, 0, seed % 5, seed, ["random"] * 5, cheat)
    honest = next(m for m in machines if cheat is None or m.seat != cheat.seat)
    assert honest.done
    return machines, honest.public, honest.transcript.head


def _same(a: DealAudit, b: DealAudit) -> None:
    assert (a.verdict, a.scores, a.penalties, a.outcome, a.abandoned) == (
        b.verdict,
        b.scores,
        b.penalties,
        b.outcome,
        b.abandoned,
    )
    assert a.referee is not None and b.referee is not None
    assert (a.referee.dealt, a.referee.chien, a.referee.ecart, a.referee.phase) == (
        b.referee.dealt,
        b.referee.chien,
        b.referee.ecart,
        b.referee.phase,
    )


@pytest.mark.parametrize("seed", [3, 11])
def test_an_honest_deal_audits_the_same_with_a_seat_trusted(seed: int) -> None:
    _, public, _ = _audited_deal(seed)
    plain_audit = audit_public(public)
    assert plain_audit.ok and plain_audit.outcome is not None
    for seat in range(5):
        _same(audit_public(public, frozenset({seat})), plain_audit)


def _deck_with(cheater: int, deck: type[SeatDeck]) -> tuple[list[SeatDeck], PublicDeck]:
    """Commit, shuffle and lock with one bent step, taken as the cheater's own daemon takes
    it: on trust, unchecked.  Every other deck refuses it at once by its proof; the audit's
    replay is what remains for the steps a daemon trusted."""
    seats, public = fresh_table(5, cheaters={cheater: deck})
    public.trusted = frozenset({cheater})
    lock_rounds(seats, public)
    return seats, public


@pytest.mark.parametrize(("deck", "step"), [(TracerDeck, "shuffle"), (BadLockDeck, "lock")])
@pytest.mark.parametrize("cheater", [0, 2])
def test_an_untrusted_deviation_is_still_named_and_a_trusted_one_is_by_design_not(
    deck: type[SeatDeck], step: str, cheater: int
) -> None:
    table = _deck_with(cheater, deck)
    others = EVERYONE - {cheater}
    for trusted in (frozenset(), frozenset({(cheater + 1) % 5}), others):
        verdict = counted(table, trusted)[0].verdict
        assert verdict is not None and (verdict.seat, verdict.step) == (cheater, step)
    # Trust only what you computed yourself: the cheater's own daemon would miss it.
    assert counted(table, frozenset({cheater}))[0].clean


def test_the_audits_kept_are_keyed_on_the_trusted_seats() -> None:
    _, public, head = _audited_deal(3)
    audits = Audits()
    MULTS.reset()
    first = audits.of(public, head)
    everything = MULTS.value
    MULTS.reset()
    assert audits.of(public, head) is first and MULTS.value == 0  # kept
    assert Audits().of(public, head) is not first  # another owner's are its own
    for seat in (0, 1):
        MULTS.reset()
        mine = audits.of(public, head, frozenset({seat}))
        assert mine is not first and MULTS.value == everything - 234  # audited afresh
        _same(mine, first)
        MULTS.reset()
        assert audits.of(public, head, frozenset({seat})) is mine and MULTS.value == 0


def test_the_seats_of_a_simulated_deal_share_one_audit() -> None:
    machines, _, _ = _audited_deal(3)
    assert len({id(m.audits) for m in machines}) == 1
    assert all(m.audit is machines[0].audit for m in machines)


def test_a_bent_lock_refused_live_is_named_by_every_audit_whatever_it_trusts() -> None:
    """Seat 2 bends a lock: the live check of every other seat refuses it by its proof, so
    the deal stopped there, and no trust in the end-of-deal audit can hide it."""
    _, public, head = _audited_deal(5, Cheat(2, "bad-lock"))
    for trusted in (frozenset(), frozenset({0}), frozenset({2})):
        verdict = audit_public(public, trusted).verdict
        assert verdict is not None and (verdict.seat, verdict.step) == (2, "lock")


def test_a_machine_trusts_no_seat_unless_told_and_passes_its_trust_to_the_audit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[int, frozenset[int]] = {}

    looked_up = Audits.of

    def spy(
        audits: Audits, public: PublicDeal, head: bytes, trusted: frozenset[int] = frozenset()
    ) -> DealAudit:
        assert public.own_seat is not None
        seen[public.own_seat] = trusted
        return looked_up(audits, public, head, trusted)

    monkeypatch.setattr(Audits, "of", spy)
    machines, _, _ = _audited_deal(3)
    assert all(m.trusted_seats == frozenset() for m in machines)
    assert seen == {seat: frozenset() for seat in range(5)}

    seen.clear()
    table, identities = sim_table(5, seed=3)
    resumed, _ = SeatMachine.resume(
        table, 0, 3, 1, identities[1], machines[1].seed, machines[1].transcript.messages
    )
    assert resumed.trusted_seats == frozenset()  # the attribute exists on every constructor path
    resumed.trusted_seats = frozenset({1})
    resumed.audit = None
    audited = resumed._score_signature()
    assert seen == {1: frozenset({1})}
    assert audited == machines[1]._score_signature()


@pytest.mark.parametrize("cheater", [0, 3])
def test_the_live_checks_skip_a_trusted_step_and_only_a_trusted_one(cheater: int) -> None:
    """A shuffle with a repeated point: refused at once by a deck that does not trust its
    seat, taken as published by one that does (a daemon never bends its own steps)."""
    for trusted, refused in (
        (frozenset(), True),
        (EVERYONE - {cheater}, True),
        (frozenset({cheater}), False),
    ):
        seats, public = fresh_table(5, cheaters={cheater: BadShuffleDeck})
        public.trusted = trusted
        commit_round(seats, public)
        for seat in seats[:cheater]:
            public.receive(seat.shuffle(public))
        bent = seats[cheater].shuffle(public)
        if refused:
            with pytest.raises(VerdictError) as caught:
                public.receive(bent)
            assert (caught.value.verdict.seat, caught.value.verdict.step) == (cheater, "shuffle")
            assert "repeats a point" in caught.value.verdict.reason
        else:
            public.receive(bent)
            assert public.current_points() == bent.points


def test_a_trusted_step_still_feeds_the_check_of_the_next_one() -> None:
    """The next, untrusted, step is checked against the trusted step's points."""
    seats, public = fresh_table(5, salt=3)
    public.trusted = frozenset({0, 2})
    lock_rounds(seats, public)
    assert public.phase.value == "deal"
    seats, public = fresh_table(5, salt=3, cheaters={1: BadShuffleDeck})
    public.trusted = frozenset({0})
    commit_round(seats, public)
    public.receive(seats[0].shuffle(public))
    with pytest.raises(VerdictError):
        public.receive(seats[1].shuffle(public))


def test_a_machine_hands_its_trust_to_its_deck() -> None:
    table, identities = sim_table(5, seed=2)
    machine = SeatMachine(table, 0, 0, 1, identities[1])
    machine.trusted_seats = frozenset({1})
    assert machine.public.deck.trusted == frozenset({1}) == machine.trusted_seats


def test_a_trusted_seats_card_is_opened_without_a_multiplication_and_only_its_own() -> None:
    """A card played by the daemon's own seat was opened with the key it holds: the deck
    learns the card without undoing the lock chain.  Another seat's card is still checked,
    and a trusted seat still cannot open a position dealt to someone else."""
    seats, public = dealt_table(5, salt=4)
    public.trusted = frozenset({2})
    (position, played), (_, other) = sorted(seats[2].hand(public).items())[:2]
    key = seats[2].secrets.lock_keys[position]
    MULTS.reset()
    public.receive(Open(2, (Opening(position, key, played.index),)))
    assert MULTS.value == 0
    elsewhere, card_ = min(seats[3].hand(public).items())
    with pytest.raises(VerdictError, match="not dealt to it"):
        public.receive(Open(2, (Opening(elsewhere, key, card_.index),)))
    public.receive(
        Open(3, (Opening(elsewhere, seats[3].secrets.lock_keys[elsewhere], card_.index),))
    )
    assert MULTS.value == 1
    seats, public = dealt_table(5, salt=4)  # the same bent opening, from a seat not trusted
    public.trusted = frozenset({3})
    with pytest.raises(VerdictError, match=f"claimed {other.code} at position {position}"):
        public.receive(Open(2, (Opening(position, key, other.index),)))
