"""The FFT score of one deal, and the running score sheet of a table.

Everything here is integer arithmetic on **half points** (see :mod:`protocol.rules.cards`): the FFT
counts card points to the half point and gives the odd half to the winning camp, and Python's
``round`` rounds halves to even, so a float anywhere would eventually score a deal wrong.

The score of a deal is one number, the *unit* ``u``, seen from the attack's side
(FFT "Règlement officiel", *Le calcul des scores* and *La marque en donnes libres*)::

    u = s·(25 + d)·m + p·10·m + s·P + C

* ``s`` = +1 if the attack made its contract ("juste fait" wins), −1 if not;
* ``d`` the difference between the points made and the points to make, after the half point
  went to the winning camp;
* ``m`` the contract's multiplier (Petite 1, Garde 2, Garde Sans 4, Garde Contre 6);
* ``p`` = +1 / −1 / 0 as the attack / the defence / nobody won the Petit au bout — the bonus
  goes to the camp that took it *whatever the result of the deal*, and it is multiplied;
* ``P`` the poignées shown by anyone (20 / 30 / 40) — never multiplied, and won by the deal's
  winner whoever showed them;
* ``C`` the chelem: +400 announced and made, +200 made unannounced, −200 announced and failed,
  −200 when the defence took every trick.

Each defender scores −u; the attack shares the rest so that every row sums to zero: the taker
scores 2u at three players and 3u at four; at five the taker scores 2u and the called partner u
(the FFT's 2/3 – 1/3), or 4u when the taker plays alone against four.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.rules.cards import DECK, EXCUSE, TOTAL_HALF_POINTS
from protocol.rules.variants import Contract, PoigneeSize, Variant, variant

__all__ = [
    "Camp",
    "DealOutcome",
    "DealScore",
    "RowKind",
    "ScoreSheet",
    "ScoreSheetError",
    "SheetRow",
    "points_to_make",
    "score_deal",
    "score_row",
    "CHELEM_ANNOUNCED_MADE",
    "CHELEM_UNANNOUNCED_MADE",
    "CHELEM_ANNOUNCED_FAILED",
    "CHELEM_BY_DEFENCE",
    "CONTRACT_BONUS",
    "PETIT_AU_BOUT_BONUS",
    "RENONCE_PENALTY",
]

#: Every contract is worth 25 points on top of the difference ("Tout contrat valant
#: arbitrairement 25 points").
CONTRACT_BONUS = 25
#: The Petit au bout is worth 10 points, multiplied by the contract.
PETIT_AU_BOUT_BONUS = 10
CHELEM_ANNOUNCED_MADE = 400
CHELEM_UNANNOUNCED_MADE = 200
CHELEM_ANNOUNCED_FAILED = -200
#: "Paradoxalement, il arrive que la défense inflige un Chelem au déclarant.  Dans ce cas,
#: chaque défenseur reçoit, en plus de la marque normale, une prime de 200 points."
CHELEM_BY_DEFENCE = -200
#: The arbitration code's usual penalty ("L'arbitre pourra appliquer une pénalité de 100 points").
RENONCE_PENALTY = 100

#: Points to make by the number of bouts the attack holds at the end: 0, 1, 2, 3.
_POINTS_TO_MAKE = (56, 51, 41, 36)
#: The 21 trumps and the Excuse: no table can show more cards than that in poignées.
_POIGNEE_CARDS = 22


class Camp(enum.Enum):
    """The two sides of a deal: the taker (and partner at five) against everyone else."""

    ATTACK = "attack"
    DEFENCE = "defence"

    @property
    def french(self) -> str:
        return {"attack": "attaque", "defence": "défense"}[self.value]


def points_to_make(bouts: int) -> int:
    """Whole points the attack needs with ``bouts`` bouts in its tricks at the end.

    The bouts decide everything (FFT: "Cela dépend uniquement du nombre d'Oudlers"): 56 with
    none, 51 with one, 41 with two, 36 with three.

    >>> [points_to_make(bouts) for bouts in range(4)]
    [56, 51, 41, 36]
    """
    if isinstance(bouts, bool) or not isinstance(bouts, int) or not 0 <= bouts <= 3:
        raise ValueError(f"the attack holds 0, 1, 2 or 3 bouts, not {bouts!r}")
    return _POINTS_TO_MAKE[bouts]


def _check_int(name: str, value: object, low: int, high: int, unit: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}{unit}, not {value}")
    return value


# --------------------------------------------------------------------------- what a pile can hold

#: A bout's value in half points (the Petit, the 21 and the Excuse are each 4.5 points).
_BOUT = EXCUSE.half_points
#: The Excuse its camp keeps out of a trick the other camp took: 4.5 points, less the low card
#: given for it (« Il y prend une carte sans valeur […] qu'il donne au camp qui a remporté le
#: pli »).
_EXCUSE_KEPT = EXCUSE.half_points - 1


def _sums(values: list[int]) -> tuple[int, ...]:
    """``sums[k]``: the total of the first k values."""
    sums = [0]
    for value in values:
        sums.append(sums[-1] + value)
    return tuple(sums)


_OTHERS = [c.half_points for c in DECK if not c.is_bout]  # the 75 cards that are not bouts
#: What k cards that are not bouts are worth at least, and at most; and at most when they hold no
#: king, as an écart does (« On ne peut Ecarter ni Roi, ni Bout »).
_LEAST = _sums(sorted(_OTHERS))
_MOST = _sums(sorted(_OTHERS, reverse=True))
_MOST_WITHOUT_KINGS = _sums(
    sorted((c.half_points for c in DECK if not c.is_bout and not c.is_king), reverse=True)
)
_KING = max(_OTHERS)


class _ExcusePath(enum.Enum):
    """Whether the Excuse was exchanged, and by whom; the value is the bouts the attack counts
    beyond those lying in its pile.  Outside an exchange every bout is counted where it lies (the
    Excuse played to the last trick outside a chelem lies with the trick's winner)."""

    STAYS = 0
    ATTACK_KEEPS = 1  #: the attack's Excuse, played to a trick the defence took
    DEFENCE_KEEPS = -1  #: the defence's Excuse, played to a trick the attack took


@dataclass(frozen=True)
class _Pile:
    """One way the attack's pile can be made: ``tricks`` tricks won, so ``cards`` cards with its
    écart or chien, and the least and the most half points such a pile counts."""

    tricks: int
    cards: int
    low: int
    high: int


@functools.cache  # 144 questions in all, asked at every deal
def _attack_piles(
    v: Variant, contract: Contract, bouts: int, chelem: Camp | None
) -> tuple[_Pile, ...]:
    """Every make-up of the attack's pile that the rules allow, with what it can count.

    The model leaves the play free and keeps every rule on where cards end: tricks of one card a
    player, the écart of a Petite or Garde the attack's but with no king and no bout, the chien of
    a Garde Sans the attack's and of a Garde Contre the defence's, the Excuse exchanged for a low
    card by the camp that played it to the other camp's trick (before the last).  So it refuses no
    deal that can be played, and its bounds are the cards' own: the lowest and the highest cards a
    pile of that size holds.  (The Petit au bout adds nothing: its camp holds the Petit, a bout,
    and took a trick, which :meth:`DealOutcome._check_petit_and_chelem` checks.)
    """
    if chelem is Camp.ATTACK:
        tricks: range = range(v.tricks, v.tricks + 1)
    elif chelem is Camp.DEFENCE:
        tricks = range(0, 1)
    else:
        tricks = range(1, v.tricks)
    piles = (_pile(v, contract, t, bouts, path) for t in tricks for path in _ExcusePath)
    return tuple(pile for pile in piles if pile is not None)


def _pile(
    v: Variant, contract: Contract, tricks: int, bouts: int, path: _ExcusePath
) -> _Pile | None:
    in_tricks = v.players * tricks
    aside = 0 if contract is Contract.GARDE_CONTRE else v.chien_size
    cards = in_tricks + aside
    lying = bouts - path.value  # the bouts in the attack's pile, as the cards fell
    bout_room = in_tricks + (aside if contract is Contract.GARDE_SANS else 0)
    if (
        not 0 <= lying <= min(3, bout_room)
        or 3 - lying > len(DECK) - cards
        # No defence trick to play it to.
        or (path is _ExcusePath.ATTACK_KEEPS and tricks == v.tricks)
        or (path is _ExcusePath.DEFENCE_KEEPS and tricks == 0)
    ):
        return None
    others = cards - lying
    if contract.chien_seen:  # kings lie in the tricks: the écart holds none
        kings = min(4, in_tricks - lying, others)
        most = kings * _KING + _MOST_WITHOUT_KINGS[others - kings]
    else:
        most = _MOST[others]
    counted = _BOUT * lying + _EXCUSE_KEPT * path.value
    return _Pile(tricks, cards, counted + _LEAST[others], counted + most)


@dataclass(frozen=True)
class DealOutcome:
    """What the score of a played deal depends on, and nothing else.

    ``attack_half_points`` counts the attack's card points in half points (40.5 points = 81),
    after the Excuse was exchanged for a low card, so that the half-point rule can be applied
    exactly.  ``poignees`` lists every poignée shown, with the camp of the player who showed
    it: the camp matters only to check that the table could have shown them, because the bonus
    goes to the deal's winner whoever showed it (FFT: "La prime est acquise au camp vainqueur
    de la donne").  ``chelem`` is the camp that took every trick, if any; ``chelem_announced``
    is the taker's announcement (only the taker announces a chelem).  ``alone`` is the
    five-player taker without a partner (called card in the chien or in the taker's own hand).

    Construction refuses an outcome no real deal can produce, with a message a player can read,
    so that a wrong entry in ``tarot score`` is caught instead of scored.
    """

    players: int
    contract: Contract
    attack_half_points: int
    bouts: int
    poignees: tuple[tuple[Camp, PoigneeSize], ...] = ()
    petit_au_bout: Camp | None = None
    chelem_announced: bool = False
    chelem: Camp | None = None
    alone: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.players, bool) or not isinstance(self.players, int):
            raise ValueError(f"French Tarot is played by 3, 4 or 5 players, not {self.players!r}")
        variant(self.players)  # raises the player-readable ValueError for 2, 6, …
        if not isinstance(self.contract, Contract):
            allowed = ", ".join(c.code for c in Contract)
            raise ValueError(f"unknown contract {self.contract!r}: use one of {allowed}")
        _check_int(
            "the attack's points (in half points)",
            self.attack_half_points,
            0,
            TOTAL_HALF_POINTS,
            " (0 to 91 points)",
        )
        points_to_make(self.bouts)
        if not isinstance(self.alone, bool):
            raise ValueError(f"alone must be True or False, not {self.alone!r}")
        if self.alone and self.players != 5:
            raise ValueError(
                "only a five-player taker can play alone (the called card in the chien or in "
                f"the taker's own hand); at {self.players} players the taker is always alone"
            )
        if not isinstance(self.chelem_announced, bool):
            raise ValueError(
                f"chelem_announced must be True or False, not {self.chelem_announced!r}"
            )
        for name, camp in (("petit_au_bout", self.petit_au_bout), ("chelem", self.chelem)):
            if camp is not None and not isinstance(camp, Camp):
                raise ValueError(f"{name} must be attack, defence or nobody, not {camp!r}")
        self._check_poignees()
        self._check_petit_and_chelem()
        self._check_points()

    def _check_poignees(self) -> None:
        if not isinstance(self.poignees, tuple):
            raise ValueError(
                f"poignees must be a tuple of (camp, size) pairs, not {self.poignees!r}"
            )
        shown = {Camp.ATTACK: 0, Camp.DEFENCE: 0}
        cards = 0
        for entry in self.poignees:
            if (
                not isinstance(entry, tuple)
                or len(entry) != 2
                or not isinstance(entry[0], Camp)
                or not isinstance(entry[1], PoigneeSize)
            ):
                raise ValueError(
                    f"a poignée is a (camp, size) pair such as (Camp.ATTACK, PoigneeSize.SIMPLE), "
                    f"not {entry!r}"
                )
            camp, size = entry
            shown[camp] += 1
            cards += variant(self.players).threshold(size)
        # A player shows at most one poignée ("complète et en une seule fois").
        for camp, count in shown.items():
            seats = self.attack_size if camp is Camp.ATTACK else self.players - self.attack_size
            if count > seats:
                raise ValueError(
                    f"{count} poignées shown by the {camp.value} but it has only {seats} "
                    f"player(s), and each player shows at most one"
                )
        if cards > _POIGNEE_CARDS:
            raise ValueError(
                f"these poignées show {cards} trumps at {self.players} players, but there are "
                f"only {_POIGNEE_CARDS} (21 trumps and the Excuse)"
            )
        self._check_poignees_beside_the_chien(cards)

    def _check_poignees_beside_the_chien(self, cards: int) -> None:
        """A poignée shows trumps from a hand, and the chien of a Garde Sans or a Garde Contre is
        nobody's hand.  A chelem says what it holds: every card the camp without a trick counts
        lies there, but for an Excuse that camp kept for a low card."""
        if self.contract is Contract.GARDE_SANS and self.chelem is Camp.DEFENCE:
            camp, bouts = Camp.ATTACK, self.bouts
        elif self.contract is Contract.GARDE_CONTRE and self.chelem is Camp.ATTACK:
            camp, bouts = Camp.DEFENCE, 3 - self.bouts
        else:
            return
        hidden = max(0, bouts - 1)  # the Petit and the 21 among them
        if cards > _POIGNEE_CARDS - hidden:
            raise ValueError(
                f"these poignées show {cards} trumps, but the {self.chelem.value} took every "
                f"trick, so the {camp.value}'s {bouts} bouts lie in the chien of the "
                f"{self.contract.french}, which no player held (but for an Excuse kept for a "
                f"low card): {hidden} of the trumps were in no hand, and the poignées could "
                f"show {_POIGNEE_CARDS - hidden} at most"
            )

    def _check_petit_and_chelem(self) -> None:
        if self.petit_au_bout is Camp.ATTACK and self.bouts == 0:
            raise ValueError("the attack took the Petit au bout, so it holds at least 1 bout")
        if self.petit_au_bout is Camp.DEFENCE and self.bouts == 3:
            raise ValueError(
                "the defence took the Petit au bout, so the attack holds at most 2 bouts"
            )
        if (
            self.chelem is not None
            and self.petit_au_bout is not None
            and self.petit_au_bout is not self.chelem
        ):
            raise ValueError(
                f"the {self.chelem.value} took every trick, so the {self.petit_au_bout.value} "
                "cannot have taken the Petit au bout"
            )

    def _check_points(self) -> None:
        """The bouts and the points the attack's pile can hold (see :func:`_attack_piles`):
        taking every trick always makes the contract, and taking none always fails it, as a
        consequence."""
        v = variant(self.players)

        def piles(bouts: int) -> tuple[_Pile, ...]:
            return _attack_piles(v, self.contract, bouts, self.chelem)

        possible = piles(self.bouts)
        if not possible:
            counts = [b for b in range(4) if piles(b)]
            raise ValueError(
                f"{self._piles_text(v, [])}, so the attack holds "
                f"{' or '.join(map(str, counts))} bout{'s' if max(counts) > 1 else ''}, not "
                f"{self.bouts}"
            )
        self._check_half_point({pile.cards % 2 for pile in possible})
        same = [pile for pile in possible if pile.cards % 2 == self.attack_half_points % 2]
        low, high = min(pile.low for pile in same), max(pile.high for pile in same)
        if not low <= self.attack_half_points <= high:
            between = (
                f"exactly {_half(low)}"
                if low == high
                else f"between {_half(low)} and {_half(high)}"
            )
            raise ValueError(
                f"{self._piles_text(v, same)}: with {self.bouts} "
                f"bout{'s' if self.bouts != 1 else ''} "
                f"the attack has {between} points, not {_half(self.attack_half_points)}"
            )

    def _piles_text(self, v: Variant, same: list[_Pile]) -> str:
        """What the attack's pile is made of, in a player's words.  ``same`` are its possible
        make-ups; their tricks are fewer than all the deal allows when the points' parity (an
        even or an odd number of cards) rules some out."""
        chien = f"the chien of {v.chien_size} cards"
        ecart = f"its écart of {v.chien_size} cards"
        if self.chelem is Camp.ATTACK:
            if self.contract is Contract.GARDE_CONTRE:
                return (
                    f"the attack took all {v.tricks} tricks, so the defence has only {chien} (a "
                    "Garde Contre's) and its Excuse if it kept it for a low card"
                )
            return (
                f"the attack took all {v.tricks} tricks and counts "
                f"{'the chien' if self.contract is Contract.GARDE_SANS else 'its écart'}: every "
                "card is its own but the Excuse, if the defence kept it for a low card"
            )
        if self.chelem is Camp.DEFENCE:
            counts = {
                Contract.PETITE: f"{ecart}, which holds no king and no bout",
                Contract.GARDE: f"{ecart}, which holds no king and no bout",
                Contract.GARDE_SANS: chien,
                Contract.GARDE_CONTRE: "no card (a Garde Contre's chien is the defence's)",
            }[self.contract]
            return (
                f"the defence took every trick, so the attack counts only {counts}, "
                "and its own Excuse if it kept it for a low card"
            )
        first, last = min(p.tricks for p in same), max(p.tricks for p in same)
        aside = {Contract.GARDE_SANS: f" and counts {chien}", Contract.GARDE_CONTRE: ""}.get(
            self.contract, f" and counts {ecart}"
        )
        text = (
            f"the attack took at least {_tricks(first, v)}{aside}, "
            f"and the defence at least {_tricks(v.tricks - last, v)}"
        )
        if self.contract is Contract.GARDE_CONTRE:
            text += f" and {chien}"
        if (first, last) != (1, v.tricks - 1):
            kind = (
                "whole points come from an even"
                if self.attack_half_points % 2 == 0
                else "points ending in .5 from an odd"
            )
            text += f" ({kind} number of cards, each worth a whole number of points and a half)"
        return text

    def _check_half_point(self, parities: set[int]) -> None:
        """Every card is worth an odd number of half points — a bout or a king 9, a queen 7, a
        cavalier 5, a valet 3, any other card 1 — and an Excuse that stays with its camp is
        exchanged for a low card, one card for another.  So the attack's points end in .5
        exactly when it counts an odd number of cards (``parities``: those its piles can hold):
        its tricks, a card a player each, and the écart or the chien it counts (none on a Garde
        Contre).  At four players that number is always even; at three and five a chelem, which
        fixes the tricks, fixes it too."""
        if self.attack_half_points % 2 in parities:
            return
        v = variant(self.players)
        counted = 0 if self.contract is Contract.GARDE_CONTRE else v.chien_size
        tricks_of = f"tricks of {self.players} cards"
        held = {
            Camp.ATTACK: f"all {v.tricks} {tricks_of}",
            Camp.DEFENCE: "no trick",
            None: f"its {tricks_of}",
        }[self.chelem]
        aside = {
            Contract.PETITE: f" and the écart of {counted}",
            Contract.GARDE: f" and the écart of {counted}",
            Contract.GARDE_SANS: f" and the chien of {counted}",
            Contract.GARDE_CONTRE: " (the chien goes to the defence)",
        }[self.contract]
        even = parities == {0}
        raise ValueError(
            f"the attack cannot have {_half(self.attack_half_points)} points: it counts "
            f"{held}{aside}, "
            f"always an {'even' if even else 'odd'} number of cards, and "
            "every card is worth a whole number of points and a half (a bout or a king 4.5, a "
            "queen "
            "3.5, a cavalier 2.5, a valet 1.5, any other card 0.5; the Excuse kept by its camp is "
            f"exchanged for a low card), so its points {'are whole' if even else 'end in .5'}"
        )

    @property
    def attack_size(self) -> int:
        """Players in the attack: the taker, and the partner at five unless the taker is alone."""
        return 2 if self.players == 5 and not self.alone else 1

    @property
    def need_half_points(self) -> int:
        return 2 * points_to_make(self.bouts)

    @property
    def won(self) -> bool:
        """The attack made its contract; "juste fait" is a win."""
        return self.attack_half_points >= self.need_half_points

    @property
    def difference(self) -> int:
        """Whole points won or lost by, after the odd half point went to the winning camp.

        FFT: "le ½ point va toujours au camp gagnant" — 40.5 with 2 bouts is 40, lost by 1;
        41.5 with 2 bouts is 42, won by 1.  In half points that is ``ceil(|A − need| / 2)``.
        """
        return (abs(self.attack_half_points - self.need_half_points) + 1) // 2


