"""Chaum–Pedersen proofs of equal discrete logs: sound, bound to their context, deterministic."""

import hashlib
from dataclasses import replace

import pytest

from protocol.group import CARD_POINTS, GENERATOR, GroupError, add, base_mul, mul, point_sum, scalar_from_digest
from protocol.proofs import (
    PROOF_BYTES,
    Binding,
    Proof,
    frame,
    prove,
    prove_batch,
    verify,
    verify_batch,
)

BINDING = Binding(b"table-1", 3, 2, "shuffle")
NONCE_KEY = b"n" * 32


def secret(label: str) -> bytes:
    return scalar_from_digest(hashlib.sha512(label.encode()).digest())


X = secret("x")
A = base_mul(X)
BASE = point_sum(CARD_POINTS[:10])
IMAGE = mul(X, BASE)


def test_an_honest_proof_verifies_and_is_deterministic() -> None:
    proof = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY)
    assert verify(BINDING, A, BASE, IMAGE, proof)
    assert prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY) == proof
    assert Proof.from_bytes(proof.to_bytes()) == proof and len(proof.to_bytes()) == PROOF_BYTES


def test_different_statements_use_different_nonces() -> None:
    other_base = point_sum(CARD_POINTS[10:20])
    p1 = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY)
    p2 = prove(BINDING, X, A, other_base, mul(X, other_base), NONCE_KEY)
    assert p1.challenge != p2.challenge and p1.response != p2.response


def test_a_proof_with_another_key_does_not_verify() -> None:
    y = secret("y")
    # image made with y, but the proof claims the committed x
    assert not verify(BINDING, A, BASE, mul(y, BASE), prove(BINDING, X, A, BASE, mul(y, BASE), NONCE_KEY))
    # a proof made with y does not verify against A = x·G
    assert not verify(BINDING, A, BASE, mul(y, BASE), prove(BINDING, y, A, BASE, mul(y, BASE), NONCE_KEY))


@pytest.mark.parametrize(
    "other",
    [
        replace(BINDING, table_id=b"table-2"),
        replace(BINDING, deal=4),
        replace(BINDING, seat=1),
        replace(BINDING, step="lock"),
    ],
)
def test_a_proof_is_bound_to_table_deal_seat_and_step(other: Binding) -> None:
    proof = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY)
    assert not verify(other, A, BASE, IMAGE, proof)


def test_a_tampered_proof_or_statement_does_not_verify() -> None:
    proof = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY)
    assert not verify(BINDING, A, BASE, add(IMAGE, GENERATOR), proof)
    assert not verify(BINDING, A, add(BASE, GENERATOR), IMAGE, proof)
    assert not verify(BINDING, base_mul(secret("z")), BASE, IMAGE, proof)
    assert not verify(BINDING, A, BASE, IMAGE, Proof(proof.challenge, secret("s")))
    assert not verify(BINDING, A, BASE, IMAGE, Proof(secret("c"), proof.response))


def test_a_degenerate_statement_fails_instead_of_raising() -> None:
    identity = bytes([1]) + bytes(31)
    proof = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY)
    assert not verify(BINDING, A, identity, IMAGE, proof)


def test_proof_bytes_are_validated() -> None:
    good = prove(BINDING, X, A, BASE, IMAGE, NONCE_KEY).to_bytes()
    with pytest.raises(GroupError):
        Proof.from_bytes(good[:32])
    with pytest.raises(GroupError, match="zero"):
        Proof.from_bytes(bytes(32) + good[32:])
    with pytest.raises(GroupError, match="canonical"):
        Proof.from_bytes(good[:32] + b"\xff" * 32)


def test_frame_is_injective_on_part_boundaries() -> None:
    assert frame(b"ab", b"c") != frame(b"a", b"bc")
    assert frame(b"", b"x") != frame(b"x")


BASES = list(CARD_POINTS[:12])
IMAGES = [mul(X, point) for point in BASES]


def test_a_batch_proof_verifies_every_pair() -> None:
    proof = prove_batch(BINDING, X, A, BASES, IMAGES, NONCE_KEY)
    assert verify_batch(BINDING, A, BASES, IMAGES, proof)
    assert not verify_batch(replace(BINDING, step="lock"), A, BASES, IMAGES, proof)
    assert not verify_batch(BINDING, A, BASES[:-1], IMAGES[:-1], proof)
    assert not verify_batch(BINDING, A, [], [], proof)


def test_a_batch_proof_catches_one_wrong_pair() -> None:
    images = list(IMAGES)
    images[5] = add(images[5], GENERATOR)
    assert not verify_batch(BINDING, A, BASES, images, prove_batch(BINDING, X, A, BASES, images, NONCE_KEY))


def test_compensated_errors_pass_a_proof_over_sums_but_not_the_weighted_batch() -> None:
    """Why the weights: +Δ on one pair and −Δ on another keeps the sums, not the weighted sums."""
    delta = base_mul(secret("delta"))
    minus_delta = mul((2**252 + 27742317777372353535851937790883648493 - 1).to_bytes(32, "little"), delta)
    images = list(IMAGES)
    images[2] = add(images[2], delta)
    images[7] = add(images[7], minus_delta)
    assert images != IMAGES and point_sum(images) == point_sum(IMAGES)
    sum_proof = prove(BINDING, X, A, point_sum(BASES), mul(X, point_sum(BASES)), NONCE_KEY)
    assert verify(BINDING, A, point_sum(BASES), point_sum(images), sum_proof)
    assert not verify_batch(BINDING, A, BASES, images, prove_batch(BINDING, X, A, BASES, images, NONCE_KEY))
