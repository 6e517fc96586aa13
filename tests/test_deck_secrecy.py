"""Nothing secret leaves a seat before the reveal, and no coalition reads a card the rules
have not shown it — looked for the way an attacker would (DESIGN §4, "The secrecy rule").

Two attackers, over the real payloads of a deal of 3, 4 and 5 seats played up to tricks (the
chien turned, an écart with a trump shown, a poignée, plays; ``deck_tables.play_deal``):

* the **symbolic** one (``symbolic_deck``) runs the real code with the group's arithmetic
  traced, and asks of every term of every value any payload carries whether a coalition can
  strip every factor off a hidden card — before the first bid and at the end of the play;
* the **concrete** one is every coalition of n − 1 seats, holding its seeds, trying every
  product of the keys it holds on every point published for a place it may not see, before
  the first bid, before the first card and after every trick.

Both are shown to catch the leak of the first design's lock (``F = a⁻¹·E``), rebuilt from the
real deal: a checker that cannot catch the known leak would be worthless.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from itertools import combinations_with_replacement

import msgpack
import pytest
from deck_tables import (
    Place,
    fresh_table,
    owner_of,
    play_deal,
    played_table,
    shown_places,
    taker_of,
    truth,
)
from symbolic_deck import (
    CardLeak,
    Expr,
    PermutationLeak,
    Traced,
    TracedDeal,
    Tracer,
    carried,
    expr_of,
    leaks,
    trace_deal,
    traced_values,
)

from protocol.deck import group
from protocol.deck.group import (
    CARD_POINTS,
    GENERATOR,
    Point,
    Scalar,
    add,
    base_mul_each,
    invert,
    mul_each,
    scalar_mul,
    scalar_product,
    sub,
)
from protocol.deck.lock_proof import LockProof
from protocol.deck.one_process import deal_in_one_process
from protocol.deck.payloads import (
    ChienKeys,
    DealKeys,
    DeckPayload,
    EcartCommitment,
    Lock,
    Open,
    OpenRecommitted,
    Shuffle,
)
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import DECK_SIZE, EXTRACT_SALT, SeatSecrets, derive
from protocol.deck.setup import DeckSetup
from protocol.replication.verdict import VerdictError
from protocol.rules.cards import DECK
from protocol.rules.layout import CHIEN
from protocol.rules.variants import variant

pytestmark = pytest.mark.heavy

PLAYERS = [3, 4, 5]
ONE: Scalar = (1).to_bytes(32, "little")


@cache
def _traced(players: int) -> TracedDeal:
    """The deal of :func:`_played`, traced: made once per table size, the tests only read it."""
    return trace_deal(players)


@cache
def _played(players: int) -> tuple[list[SeatDeck], PublicDeck, dict[str, int]]:
    """The deal the attackers read, untraced (``deck_tables.played_table``); read only."""
    return played_table(players)


def _everyone_but(setup: DeckSetup, seat: int) -> frozenset[int]:
    return frozenset(range(setup.players)) - {seat}


def _hidden_from(setup: DeckSetup, outsider: int) -> set[Place]:
    """What the seats but ``outsider`` may not see before the chien is turned:
    its hand and the chien."""
    return {
        Place(False, j) for j, owner in enumerate(setup.layout.owner) if owner in (outsider, CHIEN)
    }


# --- the tracer tells the truth -------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYERS)
def test_the_traced_deal_is_the_real_deal_and_every_expression_is_exact(players: int) -> None:
    """The symbolic check is only as good as the trace: the payloads must be byte for byte
    those of an untraced deal, and every value's expression must evaluate to its bytes."""
    traced = _traced(players)
    _, public, moments = _played(players)
    assert traced.moments == moments
    assert [msgpack.packb(p.to_wire()) for p in traced.public.record.payloads] == [
        msgpack.packb(p.to_wire()) for p in public.record.payloads
    ]
    tracer = traced.tracer
    checked = 0
    for payload in traced.public.record.payloads:
        for path, value in traced_values(payload):
            worth = (
                group.from_int(tracer.scalar_value(value.expr))
                if value.expr.is_scalar
                else tracer.point_value(value.expr)
            )
            assert worth == value, f"{payload.KIND}/{payload.seat} {path}"
            checked += 1
    assert checked > 600 * players  # every point and scalar of every step


