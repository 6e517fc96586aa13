"""Chaum–Pedersen proofs that two discrete logs are equal, made non-interactive (Fiat–Shamir).

A seat proves that the scalar behind its public key ``A = x·G`` is also the one that maps
``base`` to ``image = x·base`` — without revealing ``x``.  The deck uses it to show that a
shuffle or lock step used the blanket key the seat committed to (DESIGN §4).

Every challenge hashes a domain tag and a :class:`Binding` — table id, deal number, seat and
step name — with the whole statement, so that a proof made for one step of one deal cannot
be replayed anywhere else.  The nonce is not drawn at random but derived from a secret nonce
key and the statement (as in EdDSA): a deal replays byte for byte from its seeds, and two
different statements never share a nonce.

:func:`prove_batch` / :func:`verify_batch` prove many pairs ``(Xₖ, Yₖ = x·Xₖ)`` at once: the
pairs are combined with weights derived by hashing the whole statement, so the prover cannot
choose errors that cancel out (soundness 1/ℓ per attempt).  The verifier pays two scalar
multiplications per pair; a plain proof over the *sums* costs additions only but lets a
prover compensate one error with another — see ``deck.DeckSetup.weighted_lock``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

from protocol.group import (
    GENERATOR,
    SCALAR_BYTES,
    GroupError,
    Point,
    Scalar,
    add,
    base_mul,
    check_scalar,
    mul,
    point_sum,
    scalar_from_digest,
    scalar_mul,
    scalar_sub,
)

DLEQ_DOMAIN = b"tarot/v1/dleq"
NONCE_DOMAIN = b"tarot/v1/dleq-nonce"
WEIGHTS_DOMAIN = b"tarot/v1/dleq-weights"
PROOF_BYTES = 2 * SCALAR_BYTES


def frame(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: no two different lists of parts give the same bytes."""
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def hash_to_scalar(*parts: bytes) -> Scalar:
    return scalar_from_digest(hashlib.sha512(frame(*parts)).digest())


@dataclass(frozen=True)
class Binding:
    """Where a proof belongs: it verifies only for this table, deal, seat and step."""

    table_id: bytes
    deal: int
    seat: int
    step: str

    def encode(self) -> bytes:
        return frame(
            self.table_id,
            self.deal.to_bytes(8, "big"),
            self.seat.to_bytes(2, "big"),
            self.step.encode(),
        )


@dataclass(frozen=True)
class Proof:
    """``(c, s)`` with ``R₁ = s·G + c·A`` and ``R₂ = s·base + c·image`` hashing back to ``c``."""

    challenge: Scalar
    response: Scalar

    def to_bytes(self) -> bytes:
        return self.challenge + self.response

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        """Parse and validate; :class:`GroupError` if either half is not a valid scalar."""
        if len(data) != PROOF_BYTES:
            raise GroupError(f"a proof is {PROOF_BYTES} bytes, not {len(data)}")
        return cls(
            check_scalar(data[:SCALAR_BYTES], "proof challenge"),
            check_scalar(data[SCALAR_BYTES:], "proof response"),
        )


def _challenge(binding: Binding, public: Point, base: Point, image: Point, r1: Point, r2: Point) -> Scalar:
    return hash_to_scalar(DLEQ_DOMAIN, binding.encode(), GENERATOR, public, base, image, r1, r2)


def prove(binding: Binding, secret: Scalar, public: Point, base: Point, image: Point, nonce_key: bytes) -> Proof:
    """Prove ``log_G(public) == log_base(image)``; ``secret`` is that log, ``public = secret·G``."""
    nonce = hash_to_scalar(NONCE_DOMAIN, nonce_key, binding.encode(), public, base, image)
    r1 = base_mul(nonce)
    r2 = mul(nonce, base)
    challenge = _challenge(binding, public, base, image, r1, r2)
    return Proof(challenge, scalar_sub(nonce, scalar_mul(challenge, secret)))


def verify(binding: Binding, public: Point, base: Point, image: Point, proof: Proof) -> bool:
    """True if the proof holds.  Points must already be valid; a degenerate one fails."""
    try:
        r1 = add(base_mul(proof.response), mul(proof.challenge, public))
        r2 = add(mul(proof.response, base), mul(proof.challenge, image))
    except GroupError:  # e.g. a base that sums to the identity
        return False
    return _challenge(binding, public, base, image, r1, r2) == proof.challenge


def batch_weights(binding: Binding, public: Point, bases: Sequence[Point], images: Sequence[Point]) -> list[Scalar]:
    """One weight per pair, each depending on every point of the statement."""
    digest = hashlib.sha512(frame(WEIGHTS_DOMAIN, binding.encode(), public, *bases, *images)).digest()
    return [hash_to_scalar(digest, k.to_bytes(2, "big")) for k in range(len(bases))]


def _weighted_sum(weights: Sequence[Scalar], points: Sequence[Point]) -> Point:
    return point_sum([mul(w, p) for w, p in zip(weights, points)])


def prove_batch(
    binding: Binding,
    secret: Scalar,
    public: Point,
    bases: Sequence[Point],
    images: Sequence[Point],
    nonce_key: bytes,
) -> Proof:
    """Prove ``imagesₖ = secret·basesₖ`` for every k (the prover's side costs len+1 mults)."""
    weights = batch_weights(binding, public, bases, images)
    base = _weighted_sum(weights, bases)
    return prove(binding, secret, public, base, mul(secret, base), nonce_key)


def verify_batch(
    binding: Binding,
    public: Point,
    bases: Sequence[Point],
    images: Sequence[Point],
    proof: Proof,
) -> bool:
    if len(bases) != len(images) or not bases:
        return False
    weights = batch_weights(binding, public, bases, images)
    try:
        base, image = _weighted_sum(weights, bases), _weighted_sum(weights, images)
    except GroupError:
        return False
    return verify(binding, public, base, image, proof)