def _tricks(count: int, v: Variant) -> str:
    return f"{count} trick{'s' if count != 1 else ''} of {v.players} cards"


def _half(half_points: int) -> str:
    """Half points as a player writes them: 81 → "40.5", 82 → "41"."""
    whole, half = divmod(half_points, 2)
    return f"{whole}.5" if half else str(whole)


@dataclass(frozen=True)
class DealScore:
    """The result of one deal, per role.

    ``difference`` is the whole number of points the contract was won or lost by (``won`` says
    which, so it is never negative); ``unit`` is ``u``, seen from the attack's side, so that
    each defender scores ``-unit``; ``defender`` is the score of *each* defender, ``partner``
    None unless a five-player taker had a partner.
    """

    won: bool
    difference: int
    unit: int
    taker: int
    partner: int | None
    defender: int


def _chelem_bonus(outcome: DealOutcome) -> int:
    """C in the formula.

    An announced chelem that the defence turns into a chelem of its own is both announced and
    failed (−200) and suffered (the defenders' 200 bonus, −200): the two FFT rules are
    independent, so both apply and C = −400.
    """
    bonus = 0
    if outcome.chelem is Camp.ATTACK:
        bonus += CHELEM_ANNOUNCED_MADE if outcome.chelem_announced else CHELEM_UNANNOUNCED_MADE
    else:
        if outcome.chelem_announced:
            bonus += CHELEM_ANNOUNCED_FAILED
        if outcome.chelem is Camp.DEFENCE:
            bonus += CHELEM_BY_DEFENCE
    return bonus