# --- the symbolic attacker --------------------------------------------------------------------


@pytest.mark.parametrize("moment", ["first bid", "trick 3"])
@pytest.mark.parametrize("players", PLAYERS)
def test_no_coalition_can_strip_a_hidden_card_of_its_last_factor(players: int, moment: str) -> None:
    """Before the first bid, and at the end of the play (the last trick in, before the reveal)."""
    traced = _traced(players)
    assert leaks(traced.tracer, traced.public.setup, traced.payloads(moment)) == []


@dataclass(frozen=True)
class UnlockedPoints:
    """What the first design's lock published beside its locked points: ``F = a⁻¹·Eᵢ₋₁``."""

    seat: int
    unlocked: tuple[Point, ...]


def _v1_unlocked(
    seats: Sequence[SeatDeck],
    payloads: Sequence[DeckPayload],
    multiply: Callable[[Sequence[Scalar], Sequence[Point]], Sequence[Point]],
) -> list[UnlockedPoints]:
    """The v1 ``F`` of every lock of the real deal, rebuilt from its secrets with ``multiply``
    (traced or not)."""
    before = [p for p in payloads if isinstance(p, Shuffle)][-1].points
    unlocked = []
    for lock in (p for p in payloads if isinstance(p, Lock)):
        inverse = seats[lock.seat].secrets.blanket_inverse
        unlocked.append(UnlockedPoints(lock.seat, tuple(multiply([inverse] * len(before), before))))
        before = lock.locked
    return unlocked


def _symbolic_v1_reads(players: int) -> set[tuple[frozenset[int], Place]]:
    traced = _traced(players)
    payloads = traced.payloads("first bid")
    found = leaks(
        traced.tracer,
        traced.public.setup,
        payloads,
        _v1_unlocked(traced.seats, payloads, traced.tracer.mul_each),
    )
    assert all(
        isinstance(leak, CardLeak) and leak.where.startswith("UnlockedPoints/") for leak in found
    )
    return {(leak.coalition, leak.place) for leak in found if isinstance(leak, CardLeak)}


@pytest.mark.parametrize("players", PLAYERS)
def test_the_symbolic_check_catches_the_v1_lock(players: int) -> None:
    """``F`` of seat o holds the keys of the seats before it and the blankets of those after:
    the others together read o's hand and the chien — the leak of issue 25."""
    setup = _traced(players).public.setup
    expected = {
        (_everyone_but(setup, o), place) for o in range(players) for place in _hidden_from(setup, o)
    }
    assert _symbolic_v1_reads(players) == expected


@dataclass(frozen=True)
class Reanswered:
    """A second answer of a lock proof's nonce, to another challenge."""

    seat: int
    response: Scalar


@dataclass(frozen=True)
class Disclosed:
    """Scalars a seat should have kept."""

    seat: int
    scalars: tuple[Scalar, ...]


def test_the_symbolic_model_names_a_related_key_by_its_relation() -> None:
    """A derived key is a fresh symbol only if nothing relates it to the keys derived before:
    else the check would find a derivation that repeats or scales its keys as safe as one that
    does not (five key mutants of ``scripts/mutants`` passed it so)."""
    tracer = Tracer()
    order = group.ORDER
    b = 0x5EC2E7
    first = tracer._derived(0, "b0[0]", b)
    assert first.terms == Expr.symbol(0).terms
    assert tracer._derived(0, "b0[1]", 3 * b % order).terms == (Expr.constant(3) * first).terms
    assert tracer._derived(1, "b1[0]", b).terms == first.terms  # another seat's, repeated
    assert tracer._derived(0, "b0[2]", 1).terms == Expr.constant(1).terms
    c = 0xC0FFEE
    second = tracer._derived(0, "b0[3]", c)
    assert tracer._derived(0, "b0[4]", b * c % order).terms == (first * second).terms
    assert len(tracer.symbols) == 2


