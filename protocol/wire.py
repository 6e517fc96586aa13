"""The one gate for untrusted bytes: msgpack unpacked under limits, then checked field by field.

Every decoder of a peer's bytes (protocol messages, deck payloads, beacons, lobby, mesh and
settlement frames) does the same two things: turn the bytes into one msgpack value, and
check that each field is what it must be.  Both are written here once, so that there is
one set of limits and one wording of a refusal; a decoder keeps only its shapes, and its
own error type if it has one (:func:`refused_as`).

:func:`unpack` takes exactly one msgpack value, from at most ``max_size`` bytes, of plain
types only (no ext type, no timestamp, no float — none has a use in the protocol and a float
has two encodings), at most ``max_depth`` containers deep, strings as UTF-8 text and map
keys as strings.  The field checks compare types exactly: ``True`` is an ``int`` to
``isinstance`` but it is not a seat.  Each returns the value it checked, typed, and raises
:class:`FieldError` naming the field and the rule:

>>> frame = unpack(msgpack.packb({"seat": 2, "name": "alice"}), max_size=64)
>>> hello = fields("hello", frame, ("seat", "name"))
>>> integer("seat", hello["seat"], 0, 4)
2
>>> integer("seat", True, 0, 4)
Traceback (most recent call last):
...
protocol.wire.FieldError: seat is an integer, got bool True
>>> fields("hello", {"seat": 2}, ("seat", "name"))
Traceback (most recent call last):
...
protocol.wire.FieldError: hello misses the field 'name'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, NoReturn, TypeVar

import msgpack

T = TypeVar("T")

#: Containers inside containers that :func:`unpack` lets through unless told otherwise; the
#: deepest honest value (a protocol message's payload inside its body) is 4 deep.
MAX_DEPTH: Final = 16
#: The integers a field may hold unless it says otherwise: what fits a signed 64-bit column.
INT_MAX: Final = 2**63 - 1
_SCALARS: Final = frozenset({type(None), bool, int, str, bytes})
_TEXT_KEYS: Final = frozenset({str})
_INT_KEYS: Final = frozenset({str, int})


class FieldError(ValueError):
    """Untrusted input that breaks a rule.  The text says which field and which rule, and
    holds at most a short excerpt of the value (:func:`describe`)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


def refused_as(error: Callable[[str], Exception]) -> AbstractContextManager[None]:
    """Raise ``error(text)`` for any :class:`FieldError` raised inside: the gate's refusals
    in the error type a decoder's callers already catch (``MessageError``, ``BeaconError``)."""
    return _RefusedAs(error)


class _RefusedAs(AbstractContextManager[None]):
    """:func:`refused_as`, a class: a generator-based context manager costs a few
    microseconds on the path of every message."""

    def __init__(self, error: Callable[[str], Exception]) -> None:
        self._error = error

    def __exit__(
        self, kind: type[BaseException] | None, refusal: BaseException | None, trace: object
    ) -> None:
        if isinstance(refusal, FieldError):
            raise self._error(str(refusal)) from None


def unpack(
    data: object,
    *,
    max_size: int,
    what: str = "frame",
    max_depth: int = MAX_DEPTH,
    int_keys: bool = False,
    max_array: int | None = None,
    max_map: int | None = None,
) -> object:
    """Exactly one msgpack value of plain types from ``data``, or :class:`FieldError`.

    Map keys are strings (``int_keys``: or integers, as a seat's); ``max_array`` and
    ``max_map`` bound the items of any one array or map before the parser makes room for
    them.  The parser fails in many ways (ExtraData, StackError, FormatError,
    UnicodeDecodeError, an unhashable map key…) that all mean one thing to a peer: every one
    of them is a :class:`FieldError` that names the parser's reason."""
    if type(data) is not bytes:
        raise FieldError(f"a {what}", f"is bytes, not {type(data).__name__}")
    if len(data) > max_size:
        raise FieldError(what, f"of {len(data)} bytes is over the limit of {max_size}")
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=not int_keys,
            use_list=True,
            ext_hook=_no_ext,
            max_array_len=max_array or -1,
            max_map_len=max_map or -1,
        )
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise FieldError(what, f"is not one msgpack value ({reason})") from None
    _check_plain(what, value, max_depth, _INT_KEYS if int_keys else _TEXT_KEYS)
    return value


def _no_ext(code: int, data: bytes) -> NoReturn:
    raise ValueError(f"ext type {code} is not part of the protocol")


def _check_plain(what: str, value: object, depth: int, keys: frozenset[type]) -> None:
    """Walk the value once, a level at a time (no recursion, one pass over each level): it
    is on the path of every frame, and a hostile value is at most ``max_size`` items."""
    level = [value]
    for height in range(depth + 1):
        below: list[object] = []
        for item in level:
            if type(item) is list:
                if height == depth:
                    raise _too_deep(what, depth)
                below += item
            elif type(item) is dict:
                if height == depth:
                    raise _too_deep(what, depth)
                if not keys.issuperset(map(type, item)):
                    kinds = "a string or an integer" if int in keys else "a string"
                    raise FieldError(what, f"has a map key that is not {kinds}")
                below += item.values()
            elif type(item) not in _SCALARS:
                raise FieldError(what, f"holds a {type(item).__name__}, which no field may be")
        if not below:
            return
        level = below


