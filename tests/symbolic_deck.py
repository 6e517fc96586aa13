"""The deck's arithmetic run symbolically over the real message flow, and the secrecy check
that reads every value it carries the way a coalition of seats would.

Why.  The first lock published ``F = a⁻¹·E``, a point its author had just taken its own key
off; from it the seats after a seat read that seat's hand, and everyone read the last seat's.
The secrecy test of the time looked at the final points only, and passed.  A leak hides in an
intermediate value, so this check looks at *every* value of every payload, as the real code
computed it — not at a copy of the design, which would share the design's blind spots.

How: taint tracking.  :meth:`Tracer.active` replaces, in every loaded ``protocol`` module,
each name bound to a function of :mod:`protocol.deck.group` (and to the card points, the proofs'
hash to an integer and the seeds' derivation) by a twin that computes the same bytes with the
original and also the value's *expression*, carried on a ``bytes`` subclass (:class:`Traced`)
so that hashing, comparing, dict keys and msgpack behave exactly as before; the integers of
the proofs' arithmetic modulo ℓ carry theirs on an ``int`` subclass (:class:`TracedInt`).

Expressions.  A scalar is a Laurent polynomial, coefficients modulo ℓ, in *symbols*: every
secret of a seat — its blanket key ``a`` (``a⁻¹`` is ``a`` to the power −1), its lock keys
``bⱼ``, its re-commitment keys ``rₖ`` — and one fresh symbol, owned by the seat, for every
scalar hashed from its nonce key or seed (a proof nonce; the same nonce derived twice is the
same symbol, so a reuse shows in the algebra).  A hash of public values only (a Fiat–Shamir
challenge) is a public constant — but a shuffle proof's challenges ``uⱼ``, taken in the order
of the prover's permutation (``u'ₚ = u_ψ(p)``, :class:`Challenges`), are symbols of the prover:
which one stands where *is* the permutation.  A point is a sum of terms
``coefficient · monomial · base``, the base a card ``M_c``, ``G`` or a generator ``H_k``.  A
scalar the tracer cannot attribute counts as a public constant — that can only make a coalition
know more, never hide a leak — and an untraced point is refused, since its card would be lost.

The check (:func:`leaks`), for every coalition of n − 1 seats: the coalition knows its own
symbols, and every symbol the published scalars give away — they are linear forms such as
``s = β + c·b``, which give ``b`` once ``β`` is known or used twice: :class:`Knowledge` solves
them.  Then every term of every carried point whose base is a card at a place the rules have
not opened, and that the coalition does not own, must hold a factor the coalition does not
know.  A point of a shuffle other than the last is tied to its pack position only through the
later shufflers' permutations, so its terms are safe while one of those is unknown; a
permutation is known to its seat, and to a coalition that can open any value of that seat's
shuffle proof (then it is reported too).  Knowledge only grows with the coalition, so the
n − 1-seat coalitions stand for every smaller one: a chien position must hold out against each
of them, a seat's position against the one without that seat.

What no algebra on the published values shows, this cannot see: it takes discrete logarithms
and DDH in the group to be hard — the generic-group view, the assumption the deck rests on.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cache, reduce
from itertools import combinations
from types import ModuleType

from deck_tables import Place, owner_of, played_table, shown_places

from protocol.deck import group, proofs, seeds
from protocol.deck.group import ORDER, Point, Scalar
from protocol.deck.payloads import Commit, DeckPayload, EcartCommitment, Lock, Shuffle
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import SeatSecrets
from protocol.deck.setup import DeckSetup
from protocol.rules.variants import Variant

Monomial = tuple[tuple[int, int], ...]  #: (symbol, exponent) pairs, by symbol
Term = tuple[Monomial, int]  #: a monomial and a base, or SCALAR
SCALAR = -1  #: the "base" of a scalar's terms


@cache
def _times(m: Monomial, n: Monomial) -> Monomial:
    """The product of two monomials (remembered: the same few products recur by the thousand,
    one blanket product for 78 cards)."""
    if not m:
        return n
    if not n:
        return m
    powers = dict(m)
    for symbol, exponent in n:
        total = powers.get(symbol, 0) + exponent
        if total:
            powers[symbol] = total
        else:
            del powers[symbol]
    return tuple(sorted(powers.items()))


class Expr:
    """A polynomial of terms ``coefficient · monomial · base`` (no base: a scalar)."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Term, int]) -> None:
        self.terms = terms  # no zero coefficient

    @classmethod
    def constant(cls, value: int) -> Expr:
        value %= ORDER
        return cls({((), SCALAR): value} if value else {})

    @classmethod
    def symbol(cls, symbol: int, exponent: int = 1) -> Expr:
        return cls({(((symbol, exponent),), SCALAR): 1})

    @classmethod
    def base(cls, base: int) -> Expr:
        return cls({((), base): 1})

    @classmethod
    def sum(cls, exprs: Iterable[Expr]) -> Expr:
        terms: dict[Term, int] = {}
        for expr in exprs:
            for term, coefficient in expr.terms.items():
                total = (terms.get(term, 0) + coefficient) % ORDER
                if total:
                    terms[term] = total
                else:
                    terms.pop(term, None)
        return cls(terms)

    @property
    def is_scalar(self) -> bool:
        return all(base == SCALAR for _, base in self.terms)

    def __add__(self, other: Expr) -> Expr:
        return Expr.sum((self, other))

    def __neg__(self) -> Expr:
        return Expr({term: -coefficient % ORDER for term, coefficient in self.terms.items()})

    def __sub__(self, other: Expr) -> Expr:
        return Expr.sum((self, -other))

    def __mul__(self, other: Expr) -> Expr:
        terms: dict[Term, int] = {}
        for (m, base), c in self.terms.items():
            for (n, other_base), d in other.terms.items():
                assert base == SCALAR or other_base == SCALAR, "a product of two points"
                term = (_times(m, n), base if other_base == SCALAR else other_base)
                total = (terms.get(term, 0) + c * d) % ORDER
                if total:
                    terms[term] = total
                else:
                    terms.pop(term, None)
        return Expr(terms)

    def inverse(self) -> Expr:
        """The inverse of a scalar monomial (all the deck ever inverts:
        keys and products of keys)."""
        ((monomial, base), coefficient), *more = self.terms.items()
        assert base == SCALAR and not more, "the tracer inverts monomials only"
        return Expr({(tuple((s, -e) for s, e in monomial), SCALAR): pow(coefficient, -1, ORDER)})