def test_the_symbolic_check_solves_a_nonce_used_twice() -> None:
    """A lock key's response ``s = β + c·b`` hides ``b`` while ``β`` answers one challenge
    only; publish ``β + (c + 1)·b`` beside it and the linear algebra gives ``b`` away."""
    traced = _traced(3)
    tracer, setup = traced.tracer, traced.public.setup
    payloads = traced.payloads("first bid")
    lock = next(p for p in payloads if isinstance(p, Lock) and p.seat == 0)
    j = setup.layout.positions_of(0)[0]
    key = traced.seats[0].secrets.lock_keys[j]
    again = tracer.from_int(tracer.to_int(lock.proof.key_responses[j]) + tracer.to_int(key))
    found = leaks(tracer, setup, payloads, [Reanswered(0, again)])
    assert {(leak.coalition, leak.place) for leak in found if isinstance(leak, CardLeak)} == {
        (frozenset({1, 2}), Place(False, j))
    }
    assert not [leak for leak in found if isinstance(leak, PermutationLeak)]


@pytest.mark.parametrize("masked", ["commitments", "chain"])
def test_the_symbolic_check_sees_a_permutation_opened_and_follows_it(masked: str) -> None:
    """The last shuffler's permutation is hidden in its proof by random multiples of ``G``:
    in the commitments ``Cⱼ = rⱼ·G + H₁₊ψ⁻¹(j)`` and the chain ``ĉₚ = xₚ·G + (Π_{q≤p} u_ψ(q))·H₀``.
    Publish the randomness of either: the others learn the permutation, follow the points of
    the shuffle before — which they can decrypt — to the pack, and read the last shuffler's
    hand and the chien."""
    traced = _traced(3)
    tracer, setup = traced.tracer, traced.public.setup
    payloads = traced.payloads("first bid")
    shuffle = next(p for p in payloads if isinstance(p, Shuffle) and p.seat == 2)
    randomness = {
        symbol
        for point in getattr(shuffle.proof, masked)
        for monomial, base in expr_of(point).terms
        if base == tracer.generator_base
        for symbol, _ in monomial
        if symbol not in tracer.guessable
    }
    disclosed = tuple(
        Traced(group.from_int(tracer.symbols[s].value), Expr.symbol(s)) for s in sorted(randomness)
    )
    assert len(disclosed) == DECK_SIZE
    found = leaks(tracer, setup, payloads, [Disclosed(2, disclosed)])
    coalition = frozenset({0, 1})
    assert {leak.coalition for leak in found} == {coalition}
    assert {leak.seat for leak in found if isinstance(leak, PermutationLeak)} == {2}
    assert {leak.place for leak in found if isinstance(leak, CardLeak)} == _hidden_from(setup, 2)


# --- the concrete attacker --------------------------------------------------------------------


def _signed_products(keys: Iterable[Scalar]) -> list[Scalar]:
    """Every product of the distinct ``keys``, each to the power −1, 0 or 1 — but the empty one."""
    products = [ONE]
    for key in sorted(set(keys)):
        inverse = invert(key)
        products = [q for p in products for q in (p, scalar_mul(p, key), scalar_mul(p, inverse))]
    return products[1:]


