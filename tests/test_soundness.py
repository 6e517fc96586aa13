"""Every equation of the deck's two proofs, and their Fiat–Shamir binding, guarded by a prover
that cheats exactly there — and each test shown to have teeth.

A *generic cheating prover* of the shuffle commits to any matrix ``M`` (``Cⱼ = rⱼ·G +
Σₚ Mₚⱼ·H₁₊ₚ``), opens any vector ``u'`` (``M·u`` when it answers honestly), builds the chain on
it and answers every equation from what it knows: ``w + c·(what it knows)`` for the responses
and ``w·G`` (or the honest combination) for the commitments.  Where its statement is true that
is the honest prover, and it convinces; where exactly one equation is false, the verifier must
refuse it — and a verifier with that one equation left out (its commitment no longer in the
final hash: ``_final_challenge`` patched, as ``scripts/mutants`` does in the source) must
accept it, or the test could not fail.  The lock proof's three equations likewise.

The *weak-Fiat–Shamir* provers choose the step's outputs after the challenge: refused, since
the outputs are hashed into it; accepted by a verifier whose digest leaves them out.

Then the lists of a proof one short and one long, through the Python API (the wire parser
fixes the lengths on the wire, but a verifier is a function of its own): false, never an
exception and never a list cut short by ``zip``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from math import prod

import pytest
from deck_tables import fresh_table, lock_rounds
from hypothesis import assume, given
from hypothesis import strategies as st

from protocol.deck import lock_proof, shuffle_proof
from protocol.deck.group import (
    CARD_POINTS,
    ORDER,
    Point,
    add,
    base_mul,
    from_int,
    mul,
    point_sum,
    sub,
    to_int,
)
from protocol.deck.lock_proof import LockProof, LockStep, lock, verify_lock
from protocol.deck.payloads import DeckPayload
from protocol.deck.proofs import Binding, response
from protocol.deck.public_deck import PublicDeck
from protocol.deck.shuffle_proof import ShuffleProof, generators, prove_shuffle, verify_shuffle
from protocol.replication.verdict import Verdict, VerdictError

SIZE = 8  #: places of the small decks the cheaters work on: the algebra is that of 78
BINDING = Binding(b"soundness", 7, 2, "shuffle")
LOCK_BINDING = Binding(b"soundness", 7, 2, "lock")
NONCE_KEY = b"k" * 32
BEFORE = CARD_POINTS[:SIZE]
ORDER_OF_PLACES = (3, 0, 6, 1, 7, 2, 5, 4)  #: output p takes input ORDER_OF_PLACES[p]
BLANKET = 0x1234567890ABCDEF1234567890ABCDEF % ORDER
BLANKET_PUBLIC = base_mul(from_int(BLANKET))

Matrix = dict[int, dict[int, int]]  #: row p → column j → coefficient (mod ORDER), sparse


def inverse(value: int) -> int:
    return pow(value, -1, ORDER)


def permutation(order: Sequence[int] = ORDER_OF_PLACES) -> Matrix:
    return {p: {j: 1} for p, j in enumerate(order)}


def combine(coefficients: dict[int, int], points: Sequence[Point]) -> Point:
    """``Σ coefficient·point`` over the non-zero coefficients."""
    return point_sum([mul(from_int(k), points[j]) for j, k in coefficients.items() if k % ORDER])


def apply(matrix: Matrix, u: Sequence[int]) -> list[int]:
    return [sum(k * u[j] for j, k in matrix[p].items()) % ORDER for p in range(len(u))]


def keyed(matrix: Matrix, exponent: int) -> list[Point]:
    """The outputs that make the points equation hold for ``matrix``, when ``matrix`` is a
    permutation with some rows scaled: ``Yₚ = exponent · (Mₚ,ψ(p))⁻¹ · X_ψ(p)``."""
    outputs = []
    for p in range(SIZE):
        ((j, k),) = matrix[p].items()
        outputs.append(mul(from_int(exponent * inverse(k)), BEFORE[j]))
    return outputs


@dataclass(frozen=True)
class Cheat:
    """What a cheating shuffler publishes and what it knows (the class docstring above)."""

    outputs: Sequence[Point]
    committed: Matrix
    opened: Matrix | None = None  #: u' = opened·u; ``committed`` when None
    exponent: int = BLANKET  #: the ``a`` it answers the points and blanket equations with
    chain_ends_at_the_product: bool = False  #: the chain's last link made to end at Πu·H₀
    choose_outputs: Callable[[list[int], list[int]], list[Point]] | None = None
    """Weak Fiat–Shamir: new outputs from ``u`` and ``u'``, once the challenges are known."""
    short_chain: bool = False  #: the last link left out of the hash and its response unsent


