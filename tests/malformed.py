"""Malformed variants of a well-formed lobby frame, as a peer breaking the decoder would try
them: each field missing, of another type, too long or too short, a bool where an integer goes,
a field too many — and the same inside each record of a list (a member, a seal, a coin, a
relay).  Every variant is malformed whatever the frame's kind: none is a frame some daemon could
send (a record is cut to half its items, never to a shorter valid one).
"""

from __future__ import annotations

from collections.abc import Iterator

TOO_MANY = 17  #: items of a list longer than any lobby frame lets through
TOO_LONG = "x" * 300  #: a text longer than any of a lobby frame
COLLECTION_JUNK: list[object] = [None, "x", b"x", 7, {}]


def variants(frame: dict[str, object]) -> Iterator[tuple[str, dict[str, object]]]:
    """(what was done, the frame with it done), each malformed."""
    yield "a field too many", {**frame, "junk": 1}
    yield "no kind", {k: v for k, v in frame.items() if k != "t"}
    yield "an unknown kind", {**frame, "t": f"{frame['t']}s"}
    yield "the kind as bytes", {**frame, "t": str(frame["t"]).encode()}
    for name, value in frame.items():
        if name == "t":
            continue
        if name != "silence":  # daemons from before the rule send none: nothing, then
            yield f"{name} missing", {k: v for k, v in frame.items() if k != name}
        for what, bad in _wrong_field(value):
            yield f"{name}: {what}", {**frame, name: bad}


def _wrong_field(value: object) -> Iterator[tuple[str, object]]:
    if isinstance(value, bytes):
        yield from _scalar_junk(value)
        yield "a byte too many", value + b"\0"
        yield "a byte short", value[:-1]
        yield "as text", value.hex()
        yield "in a list", [value]
    elif isinstance(value, str):
        yield from _scalar_junk(value)
        yield "too long", TOO_LONG
        yield "as bytes", value.encode()
    elif isinstance(value, int):
        yield from _scalar_junk(value)
        yield "False", False
        yield "as text", str(value)
        yield "out of range", value + 100
        yield "negative", -value
    elif isinstance(value, list):
        yield from ((repr(junk), junk) for junk in COLLECTION_JUNK)
        yield "too many items", (value * TOO_MANY)[:TOO_MANY] if value else [None] * TOO_MANY
        if value:
            first = value[0]
            wrong = _wrong_record(first) if isinstance(first, list) else _wrong_field(first)
            yield from ((f"item 0: {what}", [bad, *value[1:]]) for what, bad in wrong)


def _scalar_junk(value: object) -> Iterator[tuple[str, object]]:
    for junk in (None, True, [], {}):
        yield repr(junk), junk
    if not isinstance(value, int):
        yield "7", 7


def _wrong_record(record: list[object]) -> Iterator[tuple[str, object]]:
    yield from ((repr(junk), junk) for junk in COLLECTION_JUNK)
    yield "half its items", record[: len(record) // 2]
    yield "an item too many", [*record, "junk item"]
    for index, part in enumerate(record):
        for what, bad in _wrong_field(part):
            yield f"[{index}] {what}", [*record[:index], bad, *record[index + 1 :]]