class Traced(bytes):
    """A point or scalar, byte for byte the real one, with its expression."""

    expr: Expr

    def __new__(cls, data: bytes, expr: Expr) -> Traced:
        value = super().__new__(cls, data)
        value.expr = expr
        return value


def _int_expr(value: int) -> Expr:
    return value.expr if isinstance(value, TracedInt) else Expr.constant(value)


class TracedInt(int):
    """An integer of the proofs' arithmetic modulo ℓ, with its expression.  Any operation not
    defined here gives a plain ``int``: a public constant, the safe side."""

    expr: Expr

    def __new__(cls, value: int, expr: Expr) -> TracedInt:
        result = super().__new__(cls, value)
        result.expr = expr
        return result

    def __add__(self, other: object) -> TracedInt:
        if not isinstance(other, int):
            return NotImplemented
        return TracedInt(int.__add__(self, other), self.expr + _int_expr(other))

    __radd__ = __add__

    def __sub__(self, other: object) -> TracedInt:
        if not isinstance(other, int):
            return NotImplemented
        return TracedInt(int.__sub__(self, other), self.expr - _int_expr(other))

    def __rsub__(self, other: object) -> TracedInt:
        if not isinstance(other, int):
            return NotImplemented
        return TracedInt(int.__rsub__(self, other), _int_expr(other) - self.expr)

    def __mul__(self, other: object) -> TracedInt:
        if not isinstance(other, int):
            return NotImplemented
        return TracedInt(int.__mul__(self, other), self.expr * _int_expr(other))

    __rmul__ = __mul__

    def __neg__(self) -> TracedInt:
        return TracedInt(int.__neg__(self), -self.expr)

    def __mod__(self, modulus: object) -> int:
        value = int.__mod__(self, modulus)  # type: ignore[operator]  # a traced integer modulo any object, as int allows
        return TracedInt(value, self.expr) if modulus == ORDER else value


