"""The deck's payloads (:mod:`protocol.deck.public_deck` says what each round carries) and
their wire form.

A payload checks its own shape when it is built, from the wire or locally: a malformed one
is refused there with :class:`WireError`, before any check of the deck's state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Self, TypeVar

from protocol.deck.group import (
    POINT_BYTES,
    SCALAR_BYTES,
    GroupError,
    Point,
    Scalar,
)
from protocol.deck.lock_proof import LockProof, LockStep
from protocol.deck.proofs import ProofWireError
from protocol.deck.seeds import DECK_SIZE, SEED_BYTES
from protocol.deck.shuffle_proof import ShuffleProof
from protocol.wire import array, blob, choice, fields, integer, refused_as

COMMITMENT_BYTES = 32
_Parsed = TypeVar("_Parsed")


class WireError(ValueError):
    """A payload that is malformed: wrong type, length or count.  The text says what."""


def _need(condition: bool, kind: str, message: str) -> None:
    """A payload's own rule, beyond the types of its fields (a place opened twice, say)."""
    if not condition:
        raise WireError(f"{kind} payload: {message}")


@contextmanager
def _gate(kind: str) -> Iterator[None]:
    """The gate's field checks (:mod:`protocol.wire`), refused as a :class:`WireError` that
    names the payload."""
    with refused_as(lambda text: WireError(f"{kind} payload: {text}")):
        yield


def _check_bytes(kind: str, name: str, value: object, length: int) -> None:
    with _gate(kind):
        blob(name, value, length)


def _check_byte_strings(
    kind: str, name: str, values: object, length: int, count: int | None = None
) -> None:
    if not isinstance(values, tuple):
        raise WireError(f"{kind} payload: {name} must be a list")
    with _gate(kind):
        array(name, list(values), length=count, max_length=DECK_SIZE)
        for k, value in enumerate(values):
            blob(f"{name}[{k}]", value, length)


def _check_index(kind: str, name: str, value: object, size: int = DECK_SIZE) -> None:
    with _gate(kind):
        integer(name, value, 0, size - 1)


def _check_seat(kind: str, seat: object) -> None:
    with _gate(kind):
        integer("seat", seat, 0, 4)


def _as_tuple(kind: str, name: str, value: object) -> tuple[Any, ...]:
    """A list from the wire; a tuple, from a caller that built the map itself."""
    with _gate(kind):
        return tuple(array(name, list(value) if isinstance(value, tuple) else value))


