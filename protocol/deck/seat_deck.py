"""One seat's secret side of the deck (:mod:`protocol.deck.public_deck` describes the rounds):
its seed, everything derived from it, and the payloads it sends."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from protocol.deck.group import (
    CARD_POINTS,
    card_of,
    invert,
    mul,
    mul_each,
    scalar_product,
)
from protocol.deck.lock_proof import lock
from protocol.deck.payloads import (
    ChienKeys,
    Commit,
    DealKeys,
    EcartCommitment,
    Lock,
    Open,
    Opening,
    OpenRecommitted,
    Reveal,
    Shuffle,
)
from protocol.deck.public_deck import DeckPhase, PublicDeck
from protocol.deck.seeds import SeatSecrets, commitment, derive, new_seed
from protocol.deck.setup import DeckSetup
from protocol.deck.shuffle_proof import prove_shuffle
from protocol.replication.verdict import VerdictError
from protocol.rules.cards import DECK, Card


class DeckUsageError(RuntimeError):
    """The local caller asked a :class:`SeatDeck` for something at the wrong moment."""


class SeatDeck:
    """One seat's secrets for one deal, and the payloads it sends.

    The seed is drawn from the OS CSPRNG unless given (to resume after a restart, or to
    replay).  The caller must store :attr:`seed` durably before sending :meth:`commit`.
    """

    def __init__(self, setup: DeckSetup, seat: int, seed: bytes | None = None) -> None:
        if not 0 <= seat < setup.players:
            raise ValueError(f"seat {seat} is not at a {setup.players}-player table")
        self.setup = setup
        self.seat = seat
        self.secrets: SeatSecrets = derive(
            new_seed() if seed is None else seed, setup.table_id, setup.deal, seat, setup.variant
        )
        self._hand: dict[Card, int] | None = None  # card → pack position
        self._recommitted: dict[Card, int] | None = None  # card → commitment index, after the écart

    @property
    def seed(self) -> bytes:
        return self.secrets.seed

    def commit(self) -> Commit:
        s = self.secrets
        return Commit(
            self.seat,
            commitment(s.seed, self.setup.table_id, self.setup.deal, self.seat),
            s.blanket_public,
        )

    def _my_turn(self, public: PublicDeck, phase: DeckPhase) -> None:
        if public.phase is not phase or public.waiting_for() != {self.seat}:
            raise DeckUsageError(
                f"seat {self.seat} cannot {phase.value} now: waiting for "
                f"{sorted(public.waiting_for())}"
            )

    def shuffle(self, public: PublicDeck) -> Shuffle:
        """``Dᵢ = π(a·Dᵢ₋₁)`` and its proof (78 multiplications, and 4×78 more to prove)."""
        self._my_turn(public, DeckPhase.SHUFFLE)
        s = self.secrets
        previous = public.current_points()
        points = tuple(mul_each([s.blanket] * len(previous), [previous[p] for p in s.permutation]))
        binding = self.setup.binding(self.seat, "shuffle")
        proof = prove_shuffle(
            binding, s.blanket, s.blanket_public, previous, points, s.permutation, s.nonce_key
        )
        return Shuffle(self.seat, points, proof)

    def lock(self, public: PublicDeck) -> Lock:
        """``Bⱼ = bⱼ·G``, ``Eⱼ = (bⱼ·a⁻¹)·Eᵢ₋₁,ⱼ`` and the proof (2×78 multiplications,
        2×78 by G)."""
        self._my_turn(public, DeckPhase.LOCK)
        s = self.secrets
        binding = self.setup.binding(self.seat, "lock")
        step = lock(
            binding,
            s.blanket,
            s.blanket_inverse,
            s.blanket_public,
            public.current_points(),
            s.lock_keys,
            s.nonce_key,
        )
        return Lock(self.seat, step.commitments, step.locked, step.proof)

    def deal_keys(self) -> DealKeys:
        keys = self.secrets.lock_keys
        return DealKeys(self.seat, tuple(keys[j] for j in self.setup.dealt_to_others(self.seat)))

    def hand(self, public: PublicDeck) -> dict[int, Card]:
        """This seat's cards by pack position, decrypted once the other seats' deal keys are in.

        One multiplication per card.  A position that does not decrypt to a card, or to a card
        already in the hand, raises VerdictError: naming the seat whose key is wrong, or
        unattributed when every key matches its lock (then the shuffle or lock is at fault).
        """
        if self._hand is None:
            self._hand = self._decrypt_hand(public)
        return {position: card for card, position in self._hand.items()}

    def _decrypt_hand(self, public: PublicDeck) -> dict[Card, int]:
        others = [seat for seat in range(self.setup.players) if seat != self.seat]
        missing = [seat for seat in others if not public.has_deal_keys(seat)]
        if missing:
            raise DeckUsageError(
                f"seat {self.seat} cannot see its hand yet: waiting for deal keys from {missing}"
            )
        hand: dict[Card, int] = {}
        for j in self.setup.layout.positions_of(self.seat):
            keys = public.published_keys(j)
            combined = invert(
                scalar_product([self.secrets.lock_keys[j], *(key for key, _ in keys.values())])
            )
            index = card_of(mul(combined, public.final_point(j)))
            if index is None or DECK[index] in hand:
                raise VerdictError(public.blame("deal", j, keys))
            hand[DECK[index]] = j
        return hand

    def chien_keys(self) -> ChienKeys:
        keys = self.secrets.lock_keys
        return ChienKeys(self.seat, tuple(keys[j] for j in self.setup.layout.chien_positions))

    def open(self, cards: Iterable[Card]) -> Open | OpenRecommitted:
        """Show some of this seat's cards: its dealt positions, or after an écart its
        re-commitments.  ValueError for a card it does not hold."""
        if self._hand is None:
            raise DeckUsageError("decrypt the hand (hand()) before opening cards")
        if self._recommitted is not None:
            where, keys = self._recommitted, self.secrets.recommit_keys
        else:
            where, keys = self._hand, self.secrets.lock_keys
        openings = []
        for card in cards:
            if card not in where:
                raise ValueError(f"{card.code} is not in seat {self.seat}'s hand")
            openings.append(Opening(where[card], keys[where[card]], card.index))
        if self._recommitted is not None:
            return OpenRecommitted(self.seat, tuple(openings))
        return Open(self.seat, tuple(openings))

    def ecart(self, public: PublicDeck, discard: Sequence[Card]) -> EcartCommitment:
        """Re-commit hand + chien as ``rₖ·M_c`` in the seed's order, mark ``discard`` as the
        écart and show the trumps in it (hand_size + chien_size multiplications).

        Only the crypto is checked here (cards held, the right number); the écart rules are the
        rules engine's, and the audit's.
        """
        chien = public.chien()
        if self._hand is None or chien is None:
            raise DeckUsageError("the écart needs the hand decrypted and the chien turned")
        return self._recommit([*self._hand, *chien], discard)

    def _recommit(self, held: Sequence[Card], discard: Sequence[Card]) -> EcartCommitment:
        """Re-commit ``held`` (hand + chien), marking ``discard``: the écart's crypto."""
        cards = sorted(held)
        wanted = set(discard)
        if (
            len(wanted) != len(discard)
            or len(discard) != self.setup.variant.chien_size
            or not wanted <= set(cards)
        ):
            raise ValueError(
                f"discard {self.setup.variant.chien_size} distinct cards of the hand and the chien"
            )
        s = self.secrets
        committed = [cards[k] for k in s.recommit_order]
        commitments = tuple(
            mul(r, CARD_POINTS[card.index]) for r, card in zip(s.recommit_keys, committed)
        )
        discarded = tuple(k for k, card in enumerate(committed) if card in wanted)
        shown = tuple(
            Opening(k, s.recommit_keys[k], committed[k].index)
            for k in discarded
            if committed[k].is_trump
        )
        self._recommitted = {card: k for k, card in enumerate(committed) if k not in discarded}
        return EcartCommitment(self.seat, commitments, discarded, shown)

    def reveal(self) -> Reveal:
        return Reveal(self.seat, self.secrets.seed)