@dataclass(frozen=True)
class Symbol:
    owner: int  #: the seat whose secret it is
    name: str
    value: int


@dataclass(frozen=True)
class Base:
    name: str
    point: Point
    card: int | None


class SecretIndex(int):
    """An entry of a seat's permutation: a plain index, but :class:`Challenges` knows whose."""

    owner: int

    def __new__(cls, value: int, owner: int) -> SecretIndex:
        index = super().__new__(cls, value)
        index.owner = owner
        return index


class Challenges(list[int]):
    """A shuffle proof's challenges ``uⱼ``, public in input order.  Taken through a seat's
    permutation (``u'ₚ = u_ψ(p)``, the output order) a challenge is a secret of that seat: the
    coalition knows the values but not which goes where — that is the permutation."""

    def __init__(self, values: Iterable[int], tracer: Tracer) -> None:
        super().__init__(values)
        self._tracer = tracer

    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # list's overloads, traced
        value = super().__getitem__(index)
        if not isinstance(index, SecretIndex):
            return value
        return TracedInt(value, Expr.symbol(self._tracer.permuted(index.owner, self, value)))


_hash_to_int = proofs.hash_to_int
_challenges = proofs.challenges
_derive = seeds.derive


#: ±m/d for 1 ≤ m, d ≤ 8 modulo ℓ → its inverse: the relations between derived keys that
#: :meth:`Tracer._derived` looks for.
_SMALL_FRACTIONS: dict[int, int] = {
    sign * m * pow(d, -1, ORDER) % ORDER: sign * d * pow(m, -1, ORDER) % ORDER
    for m in range(1, 9)
    for d in range(1, 9)
    for sign in (1, -1)
}


