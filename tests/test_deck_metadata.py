"""What the deck gives away besides its points: relations between keys, and order.

* **The keys.**  A seat publishes most of its lock keys (the deal keys, the chien's, the
  cards it plays) and some re-commitment keys; the secrecy of the rest holds only if no key
  can be had from others.  So every key a seat derives — its blanket, its 78 lock keys, its
  re-commitment keys — is checked, across every seat of a table, against the relations an
  attacker would try first: the key 1 (or any small fraction: a key that is no key), two keys
  equal, two keys whose ratio is a small fraction, a key that is the product of two others.
  The symbolic secrecy test names each derived key a fresh symbol whatever its value, and the
  concrete attacker tries keys on the places they were published for: neither would notice.
* **The order.**  The taker re-commits hand and chien in an order drawn from its seed; the
  écart's ``discarded`` indices and every later opening's index are public.  Were that order
  the cards' sorted one, an index would give the card's rank among the taker's: a discarded
  card hidden between two opened ones would be all but named.  Over a fixed set of seeds the
  index of each re-commitment is uncorrelated with its card's rank (Spearman's ρ, averaged
  over the seeds, within a bound a sorted order misses by far).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations
from statistics import fmean

import pytest
from deck_tables import plain, seed_for, setup_for

from protocol.deck.group import ORDER, card_of, invert, mul, to_int
from protocol.deck.payloads import EcartCommitment
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import SeatSecrets, derive
from protocol.deck.setup import DeckSetup
from protocol.rules.cards import DECK, Card

SMALL = 64  #: the largest numerator and denominator of the fractions tried


def _keys(secrets: SeatSecrets) -> list[tuple[str, int]]:
    """Every key a seat derives, named, as an integer modulo ORDER."""
    return [
        ("blanket", to_int(secrets.blanket)),
        *((f"lock key {j}", to_int(b)) for j, b in enumerate(secrets.lock_keys)),
        *((f"re-commitment key {k}", to_int(r)) for k, r in enumerate(secrets.recommit_keys)),
    ]


def _table_keys(players: int, salt: int) -> list[tuple[str, int]]:
    setup = setup_for(players)
    return [
        (f"seat {seat} {name}", key)
        for seat in range(players)
        for name, key in _keys(
            derive(seed_for(players, seat, salt), setup.table_id, setup.deal, seat, setup.variant)
        )
    ]


#: ±m/m' for 1 ≤ m, m' ≤ SMALL, modulo ORDER: the fractions an attacker tries first.
FRACTIONS = {
    sign * m * pow(d, -1, ORDER) % ORDER
    for m in range(1, SMALL + 1)
    for d in range(1, SMALL + 1)
    for sign in (1, -1)
}


@pytest.mark.parametrize(("players", "salt"), [(3, 0), (4, 1), (5, 0), (5, 2)])
def test_no_derived_key_is_a_small_fraction_of_another_or_a_product_of_two(
    players: int, salt: int
) -> None:
    keys = _table_keys(players, salt)
    assert len(keys) == players * (1 + 78 + setup_for(players).recommit_count)
    for name, key in keys:
        assert key not in FRACTIONS, f"{name} is a small fraction (1, 2, 1/2 …): no secret"
    values = {key: name for name, key in keys}
    assert len(values) == len(keys), "two derived keys are equal"
    inverses = {key: pow(key, -1, ORDER) for key in values}
    for (name_a, a), (name_b, b) in combinations(keys, 2):
        ratio = a * inverses[b] % ORDER
        assert ratio not in FRACTIONS, f"{name_a} / {name_b} is a small fraction"
        product = a * b % ORDER
        assert product not in values, f"{name_a} × {name_b} is {values[product]}"


# --- the order of the re-commitments ------------------------------------------------------


def _spearman(xs: Sequence[int], ys: Sequence[int]) -> float:
    """Spearman's ρ of two lists of distinct ranks 0..n−1."""
    n = len(xs)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(xs, ys)) / (n * (n * n - 1))


def _ecart(setup: DeckSetup, seed: int) -> tuple[list[Card], EcartCommitment, list[Card]]:
    """A taker's écart on a hand and chien drawn from ``seed``, discarding its lowest plain
    cards — the écart's crypto (``SeatDeck._recommit``, what ``ecart`` runs once the hand is
    decrypted and the chien turned), so that many seeds cost no deal.  Returns the cards
    held (sorted), the payload, and each re-commitment's card, read back as an observer
    that later sees every key would: ``r⁻¹·commitment``."""
    taker = SeatDeck(setup, 1, seed_for(setup.players, 1, seed))
    held = sorted(random.Random(seed).sample(DECK, setup.recommit_count))
    discard = plain(held)[: setup.variant.chien_size]
    payload = taker._recommit(held, discard)
    cards = []
    for key, point in zip(taker.secrets.recommit_keys, payload.commitments):
        index = card_of(mul(invert(key), point))
        assert index is not None
        cards.append(DECK[index])
    assert sorted(cards) == held
    return held, payload, cards


SEEDS = range(24)  #: a fixed set: the test is deterministic


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_recommitment_order_says_nothing_of_the_cards_ranks(players: int) -> None:
    """ρ(index, rank) per seed, averaged: about 0 ± 1/√(seeds·(n−1)) (0.04 at 4 players) for a
    random order, exactly 1 for the sorted one.  And the écart's indices, the lowest plain cards
    discarded: their mean place among the re-commitments about the middle (0.5 ± 0.06), where
    a sorted order puts them at the start."""
    setup = setup_for(players)
    rhos, places = [], []
    for seed in SEEDS:
        held, payload, cards = _ecart(setup, seed)
        ranks = [held.index(card) for card in cards]
        rhos.append(_spearman(range(len(cards)), ranks))
        places += [k / (len(cards) - 1) for k in payload.discarded]
    assert abs(fmean(rhos)) < 0.2, f"ρ(index, rank) = {fmean(rhos):.2f} over {len(SEEDS)} seeds"
    assert abs(fmean(places) - 0.5) < 0.2, f"the écart's mean place {fmean(places):.2f}"


def test_the_shuffles_are_permutations_drawn_at_random() -> None:
    """A seat's shuffle is its seed's: over the fixed seeds, the seats' permutations are
    permutations, all different, with about one fixed point each (a uniform permutation has one
    on average); a derivation that swapped nothing (the identity) has 78."""
    setup = setup_for(5)
    permutations = [
        derive(seed_for(5, seat, salt), setup.table_id, setup.deal, seat, setup.variant).permutation
        for seat in range(5)
        for salt in SEEDS
    ]
    assert all(sorted(p) == list(range(78)) for p in permutations)
    assert len(set(permutations)) == len(permutations)
    fixed = fmean(sum(p[k] == k for k in range(78)) for p in permutations)
    assert fixed < 2, f"{fixed:.1f} fixed points on average"
