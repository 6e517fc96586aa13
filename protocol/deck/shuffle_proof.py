"""The proof of a shuffle step: its output is its input, permuted, times one committed scalar.

Statement: points ``X₀..Xₙ₋₁`` (the step's input), ``Y₀..Yₙ₋₁`` (its output) and ``A = a·G``.
Claim: there is a permutation ψ with ``Yₚ = a·X_ψ(p)`` for every output place *p*.  The
prover knows ``a`` and ψ and shows nothing else: not ψ, not ``a``, not which output came from
which input.  So a marked card (``t·a·M`` in place of another card: the tracer of DESIGN §4)
or any point that is not a re-keyed input is refused at the step that carries it.

This is the proof of a shuffle of Terelius and Wikström (*Proofs of restricted shuffles*,
AFRICACRYPT 2010), in the form of Haenni, Locher, Koenig and Dubuis (*Pseudo-code algorithms
for verifiable re-encryption mix-nets*, 2017), with the re-encryption replaced by our single
secret exponent.  Independent generators ``H₀..Hₙ`` come from a hash to the curve
(:func:`~protocol.deck.group.hash_to_point`): there is no trusted setup.

1. **Commit to ψ.**  For each input *j*, ``Cⱼ = rⱼ·G + H₁₊ψ⁻¹(j)``: a Pedersen commitment to
   the column *j* of the permutation matrix, perfectly hiding.
2. **Challenges** ``uⱼ`` = hashes of the statement and the ``C``.  The output-ordered
   ``u'ₚ = u_ψ(p)`` is the matrix applied to ``u``: ``Σⱼ uⱼ·Cⱼ`` commits to ``u'`` under the
   ``Hₚ``.
3. **The matrix is a permutation** iff its rows sum to one — ``ΣCⱼ − ΣHₚ`` is a multiple of
   ``G`` the prover knows — and ``Πₚ u'ₚ = Πⱼ uⱼ``, shown by a chain of commitments
   ``ĉₚ = r̂ₚ·G + u'ₚ·ĉₚ₋₁`` from ``ĉ₋₁ = H₀``, which ends at ``(Πu')·H₀`` plus a known
   multiple of ``G``.
4. **The points** follow: ``Σₚ u'ₚ·Yₚ = a·Σⱼ uⱼ·Xⱼ`` with ``A = a·G``.  For random ``u``
   that holds only if every ``Yₚ`` is ``a`` times its input.

Steps 2–4 are one sigma protocol with a single Fiat–Shamir challenge ``c``; the proof is the
commitments ``C`` and ``ĉ``, ``c`` and the responses.  Cost for n = 78, in scalar
multiplications by a point other than ``G`` (``·G`` costs about a fifth): the prover 4n
beside the shuffle's own n, the verifier 6n, all independent of one another and so spread
over the cores.  The prover computes the chain in closed form (``ĉₚ = xₚ·G + yₚ·H₀``), so that
no multiplication waits for the one before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from math import prod

from protocol.deck.group import (
    ORDER,
    POINT_BYTES,
    SCALAR_BYTES,
    GroupError,
    Point,
    Scalar,
    add,
    base_mul_each,
    check_scalar,
    from_int,
    hash_to_point,
    mul,
    mul_each,
    point_sum,
    sub,
    to_int,
)
from protocol.deck.proofs import (
    Binding,
    Nonces,
    ProofWire,
    canonical,
    challenges,
    follow_up,
    hash_to_int,
    response,
    shaped,
    statement_digest,
)

DOMAIN = b"tarot/v3/shuffle-proof"
GENERATOR_DOMAIN = b"tarot/v3/shuffle-generator"
#: The responses other than the per-place ones: s₁ (rows), s₂ (chain end), s₃ (opening), s₄ (a).
SUMMARY_RESPONSES = 4


@cache
def generators(size: int) -> tuple[Point, ...]:
    """``H₀..H_size``: the chain's base ``H₀`` and one generator per output place."""
    return tuple(hash_to_point(GENERATOR_DOMAIN, k) for k in range(size + 1))


@cache
def _generators_sum(size: int) -> Point:
    return point_sum(generators(size)[1:])


