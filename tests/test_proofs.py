"""The deck's two proofs, as someone trying to pass a wrong step through them would.

Each forgery below is the step a cheater would like to publish, with the best proof it can
make for it: the honest prover run on the forged statement (it knows every secret it used),
or the honest proof of the true statement sent beside the forged points.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from protocol.deck.group import (
    CARD_POINTS,
    GroupError,
    add,
    base_mul,
    invert,
    mul,
    mul_each,
    point_sum,
    scalar_from_digest,
    sub,
)
from protocol.deck.lock_proof import LockProof, LockStep, lock, verify_lock
from protocol.deck.proofs import Binding, ProofWireError
from protocol.deck.shuffle_proof import ShuffleProof, prove_shuffle, verify_shuffle

BINDING = Binding(b"table", 3, 1, "shuffle")
NONCE_KEY = b"n" * 32
SMALL_ORDER_POINT = bytes(32)  # the identity's neighbour encodings are refused by libsodium


def scalar(label: str) -> bytes:
    return scalar_from_digest(hashlib.sha512(label.encode()).digest())


A_KEY = scalar("a")
A_PUBLIC = base_mul(A_KEY)
ORDER_78 = tuple((37 * p + 11) % 78 for p in range(78))  # a fixed permutation
SHUFFLED = tuple(mul_each([A_KEY] * 78, [CARD_POINTS[j] for j in ORDER_78]))


def shuffle_proof(
    after: tuple[bytes, ...] = SHUFFLED, order: tuple[int, ...] = ORDER_78
) -> ShuffleProof:
    return prove_shuffle(BINDING, A_KEY, A_PUBLIC, CARD_POINTS, after, order, NONCE_KEY)


HONEST = shuffle_proof()


# --- the shuffle ------------------------------------------------------------------------


def test_an_honest_shuffle_verifies_and_its_proof_is_deterministic() -> None:
    assert verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, SHUFFLED, HONEST)
    assert shuffle_proof() == HONEST  # derived nonces: a deal replays byte for byte


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_shuffles_of_any_size_verify(size: int) -> None:
    before = CARD_POINTS[:size]
    order = tuple(reversed(range(size)))
    after = tuple(mul_each([A_KEY] * size, [before[j] for j in order]))
    proof = prove_shuffle(BINDING, A_KEY, A_PUBLIC, before, after, order, NONCE_KEY)
    assert verify_shuffle(BINDING, A_PUBLIC, before, after, proof)


def test_the_proof_holds_for_its_own_statement_only() -> None:
    swapped = (SHUFFLED[1], SHUFFLED[0], *SHUFFLED[2:])
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, swapped, HONEST)
    assert not verify_shuffle(replace(BINDING, deal=4), A_PUBLIC, CARD_POINTS, SHUFFLED, HONEST)
    assert not verify_shuffle(replace(BINDING, seat=2), A_PUBLIC, CARD_POINTS, SHUFFLED, HONEST)
    assert not verify_shuffle(BINDING, base_mul(scalar("other")), CARD_POINTS, SHUFFLED, HONEST)
    assert not verify_shuffle(
        BINDING, A_PUBLIC, (CARD_POINTS[1], CARD_POINTS[0], *CARD_POINTS[2:]), SHUFFLED, HONEST
    )


def test_a_tracer_is_refused_whatever_proof_comes_with_it() -> None:
    """``t·a·M`` in place of a card, the sum made right on another place: the first
    shuffler's tracer of DESIGN §4.  The prover runs on the traced deck with every secret."""
    marked = mul(scalar("t"), SHUFFLED[5])
    traced = list(SHUFFLED)
    traced[5] = marked
    traced[9] = sub(add(SHUFFLED[9], SHUFFLED[5]), marked)
    forged = tuple(traced)
    assert point_sum(forged) == point_sum(SHUFFLED)
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, forged, shuffle_proof(forged))
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, forged, HONEST)


def test_a_card_duplicated_or_keyed_apart_is_refused() -> None:
    duplicated = (SHUFFLED[0], *SHUFFLED[:-1])
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, duplicated, shuffle_proof(duplicated))
    other_key = (mul(scalar("b"), CARD_POINTS[ORDER_78[0]]), *SHUFFLED[1:])
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, other_key, shuffle_proof(other_key))


def test_a_proof_for_a_wrong_permutation_does_not_verify() -> None:
    """The points are right but the prover commits to another order: it cannot answer."""
    wrong_order = (ORDER_78[1], ORDER_78[0], *ORDER_78[2:])
    assert not verify_shuffle(
        BINDING, A_PUBLIC, CARD_POINTS, SHUFFLED, shuffle_proof(order=wrong_order)
    )


@pytest.mark.parametrize(
    "field",
    ["commitments", "chain", "challenge", "summary", "chain_responses", "opening_responses"],
)
def test_any_altered_part_of_the_proof_fails(field: str) -> None:
    value = getattr(HONEST, field)
    if isinstance(value, tuple):
        altered: object = (
            (value[1], value[0], *value[2:])
            if field != "summary"
            else (value[0], value[2], value[1], value[3])
        )
    else:
        altered = scalar("another challenge")
    assert not verify_shuffle(
        BINDING, A_PUBLIC, CARD_POINTS, SHUFFLED, replace(HONEST, **{field: altered})
    )


