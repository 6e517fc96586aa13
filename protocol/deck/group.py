"""The group the deck lives in: ristretto255 (RFC 9496), through libsodium as ``rbcl`` bundles it.

Everything the deck protocol computes on goes through this module, so that the choice of
group can change in one place (``tarot/v2`` used Ed25519's prime-order subgroup through
PyNaCl, whose every multiplication re-proved subgroup membership; ristretto255 is of prime
order by construction, its decoding is the whole check).

Points and scalars are plain 32-byte strings — exactly what goes on the wire — so nothing
is converted back and forth between messages and arithmetic.  A point is *trusted* only
after :func:`check_point` (libsodium's ``is_valid_point``: the canonical encoding of an
element of the group other than the identity — RFC 9496's decoding, which refuses
non-canonical, negative and non-square encodings), a scalar only after :func:`check_scalar`
(canonical, i.e. below the group order ``ORDER``, and non-zero).  Every value received from
another seat goes through one of the two before any arithmetic touches it; they raise
:class:`GroupError`, a ``ValueError`` with a message that says what was wrong.

**Hash to the group** (:func:`hash_to_point`) is RFC 9496's one-way map (§4.3.4,
``crypto_core_ristretto255_from_hash``) of 64 uniform bytes, which are
``SHA-512(u32(len(domain)) ‖ domain ‖ u32(index))`` (``u32``: 4 bytes big-endian): the
domain length-prefixed so that no (domain, index) pair reads as another.  Card *c* is the
point ``M_c = hash_to_point("tarot/v3/card", c)``, so nobody knows the discrete log between
two cards (nor between a card and any other point made by :func:`hash_to_point`, such as
the shuffle proof's generators).  :func:`card_of` is the reverse lookup a recipient uses
after decrypting a dealt position.

Scalars are also handled as Python integers modulo :data:`ORDER` inside the proofs, where
there is much arithmetic on them and little on points (:func:`to_int`, :func:`from_int`).

:data:`MULTS` counts scalar multiplications, the unit of cost of the protocol, so that the
benchmark can compare what was done with what the protocol needs at least.

The batch functions (:func:`mul_each`, :func:`base_mul_each`, :func:`mul_batches`,
:func:`first_invalid_point`) cut their work into independent slices and hand them to the
process's :class:`Scheduler`, and :func:`in_background` hands it the checks nobody waits
for.  The default, :data:`SERIAL`, runs everything in the caller's thread, so the protocol
itself starts no thread: the programs that want the cores — the daemon
(``tarotd.workers``), the tools that deal in one process (``client.workers``) — give theirs
to :func:`use_scheduler` when they start.  One per process rather than a parameter of every
proof function: the slices are deep inside the proofs, and how they run changes no result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from functools import reduce
from typing import Protocol, TypeVar

import rbcl as _sodium  # libsodium's ristretto255 (ctypes: the GIL is released in each call)

POINT_BYTES = 32
SCALAR_BYTES = 32
#: ℓ, the order of the group (and the modulus of scalars).
ORDER = 2**252 + 27742317777372353535851937790883648493

Point = bytes  #: 32 bytes, the canonical encoding of an element of ristretto255
Scalar = bytes  #: 32 bytes little-endian, canonical (< ORDER) and non-zero
#: The identity's encoding (RFC 9496): never a valid point on the wire, but what a sum of
#: opposite points is, and what libsodium leaves when it cannot decode an operand.
IDENTITY: Point = bytes(POINT_BYTES)


class GroupError(ValueError):
    """A byte string that is not a valid point or scalar, or arithmetic that left the group."""


class MultCounter:
    """How many scalar multiplications were done since the last :meth:`reset`.

    ``value`` counts all of them; ``fixed_base`` the subset by the generator ``G``, which
    libsodium does with precomputed tables at about a fifth of the cost.
    """

    __slots__ = ("value", "fixed_base")

    def __init__(self) -> None:
        self.value = 0
        self.fixed_base = 0

    def reset(self) -> None:
        self.value = 0
        self.fixed_base = 0


MULTS = MultCounter()


# --- validation of what comes from elsewhere --------------------------------------------


def check_point(data: object, what: str = "point") -> Point:
    """``data`` if it is a valid point; :class:`GroupError` naming ``what`` otherwise."""
    if not isinstance(data, bytes) or len(data) != POINT_BYTES:
        raise GroupError(f"{what} is not a {POINT_BYTES}-byte string")
    if not _is_valid(data):
        raise GroupError(
            f"{what} is not a ristretto255 point "
            "(not a canonical encoding of the group, or the identity)"
        )
    return data


def _is_valid(point: bytes) -> bool:
    """RFC 9496's decoding succeeds and the point is not the identity.  The libsodium that
    ``rbcl`` bundles (1.0.18) neither refuses an encoding whose top bit is set (it reads it
    as if clear: a second encoding of a valid point) nor the identity, so both are refused
    here first."""
    return (
        point[31] < 0x80
        and point != IDENTITY
        and bool(_sodium.crypto_core_ristretto255_is_valid_point(point))
    )


def first_invalid_point(points: Sequence[object]) -> int | None:
    """The index of the first entry of ``points`` that :func:`check_point` would refuse, or
    None.  A shuffle or lock step sends 78 or 156 points, each checked by every other seat
    (a decoding, about a tenth of a multiplication): the checks are sliced for the scheduler like
    :func:`mul_batches`."""
    parts = _slices(len(points))
    if len(parts) < 2:
        return _first_invalid(points, 0)

    def first_in(part: slice) -> int | None:
        return _first_invalid(points[part], part.start)

    return next((bad for bad in _scheduler.map(first_in, parts) if bad is not None), None)


def _first_invalid(points: Sequence[object], offset: int) -> int | None:
    is_valid = _is_valid
    for k, point in enumerate(points):
        if not (isinstance(point, bytes) and len(point) == POINT_BYTES and is_valid(point)):
            return offset + k
    return None


def check_scalar(data: object, what: str = "scalar") -> Scalar:
    """``data`` if it is a canonical non-zero scalar; :class:`GroupError` otherwise."""
    if not isinstance(data, bytes) or len(data) != SCALAR_BYTES:
        raise GroupError(f"{what} is not a {SCALAR_BYTES}-byte string")
    value = int.from_bytes(data, "little")
    if value >= ORDER:
        raise GroupError(f"{what} is not canonical (not below the group order)")
    if value == 0:
        raise GroupError(f"{what} is zero")
    return data


def scalar_from_digest(digest: bytes) -> Scalar:
    """A uniform non-zero scalar from 64 bytes of hash or HKDF output.

    Reducing 512 bits modulo ℓ−1 and adding one has a bias of 2⁻²⁵⁹ and can never give the
    zero scalar, which libsodium refuses to multiply by; no retry loop is needed.
    """
    if len(digest) != 64:
        raise ValueError("a scalar is derived from exactly 64 bytes")
    return (int.from_bytes(digest, "little") % (ORDER - 1) + 1).to_bytes(SCALAR_BYTES, "little")


# --- arithmetic ------------------------------------------------------------------------


def mul(scalar: Scalar, point: Point) -> Point:
    """``scalar · point``.  libsodium decodes ``point`` (the check) and refuses the identity
    as a result; a set top bit, which it would ignore, is refused here (:func:`_is_valid`), so
    that a proof's points, checked only by being multiplied, have one encoding each too."""
    MULTS.value += 1
    try:
        if point[31] >= 0x80:
            raise RuntimeError("non-canonical encoding")
        product: Point = _sodium.crypto_scalarmult_ristretto255(scalar, point)
        return product
    except (RuntimeError, TypeError, ValueError, IndexError):
        raise GroupError("scalar multiplication of an invalid point or to the identity") from None


