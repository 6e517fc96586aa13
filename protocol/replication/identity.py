"""A player's long-term Ed25519 identity: the key every protocol message is signed with.

A seat at a table *is* its public key: verdicts name a seat, and a seat is only worth naming
if its signatures cannot be denied or forged.  Two details serve that:

* :func:`verify` refuses public keys of small order (and any point outside the prime-order
  subgroup).  Under such a "weak" key anybody can forge signatures for many messages, so a
  player who registered one could later disown everything "it" signed — or be framed.
* Ed25519 signatures here are deterministic and OpenSSL rejects a non-reduced ``S``, so one
  key and one message give exactly one valid signature: nobody can re-shape a signed message
  into a second valid one and pass it off as the signer's equivocation.

The fingerprint is for humans comparing keys out loud at the table; it is not a security
boundary (64 bits), the full key is what the protocol checks.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.bindings import crypto_core_ed25519_is_valid_point

PUBLIC_KEY_SIZE = 32
PRIVATE_KEY_SIZE = 32
SIGNATURE_SIZE = 64


class Identity:
    """An Ed25519 key pair.  Its ``repr`` shows the fingerprint only: a private key must
    never end up in a log line or a traceback."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private_key = private_key
        self.public_key: bytes = private_key.public_key().public_bytes_raw()

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, data: bytes) -> Identity:
        """The identity stored as :meth:`private_bytes` (the raw 32-byte seed)."""
        if len(data) != PRIVATE_KEY_SIZE:
            raise ValueError(f"an Ed25519 private key is {PRIVATE_KEY_SIZE} bytes, not {len(data)}")
        return cls(Ed25519PrivateKey.from_private_bytes(data))

    def private_bytes(self) -> bytes:
        return self._private_key.private_bytes_raw()

    def sign(self, data: bytes) -> bytes:
        return self._private_key.sign(data)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def __repr__(self) -> str:
        return f"Identity({self.fingerprint})"


def fingerprint(public_key: bytes) -> str:
    """The first 8 bytes of SHA-256 of the key, as four groups of four hex digits:
    ``3f2a-91c0-5b7e-0d44``.  Short enough to read aloud, long enough to tell players apart."""
    digest = hashlib.sha256(public_key).hexdigest()[:16]
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


@lru_cache(maxsize=256)
def is_valid_public_key(public_key: bytes) -> bool:
    """True for 32 bytes encoding a point of the prime-order subgroup (what every honestly
    made Ed25519 public key is); False for weak, small-order or malformed keys.  Cached:
    a table checks the same few keys for every message, and the check costs about as much
    as the signature itself."""
    return len(public_key) == PUBLIC_KEY_SIZE and crypto_core_ed25519_is_valid_point(public_key)


def verify(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """True if ``signature`` is ``public_key``'s signature of ``data``.

    Every input may come straight off the network, so this never raises: a key or signature
    of the wrong size, a key that is not a point of the prime-order subgroup, or a signature
    that does not check are all just ``False``.
    """
    if len(signature) != SIGNATURE_SIZE or not is_valid_public_key(public_key):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True