@dataclass(frozen=True)
class ShuffleProof:
    commitments: tuple[Point, ...]  #: Cⱼ, one per input
    chain: tuple[Point, ...]  #: ĉₚ, one per output
    challenge: Scalar  #: c
    summary: tuple[Scalar, ...]  #: s₁..s₄
    chain_responses: tuple[Scalar, ...]  #: ŝₚ
    opening_responses: tuple[Scalar, ...]  #: s'ₚ

    def to_wire(self) -> dict[str, object]:
        return {
            "commitments": list(self.commitments),
            "chain": list(self.chain),
            "challenge": self.challenge,
            "summary": list(self.summary),
            "chain_responses": list(self.chain_responses),
            "opening_responses": list(self.opening_responses),
        }

    @classmethod
    def from_wire(cls, obj: object, size: int) -> ShuffleProof:
        """Parse a proof for ``size`` places: :class:`~protocol.deck.proofs.ProofWireError` for a
        wrong shape, :class:`~protocol.deck.group.GroupError` for a scalar that is not canonical.
        Points are checked by the verification itself: every one of them is multiplied, and
        libsodium refuses an invalid point there."""
        fields = _WIRE.read(obj)
        return cls(
            _WIRE.byte_list(fields["commitments"], "commitments", POINT_BYTES, size),
            _WIRE.byte_list(fields["chain"], "chain", POINT_BYTES, size),
            check_scalar(fields["challenge"], "challenge"),
            _WIRE.scalars(fields["summary"], "summary", SUMMARY_RESPONSES),
            _WIRE.scalars(fields["chain_responses"], "chain_responses", size),
            _WIRE.scalars(fields["opening_responses"], "opening_responses", size),
        )


_WIRE = ProofWire(
    "shuffle proof",
    ("commitments", "chain", "challenge", "summary", "chain_responses", "opening_responses"),
)


def _input_challenges(digest: bytes, commitments: Sequence[Point]) -> list[int]:
    return challenges(follow_up(digest, *commitments), b"u", len(commitments))


def _final_challenge(
    digest: bytes,
    commitments: Sequence[Point],
    chain: Sequence[Point],
    summary: Sequence[Point],
    links: Sequence[Point],
) -> int:
    return hash_to_int(DOMAIN, digest, *commitments, *chain, *summary, *links)


def _digest(
    binding: Binding, blanket_public: Point, before: Sequence[Point], after: Sequence[Point]
) -> bytes:
    return statement_digest(DOMAIN, binding, blanket_public, tuple(before), tuple(after))


def prove_shuffle(
    binding: Binding,
    blanket: Scalar,
    blanket_public: Point,
    before: Sequence[Point],
    after: Sequence[Point],
    order: Sequence[int],
    nonce_key: bytes,
) -> ShuffleProof:
    """Prove ``after[p] == blanket · before[order[p]]`` for every place ``p``, where
    ``blanket_public == blanket · G``.  ``after`` is the shuffle already computed."""
    n = len(before)
    h = generators(n)
    digest = _digest(binding, blanket_public, before, after)
    nonces = Nonces(nonce_key, digest)
    where = [0] * n  # where[j]: the output place of input j
    for p, j in enumerate(order):
        where[j] = p
    r = nonces.take(b"r", n)
    commitments = [
        add(point, h[1 + where[j]])
        for j, point in enumerate(base_mul_each([from_int(x) for x in r]))
    ]
    u = _input_challenges(digest, commitments)
    u_out = [u[j] for j in order]

    # The chain in closed form: ĉₚ = xₚ·G + yₚ·H₀ with x₋₁ = 0, y₋₁ = 1.
    r_hat = nonces.take(b"r-hat", n)
    x, y = [0] * n, [0] * n
    previous_x, previous_y = 0, 1
    for p in range(n):
        previous_x = x[p] = (r_hat[p] + u_out[p] * previous_x) % ORDER
        previous_y = y[p] = u_out[p] * previous_y % ORDER
    a = to_int(blanket)
    w1, w2, w3, w4 = nonces.take(b"w", SUMMARY_RESPONSES)
    w_hat = nonces.take(b"w-hat", n)
    w_open = nonces.take(b"w-open", n)
    x_before, y_before = [0, *x[:-1]], [1, *y[:-1]]  # ĉₚ₋₁'s coefficients

    fixed = base_mul_each(
        [from_int(v) for v in (*x, w1, w2, w3, w4)]
        + [from_int(w_hat[p] + w_open[p] * x_before[p]) for p in range(n)]
    )
    chain_g, (t1, t2, t3_g, t5), links_g = fixed[:n], fixed[n : n + 4], fixed[n + 4 :]
    varied = mul_each(
        [from_int(v) for v in y]
        + [from_int(v) for v in w_open]
        + [from_int(a * w_open[where[j]] - w4 * u[j]) for j in range(n)]
        + [from_int(w_open[p] * y_before[p]) for p in range(n)],
        [h[0]] * n + list(h[1:]) + list(before) + [h[0]] * n,
    )
    chain = [add(g, hh) for g, hh in zip(chain_g, varied[:n])]
    t3 = add(t3_g, point_sum(varied[n : 2 * n]))
    t4 = point_sum(varied[2 * n : 3 * n])
    links = [add(g, hh) for g, hh in zip(links_g, varied[3 * n :])]
    c = _final_challenge(digest, commitments, chain, (t1, t2, t3, t4, t5), links)

    summary = (
        response(w1, c, sum(r)),
        response(w2, c, x[-1]),
        response(w3, c, sum(rj * uj for rj, uj in zip(r, u))),
        response(w4, c, a),
    )
    return ShuffleProof(
        tuple(commitments),
        tuple(chain),
        from_int(c),
        tuple(from_int(s) for s in summary),
        tuple(from_int(response(w_hat[p], c, r_hat[p])) for p in range(n)),
        tuple(from_int(response(w_open[p], c, u_out[p])) for p in range(n)),
    )