def mul_batches(
    batches: Sequence[tuple[Sequence[Scalar], Sequence[Point]]],
) -> list[list[Point] | GroupError]:
    """``[s · p for s, p in zip(scalars, points)]`` for each batch, the batches handed to the
    process's :class:`Scheduler` — for work whose batches do not depend on one another, like
    the audit's replay of every shuffle and lock from the step published before it.  libsodium
    runs without Python's lock (ctypes releases it around each call), so a scheduler's threads on
    two cores nearly halve the time.  A batch that meets an invalid point gives its
    :class:`GroupError` instead of a result, for the caller to raise where the sequential
    order would have."""
    MULTS.value += sum(len(scalars) for scalars, _ in batches)  # counted here, in one thread
    return _spread(_mul_batch, batches)


_Batch = TypeVar("_Batch")


def _spread(
    work: Callable[[_Batch], list[Point] | GroupError], batches: Sequence[_Batch]
) -> list[list[Point] | GroupError]:
    """``work`` on each batch, on the scheduler when there are several."""
    if len(batches) < 2 or _scheduler.workers < 2:
        return [work(batch) for batch in batches]
    return _scheduler.map(work, batches)


def _joined(batches: Iterable[list[Point] | GroupError]) -> list[Point]:
    """The batches' products end to end; the first batch's :class:`GroupError` raised."""
    products: list[Point] = []
    for batch in batches:
        if isinstance(batch, GroupError):
            raise batch
        products += batch
    return products