def cheat_shuffle(cheat: Cheat, seed: int = 1) -> tuple[list[Point], ShuffleProof]:
    """The outputs and the proof the generic cheating prover publishes for ``cheat``."""
    draw = random.Random(seed)

    def nonce() -> int:
        return draw.randrange(1, ORDER)

    n, h = SIZE, generators(SIZE)
    outputs = list(cheat.outputs)
    digest = shuffle_proof._digest(BINDING, BLANKET_PUBLIC, BEFORE, outputs)
    r = [nonce() for _ in range(n)]
    commitments = [
        add(base_mul(from_int(r[j])), combine(column, h[1:]))
        if (column := {p: row[j] for p, row in cheat.committed.items() if j in row})
        else base_mul(from_int(r[j]))
        for j in range(n)
    ]
    u = shuffle_proof._input_challenges(digest, commitments)
    u_out = apply(cheat.committed if cheat.opened is None else cheat.opened, u)
    if cheat.choose_outputs is not None:
        outputs = cheat.choose_outputs(u, u_out)  # after the challenges: weak Fiat–Shamir
    r_hat = [nonce() for _ in range(n)]
    x, y = [0] * n, [0] * n
    previous_x, previous_y = 0, 1
    for p in range(n):
        previous_x = x[p] = (r_hat[p] + u_out[p] * previous_x) % ORDER
        previous_y = y[p] = u_out[p] * previous_y % ORDER
    if cheat.chain_ends_at_the_product:
        y[-1] = prod(u) % ORDER
    chain = [add(base_mul(from_int(x[p])), mul(from_int(y[p]), h[0])) for p in range(n)]
    w1, w2, w3, w4 = (nonce() for _ in range(4))
    w_hat, w_open = [nonce() for _ in range(n)], [nonce() for _ in range(n)]
    x_bar = combine(dict(enumerate(u)), BEFORE)
    t1, t2, t5 = (base_mul(from_int(w)) for w in (w1, w2, w4))
    t3 = add(base_mul(from_int(w3)), combine(dict(enumerate(w_open)), h[1:]))
    t4 = sub(combine(dict(enumerate(w_open)), outputs), mul(from_int(w4), x_bar))
    links = [
        add(base_mul(from_int(w_hat[p])), mul(from_int(w_open[p]), link))
        for p, link in enumerate([h[0], *chain[:-1]])
    ]
    if cheat.short_chain:
        links = links[:-1]
    c = shuffle_proof._final_challenge(digest, commitments, chain, (t1, t2, t3, t4, t5), links)
    summary = (
        response(w1, c, sum(r)),
        response(w2, c, x[-1]),
        response(w3, c, sum(rj * uj for rj, uj in zip(r, u))),
        response(w4, c, cheat.exponent),
    )
    return outputs, ShuffleProof(
        tuple(commitments),
        tuple(chain),
        from_int(c),
        tuple(from_int(s) for s in summary),
        tuple(from_int(response(w_hat[p], c, r_hat[p])) for p in range(len(links))),
        tuple(from_int(response(w_open[p], c, u_out[p])) for p in range(n)),
    )


def convinces(cheat: Cheat) -> bool:
    outputs, proof = cheat_shuffle(cheat)
    return verify_shuffle(BINDING, BLANKET_PUBLIC, BEFORE, outputs, proof)


#: The final hash's shuffle commitments, in ``_final_challenge``'s order: t₁..t₅.
SUMMARY = ("rows", "chain end", "opening", "points", "blanket")


