"""The group the deck lives in: the prime-order subgroup of Ed25519, through libsodium.

Everything the deck protocol computes on goes through this module, so that the choice of
group can change in one place (ristretto255 would be faster but PyNaCl does not expose it).

Points and scalars are plain 32-byte strings — exactly what goes on the wire — so nothing
is converted back and forth between messages and arithmetic.  A point is *trusted* only
after :func:`check_point` (libsodium's ``is_valid_point``: canonical encoding, not of small
order, in the prime-order subgroup), a scalar only after :func:`check_scalar` (canonical,
i.e. below the group order ``ORDER``, and non-zero).  Every value received from another
seat goes through one of the two before any arithmetic touches it; they raise
:class:`GroupError`, a ``ValueError`` with a message that says what was wrong.

Card *c* is the point ``M_c = from_uniform(SHA-256("tarot/v2/card" ‖ c))``: a hash to the
curve, so nobody knows the discrete log between two cards (nor between a card and any other
point made by :func:`hash_to_point`, such as the shuffle proof's generators).
:func:`card_of` is the reverse lookup a recipient uses after decrypting a dealt position.

Scalars are also handled as Python integers modulo :data:`ORDER` inside the proofs, where
there is much arithmetic on them and little on points (:func:`to_int`, :func:`from_int`).

:data:`MULTS` counts scalar multiplications, the unit of cost of the protocol, so that the
benchmark can compare what was done with what the protocol needs at least.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import suppress
from functools import cache, reduce
from typing import Callable, Iterable, Sequence, TypeVar

from nacl import bindings as _sodium
from nacl.exceptions import CryptoError

POINT_BYTES = 32
SCALAR_BYTES = 32
#: ℓ, the order of the prime-order subgroup (and the modulus of scalars).
ORDER = 2**252 + 27742317777372353535851937790883648493

Point = bytes  #: 32 bytes, the canonical encoding of a point of the prime-order subgroup
Scalar = bytes  #: 32 bytes little-endian, canonical (< ORDER) and non-zero


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
    if not _sodium.crypto_core_ed25519_is_valid_point(data):
        raise GroupError(
            f"{what} is not a point of the prime-order subgroup "
            "(non-canonical encoding, small order or outside the subgroup)"
        )
    return data


def first_invalid_point(points: Sequence[object]) -> int | None:
    """The index of the first entry of ``points`` that :func:`check_point` would refuse, or
    None.  A shuffle or lock step sends 78 or 156 points, each checked by every other seat
    (≈ 0.4 of a multiplication each): the checks are spread over the cores like
    :func:`mul_batches`."""
    parts = _slices(len(points))
    if len(parts) < 2:
        return _first_invalid(points, 0)

    def first_in(part: slice) -> int | None:
        return _first_invalid(points[part], part.start)

    return next((bad for bad in _pool().map(first_in, parts) if bad is not None), None)


def _first_invalid(points: Sequence[object], offset: int) -> int | None:
    is_valid = _sodium.crypto_core_ed25519_is_valid_point
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
    """``scalar · point``.  libsodium re-checks that ``point`` is in the subgroup."""
    MULTS.value += 1
    try:
        return _sodium.crypto_scalarmult_ed25519_noclamp(scalar, point)
    except CryptoError:
        raise GroupError("scalar multiplication of an invalid point or to the identity") from None


def mul_batches(batches: Sequence[tuple[Sequence[Scalar], Sequence[Point]]]) -> list[list[Point] | GroupError]:
    """``[s · p for s, p in zip(scalars, points)]`` for each batch, the batches spread over
    the machine's cores — for work whose batches do not depend on one another, like the
    audit's replay of every shuffle and lock from the step published before it.  libsodium
    runs without Python's lock (cffi releases it around each call), so two cores nearly
    halve the time.  A batch that meets an invalid point gives its :class:`GroupError`
    instead of a result, for the caller to raise where the sequential order would have."""
    MULTS.value += sum(len(scalars) for scalars, _ in batches)  # counted here, in one thread
    return _spread(_mul_batch, batches)


_Batch = TypeVar("_Batch")


def _spread(work: Callable[[_Batch], list[Point] | GroupError], batches: Sequence[_Batch]) -> list[list[Point] | GroupError]:
    """``work`` on each batch, over the cores when there are several."""
    if len(batches) < 2 or _WORKERS < 2:
        return [work(batch) for batch in batches]
    return list(_pool().map(work, batches))


def _joined(batches: Iterable[list[Point] | GroupError]) -> list[Point]:
    """The batches' products end to end; the first batch's :class:`GroupError` raised."""
    products: list[Point] = []
    for batch in batches:
        if isinstance(batch, GroupError):
            raise batch
        products += batch
    return products


def mul_each(scalars: Sequence[Scalar], points: Sequence[Point]) -> list[Point]:
    """``[s · p for s, p in zip(scalars, points)]`` in slices over the cores: a seat's own
    shuffle or lock step (78 multiplications at a time) is what the other seats wait for."""
    if len(scalars) != len(points):
        raise ValueError(f"{len(scalars)} scalars for {len(points)} points")
    return _joined(mul_batches([(scalars[part], points[part]) for part in _slices(len(points))]))


def _mul_batch(batch: tuple[Sequence[Scalar], Sequence[Point]]) -> list[Point] | GroupError:
    scalars, points = batch
    multiply = _sodium.crypto_scalarmult_ed25519_noclamp
    try:
        return [multiply(scalar, point) for scalar, point in zip(scalars, points, strict=True)]
    except CryptoError:
        return GroupError("scalar multiplication of an invalid point or to the identity")


_WORKERS = min(4, os.cpu_count() or 1)
_CHUNK = 40  #: the fewest points a worker is handed (a handover costs about one check)


def _slices(length: int) -> list[slice]:
    """``range(length)`` cut into one slice per worker, none shorter than :data:`_CHUNK`."""
    size = max(_CHUNK, -(-length // _WORKERS))
    return [slice(k, k + size) for k in range(0, length, size)]


def _pool() -> ThreadPoolExecutor:
    """The pool for the calling thread's work: the background pool's threads hand theirs on
    to one another, at their own low priority (see :func:`in_background`)."""
    return _background_pool() if _in_background() else _foreground_pool()


@cache
def _foreground_pool() -> ThreadPoolExecutor:
    """Made on first use: most processes never need it."""
    return ThreadPoolExecutor(_WORKERS, thread_name_prefix="tarot-mul")


#: The niceness of background threads: the lowest, so that they run on what the work
#: somebody waits for leaves of the cores.
BACKGROUND_NICENESS = 19
#: Seconds a caller leaves its work to the background before doing it itself.  With the
#: five daemons of a table on two cores, a background check was done in 25 ms at the median
#: and 110 ms at worst (171 checks of a ``tarot bench --quick``).
BACKGROUND_PATIENCE = 0.5
_background = threading.local()
_T = TypeVar("_T")


def in_background(work: Callable[[], _T], patience: float = BACKGROUND_PATIENCE) -> _T:
    """``work()``, on threads of the lowest CPU priority; the caller waits for it — for
    ``patience`` seconds, then does the work itself, at its own priority.

    For checks nobody waits for.  When the five daemons of a table share a machine's cores,
    every seat checks each shuffle and lock step as it comes, while the next seat must check
    it and then compute its own — the step everybody waits for.  With the other seats'
    checks on low-priority threads, the next seat's work gets the cores first.  The checks
    are the same and done before the caller goes on: only the order in which the machine
    runs them changes.  (A thread's own niceness is Linux's; elsewhere the work runs at the
    usual priority.)

    The patience is for a machine whose cores are never free — fifty daemons on two, in the
    load test — where a thread of niceness 19 gets a sliver of a core for seconds on end,
    and the caller, a daemon's event loop, answers no heartbeat meanwhile: its peers took it
    for gone and tables were abandoned.  The starved copy is dropped if it has not started,
    else left to finish, its result thrown away.  So ``work`` may run twice at once: it
    must read nothing another thread changes and change nothing.  Until that copy is done
    it holds the background (the pool has one thread for ``work`` and enough for the slices
    it hands on, not for two), and other callers do their work at once, themselves."""
    if _in_background():
        return work()  # already there
    turn = _background_turn()
    if not turn.acquire(blocking=False):
        return work()
    future = _background_pool().submit(work)
    future.add_done_callback(lambda _: turn.release())
    done, _ = wait([future], timeout=patience)
    if done:
        return future.result()
    future.cancel()
    return work()


def _in_background() -> bool:
    return getattr(_background, "active", False)


@cache
def _background_turn() -> threading.Lock:
    """Held while a work is in the background.  Made again in a forked child, like the pools:
    a lock a parent's thread held is never released there."""
    return threading.Lock()


