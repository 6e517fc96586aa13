"""The lobby's frames, typed: one class per kind, and :func:`decode`, the one place where a
peer's lobby frame is read.

On the wire a frame is a msgpack map whose ``t`` names its kind (docs/protocol.md, "Forming a
table").  :func:`decode` takes the map as :func:`protocol.wire.unpack` left it and checks it
through :mod:`protocol.wire`: exactly the fields of its kind — an offer's and a manifest's
``silence`` may be missing, as daemons sent them before tables had rules, and reads as
``nothing`` — each of its type and size, or :class:`~protocol.wire.FieldError` saying which
field breaks which rule.  The lobby handles typed values only, so a peer can make it do nothing
worse than refuse its frame.  What the frame means (is its sender the opener, does the
manifest seat us) is for the lobby to judge; what it *is* is checked here.

Each frame's ``to_wire`` is the map daemons send, key for key and in the same order: the bytes
on the wire are those of the daemons before typed frames (tests/test_lobby_frames.py pins
them), and a manifest's members re-encode to the bytes every member signs
(:func:`~tarotd.lobby.tables.manifest_bytes`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeVar

from protocol import wire
from protocol.pake import SHARE_SIZE, SID_SIZE, TAG_SIZE
from protocol.replication.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, is_valid_public_key
from protocol.replication.manifest import SilenceCost
from tarotd.coin import COIN_SIZE, COMMITMENT_SIZE, SEAL_SIZE, Reveal

ID_SIZE: Final = 16
NONCE_SIZE: Final = 16
MAX_NAME: Final = 64  #: characters of a table's or a member's name
MAX_MEMBER_ENDPOINT: Final = 128
MAX_BOT_LEVEL: Final = 16  #: characters of a bot's level in a member record
MAX_SEATS: Final = 5  #: seats of the largest table: members of an offer or a manifest
#: Seats one daemon sits or takes back in one join or leave: its player and its bots, and the
#: bots it added since, a few tables over.
MAX_HOSTED: Final = 16


class Kind(enum.StrEnum):
    """A lobby frame's kind: its ``t``."""

    OFFER = "offer"  #: an opener's table, to every peer (or to an event table's members)
    JOIN = "join"  #: seats for an offer, to its opener
    LEAVE = "leave"  #: seats taken back, to the opener
    MANIFEST = "manifest"  #: the full table in seat order, from its opener, to be signed
    SIGN = "sign"  #: a member's signature of the manifest and commitment to its coin
    SEAL = "seal"  #: members' seals of every commitment
    COIN = "coin"  #: coins revealed, or relayed
    KNOCK = "knock"  #: a joiner's CPace share, for an offer of the name it wants
    ANSWER = "answer"  #: the opener's share
    PROVE = "prove"  #: the joiner's confirmation tag: its proof of the invite code
    PROVEN = "proven"  #: the opener's tag, once the joiner's proof holds
    REFUSED = "refused"  #: the opener refuses the knock or its proof (:class:`WhyRefused`)


class OfferState(enum.StrEnum):
    """Where an offer is; the value is what the ``offer`` frame and the local API carry."""

    OPEN = "open"  #: taking seats
    FULL = "full"  #: the manifest is out; signatures, seals and coins are coming in
    #: Every member signed and sealed, every coin is in or its time is up: the dealer is drawn.
    READY = "ready"
    WITHDRAWN = "withdrawn"  #: its opener took it back before it filled


class WhyRefused(enum.StrEnum):
    """Why an opener refused a knock: a ``refused`` frame's ``why``."""

    CODE = "code"  #: the joiner's proof is not of the table's code
    WAIT = "wait"  #: a wrong proof came from this key or host too recently
    LOCKED = "locked"  #: locked out until the opener's player lifts it


@dataclass(frozen=True)
class Member:
    key: bytes  #: the seat's identity key
    name: str
    daemon: bytes  #: key of the daemon that hosts the seat
    endpoint: str  #: that daemon's mesh endpoint
    #: The level of the bot that plays the seat, "" for a person: said by the seat's own
    #: daemon and signed in the manifest with its name, so every member's screen tags it.
    bot: str = ""

    def to_wire(self) -> list[object]:
        return [self.key, self.name, self.daemon, self.endpoint, *([self.bot] if self.bot else [])]


