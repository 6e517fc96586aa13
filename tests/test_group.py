"""The group layer: card points, validation of every received point and scalar, the counter."""

import hashlib
from collections.abc import Iterator

import pytest
import rbcl

from client.workers import Threads
from protocol.deck import group
from protocol.deck.group import (
    CARD_POINTS,
    GENERATOR,
    IDENTITY,
    MULTS,
    ORDER,
    GroupError,
    add,
    base_mul,
    card_of,
    check_point,
    check_scalar,
    first_invalid_point,
    hash_to_point,
    invert,
    mul,
    mul_batches,
    mul_each,
    scalar_from_digest,
    scalar_mul,
    scalar_product,
    sub,
    uniform_bytes,
)
from tarotd.workers import Workers

P = 2**255 - 19  # the field prime

# Encodings that are no element of the group, or the identity (which no seat may send): one of
# each kind RFC 9496 §A.2 lists (non-canonical, negative, non-square x², negative xy, s = −1).
INVALID = [
    IDENTITY,
    bytes.fromhex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    bytes.fromhex("0100000000000000000000000000000000000000000000000000000000000000"),
    bytes.fromhex("26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371"),
    bytes.fromhex("3eb858e78f5a7254d8c9731174a94f76755fd3941c0ac93735c07ba14579630e"),
    bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
]


def scalar(value: int) -> bytes:
    return value.to_bytes(32, "little")


def test_card_points_are_78_distinct_valid_points_from_the_documented_hash() -> None:
    """``M_c`` is RFC 9496's one-way map of SHA-512(u32(13) ‖ "tarot/v3/card" ‖ u32(c)), as
    docs/protocol.md says (computed here without the module's helpers)."""
    assert len(CARD_POINTS) == 78 == len(set(CARD_POINTS))
    for index, point in enumerate(CARD_POINTS):
        assert check_point(point) == point
        framed = (13).to_bytes(4, "big") + b"tarot/v3/card" + index.to_bytes(4, "big")
        assert point == rbcl.crypto_core_ristretto255_from_hash(hashlib.sha512(framed).digest())
        assert card_of(point) == index


def test_hash_to_point_frames_its_domain_and_index() -> None:
    """No (domain, index) pair hashes like another: the domain is length-prefixed and the
    index a fixed four bytes, so moving a byte between them changes the point."""
    assert uniform_bytes(b"ab", 0x63) != uniform_bytes(b"abc", 0)
    assert hash_to_point(b"tarot/v3/card", 1) != hash_to_point(b"tarot/v3/card\x00", 0)
    assert hash_to_point(b"x", 256) != hash_to_point(b"x", 1)
    with pytest.raises(ValueError):
        uniform_bytes(b"x", 2**32)
    with pytest.raises(ValueError):
        uniform_bytes(b"x", -1)


def test_card_of_is_none_for_any_other_point() -> None:
    assert card_of(GENERATOR) is None
    assert card_of(mul(scalar(2), CARD_POINTS[0])) is None


def test_generator_and_arithmetic_agree() -> None:
    assert GENERATOR == base_mul(scalar(1))
    assert GENERATOR.hex() == "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
    assert add(GENERATOR, GENERATOR) == base_mul(scalar(2))
    assert sub(base_mul(scalar(5)), GENERATOR) == base_mul(scalar(4))
    a = scalar_from_digest(bytes(range(64)))
    assert mul(invert(a), mul(a, CARD_POINTS[5])) == CARD_POINTS[5]
    assert scalar_product([a, invert(a)]) == scalar(1)
    assert scalar_mul(scalar(3), scalar(5)) == scalar(15)


@pytest.mark.parametrize("point", INVALID)
def test_invalid_encodings_and_the_identity_are_refused(point: bytes) -> None:
    with pytest.raises(GroupError, match="D\\[3\\] is not a ristretto255 point"):
        check_point(point, "D[3]")
    with pytest.raises(GroupError):
        mul(scalar(5), point)  # libsodium refuses to multiply it, too


def test_adding_an_invalid_point_is_a_group_error_but_opposites_sum_to_the_identity() -> None:
    """libsodium's addition reports an operand it cannot decode only by its return code, which
    the binding drops (it then gives the identity's encoding): the group module notices."""
    for bad in INVALID[1:]:
        with pytest.raises(GroupError, match="invalid point"):
            add(bad, GENERATOR)
        with pytest.raises(GroupError, match="invalid point"):
            sub(GENERATOR, bad)
    assert sub(CARD_POINTS[3], CARD_POINTS[3]) == IDENTITY
    assert add(IDENTITY, GENERATOR) == GENERATOR


def test_non_canonical_encodings_are_refused() -> None:
    # s ≥ p: s = 0..18 have a second, non-canonical encoding s + p below 2²⁵⁵.
    for s in range(19):
        with pytest.raises(GroupError, match="not a ristretto255 point"):
            check_point((s + P).to_bytes(32, "little"))


