"""The ranking: totals, the tie-breakers chosen where the FFT is silent, shared places, marks."""

from __future__ import annotations

import pytest

from protocol.event.ranking import Mark, RankingError, RoundResult, order, rank

A, B, C, D = (bytes([i]) * 32 for i in range(1, 5))


def played(player: bytes, round_: int, points: int) -> RoundResult:
    return RoundResult(player, round_, points, Mark.PLAYED, table=1)


def test_the_ranking_is_by_total_points() -> None:
    results = [played(A, 1, -50), played(B, 1, 150), played(C, 1, 0), played(D, 1, -100)]
    standings = rank([A, B, C, D], results, 1)
    assert order(standings) == (B, C, A, D)
    assert [s.place for s in standings] == [1, 2, 3, 4]
    assert [s.total for s in standings] == [150, 0, -50, -100]
    assert not any(s.tied for s in standings)


def test_equal_totals_go_to_the_player_with_more_rounds_won() -> None:
    """A: +100 then 0 (one round won); B: +60 then +40 (two): B first."""
    results = [played(A, 1, 100), played(A, 2, 0), played(B, 1, 60), played(B, 2, 40)]
    standings = rank([A, B], results, 2)
    assert order(standings) == (B, A) and [s.place for s in standings] == [1, 2]
    assert standings[0].won_rounds == 2 and standings[1].won_rounds == 1


def test_then_to_the_best_round() -> None:
    """Both +50 over two rounds won: A's best round is 40, B's 30."""
    results = [played(A, 1, 10), played(A, 2, 40), played(B, 1, 20), played(B, 2, 30)]
    assert order(rank([B, A], results, 2)) == (A, B)


def test_players_equal_after_every_tie_breaker_share_the_place() -> None:
    results = [played(A, 1, 20), played(B, 1, 20), played(C, 1, -40)]
    standings = rank([B, A, C], results, 1)
    assert order(standings) == (B, A, C)  # listed in place order
    assert [(s.place, s.tied) for s in standings] == [(1, True), (1, True), (3, False)]


def test_a_round_without_a_result_is_an_absence() -> None:
    standings = rank([A, B], [played(A, 1, 10), played(A, 2, 10), played(B, 1, 30)], 2)
    b = next(s for s in standings if s.player == B)
    assert b.rounds[1].mark is Mark.ABSENT and b.rounds[1].points == 0 and b.total == 30


def test_marks_are_kept() -> None:
    gone = RoundResult(A, 1, -20, Mark.ABANDONED, table=2, penalties=1)
    standings = rank([A], [gone], 1)
    assert standings[0].rounds == (gone,)


@pytest.mark.parametrize(
    ("players", "results", "rounds"),
    [
        ([A], [played(B, 1, 0)], 1),  # not of the event
        ([A], [played(A, 2, 0)], 1),  # past the rounds ranked
        ([A], [played(A, 1, 0), played(A, 1, 5)], 1),  # twice
        ([A, A], [], 1),
    ],
)
def test_results_that_cannot_be_ranked_are_refused(
    players: list[bytes], results: list[RoundResult], rounds: int
) -> None:
    with pytest.raises(RankingError):
        rank(players, results, rounds)
