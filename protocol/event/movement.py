"""Seating a round of an event: which players sit at which table, by which movement.

Every daemon of an event computes the plan of each round from the same inputs — the places
of the round (who holds each), the plans before it, the standings, the table size the
organiser prefers and a seed derived from the event's id — and must get the same plan, so
nothing here depends on Python's hash order, a clock or an unseeded random: the one source
of chance is :class:`Draw`, a SHA-256 counter stream over the seed.

**Places.**  A player holds a *place* for the whole event, as at an FFT tournament a player
keeps the number on their personal sheet: place *i* of round 1 is the *i*-th player of
:func:`draw` (the registered players sorted by a hash of the seed and their key, so neither
the order of registration nor the organiser chose it).  A substitute (a person or a bot)
takes over the place of the player it replaces and moves as that player would have; a place
left empty is skipped.

**Table sizes** (:func:`table_sizes`): tables of 4 or 5 as the organiser prefers, tables of
3 only when the count forces it (6, 7 and 11 players, or 3): 13 players sit 5, 4, 4 and 16
sit 4 × 4.  Larger tables come first, so table 1 is the table of 5.

**Movements** (:class:`Movement`).  Source: the FFT's *Manuel de l'organisateur de tournois*
(version du 1er juillet 2011, file ``doc/fft_organisation_tournois.pdf`` of the TarotClub
repository, ``belegar/tarotclub``), chapter « Tournoi en donnes libres », section « Mouvements
des joueurs » (pages 12–14): « Il a plusieurs possibilités de mise en place : Mise en place
aléatoire, Mise en place faisant jouer les meilleurs scores avec les meilleurs, suivant le
classement à l'issue des positions précédentes, Mouvement FFT. Un panachage de ces mises en
place est possible mais le mouvement FFT ne peut être repris si une mise en place aléatoire
ou meilleur/meilleur a été utilisée. » and « Le mouvement FFT permet à chaque joueur de ne
rencontrer qu'une seule fois un adversaire au cours du tournoi. »  A round is a *position*.

* :attr:`Movement.FFT` follows that section to the letter where it applies — every table of
  four, the field the same as in round 1, and every round before it FFT too:

  - « Mouvement Howell FFT : 3 et 4 tables » (page 12–13): the two tables of that page,
    copied in :data:`HOWELL` — 12 players numbered 1 to 12 over 6 positions, 16 players over
    5 positions; the number is the place, plus one.  (At 16 players nobody meets anybody
    twice in 5 positions; at 12 the FFT's own table seats some pairs together again from the
    2nd position: that is its table, not ours.)
  - « Mouvement normal FFT : 5 tables et plus » (page 13): « NORD reste fixe, SUD monte
    d'une table (+1), EST monte de deux tables (+2), OUEST descend de deux tables (−2) »,
    « dans la limite de 7 positions jouées », and the special tables of page 14 for 6, 8, 9,
    10, 12, 14, 15, 16, 18 and 20 tables (:data:`SPECIAL_STEPS`: the base steps of that count
    and, for some positions, the step that replaces the base one when going *to* that
    position).  Place *p* starts at table ``p mod T`` in orientation ``p div T`` (the Norths
    are places 0 … T−1, as the guide numbers its finalists).  Where those steps bring two
    players together a second time before the 7th position (5 tables: the 6th position is
    the 1st again; 10 and 24 tables: the 7th), the movement stops at the last position before
    that, since meeting each opponent once is what the FFT says it is for
    (:func:`fft_positions`).
  - One table: the movement of nobody.  Two tables (8 players) have no FFT movement.

  Where the FFT movement does not apply (a count that is not a multiple of 4 — the FFT would
  seat tables of 3 there, « supprimer le NORD de la table la plus élevée », page 6, which the
  event avoids by seating tables of 5 — a field changed by a withdrawal, or a round past the
  movement's last position) the round is seated by the random movement, and so is every round
  after it: « le mouvement FFT ne peut être repris ».  The plan says which movement it used.
  Seats of an FFT table are in the order of play, counter-clockwise: Nord, Ouest, Sud, Est.
* :attr:`Movement.RANDOM` — « mise en place aléatoire »: the guide leaves how to the software
  (Extar Libre); here a seeded shuffle improved by swaps (:func:`_mix`) that minimises, in
  equal weights, the meetings players had before (a pair that met *m* times costs *m*², so
  repeats spread rather than pile up on one pair) and the times a player sat at a table of
  the non-preferred size — four times that for a table of 3 (the guide, page 6: « veillez …
  à ce qu'un joueur ne repasse une nouvelle fois à une table à 3 joueurs »).
* :attr:`Movement.BEST` — « faisant jouer les meilleurs scores avec les meilleurs, suivant le
  classement à l'issue des positions précédentes »: the standings are cut into tables, best
  first, Swiss-like: each seat takes the best-ranked player left who has met nobody at the
  table yet, looking no further than twice the table's size down the list (else the best
  left), so the top table holds top players and as few rematches as that allows.  Round 1
  has no standings and is drawn at random, as the guide's first position is.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

from protocol.refusal import Refusal, Refused

DRAW_DOMAIN: Final = b"tarot/v2/event-draw\x00"
MAX_TABLES: Final = 200  #: the guide's movement goes « jusqu'à 200 TABLES »
FFT_MAX_POSITIONS: Final = 7  #: « dans la limite de 7 positions jouées »
TABLE_SIZES: Final = (4, 5)  #: what an organiser may prefer


class MovementError(Refused):
    """A round that cannot be seated: too few players, an unknown table size."""


class Movement(enum.Enum):
    """How players change tables between rounds.  The value is what the event signs."""

    FFT = "fft"
    RANDOM = "random"
    BEST = "best-against-best"


class Orientation(enum.Enum):
    """The FFT's orientations, in the order of play at a table (counter-clockwise)."""

    NORD = "N"
    OUEST = "O"
    SUD = "S"
    EST = "E"


