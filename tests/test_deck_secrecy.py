"""Nothing secret leaves a seat before the reveal, and no coalition short of everyone opens
a position dealt to someone else."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import replace
from typing import Iterator

import msgpack
import pytest
from nacl.bindings import crypto_core_ed25519_sub as sub

from deck_tables import dealt_table, fresh_table, plain, truth, turn_chien
from protocol.cards import DECK
from protocol.deck import Lock, PublicDeck, SeatDeck, Shuffle, deal_in_one_process
from protocol.group import CARD_POINTS, GENERATOR, add, card_of, invert, mul, point_sum, scalar_product
from protocol.proofs import NONCE_DOMAIN, hash_to_scalar
from protocol.seeds import EXTRACT_SALT
from protocol.verdict import VerdictError


def _played_deal(players: int) -> tuple[list[SeatDeck], PublicDeck, set[tuple[int, int]], set[tuple[int, int]]]:
    """A deal played up to just before the reveal: chien turned, an écart, a poignée shown,
    a few cards played.  Returns which (seat, position) and (taker, commitment) were opened."""
    seats, public = dealt_table(players)
    chien = turn_chien(seats, public)
    taker = seats[0]
    pool = sorted(plain([*taker.hand(public).values(), *chien]))
    discard = pool[: len(chien)]
    ecart = taker.ecart(public, discard)
    public.receive(ecart)
    opened_positions: set[tuple[int, int]] = set()
    opened_recommits: set[tuple[int, int]] = set()
    kept = [card for card in [*taker.hand(public).values(), *chien] if card not in discard][:3]
    opening = taker.open(kept)
    public.receive(opening)
    opened_recommits |= {(0, o.where) for o in opening.openings}
    for seat in seats[1:]:
        hand = seat.hand(public)
        shown = sorted(hand.items())[: 2 + seat.seat]  # a poignée or a few plays
        public.receive(seat.open([card for _, card in shown]))
        opened_positions |= {(seat.seat, j) for j, _ in shown}
    return seats, public, opened_positions, opened_recommits


def _proof_nonces(seats: list[SeatDeck], public: PublicDeck) -> list[bytes]:
    """The Chaum–Pedersen nonces each seat derived: any one of them would give away a."""
    nonces = []
    previous_sum = point_sum(CARD_POINTS)
    for payload in public.record.payloads:
        seat = seats[payload.seat] if isinstance(payload, (Shuffle, Lock)) else None
        if seat is None:
            continue
        s = seat.secrets
        if isinstance(payload, Shuffle):
            base, image = previous_sum, point_sum(payload.points)
            previous_sum = image
            step = "shuffle"
        else:
            assert isinstance(payload, Lock)
            base, image = point_sum(payload.unlocked), previous_sum
            previous_sum = point_sum(payload.locked)
            step = "lock"
        binding = seat.setup.binding(seat.seat, step)
        nonces.append(hash_to_scalar(NONCE_DOMAIN, s.nonce_key, binding.encode(), s.blanket_public, base, image))
    return nonces


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_public_messages_before_the_reveal_hold_no_secret(players: int) -> None:
    seats, public, opened_positions, opened_recommits = _played_deal(players)
    wire = b"".join(msgpack.packb(payload.to_wire()) for payload in public.record.payloads)
    layout = public.setup.layout

    never_published: list[bytes] = _proof_nonces(seats, public)
    for seat in seats:
        s = seat.secrets
        never_published += [s.seed, s.blanket, s.blanket_inverse, s.nonce_key, bytes(s.permutation)]
        never_published.append(hmac.new(EXTRACT_SALT, s.seed, hashlib.sha512).digest())  # the HKDF key
        never_published += [s.lock_keys[j] for j in layout.positions_of(seat.seat) if (seat.seat, j) not in opened_positions]
        if seat.seat == 0:  # the taker's re-commitments: only those opened are out
            never_published += [r for k, r in enumerate(s.recommit_keys) if (0, k) not in opened_recommits]
            never_published += [s.lock_keys[j] for j in layout.positions_of(0)]  # superseded by the écart
    assert len(never_published) > 5 * players
    for secret in never_published:
        assert secret not in wire

    # And what was published is exactly what the protocol discloses: a seat's keys for the
    # positions dealt to others and for the chien (turned), and for what it opened.
    published = set(_byte_strings([payload.to_wire() for payload in public.record.payloads]))
    for seat in seats:
        for j in range(78):
            disclosed = layout.owner[j] != seat.seat or (seat.seat, j) in opened_positions
            assert (seat.secrets.lock_keys[j] in published) == disclosed


def _byte_strings(obj: object) -> Iterator[bytes]:
    if isinstance(obj, bytes):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _byte_strings(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _byte_strings(item)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_every_other_seat_together_cannot_open_a_position_dealt_to_the_last(players: int) -> None:
    seats, public = dealt_table(players)
    victim = seats[-1]
    coalition = seats[:-1]
    cards = truth(seats, public)
    last_shuffle = [p for p in public.record.payloads if isinstance(p, Shuffle)][-1]
    for j in public.setup.layout.positions_of(victim.seat):
        # Every key but the victim's: the coalition's own and everything published.
        keys = [seat.secrets.lock_keys[j] for seat in coalition]
        locked = mul(invert(scalar_product(keys)), public.final_point(j))
        assert card_of(locked) is None
        assert locked == mul(victim.secrets.lock_keys[j], CARD_POINTS[cards[j]])  # type: ignore[index]
        # Nor from the end of the shuffle, with every blanket key but the victim's.
        blanketed = mul(invert(scalar_product(seat.secrets.blanket for seat in coalition)), last_shuffle.points[j])
        assert card_of(blanketed) is None
        assert blanketed == mul(victim.secrets.blanket, CARD_POINTS[cards[j]])  # type: ignore[index]
    for j in public.setup.layout.chien_positions:  # nor the chien
        keys = [seat.secrets.lock_keys[j] for seat in coalition]
        assert card_of(mul(invert(scalar_product(keys)), public.final_point(j))) is None


def test_secrets_do_not_show_in_reprs_or_in_a_stopped_deals_verdict() -> None:
    seats, public = dealt_table(5)
    s = seats[0].secrets
    assert repr(s) == "SeatSecrets(<hidden>)"
    assert s.seed.hex() not in repr(seats[0]) and s.seed.hex() not in str(vars(seats[0]).get("secrets"))
    # A deal stopped at the deal round says which position, never which cards a hand holds.
    seats, public = fresh_table(5, cheaters={1: Spoiler})
    with pytest.raises(VerdictError) as caught:
        deal_in_one_process(seats, [public])
    assert caught.value.verdict.seat is None
    text = " ".join([str(caught.value), *caught.value.verdict.evidence])
    assert not [card.code for card in DECK if re.search(rf"\b{card.code}\b", text)]


class Spoiler(SeatDeck):
    """Compensated garbage on two positions of the next seat's hand (caught at the deal)."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        j, k = self.setup.layout.positions_of(self.seat + 1)[:2]
        f, e = list(honest.unlocked), list(honest.locked)
        f[j], f[k] = add(f[j], GENERATOR), sub(f[k], GENERATOR)
        e[j], e[k] = mul(self.secrets.lock_keys[j], f[j]), mul(self.secrets.lock_keys[k], f[k])
        return replace(honest, unlocked=tuple(f), locked=tuple(e))
