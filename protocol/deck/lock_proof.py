"""The lock step and its proof: every position re-keyed by its committed key, none left out.

Seat *i* replaces its blanket key ``a`` by one key ``bⱼ`` per position *j*.  From the previous
step's points ``Eⱼ'`` (``E₋₁ = Dₙ₋₁``, the shuffled deck) it publishes

* ``Bⱼ = bⱼ·G``, a commitment to each position's key, against which every key it later
  publishes (to deal a card, turn the chien, play) is checked with one fixed-base
  multiplication;
* ``Eⱼ = (bⱼ·a⁻¹)·Eⱼ'``: the key applied and the blanket removed **in one multiplication**,
  so that no published point ever lacks this seat's secret — the point ``a⁻¹·Eⱼ'`` of the first
  design, which carried the others' keys only, is never computed, let alone sent (the secrecy
  rule of DESIGN §4);
* a proof that for every position ``a·Eⱼ = bⱼ·Eⱼ'`` with ``A = a·G`` and ``Bⱼ = bⱼ·G``.

The proof is one sigma protocol for all positions, with one challenge: nonces ``α`` (for
``a``) and ``βⱼ``; commitments ``Tⱼ = α·Eⱼ − βⱼ·Eⱼ'``, ``Uⱼ = βⱼ·G``, ``V = α·G``; challenge
``c`` = hash of the statement and of them; responses ``s_a = α + c·a``, ``sⱼ = βⱼ + c·bⱼ``.
The verifier recomputes ``Tⱼ = s_a·Eⱼ − sⱼ·Eⱼ'``, ``Uⱼ = sⱼ·G − c·Bⱼ``, ``V = s_a·G − c·A`` and
checks the hash.  Two accepting answers to two challenges give ``a`` and every ``bⱼ`` with
``a·Eⱼ = bⱼ·Eⱼ'``: each position is bound on its own, never through a sum, so a locker cannot
put into one position a multiple of another's point (the lock tracer) and compensate.

Cost for n positions, in multiplications by a point other than ``G``: the prover 2n (each
``Tⱼ`` is ``(α·bⱼ·a⁻¹ − βⱼ)·Eⱼ'``), the verifier 3n; plus 2n and n by ``G``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol.deck.group import (
    ORDER,
    POINT_BYTES,
    SCALAR_BYTES,
    GroupError,
    Point,
    Scalar,
    base_mul_each,
    check_scalar,
    from_int,
    mul_each,
    sub,
    to_int,
)
from protocol.deck.proofs import (
    Binding,
    Nonces,
    ProofWire,
    canonical,
    hash_to_int,
    response,
    shaped,
    statement_digest,
)

DOMAIN = b"tarot/v3/lock-proof"


@dataclass(frozen=True)
class LockProof:
    challenge: Scalar  #: c
    blanket_response: Scalar  #: s_a
    key_responses: tuple[Scalar, ...]  #: sⱼ

    def to_wire(self) -> dict[str, object]:
        return {
            "challenge": self.challenge,
            "blanket_response": self.blanket_response,
            "key_responses": list(self.key_responses),
        }

    @classmethod
    def from_wire(cls, obj: object, size: int) -> LockProof:
        """Parse a proof for ``size`` positions: :class:`~protocol.deck.proofs.ProofWireError` for a
        wrong shape, :class:`~protocol.deck.group.GroupError` for a scalar that is not canonical."""
        fields = _WIRE.read(obj)
        return cls(
            check_scalar(fields["challenge"], "challenge"),
            check_scalar(fields["blanket_response"], "blanket_response"),
            _WIRE.scalars(fields["key_responses"], "key_responses", size),
        )


_WIRE = ProofWire("lock proof", ("challenge", "blanket_response", "key_responses"))


@dataclass(frozen=True)
class LockStep:
    """What a seat publishes for its lock: the key commitments, the locked points, the proof."""

    commitments: tuple[Point, ...]  #: Bⱼ
    locked: tuple[Point, ...]  #: Eⱼ
    proof: LockProof


def _digest(
    binding: Binding,
    blanket_public: Point,
    before: Sequence[Point],
    commitments: Sequence[Point],
    locked: Sequence[Point],
) -> bytes:
    return statement_digest(
        DOMAIN, binding, blanket_public, tuple(before), tuple(commitments), tuple(locked)
    )


def _challenge(
    digest: bytes,
    links: Sequence[Point],
    key_commitments: Sequence[Point],
    blanket_commitment: Point,
) -> int:
    return hash_to_int(DOMAIN, digest, *links, *key_commitments, blanket_commitment)


def lock(
    binding: Binding,
    blanket: Scalar,
    blanket_inverse: Scalar,
    blanket_public: Point,
    before: Sequence[Point],
    keys: Sequence[Scalar],
    nonce_key: bytes,
) -> LockStep:
    """Seat's lock step on ``before`` with per-position ``keys``, and its proof."""
    inverse = to_int(blanket_inverse)
    rekey = [to_int(b) * inverse % ORDER for b in keys]  # bⱼ·a⁻¹
    locked = mul_each([from_int(k) for k in rekey], before)
    commitments = base_mul_each(list(keys))
    digest = _digest(binding, blanket_public, before, commitments, locked)
    alpha, beta = _nonces(nonce_key, digest, len(before))
    # Tⱼ = α·Eⱼ − βⱼ·E'ⱼ in one multiplication, Eⱼ being (bⱼ·a⁻¹)·E'ⱼ.
    links = mul_each([from_int(alpha * k - b) for k, b in zip(rekey, beta)], before)
    return LockStep(
        tuple(commitments), tuple(locked), _answer(digest, alpha, beta, links, blanket, keys)
    )