#: The FFT's Howell movements (guide, page 12–13): per position, per table, the players'
#: numbers in the order Nord, Sud, Est, Ouest as the guide prints them.
HOWELL: Final[Mapping[int, tuple[tuple[tuple[int, int, int, int], ...], ...]]] = {
    3: (
        ((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12)),
        ((1, 2, 7, 12), (5, 6, 11, 3), (9, 10, 4, 8)),
        ((1, 8, 7, 10), (5, 2, 11, 12), (9, 3, 4, 6)),
        ((1, 8, 6, 11), (5, 2, 4, 10), (9, 3, 12, 7)),
        ((1, 9, 5, 3), (7, 11, 4, 10), (2, 6, 12, 8)),
        ((1, 9, 7, 2), (5, 11, 4, 12), (10, 6, 3, 8)),
    ),
    4: (
        ((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16)),
        ((1, 8, 10, 15), (16, 9, 7, 2), (6, 3, 13, 12), (11, 14, 4, 5)),
        ((1, 7, 12, 14), (15, 9, 6, 4), (8, 2, 13, 11), (10, 16, 3, 5)),
        ((1, 6, 11, 16), (14, 9, 8, 3), (7, 4, 13, 10), (12, 15, 2, 5)),
        ((1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15), (4, 8, 12, 16)),
    ),
}

_BASE_STEPS: Final = {
    Orientation.NORD: 0,
    Orientation.SUD: 1,
    Orientation.EST: 2,
    Orientation.OUEST: -2,
}
_N, _S, _E, _O = Orientation.NORD, Orientation.SUD, Orientation.EST, Orientation.OUEST

#: The guide's special movements (page 14): per number of tables, the steps that differ from
#: the base ones, the steps that replace them going to given positions, and the most positions
#: it allows (6 tables: « 5 positions maximum », 8 tables: « 6 positions maximum »).
SPECIAL_STEPS: Final[
    Mapping[int, tuple[Mapping[Orientation, int], Mapping[int, Mapping[Orientation, int]], int]]
] = {
    6: ({_O: -1}, {3: {_E: 3}, 4: {_O: -2}}, 5),
    8: ({_O: -1}, {5: {_S: 2, _E: 3}, 6: {_E: 4}}, 6),
    9: ({}, {4: {_E: 3, _O: -3}, 5: {_E: 3, _O: -3}}, FFT_MAX_POSITIONS),
    10: ({_O: -1}, {6: {_E: 3, _O: -2}}, FFT_MAX_POSITIONS),
    12: ({}, {4: {_O: -3}, 7: {_E: 3}}, FFT_MAX_POSITIONS),
    14: ({}, {5: {_O: -3}}, FFT_MAX_POSITIONS),
    15: ({}, {5: {_O: -3}}, FFT_MAX_POSITIONS),
    16: ({}, {5: {_O: -3}, 6: {_O: -3}}, FFT_MAX_POSITIONS),
    18: ({}, {6: {_O: -3}}, FFT_MAX_POSITIONS),
    20: ({}, {6: {_O: -3}}, FFT_MAX_POSITIONS),
}