class Tracer:
    """The symbols and bases of one traced deal, and the traced twins of the functions."""

    def __init__(self) -> None:
        self.symbols: list[Symbol] = []
        self.bases: list[Base] = []
        self._symbol_of: dict[tuple[int, str], int] = {}
        self._base_of: dict[bytes, int] = {}
        self._nonce_count: Counter[int] = Counter()
        #: Every derived key's value → its expression (and its inverse modulo ℓ).
        self._derived_of: dict[int, Expr] = {}
        self._derived_inverse: dict[int, tuple[Expr, int]] = {}
        self._nonce_of: dict[tuple[int, int], int] = {}
        self._secret_bytes: dict[bytes, int] = {}  # nonce keys and seeds → their seat
        self._permuted_of: dict[tuple[int, int], int] = {}
        #: The permuted challenges: each is one of the 78 public challenges, so whoever isolates
        #: one in a value can guess it.
        self.guessable: set[int] = set()
        # id → the challenges, their secret symbols
        self._permuted_sets: dict[int, tuple[Challenges, list[int]]] = {}
        self.generator_base = self._base(group.GENERATOR, "G")
        self.generator = Traced(group.GENERATOR, Expr.base(self.generator_base))
        self.card_points = tuple(
            Traced(point, Expr.base(self._base(point, f"M{c}")))
            for c, point in enumerate(group.CARD_POINTS)
        )

    # -- registries --

    def _base(self, point: Point, name: str) -> int:
        point = bytes(point)
        if point not in self._base_of:
            self._base_of[point] = len(self.bases)
            self.bases.append(Base(name, point, group.card_of(point)))
        return self._base_of[point]

    def _symbol(self, owner: int, name: str, value: int) -> int:
        key = (owner, name)
        if key not in self._symbol_of:
            self._symbol_of[key] = len(self.symbols)
            self.symbols.append(Symbol(owner, name, value))
        return self._symbol_of[key]

    def _derived(self, owner: int, name: str, value: int) -> Expr:
        """A derived key's expression: a symbol of its own — unless its value is a small
        fraction (1, 2, −1/3 …), a small fraction times a key derived before, or the product
        of two: then that, so that the check sees what such a relation gives away.  Naming
        every key a fresh symbol whatever its value would make a derivation that relates its
        keys (a repeated key, ``bⱼ = (j+1)·b₀``) look as safe as one that does not."""
        if value in _SMALL_FRACTIONS:
            return Expr.constant(value)
        for fraction, inverse in _SMALL_FRACTIONS.items():
            before = self._derived_of.get(value * inverse % ORDER)
            if before is not None:
                return Expr.constant(fraction) * before
        for expr, inverse in self._derived_inverse.values():
            other = self._derived_of.get(value * inverse % ORDER)
            if other is not None:
                return expr * other
        expr = Expr.symbol(self._symbol(owner, name, value))
        self._derived_of[value] = expr
        self._derived_inverse[value] = (expr, pow(value, -1, ORDER))
        return expr

    def _nonce(self, owner: int, value: int) -> int:
        if (owner, value) not in self._nonce_of:
            self._nonce_count[owner] += 1
            self._nonce_of[owner, value] = self._symbol(
                owner, f"ν{owner}.{self._nonce_count[owner]}", value
            )
        return self._nonce_of[owner, value]

    def permuted(self, owner: int, challenges: Challenges, value: int) -> int:
        """The symbol of challenge ``value`` of ``challenges`` taken through
        ``owner``'s permutation."""
        if (owner, value) not in self._permuted_of:
            symbol = self._symbol(owner, f"u'{owner}.{len(self._permuted_of)}", value)
            self._permuted_of[owner, value] = symbol
            self.guessable.add(symbol)
            self._permuted_sets.setdefault(id(challenges), (challenges, []))[1].append(symbol)
        return self._permuted_of[owner, value]

    def public_relations(self) -> list[tuple[Expr, int]]:
        """What everybody knows of the permuted challenges: their sum and their product are
        those of the challenges."""
        relations = []
        for challenges, symbols in self._permuted_sets.values():
            assert len(symbols) == len(challenges), "a permutation that left out a challenge"
            relations.append((Expr.sum(map(Expr.symbol, symbols)), sum(challenges) % ORDER))
            product = Expr({(tuple((s, 1) for s in sorted(symbols)), SCALAR): 1})
            relations.append((product, reduce(lambda x, y: x * y % ORDER, challenges, 1)))
        return relations

    def nonces(self) -> list[Symbol]:
        """Every proof nonce derived while tracing."""
        return [self.symbols[s] for s in self._nonce_of.values()]

    def _scalar(self, s: bytes) -> Expr:
        return s.expr if isinstance(s, Traced) else Expr.constant(group.to_int(s))

    def _point(self, p: bytes) -> Expr:
        if isinstance(p, Traced):
            return p.expr
        base = self._base_of.get(bytes(p))
        assert base is not None, f"an untraced point {p.hex()}: the tracer lost its card"
        return Expr.base(base)

    # -- the twins --

    def mul(self, s: Scalar, p: Point) -> Traced:
        return Traced(group.mul(s, p), self._scalar(s) * self._point(p))

    def mul_each(self, scalars: Sequence[Scalar], points: Sequence[Point]) -> list[Traced]:
        real = group.mul_each(scalars, points)
        return [
            Traced(r, self._scalar(s) * self._point(p)) for r, s, p in zip(real, scalars, points)
        ]

    def base_mul(self, s: Scalar) -> Traced:
        return Traced(group.base_mul(s), self._scalar(s) * self.generator.expr)

    def base_mul_each(self, scalars: Sequence[Scalar]) -> list[Traced]:
        return [
            Traced(r, self._scalar(s) * self.generator.expr)
            for r, s in zip(group.base_mul_each(scalars), scalars)
        ]

    def add(self, p: Point, q: Point) -> Traced:
        return Traced(group.add(p, q), self._point(p) + self._point(q))

    def sub(self, p: Point, q: Point) -> Traced:
        return Traced(group.sub(p, q), self._point(p) - self._point(q))

    def point_sum(self, points: Sequence[Point]) -> Traced:
        return Traced(group.point_sum(points), Expr.sum(self._point(p) for p in points))

    def scalar_mul(self, s: Scalar, t: Scalar) -> Traced:
        return Traced(group.scalar_mul(s, t), self._scalar(s) * self._scalar(t))

    def scalar_product(self, scalars: Iterable[Scalar]) -> Traced:
        items = list(scalars)
        return Traced(
            reduce(group.scalar_mul, items), reduce(Expr.__mul__, map(self._scalar, items))
        )

    def invert(self, s: Scalar) -> Traced:
        return Traced(group.invert(s), self._scalar(s).inverse())

    def to_int(self, s: Scalar) -> TracedInt:
        return TracedInt(group.to_int(s), self._scalar(s))

    def from_int(self, value: int) -> Traced:
        return Traced(group.from_int(value), _int_expr(value))

    def hash_to_point(self, domain: bytes, index: int) -> Traced:
        point = group.hash_to_point(domain, index)
        return Traced(point, Expr.base(self._base(point, f"H[{domain.decode()}/{index}]")))

    def hash_to_int(self, *parts: bytes) -> int:
        """A nonce — a fresh secret of the seat whose nonce key or seed went into the hash —
        or, when nothing secret did, a public challenge."""
        value = _hash_to_int(*parts)
        owners = {
            seat
            for secret, seat in self._secret_bytes.items()
            if any(secret in part for part in parts)
        }
        if not owners:
            return value
        (owner,) = owners
        return TracedInt(value, Expr.symbol(self._nonce(owner, value)))

    def challenges(self, digest: bytes, label: bytes, count: int) -> Challenges:
        return Challenges(_challenges(digest, label, count), self)

    def derive(
        self, seed: bytes, table_id: bytes, deal: int, seat: int, variant: Variant
    ) -> SeatSecrets:
        """The seat's secrets, each key a symbol of its own."""
        s = _derive(seed, table_id, deal, seat, variant)
        self._secret_bytes[seed] = self._secret_bytes[s.nonce_key] = seat

        def key(value: Scalar, name: str) -> Traced:
            return Traced(value, self._derived(seat, name, group.to_int(value)))

        blanket = key(s.blanket, f"a{seat}")
        return replace(
            s,
            blanket=blanket,
            blanket_inverse=Traced(s.blanket_inverse, blanket.expr.inverse()),
            blanket_public=Traced(s.blanket_public, blanket.expr * self.generator.expr),
            permutation=tuple(SecretIndex(p, seat) for p in s.permutation),
            lock_keys=tuple(key(b, f"b{seat}[{j}]") for j, b in enumerate(s.lock_keys)),
            recommit_keys=tuple(key(r, f"r{seat}[{k}]") for k, r in enumerate(s.recommit_keys)),
        )

    # -- switching them in --

    def _twins(self) -> dict[int, tuple[object, object]]:
        """id of each original → (the original, its twin)."""
        pairs: list[tuple[object, object]] = [
            (getattr(group, name), getattr(self, name))
            for name in (
                "mul",
                "mul_each",
                "base_mul",
                "base_mul_each",
                "add",
                "sub",
                "point_sum",
                "scalar_mul",
                "scalar_product",
                "invert",
                "to_int",
                "from_int",
                "hash_to_point",
            )
        ]
        pairs += [
            (group.CARD_POINTS, self.card_points),
            (group.GENERATOR, self.generator),
            (_hash_to_int, self.hash_to_int),
            (_challenges, self.challenges),
            (_derive, self.derive),
        ]
        return {id(original): (original, twin) for original, twin in pairs}

    @contextmanager
    def active(self) -> Iterator[Tracer]:
        """Every ``protocol`` module but :mod:`protocol.deck.group` (whose originals the twins call)
        sees the twins under the names it imported; cached values computed from the originals
        (the shuffle proof's generators) are dropped on the way in and out."""
        twins = self._twins()
        swapped: list[tuple[ModuleType, str, object]] = []
        modules = [
            m
            for name, m in list(sys.modules.items())
            if name.startswith("protocol.") and m is not group
        ]
        for module in modules:
            for name, value in list(vars(module).items()):
                if id(value) in twins and twins[id(value)][0] is value:
                    swapped.append((module, name, value))
                    setattr(module, name, twins[id(value)][1])
        _clear_caches(modules)
        try:
            yield self
        finally:
            for owner, name, value in swapped:
                setattr(owner, name, value)
            _clear_caches(modules)

    # -- what an expression is worth --

    def monomial_value(self, monomial: Monomial, values: Mapping[int, int] | None = None) -> int:
        def value(symbol: int) -> int:
            return self.symbols[symbol].value if values is None else values[symbol]

        return reduce(lambda x, se: x * pow(value(se[0]), se[1], ORDER) % ORDER, monomial, 1)

    def scalar_value(self, expr: Expr) -> int:
        return sum(c * self.monomial_value(m) for (m, _), c in expr.terms.items()) % ORDER

    def point_value(self, expr: Expr) -> Point:
        """The point an expression stands for, by the real group (one multiplication a base)."""
        by_base: dict[int, int] = defaultdict(int)
        for (m, base), c in expr.terms.items():
            by_base[base] += c * self.monomial_value(m)
        bases = sorted(by_base)
        return group.point_sum(
            group.mul_each(
                [group.from_int(by_base[b]) for b in bases], [self.bases[b].point for b in bases]
            )
        )


