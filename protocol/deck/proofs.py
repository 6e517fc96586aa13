"""What the deck's zero-knowledge proofs share: where a proof belongs, and Fiat–Shamir.

Both proofs of the deck (:mod:`protocol.deck.shuffle_proof`, :mod:`protocol.deck.lock_proof`) are
sigma protocols made non-interactive: the verifier's random challenges are hashes of
everything said before them.  Each hash starts with a domain tag and a :class:`Binding` —
table id, deal number, seat and step — so that a proof made for one step of one deal verifies
nowhere else.

The prover's nonces are not drawn at random but derived from the seat's secret nonce key and
the statement (as in EdDSA, :class:`Nonces`): a deal replays byte for byte from its seeds, and
two different statements never share a nonce — a nonce used for two challenges would give the
secret away.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.deck.group import (
    ORDER,
    SCALAR_BYTES,
    Point,
    Scalar,
    check_scalar,
    scalar_from_digest,
    to_int,
)

NONCE_DOMAIN = b"tarot/v3/proof-nonce"


def frame(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: no two different lists of parts give the same bytes."""
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def hash_to_scalar(*parts: bytes) -> Scalar:
    return scalar_from_digest(hashlib.sha512(frame(*parts)).digest())


def hash_to_int(*parts: bytes) -> int:
    """:func:`hash_to_scalar` as an integer in 1..ORDER−1."""
    return to_int(hash_to_scalar(*parts))


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


def statement_digest(
    domain: bytes, binding: Binding, *groups: tuple[Point, ...] | list[Point] | Point
) -> bytes:
    """SHA-512 of a proof's statement: its domain, binding and every point of it, in order.
    A group of points is framed as one part, so that moving a point from one group to the
    next changes the digest."""
    parts = [domain, binding.encode()]
    for group in groups:
        parts.append(group if isinstance(group, bytes) else frame(*group))
    return hashlib.sha512(frame(*parts)).digest()


def follow_up(digest: bytes, *points: Point) -> bytes:
    """A statement digest extended by what the prover committed to since: the next
    challenges depend on both."""
    return hashlib.sha512(frame(digest, *points)).digest()


def challenges(digest: bytes, label: bytes, count: int) -> list[int]:
    """``count`` challenges in 1..ORDER−1 from a statement digest (the verifier's coins)."""
    return [hash_to_int(digest, label, k.to_bytes(2, "big")) for k in range(count)]


class Nonces:
    """The prover's random-looking scalars for one statement, derived from its nonce key."""

    def __init__(self, nonce_key: bytes, digest: bytes) -> None:
        self._key = nonce_key
        self._digest = digest

    def take(self, label: bytes, count: int) -> list[int]:
        return [
            hash_to_int(NONCE_DOMAIN, self._key, self._digest, label, k.to_bytes(2, "big"))
            for k in range(count)
        ]

    def one(self, label: bytes) -> int:
        return self.take(label, 1)[0]


class ProofWireError(ValueError):
    """A proof that is malformed on the wire (wrong types or lengths); the text says which."""


@dataclass(frozen=True)
class ProofWire:
    """Reads one kind of proof from its wire map: the map's fields, and lists of points or
    scalars of a given count, each refused with a :class:`ProofWireError` that names the proof."""

    what: str  #: "shuffle proof", "lock proof"
    fields: tuple[str, ...]

    def read(self, obj: object) -> dict[str, Any]:
        if not isinstance(obj, dict) or set(obj) != set(self.fields):
            raise ProofWireError(f"a {self.what} is a map of exactly {', '.join(self.fields)}")
        return obj

    def byte_list(self, value: object, name: str, length: int, count: int) -> tuple[bytes, ...]:
        if not isinstance(value, (list, tuple)) or len(value) != count:
            raise ProofWireError(f"{self.what}: {name} must be a list of {count} entries")
        if not all(isinstance(item, bytes) and len(item) == length for item in value):
            raise ProofWireError(f"{self.what}: every entry of {name} must be {length} bytes")
        return tuple(value)

    def scalars(self, value: object, name: str, count: int) -> tuple[Scalar, ...]:
        """Canonical non-zero scalars: :class:`~protocol.deck.group.GroupError` for one that is
        not."""
        items = self.byte_list(value, name, SCALAR_BYTES, count)
        return tuple(check_scalar(item, f"{name}[{k}]") for k, item in enumerate(items))


def shaped(items: object, count: int, length: int) -> bool:
    """Whether ``items`` is a list of exactly ``count`` byte strings of ``length`` bytes each.

    A verifier asks it of every list of a statement and of a proof before it reads any: a
    short list would otherwise let ``zip`` drop the last entries unchecked (a link of the
    shuffle's chain, say), and a malformed entry must make the proof false, not raise."""
    return (
        isinstance(items, (tuple, list))
        and len(items) == count
        and all(isinstance(item, bytes) and len(item) == length for item in items)
    )


def canonical(scalars: Sequence[bytes]) -> bool:
    """Whether every one of ``scalars`` is canonical and non-zero (:func:`check_scalar`): a
    verifier's responses and challenge, read through the Python API and not the wire."""
    return all(0 < to_int(s) < ORDER for s in scalars)


def response(nonce: int, challenge: int, secret: int) -> int:
    """A sigma protocol's answer ``nonce + challenge·secret``, which hides the secret as long
    as the nonce is used once."""
    return (nonce + challenge * secret) % ORDER
