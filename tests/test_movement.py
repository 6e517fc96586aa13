"""Seating a round: table sizes, the FFT's movements as the organiser's guide prints them, the
random and best-against-best movements, and that every daemon computes the same plan."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter

import pytest

from protocol.event.movement import (
    HOWELL,
    Draw,
    Movement,
    MovementError,
    RoundPlan,
    draw,
    fft_positions,
    plan_round,
    table_sizes,
)

SEED = hashlib.sha256(b"an event").digest()


def keys(count: int, salt: bytes = b"") -> list[bytes]:
    return [hashlib.sha256(salt + b"player %d" % i).digest() for i in range(count)]


def plans(
    places: list[bytes], rounds: int, movement: Movement, preference: int = 4, seed: bytes = SEED
) -> list[RoundPlan]:
    history: list[RoundPlan] = []
    for round_ in range(1, rounds + 1):
        standings = sorted(
            places, key=lambda key: hashlib.sha256(b"rank %d" % round_ + key).digest()
        )
        history.append(plan_round(places, round_, history, preference, movement, seed, standings))
    return history


def meetings(history: list[RoundPlan]) -> Counter[tuple[bytes, bytes]]:
    met: Counter[tuple[bytes, bytes]] = Counter()
    for plan in history:
        for table in plan.tables:
            met.update(itertools.combinations(sorted(table), 2))
    return met


def seat_of(plan: RoundPlan, player: bytes) -> tuple[int, str]:
    """The table and the orientation of ``player``: seats are in the order of play N, O, S, E."""
    table = plan.table_of(player)
    assert table is not None
    return table, "NOSE"[plan.tables[table - 1].index(player)]


# --------------------------------------------------------------------------- table sizes


@pytest.mark.parametrize(
    ("players", "preference", "sizes"),
    [
        (16, 4, (4, 4, 4, 4)),
        (16, 5, (4, 4, 4, 4)),
        (13, 4, (5, 4, 4)),
        (13, 5, (5, 4, 4)),
        (20, 5, (5, 5, 5, 5)),
        (20, 4, (4, 4, 4, 4, 4)),
        (14, 4, (5, 5, 4)),
        (9, 4, (5, 4)),
        (11, 4, (4, 4, 3)),
        (7, 5, (4, 3)),
        (6, 4, (3, 3)),
        (3, 4, (3,)),
        (5, 4, (5,)),
    ],
)
def test_table_sizes(players: int, preference: int, sizes: tuple[int, ...]) -> None:
    assert table_sizes(players, preference) == sizes


def test_tables_of_three_only_where_the_count_forces_them() -> None:
    for players in range(3, 200):
        for preference in (4, 5):
            sizes = table_sizes(players, preference)
            assert sum(sizes) == players and list(sizes) == sorted(sizes, reverse=True)
            assert (3 in sizes) == (players in (3, 6, 7, 11))
            other = 9 - preference
            # As few tables of the other size as can be: one fewer would not make the count.
            fewer = sizes.count(other) - 1
            assert fewer < 0 or (players - fewer * other) % preference or 3 in sizes


@pytest.mark.parametrize(("players", "preference"), [(2, 4), (16, 3), (16, 6)])
def test_impossible_sizes_are_refused(players: int, preference: int) -> None:
    with pytest.raises(MovementError):
        table_sizes(players, preference)


# --------------------------------------------------------------------------- FFT movements


def test_the_fft_howell_at_four_tables_seats_everybody_against_everybody_once() -> None:
    """16 players, 5 positions: each meets 3 new players a position, 15 in all: everyone."""
    places = keys(16)
    history = plans(places, 5, Movement.FFT)
    assert all(plan.movement is Movement.FFT for plan in history)
    met = meetings(history)
    assert len(met) == 16 * 15 // 2 and set(met.values()) == {1}


def test_the_howell_tables_are_the_guides() -> None:
    """Player 7's personal sheet as the guide prints it (page 13): tables 2, 2, 1, 3, 3 in
    orientations Est, Est, Sud, Nord, Sud; and at 3 tables (page 12): 2 E, 1 E, 1 E, 3 O, 2 N,
    1 E."""
    places = keys(16)
    sheet = [seat_of(plan, places[6]) for plan in plans(places, 5, Movement.FFT)]
    assert sheet == [(2, "E"), (2, "E"), (1, "S"), (3, "N"), (3, "S")]
    places12 = keys(12)
    sheet12 = [seat_of(plan, places12[6]) for plan in plans(places12, 6, Movement.FFT)]
    assert sheet12 == [(2, "E"), (1, "E"), (1, "E"), (3, "O"), (2, "N"), (1, "E")]
    for positions in HOWELL.values():
        for rows in positions:
            numbers = sorted(itertools.chain.from_iterable(rows))
            assert numbers == list(range(1, len(numbers) + 1))


def test_the_normal_fft_movement_keeps_north_and_moves_the_others() -> None:
    """7 tables: Nord stays, Sud +1, Est +2, Ouest −2 at each position."""
    places = keys(28)
    first, second = plans(places, 2, Movement.FFT)
    for table, members in enumerate(first.tables):
        north, west, south, east = members
        assert second.table_of(north) == table + 1
        assert second.table_of(south) == (table + 1) % 7 + 1
        assert second.table_of(east) == (table + 2) % 7 + 1
        assert second.table_of(west) == (table - 2) % 7 + 1


@pytest.mark.parametrize("tables", range(5, 41))
def test_the_fft_movement_never_seats_a_pair_twice_while_it_applies(tables: int) -> None:
    places = keys(4 * tables)
    positions = fft_positions(tables)
    assert 5 <= positions <= 7
    history = plans(places, positions, Movement.FFT)
    assert all(plan.movement is Movement.FFT for plan in history)
    assert set(meetings(history).values()) == {1}


def test_the_fft_positions_follow_the_guides_limits() -> None:
    assert fft_positions(6) == 5 and fft_positions(8) == 6  # « 5 / 6 positions maximum »
    assert fft_positions(7) == 7 and fft_positions(11) == 7
    assert fft_positions(5) == 5  # the 6th position would be the 1st again
    assert fft_positions(10) == 6 and fft_positions(24) == 6
    assert fft_positions(2) == 0


def test_fft_gives_way_to_random_past_its_last_position_and_is_not_taken_up_again() -> None:
    places = keys(20)  # 5 tables: 5 positions
    history = plans(places, 6, Movement.FFT)
    assert [plan.movement for plan in history] == [Movement.FFT] * 5 + [Movement.RANDOM]


def test_fft_does_not_apply_where_tables_are_not_all_of_four() -> None:
    history = plans(keys(13), 3, Movement.FFT)
    assert {plan.movement for plan in history} == {Movement.RANDOM}
    assert [len(t) for t in history[0].tables] == [5, 4, 4]
    at_five = plans(keys(20), 1, Movement.FFT, preference=5)[0]  # four tables of 5
    assert at_five.movement is Movement.RANDOM and [len(t) for t in at_five.tables] == [5] * 4


def test_a_withdrawal_ends_the_fft_movement_for_good() -> None:
    places: list[bytes | None] = list(keys(16))
    first = plan_round(places, 1, [], 4, Movement.FFT, SEED)
    places[3] = None
    second = plan_round(places, 2, [first], 4, Movement.FFT, SEED)
    assert second.movement is Movement.RANDOM and len(second.players) == 15
    places[3] = hashlib.sha256(b"a substitute").digest()
    third = plan_round(places, 3, [first, second], 4, Movement.FFT, SEED)
    assert third.movement is Movement.RANDOM


def test_a_substitute_moves_as_the_player_it_replaces() -> None:
    places = keys(16)
    history = plans(places, 2, Movement.FFT)
    substitute = hashlib.sha256(b"a bot").digest()
    replaced = [*places[:5], substitute, *places[6:]]
    third = plan_round(replaced, 3, history, 4, Movement.FFT, SEED)
    expected = plan_round(places, 3, history, 4, Movement.FFT, SEED)
    assert third.movement is Movement.FFT
    assert third.table_of(substitute) == expected.table_of(places[5])


# --------------------------------------------------------------------------- every movement


@pytest.mark.heavy
@pytest.mark.parametrize("movement", list(Movement))
def test_every_player_is_seated_exactly_once_per_round_at_legal_tables(movement: Movement) -> None:
    for players in range(8, 41):
        places = keys(players)
        for preference in (4, 5):
            for plan in plans(places, 3, movement, preference):
                assert sorted(plan.players) == sorted(places)
                assert tuple(len(t) for t in plan.tables) == table_sizes(players, preference)


@pytest.mark.parametrize("movement", list(Movement))
def test_every_daemon_computes_the_same_plan(movement: Movement) -> None:
    places = keys(23)
    assert plans(places, 4, movement) == plans(list(places), 4, movement)
    assert plans(places, 4, movement) != plans(
        places, 4, movement, seed=hashlib.sha256(b"other").digest()
    )


def test_the_draw_ignores_the_order_of_registration() -> None:
    players = keys(13)
    assert draw(players, SEED) == draw(list(reversed(players)), SEED)
    assert draw(players, SEED) != draw(players, hashlib.sha256(b"other").digest())
    assert sorted(draw(players, SEED)) == sorted(players)


def test_the_random_movement_does_not_depend_on_the_order_of_places() -> None:
    """Only the seed decides (places matter to the FFT movement alone)."""
    places = keys(18)
    assert plans(places, 3, Movement.RANDOM) == plans(sorted(places), 3, Movement.RANDOM)


def test_the_seeded_draw_is_uniform_enough() -> None:
    rng = Draw(SEED)
    counts = Counter(rng.below(6) for _ in range(6000))
    assert set(counts) == set(range(6)) and all(800 < c < 1200 for c in counts.values())


@pytest.mark.heavy
def test_the_random_movement_keeps_repeat_meetings_low() -> None:
    """Measured bounds, for every count from 8 to 40 (two seeds each): from 20 players up,
    three rounds seat nobody with the same player twice; from 11 up, no pair meets three
    times in four rounds.  (Two tables, 8 to 10 players, cannot do as well: at 9 even the best
    split of each round for the cost leaves one pair together in all four.)"""
    for players in range(8, 41):
        for salt in (b"a", b"b"):
            seed = hashlib.sha256(salt).digest()
            history = plans(keys(players, salt), 4, Movement.RANDOM, seed=seed)
            if players >= 20:
                assert max(meetings(history[:3]).values()) == 1, players
            limit = 2 if players >= 11 else 4
            assert max(meetings(history).values()) <= limit, players


def test_the_random_movement_spreads_tables_of_three() -> None:
    """11 players sit 4, 4, 3: over three rounds, nobody sits at the table of 3 twice."""
    history = plans(keys(11), 3, Movement.RANDOM)
    threes = Counter(key for plan in history for key in plan.tables[-1])
    assert len(history[0].tables[-1]) == 3 and max(threes.values()) == 1


def test_best_against_best_seats_the_leaders_together() -> None:
    places = keys(16)
    first = plan_round(places, 1, [], 4, Movement.BEST, SEED)
    assert first.movement is Movement.RANDOM  # round 1 has no standings: drawn
    standings = sorted(places, key=lambda key: hashlib.sha256(b"score" + key).digest())
    second = plan_round(places, 2, [first], 4, Movement.BEST, SEED, standings)
    assert second.movement is Movement.BEST
    top = second.tables[0]
    assert top[0] == standings[0] and {standings.index(p) for p in top} <= set(range(8))
    # Swiss-like: fewer rematches than cutting the standings as they are.
    plain = [standings[i : i + 4] for i in range(0, 16, 4)]
    rematches = meetings([first, second])
    cut = meetings([first, RoundPlan(2, Movement.BEST, tuple(tuple(t) for t in plain))])
    assert sum(v - 1 for v in rematches.values()) < sum(v - 1 for v in cut.values())


def test_best_against_best_puts_a_substitute_after_the_ranked() -> None:
    places = keys(16)
    first = plan_round(places, 1, [], 4, Movement.BEST, SEED)
    substitute = hashlib.sha256(b"late").digest()
    second = plan_round([*places[:15], substitute], 2, [first], 4, Movement.BEST, SEED, places[:15])
    assert second.table_of(substitute) in (3, 4) and second.tables[0][0] == places[0]


def test_a_round_is_planned_after_the_ones_before() -> None:
    with pytest.raises(MovementError):
        plan_round(keys(8), 2, [], 4, Movement.RANDOM, SEED)
    with pytest.raises(MovementError):
        plan_round([*keys(7), keys(1)[0]], 1, [], 4, Movement.RANDOM, SEED)