class Coalition:
    """Seats pooling their seeds, trying their keys on every point published.

    A point tied to a place (a pack position, or a re-commitment of the taker's) that the
    coalition may not see is multiplied by every product of the keys it holds for that place —
    its own lock keys, and every key published for it — and looked up among the cards times
    every product of the coalition's blanket keys: the two halves meet in the middle, which tries
    every product of all those keys at the cost of the first half per point.  A point tied to no
    place (a proof's) is looked up as it is: any card there is a leak.  The points of a shuffle
    before the last are tied to pack positions only through the later shufflers'
    permutations; while the coalition lacks one of those, it cannot say where any of them goes,
    and they are skipped."""

    def __init__(self, setup: DeckSetup, seeds: Mapping[int, bytes]) -> None:
        self.setup = setup
        self.secrets: dict[int, SeatSecrets] = {
            seat: derive(seed, setup.table_id, setup.deal, seat, setup.variant)
            for seat, seed in seeds.items()
        }
        self._cards = {point: c for c, point in enumerate(CARD_POINTS)}
        for k in _signed_products(s.blanket for s in self.secrets.values()):
            self._cards.update(
                (point, c) for c, point in enumerate(mul_each([k] * DECK_SIZE, CARD_POINTS))
            )
        self._opened: dict[tuple[bytes, frozenset[bytes]], int | None] = {}

    def reads(
        self, payloads: Sequence[DeckPayload], extra: Sequence[object] = ()
    ) -> set[tuple[Place | None, int]]:
        """Every (place, card) the coalition reads from ``payloads`` and ``extra``, values of
        another design published beside them."""
        shown = shown_places(self.setup, payloads)
        keys = self._keys(payloads)
        tries = [
            (place, (bytes(point), keys.get(place, frozenset())))
            for place, point in self._points(payloads, extra)
            if place is None
            or not (place in shown or owner_of(place, self.setup, payloads) in self.secrets)
        ]
        self._try({attempt for _, attempt in tries} - self._opened.keys())
        return {
            (place, card) for place, attempt in tries if (card := self._opened[attempt]) is not None
        }

    def _try(self, attempts: Iterable[tuple[bytes, frozenset[bytes]]]) -> None:
        """Multiply each point by every product of its keys — one batch for all, spread over
        the cores — and remember which card, if any, came out."""
        products: dict[frozenset[bytes], list[Scalar]] = {}
        batch: list[tuple[tuple[bytes, frozenset[bytes]], Scalar]] = []
        for point, keys in attempts:
            self._opened[point, keys] = self._cards.get(point)
            if keys not in products:
                products[keys] = _signed_products(keys)
            batch += [((point, keys), k) for k in products[keys]]
        images = mul_each([k for _, k in batch], [point for (point, _), _ in batch])
        for (attempt, _), image in zip(batch, images):
            if image in self._cards:
                self._opened[attempt] = self._cards[image]

    def _keys(self, payloads: Sequence[DeckPayload]) -> dict[Place | None, frozenset[bytes]]:
        """Place → the keys the coalition holds for it: its own, and what was published."""
        held: dict[Place | None, set[bytes]] = {Place(False, j): set() for j in range(DECK_SIZE)}
        for secrets in self.secrets.values():
            for j, key in enumerate(secrets.lock_keys):
                held[Place(False, j)].add(key)
        for p in payloads:
            if isinstance(p, DealKeys):
                published = [
                    (Place(False, j), key)
                    for j, key in zip(self.setup.dealt_to_others(p.seat), p.keys)
                ]
            elif isinstance(p, ChienKeys):
                published = [
                    (Place(False, j), key)
                    for j, key in zip(self.setup.layout.chien_positions, p.keys)
                ]
            elif isinstance(p, (Open, EcartCommitment, OpenRecommitted)):
                published = [(Place(not isinstance(p, Open), o.where), o.key) for o in p.openings]
            else:
                continue
            for place, key in published:
                held.setdefault(place, set()).add(key)
        return {place: frozenset(keys) for place, keys in held.items()}

    def _points(
        self, payloads: Sequence[DeckPayload], extra: Sequence[object]
    ) -> Iterator[tuple[Place | None, bytes]]:
        """Every byte string published, with the place it is tied to (None: no place)."""
        shuffles = [p for p in payloads if isinstance(p, Shuffle)]
        for payload in [*payloads, *extra]:
            for field in fields(payload):  # type: ignore[arg-type]  # payloads and extras are all dataclasses
                value = getattr(payload, field.name)
                if isinstance(payload, Shuffle) and field.name == "points":
                    places = self._followed(shuffles[shuffles.index(payload) + 1 :])
                elif isinstance(payload, EcartCommitment) and field.name == "commitments":
                    places = [Place(True, k) for k in range(len(value))]
                elif isinstance(value, tuple) and len(value) == DECK_SIZE:
                    places = [Place(False, j) for j in range(DECK_SIZE)]
                else:
                    yield from ((None, item) for _, item in carried(value))
                    continue
                yield from zip(places, value)

    def _followed(self, later: Sequence[Shuffle]) -> list[Place]:
        """The pack position each output of a shuffle ends at, through the ``later`` shuffles
        (output q of a step takes its input ``permutation[q]``); none if a later shuffler is
        not in the coalition."""
        if any(s.seat not in self.secrets for s in later):
            return []
        where = list(range(DECK_SIZE))
        for shuffle in later:
            goes_to = {p: q for q, p in enumerate(self.secrets[shuffle.seat].permutation)}
            where = [goes_to[p] for p in where]
        return [Place(False, j) for j in where]


