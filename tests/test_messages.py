"""The signed envelope: identities, one byte string per message, and a decoder that only
ever answers with a valid message or a MessageError."""

from __future__ import annotations

import dataclasses
import re

import msgpack
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from protocol.replication.identity import Identity, fingerprint, is_valid_public_key, verify
from protocol.replication.messages import (
    MAX_FRAME_SIZE,
    MAX_PAYLOAD_DEPTH,
    PAYLOAD_LIMITS,
    PROTOCOL_VERSION,
    SIGNING_DOMAIN,
    Kind,
    Message,
    MessageError,
    WireValue,
    decode,
    encode,
    sign_message,
    verify_signature,
)

ALICE = Identity.from_private_bytes(bytes(range(32)))
BOB = Identity.from_private_bytes(bytes(range(1, 33)))
TABLE = bytes.fromhex("00112233445566778899aabbccddeeff")
PREV = bytes(range(32))
ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


def sample(kind: Kind = Kind.PLAY, payload: WireValue = None) -> Message:
    """A message validly signed by ALICE for seat 2."""
    return sign_message(
        ALICE, TABLE, 7, kind, 2, {"position": 17} if payload is None else payload, PREV
    )


def frame(fields: list[object], signature: object = bytes(64)) -> bytes:
    """A frame built by hand, bypassing every check of the encoder."""
    data: bytes = msgpack.packb([msgpack.packb(fields), signature])
    return data


def fields(**changes: object) -> list[object]:
    values: dict[str, object] = dict(
        version=PROTOCOL_VERSION,
        table_id=TABLE,
        deal=7,
        kind="play",
        seat=2,
        payload={"position": 17},
        prev=PREV,
    )
    values.update(changes)
    return list(values.values())


# --- Identity --------------------------------------------------------------------------


def test_identity_signs_and_verifies() -> None:
    signature = ALICE.sign(b"hello")
    assert len(ALICE.public_key) == 32 and len(signature) == 64
    assert verify(ALICE.public_key, signature, b"hello")
    assert not verify(ALICE.public_key, signature, b"hellO")
    assert not verify(BOB.public_key, signature, b"hello")


def test_identity_survives_storage() -> None:
    fresh = Identity.generate()
    again = Identity.from_private_bytes(fresh.private_bytes())
    assert again.public_key == fresh.public_key
    assert fresh.public_key != Identity.generate().public_key
    with pytest.raises(ValueError, match="32 bytes"):
        Identity.from_private_bytes(b"short")


def test_fingerprint_is_short_and_readable() -> None:
    assert re.fullmatch(r"[0-9a-f]{4}(-[0-9a-f]{4}){3}", fingerprint(ALICE.public_key))
    assert fingerprint(ALICE.public_key) != fingerprint(BOB.public_key)
    assert ALICE.fingerprint in repr(ALICE)
    assert ALICE.private_bytes().hex() not in repr(ALICE)


def test_signature_is_not_malleable() -> None:
    """S + L is the textbook second signature; accepting it would let anybody turn one
    signed message into two and frame its author for equivocation."""
    signature = ALICE.sign(b"m")
    s = int.from_bytes(signature[32:], "little") + ED25519_ORDER
    assert not verify(ALICE.public_key, signature[:32] + s.to_bytes(32, "little"), b"m")


def test_weak_keys_are_refused() -> None:
    """Under a small-order key, (R = identity, S = 0) checks for any message with a plain
    RFC 8032 verifier: such a key would make a seat's signatures worthless."""
    identity_point = (1).to_bytes(32, "little")
    assert not is_valid_public_key(identity_point)
    assert not verify(identity_point, identity_point + bytes(32), b"anything")
    assert not is_valid_public_key(bytes(31))


@given(st.binary(max_size=80), st.binary(max_size=80), st.binary(max_size=40))
@settings(max_examples=500)
def test_verify_never_raises(key: bytes, signature: bytes, data: bytes) -> None:
    assert verify(key, signature, data) in (False, True)


# --- Round trip and canonical bytes --------------------------------------------------


def test_round_trip() -> None:
    payload: WireValue = {
        "keys": [b"\x01" * 32, b"\x02" * 32],
        "n": -5,
        "ok": True,
        "none": None,
        "t": "é",
    }
    message = sample(Kind.DEAL_KEYS, payload)
    data = encode(message)
    again = decode(data)
    assert again == message
    assert encode(again) == data
    assert again.digest == message.digest and len(message.digest) == 32
    assert verify_signature(again, ALICE.public_key)
    assert again.version == PROTOCOL_VERSION and again.kind is Kind.DEAL_KEYS


