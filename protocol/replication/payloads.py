"""The typed payload of every message kind of a deal, and the one codec between them and the wire.

:func:`protocol.replication.messages.decode` is the gate for untrusted bytes: it proves a frame is
one canonical message, whatever its payload says.  This module is the next gate, for what the
payload says: :func:`decode_payload` turns the payload of a message into the frozen dataclass
of its kind, or raises :class:`PayloadError` with the rule a seat broke; :func:`encode_payload`
writes one back.  Every other module reads and builds payloads through these classes, never
through maps, so that a field is named in one place.

The wire form is the one the protocol has always had (the tests' vectors and old transcripts
decode unchanged): a kind whose payload is a deck step carries the deck's own payload class
(:class:`~protocol.deck.payloads.Shuffle`, :class:`~protocol.deck.payloads.Lock`, …); the
others wrap it in a small map.  What a payload is checked against — the dealer of the deal, the
seat's own positions, the cards it must show — belongs to the deal
(:mod:`protocol.replication.public`), not here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeVar, cast

from protocol.deck.payloads import (
    ChienKeys,
    Commit,
    DealKeys,
    DeckPayload,
    EcartCommitment,
    Lock,
    Open,
    OpenRecommitted,
    Reveal,
    Shuffle,
    WireError,
    payload_from_wire,
)
from protocol.replication.messages import MAX_SEATS, Kind, Message, WireValue
from protocol.rules.cards import DECK, Card, CardCodeError, card, codes
from protocol.rules.variants import Contract
from protocol.wire import array, boolean, choice, integer, refused_as, text


class PayloadError(ValueError):
    """A payload that is not one of its kind; the text is the verdict's reason."""


class HandStatus(enum.StrEnum):
    """What a seat found in its hand once dealt (the hand check round)."""

    OK = "ok"
    PETIT_SEC = "petit-sec"  #: the petit sec, shown with its keys: the deal is void
    BAD = "bad-hand"  #: a position that does not decrypt to a card


#: An opening of the seat's own cards: dealt positions, or re-commitments after its écart.
Opened = Open | OpenRecommitted


@dataclass(frozen=True)
class CommitPayload:
    """The seed commitment, bound to the dealer, which fixes who receives which position."""

    dealer: int
    deck: Commit

    def to_wire(self) -> WireValue:
        return {"dealer": self.dealer, "deck": _wire(self.deck)}


@dataclass(frozen=True)
class HandCheckPayload:
    status: HandStatus
    position: int | None = None  #: the position that did not decrypt (:attr:`HandStatus.BAD`)
    opened: Opened | None = None  #: the petit sec's keys (:attr:`HandStatus.PETIT_SEC`)

    def to_wire(self) -> WireValue:
        if self.status is HandStatus.BAD:
            return {"status": self.status.value, "position": self.position}
        if self.opened is not None:
            return {"status": self.status.value, "open": _wire(self.opened)}
        return {"status": self.status.value}


@dataclass(frozen=True)
class BidPayload:
    contract: Contract | None  #: None for a pass

    def to_wire(self) -> WireValue:
        return {"contract": None if self.contract is None else self.contract.code}


@dataclass(frozen=True)
class CallPayload:
    card: Card
    opened: Opened | None = None  #: below a king: the four cards of each higher rank, shown

    def to_wire(self) -> WireValue:
        if self.opened is None:
            return {"card": self.card.code}
        return {"card": self.card.code, "open": _wire(self.opened)}


@dataclass(frozen=True)
class ChelemPayload:
    announce: bool

    def to_wire(self) -> WireValue:
        return {"announce": self.announce}


#: The field of a poignée message that names the trumps of the taker's écart shown again.
POIGNEE_ECART: Final = "ecart"
#: The longest card code (``"21T"``), and a contract's (``"garde-contre"``), with room to spare:
#: a longer string is refused before it is looked up.
MAX_CARD_CODE: Final = 8
MAX_CODE: Final = 32
_HAND_STATUSES: Final = MappingProxyType({status.value: status for status in HandStatus})


