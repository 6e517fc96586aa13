"""The one gate for untrusted fields (protocol/wire.py), from a hostile peer's point of view:
each check lets through what it must and refuses everything else, saying which field."""

from __future__ import annotations

import doctest
import re

import msgpack
import pytest

from protocol import wire
from protocol.wire import FieldError


def refused(check: object, error: str) -> None:
    assert callable(check)
    with pytest.raises(FieldError, match=re.escape(error)):
        check()


def test_the_examples_in_the_docstring_run() -> None:
    assert doctest.testmod(wire).failed == 0


def test_unpack_takes_one_value_of_plain_types() -> None:
    value = {"a": [1, -2, True, None, "é", b"\x00"], "b": {"c": []}}
    assert wire.unpack(msgpack.packb(value), max_size=100) == value


@pytest.mark.parametrize(
    "data, error",
    [
        (bytearray(b"\x90"), "a frame is bytes, not bytearray"),
        ("\x90", "a frame is bytes, not str"),
        (msgpack.packb([0] * 200), "frame of 203 bytes is over the limit of 100"),
        (b"", "frame is not one msgpack value"),
        (b"\xc1", "frame is not one msgpack value"),
        (b"\x90\x90", "frame is not one msgpack value (ExtraData"),
        (b"\xa2\xff\xfe", "UnicodeDecodeError"),
        (msgpack.packb({1: 2}), "frame is not one msgpack value"),  # a key that is not text
        (msgpack.packb({b"k": 2}, use_bin_type=True), "frame has a map key that is not a string"),
        (msgpack.packb(msgpack.ExtType(5, b"x")), "ext type 5 is not part of the protocol"),
        (msgpack.packb([msgpack.Timestamp(1)], datetime=False), "holds a Timestamp"),
        (msgpack.packb({"x": 0.5}), "holds a float"),
        (msgpack.packb([[[[1]]]]), "frame is nested deeper than 3 levels"),
        (msgpack.packb({"a": {"b": {"c": {}}}}), "nested deeper than 3 levels"),
    ],
)
def test_unpack_refuses(data: object, error: str) -> None:
    refused(lambda: wire.unpack(data, max_size=100, max_depth=3), error)


def test_unpack_lets_the_deepest_allowed_value_through_and_names_what_it_reads() -> None:
    assert wire.unpack(msgpack.packb([[{}]]), max_size=100, max_depth=3) == [[{}]]
    refused(lambda: wire.unpack(b"\xc1", max_size=9, what="body"), "body is not one msgpack")


def test_a_deep_bomb_is_refused_without_recursion() -> None:
    bomb = b"\x91" * 10_000 + b"\xc0"
    refused(lambda: wire.unpack(bomb, max_size=20_000), "frame is not one msgpack value")


def test_canonical_refuses_another_encoding_of_the_same_value() -> None:
    honest = msgpack.packb({"a": 1, "b": 2})
    wire.require_canonical("body", honest, {"a": 1, "b": 2})
    long_int = b"\x81\xa1a\xcd\x00\x01"  # {"a": 1} with 1 as a uint16
    assert wire.unpack(long_int, max_size=10) == {"a": 1}
    refused(lambda: wire.require_canonical("body", long_int, {"a": 1}), "body is not canonical")
    duplicate = b"\x82\xa1a\x01\xa1a\x01"
    refused(lambda: wire.require_canonical("body", duplicate, {"a": 1}), "not canonical")


def test_fields_wants_exactly_the_keys() -> None:
    assert wire.fields("ack", {"s": 1, "n": 2}, ("s", "n")) == {"s": 1, "n": 2}
    refused(lambda: wire.fields("ack", [1, 2], ("s", "n")), "ack is a msgpack map, got list")
    refused(lambda: wire.fields("ack", {"s": 1}, ("s", "n")), "ack misses the field 'n'")
    refused(lambda: wire.fields("ack", {}, ("s", "n")), "ack misses the fields 's', 'n'")
    extra = {"s": 1, "n": 2, "x": 3}
    refused(lambda: wire.fields("ack", extra, ("s", "n")), "ack has unexpected fields 'x'")