@contextmanager
def shuffle_without(equation: str) -> Iterator[None]:
    """The verifier (and every prover) with ``equation`` left out of the final hash — its
    commitment no longer checked — for as long as the block runs."""
    real = shuffle_proof._final_challenge

    def without(
        digest: bytes,
        commitments: Sequence[Point],
        chain: Sequence[Point],
        summary: Sequence[Point],
        links: Sequence[Point],
    ) -> int:
        if equation == "links":
            return real(digest, commitments, chain, summary, ())
        k = SUMMARY.index(equation)
        return real(digest, commitments, chain, [*summary[:k], *summary[k + 1 :]], links)

    shuffle_proof._final_challenge = without  # type: ignore[assignment]  # a patch of the module
    try:
        yield
    finally:
        shuffle_proof._final_challenge = real


# --- the cheating shuffler ---------------------------------------------------------------------


def _scaled(factors: dict[int, int]) -> Matrix:
    """The permutation with row p scaled by ``factors[p]``."""
    return {p: {j: k * factors.get(p, 1) % ORDER for j, k in row.items()} for p, row in
            permutation().items()}  # fmt: skip


T = 0xC0FFEE  #: a tracer's factor
TRACERS = _scaled({1: T, 5: inverse(T)})  #: two compensating tracers (rows 1 and 5)


def _marked_plus_garbage() -> tuple[Matrix, list[Point]]:
    """Rows that each sum to one but not a permutation: row 2 is ``(1+δ)·e_ψ(2) − δ·e_ψ(6)``.
    The points equation then holds for ``Y₂ = a/(1+δ)·X_ψ(2)`` — a marked card — and
    ``Y₆ = a·X_ψ(6) + δ·Y₂``, a garbage point."""
    delta = 0xBAD
    matrix = permutation()
    matrix[2] = {ORDER_OF_PLACES[2]: 1 + delta, ORDER_OF_PLACES[6]: -delta % ORDER}
    outputs = keyed(permutation(), BLANKET)
    outputs[2] = mul(from_int(BLANKET * inverse(1 + delta)), BEFORE[ORDER_OF_PLACES[2]])
    outputs[6] = add(outputs[6], mul(from_int(delta), outputs[2]))
    return matrix, outputs


MARKED, MARKED_OUTPUTS = _marked_plus_garbage()
_ONE_MARKED = keyed(permutation(), BLANKET)
_ONE_MARKED[4] = mul(from_int(T), _ONE_MARKED[4])
OTHER_BLANKET = 0x5EED % ORDER

#: Each equation → a cheat whose statement is false there and only there.
CHEATS: dict[str, Cheat] = {
    # two compensating tracers: each row of ΛP sums to its λ
    "rows": Cheat(keyed(TRACERS, BLANKET), TRACERS),
    # a marked card and a garbage point: Π(M·u) ≠ Πu
    "chain end": Cheat(MARKED_OUTPUTS, MARKED),
    # commits to the permutation, opens the tracers' vector
    "opening": Cheat(keyed(TRACERS, BLANKET), permutation(), opened=TRACERS),
    # one marked card, the proof of the honest permutation
    "points": Cheat(_ONE_MARKED, permutation()),
    # the cards re-keyed by a key other than the committed one
    "blanket": Cheat(keyed(permutation(), OTHER_BLANKET), permutation(), exponent=OTHER_BLANKET),
    # the marked card and garbage point again, the chain's last link bent to end at Πu
    "links": Cheat(MARKED_OUTPUTS, MARKED, chain_ends_at_the_product=True),
}


def test_the_cheating_prover_is_a_prover_it_convinces_when_its_statement_is_true() -> None:
    """Without this the refusals below could come from a broken cheater, not the verifier."""
    honest = Cheat(keyed(permutation(), BLANKET), permutation())
    assert convinces(honest)
    outputs = keyed(permutation(), BLANKET)
    real = prove_shuffle(
        BINDING, from_int(BLANKET), BLANKET_PUBLIC, BEFORE, outputs, ORDER_OF_PLACES, NONCE_KEY
    )
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, BEFORE, outputs, real)