def mul_each(scalars: Sequence[Scalar], points: Sequence[Point]) -> list[Point]:
    """``[s · p for s, p in zip(scalars, points)]`` in slices on the scheduler: a seat's own
    shuffle or lock step (78 multiplications at a time) is what the other seats wait for."""
    if len(scalars) != len(points):
        raise ValueError(f"{len(scalars)} scalars for {len(points)} points")
    return _joined(mul_batches([(scalars[part], points[part]) for part in _slices(len(points))]))


def _mul_batch(batch: tuple[Sequence[Scalar], Sequence[Point]]) -> list[Point] | GroupError:
    scalars, points = batch
    multiply = _sodium.crypto_scalarmult_ristretto255
    try:
        if any(point[31] >= 0x80 for point in points):  # as in :func:`mul`
            raise RuntimeError("non-canonical encoding")
        return [multiply(scalar, point) for scalar, point in zip(scalars, points, strict=True)]
    except (RuntimeError, TypeError, ValueError, IndexError):
        return GroupError("scalar multiplication of an invalid point or to the identity")


_CHUNK = 40  #: the fewest points a worker is handed (a handover costs about one check)
#: The most workers a scheduler need offer: the batches are of 78 to 156 points, and more
#: than four slices of them gained nothing.
MAX_WORKERS = 4