Seal = tuple[bytes, bytes]  #: (a member's key, its seal of every commitment)


@dataclass(frozen=True)
class Offer:
    kind: ClassVar[Kind] = Kind.OFFER
    table_id: bytes
    name: str
    seats: int
    opener: bytes
    members: tuple[Member, ...]  #: in the order they joined
    state: OfferState
    nonce: bytes  #: the id is the opener's key and this (:func:`~tarotd.lobby.tables.table_id_of`)
    silence: SilenceCost

    def to_wire(self) -> dict[str, object]:
        return {
            "t": self.kind.value,
            "table": self.table_id,
            "name": self.name,
            "seats": self.seats,
            "opener": self.opener,
            "members": [m.to_wire() for m in self.members],
            "state": self.state.value,
            "nonce": self.nonce,
            "silence": self.silence.value,
        }


@dataclass(frozen=True)
class Join:
    kind: ClassVar[Kind] = Kind.JOIN
    table_id: bytes
    members: tuple[Member, ...]  #: seats of the sender's daemon

    def to_wire(self) -> dict[str, object]:
        return {"t": self.kind.value, "table": self.table_id, "members": _members_out(self)}


@dataclass(frozen=True)
class Leave:
    kind: ClassVar[Kind] = Kind.LEAVE
    table_id: bytes
    keys: tuple[bytes, ...]  #: the seats taken back

    def to_wire(self) -> dict[str, object]:
        return {"t": self.kind.value, "table": self.table_id, "keys": list(self.keys)}


@dataclass(frozen=True)
class Manifest:
    kind: ClassVar[Kind] = Kind.MANIFEST
    table_id: bytes
    members: tuple[Member, ...]  #: in seat order
    silence: SilenceCost

    def to_wire(self) -> dict[str, object]:
        return {
            "t": self.kind.value,
            "table": self.table_id,
            "members": _members_out(self),
            "silence": self.silence.value,
        }


@dataclass(frozen=True)
class Sign:
    kind: ClassVar[Kind] = Kind.SIGN
    table_id: bytes
    key: bytes  #: the member signing
    sig: bytes  #: its signature of the manifest
    commit: bytes  #: its commitment to its coin (:func:`tarotd.coin.commitment`)

    def to_wire(self) -> dict[str, object]:
        return {
            "t": self.kind.value,
            "table": self.table_id,
            "key": self.key,
            "sig": self.sig,
            "commit": self.commit,
        }


@dataclass(frozen=True)
class Seals:
    kind: ClassVar[Kind] = Kind.SEAL
    table_id: bytes
    seals: tuple[Seal, ...]

    def to_wire(self) -> dict[str, object]:
        return {"t": self.kind.value, "table": self.table_id, "seals": [*map(list, self.seals)]}


@dataclass(frozen=True)
class Coins:
    kind: ClassVar[Kind] = Kind.COIN
    table_id: bytes
    coins: tuple[Reveal, ...]

    def to_wire(self) -> dict[str, object]:
        coins = [[c.key, c.coin, [*map(list, c.relays)]] for c in self.coins]
        return {"t": self.kind.value, "table": self.table_id, "coins": coins}


@dataclass(frozen=True)
class _Share:
    """A CPace share, for the table and both daemons' keys (:func:`protocol.pake.channel`)."""

    kind: ClassVar[Kind]
    table_id: bytes
    sid: bytes  #: the CPace session, drawn by the joiner
    share: bytes

    def to_wire(self) -> dict[str, object]:
        return {"t": self.kind.value, "table": self.table_id, "sid": self.sid, "share": self.share}


class Knock(_Share):
    kind = Kind.KNOCK


class Answer(_Share):
    kind = Kind.ANSWER


@dataclass(frozen=True)
class _Tag:
    """A CPace confirmation tag: the proof that its sender holds the invite code."""

    kind: ClassVar[Kind]
    table_id: bytes
    sid: bytes
    tag: bytes

    def to_wire(self) -> dict[str, object]:
        return {"t": self.kind.value, "table": self.table_id, "sid": self.sid, "tag": self.tag}


class Prove(_Tag):
    kind = Kind.PROVE


class Proven(_Tag):
    kind = Kind.PROVEN


