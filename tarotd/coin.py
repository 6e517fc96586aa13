"""The first dealer's coin, sans IO (the lobby runs it, :mod:`tarotd.lobby`): every member
contributes a coin, nobody chooses the dealer, and nobody re-rolls it by keeping its coin.

**Commit, seal, reveal.**  With its signature of the manifest, each member sends a commitment
to a 32-byte coin, ``SHA-256(frame(COMMIT_DOMAIN, table id, member key, coin))``
(:func:`commitment`; :func:`protocol.deck.proofs.frame` prefixes each part with its length): bound
to the table and to the member, so that a commitment copied from another member, or from
another table, is one its copier cannot open.  A member holding every signature and
commitment *seals* them: it signs :func:`seal_document` (the manifest's digest and every
commitment in seat order).  Nobody reveals before it holds every member's seal of the same
commitments, so every member that reveals holds the same commitments — one member sending
two commitments to two others gets no coin revealed at all.  The member that completes its
seals first sends them all on (one sent a seal by one daemon only gets it too), then its coin.

**The reveals, in rounds.**  From the moment it holds every seal (its *start*), a member awaits
the coins in :attr:`CoinToss.rounds` rounds of ``timeout`` (``tarotd --timeout``): R, one fewer
than the daemons at the table, at least one.  It takes in round r a coin that opens its
member's commitment and carries the relay signatures (:func:`relay_document`) of r − 1
daemons other than the coin's own; each coin it takes before round R it relays, adding its
own signature, to the other daemons at its next heartbeat (Dolev–Strong's broadcast with
signatures).  It draws once it holds every coin, or when its last round ends: the dealer is
:func:`first_dealer` of the coins it took, and the members whose coin it lacks are named.

**Every honest member draws the same dealer**, when an honest daemon's frames reach another
within Δ, and ``timeout`` ≥ 2Δ + a heartbeat:

* honest members start within Δ of each other (the first to hold every seal sends them on);
* an honest member's coin, sent at its start, reaches every honest member in its first round:
  no honest member is ever named;
* a coin an honest member takes in round r < R reaches every honest one, relayed with r
  signatures, by its round r + 1; one it takes in round R carries the signatures of R − 1
  other daemons than the coin's, and the dishonest are at most R − 1 (with two honest
  daemons, d − 2): one signer is honest, took it earlier and relayed it.  So by their last
  round, honest members hold the same coins;
* one that holds every coin draws at once: the commitments being the same everywhere, each
  member has one coin that opens its commitment, and every one it holds reaches the others.

**What keeping a coin is worth.**  The last to reveal sees every other coin first and may keep
its own: it chooses between two dealers, the draw with its coin and without.  That is all:
the table forms with that dealer (no re-roll, no third draw), and every member's log and lobby
name it (:attr:`CoinToss.withheld`).  No protocol removes that choice without an honest
majority (Cleve, 1986: when most may cheat, one that aborts biases any coin), and a dealer
fixed against the withholder instead would hand that dealer to its accomplices at will.  The
first dealer only decides who deals the deals left over from whole turns of the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from protocol.deck.proofs import frame
from protocol.replication.identity import Identity, verify

COIN_SIZE: Final = 32
COMMITMENT_SIZE: Final = 32
SEAL_SIZE: Final = 64  #: an Ed25519 signature
#: New names: the coin's former domain, ``tarot/v2/dealer-coin``, hashed other bytes.
COMMIT_DOMAIN: Final = b"tarot/v2/dealer-coin-commit"
SEAL_DOMAIN: Final = b"tarot/v2/dealer-coin-seal"
RELAY_DOMAIN: Final = b"tarot/v2/dealer-coin-relay"
DRAW_DOMAIN: Final = b"tarot/v2/dealer-coin-draw"

Relay = tuple[bytes, bytes]  #: (relaying member's key, its signature of :func:`relay_document`)


@dataclass(frozen=True)
class Reveal:
    """A member's coin as it travels, with the signatures of the members that relayed it."""

    key: bytes  #: the member whose coin it is
    coin: bytes
    relays: tuple[Relay, ...] = ()


def commitment(table_id: bytes, key: bytes, coin: bytes) -> bytes:
    """What the member ``key`` commits to at ``table_id``: nobody else can open it."""
    return hashlib.sha256(frame(COMMIT_DOMAIN, table_id, key, coin)).digest()


def seal_document(table_id: bytes, manifest: bytes, commitments: Sequence[bytes]) -> bytes:
    """What each member signs before any coin is revealed: this manifest, these commitments."""
    digest = hashlib.sha256(manifest).digest()
    return frame(SEAL_DOMAIN, table_id, digest, frame(*commitments))


def relay_document(table_id: bytes, key: bytes, coin: bytes) -> bytes:
    """What a member signs when it relays ``key``'s coin: it took that coin, in time."""
    return frame(RELAY_DOMAIN, table_id, key, coin)


def first_dealer(table_id: bytes, coins: Sequence[bytes | None]) -> int:
    """The dealer drawn from the coins in seat order, ``None`` for a coin withheld (framed
    empty, as no coin is): the same coins give every member the same dealer."""
    parts = (coin or b"" for coin in coins)
    digest = hashlib.sha256(frame(DRAW_DOMAIN, table_id, *parts)).digest()
    return int.from_bytes(digest, "big") % len(coins)