@pytest.mark.parametrize("equation", list(CHEATS))
def test_a_cheat_on_one_shuffle_equation_is_refused(equation: str) -> None:
    assert not convinces(CHEATS[equation])


@pytest.mark.parametrize("equation", list(CHEATS))
def test_the_same_cheat_passes_a_verifier_without_that_equation(equation: str) -> None:
    """The teeth of the test above: with the equation left out the cheat verifies, and with
    any other left out it still does not (each cheat breaks exactly one equation)."""
    with shuffle_without(equation):
        assert convinces(CHEATS[equation])
    for other in set(CHEATS) - {equation}:
        with shuffle_without(other):
            assert not convinces(CHEATS[equation]), other


def test_the_outputs_of_the_rows_and_chain_end_cheats_are_no_shuffle() -> None:
    """What those cheats would pass: tracers and garbage, not re-keyed cards."""
    honest = set(keyed(permutation(), BLANKET))
    assert len(set(CHEATS["rows"].outputs) - honest) == 2
    assert len(set(MARKED_OUTPUTS) - honest) == 2


# --- the weak-Fiat–Shamir shuffler ---------------------------------------------------------------


def _marked_after_the_challenge(u: list[int], u_out: list[int]) -> list[Point]:
    """Every output but one a marked card ``tₚ·a·X_ψ(p)``, the last solved from ``u`` so that
    ``Σ u'ₚ·Yₚ = a·Σ uⱼ·Xⱼ`` holds: possible only once ``u`` is known."""
    marks = [from_int(0x7AC3 + p) for p in range(SIZE)]
    outputs = [mul(marks[p], y) for p, y in enumerate(keyed(permutation(), BLANKET))]
    target = mul(from_int(BLANKET), combine(dict(enumerate(u)), BEFORE))
    rest = combine({p: u_out[p] for p in range(1, SIZE)}, outputs)
    outputs[0] = mul(from_int(inverse(u_out[0])), sub(target, rest))
    return outputs


WEAK_SHUFFLE = Cheat(
    keyed(permutation(), BLANKET), permutation(), choose_outputs=_marked_after_the_challenge
)


@contextmanager
def _patched(module: object, name: str, value: object) -> Iterator[None]:
    real = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, real)


def test_shuffle_outputs_chosen_after_the_challenge_are_refused() -> None:
    outputs, _ = cheat_shuffle(WEAK_SHUFFLE)
    assert len(set(outputs) & set(keyed(permutation(), BLANKET))) == 0  # all marked or garbage
    assert not convinces(WEAK_SHUFFLE)
    real = shuffle_proof._digest

    def without_outputs(
        binding: Binding, public: Point, before: Sequence[Point], after: Sequence[Point]
    ) -> bytes:
        return real(binding, public, before, ())

    with _patched(shuffle_proof, "_digest", without_outputs):
        assert convinces(WEAK_SHUFFLE)  # the teeth


# --- the lock ------------------------------------------------------------------------------------

INPUTS = keyed(permutation(), BLANKET)  #: the lock's input: the shuffled small deck
KEYS = [0xB0 + 17 * j for j in range(SIZE)]


@dataclass(frozen=True)
class LockCheat:
    """A locker's published step and what it answers with: ``exponent`` for the blanket,
    ``keys`` for the positions (the committed ones unless told), ``choose`` to set one
    locked point after the challenge (weak Fiat–Shamir)."""

    locked: Sequence[Point]
    commitments: Sequence[Point]
    exponent: int = BLANKET
    keys: Sequence[int] = tuple(KEYS)
    after_the_challenge: int | None = None  #: the position whose point is chosen after c


def _honest_locked(exponent: int = BLANKET, keys: Sequence[int] = KEYS) -> list[Point]:
    return [mul(from_int(b * inverse(exponent)), e) for b, e in zip(keys, INPUTS)]


def _commitments(keys: Sequence[int] = KEYS) -> list[Point]:
    return [base_mul(from_int(b)) for b in keys]