def prove_lock(
    binding: Binding,
    blanket: Scalar,
    blanket_public: Point,
    before: Sequence[Point],
    commitments: Sequence[Point],
    locked: Sequence[Point],
    keys: Sequence[Scalar],
    nonce_key: bytes,
) -> LockProof:
    """The proof :func:`lock` would give, for any claimed step — the best a locker that bent
    some positions can send (the cheat lab's): it verifies only if every position is its key
    times its input, unblanketed.  Twice the prover's multiplications of :func:`lock`."""
    n = len(before)
    digest = _digest(binding, blanket_public, before, commitments, locked)
    alpha, beta = _nonces(nonce_key, digest, n)
    products = mul_each([from_int(alpha)] * n + [from_int(b) for b in beta], [*locked, *before])
    links = [sub(mine, theirs) for mine, theirs in zip(products[:n], products[n:])]
    return _answer(digest, alpha, beta, links, blanket, keys)


def _nonces(nonce_key: bytes, digest: bytes, size: int) -> tuple[int, list[int]]:
    nonces = Nonces(nonce_key, digest)
    return nonces.one(b"alpha"), nonces.take(b"beta", size)


def _answer(
    digest: bytes,
    alpha: int,
    beta: Sequence[int],
    links: Sequence[Point],
    blanket: Scalar,
    keys: Sequence[Scalar],
) -> LockProof:
    """The challenge and the responses, from the nonces and the ``Tⱼ``."""
    n = len(beta)
    fixed = base_mul_each([from_int(v) for v in (*beta, alpha)])
    c = _challenge(digest, links, fixed[:n], fixed[n])
    return LockProof(
        from_int(c),
        from_int(response(alpha, c, to_int(blanket))),
        tuple(from_int(response(b, c, to_int(key))) for b, key in zip(beta, keys)),
    )


def verify_lock(
    binding: Binding, blanket_public: Point, before: Sequence[Point], step: LockStep
) -> bool:
    """True if every locked point is its input times ``bⱼ·a⁻¹`` for the committed keys and
    the blanket key behind ``blanket_public``.  Any invalid point makes it false, and so does
    any list of the wrong length or entry of the wrong type (never an exception)."""
    n = len(before)
    proof = step.proof
    lists = (
        (before, POINT_BYTES, n),
        (step.commitments, POINT_BYTES, n),
        (step.locked, POINT_BYTES, n),
        ((blanket_public,), POINT_BYTES, 1),
        ((proof.challenge, proof.blanket_response), SCALAR_BYTES, 2),
        (proof.key_responses, SCALAR_BYTES, n),
    )
    if not n or not all(shaped(items, count, length) for items, length, count in lists):
        return False
    if not canonical((proof.challenge, proof.blanket_response, *proof.key_responses)):
        return False
    try:
        return _holds(binding, blanket_public, before, step)
    except GroupError:
        return False


def _holds(
    binding: Binding, blanket_public: Point, before: Sequence[Point], step: LockStep
) -> bool:
    n = len(before)
    proof = step.proof
    c, s_a, s = proof.challenge, proof.blanket_response, proof.key_responses
    varied = mul_each(
        [s_a] * n + list(s) + [c] * (n + 1),
        [*step.locked, *before, *step.commitments, blanket_public],
    )
    fixed = base_mul_each([*s, s_a])
    links = [sub(locked, keyed) for locked, keyed in zip(varied[:n], varied[n : 2 * n])]
    key_commitments = [sub(g, scaled) for g, scaled in zip(fixed[:n], varied[2 * n : 3 * n])]
    blanket_commitment = sub(fixed[n], varied[3 * n])
    digest = _digest(binding, blanket_public, before, step.commitments, step.locked)
    return _challenge(digest, links, key_commitments, blanket_commitment) == to_int(c)