def _clear_caches(modules: Iterable[ModuleType]) -> None:
    """Drop what the functions of these modules remembered (``functools.cache``): values
    computed by the other side of a switch would carry the wrong kind of bytes."""
    for module in modules:
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)) and getattr(
                value, "__module__", None
            ) == getattr(module, "__name__", None):
                value.cache_clear()


@dataclass(frozen=True)
class TracedDeal:
    """A deal played traced (:func:`deck_tables.play_deal`), and where each moment ends."""

    tracer: Tracer
    seats: list[SeatDeck]
    public: PublicDeck
    moments: dict[str, int]  #: moment → how many payloads were in

    def payloads(self, moment: str) -> tuple[DeckPayload, ...]:
        return self.public.record.payloads[: self.moments[moment]]


def trace_deal(players: int, *, salt: int = 0, dealer: int = 0, tricks: int = 3) -> TracedDeal:
    """:func:`deck_tables.played_table`, traced."""
    tracer = Tracer()
    with tracer.active():
        seats, public, moments = played_table(players, salt=salt, dealer=dealer, tricks=tricks)
    return TracedDeal(tracer, seats, public, moments)


# --- what a coalition knows ---------------------------------------------------------------


def carried(
    obj: object, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], bytes]]:
    """Every byte string a payload carries, in every field, with its path."""
    if is_dataclass(obj):
        for field in fields(obj):
            yield from carried(getattr(obj, field.name), (*path, field.name))
    elif isinstance(obj, (tuple, list)):
        for k, item in enumerate(obj):
            yield from carried(item, (*path, k))
    elif isinstance(obj, bytes):
        yield path, obj