def cheat_lock(cheat: LockCheat, seed: int = 2) -> LockStep:
    """The generic cheating locker: ``Tⱼ = α·Eⱼ − βⱼ·E'ⱼ``, ``Uⱼ = βⱼ·G``, ``V = α·G`` and the
    responses ``α + c·a``, ``βⱼ + c·bⱼ`` from the ``a`` and ``bⱼ`` it knows."""
    draw = random.Random(seed)
    alpha, beta = draw.randrange(1, ORDER), [draw.randrange(1, ORDER) for _ in range(SIZE)]
    locked = list(cheat.locked)
    digest = lock_proof._digest(LOCK_BINDING, BLANKET_PUBLIC, INPUTS, cheat.commitments, locked)
    links = [sub(mul(from_int(alpha), e), mul(from_int(b), d)) for e, b, d in
             zip(locked, beta, INPUTS)]  # fmt: skip
    chosen = cheat.after_the_challenge
    gamma = draw.randrange(1, ORDER)
    if chosen is not None:  # Tⱼ = γ·E'ⱼ, Eⱼ solved once c is known
        links[chosen] = mul(from_int(gamma), INPUTS[chosen])
    c = lock_proof._challenge(
        digest, links, [base_mul(from_int(b)) for b in beta], base_mul(from_int(alpha))
    )
    s_a = response(alpha, c, cheat.exponent)
    s = [response(b, c, key) for b, key in zip(beta, cheat.keys)]
    if chosen is not None:
        locked[chosen] = mul(from_int((gamma + s[chosen]) * inverse(s_a)), INPUTS[chosen])
    proof = LockProof(from_int(c), from_int(s_a), tuple(from_int(v) for v in s))
    return LockStep(tuple(cheat.commitments), tuple(locked), proof)


def locks(cheat: LockCheat) -> bool:
    return verify_lock(LOCK_BINDING, BLANKET_PUBLIC, INPUTS, cheat_lock(cheat))


_TRACED = _honest_locked()
_TRACED[3] = mul(from_int(T), _TRACED[6])  # the lock tracer: a multiple of another position
_OTHER_KEY = list(KEYS)
_OTHER_KEY[2] = 0xD1FF

#: The lock's equations, in ``_challenge``'s order → a cheat false there only.
LOCK_CHEATS: dict[str, LockCheat] = {
    "links": LockCheat(_TRACED, _commitments()),
    "key commitments": LockCheat(_honest_locked(keys=_OTHER_KEY), _commitments(), keys=_OTHER_KEY),
    "blanket": LockCheat(_honest_locked(OTHER_BLANKET), _commitments(), exponent=OTHER_BLANKET),
}


@contextmanager
def lock_without(equation: str) -> Iterator[None]:
    real = lock_proof._challenge

    def without(
        digest: bytes, links: Sequence[Point], key_commitments: Sequence[Point], blanket: Point
    ) -> int:
        if equation == "links":
            links = ()
        elif equation == "key commitments":
            key_commitments = ()
        else:
            blanket = b""
        return real(digest, links, key_commitments, blanket)

    with _patched(lock_proof, "_challenge", without):
        yield


def test_the_cheating_locker_is_a_prover_it_convinces_when_its_statement_is_true() -> None:
    assert locks(LockCheat(_honest_locked(), _commitments()))
    real = lock(
        LOCK_BINDING,
        from_int(BLANKET),
        from_int(inverse(BLANKET)),
        BLANKET_PUBLIC,
        INPUTS,
        [from_int(b) for b in KEYS],
        NONCE_KEY,
    )
    assert real.locked == tuple(_honest_locked())
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, INPUTS, real)


@pytest.mark.parametrize("equation", list(LOCK_CHEATS))
def test_a_cheat_on_one_lock_equation_is_refused_and_passes_without_it(equation: str) -> None:
    assert not locks(LOCK_CHEATS[equation])
    with lock_without(equation):
        assert locks(LOCK_CHEATS[equation])
    for other in set(LOCK_CHEATS) - {equation}:
        with lock_without(other):
            assert not locks(LOCK_CHEATS[equation]), other