def test_map_key_order_does_not_change_the_bytes() -> None:
    one = sample(payload={"a": 1, "b": {"y": 2, "x": 3}})
    two = sample(payload={"b": {"x": 3, "y": 2}, "a": 1})
    assert encode(one) == encode(two)
    assert list(two.payload) == ["a", "b"]  # type: ignore[arg-type]  # the payload is the map given


def test_payload_is_copied_so_later_changes_cannot_desynchronise_it() -> None:
    payload: dict[str, WireValue] = {"position": 17}
    message = sample(payload=payload)
    payload["position"] = 18
    assert message.payload == {"position": 17}
    assert decode(encode(message)) == message


def test_signature_covers_the_domain_and_every_field() -> None:
    message = sample()
    assert ALICE.sign(message.signed_data) == message.signature
    assert message.signed_data.startswith(SIGNING_DOMAIN)
    assert not verify_signature(message, BOB.public_key)
    for change in ({"seat": 3}, {"deal": 8}, {"payload": {"position": 18}}, {"prev": bytes(32)}):
        forged = dataclasses.replace(message, **change)
        assert not verify_signature(forged, ALICE.public_key), change


def checks_counted(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The keys the real signature check is run for, from now on."""
    import protocol.replication.messages

    keys: list[bytes] = []

    def counting(public_key: bytes, signature: bytes, data: bytes) -> bool:
        keys.append(public_key)
        return verify(public_key, signature, data)

    monkeypatch.setattr(protocol.replication.messages, "verify", counting)
    return keys


def test_a_message_signed_here_is_not_checked_again_for_its_signer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = checks_counted(monkeypatch)
    message = sample()
    assert verify_signature(message, ALICE.public_key) and keys == []
    assert not verify_signature(message, BOB.public_key) and keys == [BOB.public_key]


def test_a_received_message_is_checked_once_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = checks_counted(monkeypatch)
    received = decode(encode(sample()))
    assert verify_signature(received, ALICE.public_key) and verify_signature(
        received, ALICE.public_key
    )
    assert keys == [ALICE.public_key]
    for _ in range(2):  # a failed check is not remembered: it is run again, and fails again
        assert not verify_signature(received, BOB.public_key)
    assert keys == [ALICE.public_key, BOB.public_key, BOB.public_key]
    assert decode(encode(received)) == received  # the memo is not part of the message


def test_a_message_signed_by_an_outsider_in_a_seats_name_is_still_refused() -> None:
    """What cheats.py does: sign a seat's message with a key that is not the seat's.  The
    memo names the outsider's key, so the seat's key is checked for real, and fails."""
    forged = sign_message(BOB, TABLE, 7, Kind.PLAY, 2, {"position": 17}, PREV)
    assert verify_signature(forged, BOB.public_key)
    assert not verify_signature(forged, ALICE.public_key)
    assert not verify_signature(
        dataclasses.replace(sample(), signature=forged.signature), ALICE.public_key
    )


def test_repr_is_short() -> None:
    message = sample(Kind.SHUFFLE, {"deck": [bytes(32)] * 78})
    assert len(repr(message)) < 100 and "shuffle" in repr(message)


def test_hand_built_frame_decodes_when_canonical() -> None:
    body = fields()
    signed = frame(body, ALICE.sign(SIGNING_DOMAIN + msgpack.packb(body)))
    assert signed == encode(sample())
    assert verify_signature(decode(signed), ALICE.public_key)


def test_unsorted_map_keys_are_rejected_even_when_signed() -> None:
    body = fields(payload={"b": 1, "a": 2})
    signed = frame(body, ALICE.sign(SIGNING_DOMAIN + msgpack.packb(body)))
    with pytest.raises(MessageError, match="non-canonical"):
        decode(signed)


def test_needlessly_long_integer_is_rejected() -> None:
    canonical = encode(sample())
    body = msgpack.packb(fields())
    long_body = body.replace(b"\x07", b"\xcc\x07", 1)  # deal 7 as a uint8
    assert msgpack.unpackb(long_body) == msgpack.unpackb(body)
    with pytest.raises(MessageError, match="non-canonical"):
        decode(msgpack.packb([long_body, bytes(64)]))
    assert decode(canonical)


def test_duplicate_map_key_is_rejected() -> None:
    # {"a": 1, "a": 2}: a map of two entries with one key twice.
    payload = b"\x82\xa1a\x01\xa1a\x02"
    body = msgpack.packb(fields(payload=None)).replace(b"\xc0", payload)
    with pytest.raises(MessageError, match="non-canonical"):
        decode(msgpack.packb([body, bytes(64)]))


# --- Every rejection -----------------------------------------------------------------


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", "frame is not one msgpack value"),
        (b"\xc1", "frame is not one msgpack value"),
        (encode(sample())[:-1], "frame is not one msgpack value"),
        (encode(sample()) + b"\x00", "frame is not one msgpack value"),
        (msgpack.packb({"body": 1}), "frame is a msgpack array"),
        (msgpack.packb([b"x"]), "frame is a msgpack array"),
        (msgpack.packb([b"x", b"y", b"z"]), "frame is a msgpack array"),
        (msgpack.packb([1, bytes(64)]), "body is msgpack bin"),
        (msgpack.packb([b"\xc1", bytes(64)]), "body is not one msgpack value"),
        (msgpack.packb([msgpack.packb(fields())[:-3], bytes(64)]), "body is not one msgpack value"),
        (frame(fields()[:6]), "a body is a msgpack array"),
        (frame(fields() + [0]), "a body is a msgpack array"),
        (frame({"version": 1}), "a body is a msgpack array"),  # type: ignore[arg-type]  # a map where the body's array goes, on purpose
        (frame(fields(kind="teleport")), "unknown message kind"),
        (frame(fields(kind=3)), "unknown message kind"),
        (frame(fields(kind="PLAY")), "unknown message kind"),
        (frame(fields(version=1)), "unsupported protocol version 1"),  # the v1 deck leaked hands
        (frame(fields(version=3)), "unsupported protocol version 3"),
        (frame(fields(version=0)), "unsupported protocol version 0"),
        (frame(fields(version=True)), "version is an integer"),
        (frame(fields(version="1")), "version is an integer"),
        (frame(fields(table_id=TABLE[:15])), "table_id is 16 bytes, got 15"),
        (frame(fields(table_id=TABLE.hex())), "table_id is bytes"),
        (frame(fields(deal=-1)), "deal -1 is out of range"),
        (frame(fields(deal=1.0)), "body holds a float"),  # no field is a float: the gate's
        (frame(fields(seat=5)), "seat 5 is out of range 0..4"),
        (frame(fields(seat=-1)), "seat -1 is out of range"),
        (frame(fields(seat=None)), "seat is an integer"),
        (frame(fields(prev=PREV + b"\x00")), "prev is 32 bytes, got 33"),
        (frame(fields(prev=None)), "prev is bytes"),
        (frame(fields(), signature=bytes(63)), "signature is 64 bytes, got 63"),
        (frame(fields(), signature="sig"), "signature is bytes"),
        (frame(fields(payload={"x": 1.5})), "body holds a float"),
        (frame(fields(payload={1: 2})), "body is not one msgpack value"),  # strict_map_key
        (frame(fields(payload={b"k": 2})), "body has a map key that is not a string"),
        (frame(fields(payload=msgpack.ExtType(5, b"x"))), "ext type 5 is not part of the protocol"),
        (frame(fields(payload=[[[[[[[[[1]]]]]]]]])), f"deeper than {MAX_PAYLOAD_DEPTH} levels"),
        (frame(fields(payload=[0] * 1024)), "play payload of 1027 bytes is over the limit of 1024"),
        (b"\x91" * 100_000, "frame of 100000 bytes is over the limit"),
    ],
)
def test_rejections(data: bytes, error: str) -> None:
    with pytest.raises(MessageError, match=re.escape(error)):
        decode(data, max_size=50_000)


def test_frame_limit_is_configurable_and_has_a_sane_default() -> None:
    data = encode(sample())
    with pytest.raises(MessageError, match=f"frame of {len(data)} bytes is over the limit of 10"):
        decode(data, max_size=10)
    assert MAX_FRAME_SIZE > max(PAYLOAD_LIMITS.values())
    assert set(PAYLOAD_LIMITS) == set(Kind)


def test_invalid_utf8_is_rejected() -> None:
    body = msgpack.packb(fields(payload="ab")).replace(b"\xa2ab", b"\xa2\xff\xfe")
    with pytest.raises(MessageError, match="UnicodeDecodeError"):
        decode(msgpack.packb([body, bytes(64)]))


def test_decode_wants_bytes() -> None:
    with pytest.raises(MessageError, match="a frame is bytes, not bytearray"):
        decode(bytearray(encode(sample())))  # type: ignore[arg-type]  # not bytes, on purpose


@pytest.mark.parametrize(
    "payload, error",
    [
        ((1, 2), "payload cannot hold tuple"),
        ({"x": 0.5}, "payload cannot hold float"),
        ({"x": Kind.PLAY}, "payload cannot hold Kind"),
        ({"x": bytearray(b"x")}, "payload cannot hold bytearray"),
        ({"x": 2**64}, "payload integer 18446744073709551616 is out of range"),
        ({"x": -(2**63) - 1}, "is out of range"),
        ({"x": "\udc80"}, "lone surrogate"),
        ({3: "x"}, "payload map keys are strings"),
        ({"deck": [bytes(32)] * 1000}, "play payload of"),
    ],
)
def test_signing_refuses_what_peers_would_reject(payload: object, error: str) -> None:
    with pytest.raises(MessageError, match=re.escape(error)):
        sign_message(ALICE, TABLE, 7, Kind.PLAY, 2, payload, PREV)  # type: ignore[arg-type]  # what peers would reject, on purpose


@pytest.mark.parametrize(
    "change, error",
    [
        ({"table_id": b"x"}, "table_id is 16 bytes, got 1"),
        ({"deal": 2**64}, "deal 18446744073709551616 is out of range"),
        ({"seat": 5}, "seat 5 is out of range"),
        ({"kind": "play"}, "kind is a Kind"),
        ({"prev": b""}, "prev is 32 bytes, got 0"),
    ],
)
def test_signing_checks_the_envelope(change: dict[str, object], error: str) -> None:
    arguments: dict[str, object] = dict(
        identity=ALICE, table_id=TABLE, deal=7, kind=Kind.PLAY, seat=2, payload=None, prev=PREV
    )
    arguments.update(change)
    with pytest.raises(MessageError, match=re.escape(error)):
        sign_message(**arguments)  # type: ignore[arg-type]  # a bad envelope field, on purpose


def test_extreme_but_valid_values_round_trip() -> None:
    payload: WireValue = {"big": 2**64 - 1, "small": -(2**63), "deep": [[[[[[[1]]]]]]], "empty": {}}
    message = sign_message(ALICE, TABLE, 2**64 - 1, Kind.ABANDON, 4, payload, PREV)
    assert decode(encode(message)) == message
    largest: WireValue = {"x": bytes(PAYLOAD_LIMITS[Kind.SHUFFLE] - 20)}
    big = sign_message(ALICE, TABLE, 0, Kind.SHUFFLE, 0, largest, PREV)
    assert decode(encode(big)) == big


# --- Fuzzing: only MessageError or a valid message -----------------------------------


def check_decode(data: bytes) -> None:
    """The decoder's contract, for any input."""
    try:
        message = decode(data)
    except MessageError:
        return
    assert encode(message) == data


VALID_FRAMES = [
    encode(sample()),
    encode(
        sample(
            Kind.DEAL_KEYS, {"keys": {"3": b"\x01" * 32, "12": b"\x02" * 32}, "n": [-1, 300, None]}
        )
    ),
    encode(sample(Kind.BID, "garde")),
]

msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**65)
    | st.floats()
    | st.binary(max_size=40)
    | st.text(max_size=10)
    | st.sampled_from([k.value for k in Kind]),
    lambda children: (
        st.lists(children, max_size=8) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=8,
)