@dataclass(frozen=True)
class PoigneePayload:
    """The trumps shown: those in hand opened by their keys, and those of the taker's écart
    named again (FFT: « l'atout écarté doit être remontré avec la triple Poignée »).  Its
    écart opened them to every seat already, so the poignée names them instead of opening
    them: they are no longer in the hand the deck lets it open."""

    opened: Opened
    again: tuple[Card, ...] = ()

    def to_wire(self) -> WireValue:
        if not self.again:
            return {"open": _wire(self.opened)}
        return {"open": _wire(self.opened), POIGNEE_ECART: list[WireValue](codes(self.again))}


@dataclass(frozen=True)
class PlayPayload:
    opened: Opened  #: the card's key: exactly one card (the deal checks it)

    def to_wire(self) -> WireValue:
        return {"open": _wire(self.opened)}


@dataclass(frozen=True)
class RevealPayload:
    deck: Reveal
    gone: tuple[int, ...]  #: the seats its sender timed out before the reveal

    def to_wire(self) -> WireValue:
        return {"deck": _wire(self.deck), "gone": list[WireValue](self.gone)}


@dataclass(frozen=True)
class ScoreSignPayload:
    """The score and verdict a seat's audit gives (:func:`protocol.replication.audit.signed_score`,
    which owns its fields): a seat that signs another than the others' is named."""

    score: Mapping[str, WireValue]

    def to_wire(self) -> WireValue:
        return dict(self.score)


#: The deck payloads that travel alone as the payload of a message.
DeckStep = Shuffle | Lock | DealKeys | ChienKeys | EcartCommitment
#: Their kinds.
_DECK_STEPS: Final[Mapping[Kind, type[DeckStep]]] = MappingProxyType(
    {
        Kind.SHUFFLE: Shuffle,
        Kind.LOCK: Lock,
        Kind.DEAL_KEYS: DealKeys,
        Kind.CHIEN_OPEN: ChienKeys,
        Kind.ECART: EcartCommitment,
    }
)

MessagePayload = (
    CommitPayload
    | Shuffle
    | Lock
    | DealKeys
    | HandCheckPayload
    | BidPayload
    | CallPayload
    | ChienKeys
    | EcartCommitment
    | ChelemPayload
    | PoigneePayload
    | PlayPayload
    | RevealPayload
    | ScoreSignPayload
)


def encode_payload(payload: MessagePayload) -> WireValue:
    """The wire form of a payload, as :func:`protocol.replication.messages.sign_message` takes
    it."""
    if isinstance(payload, (Shuffle, Lock, DealKeys, ChienKeys, EcartCommitment)):
        return _wire(payload)
    return payload.to_wire()


def decode_payload(message: Message) -> MessagePayload:
    """The typed payload of ``message``; :class:`PayloadError` if it is not one of its kind
    (a kind no deal uses included), or if a deck step in it claims another seat than the
    one that signed it."""
    decoder = _DECODERS.get(message.kind)
    if decoder is None:
        raise PayloadError(UNUSED_KIND)
    payload = message.payload
    if not isinstance(payload, dict):
        raise PayloadError("the payload is not a map")
    with refused_as(PayloadError):  # the fields' checks are the gate's (protocol.wire)
        return decoder(message.seat, payload)


def has_payload(kind: Kind) -> bool:
    """A kind the deal uses; the others (``abandon``) no honest seat signs in a deal."""
    return kind in _DECODERS


UNUSED_KIND: Final = "a message of a kind the deal does not use"


def timed_out_in(message: Message) -> set[int]:
    """The seats a reveal names as gone: its sender timed them out before the reveal.  Read
    apart from the rest of the payload: a reveal with a bad seed still answers its round."""
    payload = message.payload
    return set(_seats(payload.get("gone") if isinstance(payload, dict) else None))


_Map = dict[str, WireValue]
_Step = TypeVar("_Step", Commit, Shuffle, Lock, DealKeys, ChienKeys, EcartCommitment, Open, Reveal)


def _wire(step: DeckPayload) -> WireValue:
    # The deck's maps hold only bytes, integers and lists of them, all msgpack values; the
    # deck module types them as plain objects to stay independent of the envelope.
    return cast(WireValue, step.to_wire())


def _deck(seat: int, value: WireValue, kind: type[_Step]) -> _Step:
    """A deck payload of ``kind``, by the seat that signed the message."""
    step = _step(seat, value, (kind,))
    assert isinstance(step, kind)  # _step checked it
    return step