def test_a_locked_point_chosen_after_the_challenge_is_refused() -> None:
    """Position 5 re-keyed by a factor the locker learns only with ``c`` — not its committed
    key over its blanket."""
    weak = LockCheat(_honest_locked(), _commitments(), after_the_challenge=5)
    step = cheat_lock(weak)
    assert step.locked[5] != _honest_locked()[5]
    assert not locks(weak)
    real = lock_proof._digest

    def without_locked(
        binding: Binding,
        public: Point,
        before: Sequence[Point],
        commitments: Sequence[Point],
        locked: Sequence[Point],
    ) -> bytes:
        return real(binding, public, before, commitments, ())

    with _patched(lock_proof, "_digest", without_locked):
        assert locks(weak)  # the teeth


# --- lists one short and one long, through the Python API -----------------------------------

FULL_BEFORE = CARD_POINTS
FULL_ORDER = tuple((37 * p + 11) % 78 for p in range(78))
FULL_KEY = from_int(BLANKET)
FULL_AFTER = tuple(mul(FULL_KEY, CARD_POINTS[j]) for j in FULL_ORDER)
FULL_PROOF = prove_shuffle(
    BINDING, FULL_KEY, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, FULL_ORDER, NONCE_KEY
)
FULL_LOCK = lock(
    LOCK_BINDING,
    FULL_KEY,
    from_int(inverse(BLANKET)),
    BLANKET_PUBLIC,
    FULL_AFTER,
    [from_int(0xB0 + 17 * j) for j in range(78)],
    NONCE_KEY,
)


def _changed(items: tuple[bytes, ...], how: str) -> tuple[bytes, ...]:
    """One short (the last dropped) or one long (the first repeated at the end)."""
    return items[:-1] if how == "short" else (*items, items[0])


def test_the_honest_full_size_proofs_verify() -> None:
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, FULL_PROOF)
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, FULL_AFTER, FULL_LOCK)


@pytest.mark.parametrize("how", ["short", "long"])
@pytest.mark.parametrize(
    "field", ["commitments", "chain", "summary", "chain_responses", "opening_responses"]
)
def test_a_shuffle_proof_list_of_the_wrong_length_is_false(field: str, how: str) -> None:
    proof = replace(FULL_PROOF, **{field: _changed(getattr(FULL_PROOF, field), how)})
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, proof) is False


@pytest.mark.parametrize("how", ["short", "long"])
def test_shuffle_points_of_the_wrong_length_are_false(how: str) -> None:
    after = _changed(FULL_AFTER, how)
    before = _changed(FULL_BEFORE, how)
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, FULL_BEFORE, after, FULL_PROOF) is False
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, before, FULL_AFTER, FULL_PROOF) is False


def test_a_short_chain_cannot_hide_a_marked_card_in_the_dropped_link() -> None:
    """The review's attack: the marked card and garbage point of the links cheat, the bent
    last link left out of the hash and its response not sent — ``zip`` over the shorter list
    of chain responses dropped that link unchecked, and the proof verified."""
    cheat = replace(CHEATS["links"], short_chain=True)
    outputs, proof = cheat_shuffle(cheat)
    assert len(proof.chain_responses) == SIZE - 1
    assert not verify_shuffle(BINDING, BLANKET_PUBLIC, BEFORE, outputs, proof)


@pytest.mark.parametrize(
    "bad",
    [b"\x01" * 31, "x" * 32, None, ORDER.to_bytes(32, "little"), bytes(32)],
    ids=["31 bytes", "a str", "None", "not canonical", "zero"],
)
@pytest.mark.parametrize("field", ["challenge", "summary", "chain_responses", "commitments"])
def test_a_malformed_shuffle_entry_is_false_never_an_exception(field: str, bad: object) -> None:
    value = getattr(FULL_PROOF, field)
    altered = bad if field == "challenge" else (bad, *value[1:])
    proof = replace(FULL_PROOF, **{field: altered})
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, proof) is False


