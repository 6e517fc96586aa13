"""The ranking of an event after each round: total points, then tie-breakers, each round's mark.

**What the FFT says.**  The official rules (``rules/fft_official_rules_french.txt``, « Le
classement en donnes libres »): « A l'issue du tournoi, chaque joueur obtient un nombre de
points par addition des points obtenus à chaque donne, ou par addition des bilans obtenus à
chaque position. L'arbitre établit ensuite le classement du tournoi en classant les joueurs par
nombre décroissant de points. »  The organiser's guide (``doc/fft_organisation_tournois.pdf``
of TarotClub, « Etablissement des résultats ») asks for the ranking of every position to be
shown so that each player can check their score.  **Neither says how to break a tie** in free
deals: the only tie rule of the documents is the duplicate one (« En cas d'égalité, on partage
les différentes notes entre les joueurs concernés », for the notes of one deal), and the
arbitration code (``rules/fft_code_arbitrage.txt``) has none.

**The rule chosen here**, deterministic and shown on the page:

1. the total, the sum of the player's rows (deal rows and penalty rows) over the rounds;
2. then the number of rounds won — rounds with a positive balance (the « solde » of each
   « rotation » on the FFT's personal sheet): the steadier player first;
3. then the best balance of one round;
4. players still equal share the place (« ex æquo », as the duplicate shares its notes), and
   are listed in place order (the event's seeded draw: neither registration order nor a name).

**Marks.**  Each round of each player carries a :class:`Mark`, shown next to its points: a
player who left or whose laptop died is *abandoned* (named gone in one of its table's rows: the
rows that follow score nothing, by the daemon's abandon rules); a round without a seat is
*absent* (0 points: the FFT documents have no rule for a missing player's score, and zero is the
balance of a player who neither won nor lost); a round whose rows the organiser declared lost
is *incomplete*.  Points of tables of 3, 4 and 5 are added as they are: the FFT's free
tournaments add the scores of their tables of 3 to the others' without a coefficient.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class RankingError(ValueError):
    """Results that cannot be ranked: a player unknown, a round given twice."""


class Mark(enum.Enum):
    """What a player's round was.  The value is what exports and the API show."""

    PLAYED = "played"
    ABANDONED = "abandoned"  #: left during the round: its table's rows name it gone
    ABSENT = "absent"  #: no seat this round
    INCOMPLETE = "incomplete"  #: rows of its table declared lost by the organiser


@dataclass(frozen=True)
class RoundResult:
    """One player's round: the sum of its rows at its table, and how the round went."""

    player: bytes
    round: int
    points: int
    mark: Mark
    table: int | None = None  #: the table it sat at (None: absent)
    penalties: int = 0  #: penalty rows it took this round


@dataclass(frozen=True)
class Standing:
    """One line of the ranking."""

    player: bytes
    place: int  #: from 1; players equal after every tie-breaker share it
    total: int
    rounds: tuple[RoundResult, ...]  #: round 1 first, one for every round ranked
    tied: bool = False  #: shares its place

    @property
    def won_rounds(self) -> int:
        return sum(1 for result in self.rounds if result.points > 0)

    @property
    def best_round(self) -> int:
        return max((result.points for result in self.rounds), default=0)

    @property
    def key(self) -> tuple[int, int, int]:
        """What orders the ranking (greater first): total, rounds won, best round."""
        return (self.total, self.won_rounds, self.best_round)


def rank(
    players: Sequence[bytes], results: Iterable[RoundResult], rounds: int
) -> tuple[Standing, ...]:
    """The ranking after ``rounds`` rounds.  ``players`` are every player of the event in place
    order (the order equal players are listed in); a round without a result for a player is an
    absence."""
    index = {player: i for i, player in enumerate(players)}
    if len(index) != len(players):
        raise RankingError("a player is listed twice")
    table: dict[tuple[bytes, int], RoundResult] = {}
    for result in results:
        if result.player not in index:
            raise RankingError(
                f"a result for a player who is not of the event (round {result.round})"
            )
        if not 1 <= result.round <= rounds:
            raise RankingError(f"a result for round {result.round}, outside 1..{rounds}")
        if (result.player, result.round) in table:
            raise RankingError(f"two results for one player in round {result.round}")
        table[result.player, result.round] = result
    lines = [
        _line(
            player,
            tuple(
                table.get((player, r), RoundResult(player, r, 0, Mark.ABSENT))
                for r in range(1, rounds + 1)
            ),
        )
        for player in players
    ]
    lines.sort(key=lambda line: (tuple(-k for k in line.key), index[line.player]))
    return _places(lines)


def _line(player: bytes, rounds: tuple[RoundResult, ...]) -> Standing:
    return Standing(player, 0, sum(result.points for result in rounds), rounds)


def _places(lines: Sequence[Standing]) -> tuple[Standing, ...]:
    """Number the sorted lines; equal keys share the place of the first of them."""
    placed: list[Standing] = []
    for position, line in enumerate(lines, start=1):
        previous = placed[-1] if placed else None
        same = previous is not None and previous.key == line.key
        place = previous.place if same and previous is not None else position
        tied = same or (position < len(lines) and lines[position].key == line.key)
        placed.append(Standing(line.player, place, line.total, line.rounds, tied))
    return tuple(placed)


def order(standings: Sequence[Standing]) -> tuple[bytes, ...]:
    """The players best first: what the best-against-best movement seats by."""
    return tuple(standing.player for standing in standings)