def test_integer_is_an_int_in_range_and_never_a_bool() -> None:
    assert wire.integer("seat", 4, 0, 4) == 4
    assert wire.uint("seq", 2**63 - 1) == 2**63 - 1
    refused(lambda: wire.integer("seat", True, 0, 4), "seat is an integer, got bool True")
    refused(lambda: wire.integer("seat", 1.0, 0, 4), "seat is an integer, got float 1.0")
    refused(lambda: wire.integer("seat", "1", 0, 4), "seat is an integer, got str '1'")
    refused(lambda: wire.integer("seat", 5, 0, 4), "seat 5 is out of range 0..4")
    refused(lambda: wire.uint("seq", -1), "seq -1 is out of range 0..")
    refused(lambda: wire.uint("seq", 2**63), "is out of range")


def test_boolean_is_a_bool_and_not_an_int() -> None:
    assert wire.boolean("open", False) is False
    refused(lambda: wire.boolean("open", 1), "open is a boolean, got int 1")


def test_bytes_of_a_size_and_of_at_most_a_size() -> None:
    assert wire.blob("key", bytes(32), 32) == bytes(32)
    refused(lambda: wire.blob("key", bytes(31), 32), "key is 32 bytes, got 31")
    refused(lambda: wire.blob("key", "k" * 32, 32), "key is bytes, got str")
    refused(lambda: wire.blob("key", bytearray(32), 32), "key is bytes, got bytearray")
    assert wire.binary("body", b"", 4) == b""
    refused(lambda: wire.binary("body", bytes(5), 4), "body is at most 4 bytes, got 5")
    refused(lambda: wire.binary("body", [1], 4), "body is bytes, got list")


def test_text_is_bounded() -> None:
    assert wire.text("name", "ab", 2) == "ab"
    refused(lambda: wire.text("name", "abc", 2), "name is 0 to 2 characters, got 3")
    refused(lambda: wire.text("name", "", 2, min_length=1), "name is 1 to 2 characters, got 0")
    refused(lambda: wire.text("name", b"ab", 2), "name is a string, got bytes")


def test_arrays_of_a_length_and_of_a_kind() -> None:
    assert wire.array("pair", [1, 2], length=2) == [1, 2]
    refused(lambda: wire.array("pair", (1, 2), length=2), "pair is a msgpack array, got tuple")
    refused(lambda: wire.array("pair", [1], length=2), "pair is an array of 2 items, got 1")
    refused(lambda: wire.array("miss", [0] * 4, max_length=3), "miss holds at most 3 items, got 4")
    assert wire.array_of("miss", [1, 2], wire.uint, max_length=3) == [1, 2]
    refused(
        lambda: wire.array_of("miss", [1, True], wire.uint, max_length=3), "miss[1] is an integer"
    )
    refused(lambda: wire.array_of("miss", [1] * 4, wire.uint, max_length=3), "at most 3 items")


def test_choice_names_an_option() -> None:
    kinds = {"play": 1, "bid": 2}
    assert wire.choice("kind", "bid", kinds) == 2
    refused(lambda: wire.choice("kind", "PLAY", kinds), "kind is one of bid, play, got str 'PLAY'")
    refused(lambda: wire.choice("kind", 1, kinds), "kind is one of bid, play, got int 1")


def test_a_refusal_cuts_a_long_value_short() -> None:
    with pytest.raises(FieldError) as refusal:
        wire.blob("key", "x" * 10_000, 32)
    assert len(str(refusal.value)) < 80
    assert (refusal.value.field, refusal.value.rule) == ("key", f"is bytes, got str '{'x' * 36}...")


def test_refused_as_keeps_the_text_in_the_decoders_own_error() -> None:
    class BeaconError(ValueError):
        pass

    with pytest.raises(BeaconError, match="^port 0 is out of range 1..65535$"):
        with wire.refused_as(BeaconError):
            wire.integer("port", 0, 1, 65535)