def _opened(seat: int, value: WireValue) -> Opened:
    step = _step(seat, value, (Open, OpenRecommitted))
    assert isinstance(step, (Open, OpenRecommitted))  # _step checked it
    return step


def _step(seat: int, value: WireValue, kinds: tuple[type[DeckPayload], ...]) -> DeckPayload:
    try:
        step = payload_from_wire(value)
    except (WireError, ValueError) as error:
        raise PayloadError(f"malformed payload: {error}") from None
    if not isinstance(step, kinds):
        raise PayloadError(f"expected a {' or '.join(k.KIND for k in kinds)} payload")
    if step.seat != seat:
        raise PayloadError(
            f"the payload claims seat {step.seat}, the message is signed by seat {seat}"
        )
    return step


def _card(value: object) -> Card:
    try:
        return card(text("a card", value, MAX_CARD_CODE))
    except CardCodeError as error:
        raise PayloadError(str(error)) from None


def _seats(value: WireValue) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(s for s in value if isinstance(s, int) and not isinstance(s, bool))


def _commit(seat: int, payload: _Map) -> CommitPayload:
    dealer = integer("the dealer", payload.get("dealer"), 0, MAX_SEATS - 1)
    return CommitPayload(dealer, _deck(seat, payload.get("deck"), Commit))


def _hand_check(seat: int, payload: _Map) -> HandCheckPayload:
    status = choice("the hand status", payload.get("status"), _HAND_STATUSES)
    if status is HandStatus.PETIT_SEC:
        return HandCheckPayload(HandStatus.PETIT_SEC, opened=_deck(seat, payload.get("open"), Open))
    if status is HandStatus.BAD:
        position = integer("the bad card's position", payload.get("position"), 0, len(DECK) - 1)
        return HandCheckPayload(HandStatus.BAD, position=position)
    return HandCheckPayload(HandStatus.OK)


def _bid(seat: int, payload: _Map) -> BidPayload:
    code = payload.get("contract")
    try:
        return BidPayload(
            None if code is None else Contract.from_code(text("the contract", code, MAX_CODE))
        )
    except ValueError as error:
        raise PayloadError(str(error)) from None


def _call(seat: int, payload: _Map) -> CallPayload:
    called = _card(payload.get("card"))
    if called.rank == 14 or not called.suit.is_colour:
        return CallPayload(called)
    # A lower call needs the four cards of each higher rank: shown with their keys.
    return CallPayload(called, _opened(seat, payload.get("open")))


def _chelem(seat: int, payload: _Map) -> ChelemPayload:
    return ChelemPayload(boolean("the chelem announcement", payload.get("announce")))


def _poignee(seat: int, payload: _Map) -> PoigneePayload:
    opened = _opened(seat, payload.get("open"))
    again = array(
        "the trumps shown again from the écart",
        payload.get(POIGNEE_ECART, []),
        max_length=len(DECK),
    )
    return PoigneePayload(opened, tuple(_card(code) for code in again))


def _play(seat: int, payload: _Map) -> PlayPayload:
    return PlayPayload(_opened(seat, payload.get("open")))


def _reveal(seat: int, payload: _Map) -> RevealPayload:
    return RevealPayload(_deck(seat, payload.get("deck"), Reveal), _seats(payload.get("gone")))


def _score_sign(seat: int, payload: _Map) -> ScoreSignPayload:
    return ScoreSignPayload(MappingProxyType(payload))


def _deck_step(kind: Kind) -> Callable[[int, _Map], MessagePayload]:
    expected = _DECK_STEPS[kind]

    def decode(seat: int, payload: _Map) -> DeckStep:
        step = _step(seat, payload, (expected,))
        assert isinstance(step, expected)  # _step checked it
        return step

    return decode


_DECODERS: Final[Mapping[Kind, Callable[[int, _Map], MessagePayload]]] = MappingProxyType(
    {
        Kind.COMMIT: _commit,
        **{kind: _deck_step(kind) for kind in _DECK_STEPS},
        Kind.PETIT_SEC: _hand_check,
        Kind.BID: _bid,
        Kind.CALL: _call,
        Kind.CHELEM: _chelem,
        Kind.POIGNEE: _poignee,
        Kind.PLAY: _play,
        Kind.REVEAL: _reveal,
        Kind.SCORE_SIGN: _score_sign,
    }
)