def score_deal(outcome: DealOutcome) -> DealScore:
    """Score one deal: ``u = s·(25 + d)·m + p·10·m + s·P + C``, split so the row sums to zero.

    The split follows the FFT's *marque en donnes libres*: each defender scores −u and the
    taker three times u at four players, twice u at three; at five the attack is paid in
    thirds, 2/3 to the taker and 1/3 to the partner, i.e. 2u and u with three defenders, and
    the taker alone "encaisse la totalité": 4u.

    The FFT's own *exemples de marque de points*, at four players.  A Garde with a poignée
    of ten trumps, the Petit au bout, 49 points (98 half points) with two bouts::

        (25 + 8) × 2 + 20 + 10 × 2 = 106; each defender −106, the taker +318

    >>> garde = DealOutcome(4, Contract.GARDE, 98, 2, ((Camp.ATTACK, PoigneeSize.SIMPLE),),
    ...                     petit_au_bout=Camp.ATTACK)
    >>> score = score_deal(garde)
    >>> score.difference, score.unit, score.taker, score.defender
    (8, 106, 318, -106)

    A Garde Sans won by 4, the Petit taken to the last trick by the defence: (25 + 4) × 4 − 40.

    >>> score_deal(DealOutcome(4, Contract.GARDE_SANS, 110, 1, petit_au_bout=Camp.DEFENCE)).unit
    76

    A Petite lost by 7 with a poignée of ten trumps and the Petit au bout:
    −(25 + 7) − 20 + 10 = −42, and the taker −126.

    >>> lost = DealOutcome(4, Contract.PETITE, 68, 2, ((Camp.ATTACK, PoigneeSize.SIMPLE),),
    ...                    petit_au_bout=Camp.ATTACK)
    >>> score_deal(lost).unit, score_deal(lost).taker
    (-42, -126)

    A Garde won by 11, a defender having shown a poignée (the deal's winner takes it):
    (25 + 11) × 2 + 20.

    >>> score_deal(DealOutcome(4, Contract.GARDE, 124, 1, ((Camp.DEFENCE, PoigneeSize.SIMPLE),)))
    DealScore(won=True, difference=11, unit=92, taker=276, partner=None, defender=-92)

    A Garde, the chelem announced and made, a poignée, the Petit au bout, 87 points with two
    bouts: (46 + 25) × 2 + 20 + 20 + 400.

    >>> chelem = DealOutcome(4, Contract.GARDE, 174, 2, ((Camp.ATTACK, PoigneeSize.SIMPLE),),
    ...                      petit_au_bout=Camp.ATTACK, chelem_announced=True, chelem=Camp.ATTACK)
    >>> score_deal(chelem).unit, score_deal(chelem).taker
    (582, 1746)
    """
    s = 1 if outcome.won else -1
    m = outcome.contract.multiplier
    p = {Camp.ATTACK: 1, Camp.DEFENCE: -1, None: 0}[outcome.petit_au_bout]
    poignees = sum(int(size) for _, size in outcome.poignees)
    unit = (
        s * (CONTRACT_BONUS + outcome.difference) * m
        + p * PETIT_AU_BOUT_BONUS * m
        + s * poignees
        + _chelem_bonus(outcome)
    )
    defenders = outcome.players - outcome.attack_size
    if outcome.attack_size == 2:
        taker, partner = 2 * unit, unit
    else:
        taker, partner = defenders * unit, None
    return DealScore(
        won=outcome.won,
        difference=outcome.difference,
        unit=unit,
        taker=taker,
        partner=partner,
        defender=-unit,
    )