@dataclass(frozen=True)
class Refused:
    kind: ClassVar[Kind] = Kind.REFUSED
    table_id: bytes
    sid: bytes
    why: WhyRefused

    def to_wire(self) -> dict[str, object]:
        return {
            "t": self.kind.value,
            "table": self.table_id,
            "sid": self.sid,
            "why": self.why.value,
        }


LobbyFrame = (
    Offer
    | Join
    | Leave
    | Manifest
    | Sign
    | Seals
    | Coins
    | Knock
    | Answer
    | Prove
    | Proven
    | Refused
)


_ShareFrame = TypeVar("_ShareFrame", Knock, Answer)
_TagFrame = TypeVar("_TagFrame", Prove, Proven)


def _members_out(frame: Join | Manifest) -> list[list[object]]:
    return [m.to_wire() for m in frame.members]


def decode(value: object) -> LobbyFrame:
    """The frame ``value`` is — a map as :func:`protocol.wire.unpack` gives it — or
    :class:`~protocol.wire.FieldError` saying what is wrong with it."""
    if type(value) is not dict:
        raise wire.FieldError("a lobby frame", f"is a msgpack map, got {wire.describe(value)}")
    kind = wire.choice("t", value.get("t"), _KINDS)
    names, read = _SHAPES[kind]
    expected = [name for name in names if name in value or name not in _OPTIONAL]
    return read(wire.fields(f"the {kind.value} frame", value, ["t", *expected]))


def member(raw: object) -> Member:
    """``[key, name, daemon, endpoint]``, and a bot's level for a seat a bot plays."""
    fields = wire.array("a member", raw, max_length=5)
    if len(fields) < 4:
        raise wire.FieldError("a member", f"is an array of 4 or 5 items, got {len(fields)}")
    key, name, daemon, endpoint, *bot = fields
    level = wire.text("a member's bot level", bot[0], MAX_BOT_LEVEL, 1) if bot else ""
    if level and not level.isalnum():
        raise wire.FieldError("a member's bot level", "is a word of letters and digits")
    return Member(
        _public_key("a member's key", key),
        wire.text("a member's name", name, MAX_NAME),
        _public_key("a member's daemon", daemon),
        wire.text("a member's endpoint", endpoint, MAX_MEMBER_ENDPOINT),
        level,
    )


def table_id(value: object) -> bytes:
    return wire.blob("table", value, ID_SIZE)


def _public_key(what: str, value: object) -> bytes:
    key = wire.blob(what, value, PUBLIC_KEY_SIZE)
    if not is_valid_public_key(key):
        raise wire.FieldError(what, "is not a valid Ed25519 public key")
    return key


def _members(value: object, max_length: int) -> tuple[Member, ...]:
    """Members, each well formed (its refusal says which seat), no key twice."""
    members = []
    for seat, raw in enumerate(wire.array("members", value, max_length=max_length)):
        try:
            members.append(member(raw))
        except wire.FieldError as error:
            raise wire.FieldError(f"seat {seat}:", str(error)) from None
    if len({m.key for m in members}) < len(members):
        raise wire.FieldError("a seat's key", "appears twice")
    return tuple(members)


def _key(what: str, value: object) -> bytes:
    return wire.blob(what, value, PUBLIC_KEY_SIZE)


def _signed(what: str, value: object, size: int = SIGNATURE_SIZE) -> tuple[bytes, bytes]:
    """``[key, signature]``."""
    key, signature = wire.array(what, value, length=2)
    return _key(f"{what}'s key", key), wire.blob(f"{what}'s signature", signature, size)


def _reveal(what: str, value: object) -> Reveal:
    """``[member's key, coin, [[relaying member's key, its signature], ...]]``."""
    key, coin, relays = wire.array(what, value, length=3)
    return Reveal(
        _key(f"{what}'s key", key),
        wire.blob(f"{what}'s coin", coin, COIN_SIZE),
        tuple(wire.array_of(f"{what}'s relays", relays, _signed, max_length=MAX_SEATS)),
    )


def _silence(frame: Mapping[str, Any]) -> SilenceCost:
    return wire.choice("silence", frame.get("silence", SilenceCost.NOTHING.value), _SILENCES)