@pytest.mark.heavy
@given(st.binary(max_size=300))
@settings(max_examples=3000)
@example(b"\x91" * 5000)
@example(b"\xdd\xff\xff\xff\xff")
@example(b"\xc7\x01\x05\x00")
def test_fuzz_random_bytes(data: bytes) -> None:
    check_decode(data)


@pytest.mark.heavy
@given(st.data())
@settings(max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_mutated_valid_frames(data: st.DataObject) -> None:
    wire = bytearray(data.draw(st.sampled_from(VALID_FRAMES)))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(wire)))
        operation = data.draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        byte = data.draw(st.integers(0, 255))
        if operation == "flip" and position < len(wire):
            wire[position] ^= 1 << (byte % 8)
        elif operation == "set" and position < len(wire):
            wire[position] = byte
        elif operation == "insert":
            wire.insert(position, byte)
        elif operation == "delete" and position < len(wire):
            del wire[position]
        elif operation == "truncate":
            del wire[position:]
    check_decode(bytes(wire))


@pytest.mark.heavy
@given(st.lists(msgpack_values, min_size=6, max_size=8), st.binary(min_size=60, max_size=70))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_well_formed_frames_with_random_fields(body: list[object], signature: bytes) -> None:
    try:
        data = frame(body, signature)
    except (OverflowError, ValueError):
        return  # msgpack cannot encode it, so no peer can send it
    check_decode(data)


@pytest.mark.heavy
@given(st.data())
@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_one_field_replaced(data: st.DataObject) -> None:
    body = fields()
    body[data.draw(st.integers(0, 6))] = data.draw(msgpack_values)
    try:
        encoded = frame(body)
    except (OverflowError, ValueError):
        return
    check_decode(encoded)
