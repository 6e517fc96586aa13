"""The manifest: what every member of a table signs before its first deal.

The lobby (``tarotd/lobby/``) forms a table, and each member signs one document under
:data:`MANIFEST_DOMAIN`, the msgpack array::

    [table_id, name, [[key, name, …], …], {"silence": RULE}]

— the table's id and name, its members in seat order (each entry starts with the seat's
identity key and the name shown for it; the daemon adds where the seat is hosted) and the
table's rules.  So every name is signed by every member, and a proof file carries the
manifest with its signatures (:func:`~protocol.replication.transcript.proof_file`): ``tarot audit``
takes the names from it, and a file whose transcript names a seat otherwise — the accused renamed —
does not hold.

**The table's rule for silence** (:class:`SilenceCost`) says what a seat that stops answering
*before the reveal* costs it.  Such a deal is abandoned whatever the rule — its cards are
missing.  A cable pulled or a laptop gone flat is no crime, but a seat that has read its hand
and then goes silent gets the deal dealt again for free: so by default (:data:`DEFAULT_SILENCE`)
a silence costs the 100-point penalty row once the seat could read its hand, and nothing before.
A table may choose that silence never costs, or always, as a proven deviation does; it says so
here, where every member signs it.  Silence *at* the reveal is no table rule: the deal is
scored from its open record and the seat that kept its seed takes the penalty
(``protocol/replication/audit.py``).

A manifest reads as it was signed: one of three fields — signed before tables had rules — and
one signed ``nothing`` read ``nothing``; only new tables get the new default.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import msgpack

from protocol.replication.identity import PUBLIC_KEY_SIZE, Identity, is_valid_public_key, verify
from protocol.wire import array, binary, blob, refused_as, text, unpack

MANIFEST_DOMAIN: Final = b"tarot/v3/manifest\x00"
MAX_NAME: Final = 64  #: characters of a table's or a member's name
#: A manifest's bytes: five members' keys, names and hosts are a few kilobytes at most.
MAX_MANIFEST_BYTES: Final = 64 * 1024
SILENCE_RULE: Final = "silence"  #: the key of the rule in the manifest's rules


class ManifestError(ValueError):
    """A manifest that is malformed, or not signed by every member it names; the text says which."""


class SilenceCost(enum.StrEnum):
    """What a seat timed out before the reveal costs it (the deal is abandoned either way)."""

    NOTHING = "nothing"  #: nobody takes a penalty: a cable is not a crime (the rule of old tables)
    #: The penalty row if it could read its hand (or the chien) when it went silent, nothing
    #: before: leaving after seeing one's cards is no free redeal (the default).
    AFTER_SEEING = "after-seeing"
    PENALTY = "penalty"  #: the silent seat takes the 100-point penalty row, as for a deviation

    @classmethod
    def parse(cls, value: object) -> SilenceCost:
        """The rule named ``value``; :class:`ManifestError` for any other."""
        for cost in cls:
            if type(value) is str and value == cost.value:
                return cost
        known = ", ".join(cost.value for cost in cls)
        raise ManifestError(f"unknown rule for silence {value!r}: one of {known}")

    def costs(self, seen: bool) -> bool:
        """Whether a seat timed out before the reveal takes the penalty row under this rule;
        ``seen``: it could read its hand when it went silent (``PublicDeal.could_read``)."""
        return self is SilenceCost.PENALTY or (self is SilenceCost.AFTER_SEEING and seen)


#: The rule a new table signs unless its opener chooses another (``tarotd --silence``).
DEFAULT_SILENCE: Final = SilenceCost.AFTER_SEEING


def manifest_document(
    table_id: bytes,
    name: str,
    members: Sequence[Sequence[object]],
    silence: SilenceCost = DEFAULT_SILENCE,
) -> bytes:
    """The canonical bytes every member signs; ``members`` are the entries, ``[key, name, …]``."""
    document = [table_id, name, [list(member) for member in members], {SILENCE_RULE: silence.value}]
    packed: bytes = msgpack.packb(document, use_bin_type=True)
    return packed


@dataclass(frozen=True)
class Manifest:
    """A manifest read back: well formed, not yet known to be signed."""

    table_id: bytes
    name: str
    keys: tuple[bytes, ...]  #: the members' identity keys, in seat order
    names: tuple[str, ...]  #: the names shown for them
    entries: tuple[list[object], ...]  #: each member's whole entry, ``[key, name, …]``
    silence: SilenceCost

    @classmethod
    def from_bytes(cls, document: bytes) -> Manifest:
        """Parse ``document``; :class:`ManifestError` saying what is wrong with it."""
        with refused_as(ManifestError):
            fields = unpack(document, max_size=MAX_MANIFEST_BYTES, what="the manifest")
            if type(fields) is not list or len(fields) not in (3, 4):
                raise ManifestError("a manifest is [table id, name, members, rules]")
            table_id, name, entries, *rules = fields
            binary("the manifest's table id", table_id, MAX_MANIFEST_BYTES)
            if not array("the manifest's members", entries):
                raise ManifestError("the manifest's members are an empty list")
            keys, names = [], []
            for seat, entry in enumerate(entries):
                if len(array(f"seat {seat}'s entry", entry)) < 2:
                    raise ManifestError(f"seat {seat}: a member is [key, name, …]")
                key = blob(f"seat {seat}'s key", entry[0], PUBLIC_KEY_SIZE)
                if not is_valid_public_key(key):
                    raise ManifestError(f"seat {seat}: its key is not an Ed25519 public key")
                keys.append(key)
                names.append(text(f"seat {seat}'s name", entry[1], MAX_NAME))
            table_name = text("the table's name", name, MAX_NAME)
        silence = _silence(rules[0] if rules else {})
        return cls(
            table_id,
            table_name,
            tuple(keys),
            tuple(names),
            tuple(entries),
            silence,
        )


def _silence(rules: object) -> SilenceCost:
    """The silence rule of a manifest's rules: a map with that one key, of a known value;
    absent, the manifest was signed before tables had rules, under the rule of then: nothing."""
    if type(rules) is not dict or not set(rules) <= {SILENCE_RULE}:
        raise ManifestError(f"a manifest's rules are a map of {SILENCE_RULE!r} only")
    return SilenceCost.parse(rules.get(SILENCE_RULE, SilenceCost.NOTHING.value))


@dataclass(frozen=True)
class SignedManifest:
    """A manifest and every member's signature of it, in seat order."""

    document: bytes
    signatures: tuple[bytes, ...]

    def verified(self) -> Manifest:
        """The manifest, once every member it names has signed it (:class:`ManifestError`
        naming the first that has not): then no name, key or rule in it can have been changed."""
        manifest = Manifest.from_bytes(self.document)
        if len(self.signatures) != len(manifest.entries):
            raise ManifestError(
                f"{len(self.signatures)} signatures for a manifest of {len(manifest.entries)} "
                "members"
            )
        signed = MANIFEST_DOMAIN + self.document
        for seat, (key, name, signature) in enumerate(
            zip(manifest.keys, manifest.names, self.signatures)
        ):
            if type(signature) is not bytes or not verify(key, signature, signed):
                raise ManifestError(
                    f"the manifest's signature by seat {seat} ({name}) does not check"
                )
        return manifest


def sign_manifest(
    table_id: bytes,
    name: str,
    seats: Sequence[tuple[Identity, str]],
    silence: SilenceCost = DEFAULT_SILENCE,
) -> SignedManifest:
    """A manifest every seat signs at once, for tables formed in one process (``tarot sim``,
    tests): ``seats`` are the identities and names in seat order."""
    document = manifest_document(
        table_id, name, [[identity.public_key, shown] for identity, shown in seats], silence
    )
    signatures = tuple(identity.sign(MANIFEST_DOMAIN + document) for identity, _ in seats)
    return SignedManifest(document, signatures)