@cache
def _background_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_WORKERS + 1, thread_name_prefix="tarot-background", initializer=_into_background)


def _into_background() -> None:
    _background.active = True
    if sys.platform.startswith("linux"):  # a thread's own niceness (POSIX would renice the process)
        with suppress(OSError):  # a sandbox that forbids it: the work runs at the usual priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)


# A forked child (a process pool's worker, say) has none of the parent's threads: its work
# must not wait in the parent's pools' queues for them, so it makes its own.
os.register_at_fork(after_in_child=_foreground_pool.cache_clear)
os.register_at_fork(after_in_child=_background_pool.cache_clear)
os.register_at_fork(after_in_child=_background_turn.cache_clear)


def base_mul(scalar: Scalar) -> Point:
    """``scalar · G`` for the standard generator ``G``."""
    MULTS.value += 1
    MULTS.fixed_base += 1
    try:
        return _sodium.crypto_scalarmult_ed25519_base_noclamp(scalar)
    except CryptoError:
        raise GroupError("scalar multiplication of the generator by zero") from None


def base_mul_each(scalars: Sequence[Scalar]) -> list[Point]:
    """``[s · G for s in scalars]``, in slices over the cores like :func:`mul_each`."""
    MULTS.value += len(scalars)
    MULTS.fixed_base += len(scalars)
    return _joined(_spread(_base_mul_batch, [scalars[part] for part in _slices(len(scalars))]))