def _slices(length: int) -> list[slice]:
    """``range(length)`` cut into one slice per worker, none shorter than :data:`_CHUNK`."""
    size = max(_CHUNK, -(-length // _scheduler.workers))
    return [slice(k, k + size) for k in range(0, length, size)]


_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class Scheduler(Protocol):
    """How the process runs the group's independent work (module docstring)."""

    @property
    def workers(self) -> int:
        """How many slices the batch functions cut their work into (at most)."""
        ...

    def map(self, work: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
        """``[work(item) for item in items]``, in any order or at once: the items are
        independent and ``work`` changes nothing another item reads."""
        ...

    def in_background(self, work: Callable[[], _Result]) -> _Result:
        """``work()``, a check nobody waits for: the caller still waits for its result, but
        the machine may give other work its cores first (the daemon's runs it on threads of
        the lowest priority)."""
        ...


class Serial:
    """Everything in the caller's thread, one item after the other."""

    workers = 1

    def map(self, work: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
        return [work(item) for item in items]

    def in_background(self, work: Callable[[], _Result]) -> _Result:
        return work()


SERIAL: Scheduler = Serial()
_scheduler: Scheduler = SERIAL


def use_scheduler(scheduler: Scheduler) -> Scheduler:
    """Run the group's work on ``scheduler`` from now on; the one it replaces is returned
    (for a test to put back)."""
    global _scheduler
    previous, _scheduler = _scheduler, scheduler
    return previous


def binding_file() -> str | None:
    """The temporary file ``rbcl`` wrote the libsodium it bundles to, to load it from there:
    it writes a new one at each import and never removes it (2.7 MB a process, thousands in a
    test run).  Loaded, the library needs the file no more; the programs (``tarot``,
    ``tarotd``) remove it when they start — this module touches no file.  None in the fault
    simulator's stand-in group, or if ``rbcl`` ever loads its library otherwise."""
    name = getattr(getattr(_sodium, "_sodium", None), "_name", None)
    if not isinstance(name, str):
        return None
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return name if base.startswith("tmp") and base.endswith((".so", ".pyd")) else None


def in_background(work: Callable[[], _Result]) -> _Result:
    """``work()`` on the process's scheduler, as a check nobody waits for."""
    return _scheduler.in_background(work)


def base_mul(scalar: Scalar) -> Point:
    """``scalar · G`` for the standard generator ``G``."""
    MULTS.value += 1
    MULTS.fixed_base += 1
    try:
        product: Point = _sodium.crypto_scalarmult_ristretto255_base(scalar)
        return product
    except RuntimeError:
        raise GroupError("scalar multiplication of the generator by zero") from None


def base_mul_each(scalars: Sequence[Scalar]) -> list[Point]:
    """``[s · G for s in scalars]``, in slices on the scheduler like :func:`mul_each`."""
    MULTS.value += len(scalars)
    MULTS.fixed_base += len(scalars)
    return _joined(_spread(_base_mul_batch, [scalars[part] for part in _slices(len(scalars))]))


def _base_mul_batch(scalars: Sequence[Scalar]) -> list[Point] | GroupError:
    multiply = _sodium.crypto_scalarmult_ristretto255_base
    try:
        return [multiply(scalar) for scalar in scalars]
    except RuntimeError:
        return GroupError("scalar multiplication of the generator by zero")


def add(p: Point, q: Point) -> Point:
    """``p + q``.  libsodium's addition only says through its return code, which the binding
    drops, that an operand did not decode: an identity result is checked for that."""
    return _combined(_sodium.crypto_core_ristretto255_add, p, q, "addition")


def sub(p: Point, q: Point) -> Point:
    """``p − q``."""
    return _combined(_sodium.crypto_core_ristretto255_sub, p, q, "subtraction")


def _combined(operation: Callable[[Point, Point], Point], p: Point, q: Point, what: str) -> Point:
    try:
        result = operation(p, q)
    except (RuntimeError, TypeError, ValueError):
        raise GroupError(f"point {what} of an invalid point") from None
    if result == IDENTITY and not all(_decodes(point) for point in (p, q)):
        raise GroupError(f"point {what} of an invalid point")
    return result


def _decodes(point: Point) -> bool:
    """Whether ``point`` is the encoding of an element (the identity included)."""
    return point == IDENTITY or _is_valid(point)


def point_sum(points: Sequence[Point]) -> Point:
    """The sum of a non-empty sequence of points: additions only, no multiplication."""
    if not points:
        raise ValueError("the sum of no points is not defined here")
    return reduce(add, points)


def scalar_mul(s: Scalar, t: Scalar) -> Scalar:
    product: Scalar = _sodium.crypto_core_ristretto255_scalar_mul(s, t)
    return product


def scalar_product(scalars: Iterable[Scalar]) -> Scalar:
    """Product of non-zero scalars (non-zero too, the order being prime)."""
    return reduce(scalar_mul, scalars)


def invert(s: Scalar) -> Scalar:
    inverse: Scalar = _sodium.crypto_core_ristretto255_scalar_invert(s)
    return inverse


def to_int(s: Scalar) -> int:
    return int.from_bytes(s, "little")


def from_int(value: int) -> Scalar:
    """The scalar ``value mod ORDER``; :class:`GroupError` if that is zero, which libsodium
    refuses to multiply by (an honest prover meets it with probability 2⁻²⁵²)."""
    value %= ORDER
    if value == 0:
        raise GroupError("a scalar reduced to zero")
    return value.to_bytes(SCALAR_BYTES, "little")


GENERATOR: Point = base_mul((1).to_bytes(SCALAR_BYTES, "little"))


# --- the 78 card points ----------------------------------------------------------------

CARD_DOMAIN = b"tarot/v3/card"


def uniform_bytes(domain: bytes, index: int) -> bytes:
    """The 64 uniform bytes :func:`hash_to_point` maps: ``SHA-512(u32(len(domain)) ‖ domain ‖
    u32(index))``, every ``u32`` 4 bytes big-endian."""
    if not 0 <= index < 2**32:
        raise ValueError(f"index {index} is not a 32-bit unsigned integer")
    framed = len(domain).to_bytes(4, "big") + domain + index.to_bytes(4, "big")
    return hashlib.sha512(framed).digest()


def from_uniform(digest: bytes) -> Point:
    """RFC 9496's one-way map (hash-to-group) of 64 uniform bytes."""
    if len(digest) != 64:
        raise ValueError("the one-way map takes exactly 64 bytes")
    point: Point = _sodium.crypto_core_ristretto255_from_hash(digest)
    return point


def hash_to_point(domain: bytes, index: int) -> Point:
    """A point nobody knows a discrete log of: :func:`from_uniform` of
    :func:`uniform_bytes` ``(domain, index)``."""
    return from_uniform(uniform_bytes(domain, index))


#: ``CARD_POINTS[c]`` is ``M_c`` for the card of deck index ``c`` (0..77).
CARD_POINTS: tuple[Point, ...] = tuple(hash_to_point(CARD_DOMAIN, index) for index in range(78))
_CARD_OF: dict[Point, int] = {point: index for index, point in enumerate(CARD_POINTS)}
assert len(_CARD_OF) == 78


def card_of(point: Point) -> int | None:
    """The deck index of the card whose point this is, or None for any other point."""
    return _CARD_OF.get(point)


MULTS.reset()  # GENERATOR above is not part of any deal
