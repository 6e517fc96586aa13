"""The test vectors of docs/protocol.md are what this code computes: a wire change shows here,
and the specification another implementation follows cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protocol.deck.group import CARD_POINTS, hash_to_point
from protocol.deck.seeds import commitment
from protocol.replication.identity import Identity
from protocol.replication.manifest import SilenceCost
from protocol.replication.messages import Kind, encode, sign_message
from protocol.replication.transcript import genesis, next_head
from tarotd.coin import commitment as coin_commitment
from tarotd.coin import first_dealer, seal_document
from tarotd.discovery import Beacon, TableInfo, encode_beacon
from tarotd.lobby import Member, manifest_bytes
from tarotd.mesh.wire import LINK_KINDS, ROUTER_KINDS, SHAPES, SIGNING_DOMAIN

SPEC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
IDENTITY = Identity.from_private_bytes(bytes(range(32)))
TABLE = bytes(range(16))


def spec_hex() -> str:
    """Every hexadecimal run of the specification, its wrapped blocks joined up."""
    text = SPEC.read_text(encoding="utf-8")
    text = re.sub(r"(?<=[0-9a-f])\n(?=[0-9a-f])", "", text)
    return " ".join(re.findall(r"[0-9a-f]{32,}", text))


def computed() -> dict[str, bytes]:
    head = genesis(TABLE, 0, [IDENTITY.public_key])
    bid = sign_message(IDENTITY, TABLE, 0, Kind.BID, 0, {"contract": "garde"}, head)
    beacon = Beacon(
        "alice",
        IDENTITY.public_key,
        47475,
        (TableInfo("club", 4, 1, True, TABLE),),
        False,
        1764633600,
    )
    coin = coin_commitment(TABLE, IDENTITY.public_key, bytes(32))
    alice = Member(IDENTITY.public_key, "alice", IDENTITY.public_key, "tcp://127.0.0.1:47475")
    manifest = manifest_bytes(TABLE, "club", [alice], SilenceCost.NOTHING)
    return {
        "public key": IDENTITY.public_key,
        "M_0": CARD_POINTS[0],
        "M_13": CARD_POINTS[13],
        "M_56": CARD_POINTS[56],
        "M_76": CARD_POINTS[76],
        "M_77": CARD_POINTS[77],
        "H_0": hash_to_point(b"tarot/v3/shuffle-generator", 0),
        "genesis": head,
        "commitment": commitment(bytes(32), TABLE, 0, 0),
        "bid": encode(bid),
        "bid digest": bid.digest,
        "head after the bid": next_head(head, bid),
        "beacon": encode_beacon(beacon, IDENTITY),
        "dealer-coin commitment": coin,
        "dealer-coin seal": IDENTITY.sign(seal_document(TABLE, manifest, [coin])),
    }


@pytest.mark.parametrize("name", sorted(computed()))
def test_vector_in_the_specification(name: str) -> None:
    value = computed()[name].hex()
    assert value in spec_hex().split(), f"docs/protocol.md does not give {name} as {value}"


def test_fingerprint_in_the_specification() -> None:
    assert f"`{IDENTITY.fingerprint}`" in SPEC.read_text(encoding="utf-8")


def test_first_dealer_in_the_specification() -> None:
    zero, one, two = bytes(32), bytes([1]) * 32, bytes([2]) * 32
    kept, revealed = first_dealer(TABLE, [zero, None, one]), first_dealer(TABLE, [zero, two, one])
    sentence = f"is seat **{kept}**; with `02…02` for the second, seat **{revealed}**"
    assert sentence in " ".join(SPEC.read_text(encoding="utf-8").split())


def mesh_frame_rows() -> dict[str, tuple[str, str]]:
    """The mesh frame table of the specification: kind → (direction, fields)."""
    section = SPEC.read_text(encoding="utf-8").split("## The mesh wire format")[1]
    table = section.split("**Frames**")[1].split("\n\n")[1]
    rows = re.findall(r"^\| `([a-z-]+)` \| ([A-Z]+ → [A-Z]+) \| (.*) \|$", table, re.M)
    return {kind: (direction, fields) for kind, direction, fields in rows}


def test_the_mesh_frames_of_the_specification_are_the_code_s() -> None:
    """Every kind, its direction, and its fields in signing order, as ``SHAPES`` checks them."""
    rows = mesh_frame_rows()
    assert set(rows) == set(SHAPES)
    for kind, (direction, fields) in rows.items():
        assert direction == ("DEALER → ROUTER" if kind in ROUTER_KINDS else "ROUTER → DEALER")
        assert kind in ROUTER_KINDS | LINK_KINDS
        at = 0
        for name in SHAPES[kind]:
            found = re.compile(rf"(?:^|[ ,]){name}\b").search(fields, at)
            assert found is not None, (
                f"docs/protocol.md: {kind} has no {name} after {fields[:at]!r}"
            )
            at = found.end()
    assert f'`"{SIGNING_DOMAIN.decode()}" ‖ t ‖ 0x00' in SPEC.read_text(encoding="utf-8")
