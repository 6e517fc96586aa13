"""A stand-in for libsodium's ristretto255 (as ``rbcl`` binds it), for the fault simulator
only: the additive group of integers modulo ℓ, whose "points" are 32-byte little-endian
integers and whose generator is 1.

Discrete logarithms are trivial there, so it hides nothing; what it keeps is the algebra —
``a·(b·P) = (ab)·P``, sums, inverses, a hash onto the group — so that every step, proof and
check of the deck computes and verifies exactly as on the curve, some fifty times faster.  The
simulator studies who agrees with whom when the network fails, not secrecy: the deck's
secrecy is tested on the real group (``tests/test_deck_secrecy.py``).

:func:`install` must run before anything imports :mod:`protocol.deck.group`, which computes the
card points when it loads; it refuses otherwise rather than mix two groups in one process.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

ORDER = 2**252 + 27742317777372353535851937790883648493


def _int(data: bytes) -> int:
    return int.from_bytes(data, "little")


def _bytes(value: int) -> bytes:
    return value.to_bytes(32, "little")


def _point(data: bytes) -> int:
    value = _int(data)
    if len(data) != 32 or not 0 < value < ORDER:
        raise RuntimeError("not a point")
    return value


def _mul(scalar: bytes, point: bytes) -> bytes:
    product = _int(scalar) * _point(point) % ORDER
    if product == 0:
        raise RuntimeError("the identity")
    return _bytes(product)


def _base_mul(scalar: bytes) -> bytes:
    value = _int(scalar) % ORDER
    if value == 0:
        raise RuntimeError("the identity")
    return _bytes(value)


def _element(data: bytes) -> int:
    """Like :func:`_point` but the identity (0) decodes too, as libsodium's addition takes it."""
    return 0 if data == bytes(32) else _point(data)


def _add(p: bytes, q: bytes) -> bytes:
    return _bytes((_element(p) + _element(q)) % ORDER)


def _sub(p: bytes, q: bytes) -> bytes:
    return _bytes((_element(p) - _element(q)) % ORDER)


def _valid(data: bytes) -> bool:
    return len(data) == 32 and 0 < _int(data) < ORDER


def _from_hash(digest: bytes) -> bytes:
    return _bytes(_int(digest) % (ORDER - 1) + 1)


#: The functions of ``rbcl`` that :mod:`protocol.deck.group` calls, by the same names.
BINDING = SimpleNamespace(
    crypto_core_ristretto255_is_valid_point=_valid,
    crypto_scalarmult_ristretto255=_mul,
    crypto_scalarmult_ristretto255_base=_base_mul,
    crypto_core_ristretto255_add=_add,
    crypto_core_ristretto255_sub=_sub,
    crypto_core_ristretto255_scalar_mul=lambda s, t: _bytes(_int(s) * _int(t) % ORDER),
    crypto_core_ristretto255_scalar_invert=lambda s: _bytes(pow(_int(s), -1, ORDER)),
    crypto_core_ristretto255_from_hash=_from_hash,
)


def install() -> None:
    """Make :mod:`protocol.deck.group` compute in the stand-in group (before it is imported)."""
    if "protocol.deck.group" in sys.modules:
        group = sys.modules["protocol.deck.group"]
        if getattr(group, "_sodium", None) is BINDING:
            return
        raise RuntimeError(
            "protocol.deck.group is loaded already: install the simulator's group first "
            "(run the simulator in its own process: python -m lab.faultsim)"
        )
    real = sys.modules.get("rbcl")
    sys.modules["rbcl"] = BINDING  # type: ignore[assignment]  # what ``import rbcl`` takes
    try:
        import protocol.deck.group  # noqa: F401  (loads on the stand-in)
    finally:
        if real is None:
            del sys.modules["rbcl"]
        else:
            sys.modules["rbcl"] = real