@cache
def _coalitions(players: int) -> dict[int, Coalition]:
    """Outsider → the coalition of every other seat (made once: their card tables cost)."""
    seats, public, _ = _played(players)
    return {
        o: Coalition(public.setup, {s.seat: s.seed for s in seats if s.seat != o})
        for o in range(players)
    }


@pytest.mark.parametrize("players", PLAYERS)
def test_no_coalition_opens_a_hidden_card_with_any_product_of_its_keys(players: int) -> None:
    _, public, moments = _played(players)
    assert list(moments) == ["first bid", "first card", "trick 1", "trick 2", "trick 3"]
    for moment, count in moments.items():
        for outsider, coalition in _coalitions(players).items():
            assert coalition.reads(public.record.payloads[:count]) == set(), (moment, outsider)


@pytest.mark.parametrize("players", PLAYERS)
def test_the_concrete_attacker_reads_the_v1_lock_as_the_symbolic_one_does(players: int) -> None:
    seats, public, moments = _played(players)
    payloads = public.record.payloads[: moments["first bid"]]
    unlocked = _v1_unlocked(seats, payloads, mul_each)
    cards = {Place(False, j): card for j, card in enumerate(truth(seats, public))}
    read: set[tuple[frozenset[int], Place]] = set()
    for outsider, coalition in _coalitions(players).items():
        found = coalition.reads(payloads, unlocked)
        assert all(place is not None and cards[place] == card for place, card in found)
        read |= {
            (_everyone_but(public.setup, outsider), place)
            for place, _ in found
            if place is not None
        }
    assert read == _symbolic_v1_reads(players)


@pytest.mark.slow
@pytest.mark.parametrize("salt", [1, 2, 3])
@pytest.mark.parametrize("players", PLAYERS)
def test_more_deals_played_to_the_last_trick_leak_nothing_at_any_moment(
    players: int, salt: int
) -> None:
    """Both attackers, after every trick of whole deals with other seeds, dealers and takers."""
    dealer, tricks = salt % players, variant(players).hand_size
    traced = trace_deal(players, salt=salt, dealer=dealer, tricks=tricks)
    setup, payloads = traced.public.setup, traced.public.record.payloads
    seats, public, moments = played_table(players, salt=salt, dealer=dealer, tricks=tricks)
    assert [msgpack.packb(p.to_wire()) for p in payloads] == [
        msgpack.packb(p.to_wire()) for p in public.record.payloads
    ]
    coalitions = [
        Coalition(setup, {s.seat: s.seed for s in seats if s.seat != o}) for o in range(players)
    ]
    for moment, count in moments.items():
        assert leaks(traced.tracer, setup, payloads[:count]) == [], moment
        for coalition in coalitions:
            assert coalition.reads(public.record.payloads[:count]) == set(), (
                moment,
                sorted(coalition.secrets),
            )