@pytest.mark.parametrize("how", ["short", "long"])
@pytest.mark.parametrize("field", ["commitments", "locked", "key_responses"])
def test_a_lock_list_of_the_wrong_length_is_false(field: str, how: str) -> None:
    if field == "key_responses":
        proof = replace(FULL_LOCK.proof, key_responses=_changed(FULL_LOCK.proof.key_responses, how))
        step = replace(FULL_LOCK, proof=proof)
    else:
        step = replace(FULL_LOCK, **{field: _changed(getattr(FULL_LOCK, field), how)})
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, FULL_AFTER, step) is False
    before = _changed(FULL_AFTER, how)
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, before, FULL_LOCK) is False


@pytest.mark.parametrize("bad", [b"\x01" * 31, None, bytes(32)], ids=["31 bytes", "None", "zero"])
@pytest.mark.parametrize("field", ["challenge", "blanket_response", "key_responses"])
def test_a_malformed_lock_entry_is_false_never_an_exception(field: str, bad: object) -> None:
    value = getattr(FULL_LOCK.proof, field)
    altered = (bad, *value[1:]) if field == "key_responses" else bad
    step = replace(FULL_LOCK, proof=replace(FULL_LOCK.proof, **{field: altered}))
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, FULL_AFTER, step) is False


# --- the provers' randomness is secret ---------------------------------------------------------


def test_the_provers_randomness_comes_from_the_seats_nonce_key() -> None:
    """A proof hides the permutation and the keys only while its randomness stays secret: the
    commitments' ``rⱼ`` (``Cⱼ − rⱼ·G`` would name ψ), the chain's, and every nonce (``s − β``
    over ``c`` would give a key).  Derived from the seat's nonce key, each changes with it —
    the same statement proved under another key shares no point nor response with the first;
    randomness derived from public values would not change."""
    other_key = b"o" * 32
    other = prove_shuffle(
        BINDING, FULL_KEY, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, FULL_ORDER, other_key
    )
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, FULL_BEFORE, FULL_AFTER, other)
    for field in ("commitments", "chain", "summary", "chain_responses", "opening_responses"):
        assert not set(getattr(other, field)) & set(getattr(FULL_PROOF, field)), field
    keys = [from_int(0xB0 + 17 * j) for j in range(78)]
    relocked = lock(
        LOCK_BINDING,
        FULL_KEY,
        from_int(inverse(BLANKET)),
        BLANKET_PUBLIC,
        FULL_AFTER,
        keys,
        other_key,
    )
    assert relocked.locked == FULL_LOCK.locked  # the same statement …
    mine, theirs = FULL_LOCK.proof, relocked.proof
    assert mine.blanket_response != theirs.blanket_response  # … other nonces
    assert not set(mine.key_responses) & set(theirs.key_responses)


# --- the deck's lists, one short and one long, through PublicDeck -----------------------------


def _verdict(public: PublicDeck, payload: DeckPayload) -> Verdict:
    with pytest.raises(VerdictError) as caught:
        public.receive(payload)
    return caught.value.verdict


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["short", "long"])
def test_deal_and_chien_keys_of_the_wrong_count_name_their_sender(how: str) -> None:
    """Counted before any key is used: ``zip`` with the positions would drop the extra or
    missing ones silently."""
    seats, public = fresh_table(3)
    lock_rounds(seats, public)
    honest = seats[1].deal_keys()
    verdict = _verdict(public, replace(honest, keys=_changed(honest.keys, how)))
    assert (verdict.seat, verdict.step) == (1, "deal") and "instead of" in verdict.reason
    for seat in seats:
        public.receive(seat.deal_keys())
    chien = seats[2].chien_keys()
    verdict = _verdict(public, replace(chien, keys=_changed(chien.keys, how)))
    assert (verdict.seat, verdict.step) == (2, "chien") and "instead of" in verdict.reason


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["short", "long"])
@pytest.mark.parametrize("field", ["chain_responses", "opening_responses", "summary"])
def test_a_shuffle_payload_with_a_proof_list_of_the_wrong_length_names_its_sender(
    field: str, how: str
) -> None:
    """Through the deck, as a seat receives it: a verdict on the shuffler, no other error."""
    seats, public = fresh_table(3)
    for seat in seats:
        public.receive(seat.commit())
    honest = seats[0].shuffle(public)
    proof = replace(honest.proof, **{field: _changed(getattr(honest.proof, field), how)})
    verdict = _verdict(public, replace(honest, proof=proof))
    assert (verdict.seat, verdict.step) == (0, "shuffle") and "proof" in verdict.reason