@dataclass
class CoinToss:
    """One table's coin at one daemon, from the commitments to the draw (module docstring)."""

    table_id: bytes
    manifest: bytes
    daemons: dict[bytes, bytes]  #: member key → the key of its daemon, in seat order
    signer: Identity = field(repr=False)  #: a seat hosted here: it signs our relays
    timeout: float  #: seconds a round of reveals lasts
    commitments: dict[bytes, bytes] = field(default_factory=dict)
    seals: dict[bytes, bytes] = field(default_factory=dict)
    coins: dict[bytes, bytes] = field(default_factory=dict)  #: the coins taken
    #: When we held every seal and revealed (None before; a time of None before a heartbeat).
    start: float | None = None
    revealed: bool = False
    #: Seals that came before our commitments were all in: (member, sender) → seal.
    _unchecked: dict[tuple[bytes, bytes], bytes] = field(default_factory=dict)
    #: Coins taken before the last round and not relayed yet, with their relay signatures.
    _to_relay: dict[bytes, list[Relay]] = field(default_factory=dict)

    @property
    def ours(self) -> bytes:
        """Our daemon's key."""
        return self.daemons[self.signer.public_key]

    @property
    def rounds(self) -> int:
        """R: one round per daemon that may be dishonest while two are honest."""
        return max(1, len(set(self.daemons.values())) - 1)

    @property
    def document(self) -> bytes | None:
        """The seal document, once every commitment is in."""
        if len(self.commitments) < len(self.daemons):
            return None
        ordered = [self.commitments[key] for key in self.daemons]
        return seal_document(self.table_id, self.manifest, ordered)

    @property
    def sealed(self) -> bool:
        return len(self.seals) == len(self.daemons)

    @property
    def withheld(self) -> tuple[bytes, ...]:
        """The members whose coin we did not take, in seat order."""
        return tuple(key for key in self.daemons if key not in self.coins)

    def commit(self, key: bytes, value: bytes) -> None:
        """``key``'s commitment, from the ``sign`` frame of its daemon: the first one stays
        (the seals say whether every member holds the same)."""
        self.commitments.setdefault(key, value)
        document = self.document
        if document is not None:
            for (member, _), seal in list(self._unchecked.items()):
                self._check_seal(document, member, seal)
            self._unchecked.clear()

    def add_seal(self, key: bytes, sender: bytes, seal: bytes) -> None:
        """``key``'s seal, as ``sender`` passed it on: kept if it seals our commitments."""
        document = self.document
        if document is None and key in self.daemons:
            self._unchecked[key, sender] = seal
        elif document is not None:
            self._check_seal(document, key, seal)

    def _check_seal(self, document: bytes, key: bytes, seal: bytes) -> None:
        if key in self.daemons and key not in self.seals and verify(key, seal, document):
            self.seals[key] = seal

    def reveal(self, now: float | None) -> None:
        """We hold every seal and reveal our coins: the first round starts."""
        self.revealed, self.start = True, now

    def clock(self, now: float | None) -> None:
        """Start the rounds at ``now`` if we revealed before the lobby knew the time."""
        if self.revealed and self.start is None:
            self.start = now

    def round(self, now: float | None) -> int:
        """The round of reveals ``now`` is in: the first, before the lobby knew the time."""
        if self.start is None or now is None:
            return 1
        return 1 + max(0, int((now - self.start) // self.timeout))

    def due(self, now: float) -> bool:
        """Whether the last round is over: the draw goes on with the coins taken."""
        return self.start is not None and now >= self.start + self.rounds * self.timeout

    def take(self, reveal: Reveal, now: float | None) -> None:
        """Take a member's coin if it opens its commitment and, in round r, carries the relay
        signatures of r − 1 daemons other than its own; relay it if r < R."""
        key, coin = reveal.key, reveal.coin
        if key not in self.daemons or key in self.coins:
            return
        if commitment(self.table_id, key, coin) != self.commitments.get(key):
            return  # a copied commitment ends here: its copier has no coin that opens it
        now_round = self.round(now)
        if now_round > self.rounds or len(reveal.relays) > len(self.daemons):
            return
        chain = self._chain(reveal)
        if len(chain) < now_round - 1:
            return  # too late for so few relays: an honest member may not have it
        self.coins[key] = coin
        if now_round < self.rounds and self.daemons[key] != self.ours:
            self._to_relay[key] = chain

    def _chain(self, reveal: Reveal) -> list[Relay]:
        """The valid relay signatures of a coin: one per daemon, never the coin's own."""
        document = relay_document(self.table_id, reveal.key, reveal.coin)
        chain: dict[bytes, Relay] = {}
        for relayer, signature in reveal.relays:
            daemon = self.daemons.get(relayer)
            if (
                daemon is not None
                and daemon != self.daemons[reveal.key]
                and verify(relayer, signature, document)
            ):
                chain[daemon] = (relayer, signature)
        return list(chain.values())

    def take_relays(self) -> dict[bytes, list[Reveal]]:
        """The coins to relay, signed, by daemon: to every one but ours, the coin's own and
        those that relayed it to us."""
        out: dict[bytes, list[Reveal]] = {}
        for key, chain in self._to_relay.items():
            coin = self.coins[key]
            ours = self.signer.sign(relay_document(self.table_id, key, coin))
            signed = Reveal(key, coin, (*chain, (self.signer.public_key, ours)))
            have = {self.daemons[key], self.ours, *(self.daemons[relayer] for relayer, _ in chain)}
            for daemon in dict.fromkeys(self.daemons.values()):
                if daemon not in have:
                    out.setdefault(daemon, []).append(signed)
        self._to_relay.clear()
        return out

    def dealer(self) -> int:
        return first_dealer(self.table_id, [self.coins.get(key) for key in self.daemons])