# --- keys of every place -------------------------------------------------------------------------

#: ±m/d for 1 ≤ m, d ≤ 3, modulo the group order: what a published key is multiplied by.
SMALL_FRACTIONS = tuple(
    sorted(
        {
            sign * m * pow(d, -1, group.ORDER) % group.ORDER
            for m in (1, 2, 3)
            for d in (1, 2, 3)
            for sign in (1, -1)
        }
    )
)


@cache
def _small_multiples_of_cards() -> dict[Point, int]:
    """``f·M_c`` → c for every small fraction ``f`` and card ``c``."""
    fractions = [group.from_int(f) for f in SMALL_FRACTIONS]
    products = mul_each(
        [f for f in fractions for _ in CARD_POINTS], [m for _ in fractions for m in CARD_POINTS]
    )
    return {point: k % DECK_SIZE for k, point in enumerate(products)}


class AcrossPlaces:
    """The n − 1 seats but ``outsider``, pooling their seeds, and trying on every place they
    may not see the keys the outsider published for **other** places: each times a small
    fraction (±1, ±2, ±1/2, ±3, ±2/3 …), and the products and quotients of two of them — what
    a key derivation with a relation between places, or a repeated key, or a key of 1 would
    give away.  The concrete attacker above tries only keys published for the same place.

    A guess for the outsider's lock key at a hidden pack position is tested against its
    commitment ``B = b·G`` — one fixed-base multiplication a guess, for every position at once
    — and a hit opens the card with the coalition's own keys.  At a re-commitment of the
    outsider's (the taker's), each published key is tried on the point against the cards times
    every small fraction."""

    def __init__(self, setup: DeckSetup, seeds: Mapping[int, bytes], outsider: int) -> None:
        self.setup = setup
        self.outsider = outsider
        self.secrets = {
            seat: derive(seed, setup.table_id, setup.deal, seat, setup.variant)
            for seat, seed in seeds.items()
            if seat != outsider
        }

    def reads(self, payloads: Sequence[DeckPayload]) -> set[tuple[Place, int]]:
        published = self._published(payloads)
        keys = [group.to_int(key) for key in published.values()]
        return self._positions(payloads, published, keys) | self._recommitments(payloads, keys)

    def _published(self, payloads: Sequence[DeckPayload]) -> dict[Place, Scalar]:
        """Place → the key the outsider published for it."""
        found: dict[Place, Scalar] = {}
        for p in payloads:
            if p.seat != self.outsider:
                continue
            if isinstance(p, DealKeys):
                found.update(
                    (Place(False, j), k) for j, k in zip(self.setup.dealt_to_others(p.seat), p.keys)
                )
            elif isinstance(p, ChienKeys):
                found.update(
                    (Place(False, j), k) for j, k in zip(self.setup.layout.chien_positions, p.keys)
                )
            elif isinstance(p, (Open, EcartCommitment, OpenRecommitted)):
                found.update((Place(not isinstance(p, Open), o.where), o.key) for o in p.openings)
        return found

    def _hidden(self, payloads: Sequence[DeckPayload], places: Iterable[Place]) -> list[Place]:
        shown = shown_places(self.setup, payloads)
        return [
            place
            for place in places
            if place not in shown
            and owner_of(place, self.setup, payloads) in (self.outsider, CHIEN)
        ]

    def _positions(
        self, payloads: Sequence[DeckPayload], published: Mapping[Place, Scalar], keys: list[int]
    ) -> set[tuple[Place, int]]:
        locks = {p.seat: p for p in payloads if isinstance(p, Lock)}
        hidden = self._hidden(payloads, (Place(False, j) for j in range(DECK_SIZE)))
        committed = {locks[self.outsider].commitments[place.index]: place for place in hidden}
        inverses = [pow(k, -1, group.ORDER) for k in keys]
        guesses = sorted(
            {1}
            | {k * f % group.ORDER for k in keys for f in SMALL_FRACTIONS}
            | {a * b % group.ORDER for a, b in combinations_with_replacement(keys, 2)}
            | {a * b % group.ORDER for a in keys for b in inverses}
            | self._shared_nonces(locks[self.outsider].proof, published, hidden)
        )
        found = set()
        for guess, image in zip(guesses, base_mul_each([group.from_int(g) for g in guesses])):
            place = committed.get(image)
            if place is None:
                continue
            own = [s.lock_keys[place.index] for s in self.secrets.values()]
            opener = invert(scalar_product([group.from_int(guess), *own]))
            card = group.card_of(
                group.mul(opener, locks[self.setup.players - 1].locked[place.index])
            )
            if card is not None:
                found.add((place, card))
        return found

    @staticmethod
    def _shared_nonces(
        proof: LockProof, published: Mapping[Place, Scalar], hidden: Sequence[Place]
    ) -> set[int]:
        """The key at each hidden position were its lock-proof nonce that of a published one:
        ``sⱼ − sₖ = c·(bⱼ − bₖ)`` gives ``bⱼ = bₖ + (sⱼ − sₖ)/c``."""
        s = [group.to_int(v) for v in proof.key_responses]
        over_c = pow(group.to_int(proof.challenge), -1, group.ORDER)
        return {
            (group.to_int(key) + (s[j.index] - s[k.index]) * over_c) % group.ORDER
            for k, key in published.items()
            if not k.recommitted
            for j in hidden
        }

    def _recommitments(
        self, payloads: Sequence[DeckPayload], keys: list[int]
    ) -> set[tuple[Place, int]]:
        ecart = next((p for p in payloads if isinstance(p, EcartCommitment)), None)
        if ecart is None or ecart.seat != self.outsider:
            return set()
        hidden = self._hidden(payloads, (Place(True, k) for k in range(len(ecart.commitments))))
        tries = [(place, group.from_int(pow(k, -1, group.ORDER))) for place in hidden for k in keys]
        images = mul_each([k for _, k in tries], [ecart.commitments[p.index] for p, _ in tries])
        table = _small_multiples_of_cards()
        return {(place, table[image]) for (place, _), image in zip(tries, images) if image in table}