def _fields(obj: object, kind: str, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a wire map, after checking it is a map of this kind with exactly them."""
    with refused_as(WireError):
        f = fields(f"{kind} payload", obj, ("kind", "seat", *names))
    _need(f["kind"] == kind, kind, f"kind is {f['kind']!r}")
    return f


@dataclass(frozen=True)
class Opening:
    """One key published for one place — a pack position or a re-commitment — and the card
    the publisher says it opens."""

    where: int
    key: Scalar
    card: int

    def __post_init__(self) -> None:
        _check_index("opening", "where", self.where)
        _check_bytes("opening", "key", self.key, SCALAR_BYTES)
        _check_index("opening", "card", self.card)

    def to_wire(self) -> list[object]:
        return [self.where, self.key, self.card]

    @classmethod
    def from_wire(cls, obj: object) -> Opening:
        item = _as_tuple("opening", "an opening", obj)
        _need(len(item) == 3, "opening", "an opening is [where, key, card]")
        return cls(item[0], item[1], item[2])


def _check_openings(kind: str, openings: object, places: int, *, allow_none: bool = False) -> None:
    """A list of :class:`Opening` of distinct places below ``places``."""
    if not isinstance(openings, tuple) or not all(isinstance(o, Opening) for o in openings):
        raise WireError(f"{kind} payload: openings must be a list of openings")
    _need(allow_none or bool(openings), kind, "opens nothing")
    _need(all(o.where < places for o in openings), kind, f"opens a place beyond {places - 1}")
    _need(len({o.where for o in openings}) == len(openings), kind, "opens a place twice")


def _openings_from_wire(kind: str, value: object) -> tuple[Opening, ...]:
    return tuple(Opening.from_wire(item) for item in _as_tuple(kind, "openings", value))


@dataclass(frozen=True)
class Commit:
    KIND: ClassVar[str] = "commit"
    seat: int
    commitment: bytes  #: H(seed), bound to the table, deal and seat
    blanket_public: Point  #: A = a·G

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_bytes(self.KIND, "commitment", self.commitment, COMMITMENT_BYTES)
        _check_bytes(self.KIND, "blanket_public", self.blanket_public, POINT_BYTES)

    def to_wire(self) -> dict[str, object]:
        return {
            "kind": self.KIND,
            "seat": self.seat,
            "commitment": self.commitment,
            "blanket_public": self.blanket_public,
        }

    @classmethod
    def from_wire(cls, obj: object) -> Commit:
        f = _fields(obj, cls.KIND, ("commitment", "blanket_public"))
        return cls(f["seat"], f["commitment"], f["blanket_public"])


def _parsed_proof(kind: str, parse: Callable[[], _Parsed]) -> _Parsed:
    """A proof parsed from the wire, its errors as :class:`WireError`."""
    try:
        return parse()
    except (ProofWireError, GroupError) as error:
        raise WireError(f"{kind} payload: {error}") from None


@dataclass(frozen=True)
class Shuffle:
    KIND: ClassVar[str] = "shuffle"
    seat: int
    points: tuple[Point, ...]  #: Dᵢ, 78 points
    proof: ShuffleProof

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_byte_strings(self.KIND, "points", self.points, POINT_BYTES, DECK_SIZE)
        _need(isinstance(self.proof, ShuffleProof), self.KIND, "proof must be a shuffle proof")

    def to_wire(self) -> dict[str, object]:
        return {
            "kind": self.KIND,
            "seat": self.seat,
            "points": list(self.points),
            "proof": self.proof.to_wire(),
        }

    @classmethod
    def from_wire(cls, obj: object) -> Shuffle:
        f = _fields(obj, cls.KIND, ("points", "proof"))
        proof = _parsed_proof(cls.KIND, lambda: ShuffleProof.from_wire(f["proof"], DECK_SIZE))
        return cls(f["seat"], _as_tuple(cls.KIND, "points", f["points"]), proof)


@dataclass(frozen=True)
class Lock:
    KIND: ClassVar[str] = "lock"
    seat: int
    commitments: tuple[Point, ...]  #: Bᵢ,ⱼ = bᵢ,ⱼ·G, 78 points
    locked: tuple[Point, ...]  #: Eᵢ,ⱼ = (bᵢ,ⱼ·aᵢ⁻¹)·Eᵢ₋₁,ⱼ, 78 points
    proof: LockProof

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_byte_strings(self.KIND, "commitments", self.commitments, POINT_BYTES, DECK_SIZE)
        _check_byte_strings(self.KIND, "locked", self.locked, POINT_BYTES, DECK_SIZE)
        _need(isinstance(self.proof, LockProof), self.KIND, "proof must be a lock proof")

    @property
    def step(self) -> LockStep:
        return LockStep(self.commitments, self.locked, self.proof)

    def to_wire(self) -> dict[str, object]:
        return {
            "kind": self.KIND,
            "seat": self.seat,
            "commitments": list(self.commitments),
            "locked": list(self.locked),
            "proof": self.proof.to_wire(),
        }

    @classmethod
    def from_wire(cls, obj: object) -> Lock:
        f = _fields(obj, cls.KIND, ("commitments", "locked", "proof"))
        proof = _parsed_proof(cls.KIND, lambda: LockProof.from_wire(f["proof"], DECK_SIZE))
        return cls(
            f["seat"],
            _as_tuple(cls.KIND, "commitments", f["commitments"]),
            _as_tuple(cls.KIND, "locked", f["locked"]),
            proof,
        )


@dataclass(frozen=True)
class _PositionKeys:
    """A seat's lock keys for some positions, ascending by position.  Two kinds on the wire,
    the keys of the hands dealt to others and those of the chien, which come at two moments."""

    KIND: ClassVar[str]
    seat: int
    keys: tuple[Scalar, ...]

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_byte_strings(self.KIND, "keys", self.keys, SCALAR_BYTES)

    def to_wire(self) -> dict[str, object]:
        return {"kind": self.KIND, "seat": self.seat, "keys": list(self.keys)}

    @classmethod
    def from_wire(cls, obj: object) -> Self:
        f = _fields(obj, cls.KIND, ("keys",))
        return cls(f["seat"], _as_tuple(cls.KIND, "keys", f["keys"]))


@dataclass(frozen=True)
class DealKeys(_PositionKeys):
    """The seat's lock keys for every position dealt to another seat."""

    KIND: ClassVar[str] = "deal-keys"


@dataclass(frozen=True)
class ChienKeys(_PositionKeys):
    """The seat's lock keys for the chien positions: the chien is turned once every seat has
    sent them."""

    KIND: ClassVar[str] = "chien-keys"


@dataclass(frozen=True)
class _Openings:
    """A seat publishes keys for some of its places, each with the card it says is there."""

    KIND: ClassVar[str]
    seat: int
    openings: tuple[Opening, ...]

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_openings(self.KIND, self.openings, DECK_SIZE)

    def to_wire(self) -> dict[str, object]:
        return {
            "kind": self.KIND,
            "seat": self.seat,
            "openings": [o.to_wire() for o in self.openings],
        }

    @classmethod
    def from_wire(cls, obj: object) -> Self:
        f = _fields(obj, cls.KIND, ("openings",))
        return cls(f["seat"], _openings_from_wire(cls.KIND, f["openings"]))


@dataclass(frozen=True)
class Open(_Openings):
    """The seat opens some of its own dealt positions: a card played, a poignée, four kings.
    ``where`` is a pack position."""

    KIND: ClassVar[str] = "open"


@dataclass(frozen=True)
class EcartCommitment:
    """The taker's hand + chien re-committed as ``rₖ·M_c`` in an order drawn from its seed."""

    KIND: ClassVar[str] = "ecart"
    seat: int
    commitments: tuple[Point, ...]  #: hand_size + chien_size points
    discarded: tuple[int, ...]  #: indices of the écart's commitments, ascending
    openings: tuple[Opening, ...]  #: the trumps discarded, where = commitment index

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_byte_strings(self.KIND, "commitments", self.commitments, POINT_BYTES)
        if not isinstance(self.discarded, tuple):
            raise WireError(f"{self.KIND} payload: discarded must be a list")
        for k in self.discarded:
            _check_index(self.KIND, "discarded index", k, len(self.commitments))
        _need(
            list(self.discarded) == sorted(set(self.discarded)),
            self.KIND,
            "discarded must be ascending, no repeats",
        )
        _check_openings(self.KIND, self.openings, len(self.commitments), allow_none=True)

    def to_wire(self) -> dict[str, object]:
        return {
            "kind": self.KIND,
            "seat": self.seat,
            "commitments": list(self.commitments),
            "discarded": list(self.discarded),
            "openings": [o.to_wire() for o in self.openings],
        }

    @classmethod
    def from_wire(cls, obj: object) -> EcartCommitment:
        f = _fields(obj, cls.KIND, ("commitments", "discarded", "openings"))
        return cls(
            f["seat"],
            _as_tuple(cls.KIND, "commitments", f["commitments"]),
            _as_tuple(cls.KIND, "discarded", f["discarded"]),
            _openings_from_wire(cls.KIND, f["openings"]),
        )


@dataclass(frozen=True)
class OpenRecommitted(_Openings):
    """The taker, after its écart, opens re-commitments instead of dealt positions.
    ``where`` is a commitment index."""

    KIND: ClassVar[str] = "open-recommitted"


@dataclass(frozen=True)
class Reveal:
    KIND: ClassVar[str] = "reveal"
    seat: int
    seed: bytes

    def __post_init__(self) -> None:
        _check_seat(self.KIND, self.seat)
        _check_bytes(self.KIND, "seed", self.seed, SEED_BYTES)

    def to_wire(self) -> dict[str, object]:
        return {"kind": self.KIND, "seat": self.seat, "seed": self.seed}

    @classmethod
    def from_wire(cls, obj: object) -> Reveal:
        f = _fields(obj, cls.KIND, ("seed",))
        return cls(f["seat"], f["seed"])


DeckPayload = (
    Commit
    | Shuffle
    | Lock
    | DealKeys
    | ChienKeys
    | Open
    | EcartCommitment
    | OpenRecommitted
    | Reveal
)
PAYLOAD_TYPES: dict[str, type[DeckPayload]] = {
    cls.KIND: cls
    for cls in (
        Commit,
        Shuffle,
        Lock,
        DealKeys,
        ChienKeys,
        Open,
        EcartCommitment,
        OpenRecommitted,
        Reveal,
    )
}


def payload_from_wire(obj: object) -> DeckPayload:
    """Any payload from its wire map; :class:`WireError` if it is not exactly one."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    with refused_as(WireError):
        payload_type = choice("the kind of a deck payload", kind, PAYLOAD_TYPES)
    return payload_type.from_wire(obj)