def _base_mul_batch(scalars: Sequence[Scalar]) -> list[Point] | GroupError:
    multiply = _sodium.crypto_scalarmult_ed25519_base_noclamp
    try:
        return [multiply(scalar) for scalar in scalars]
    except CryptoError:
        return GroupError("scalar multiplication of the generator by zero")


def add(p: Point, q: Point) -> Point:
    try:
        return _sodium.crypto_core_ed25519_add(p, q)
    except CryptoError:
        raise GroupError("point addition of an invalid point") from None


def sub(p: Point, q: Point) -> Point:
    """``p − q``."""
    try:
        return _sodium.crypto_core_ed25519_sub(p, q)
    except CryptoError:
        raise GroupError("point subtraction of an invalid point") from None


def point_sum(points: Sequence[Point]) -> Point:
    """The sum of a non-empty sequence of points: additions only, no multiplication."""
    if not points:
        raise ValueError("the sum of no points is not defined here")
    return reduce(add, points)


def scalar_mul(s: Scalar, t: Scalar) -> Scalar:
    return _sodium.crypto_core_ed25519_scalar_mul(s, t)


def scalar_sub(s: Scalar, t: Scalar) -> Scalar:
    return _sodium.crypto_core_ed25519_scalar_sub(s, t)


def scalar_product(scalars: Iterable[Scalar]) -> Scalar:
    """Product of non-zero scalars (non-zero too, the order being prime)."""
    return reduce(scalar_mul, scalars)


def invert(s: Scalar) -> Scalar:
    return _sodium.crypto_core_ed25519_scalar_invert(s)


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

CARD_DOMAIN = b"tarot/v2/card"


def hash_to_point(domain: bytes, index: int) -> Point:
    """A point of the subgroup nobody knows a discrete log of: libsodium's Elligator map of
    ``SHA-256(domain ‖ index)`` (one byte of index below 256, as the cards have always used)."""
    suffix = bytes([index]) if index < 256 else index.to_bytes(4, "big")
    return _sodium.crypto_core_ed25519_from_uniform(hashlib.sha256(domain + suffix).digest())


#: ``CARD_POINTS[c]`` is ``M_c`` for the card of deck index ``c`` (0..77).
CARD_POINTS: tuple[Point, ...] = tuple(hash_to_point(CARD_DOMAIN, index) for index in range(78))
_CARD_OF: dict[Point, int] = {point: index for index, point in enumerate(CARD_POINTS)}
assert len(_CARD_OF) == 78


def card_of(point: Point) -> int | None:
    """The deck index of the card whose point this is, or None for any other point."""
    return _CARD_OF.get(point)


MULTS.reset()  # GENERATOR above is not part of any deal