@pytest.mark.parametrize("players", PLAYERS)
def test_no_coalition_opens_a_hidden_card_with_keys_of_other_places(players: int) -> None:
    seats, public, moments = _played(players)
    for moment in ("first bid", "trick 3"):
        payloads = public.record.payloads[: moments[moment]]
        for outsider in range(players):
            seeds = {s.seat: s.seed for s in seats}
            attacker = AcrossPlaces(public.setup, seeds, outsider)
            assert attacker.reads(payloads) == set(), (moment, outsider)


class RelatedKeys(SeatDeck):
    """Lock keys ``bⱼ = (j+1)·b₀``: each published key gives every other place's."""

    def __init__(self, setup: DeckSetup, seat: int, seed: bytes | None = None) -> None:
        super().__init__(setup, seat, seed)
        first = group.to_int(self.secrets.lock_keys[0])
        related = tuple(group.from_int(first * (j + 1)) for j in range(DECK_SIZE))
        self.secrets = replace(self.secrets, lock_keys=related)


def test_the_attacker_across_places_reads_keys_related_by_a_known_factor() -> None:
    """Its teeth: at five seats, the others read seat 2's hand from its deal keys."""
    seats, public = fresh_table(5, cheaters={2: RelatedKeys})
    moments = {moment: len(public.record.payloads) for moment in play_deal(seats, public)}
    payloads = public.record.payloads[: moments["first bid"]]
    read = AcrossPlaces(public.setup, {s.seat: s.seed for s in seats}, 2).reads(payloads)
    cards = truth(seats, public)
    hand = public.setup.layout.positions_of(2)
    assert read and all(cards[place.index] == card for place, card in read)
    assert len(read) >= len(hand) // 2, f"{len(read)} of {len(hand)}"