def score_row(score: DealScore, players: int, taker: int, partner: int | None) -> list[int]:
    """The deal's line on the score sheet, one score per seat (0..players-1).

    ``partner`` is the five-player called partner, None when there is none (three or four
    players, or the taker alone — including a taker who called a card of their own hand).

    At five, a Garde won by 10 with a partner: the taker 2u, the partner u, each defender −u.

    >>> score = score_deal(DealOutcome(5, Contract.GARDE, 122, 1))
    >>> score_row(score, 5, taker=3, partner=0)
    [70, -70, -70, 140, -70]
    """
    variant(players)
    _check_int("the taker's seat", taker, 0, players - 1)
    if (partner is None) != (score.partner is None):
        if partner is None:
            raise ValueError("this score has a partner: give the partner's seat")
        raise ValueError(
            "this score has no partner (taker alone, or 3 or 4 players): partner must be None"
        )
    if partner is not None:
        _check_int("the partner's seat", partner, 0, players - 1)
        if partner == taker:
            raise ValueError(
                "the partner cannot be the taker: a taker who called their own card plays alone"
            )
    row = [score.defender] * players
    row[taker] = score.taker
    if partner is not None and score.partner is not None:
        row[partner] = score.partner
    if sum(row) != 0:
        raise ValueError(
            f"this score was not computed for {players} players (the row sums to {sum(row)})"
        )
    return row


