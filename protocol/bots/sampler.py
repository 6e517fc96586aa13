"""Deal the cards a seat cannot see, consistently with everything its view shows.

A seat knows its hand, the cards played, the turned chien, the trumps shown in the écart and
in poignées, and what the play revealed: a seat that did not follow a suit has none of it, a
seat that discarded on a trump lead (or on a suit it lacks) has no trump, a seat that played
under a trump it had to over-trump has no higher one.  :func:`constraints` turns a
:class:`~protocol.rules.view.SeatView` into, for every unseen card, the places it may be — the other
seats and one face-down *pile*: the chien while it is hidden, or the hidden part of the taker's
écart once the chien was turned (colour cards but kings: trumps in an écart are shown) — and
:func:`sample` deals them, each place getting exactly the cards it holds.

The deal is drawn card by card in a random order, each card to a random place that may hold it
and has room; when a card finds every such place full, an augmenting path moves cards already
placed to make room (a bipartite b-matching), so a consistent deal is always found when one
exists — and one always does, the real one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from protocol.bots.bots import read_table
from protocol.bots.fastgame import mask
from protocol.rules.cards import DECK, EXCUSE, Card, Suit
from protocol.rules.deal import Phase
from protocol.rules.rules import may_discard
from protocol.rules.view import SeatView

__all__ = ["Constraints", "Sample", "constraints", "sample"]


@dataclass(frozen=True)
class Constraints:
    """Where each unseen card may be.  Places are the seats ``0..n-1`` and the pile ``n``.

    ``fixed[p]`` are the cards known to be at place ``p`` without having been seen there by
    this seat as its own (poignée trumps not played yet); ``room[p]`` how many unseen cards
    place ``p`` still takes; ``allowed[c]`` the places, as a bit mask, card ``c`` may be.
    """

    seat: int
    players: int
    fixed: tuple[frozenset[int], ...]
    room: tuple[int, ...]
    allowed: dict[int, int]


@dataclass(frozen=True)
class Sample:
    """One consistent deal: each place's cards as deck indices, the seat's own hand included."""

    hands: tuple[frozenset[int], ...]  #: index ``n`` is the pile
    players: int

    def hand_mask(self, place: int) -> int:
        return mask(list(self.hands[place]))


def _played_by(view: SeatView) -> list[list[Card]]:
    n = view.players
    played: list[list[Card]] = [[] for _ in range(n)]
    for trick in view.tricks:
        for i, c in enumerate(trick.cards):
            played[(trick.leader + i) % n].append(c)
    for i, c in enumerate(view.current):
        played[(view.leader + i) % n].append(c)
    return played


def _revealed(view: SeatView) -> tuple[list[set[Suit]], list[int]]:
    """Voids and trump ceilings shown by the play, as in :func:`protocol.bots.bots.read_table`."""
    reading = read_table(view)
    return [set(v) for v in reading.voids], list(reading.trump_ceiling)


def constraints(view: SeatView) -> Constraints:
    """Everything ``view`` tells about where the cards it cannot see are."""
    n, me, v = view.players, view.seat, view.variant
    played = _played_by(view)
    played_set = view.played
    taker = view.taker
    chien_turned = bool(view.chien)
    pile_is_ecart = chien_turned and me != taker and view.phase is not Phase.ECART
    voids, ceiling = _revealed(view)
    known = set(view.hand) | played_set | set(view.ecart)
    if me == taker:
        known |= set(view.chien)
    fixed: list[set[Card]] = [set() for _ in range(n + 1)]
    all_trumps_shown: set[int] = set()
    for p in view.poignees:
        for c in p.cards:
            if c not in known:
                fixed[p.seat].add(c)
        if EXCUSE in p.cards:
            all_trumps_shown.add(p.seat)
    fixed_all = set().union(*fixed)
    room = [v.hand_size - len(played[s]) for s in range(n)] + [0]
    room[me] = 0
    if me != taker or not chien_turned:
        pile_size = v.chien_size - (len(view.ecart) if pile_is_ecart else 0)
        if taker is not None and me != taker and chien_turned and not pile_is_ecart:
            room[taker] += v.chien_size  # the écart is still to be made: the chien is in hand
            pile_size = 0
        room[n] = pile_size
    for place in range(n + 1):
        room[place] -= len(fixed[place])
    allowed: dict[int, int] = {}
    hidden_called = view.called is not None and view.called not in known and view.partner is None
    for c in DECK:
        if c in known or c in fixed_all:
            continue
        places = 0
        for s in range(n):
            if (
                s != me
                and room[s] > 0
                and _may_hold(c, s, voids, ceiling, all_trumps_shown, fixed[s])
            ):
                places |= 1 << s
        if room[n] > 0 and (not pile_is_ecart or (may_discard(c) and not c.is_trump)):
            places |= 1 << n
        if chien_turned and me != taker and taker is not None and c in view.chien:
            places &= (1 << taker) | (1 << n)  # the turned chien went to the taker
        if hidden_called and c is view.called and taker is not None and places & ~(1 << taker):
            places &= ~(1 << taker)  # a taker calls a card it does not hold, but to play alone
        allowed[c.index] = places
    return Constraints(
        me, n, tuple(frozenset(x.index for x in f) for f in fixed), tuple(room), allowed
    )


def _may_hold(
    c: Card, seat: int, voids: list[set[Suit]], ceiling: list[int], bare: set[int], fixed: set[Card]
) -> bool:
    if c.is_excuse:
        return True
    if c.is_trump:
        if Suit.TRUMPS in voids[seat] or c.rank > ceiling[seat]:
            return False
        return seat not in bare  # a poignée with the Excuse showed every trump of its hand
    return c.suit not in voids[seat]


def sample(cons: Constraints, own_hand: Sequence[int], rng: random.Random) -> Sample:
    """A random deal of the unseen cards that breaks none of ``cons``.

    ``own_hand`` is the seat's own hand (deck indices), copied into the sample.
    """
    n = cons.players
    cards = list(cons.allowed)
    rng.shuffle(cards)
    cards.sort(key=lambda c: bin(cons.allowed[c]).count("1"))  # the most constrained first
    room = list(cons.room)
    place_of: dict[int, int] = {}
    held: list[list[int]] = [[] for _ in range(n + 1)]
    for c in cards:
        places = [p for p in range(n + 1) if cons.allowed[c] >> p & 1]
        open_places = [p for p in places if room[p] > 0]
        if open_places:
            p = rng.choices(open_places, weights=[room[q] for q in open_places])[0]
            _put(c, p, place_of, held, room)
        elif not _augment(c, cons, place_of, held, room, set()):
            raise ValueError("no deal of the unseen cards fits the view")
    hands = [set(cons.fixed[p]) | set(held[p]) for p in range(n + 1)]
    hands[cons.seat] |= set(own_hand)
    return Sample(tuple(frozenset(h) for h in hands), n)


def _put(c: int, p: int, place_of: dict[int, int], held: list[list[int]], room: list[int]) -> None:
    place_of[c] = p
    held[p].append(c)
    room[p] -= 1


def _augment(
    c: int,
    cons: Constraints,
    place_of: dict[int, int],
    held: list[list[int]],
    room: list[int],
    seen: set[int],
) -> bool:
    """Place ``c`` by moving a card out of a full place it may go to (depth first)."""
    for p in range(cons.players + 1):
        if not cons.allowed[c] >> p & 1 or p in seen:
            continue
        seen.add(p)
        if room[p] > 0:
            _put(c, p, place_of, held, room)
            return True
        for other in list(held[p]):
            held[p].remove(other)
            room[p] += 1
            del place_of[other]
            if _augment(other, cons, place_of, held, room, seen):
                _put(c, p, place_of, held, room)
                return True
            _put(other, p, place_of, held, room)
    return False