# --- nothing secret on the wire, in a repr or in a verdict -----------------------------------


@pytest.mark.parametrize("players", PLAYERS)
def test_the_public_messages_before_the_reveal_hold_no_secret(players: int) -> None:
    seats, public, _ = _played(players)
    setup, payloads = public.setup, public.record.payloads
    wire = b"".join(msgpack.packb(payload.to_wire()) for payload in payloads)
    layout, shown, taker = setup.layout, shown_places(setup, payloads), taker_of(payloads)

    never_published = [group.from_int(nonce.value) for nonce in _traced(players).tracer.nonces()]
    for seat in seats:
        s = seat.secrets
        never_published += [s.seed, s.blanket, s.blanket_inverse, s.nonce_key, bytes(s.permutation)]
        # the HKDF key
        never_published.append(hmac.new(EXTRACT_SALT, s.seed, hashlib.sha512).digest())
        # the lock's multipliers
        never_published += [scalar_mul(b, s.blanket_inverse) for b in s.lock_keys]
        never_published += [
            s.lock_keys[j] for j in layout.positions_of(seat.seat) if Place(False, j) not in shown
        ]
        never_published += [
            r
            for k, r in enumerate(s.recommit_keys)
            if seat.seat != taker or Place(True, k) not in shown
        ]
    assert len(never_published) > 500 * players
    for secret in never_published:
        assert secret not in wire

    # And what was published is exactly what the protocol discloses: a seat's keys for the
    # positions dealt to others and for the chien (turned), and for what it opened.
    published = {value for payload in payloads for _, value in carried(payload)}
    for seat in seats:
        for j in range(DECK_SIZE):
            disclosed = layout.owner[j] != seat.seat or Place(False, j) in shown
            assert (seat.secrets.lock_keys[j] in published) == disclosed
    for k, key in enumerate(seats[taker].secrets.recommit_keys):  # type: ignore[index]  # the taker, found above, is a seat
        assert (key in published) == (Place(True, k) in shown)


def test_secrets_do_not_show_in_reprs_or_in_a_stopped_deals_verdict() -> None:
    seats, _, _ = _played(3)
    s = seats[0].secrets
    assert repr(s) == "SeatSecrets(<hidden>)"
    assert s.seed.hex() not in repr(seats[0]) and s.seed.hex() not in str(
        vars(seats[0]).get("secrets")
    )
    # A lock that spoils two positions is refused at the lock, naming its seat; a view that
    # took that lock on trust (the cheater's own) stops at the deal, unattributed.  Neither
    # says which cards any hand holds.
    for trusted, culprit in ((frozenset(), 1), (frozenset({1}), None)):
        seats, public = fresh_table(3, cheaters={1: Spoiler})
        public.trusted = trusted
        with pytest.raises(VerdictError) as caught:
            deal_in_one_process(seats, [public])
        assert caught.value.verdict.seat == culprit
        text = " ".join([str(caught.value), *caught.value.verdict.evidence])
        assert not [card.code for card in DECK if re.search(rf"\b{card.code}\b", text)]


class Spoiler(SeatDeck):
    """Compensated garbage on two locked points of the next seat's hand."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        j, k = self.setup.layout.positions_of(self.seat + 1)[:2]
        locked = list(honest.locked)
        locked[j], locked[k] = add(locked[j], GENERATOR), sub(locked[k], GENERATOR)
        return replace(honest, locked=tuple(locked))