def test_invalid_points_make_the_proof_fail_rather_than_raise() -> None:
    assert not verify_shuffle(
        BINDING, A_PUBLIC, CARD_POINTS, (SMALL_ORDER_POINT, *SHUFFLED[1:]), HONEST
    )
    commitments = (SMALL_ORDER_POINT, *HONEST.commitments[1:])
    assert not verify_shuffle(
        BINDING, A_PUBLIC, CARD_POINTS, SHUFFLED, replace(HONEST, commitments=commitments)
    )
    assert not verify_shuffle(BINDING, A_PUBLIC, CARD_POINTS, SHUFFLED[:77], HONEST)


def test_the_wire_form_round_trips_and_refuses_bad_shapes() -> None:
    assert ShuffleProof.from_wire(HONEST.to_wire(), 78) == HONEST
    wire = HONEST.to_wire()
    with pytest.raises(ProofWireError, match="exactly"):
        ShuffleProof.from_wire({**wire, "extra": b""}, 78)
    with pytest.raises(ProofWireError, match="chain must be a list of 78"):
        chain = wire["chain"]
        assert isinstance(chain, list)
        ShuffleProof.from_wire({**wire, "chain": chain[:77]}, 78)
    with pytest.raises(GroupError, match="not canonical"):
        ShuffleProof.from_wire({**wire, "challenge": b"\xff" * 32}, 78)
    with pytest.raises(GroupError, match="zero"):
        ShuffleProof.from_wire({**wire, "summary": [bytes(32)] * 4}, 78)


# --- the lock ---------------------------------------------------------------------------

LOCK_BINDING = Binding(b"table", 3, 2, "lock")
KEYS = tuple(scalar(f"b{j}") for j in range(78))


def honest_lock(before: tuple[bytes, ...] = SHUFFLED, keys: tuple[bytes, ...] = KEYS) -> LockStep:
    return lock(LOCK_BINDING, A_KEY, invert(A_KEY), A_PUBLIC, before, keys, NONCE_KEY)


LOCKED = honest_lock()


def test_an_honest_lock_verifies_and_each_position_holds_its_key_times_the_card() -> None:
    assert verify_lock(LOCK_BINDING, A_PUBLIC, SHUFFLED, LOCKED)
    for p in (0, 40, 77):
        assert LOCKED.locked[p] == mul(KEYS[p], CARD_POINTS[ORDER_78[p]])
        assert LOCKED.commitments[p] == base_mul(KEYS[p])


def test_the_lock_proof_holds_for_its_own_statement_only() -> None:
    assert not verify_lock(replace(LOCK_BINDING, seat=1), A_PUBLIC, SHUFFLED, LOCKED)
    assert not verify_lock(LOCK_BINDING, base_mul(scalar("other")), SHUFFLED, LOCKED)
    assert not verify_lock(
        LOCK_BINDING, A_PUBLIC, (SHUFFLED[1], SHUFFLED[0], *SHUFFLED[2:]), LOCKED
    )
    swapped = (LOCKED.locked[1], LOCKED.locked[0], *LOCKED.locked[2:])
    assert not verify_lock(LOCK_BINDING, A_PUBLIC, SHUFFLED, replace(LOCKED, locked=swapped))


def _forged_lock(positions: dict[int, bytes]) -> LockStep:
    """The locked points with some replaced, and the best proof the locker can make: the
    honest one of the true step (it cannot prove a key it does not know)."""
    locked = list(LOCKED.locked)
    for p, point in positions.items():
        locked[p] = point
    return replace(LOCKED, locked=tuple(locked))


def test_the_lock_tracer_is_refused() -> None:
    """A multiple of another position's point put into one of the locker's own positions
    (the chien's, say): it would read that card from its own hand."""
    assert not verify_lock(
        LOCK_BINDING, A_PUBLIC, SHUFFLED, _forged_lock({3: mul(scalar("t"), LOCKED.locked[70])})
    )


def test_a_compensated_pair_of_positions_is_refused() -> None:
    """The first design proved the sum only: +Δ on one position and −Δ on another passed."""
    delta = base_mul(scalar("delta"))
    forged = _forged_lock({4: add(LOCKED.locked[4], delta), 5: sub(LOCKED.locked[5], delta)})
    assert point_sum(forged.locked) == point_sum(LOCKED.locked)
    assert not verify_lock(LOCK_BINDING, A_PUBLIC, SHUFFLED, forged)


def test_a_key_other_than_the_committed_one_is_refused() -> None:
    other = honest_lock(keys=(scalar("other key"), *KEYS[1:]))
    mixed = replace(other, commitments=LOCKED.commitments)
    assert not verify_lock(LOCK_BINDING, A_PUBLIC, SHUFFLED, mixed)


def test_the_lock_wire_form_round_trips_and_refuses_bad_shapes() -> None:
    proof = LOCKED.proof
    assert LockProof.from_wire(proof.to_wire(), 78) == proof
    with pytest.raises(ProofWireError, match="78 entries"):
        LockProof.from_wire({**proof.to_wire(), "key_responses": []}, 78)
    with pytest.raises(ProofWireError, match="exactly"):
        LockProof.from_wire({"challenge": proof.challenge}, 78)
    with pytest.raises(GroupError):
        LockProof.from_wire({**proof.to_wire(), "blanket_response": b"\xff" * 32}, 78)