def traced_values(payload: object) -> Iterator[tuple[tuple[str | int, ...], Traced]]:
    """What :func:`carried` gives, all of it traced — but the seed commitment, a hash."""
    for path, value in carried(payload):
        if isinstance(payload, Commit) and path == ("commitment",):
            continue
        assert isinstance(value, Traced), (
            f"{type(payload).__name__} carries an untraced value at {path}"
        )
        yield path, value


class Knowledge:
    """The symbols a coalition knows: its own, and every one the published scalars fix.

    Each published scalar is an equation ``Σ coefficient · monomial = value``.  The known
    symbols are put in; what is left is linear in its unknown monomials, solved by sparse
    Gauss–Jordan elimination; a monomial that comes out fixed and is one symbol gives that
    symbol (then the round starts again), a product of several stays known as a product."""

    def __init__(
        self, tracer: Tracer, coalition: frozenset[int], equations: Sequence[tuple[Expr, int]]
    ) -> None:
        self.values = {
            s: symbol.value for s, symbol in enumerate(tracer.symbols) if symbol.owner in coalition
        }
        self.products: dict[Monomial, int] = {}
        self._guessable = tracer.guessable
        while self._learn(tracer, equations):
            pass

    def unknown(self, monomial: Monomial) -> Monomial:
        return tuple((s, e) for s, e in monomial if s not in self.values)

    def knows(self, monomial: Monomial) -> bool:
        left = self.unknown(monomial)
        return not left or left in self.products or tuple((s, -e) for s, e in left) in self.products

    def opens(self, expr: Expr) -> bool:
        """Whether every term of a value that holds some secret is known but for permuted
        challenges, which can be guessed: the coalition can recompute the value for each
        guess of what it hides (which generator, which challenge: the permutation) and test it."""
        monomials = [m for m, _ in expr.terms]
        return any(monomials) and all(
            self.knows(tuple(se for se in m if se[0] not in self._guessable)) for m in monomials
        )

    def _learn(self, tracer: Tracer, equations: Sequence[tuple[Expr, int]]) -> bool:
        rows: list[tuple[dict[Monomial, int], int]] = []
        for expr, value in equations:
            row: dict[Monomial, int] = {}
            for (monomial, _), c in expr.terms.items():
                left = self.unknown(monomial)
                known = tuple(se for se in monomial if se[0] in self.values)
                c = c * tracer.monomial_value(known, self.values) % ORDER
                if left:
                    row[left] = (row.get(left, 0) + c) % ORDER
                else:
                    value -= c
            row = {m: c for m, c in row.items() if c}
            if row:
                rows.append((row, value % ORDER))
            else:
                assert value % ORDER == 0, "a published scalar disagrees with its expression"
        learnt = False
        for monomial, value in _fixed(rows).items():
            if len(monomial) == 1 and monomial[0][1] in (1, -1):
                ((symbol, exponent),) = monomial
                self.values[symbol] = value if exponent == 1 else pow(value, -1, ORDER)
                learnt = True
            else:
                self.products[monomial] = value
        return learnt