def test_each_position_of_a_proof_has_a_nonce_of_its_own() -> None:
    """A nonce shared by two positions of the lock gives ``bⱼ − bₖ = (sⱼ − sₖ)/c``: one key
    published (a deal key) would then open every place; shared commitment randomness gives
    ``Cⱼ − Cₖ = H_p − H_q``, the permutation.  Read back with the secrets: all distinct."""
    proof = FULL_LOCK.proof
    c = to_int(proof.challenge)
    nonces = {(to_int(s) - c * (0xB0 + 17 * j)) % ORDER for j, s in enumerate(proof.key_responses)}
    assert len(nonces) == 78
    h = generators(78)
    where = {j: p for p, j in enumerate(FULL_ORDER)}
    masks = {sub(point, h[1 + where[j]]) for j, point in enumerate(FULL_PROOF.commitments)}
    assert len(masks) == 78
    assert len(set(FULL_PROOF.chain_responses)) == len(set(FULL_PROOF.opening_responses)) == 78


# --- any malformation, at random ---------------------------------------------------------------

SMALL_AFTER = tuple(keyed(permutation(), BLANKET))
SMALL_PROOF = prove_shuffle(
    BINDING, from_int(BLANKET), BLANKET_PUBLIC, BEFORE, SMALL_AFTER, ORDER_OF_PLACES, NONCE_KEY
)
SMALL_LOCK = lock(
    LOCK_BINDING,
    from_int(BLANKET),
    from_int(inverse(BLANKET)),
    BLANKET_PUBLIC,
    INPUTS,
    [from_int(b) for b in KEYS],
    NONCE_KEY,
)
_ENTRIES = st.one_of(
    st.binary(max_size=33), st.none(), st.integers(), st.text(max_size=2), st.just(bytes(32))
)


@st.composite
def _malformed(draw: st.DrawFn, value: object) -> object:
    """``value`` (a scalar or a list) cut, lengthened, or with one entry replaced."""
    if not isinstance(value, tuple):
        return draw(_ENTRIES)
    how = draw(st.sampled_from(["cut", "lengthen", "replace"]))
    if how == "cut":
        return value[: draw(st.integers(0, len(value) - 1))]
    if how == "lengthen":
        return (*value, *draw(st.lists(st.sampled_from(value) | _ENTRIES, min_size=1, max_size=3)))
    k = draw(st.integers(0, len(value) - 1))
    return (*value[:k], draw(_ENTRIES), *value[k + 1 :])


@given(data=st.data())
def test_a_malformed_proof_is_false_never_an_exception(data: st.DataObject) -> None:
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, BEFORE, SMALL_AFTER, SMALL_PROOF)
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, INPUTS, SMALL_LOCK)
    field = data.draw(st.sampled_from([f.name for f in fields(ShuffleProof)]))
    value = getattr(SMALL_PROOF, field)
    altered = data.draw(_malformed(value))
    assume(altered != value)
    proof = replace(SMALL_PROOF, **{field: altered})
    assert verify_shuffle(BINDING, BLANKET_PUBLIC, BEFORE, SMALL_AFTER, proof) is False
    field = data.draw(st.sampled_from([f.name for f in fields(LockProof)]))
    value = getattr(SMALL_LOCK.proof, field)
    altered = data.draw(_malformed(value))
    assume(altered != value)
    step = replace(SMALL_LOCK, proof=replace(SMALL_LOCK.proof, **{field: altered}))
    assert verify_lock(LOCK_BINDING, BLANKET_PUBLIC, INPUTS, step) is False