# --------------------------------------------------------------------------- score sheet


class ScoreSheetError(ValueError):
    """A score sheet that cannot be right: a row that does not sum to zero, a corrupt file."""


class RowKind(enum.Enum):
    DEAL = "deal"  #: a played deal
    VOID = "void"  #: all passed, Petit sec, or a deal annulled by the arbitration code: zeros
    PENALTY = "penalty"  #: a penalty given to one player, on its own row


@dataclass(frozen=True)
class SheetRow:
    """One line of the score sheet.

    ``seat`` is the taker of a deal row and the offender of a penalty row; ``partner`` the
    five-player partner of a deal row; ``contract`` the contract of a deal row.
    """

    kind: RowKind
    scores: tuple[int, ...]
    label: str = ""
    seat: int | None = None
    partner: int | None = None
    contract: Contract | None = None


class ScoreSheet:
    """The running score sheet of one table ("la feuille de marque").

    The FFT makes every player responsible for the sheet and checks that "la somme des scores
    des 4 joueurs est bien égale à zéro" (the arbitration code even penalises a sheet whose
    total is not zero), so every row added here must sum to zero, or it is refused.

    >>> sheet = ScoreSheet(["Nord", "Sud", "Est", "Ouest"])
    >>> row = sheet.add_deal([-106, -106, 318, -106], contract=Contract.GARDE, taker=2)
    >>> row = sheet.add_penalty(1)
    >>> sheet.totals()
    [-73, -206, 352, -73]
    >>> sheet.add_deal([10, 0, 0, 0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protocol.rules.scoring.ScoreSheetError: every row of the score sheet sums to zero; ... to 10
    """

    FORMAT = "tarot-score-sheet"
    VERSION = 1

    def __init__(self, players: Sequence[str]) -> None:
        if isinstance(players, str) or not isinstance(players, Sequence):
            raise ScoreSheetError(
                f"a score sheet needs the list of the players' names, not {players!r}"
            )
        names = tuple(players)
        try:
            variant(len(names))
        except ValueError:
            raise ScoreSheetError(
                f"a score sheet has 3, 4 or 5 players, not {len(names)}"
            ) from None
        for name in names:
            if not isinstance(name, str) or not name.strip():
                raise ScoreSheetError(f"a player's name must be a non-empty string, not {name!r}")
        self._players = names
        self._rows: list[SheetRow] = []

    @property
    def players(self) -> tuple[str, ...]:
        return self._players

    @property
    def rows(self) -> tuple[SheetRow, ...]:
        return tuple(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreSheet):
            return NotImplemented
        return self._players == other._players and self._rows == other._rows

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"ScoreSheet(players={self._players!r}, rows={len(self._rows)})"

    # -- adding rows

    def _seat(self, what: str, seat: object) -> int:
        if (
            isinstance(seat, bool)
            or not isinstance(seat, int)
            or not 0 <= seat < len(self._players)
        ):
            raise ScoreSheetError(
                f"{what} must be a seat 0..{len(self._players) - 1}, not {seat!r}"
            )
        return seat

    def _append(self, row: SheetRow) -> SheetRow:
        self._check_row(row)
        self._rows.append(row)
        return row

    def _check_row(self, row: SheetRow) -> None:
        n = len(self._players)
        if len(row.scores) != n:
            raise ScoreSheetError(f"a row needs {n} scores, one per player, not {len(row.scores)}")
        for value in row.scores:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ScoreSheetError(f"scores are whole numbers, not {value!r}")
        if sum(row.scores) != 0:
            raise ScoreSheetError(
                "every row of the score sheet sums to zero; "
                f"{list(row.scores)} sums to {sum(row.scores)}"
            )
        if row.kind is RowKind.VOID and any(row.scores):
            raise ScoreSheetError("a void deal scores zero for everybody")
        if row.seat is not None:
            self._seat("the row's seat", row.seat)
        if row.partner is not None:
            self._seat("the partner", row.partner)
            if row.partner == row.seat:
                raise ScoreSheetError("the partner cannot be the taker")

    def add_deal(
        self,
        row: Sequence[int],
        *,
        contract: Contract | None = None,
        taker: int | None = None,
        partner: int | None = None,
        label: str | None = None,
    ) -> SheetRow:
        """Add the row of a played deal, as computed by :func:`score_row`."""
        if contract is not None and not isinstance(contract, Contract):
            raise ScoreSheetError(f"unknown contract {contract!r}")
        if label is None:
            label = contract.french if contract is not None else "Donne"
        return self._append(
            SheetRow(
                RowKind.DEAL, tuple(row), label, seat=taker, partner=partner, contract=contract
            )
        )

    def add_void(self, reason: str = "tous passent (all passed)") -> SheetRow:
        """A deal that does not count — all passed, Petit sec, annulled — is a row of zeros.

        It stays on the sheet so that the deal count (and whose turn it is to deal) is kept.
        """
        return self._append(SheetRow(RowKind.VOID, (0,) * len(self._players), reason))

    def add_penalty(
        self, seat: int, points: int = RENONCE_PENALTY, reason: str = "renonce"
    ) -> SheetRow:
        """A penalty on its own row (DESIGN §3, renonce: "a 100-point penalty").

        The offender loses exactly ``points``.  To keep the row at zero — the sheet's invariant,
        which the FFT itself checks — the other players share those points equally; when they
        do not divide evenly (100 among 3), the extra points go one each to the players who
        follow the offender in the order of play (seat + 1, seat + 2, …), so the result is
        deterministic and no one gets more than one point more than another: at four players
        a 100-point penalty on seat 1 is ``[33, -100, 34, 33]``.
        """
        offender = self._seat("the penalised player", seat)
        if isinstance(points, bool) or not isinstance(points, int) or points <= 0:
            raise ScoreSheetError(f"a penalty is a positive whole number of points, not {points!r}")
        n = len(self._players)
        share, extra = divmod(points, n - 1)
        scores = [0] * n
        scores[offender] = -points
        for step in range(1, n):
            scores[(offender + step) % n] = share + (1 if step <= extra else 0)
        return self._append(SheetRow(RowKind.PENALTY, tuple(scores), reason, seat=offender))

    def totals(self) -> list[int]:
        """Each player's balance ("Bilan"): the sum of their column."""
        totals = [0] * len(self._players)
        for row in self._rows:
            for seat, value in enumerate(row.scores):
                totals[seat] += value
        return totals

    # -- JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.FORMAT,
            "version": self.VERSION,
            "players": list(self._players),
            "rows": [
                {
                    "kind": row.kind.value,
                    "scores": list(row.scores),
                    "label": row.label,
                    "seat": row.seat,
                    "partner": row.partner,
                    "contract": row.contract.code if row.contract is not None else None,
                }
                for row in self._rows
            ],
            "totals": self.totals(),
        }

    def to_json(self) -> str:
        """The sheet as JSON; ``totals`` is stored too, and checked on reading, as a checksum."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> ScoreSheet:
        """Read a sheet written by :meth:`to_json`; :class:`ScoreSheetError`
        saying what is wrong."""
        try:
            data = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise ScoreSheetError(f"corrupt score sheet: not JSON ({exc})") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> ScoreSheet:
        def bad(message: str) -> ScoreSheetError:
            return ScoreSheetError(f"corrupt score sheet: {message}")

        if not isinstance(data, dict):
            raise bad("expected a JSON object")
        if data.get("format") != cls.FORMAT:
            raise bad(f"format is {data.get('format')!r}, expected {cls.FORMAT!r}")
        if data.get("version") != cls.VERSION:
            raise bad(
                f"version {data.get('version')!r} is not supported "
                f"(this program reads {cls.VERSION})"
            )
        players = data.get("players")
        if not isinstance(players, list):
            raise bad("'players' must be a list of names")
        try:
            sheet = cls(players)
        except ScoreSheetError as exc:
            raise bad(str(exc)) from None
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise bad("'rows' must be a list")
        for number, raw in enumerate(rows, start=1):
            try:
                sheet._append(cls._row_from_dict(raw))
            except (ScoreSheetError, ValueError, TypeError) as exc:
                raise bad(f"row {number}: {exc}") from None
        if "totals" in data and data["totals"] != sheet.totals():
            raise bad(f"the totals {data['totals']!r} do not match the rows ({sheet.totals()})")
        return sheet

    @staticmethod
    def _row_from_dict(raw: object) -> SheetRow:
        if not isinstance(raw, dict):
            raise ScoreSheetError("expected a JSON object")
        expected = {"kind", "scores", "label", "seat", "partner", "contract"}
        if set(raw) != expected:
            raise ScoreSheetError(f"expected the keys {sorted(expected)}, got {sorted(raw)}")
        try:
            kind = RowKind(raw["kind"])
        except ValueError:
            raise ScoreSheetError(
                f"kind {raw['kind']!r} is not one of {', '.join(k.value for k in RowKind)}"
            ) from None
        scores = raw["scores"]
        if not isinstance(scores, list):
            raise ScoreSheetError("'scores' must be a list of whole numbers")
        label = raw["label"]
        if not isinstance(label, str):
            raise ScoreSheetError("'label' must be a string")
        for key in ("seat", "partner"):
            value = raw[key]
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ScoreSheetError(f"{key!r} must be a seat number or null, not {value!r}")
        contract = raw["contract"]
        if contract is not None:
            if not isinstance(contract, str):
                raise ScoreSheetError(
                    f"'contract' must be a contract name or null, not {contract!r}"
                )
            contract = Contract.from_code(contract)
        if kind is not RowKind.DEAL and (contract is not None or raw["partner"] is not None):
            raise ScoreSheetError(f"a {kind.value} row has no contract and no partner")
        if kind is RowKind.PENALTY and raw["seat"] is None:
            raise ScoreSheetError("a penalty row names the penalised seat")
        return SheetRow(
            kind, tuple(scores), label, seat=raw["seat"], partner=raw["partner"], contract=contract
        )
