"""CURVE keys from Ed25519 identities: a daemon's CURVE key pair is its identity converted to
X25519, so a peer's CURVE key follows from the identity key we already know it by and there is
nothing new to distribute or trust (see "Encryption" in docs/protocol.md)."""

from __future__ import annotations

from functools import lru_cache

from nacl.bindings import (
    crypto_sign_ed25519_pk_to_curve25519,
    crypto_sign_ed25519_sk_to_curve25519,
)
from zmq.utils import z85

from protocol.replication.identity import Identity, is_valid_public_key


@lru_cache(maxsize=1024)
def curve_public_key(key: bytes) -> bytes:
    """The CURVE public key, z85-encoded as ZeroMQ takes it and reports it (``User-Id``), of
    the daemon whose Ed25519 identity key is ``key``.  Cached: the ROUTER derives it for every
    HELLO.  ValueError for bytes that are no identity key."""
    if not is_valid_public_key(key):
        raise ValueError("not an Ed25519 public key: no CURVE key derives from it")
    return z85.encode(crypto_sign_ed25519_pk_to_curve25519(key))


def curve_secret_key(identity: Identity) -> bytes:
    """The CURVE secret key, z85-encoded, that pairs with :func:`curve_public_key` of
    ``identity``'s public key.  It goes to ZeroMQ and nowhere else."""
    secret = crypto_sign_ed25519_sk_to_curve25519(identity.private_bytes() + identity.public_key)
    return z85.encode(secret)