def verify_shuffle(
    binding: Binding,
    blanket_public: Point,
    before: Sequence[Point],
    after: Sequence[Point],
    proof: ShuffleProof,
) -> bool:
    """True if ``proof`` shows that ``after`` is ``before`` permuted and multiplied by the
    scalar behind ``blanket_public``.  Any invalid point in ``after`` or in the proof makes
    it false (libsodium refuses to multiply it), and so does any list of the wrong length or
    any entry of the wrong type: false, never an exception nor a list cut short by ``zip``."""
    n = len(before)
    lists = (
        (before, POINT_BYTES, n),
        (after, POINT_BYTES, n),
        (proof.commitments, POINT_BYTES, n),
        (proof.chain, POINT_BYTES, n),
        ((blanket_public,), POINT_BYTES, 1),
        ((proof.challenge,), SCALAR_BYTES, 1),
        (proof.summary, SCALAR_BYTES, SUMMARY_RESPONSES),
        (proof.chain_responses, SCALAR_BYTES, n),
        (proof.opening_responses, SCALAR_BYTES, n),
    )
    if n == 0 or not all(shaped(items, count, length) for items, length, count in lists):
        return False
    scalars = (proof.challenge, *proof.summary, *proof.chain_responses, *proof.opening_responses)
    if not canonical(scalars):
        return False
    try:
        return _holds(binding, blanket_public, before, after, proof)
    except GroupError:
        return False


def _holds(
    binding: Binding,
    blanket_public: Point,
    before: Sequence[Point],
    after: Sequence[Point],
    proof: ShuffleProof,
) -> bool:
    n = len(before)
    h = generators(n)
    digest = _digest(binding, blanket_public, before, after)
    u = _input_challenges(digest, proof.commitments)
    c = proof.challenge
    s1, s2, s3, s4 = proof.summary
    chain_before = (h[0], *proof.chain[:-1])
    varied = mul_each(
        [from_int(v) for v in u] * 2 + list(proof.opening_responses) * 3 + [c] * n,
        [*before, *proof.commitments, *h[1:], *after, *chain_before, *proof.chain],
    )
    weighted_inputs, weighted_commitments, opened, outputs, linked, scaled_chain = (
        varied[k * n : (k + 1) * n] for k in range(6)
    )
    x_bar = point_sum(weighted_inputs)
    opening = point_sum(weighted_commitments)
    rows = sub(point_sum(proof.commitments), _generators_sum(n))
    chain_end = sub(proof.chain[-1], mul(from_int(prod(u) % ORDER), h[0]))
    fixed = base_mul_each([s1, s2, s3, s4, *proof.chain_responses])
    t1 = sub(fixed[0], mul(c, rows))
    t2 = sub(fixed[1], mul(c, chain_end))
    t3 = sub(add(fixed[2], point_sum(opened)), mul(c, opening))
    t4 = sub(point_sum(outputs), mul(s4, x_bar))
    t5 = sub(fixed[3], mul(c, blanket_public))
    links = [sub(add(g, link), scaled) for g, link, scaled in zip(fixed[4:], linked, scaled_chain)]
    return _final_challenge(
        digest, proof.commitments, proof.chain, (t1, t2, t3, t4, t5), links
    ) == to_int(c)