def test_a_valid_point_with_its_top_bit_set_is_refused() -> None:
    """RFC 9496 decodes 32 bytes as s < p, so a set top bit is non-canonical; the libsodium
    ``rbcl`` bundles (1.0.18) ignores that bit, which would give every point a second encoding
    (a message changed without changing what it says)."""
    for point in (GENERATOR, CARD_POINTS[7]):
        flagged = point[:31] + bytes([point[31] | 0x80])
        with pytest.raises(GroupError, match="not a ristretto255 point"):
            check_point(flagged)
        assert first_invalid_point([point, flagged]) == 1
        with pytest.raises(GroupError, match="invalid point"):
            sub(flagged, point)  # the sum would be the identity: the operand is looked at
        # A proof's points are checked only by being multiplied: the multiplications refuse
        # the second encoding too (libsodium alone would multiply the point it reads).
        with pytest.raises(GroupError):
            mul(scalar(3), flagged)
        with pytest.raises(GroupError):
            mul_each([scalar(3), scalar(5)], [point, flagged])
        spoiled, good = mul_batches([([scalar(3)], [flagged]), ([scalar(3)], [point])])
        assert isinstance(spoiled, GroupError) and good == [mul(scalar(3), point)]


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), "x" * 32, 7, None, [0] * 32])
def test_points_of_the_wrong_type_or_length_are_refused_with_a_clear_error(bad: object) -> None:
    with pytest.raises(GroupError, match="32-byte string"):
        check_point(bad, "the point")


def test_scalars_must_be_canonical_and_non_zero() -> None:
    assert check_scalar(scalar(ORDER - 1)) == scalar(ORDER - 1)
    assert check_scalar(scalar(1)) == scalar(1)
    with pytest.raises(GroupError, match="zero"):
        check_scalar(scalar(0))
    with pytest.raises(GroupError, match="not canonical"):
        check_scalar(scalar(ORDER))
    with pytest.raises(GroupError, match="not canonical"):
        check_scalar(scalar(ORDER + 1))
    with pytest.raises(GroupError, match="not canonical"):
        check_scalar(b"\xff" * 32)
    with pytest.raises(GroupError, match="32-byte string"):
        check_scalar(bytes(16))


def test_derived_scalars_are_canonical_non_zero_and_deterministic() -> None:
    for k in range(200):
        digest = hashlib.sha512(bytes([k])).digest()
        s = scalar_from_digest(digest)
        assert check_scalar(s) == s == scalar_from_digest(digest)
    assert scalar_from_digest(bytes(64)) == scalar(1)
    assert scalar_from_digest(scalar(ORDER - 1) + bytes(32)) == scalar(1)  # never zero
    with pytest.raises(ValueError):
        scalar_from_digest(bytes(32))


def test_the_counter_counts_every_scalar_multiplication() -> None:
    MULTS.reset()
    mul(scalar(3), GENERATOR)
    base_mul(scalar(3))
    add(GENERATOR, GENERATOR)
    assert (MULTS.value, MULTS.fixed_base) == (2, 1)
    MULTS.reset()
    assert (MULTS.value, MULTS.fixed_base) == (0, 0)


def test_multiplying_to_the_identity_is_a_group_error() -> None:
    with pytest.raises(GroupError):
        mul(scalar(ORDER), GENERATOR)
    with pytest.raises(GroupError):
        base_mul(scalar(0))


@pytest.fixture(params=["serial", "daemon", "tools"])
def scheduler(request: pytest.FixtureRequest) -> Iterator[group.Scheduler]:
    """Each scheduler the batches run on: what they give does not depend on it."""
    chosen = {"serial": group.SERIAL, "daemon": Workers(2), "tools": Threads(2)}[request.param]
    previous = group.use_scheduler(chosen)
    try:
        yield chosen
    finally:
        group.use_scheduler(previous)


@pytest.mark.usefixtures("scheduler")
def test_batches_give_what_mul_gives_in_order_and_count_every_multiplication() -> None:
    scalars = [scalar_from_digest(hashlib.sha512(b"%d" % i).digest()) for i in range(40)]
    batches = [(scalars[k : k + 10], CARD_POINTS[k : k + 10]) for k in range(0, 40, 10)]
    MULTS.reset()
    results = mul_batches(batches)
    assert MULTS.value == 40
    assert results == [[mul(s, p) for s, p in zip(*batch)] for batch in batches]


@pytest.mark.usefixtures("scheduler")
def test_a_batch_with_an_invalid_point_gives_its_error_and_spoils_no_other() -> None:
    bad = INVALID[1]
    batches = [
        ([scalar(2)], [GENERATOR]),
        ([scalar(2), scalar(3)], [GENERATOR, bad]),
        ([scalar(5)], [GENERATOR]),
    ]
    good, spoiled, also_good = mul_batches(batches)
    assert good == [mul(scalar(2), GENERATOR)] and also_good == [mul(scalar(5), GENERATOR)]
    assert isinstance(spoiled, GroupError)


@pytest.mark.usefixtures("scheduler")
@pytest.mark.parametrize("size", [1, 78, 156])
def test_the_first_invalid_point_is_found_wherever_it_is(size: int) -> None:
    points: list[object] = [CARD_POINTS[k % 78] for k in range(size)]
    assert first_invalid_point(points) is None
    for where, bad in [(size - 1, INVALID[2]), (size // 2, b"\x01" * 31), (0, "not bytes")]:
        spoiled = list(points)
        spoiled[where] = bad
        if where + 1 < size:
            spoiled[-1] = INVALID[3]  # a later one does not hide the first
        assert first_invalid_point(spoiled) == where


@pytest.mark.usefixtures("scheduler")
def test_mul_each_is_mul_over_the_scheduler_s_slices() -> None:
    scalars = [scalar_from_digest(hashlib.sha512(b"%d" % i).digest()) for i in range(78)]
    MULTS.reset()
    assert mul_each(scalars, CARD_POINTS) == [mul(s, p) for s, p in zip(scalars, CARD_POINTS)]
    assert MULTS.value == 2 * 78
    with pytest.raises(GroupError):
        mul_each(scalars, [*CARD_POINTS[:77], INVALID[1]])
    with pytest.raises(ValueError, match="77 scalars for 78 points"):
        mul_each(scalars[:77], CARD_POINTS)