def _fixed(rows: Sequence[tuple[dict[Monomial, int], int]]) -> dict[Monomial, int]:
    """The unknowns a linear system fixes, and their values.

    Gauss–Jordan kept reduced as rows come in: each pivot is stored as ``pivot = value −
    Σ coefficient · free unknown``; a pivot left with no free unknown is fixed.  The pivot of a
    row is its rarest unknown (a proof's nonce, in practice), which keeps the rows sparse."""
    rarity = Counter(m for row, _ in rows for m in row)
    pivots: dict[Monomial, tuple[dict[Monomial, int], int]] = {}
    users: dict[Monomial, set[Monomial]] = defaultdict(set)  # free unknown → pivots that mention it

    def substitute(target: dict[Monomial, int], value: int, pivot: Monomial) -> int:
        """Put the pivot's expression in place of it in ``target``; the new value."""
        c = target.pop(pivot)
        rest, pivot_value = pivots[pivot]
        for m, d in rest.items():
            total = (target.get(m, 0) - c * d) % ORDER
            if total:
                target[m] = total
            else:
                target.pop(m, None)
        return (value - c * pivot_value) % ORDER

    for given, value in rows:
        row = dict(given)
        for m in [m for m in row if m in pivots]:
            value = substitute(row, value, m)
        if not row:
            assert value == 0, "the published scalars contradict one another"
            continue
        pivot = min(row, key=lambda m: (rarity[m], m))
        inverse = pow(row.pop(pivot), -1, ORDER)
        rest = {m: c * inverse % ORDER for m, c in row.items()}
        pivots[pivot] = (rest, value * inverse % ORDER)
        for other in users.pop(pivot, set()):
            other_rest, other_value = pivots[other]
            before = set(other_rest)
            pivots[other] = (other_rest, substitute(other_rest, other_value, pivot))
            for m in before - set(other_rest):
                users[m].discard(other)
            for m in set(other_rest) - before:
                users[m].add(other)
        for m in rest:
            users[m].add(pivot)
    return {pivot: value for pivot, (rest, value) in pivots.items() if not rest}