_GUIDE_ORDER: Final = (_N, _S, _E, _O)  #: the columns of the guide's tables
_PLAY_ORDER: Final = tuple(Orientation)  #: the seats of a table


@dataclass(frozen=True)
class RoundPlan:
    """The seating of one round: per table (table 1 first), its players' keys in seat order."""

    round: int
    movement: Movement  #: the movement that seated it (FFT may have given way to random)
    tables: tuple[tuple[bytes, ...], ...]

    def table_of(self, player: bytes) -> int | None:
        """The table number (from 1) where ``player`` sits this round, or None."""
        for number, table in enumerate(self.tables, start=1):
            if player in table:
                return number
        return None

    @property
    def players(self) -> tuple[bytes, ...]:
        return tuple(itertools.chain.from_iterable(self.tables))


class Draw:
    """Uniform choices from a seed: SHA-256 of (domain, seed, counter), 8 bytes at a time,
    with rejection so that no choice leans.  Any implementation gets the same numbers."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0

    def below(self, bound: int) -> int:
        """A number in ``0 .. bound - 1``."""
        if bound < 1:
            raise ValueError("a draw needs at least one choice")
        limit = 2**64 - 2**64 % bound
        while True:
            block = hashlib.sha256(
                DRAW_DOMAIN + self._seed + self._counter.to_bytes(8, "big")
            ).digest()
            self._counter += 1
            value = int.from_bytes(block[:8], "big")
            if value < limit:
                return value % bound

    def shuffled(self, items: Sequence[bytes]) -> list[bytes]:
        """Fisher–Yates, from the last item down."""
        result = list(items)
        for i in range(len(result) - 1, 0, -1):
            j = self.below(i + 1)
            result[i], result[j] = result[j], result[i]
        return result


def round_seed(seed: bytes, round_: int) -> bytes:
    """The seed of one round's draw, from the event's."""
    return hashlib.sha256(DRAW_DOMAIN + seed + round_.to_bytes(4, "big")).digest()


def draw(players: Iterable[bytes], seed: bytes) -> tuple[bytes, ...]:
    """The places of round 1: the players sorted by SHA-256 of the seed and their key — the
    same whatever order they registered in."""
    return tuple(sorted(players, key=lambda key: hashlib.sha256(DRAW_DOMAIN + seed + key).digest()))


def table_sizes(players: int, preference: int) -> tuple[int, ...]:
    """Tables of ``preference`` (4 or 5) and of the other size, as few of the other as can be;
    tables of 3 only where 4 and 5 cannot make the count (3, 6, 7, 11 players)."""
    if preference not in TABLE_SIZES:
        raise MovementError(
            f"a table size preference is 4 or 5, not {preference!r}", Refusal.EVENT_TABLE_SIZE
        )
    if players < 3:
        raise MovementError(
            f"a round needs at least 3 players, not {players}",
            Refusal.EVENT_TOO_FEW_PLAYERS,
            players=players,
        )
    if players > 5 * MAX_TABLES:
        raise MovementError(
            f"{players} players is over the {MAX_TABLES} tables an event seats",
            Refusal.EVENT_TOO_MANY_PLAYERS,
            players=players,
            tables=MAX_TABLES,
        )
    other = 9 - preference
    for odd in range(players // other + 1):
        rest = players - odd * other
        if rest % preference == 0:
            return tuple(sorted([other] * odd + [preference] * (rest // preference), reverse=True))
    threes = {6: 2, 7: 1, 11: 1, 3: 1}[players]
    rest = players - 3 * threes
    return (4,) * (rest // 4) + (3,) * threes


@cache
def fft_positions(tables: int) -> int:
    """How many positions the FFT movement seats ``tables`` tables of four for (0: none)."""
    if tables == 1:
        return 2**31  # one table: nobody moves, ever
    if tables in HOWELL:
        return len(HOWELL[tables])
    if not 5 <= tables <= MAX_TABLES:
        return 0
    limit = SPECIAL_STEPS[tables][2] if tables in SPECIAL_STEPS else FFT_MAX_POSITIONS
    met: set[tuple[int, int]] = set()
    for position in range(1, limit + 1):
        for table in _fft_numbers(tables, position):
            pairs = set(itertools.combinations(sorted(table), 2))
            if pairs & met:
                return position - 1
            met |= pairs
    return limit


def _fft_numbers(tables: int, position: int) -> tuple[tuple[int, ...], ...]:
    """The places at each table at ``position`` (from 1), in the order of play."""
    if tables == 1:
        return ((0, 1, 2, 3),)
    if tables in HOWELL:
        rows = HOWELL[tables][position - 1]
        return tuple(tuple(row[_GUIDE_ORDER.index(o)] - 1 for o in _PLAY_ORDER) for row in rows)
    base, exceptions, _ = SPECIAL_STEPS.get(tables, ({}, {}, 0))
    offset = dict.fromkeys(Orientation, 0)
    for step_to in range(2, position + 1):
        for orientation in Orientation:
            default = base.get(orientation, _BASE_STEPS[orientation])
            offset[orientation] += exceptions.get(step_to, {}).get(orientation, default)
    seated: list[list[int]] = [[] for _ in range(tables)]
    for orientation in _PLAY_ORDER:
        row = _GUIDE_ORDER.index(orientation)
        for start in range(tables):
            seated[(start + offset[orientation]) % tables].append(row * tables + start)
    return tuple(tuple(table) for table in seated)


def plan_round(
    places: Sequence[bytes | None],
    round_: int,
    history: Sequence[RoundPlan],
    preference: int,
    movement: Movement,
    seed: bytes,
    standings: Sequence[bytes] = (),
) -> RoundPlan:
    """The plan of round ``round_`` (from 1).  ``places`` are the holders of the places this
    round (None: a place left empty), ``history`` the plans of the rounds before, in order,
    ``standings`` the players best first after them (for :attr:`Movement.BEST`)."""
    if round_ != len(history) + 1:
        raise MovementError(
            f"round {round_} is planned after {len(history)} rounds, not {round_ - 1}"
        )
    seated = [key for key in places if key is not None]
    if len(set(seated)) != len(seated):
        raise MovementError("a player holds two places")
    sizes = table_sizes(len(seated), preference)
    if movement is Movement.FFT and _fft_applies(places, round_, history, sizes):
        numbers = _fft_numbers(len(places) // 4, round_)
        tables = tuple(tuple(_held(places[p]) for p in table) for table in numbers)
        return RoundPlan(round_, Movement.FFT, tables)
    met, odd = _meetings(history), _odd_seats(history, preference)
    if movement is Movement.BEST and history:
        order = _standings_order(seated, standings)
        return RoundPlan(round_, Movement.BEST, _best_against_best(order, sizes, met))
    return RoundPlan(
        round_, Movement.RANDOM, _mix(seated, sizes, met, odd, preference, round_seed(seed, round_))
    )


def _held(key: bytes | None) -> bytes:
    assert key is not None  # the FFT movement seats only full fields
    return key


def _fft_applies(
    places: Sequence[bytes | None], round_: int, history: Sequence[RoundPlan], sizes: Sequence[int]
) -> bool:
    """Every place held, a field seated at tables of four (as the organiser prefers: 20 players
    at a preference of 5 sit at four tables of 5) that the FFT moves this far, the same count
    as before and no round before seated otherwise (the FFT movement cannot be taken up again)."""
    count = len(places)
    if None in places or count % 4 or round_ > fft_positions(count // 4) or set(sizes) != {4}:
        return False
    return all(plan.movement is Movement.FFT and len(plan.players) == count for plan in history)


def _meetings(history: Sequence[RoundPlan]) -> Counter[tuple[bytes, bytes]]:
    """How many times each pair of players (the smaller key first) sat at one table."""
    met: Counter[tuple[bytes, bytes]] = Counter()
    for plan in history:
        for table in plan.tables:
            met.update(itertools.combinations(sorted(table), 2))
    return met


def _odd_seats(history: Sequence[RoundPlan], preference: int) -> Counter[bytes]:
    """How many times each player sat at a table that was not of the preferred size."""
    odd: Counter[bytes] = Counter()
    for plan in history:
        for table in plan.tables:
            if len(table) != preference:
                odd.update(table)
    return odd


MEETING_WEIGHT: Final = 4  #: the cost of a pair that met once before (m times: m² times this)
ODD_WEIGHT: Final = 4  #: the cost of each time a player sat at a table of the other size before
#: … times this for a table of 3 (« qu'un joueur ne repasse … à une table à 3 »)
THREE_FACTOR: Final = 4
MAX_PASSES: Final = 12  #: swap passes of :func:`_mix` (it stops before when no swap helps)
RESTARTS: Final = 10  #: seeded shuffles :func:`_mix` starts from; the best one is kept


def _mix(
    players: Sequence[bytes],
    sizes: Sequence[int],
    met: Counter[tuple[bytes, bytes]],
    odd: Counter[bytes],
    preference: int,
    seed: bytes,
) -> tuple[tuple[bytes, ...], ...]:
    """The random movement: from each of :data:`RESTARTS` seeded shuffles, swap two players of
    different tables while that lowers the cost; keep the cheapest (the first on a tie)."""
    ordered = sorted(players)  # the input order must not matter, only the seed
    index = {key: i for i, key in enumerate(ordered)}
    pair_cost = [[MEETING_WEIGHT * met[_pair(a, b)] ** 2 for b in ordered] for a in ordered]
    seat_cost = {
        size: [_odd_cost(odd[key], size, preference) for key in ordered] for size in set(sizes)
    }
    rng = Draw(seed)
    best: tuple[int, list[list[int]]] | None = None
    for _ in range(RESTARTS):
        tables = _cut([index[key] for key in rng.shuffled(ordered)], sizes)
        cost = _improve(tables, pair_cost, seat_cost)
        if best is None or cost < best[0]:
            best = (cost, tables)
        if cost == 0:
            break
    assert best is not None
    return tuple(tuple(ordered[i] for i in table) for table in best[1])


def _odd_cost(times: int, size: int, preference: int) -> int:
    """What seating a player at a table of ``size`` costs, who sat ``times`` at tables of the
    non-preferred size before."""
    if size == preference:
        return 0
    return ODD_WEIGHT * times * (THREE_FACTOR if size == 3 else 1)


def _cut(order: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    tables, start = [], 0
    for size in sizes:
        tables.append(list(order[start : start + size]))
        start += size
    return tables


def _improve(
    tables: list[list[int]],
    pair_cost: Sequence[Sequence[int]],
    seat_cost: Mapping[int, Sequence[int]],
) -> int:
    """Swap players between tables, in a fixed order, while a swap lowers the cost; returns it."""

    def cost(player: int, table: list[int], instead_of: int) -> int:
        row = pair_cost[player]
        return (
            sum(row[other] for other in table if other != instead_of)
            + seat_cost[len(table)][player]
        )

    seats = [(t, s) for t, table in enumerate(tables) for s in range(len(table))]
    for _ in range(MAX_PASSES):
        swapped = False
        for (ta, sa), (tb, sb) in itertools.combinations(seats, 2):
            if ta == tb:
                continue
            a, b = tables[ta][sa], tables[tb][sb]
            before = cost(a, tables[ta], a) + cost(b, tables[tb], b)
            if cost(b, tables[ta], a) + cost(a, tables[tb], b) < before:
                tables[ta][sa], tables[tb][sb] = b, a
                swapped = True
        if not swapped:
            break
    return sum(cost(p, table, p) for table in tables for p in table)


def _pair(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    return (a, b) if a < b else (b, a)


def _standings_order(seated: Sequence[bytes], standings: Sequence[bytes]) -> list[bytes]:
    """The seated players best first; those the standings do not know (a substitute's first
    round) after them, in place order."""
    present = set(seated)
    ranked = [key for key in standings if key in present]
    known = set(ranked)
    return ranked + [key for key in seated if key not in known]


def _best_against_best(
    order: Sequence[bytes], sizes: Sequence[int], met: Counter[tuple[bytes, bytes]]
) -> tuple[tuple[bytes, ...], ...]:
    """Fill the tables best first; each seat takes the best-ranked player left, within twice
    the table's size down the list, who has met nobody at the table yet (else the best left)."""
    left = list(order)
    tables = []
    for size in sizes:
        table = [left.pop(0)]
        while len(table) < size:
            window = left[: 2 * size]
            fresh = next((p for p in window if not any(met[_pair(p, q)] for q in table)), window[0])
            left.remove(fresh)
            table.append(fresh)
        tables.append(tuple(table))
    return tuple(tables)
