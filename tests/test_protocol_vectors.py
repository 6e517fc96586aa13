"""The deck of a seeded five-seat deal, every message of it, as ``tests/vectors/deck-v3.json``
gives it — for another implementation of ``tarot/v3`` to check itself against (docs/protocol.md,
"Test vectors").

The deal is fixed: table id ``00 01 … 0f``, deal 0, dealer 0, five seats whose seeds are
``SHA-256("tarot/v3 test seed" ‖ seat)`` and whose Ed25519 identities have the private seed
``SHA-256("tarot/v3 test identity" ‖ seat)``.  Every seat commits, shuffles, locks and publishes its
deal keys; every seat publishes its chien keys; seat 0 takes, re-commits its hand and the chien
and discards the three lowest cards it may (neither a king nor a trump); seat 1 opens its lowest
card, seat 0 its lowest card kept; every seat reveals its seed.  Each deck payload goes out as
the signed message of its kind (``commit``, ``shuffle``, ``lock``, ``deal_keys``, ``chien_open``,
``ecart``, ``play``, ``reveal``), chained as the transcript chains them: a concurrent round's
messages all on the head before the round, appended in seat order (the rounds the deck does not
need — hand check, bids, call — are left out: the chain only needs each message's ``prev``).
For each seat the file gives what its seed derives (the HKDF layout) and for each message its
wire bytes — in hex when short, by SHA-256 otherwise — with its digest and the head after it;
so a change of a domain string, of the HKDF layout, of a proof's Fiat–Shamir framing or of a
wire format fails here.

``python tests/test_protocol_vectors.py --write`` writes the file again (a deliberate protocol
change, which must also change the version).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.deck.group import CARD_POINTS
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import Commit, DeckPayload, Open, OpenRecommitted, Reveal
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import derive
from protocol.deck.setup import DeckSetup
from protocol.deck.shuffle_proof import generators
from protocol.replication.identity import Identity
from protocol.replication.messages import Kind, Message, decode, encode, sign_message
from protocol.replication.payloads import (
    CommitPayload,
    MessagePayload,
    PlayPayload,
    RevealPayload,
    decode_payload,
    encode_payload,
)
from protocol.replication.transcript import genesis, next_head
from protocol.rules.cards import Card
from protocol.rules.variants import VARIANTS

VECTORS = Path(__file__).resolve().parent / "vectors" / "deck-v3.json"
TABLE = bytes(range(16))
PLAYERS = 5
SHORT = 400  #: messages up to this many bytes are given whole, in hex


def seed_of(seat: int) -> bytes:
    return hashlib.sha256(b"tarot/v3 test seed" + bytes([seat])).digest()


def identity_of(seat: int) -> Identity:
    return Identity.from_private_bytes(
        hashlib.sha256(b"tarot/v3 test identity" + bytes([seat])).digest()
    )


#: The message kind that carries each deck payload, and whether its round is concurrent.
KINDS: dict[str, tuple[Kind, bool]] = {
    "commit": (Kind.COMMIT, True),
    "shuffle": (Kind.SHUFFLE, False),
    "lock": (Kind.LOCK, False),
    "deal-keys": (Kind.DEAL_KEYS, True),
    "chien-keys": (Kind.CHIEN_OPEN, True),
    "ecart": (Kind.ECART, False),
    "open": (Kind.PLAY, False),
    "open-recommitted": (Kind.PLAY, False),
    "reveal": (Kind.REVEAL, True),
}


def _message_payload(payload: DeckPayload) -> MessagePayload:
    if isinstance(payload, Commit):
        return CommitPayload(0, payload)
    if isinstance(payload, (Open, OpenRecommitted)):
        return PlayPayload(payload)
    if isinstance(payload, Reveal):
        return RevealPayload(payload, ())
    return payload


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _joined(values: tuple[bytes, ...] | list[bytes]) -> str:
    """SHA-256 of the values end to end."""
    return sha256(b"".join(values))


def _messages(payloads: list[DeckPayload]) -> tuple[list[dict[str, Any]], bytes]:
    """Every payload as its signed message, chained from the genesis; and the last head."""
    members = [identity_of(seat).public_key for seat in range(PLAYERS)]
    head = genesis(TABLE, 0, members)
    entries: list[dict[str, Any]] = []
    round_head: bytes | None = None  # the head a concurrent round builds on
    for payload in payloads:
        kind, concurrent = KINDS[payload.KIND]
        if not concurrent:
            round_head = None
        elif round_head is None or entries[-1]["kind"] != kind.value:
            round_head = head
        prev = head if round_head is None else round_head
        message = sign_message(
            identity_of(payload.seat),
            TABLE,
            0,
            kind,
            payload.seat,
            encode_payload(_message_payload(payload)),
            prev,
        )
        head = next_head(head, message)
        entries.append(_entry(message, head))
    return entries, head


def _entry(message: Message, head: bytes) -> dict[str, Any]:
    wire = encode(message)
    assert decode(wire) == message and decode_payload(message) is not None  # it reads back
    entry: dict[str, Any] = {
        "kind": message.kind.value,
        "seat": message.seat,
        "bytes": len(wire),
        "sha256": sha256(wire),
        "digest": message.digest.hex(),
        "head_after": head.hex(),
    }
    if len(wire) <= SHORT:
        entry["wire"] = wire.hex()
    return entry


def _lowest(cards: list[Card], count: int, allowed: Any) -> list[Card]:
    return sorted((card for card in cards if allowed(card)), key=lambda card: card.index)[:count]


def compute() -> dict[str, Any]:
    """Every value of the vectors, computed by this code."""
    variant = VARIANTS[PLAYERS]
    setup = DeckSetup(TABLE, 0, variant, 0)
    seats = [SeatDeck(setup, seat, seed_of(seat)) for seat in range(PLAYERS)]
    public = PublicDeck(setup)
    payloads: list[DeckPayload] = []
    original_receive = public.receive

    def receive(payload: DeckPayload) -> None:
        original_receive(payload)
        payloads.append(payload)

    public.receive = receive  # type: ignore[method-assign]  # record what the deal sends
    hands = deal_in_one_process(seats, [public])
    for seat in seats:
        public.receive(seat.chien_keys())
    chien = public.chien()
    assert chien is not None
    taker = seats[0]
    held = [*hands[0].values(), *chien]
    discard = _lowest(
        held, variant.chien_size, lambda card: card.suit.is_colour and card.rank != 14
    )
    public.receive(taker.ecart(public, discard))
    public.receive(seats[1].open(_lowest(list(hands[1].values()), 1, lambda card: True)))
    kept = [card for card in held if card not in discard]
    public.receive(taker.open(_lowest(kept, 1, lambda card: True)))
    for seat in seats:
        public.receive(seat.reveal())
    messages, last_head = _messages(payloads)
    derived = []
    for seat in range(PLAYERS):
        s = derive(seed_of(seat), TABLE, 0, seat, variant)
        derived.append(
            {
                "seed": s.seed.hex(),
                "blanket": s.blanket.hex(),
                "blanket_public": s.blanket_public.hex(),
                "permutation": list(s.permutation),
                "lock_keys_sha256": _joined(s.lock_keys),
                "lock_key_0": s.lock_keys[0].hex(),
                "recommit_keys_sha256": _joined(s.recommit_keys),
                "recommit_order": list(s.recommit_order),
                "nonce_key": s.nonce_key.hex(),
            }
        )
    return {
        "setup": {"table_id": TABLE.hex(), "deal": 0, "dealer": 0, "players": PLAYERS},
        "card_points_sha256": _joined(CARD_POINTS),
        "shuffle_generators_sha256": _joined(generators(78)),
        "seats": derived,
        "hands": {
            str(seat): sorted(card.code for card in hand.values()) for seat, hand in hands.items()
        },
        "chien": sorted(card.code for card in chien),
        "discard": sorted(card.code for card in discard),
        "genesis": genesis(TABLE, 0, [identity_of(k).public_key for k in range(PLAYERS)]).hex(),
        "identities": [identity_of(seat).public_key.hex() for seat in range(PLAYERS)],
        "messages": messages,
        "last_head": last_head.hex(),
    }


def test_the_vectors_file_is_what_this_code_computes() -> None:
    expected = json.loads(VECTORS.read_text(encoding="utf-8"))
    actual = compute()
    for key in expected:
        assert actual[key] == expected[key], f"{key} differs from tests/vectors/deck-v3.json"
    assert actual == expected


def test_the_vectors_cover_every_kind_of_deck_message() -> None:
    kinds = [entry["kind"] for entry in json.loads(VECTORS.read_text())["messages"]]
    assert kinds == [
        *["commit"] * 5,
        *["shuffle"] * 5,
        *["lock"] * 5,
        *["deal_keys"] * 5,
        *["chien_open"] * 5,
        "ecart",
        "play",
        "play",
        *["reveal"] * 5,
    ]


@pytest.mark.parametrize("seat", range(PLAYERS))
def test_each_seat_s_derived_values_match_its_messages(seat: int) -> None:
    """The file hangs together: a seat's commit carries the blanket public key its seed
    derives, and its reveal the seed."""
    vectors = json.loads(VECTORS.read_text())
    by_kind = {(m["kind"], m["seat"]): m for m in vectors["messages"]}
    commit = decode(bytes.fromhex(by_kind["commit", seat]["wire"])).payload
    reveal = decode(bytes.fromhex(by_kind["reveal", seat]["wire"])).payload
    assert isinstance(commit, dict) and isinstance(reveal, dict)
    assert commit["deck"]["blanket_public"].hex() == vectors["seats"][seat]["blanket_public"]
    assert reveal["deck"]["seed"].hex() == vectors["seats"][seat]["seed"] == seed_of(seat).hex()


def dumps(vectors: dict[str, Any]) -> str:
    """The file's text: indented, each list of numbers on one line."""
    text = json.dumps(vectors, indent=1)
    return re.sub(r"\[\s+([\d,\s]+?)\s+\]", lambda m: f"[{' '.join(m[1].split())}]", text) + "\n"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    VECTORS.write_text(dumps(compute()), encoding="utf-8")
    print(f"wrote {VECTORS}")
