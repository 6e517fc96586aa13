"""The invite code as a password-authenticated key exchange: CPace on ristretto255, sans IO.

A table's invite code is short (40 bits drawn, fewer when players make one up), so nothing
sent on the wire may let anyone test a guess of it offline — an HMAC keyed by the code, even a
stretched one, is exactly such a test.  CPace (IRTF CFRG, draft-irtf-cfrg-cpace, the suite
CPACE-RISTR255-SHA512) derives a generator from the code and both sides exchange one Diffie–
Hellman share on it: a share is a uniformly random group element whatever the code, and the key
each side derives needs its own secret scalar, so a recorded exchange tests no code, and an
active guesser tests exactly one code per exchange it runs with a party that holds it.

The functions below follow the draft's definitions and names (``generator_string``,
``calculate_generator``, ``scalar_mult_vfy``, ``transcript_ir``, the ISK), checked against its
ristretto255 test vectors (``tests/test_pake.py``).  :class:`Joining` and :class:`Admitting`
are the two roles as the lobby runs them — the joiner (initiator, A) and the opener (responder,
B) — with the draft's explicit key confirmation (``mac_key = H(b"CPaceMac" ‖ sid ‖ ISK)``, a tag
over each side's own message).  **The joiner's tag goes first**: the opener sends nothing that
depends on the code through the ISK before the joiner has proved it, so a stranger who knocks
learns nothing, and every wrong tag the opener receives is one guess it can count.

Bindings: the channel identifier CI names the table and both daemons' keys, joiner first
(:func:`channel`), so a run proves the code for this table between these two daemons only; the
session id is drawn fresh by the joiner for each run.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import rbcl

DSI: Final = b"CPaceRistretto255"  #: G_Ristretto255.DSI
DSI_ISK: Final = DSI + b"_ISK"
S_IN_BYTES: Final = 128  #: SHA-512's input block
FIELD_SIZE_BYTES: Final = 32
GROUP_SIZE_BITS: Final = 252
SHARE_SIZE: Final = 32  #: an encoded ristretto255 element
SID_SIZE: Final = 16
TAG_SIZE: Final = 64  #: HMAC-SHA-512
CHANNEL_DOMAIN: Final = b"tarot/v2/invite"  #: first field of CI: what the run is for
IDENTITY: Final = bytes(32)  #: G.I, the encoding of the neutral element


class PakeError(ValueError):
    """A share that is no group element, or gives the neutral element: the run is aborted."""


def prepend_len(data: bytes) -> bytes:
    """``data`` after its length in LEB128 (the draft's ``prepend_len``)."""
    length, encoded = len(data), bytearray()
    while True:
        encoded.append((length & 0x7F) | (0x80 if length >= 128 else 0))
        length >>= 7
        if length == 0:
            return bytes(encoded) + data


def lv_cat(*parts: bytes) -> bytes:
    return b"".join(prepend_len(part) for part in parts)


def generator_string(dsi: bytes, prs: bytes, ci: bytes, sid: bytes, s_in_bytes: int) -> bytes:
    """``lv_cat(DSI, PRS, zero padding, CI, sid)``: the padding fills the hash's first block
    after DSI and PRS, so that the work hashed does not depend on the code's length."""
    zpad = max(0, s_in_bytes - 1 - len(prepend_len(prs)) - len(prepend_len(dsi)))
    return lv_cat(dsi, prs, bytes(zpad), ci, sid)


def calculate_generator(prs: bytes, ci: bytes, sid: bytes) -> bytes:
    """The generator of the run: SHA-512 of the generator string, mapped onto ristretto255
    (``element_derivation`` is ``crypto_core_ristretto255_from_hash``): nobody knows its
    discrete logarithm to any other run's generator."""
    digest = hashlib.sha512(generator_string(DSI, prs, ci, sid, S_IN_BYTES)).digest()
    generator: bytes = rbcl.crypto_core_ristretto255_from_hash(digest[: 2 * FIELD_SIZE_BYTES])
    return generator


def sample_scalar(entropy: Callable[[int], bytes]) -> bytes:
    """32 random bytes, the bits above the 252nd cleared (the draft's recommended sampling)."""
    raw = bytearray(entropy(32))
    raw[31] &= 0x0F
    return bytes(raw)


def scalar_mult(scalar: bytes, element: bytes) -> bytes:
    product: bytes = rbcl.crypto_scalarmult_ristretto255(scalar, element)
    return product


def scalar_mult_vfy(scalar: bytes, encoded: bytes) -> bytes:
    """``scalar · decode(encoded)``, or :class:`PakeError` if ``encoded`` is no group element
    or the product is the neutral element (the draft's abort on ``G.I``)."""
    if len(encoded) != SHARE_SIZE or not rbcl.crypto_core_ristretto255_is_valid_point(encoded):
        raise PakeError("the share is not a ristretto255 element")
    try:
        product: bytes = rbcl.crypto_scalarmult_ristretto255(scalar, encoded)
    except (RuntimeError, ValueError):  # libsodium refuses a product that is the identity
        raise PakeError("the share gives the neutral element") from None
    if product == IDENTITY:
        raise PakeError("the share gives the neutral element")
    return product


def transcript_ir(ya: bytes, ada: bytes, yb: bytes, adb: bytes) -> bytes:
    return lv_cat(ya, ada) + lv_cat(yb, adb)


def intermediate_session_key(
    sid: bytes, k: bytes, ya: bytes, ada: bytes, yb: bytes, adb: bytes
) -> bytes:
    """``ISK = H(lv_cat(DSI ‖ "_ISK", sid, K) ‖ transcript_ir(Ya, ADa, Yb, ADb))``."""
    return hashlib.sha512(lv_cat(DSI_ISK, sid, k) + transcript_ir(ya, ada, yb, adb)).digest()


def confirmation_tag(sid: bytes, isk: bytes, share: bytes, ad: bytes) -> bytes:
    """The draft's explicit key confirmation: ``MAC(H(b"CPaceMac" ‖ sid ‖ ISK), lv_cat(Y, AD))``
    over the message the tagging side sent, HMAC-SHA-512."""
    mac_key = hashlib.sha512(b"CPaceMac" + sid + isk).digest()
    return hmac.digest(mac_key, lv_cat(share, ad), "sha512")


def channel(table_id: bytes, joiner: bytes, opener: bytes) -> bytes:
    """CI: the table and both daemons' keys, the initiator's (the joiner's) first."""
    return lv_cat(CHANNEL_DOMAIN, table_id, joiner, opener)


#: The associated data of each side: its role, so that a run's two messages can never be
#: confused with each other (the identities are in CI).
JOINER_AD: Final = b"joiner"
OPENER_AD: Final = b"opener"


@dataclass
class Joining:
    """The joiner's side of one run (CPace's A): :meth:`start` gives the knock (sid and share);
    :meth:`answer` takes the opener's share and gives our tag, which proves the code;
    :meth:`confirms` checks the opener's tag, which proves it holds the code too."""

    code: bytes = field(repr=False)
    ci: bytes
    sid: bytes
    _scalar: bytes = field(repr=False)
    share: bytes = b""
    _isk: bytes = field(default=b"", repr=False)
    _opener_share: bytes = b""

    @classmethod
    def start(cls, code: bytes, ci: bytes, entropy: Callable[[int], bytes]) -> Joining:
        sid = entropy(SID_SIZE)
        run = cls(code, ci, sid, sample_scalar(entropy))
        run.share = scalar_mult(run._scalar, calculate_generator(code, ci, sid))
        return run

    def answer(self, opener_share: bytes) -> bytes:
        """Our tag, from the opener's share (:class:`PakeError` if that share is bad)."""
        k = scalar_mult_vfy(self._scalar, opener_share)
        self._opener_share = opener_share
        self._isk = intermediate_session_key(
            self.sid, k, self.share, JOINER_AD, opener_share, OPENER_AD
        )
        return confirmation_tag(self.sid, self._isk, self.share, JOINER_AD)

    def confirms(self, tag: bytes) -> bool:
        if not self._isk:
            return False
        expected = confirmation_tag(self.sid, self._isk, self._opener_share, OPENER_AD)
        return hmac.compare_digest(tag, expected)


@dataclass
class Admitting:
    """The opener's side of one run (CPace's B), from a joiner's knock: :attr:`share` is our
    answer; :meth:`proved` checks the joiner's tag and, if it holds, gives ours."""

    sid: bytes
    share: bytes
    joiner_share: bytes
    _isk: bytes = field(repr=False)

    @classmethod
    def answer(
        cls,
        code: bytes,
        ci: bytes,
        sid: bytes,
        joiner_share: bytes,
        entropy: Callable[[int], bytes],
    ) -> Admitting:
        """Our side of the run the joiner knocked for (:class:`PakeError` if its share is
        bad: nothing is answered)."""
        if len(sid) != SID_SIZE:
            raise PakeError(f"a session id is {SID_SIZE} bytes")
        scalar = sample_scalar(entropy)
        share = scalar_mult(scalar, calculate_generator(code, ci, sid))
        k = scalar_mult_vfy(scalar, joiner_share)
        isk = intermediate_session_key(sid, k, joiner_share, JOINER_AD, share, OPENER_AD)
        return cls(sid, share, joiner_share, isk)

    def proved(self, tag: bytes) -> bytes | None:
        """Our tag if ``tag`` is the joiner's proof of the code, else None (a wrong guess)."""
        expected = confirmation_tag(self.sid, self._isk, self.joiner_share, JOINER_AD)
        if not hmac.compare_digest(tag, expected):
            return None
        return confirmation_tag(self.sid, self._isk, self.share, OPENER_AD)
