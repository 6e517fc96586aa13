"""The lobby's typed frames (tarotd/lobby/frames.py): the bytes on the wire are those daemons
sent before frames were typed, so that both versions form tables together; every frame a daemon
sends decodes back to itself; and :func:`~tarotd.lobby.frames.decode` refuses every malformed
variant of every kind with :class:`~protocol.wire.FieldError`."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from pathlib import Path

import msgpack
import pytest
from formation import form
from malformed import variants

from protocol import wire
from protocol.replication.identity import Identity
from protocol.replication.manifest import SilenceCost
from tarotd.coin import Reveal
from tarotd.lobby import frames
from tarotd.lobby.frames import Member, OfferState, WhyRefused

#: Each kind's frames in the order the formation of tests/formation.py sends them, packed and
#: concatenated: the first 16 bytes of their SHA-256, as main sent them at 8da5732, before the
#: frames were typed.
BEFORE_TYPED_FRAMES = {
    "answer": "62e85e92e25c94c5a318d7ab63e5b55c",
    "coin": "8856e22d8e7bc1bf7001fd8bdd4d6c52",
    "join": "e466eeaee80112afaeeb509c429f5b67",
    "knock": "4a60be5058170862106303b084748b17",
    "leave": "b98e77498e7cdf7c5a1d324be3e095dc",
    "manifest": "3a05688287814199b763cc6b8ce07b64",
    "offer": "93f1b01766e6005d5060ba10449e46bf",
    "prove": "945ff35d98cf715a4d32eb245a1976b9",
    "proven": "cad6ae5f981ff8150e1d9d0b56dff048",
    "refused": "14991cf0f04c74a02009ad68bbe5140a",
    "seal": "e114e4cd3b0a2b37315867b6654ff1f2",
    "sign": "172b514a8e64eb56cad933e46f1bf52d",
}


def test_a_formation_sends_the_bytes_daemons_sent_before_typed_frames() -> None:
    formation = form()
    assert formation.ready == [1, 1, 1, 0]  # the stranger with the wrong code sits nowhere
    by_kind: dict[str, list[bytes]] = defaultdict(list)
    for body in formation.sent:
        by_kind[msgpack.unpackb(body, raw=False)["t"]].append(body)
    digests = {
        kind: hashlib.sha256(b"".join(bodies)).hexdigest()[:32] for kind, bodies in by_kind.items()
    }
    assert digests == BEFORE_TYPED_FRAMES


def test_every_frame_a_daemon_sends_decodes_and_encodes_back_to_its_bytes() -> None:
    formation = form()
    kinds = set()
    for body in formation.sent:
        frame = frames.decode(msgpack.unpackb(body, raw=False))
        kinds.add(frame.kind)
        assert msgpack.packb(frame.to_wire(), use_bin_type=True) == body
    assert kinds == set(frames.Kind)


def key(n: int) -> bytes:
    return Identity.from_private_bytes(bytes([n]) * 32).public_key


TABLE, NONCE, SID = bytes(range(16)), bytes(range(16, 32)), bytes(range(32, 48))
ANNE, BOT, DAEMON, RELAYER = key(1), key(2), key(3), key(4)
SIG, TAG, SHARE, COIN = b"\x51" * 64, b"\x7a" * 64, b"\x5e" * 32, b"\xc0" * 32
ENDPOINT = "tcp://192.168.1.20:7000"
MEMBERS = (
    Member(ANNE, "Anne", DAEMON, ENDPOINT),
    Member(BOT, "Anne-bot1", DAEMON, ENDPOINT, "strong"),
)
MEMBERS_ON_THE_WIRE = [
    [ANNE, "Anne", DAEMON, ENDPOINT],
    [BOT, "Anne-bot1", DAEMON, ENDPOINT, "strong"],
]

#: One frame of each kind, and the map daemons sent for it before frames were typed (the maps
#: of tarotd/lobby.py at 8da5732: its keys, in its order).
GOLDEN: list[tuple[frames.LobbyFrame, dict[str, object]]] = [
    (
        frames.Offer(
            TABLE, "club", 4, DAEMON, MEMBERS, OfferState.OPEN, NONCE, SilenceCost.PENALTY
        ),
        {
            "t": "offer",
            "table": TABLE,
            "name": "club",
            "seats": 4,
            "opener": DAEMON,
            "members": MEMBERS_ON_THE_WIRE,
            "state": "open",
            "nonce": NONCE,
            "silence": "penalty",
        },
    ),
    (
        frames.Join(TABLE, MEMBERS),
        {"t": "join", "table": TABLE, "members": MEMBERS_ON_THE_WIRE},
    ),
    (frames.Leave(TABLE, (ANNE, BOT)), {"t": "leave", "table": TABLE, "keys": [ANNE, BOT]}),
    (
        frames.Manifest(TABLE, MEMBERS, SilenceCost.NOTHING),
        {"t": "manifest", "table": TABLE, "members": MEMBERS_ON_THE_WIRE, "silence": "nothing"},
    ),
    (
        frames.Sign(TABLE, ANNE, SIG, COIN),
        {"t": "sign", "table": TABLE, "key": ANNE, "sig": SIG, "commit": COIN},
    ),
    (
        frames.Seals(TABLE, ((ANNE, SIG), (BOT, TAG))),
        {"t": "seal", "table": TABLE, "seals": [[ANNE, SIG], [BOT, TAG]]},
    ),
    (
        frames.Coins(TABLE, (Reveal(ANNE, COIN, ((RELAYER, SIG),)), Reveal(BOT, SHARE))),
        {"t": "coin", "table": TABLE, "coins": [[ANNE, COIN, [[RELAYER, SIG]]], [BOT, SHARE, []]]},
    ),
    (
        frames.Knock(TABLE, SID, SHARE),
        {"t": "knock", "table": TABLE, "sid": SID, "share": SHARE},
    ),
    (
        frames.Answer(TABLE, SID, SHARE),
        {"t": "answer", "table": TABLE, "sid": SID, "share": SHARE},
    ),
    (frames.Prove(TABLE, SID, TAG), {"t": "prove", "table": TABLE, "sid": SID, "tag": TAG}),
    (frames.Proven(TABLE, SID, TAG), {"t": "proven", "table": TABLE, "sid": SID, "tag": TAG}),
    (
        frames.Refused(TABLE, SID, WhyRefused.WAIT),
        {"t": "refused", "table": TABLE, "sid": SID, "why": "wait"},
    ),
]
KINDS = [frame.kind.value for frame, _ in GOLDEN]


def test_the_golden_frames_are_one_of_each_kind() -> None:
    assert sorted(KINDS) == sorted(frames.Kind)


@pytest.mark.parametrize("frame, golden", GOLDEN, ids=KINDS)
def test_each_kind_is_the_map_it_was_key_for_key_and_decodes_back(
    frame: frames.LobbyFrame, golden: dict[str, object]
) -> None:
    sent = frame.to_wire()
    assert sent == golden and list(sent) == list(golden)  # the same keys, in the same order
    received = msgpack.unpackb(msgpack.packb(sent, use_bin_type=True), raw=False)
    assert frames.decode(received) == frame


@pytest.mark.parametrize("kind", ["offer", "manifest"])
def test_an_offer_or_a_manifest_without_a_rule_for_silence_is_under_nothing(kind: str) -> None:
    """Daemons sent neither with ``silence`` before tables had rules."""
    frame, golden = GOLDEN[KINDS.index(kind)]
    older = {name: value for name, value in golden.items() if name != "silence"}
    decoded = frames.decode(older)
    assert isinstance(decoded, frames.Offer | frames.Manifest)
    assert decoded.silence is SilenceCost.NOTHING


@pytest.mark.parametrize("frame, golden", GOLDEN, ids=KINDS)
def test_every_malformed_variant_of_every_kind_is_refused_saying_why(
    frame: frames.LobbyFrame, golden: dict[str, object]
) -> None:
    tried = 0
    for what, variant in variants(golden):
        with pytest.raises(wire.FieldError) as refusal:
            frames.decode(variant)
        assert str(refusal.value), what
        tried += 1
    assert tried > 20


@pytest.mark.parametrize(
    "value, why",
    [
        (None, "a lobby frame is a msgpack map, got NoneType None"),
        ([], "a lobby frame is a msgpack map, got list []"),
        ({"t": "hello"}, "t is one of answer, coin, join, knock, leave, manifest, offer, prove"),
        (
            {**GOLDEN[0][1], "seats": True},
            "seats is an integer, got bool True",
        ),
        (
            {**GOLDEN[0][1], "members": [*MEMBERS_ON_THE_WIRE, MEMBERS_ON_THE_WIRE[0]]},
            "a seat's key appears twice",
        ),
        ({**GOLDEN[0][1], "seats": 3, "members": MEMBERS_ON_THE_WIRE * 2}, "holds at most 3 items"),
        (
            {**GOLDEN[1][1], "members": [[ANNE, "Anne", DAEMON, ENDPOINT, "très fort"]]},
            "seat 0: a member's bot level is a word of letters and digits",
        ),
        ({**GOLDEN[3][1], "proof": b""}, "the manifest frame has unexpected fields 'proof'"),
        ({**GOLDEN[11][1], "why": "no"}, "why is one of code, locked, wait, got str 'no'"),
        ({**GOLDEN[7][1], "sid": 2**40}, "sid is bytes, got int 1099511627776"),
    ],
)
def test_a_refusal_names_the_field_and_the_rule(value: object, why: str) -> None:
    with pytest.raises(wire.FieldError) as refusal:
        frames.decode(value)
    assert why in str(refusal.value)


def test_the_lobby_frames_of_the_specification_are_the_code_s() -> None:
    """docs/protocol.md's table of the lobby's frames: every kind, each with its fields, in the
    order daemons send them."""
    spec = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text("utf-8")
    section = spec.split("## The lobby: forming a table")[1].split("\n## ")[0]
    rows = dict(re.findall(r"^\| `([a-z]+)` \| [^|]+ \| (.*) \|$", section, re.M))
    assert rows.pop("t") == "fields"  # the header
    assert set(rows) == set(frames.Kind)
    for kind, names in frames.FIELDS.items():
        named = re.findall(r"`([a-z]+)`", rows[kind])
        assert [name for name in named if name in names] == list(names), kind