def _offer(f: dict[str, Any]) -> Offer:
    seats = wire.integer("seats", f["seats"], 3, MAX_SEATS)
    members = _members(f["members"], seats)
    return Offer(
        table_id(f["table"]),
        wire.text("name", f["name"], MAX_NAME),
        seats,
        _key("opener", f["opener"]),
        members,
        wire.choice("state", f["state"], _STATES),
        wire.blob("nonce", f["nonce"], NONCE_SIZE),
        _silence(f),
    )


def _join(f: dict[str, Any]) -> Join:
    return Join(table_id(f["table"]), _members(f["members"], MAX_HOSTED))


def _leave(f: dict[str, Any]) -> Leave:
    keys = wire.array_of("keys", f["keys"], _key, max_length=MAX_HOSTED)
    return Leave(table_id(f["table"]), tuple(keys))


def _manifest(f: dict[str, Any]) -> Manifest:
    return Manifest(table_id(f["table"]), _members(f["members"], MAX_SEATS), _silence(f))


def _sign(f: dict[str, Any]) -> Sign:
    return Sign(
        table_id(f["table"]),
        _key("key", f["key"]),
        wire.blob("sig", f["sig"], SIGNATURE_SIZE),
        wire.blob("commit", f["commit"], COMMITMENT_SIZE),
    )


def _seals(f: dict[str, Any]) -> Seals:
    seals = wire.array_of(
        "seals", f["seals"], lambda what, v: _signed(what, v, SEAL_SIZE), max_length=MAX_SEATS
    )
    return Seals(table_id(f["table"]), tuple(seals))


def _coins(f: dict[str, Any]) -> Coins:
    coins = wire.array_of("coins", f["coins"], _reveal, max_length=MAX_SEATS)
    return Coins(table_id(f["table"]), tuple(coins))


def _sid(f: dict[str, Any]) -> bytes:
    return wire.blob("sid", f["sid"], SID_SIZE)


def _share(frame: type[_ShareFrame]) -> Callable[[dict[str, Any]], _ShareFrame]:
    return lambda f: frame(
        table_id(f["table"]), _sid(f), wire.blob("share", f["share"], SHARE_SIZE)
    )


def _tag(frame: type[_TagFrame]) -> Callable[[dict[str, Any]], _TagFrame]:
    return lambda f: frame(table_id(f["table"]), _sid(f), wire.blob("tag", f["tag"], TAG_SIZE))


def _refused(f: dict[str, Any]) -> Refused:
    return Refused(table_id(f["table"]), _sid(f), wire.choice("why", f["why"], _REFUSALS))


_KINDS: Final = {kind.value: kind for kind in Kind}
_STATES: Final = {state.value: state for state in OfferState}
_SILENCES: Final = {cost.value: cost for cost in SilenceCost}
_REFUSALS: Final = {why.value: why for why in WhyRefused}
_OPTIONAL: Final = frozenset({"silence"})
#: Each kind's fields, ``t`` aside, and how its map is read once they are all there.
_SHAPES: Final[Mapping[Kind, tuple[tuple[str, ...], Callable[[dict[str, Any]], LobbyFrame]]]] = {
    Kind.OFFER: (
        ("table", "name", "seats", "opener", "members", "state", "nonce", "silence"),
        _offer,
    ),
    Kind.JOIN: (("table", "members"), _join),
    Kind.LEAVE: (("table", "keys"), _leave),
    Kind.MANIFEST: (("table", "members", "silence"), _manifest),
    Kind.SIGN: (("table", "key", "sig", "commit"), _sign),
    Kind.SEAL: (("table", "seals"), _seals),
    Kind.COIN: (("table", "coins"), _coins),
    Kind.KNOCK: (("table", "sid", "share"), _share(Knock)),
    Kind.ANSWER: (("table", "sid", "share"), _share(Answer)),
    Kind.PROVE: (("table", "sid", "tag"), _tag(Prove)),
    Kind.PROVEN: (("table", "sid", "tag"), _tag(Proven)),
    Kind.REFUSED: (("table", "sid", "why"), _refused),
}
#: Each kind's fields on the wire, ``t`` aside, in the order daemons send them.
FIELDS: Final[Mapping[Kind, tuple[str, ...]]] = {
    kind: names for kind, (names, _) in _SHAPES.items()
}
