"""The group layer: card points, validation of every received point and scalar, the counter."""

import hashlib
from collections.abc import Iterator

import pytest
from nacl import bindings as sodium

from client.workers import Threads
from protocol import group
from protocol.group import (
    CARD_POINTS,
    GENERATOR,
    MULTS,
    ORDER,
    GroupError,
    add,
    base_mul,
    card_of,
    check_point,
    check_scalar,
    first_invalid_point,
    invert,
    mul,
    mul_batches,
    mul_each,
    scalar_from_digest,
    scalar_mul,
    scalar_product,
)
from tarotd.workers import Workers

P = 2**255 - 19  # the field prime

# The points of small order (libsodium's blacklist): identity, order 2, 4 and 8.
SMALL_ORDER = [
    bytes.fromhex("0100000000000000000000000000000000000000000000000000000000000000"),
    bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    bytes.fromhex("0000000000000000000000000000000000000000000000000000000000000000"),
    bytes.fromhex("0000000000000000000000000000000000000000000000000000000000000080"),
    bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
]
ORDER_8 = SMALL_ORDER[4]


def scalar(value: int) -> bytes:
    return value.to_bytes(32, "little")


def test_card_points_are_78_distinct_valid_points_from_the_documented_hash() -> None:
    assert len(CARD_POINTS) == 78 == len(set(CARD_POINTS))
    for index, point in enumerate(CARD_POINTS):
        assert check_point(point) == point
        assert point == sodium.crypto_core_ed25519_from_uniform(
            hashlib.sha256(b"tarot/v2/card" + bytes([index])).digest()
        )
        assert card_of(point) == index


def test_card_of_is_none_for_any_other_point() -> None:
    assert card_of(GENERATOR) is None
    assert card_of(mul(scalar(2), CARD_POINTS[0])) is None


def test_generator_and_arithmetic_agree() -> None:
    assert GENERATOR == base_mul(scalar(1))
    assert add(GENERATOR, GENERATOR) == base_mul(scalar(2))
    a = scalar_from_digest(bytes(range(64)))
    assert mul(invert(a), mul(a, CARD_POINTS[5])) == CARD_POINTS[5]
    assert scalar_product([a, invert(a)]) == scalar(1)
    assert scalar_mul(scalar(3), scalar(5)) == scalar(15)


@pytest.mark.parametrize("point", SMALL_ORDER)
def test_small_order_points_are_refused(point: bytes) -> None:
    with pytest.raises(GroupError, match="small order"):
        check_point(point, "D[3]")


def test_a_point_outside_the_prime_order_subgroup_is_refused() -> None:
    mixed = sodium.crypto_core_ed25519_add(CARD_POINTS[0], ORDER_8)  # on the curve, with torsion
    assert sodium.crypto_core_ed25519_is_valid_point(CARD_POINTS[0])
    with pytest.raises(GroupError, match="outside the subgroup"):
        check_point(mixed)
    with pytest.raises(GroupError):
        mul(scalar(5), mixed)  # libsodium refuses to multiply it, too


def test_non_canonical_and_off_curve_encodings_are_refused() -> None:
    # y ≥ p: only y = 0..18 have a second, non-canonical encoding y + p.
    for y in range(19):
        with pytest.raises(GroupError, match="non-canonical"):
            check_point((y + P).to_bytes(32, "little"))
    off_curve = bytes([2]) + bytes(31)  # y = 2 has no x on the curve
    with pytest.raises(GroupError):
        check_point(off_curve)


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
    bad = SMALL_ORDER[1]
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
    for where, bad in [(size - 1, SMALL_ORDER[2]), (size // 2, b"\x01" * 31), (0, "not bytes")]:
        spoiled = list(points)
        spoiled[where] = bad
        if where + 1 < size:
            spoiled[-1] = SMALL_ORDER[3]  # a later one does not hide the first
        assert first_invalid_point(spoiled) == where


@pytest.mark.usefixtures("scheduler")
def test_mul_each_is_mul_over_the_scheduler_s_slices() -> None:
    scalars = [scalar_from_digest(hashlib.sha512(b"%d" % i).digest()) for i in range(78)]
    MULTS.reset()
    assert mul_each(scalars, CARD_POINTS) == [mul(s, p) for s, p in zip(scalars, CARD_POINTS)]
    assert MULTS.value == 2 * 78
    with pytest.raises(GroupError):
        mul_each(scalars, [*CARD_POINTS[:77], SMALL_ORDER[1]])
    with pytest.raises(ValueError, match="77 scalars for 78 points"):
        mul_each(scalars[:77], CARD_POINTS)