def _too_deep(what: str, depth: int) -> FieldError:
    return FieldError(what, f"is nested deeper than {depth} levels")


def require_canonical(what: str, data: bytes, value: object) -> None:
    """Refuse ``data`` unless it is the one encoding of ``value``: where bytes are hashed or
    signed, duplicate or unsorted keys and a needlessly long integer must not get in."""
    if msgpack.packb(value, use_bin_type=True) != data:
        raise FieldError(what, "is not canonical: it re-encodes to other bytes")


def fields(what: str, value: object, names: Sequence[str]) -> dict[str, Any]:
    """A map with exactly the keys ``names``; their values are for the caller to check."""
    if type(value) is not dict:
        raise FieldError(what, f"is a msgpack map, got {describe(value)}")
    if value.keys() == set(names):
        return value
    missing = [name for name in names if name not in value]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise FieldError(what, f"misses the field{plural} {', '.join(map(repr, missing))}")
    extra = sorted(repr(key) for key in value if key not in names)
    if extra:
        raise FieldError(what, f"has unexpected fields {', '.join(extra)}")
    return value


def array(
    what: str, value: object, *, length: int | None = None, max_length: int | None = None
) -> list[object]:
    """A list of exactly ``length`` items, or of at most ``max_length``."""
    if type(value) is not list:
        raise FieldError(what, f"is a msgpack array, got {describe(value)}")
    if length is not None and len(value) != length:
        raise FieldError(what, f"is an array of {length} items, got {len(value)}")
    if max_length is not None and len(value) > max_length:
        raise FieldError(what, f"holds at most {max_length} items, got {len(value)}")
    return value


def array_of(
    what: str, value: object, item: Callable[[str, object], T], *, max_length: int
) -> list[T]:
    """A list of at most ``max_length`` items, each passing ``item(name, value)``."""
    items = array(what, value, max_length=max_length)
    return [item(f"{what}[{index}]", entry) for index, entry in enumerate(items)]


def integer(what: str, value: object, low: int = 0, high: int = INT_MAX) -> int:
    """An ``int`` (not a bool) in ``low..high``."""
    if type(value) is not int:
        raise FieldError(what, f"is an integer, got {describe(value)}")
    if not low <= value <= high:
        raise FieldError(what, f"{value} is out of range {low}..{high}")
    return value


def uint(what: str, value: object) -> int:
    """A non-negative ``int`` below 2**63: a counter, a sequence number, a time."""
    return integer(what, value)


def boolean(what: str, value: object) -> bool:
    if type(value) is not bool:
        raise FieldError(what, f"is a boolean, got {describe(value)}")
    return value


def blob(what: str, value: object, size: int) -> bytes:
    """Bytes of exactly ``size``: a key, a hash, a signature, a nonce.  A subclass of ``bytes``
    is bytes (msgpack makes none; a payload built in this process may carry one — the symbolic
    tests' traced points); a ``bytearray`` or a ``memoryview`` is not."""
    if not isinstance(value, bytes):
        raise FieldError(what, f"is bytes, got {describe(value)}")
    if len(value) != size:
        raise FieldError(what, f"is {size} bytes, got {len(value)}")
    return value


def binary(what: str, value: object, max_size: int) -> bytes:
    """Bytes of at most ``max_size`` (a subclass of ``bytes`` too, as for :func:`blob`)."""
    if not isinstance(value, bytes):
        raise FieldError(what, f"is bytes, got {describe(value)}")
    if len(value) > max_size:
        raise FieldError(what, f"is at most {max_size} bytes, got {len(value)}")
    return value


def text(what: str, value: object, max_length: int, min_length: int = 0) -> str:
    """A string of ``min_length`` to ``max_length`` characters."""
    if type(value) is not str:
        raise FieldError(what, f"is a string, got {describe(value)}")
    if not min_length <= len(value) <= max_length:
        raise FieldError(what, f"is {min_length} to {max_length} characters, got {len(value)}")
    return value


def choice(what: str, value: object, options: Mapping[str, T]) -> T:
    """What the string ``value`` names in ``options`` (a kind, an enum member)."""
    if type(value) is not str or value not in options:
        raise FieldError(what, f"is one of {', '.join(sorted(options))}, got {describe(value)}")
    return options[value]


def describe(value: object) -> str:
    """A value's type and its repr cut short, for a refusal: the value may be a megabyte of
    a peer's garbage."""
    excerpt = repr(value)
    if len(excerpt) > 40:
        excerpt = excerpt[:37] + "..."
    return f"{type(value).__name__} {excerpt}"
