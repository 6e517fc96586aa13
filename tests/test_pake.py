"""CPace on ristretto255 (protocol/pake.py) against draft-irtf-cfrg-cpace's own test vectors
(appendix "Test vector for CPace using group ristretto255 and hash SHA-512", and the string
utilities' vectors), and the two roles as the lobby runs them."""

from __future__ import annotations

import os

import pytest

from protocol import pake

H = bytes.fromhex

# The draft's ristretto255 vector.
PRS = b"Password"
CI = H("0b415f696e69746961746f720b425f726573706f6e646572")
SID = H("7e4b4791d6a8ef019b936c79fb7f2c57")
GEN_STRING = H(
    "11435061636552697374726574746f3235350850617373776f726464"
    + "00" * 100
    + "180b415f696e69746961746f720b425f726573706f6e646572107e4b4791d6a8ef019b936c79fb7f2c57"
)
G = H("222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56")
YA_SCALAR = H("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08")
YA = H("d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157")
YB_SCALAR = H("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d")
YB = H("3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258")
K = H("80b69a8a76457ab6a4d7f887a4bf6b55a2f80ac19c333f917a05fc9887c8b40f")
TRANSCRIPT_IR = H(
    "20d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b915703414461203ea7"
    "e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f725803414462"
)
ISK_IR = H(
    "b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dcae7b35cd2b38950a39dfd5d4"
    "a79164614c2984f7daa460b588c1e80c3fa2068af7900447"
)


def test_string_utilities_match_the_draft() -> None:
    assert pake.prepend_len(b"") == H("00")
    assert pake.prepend_len(b"1234") == H("0431323334")
    assert pake.prepend_len(bytes(range(127)))[:1] == H("7f")
    assert pake.prepend_len(bytes(range(128)))[:2] == H("8001")
    assert pake.lv_cat(b"1234", b"5", b"", b"678") == H("043132333401350003363738")
    assert pake.transcript_ir(b"123", b"PartyA", b"234", b"PartyB") == H(
        "03313233065061727479410332333406506172747942"
    )


def test_generator_matches_the_draft() -> None:
    assert pake.generator_string(pake.DSI, PRS, CI, SID, pake.S_IN_BYTES) == GEN_STRING
    assert pake.calculate_generator(PRS, CI, SID) == G


def test_shares_secret_point_and_isk_match_the_draft() -> None:
    assert pake.scalar_mult(YA_SCALAR, G) == YA
    assert pake.scalar_mult(YB_SCALAR, G) == YB
    assert pake.scalar_mult_vfy(YA_SCALAR, YB) == K == pake.scalar_mult_vfy(YB_SCALAR, YA)
    assert pake.transcript_ir(YA, b"ADa", YB, b"ADb") == TRANSCRIPT_IR
    assert pake.intermediate_session_key(SID, K, YA, b"ADa", YB, b"ADb") == ISK_IR


def test_a_wrong_vector_is_caught() -> None:
    """The checks above can fail: one bit off anywhere and the values differ."""
    assert pake.calculate_generator(b"Passwore", CI, SID) != G
    assert pake.calculate_generator(PRS, CI[:-1] + b"s", SID) != G
    assert pake.intermediate_session_key(SID, K, YA, b"ADa", YB, b"ADc") != ISK_IR


@pytest.mark.parametrize(
    "share",
    [pake.IDENTITY, b"\xff" * 32, b"\x01" + bytes(31), bytes(31)],
    ids=["neutral", "not-an-element", "non-canonical", "short"],
)
def test_bad_shares_abort_the_run(share: bytes) -> None:
    with pytest.raises(pake.PakeError):
        pake.scalar_mult_vfy(YA_SCALAR, share)
    with pytest.raises(pake.PakeError):
        pake.Admitting.answer(PRS, CI, SID, share, os.urandom)


def test_the_same_code_proves_both_ways() -> None:
    ci = pake.channel(b"t" * 16, b"j" * 32, b"o" * 32)
    joining = pake.Joining.start(b"7KQ2M9XD", ci, os.urandom)
    admitting = pake.Admitting.answer(b"7KQ2M9XD", ci, joining.sid, joining.share, os.urandom)
    tag = joining.answer(admitting.share)
    opener_tag = admitting.proved(tag)
    assert opener_tag is not None
    assert joining.confirms(opener_tag)


@pytest.mark.parametrize(
    "joiner_code, joiner_ci",
    [
        (b"7KQ2M9XE", pake.channel(b"t" * 16, b"j" * 32, b"o" * 32)),  # another code
        (b"7KQ2M9XD", pake.channel(b"u" * 16, b"j" * 32, b"o" * 32)),  # another table
        (b"7KQ2M9XD", pake.channel(b"t" * 16, b"k" * 32, b"o" * 32)),  # another joiner
        (b"7KQ2M9XD", pake.channel(b"t" * 16, b"j" * 32, b"p" * 32)),  # another opener
    ],
)
def test_a_run_proves_nothing_for_another_code_table_or_daemon(
    joiner_code: bytes, joiner_ci: bytes
) -> None:
    opener_ci = pake.channel(b"t" * 16, b"j" * 32, b"o" * 32)
    joining = pake.Joining.start(joiner_code, joiner_ci, os.urandom)
    admitting = pake.Admitting.answer(
        b"7KQ2M9XD", opener_ci, joining.sid, joining.share, os.urandom
    )
    assert admitting.proved(joining.answer(admitting.share)) is None