# --- the check ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardLeak:
    """A coalition can strip every factor off a term that holds a hidden card."""

    coalition: frozenset[int]
    place: Place
    card: int
    where: str  #: the payload (``kind/seat@n``) and the path of the value


@dataclass(frozen=True)
class PermutationLeak:
    """A coalition can open a value of a shuffle proof of a seat outside it."""

    coalition: frozenset[int]
    seat: int
    where: str


Leak = CardLeak | PermutationLeak


def leaks(
    tracer: Tracer, setup: DeckSetup, payloads: Sequence[DeckPayload], extra: Sequence[object] = ()
) -> list[Leak]:
    """Every leak, to every coalition of n − 1 seats, of the values ``payloads`` carry —
    and ``extra``, values a test publishes beside them (a payload of another design)."""
    published = [*payloads, *extra]
    equations = [
        (value.expr, group.to_int(value))
        for payload in published
        for _, value in traced_values(payload)
        if value.expr.is_scalar
    ] + tracer.public_relations()
    last_lock = next(p for p in reversed(payloads) if isinstance(p, Lock))
    position_of = {
        tracer.bases[base].card: j
        for j, point in enumerate(last_lock.locked)
        for _, base in expr_of(point).terms
    }
    found: list[Leak] = []
    for coalition in map(frozenset, combinations(range(setup.players), setup.players - 1)):
        knowledge = Knowledge(tracer, coalition, equations)
        found += _leaks_to(tracer, setup, payloads, published, coalition, knowledge, position_of)
    return found


def expr_of(value: bytes) -> Expr:
    assert isinstance(value, Traced), "an untraced value"
    return value.expr


def _leaks_to(
    tracer: Tracer,
    setup: DeckSetup,
    payloads: Sequence[DeckPayload],
    published: Sequence[object],
    coalition: frozenset[int],
    knowledge: Knowledge,
    position_of: Mapping[int | None, int],
) -> Iterator[Leak]:
    shown = shown_places(setup, payloads)
    shufflers = [p.seat for p in payloads if isinstance(p, Shuffle)]
    known_permutations = set(coalition)
    for n, payload in enumerate(published):
        if isinstance(payload, Shuffle) and payload.seat not in coalition:
            for path, value in traced_values(payload.proof):
                if knowledge.opens(value.expr):
                    known_permutations.add(payload.seat)
                    yield PermutationLeak(
                        coalition,
                        payload.seat,
                        f"{_ref(payload, n)} proof.{'.'.join(map(str, path))}",
                    )
    for n, payload in enumerate(published):
        unfollowed = (
            isinstance(payload, Shuffle)
            and not set(shufflers[shufflers.index(payload.seat) + 1 :]) <= known_permutations
        )
        for path, value in traced_values(payload):
            for monomial, base in value.expr.terms:
                card = None if base == SCALAR else tracer.bases[base].card
                if card is None:
                    continue
                place = (
                    Place(True, int(path[1]))
                    if isinstance(payload, EcartCommitment)
                    else Place(False, position_of[card])
                )
                if place in shown or owner_of(place, setup, payloads) in coalition:
                    continue
                if (unfollowed and path[0] == "points") or not knowledge.knows(monomial):
                    continue
                yield CardLeak(
                    coalition, place, card, f"{_ref(payload, n)} {'.'.join(map(str, path))}"
                )


def _ref(payload: object, n: int) -> str:
    return f"{getattr(payload, 'KIND', type(payload).__name__)}/{getattr(payload, 'seat', '?')}@{n}"
