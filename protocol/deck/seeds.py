"""One seed per seat per deal, and every secret of that seat derived from it.

A seat draws 32 bytes from the OS CSPRNG at the start of a deal, stores them, and publishes
only a commitment to them.  Every secret it then uses — the blanket key ``a``, the shuffle
permutation ``π``, the 78 per-position lock keys ``bⱼ``, the écart re-commitment keys ``rₖ``
and their order, the key proof nonces are derived from — comes out of HKDF-SHA-512 under an
explicit label and the context (table id, deal number, seat).  So when the seeds are revealed
at the end of the deal, anyone can recompute every step of every seat and find the first
one that deviated (``audit_deck``), and a deal replays byte for byte from its seeds.

The permutation is a Fisher–Yates shuffle driven by rejection sampling on HKDF output, so
every one of the 78! orders is equally likely (no modulo bias).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from protocol.deck.group import Point, Scalar, base_mul, invert, scalar_from_digest
from protocol.deck.proofs import frame
from protocol.rules.variants import Variant

SEED_BYTES = 32
DECK_SIZE = 78

COMMITMENT_LABEL = b"tarot/v3/seed-commitment"
EXTRACT_SALT = b"tarot/v3/seed"
BLANKET_LABEL = b"tarot/v3/blanket"
PERMUTATION_LABEL = b"tarot/v3/permutation"
LOCK_LABEL = b"tarot/v3/lock"
RECOMMIT_KEYS_LABEL = b"tarot/v3/recommit-keys"
RECOMMIT_ORDER_LABEL = b"tarot/v3/recommit-order"
NONCE_LABEL = b"tarot/v3/proof-nonce"


def new_seed() -> bytes:
    """32 fresh bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def context(table_id: bytes, deal: int, seat: int) -> bytes:
    """What every derivation and the commitment are bound to."""
    return frame(table_id, deal.to_bytes(8, "big"), seat.to_bytes(2, "big"))


def commitment(seed: bytes, table_id: bytes, deal: int, seat: int) -> bytes:
    """``H(seed)``, bound to the context so that a seat cannot reuse another's commitment."""
    return hashlib.sha256(frame(COMMITMENT_LABEL, context(table_id, deal, seat), seed)).digest()


class _Deriver:
    """HKDF-Extract once, then one HKDF-Expand per label."""

    def __init__(self, seed: bytes, ctx: bytes) -> None:
        if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
            raise ValueError(f"a seed is {SEED_BYTES} bytes")
        self._prk = hmac.new(EXTRACT_SALT, seed, hashlib.sha512).digest()  # HKDF-Extract
        self._ctx = ctx

    def expand(self, label: bytes, length: int) -> bytes:
        return HKDFExpand(hashes.SHA512(), length, frame(label, self._ctx)).derive(self._prk)

    def scalars(self, label: bytes, count: int) -> tuple[Scalar, ...]:
        output = self.expand(label, 64 * count)
        return tuple(scalar_from_digest(output[64 * k : 64 * k + 64]) for k in range(count))

    def permutation(self, label: bytes, size: int) -> tuple[int, ...]:
        """Fisher–Yates; each index drawn from one byte, bytes at or above the largest
        multiple of the range rejected so every index is exactly uniform."""
        assert size <= 256
        stream = self._stream(label)
        items = list(range(size))
        for top in range(size - 1, 0, -1):
            bound = top + 1
            limit = 256 - 256 % bound
            while (byte := next(stream)) >= limit:
                pass
            pick = byte % bound
            items[top], items[pick] = items[pick], items[top]
        return tuple(items)

    def _stream(self, label: bytes) -> Iterator[int]:
        """An endless byte stream: HKDF-Expand blocks under ``label ‖ block number``."""
        block = 0
        while True:
            yield from self.expand(label + block.to_bytes(4, "big"), 255)
            block += 1


@dataclass(frozen=True, repr=False)
class SeatSecrets:
    """Everything secret a seat uses in one deal.  ``repr`` is hidden so that no log line
    or traceback ever prints a secret."""

    seed: bytes
    blanket: Scalar  #: a
    blanket_inverse: Scalar  #: a⁻¹
    blanket_public: Point  #: A = a·G
    permutation: tuple[int, ...]  #: shuffle output position p takes input position permutation[p]
    lock_keys: tuple[Scalar, ...]  #: bⱼ for the 78 pack positions
    recommit_keys: tuple[Scalar, ...]  #: rₖ for the écart re-commitments (hand + chien)
    recommit_order: tuple[int, ...]  #: re-commitment k holds the card of sorted rank order[k]
    nonce_key: bytes  #: proof nonces are derived from it

    def __repr__(self) -> str:
        return "SeatSecrets(<hidden>)"


def derive(seed: bytes, table_id: bytes, deal: int, seat: int, variant: Variant) -> SeatSecrets:
    deriver = _Deriver(seed, context(table_id, deal, seat))
    (blanket,) = deriver.scalars(BLANKET_LABEL, 1)
    recommits = variant.hand_size + variant.chien_size
    return SeatSecrets(
        seed=seed,
        blanket=blanket,
        blanket_inverse=invert(blanket),
        blanket_public=base_mul(blanket),
        permutation=deriver.permutation(PERMUTATION_LABEL, DECK_SIZE),
        lock_keys=deriver.scalars(LOCK_LABEL, DECK_SIZE),
        recommit_keys=deriver.scalars(RECOMMIT_KEYS_LABEL, recommits),
        recommit_order=deriver.permutation(RECOMMIT_ORDER_LABEL, recommits),
        nonce_key=deriver.expand(NONCE_LABEL, 32),
    )
