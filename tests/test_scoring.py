"""Scoring vectors: the FFT's worked examples and score sheet, the half-point rule, and
hand-derived deals for 3 and 5 players and every contract (each derived in its comment with
u = s·(25 + d)·m + p·10·m + s·P + C), plus the zero-sum property of every row."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.scoring import (
    Camp,
    DealOutcome,
    DealScore,
    RowKind,
    ScoreSheet,
    ScoreSheetError,
    points_to_make,
    score_deal,
    score_row,
)
from protocol.variants import Contract, PoigneeSize, variant

A, D = Camp.ATTACK, Camp.DEFENCE
PETITE, GARDE, SANS, CONTRE = Contract.PETITE, Contract.GARDE, Contract.GARDE_SANS, Contract.GARDE_CONTRE
SIMPLE, DOUBLE, TRIPLE = PoigneeSize.SIMPLE, PoigneeSize.DOUBLE, PoigneeSize.TRIPLE


def hp(points: str) -> int:
    """Half points of "40.5" → 81, without a float."""
    whole, _, half = points.partition(".")
    return 2 * int(whole) + (1 if half == "5" else 0)


# ------------------------------------------------------------------ the FFT's five examples

FFT_EXAMPLES = {
    # Garde, poignée of 10 trumps by the taker, Petit au bout by the taker, 49 points with
    # 2 bouts: d = 8; (25 + 8)·2 = 66, + 20 poignée, + 10·2 petit = 106; taker 3·106.
    "garde-poignee-petit": (
        DealOutcome(4, GARDE, hp("49"), 2, poignees=((A, SIMPLE),), petit_au_bout=A),
        (True, 8, 318, -106),
    ),
    # Garde Sans won by 4, Petit au bout by the defence: (25 + 4)·4 = 116 − 10·4 = 76.
    "garde-sans-petit-lost": (
        DealOutcome(4, SANS, hp("45"), 2, petit_au_bout=D),
        (True, 4, 228, -76),
    ),
    # Prise lost by 7 (44 points with 1 bout, needs 51), poignée by the taker, Petit au bout
    # by the taker: u = −(25 + 7) − 20 + 10 = −42; each defender +42, taker −126.
    "prise-lost-poignee-petit": (
        DealOutcome(4, PETITE, hp("44"), 1, poignees=((A, SIMPLE),), petit_au_bout=A),
        (False, 7, -126, 42),
    ),
    # Garde won by 11 (52 points with 2 bouts), poignée shown by the defence, paid to the
    # winning attack: (25 + 11)·2 + 20 = 92.
    "garde-defence-poignee": (
        DealOutcome(4, GARDE, hp("52"), 2, poignees=((D, SIMPLE),)),
        (True, 11, 276, -92),
    ),
    # Garde, chelem announced and made, poignée, Petit au bout; the defence kept the Excuse
    # (4 points): 87 with 2 bouts, d = 46; (46 + 25)·2 + 20 + 10·2 + 400 = 582.
    "garde-chelem-announced": (
        DealOutcome(4, GARDE, hp("87"), 2, ((A, SIMPLE),), petit_au_bout=A, chelem_announced=True, chelem=A),
        (True, 46, 1746, -582),
    ),
}


@pytest.mark.parametrize("name", list(FFT_EXAMPLES))
def test_fft_examples(name: str) -> None:
    outcome, (won, difference, taker, defender) = FFT_EXAMPLES[name]
    score = score_deal(outcome)
    assert (score.won, score.difference, score.taker, score.partner, score.defender) == (
        won,
        difference,
        taker,
        None,
        defender,
    )
    assert score.unit == -defender
    assert score.taker + 3 * score.defender == 0


def test_fft_score_sheet() -> None:
    """The FFT's example sheet: seats Nord, Sud, Est, Ouest; final balances −446 / +1346 / −390 / −510."""
    sheet = ScoreSheet(["Nord", "Sud", "Est", "Ouest"])
    nord, sud, est, ouest = range(4)
    takers = [est, ouest, sud, nord, sud]  # read off the + column of each deal on the sheet
    for (outcome, _), taker in zip(FFT_EXAMPLES.values(), takers):
        sheet.add_outcome(outcome, taker)
    assert [list(row.scores) for row in sheet.rows] == [
        [-106, -106, 318, -106],
        [-76, -76, -76, 228],
        [42, -126, 42, 42],
        [276, -92, -92, -92],
        [-582, 1746, -582, -582],
    ]
    assert sheet.totals() == [-446, 1346, -390, -510]
    assert [row.contract for row in sheet.rows] == [GARDE, SANS, PETITE, GARDE, GARDE]
    assert all(sum(row.scores) == 0 for row in sheet.rows)
    assert ScoreSheet.from_json(sheet.to_json()) == sheet


# ------------------------------------------------------------------ the half-point rule


@pytest.mark.parametrize("players", [3, 5])
def test_half_point_goes_to_the_winner(players: int) -> None:
    # FFT (3- and 5-player sections): 40.5 with 2 bouts is lost by ONE point …
    lost = score_deal(DealOutcome(players, PETITE, hp("40.5"), 2))
    assert (lost.won, lost.difference, lost.unit) == (False, 1, -26)
    # … and 41.5 with 2 bouts is won by ONE point.
    won = score_deal(DealOutcome(players, PETITE, hp("41.5"), 2))
    assert (won.won, won.difference, won.unit) == (True, 1, 26)


@pytest.mark.parametrize("contract", list(Contract))
def test_juste_fait_wins_by_zero(contract: Contract) -> None:
    # Exactly 41 with 2 bouts: "juste fait" is won, d = 0, u = 25·m.
    score = score_deal(DealOutcome(4, contract, hp("41"), 2))
    assert (score.won, score.difference, score.unit) == (True, 0, 25 * contract.multiplier)


def test_no_half_point_at_four_players() -> None:
    # « On compte les cartes deux par deux pour faciliter le décompte » — and every card is a
    # whole number of points and a half (« 1 Roi : 4,5 points … Toute autre carte : 0,5
    # point »), so a pair is whole.  At four the attack counts tricks of 4 cards and the écart
    # or chien of 6, or no chien: pairs only, never 40.5.
    for contract in Contract:
        with pytest.raises(ValueError, match="always an even number of cards.*so its points are whole"):
            DealOutcome(4, contract, hp("40.5"), 2)
    # At three and five a trick is an odd number of cards; a chelem fixes how many tricks.
    assert DealOutcome(3, GARDE, hp("90.5"), 3).won
    with pytest.raises(ValueError, match="all 24 tricks of 3 cards and the écart of 6"):
        DealOutcome(3, GARDE, hp("90.5"), 3, chelem=A)
    assert DealOutcome(5, CONTRE, hp("90.5"), 3, chelem=A).won  # 75 cards: the chien is the defence's
    with pytest.raises(ValueError, match="so its points end in .5"):
        DealOutcome(5, CONTRE, hp("91"), 3, chelem=A)
    with pytest.raises(ValueError, match="no trick and the chien of 3"):
        DealOutcome(5, SANS, hp("20"), 1, chelem=D)


def test_points_to_make() -> None:
    assert [points_to_make(b) for b in range(4)] == [56, 51, 41, 36]
    for bad in (-1, 4, True):
        with pytest.raises(ValueError, match="0, 1, 2 or 3 bouts"):
            points_to_make(bad)


# ------------------------------------------------------------------ hand-derived vectors

# (outcome, (won, difference, taker, partner, defender))
VECTORS: list[tuple[DealOutcome, tuple[bool, int, int, int | None, int]]] = [
    # --- 3 players: taker 2u, two defenders −u each
    # 3p petite, 1 bout, 56 pts: d = 56 − 51 = 5, u = (25+5)·1 = 30; taker 60, defenders −30
    (DealOutcome(3, PETITE, hp("56"), 1), (True, 5, 60, None, -30)),
    # 3p garde, 0 bouts, 50 pts: lost by 56 − 50 = 6, u = −(25+6)·2 = −62; taker −124, defenders +62
    (DealOutcome(3, GARDE, hp("50"), 0), (False, 6, -124, None, 62)),
    # 3p garde sans, 2 bouts, 41 pts: juste fait, d = 0, u = 25·4 = 100; taker 200, defenders −100
    (DealOutcome(3, SANS, hp("41"), 2), (True, 0, 200, None, -100)),
    # 3p garde contre, 3 bouts, 35.5 pts: the half goes to the defence → 35, lost by 1,
    # u = −(25+1)·6 = −156; taker −312, defenders +156
    (DealOutcome(3, CONTRE, hp("35.5"), 3), (False, 1, -312, None, 156)),
    # 3p garde, 2 bouts, 45 pts, Petit au bout lost to the defence while the attack wins (p = −1):
    # d = 4, u = (25+4)·2 − 10·2 = 58 − 20 = 38; taker 76, defenders −38
    (DealOutcome(3, GARDE, hp("45"), 2, petit_au_bout=D), (True, 4, 76, None, -38)),
    # 3p petite, 1 bout, 48 pts, simple poignée (13 trumps) by the attack, which loses:
    # lost by 3, u = −(25+3)·1 − 20 = −48; taker −96, defenders +48
    (DealOutcome(3, PETITE, hp("48"), 1, ((A, SIMPLE),)), (False, 3, -96, None, 48)),
    # 3p garde, 2 bouts, 50.5 pts: the half goes to the attack → 51, d = 10; double poignée
    # by the defence goes to the winning attack: u = (25+10)·2 + 30 = 100; taker 200, defenders −100
    (DealOutcome(3, GARDE, hp("50.5"), 2, ((D, DOUBLE),)), (True, 10, 200, None, -100)),
    # 3p garde sans, 3 bouts, 91 pts, chelem made unannounced, Petit au bout by the attack:
    # d = 91 − 36 = 55, u = (25+55)·4 + 10·4 + 200 = 320 + 40 + 200 = 560; taker 1120, defenders −560
    (DealOutcome(3, SANS, hp("91"), 3, petit_au_bout=A, chelem=A), (True, 55, 1120, None, -560)),
    # --- 4 players: taker 3u
    # 4p petite, 0 bouts, 57 pts (never 56.5 at four: see test_no_half_point_at_four_players):
    # won by 1, u = 26; taker 78, defenders −26
    (DealOutcome(4, PETITE, hp("57"), 0), (True, 1, 78, None, -26)),
    # 4p garde contre, 1 bout, 60 pts: d = 9, u = (25+9)·6 = 204; taker 612, defenders −204
    (DealOutcome(4, CONTRE, hp("60"), 1), (True, 9, 612, None, -204)),
    # 4p garde, 1 bout, 45 pts, chelem announced and failed: lost by 6,
    # u = −(25+6)·2 − 200 = −262; taker −786, defenders +262
    (DealOutcome(4, GARDE, hp("45"), 1, chelem_announced=True), (False, 6, -786, None, 262)),
    # 4p garde sans, 1 bout (in the chien), 10 pts, the defence took every trick: lost by 41,
    # u = −(25+41)·4 − 200 = −264 − 200 = −464; taker −1392, defenders +464
    (DealOutcome(4, SANS, hp("10"), 1, chelem=D), (False, 41, -1392, None, 464)),
    # 4p petite, 2 bouts, 38 pts, Petit au bout by the attack (p = +1 although it loses), triple
    # poignée (15 trumps) by the defence: lost by 3, u = −(25+3)·1 + 10·1 − 40 = −58;
    # taker −174, defenders +58
    (DealOutcome(4, PETITE, hp("38"), 2, ((D, TRIPLE),), petit_au_bout=A), (False, 3, -174, None, 58)),
    # 4p garde, chelem announced AND the defence took every trick: both −200 apply, C = −400.
    # 0 bouts, 3 pts (the écart): lost by 53, u = −(25+53)·2 − 400 = −556; taker −1668, defenders +556
    (DealOutcome(4, GARDE, hp("3"), 0, chelem_announced=True, chelem=D), (False, 53, -1668, None, 556)),
    # 4p garde contre, 3 bouts, 37 pts, won by 1; double poignée by the attack, Petit au bout by
    # the attack: u = (25+1)·6 + 10·6 + 30 = 156 + 60 + 30 = 246; taker 738, defenders −246
    (DealOutcome(4, CONTRE, hp("37"), 3, ((A, DOUBLE),), petit_au_bout=A), (True, 1, 738, None, -246)),
    # 4p garde sans, 2 bouts, 60 pts, Petit au bout by the defence, double poignée by the
    # defence: d = 19, u = (25+19)·4 − 10·4 + 30 = 176 − 40 + 30 = 166; taker 498, defenders −166
    (DealOutcome(4, SANS, hp("60"), 2, ((D, DOUBLE),), petit_au_bout=D), (True, 19, 498, None, -166)),
    # --- 5 players with a partner: taker 2u, partner u, three defenders −u
    # 5p petite, 1 bout, 51 pts: juste fait, u = 25; taker 50, partner 25, defenders −25
    (DealOutcome(5, PETITE, hp("51"), 1), (True, 0, 50, 25, -25)),
    # 5p garde, 2 bouts, 45 pts: d = 4, u = (25+4)·2 = 58; taker 116, partner 58, defenders −58
    (DealOutcome(5, GARDE, hp("45"), 2), (True, 4, 116, 58, -58)),
    # 5p garde sans, 2 bouts, 40.5 pts → 40, lost by 1: u = −(25+1)·4 = −104;
    # taker −208, partner −104, defenders +104
    (DealOutcome(5, SANS, hp("40.5"), 2), (False, 1, -208, -104, 104)),
    # 5p garde contre, 0 bouts, 30 pts: lost by 26, u = −(25+26)·6 = −306;
    # taker −612, partner −306, defenders +306
    (DealOutcome(5, CONTRE, hp("30"), 0), (False, 26, -612, -306, 306)),
    # 5p garde, 2 bouts, 41.5 pts → 42, won by 1; Petit au bout by the defence:
    # u = (25+1)·2 − 10·2 = 32; taker 64, partner 32, defenders −32
    (DealOutcome(5, GARDE, hp("41.5"), 2, petit_au_bout=D), (True, 1, 64, 32, -32)),
    # 5p garde, 1 bout, 55 pts, simple poignées (8 trumps) by each camp, both to the winner:
    # d = 4, u = (25+4)·2 + 20 + 20 = 98; taker 196, partner 98, defenders −98
    (DealOutcome(5, GARDE, hp("55"), 1, ((D, SIMPLE), (A, SIMPLE))), (True, 4, 196, 98, -98)),
    # 5p petite, 2 bouts, 35 pts, double poignée (10 trumps) by the attack, Petit au bout by the
    # attack: lost by 6, u = −(25+6) + 10 − 30 = −51; taker −102, partner −51, defenders +51
    (DealOutcome(5, PETITE, hp("35"), 2, ((A, DOUBLE),), petit_au_bout=A), (False, 6, -102, -51, 51)),
    # 5p garde, 3 bouts, 91 pts, chelem announced and made, Petit au bout (penultimate trick,
    # the Excuse led last): d = 55, u = (25+55)·2 + 10·2 + 400 = 580; taker 1160, partner 580, defenders −580
    (
        DealOutcome(5, GARDE, hp("91"), 3, petit_au_bout=A, chelem_announced=True, chelem=A),
        (True, 55, 1160, 580, -580),
    ),
    # 5p garde, 2 bouts, 55 pts, chelem announced and failed although the contract is won:
    # d = 14, u = (25+14)·2 − 200 = −122; taker −244, partner −122, defenders +122
    (DealOutcome(5, GARDE, hp("55"), 2, chelem_announced=True), (True, 14, -244, -122, 122)),
    # --- 5 players, taker alone: taker 4u, four defenders −u
    # 5p petite alone, 1 bout, 60 pts: d = 9, u = 34; taker 136, defenders −34
    (DealOutcome(5, PETITE, hp("60"), 1, alone=True), (True, 9, 136, None, -34)),
    # 5p garde alone, 2 bouts, 40.5 pts → 40, lost by 1: u = −(25+1)·2 = −52; taker −208, defenders +52
    (DealOutcome(5, GARDE, hp("40.5"), 2, alone=True), (False, 1, -208, None, 52)),
    # 5p garde sans alone, 2 bouts, 50 pts, triple poignée (13 trumps) by the taker:
    # d = 9, u = (25+9)·4 + 40 = 176; taker 704, defenders −176
    (DealOutcome(5, SANS, hp("50"), 2, ((A, TRIPLE),), alone=True), (True, 9, 704, None, -176)),
    # 5p garde contre alone, 2 bouts, 37 pts, Petit au bout by the taker, simple poignée by the
    # defence: lost by 4, u = −(25+4)·6 + 10·6 − 20 = −174 + 60 − 20 = −134; taker −536, defenders +134
    (
        DealOutcome(5, CONTRE, hp("37"), 2, ((D, SIMPLE),), petit_au_bout=A, alone=True),
        (False, 4, -536, None, 134),
    ),
    # 5p garde alone, 3 bouts, 88 pts, chelem made unannounced: d = 52,
    # u = (25+52)·2 + 200 = 354; taker 1416, defenders −354
    (DealOutcome(5, GARDE, hp("88"), 3, chelem=A, alone=True), (True, 52, 1416, None, -354)),
    # 5p garde alone, 1 bout (its Excuse, kept for a low card: 4 pts), 6.5 pts with the écart of 3,
    # the defence took every trick: 6.5 → 6 (the half to the defence), lost by 45,
    # u = −(25+45)·2 − 200 = −340; taker −1360, defenders +340
    (DealOutcome(5, GARDE, hp("6.5"), 1, chelem=D, alone=True), (False, 45, -1360, None, 340)),
    # 5p petite alone, 2 bouts, 30 pts, chelem announced and failed: lost by 11,
    # u = −(25+11) − 200 = −236; taker −944, defenders +236
    (DealOutcome(5, PETITE, hp("30"), 2, chelem_announced=True, alone=True), (False, 11, -944, None, 236)),
]


def _vector_id(vector: tuple[DealOutcome, Any]) -> str:
    o = vector[0]
    parts = [f"{o.players}p", o.contract.code, f"{o.bouts}b", f"{o.attack_half_points}hp"]
    if o.alone:
        parts.append("alone")
    parts += [f"{camp.value}-{size.code}" for camp, size in o.poignees]
    if o.petit_au_bout:
        parts.append(f"petit-{o.petit_au_bout.value}")
    if o.chelem_announced:
        parts.append("announced")
    if o.chelem:
        parts.append(f"chelem-{o.chelem.value}")
    return "_".join(parts)


@pytest.mark.parametrize("outcome, expected", VECTORS, ids=[_vector_id(v) for v in VECTORS])
def test_hand_derived_vectors(outcome: DealOutcome, expected: tuple[bool, int, int, int | None, int]) -> None:
    score = score_deal(outcome)
    assert (score.won, score.difference, score.taker, score.partner, score.defender) == expected
    partner = 1 if score.partner is not None else None
    row = score_row(score, outcome.players, 0, partner)
    assert sum(row) == 0
    assert row[0] == score.taker
    assert row.count(score.defender) >= outcome.players - outcome.attack_size


def test_vectors_cover_every_case() -> None:
    """The table of vectors really spans what the brief asks for."""
    outcomes = [o for o, _ in VECTORS]
    for players in (3, 4, 5):
        assert {o.contract for o in outcomes if o.players == players} == set(Contract)
    assert {o.contract for o in outcomes if o.alone} == set(Contract)
    assert {o.contract for o in outcomes if o.players == 5 and not o.alone} == set(Contract)
    chelems = {(o.chelem_announced, o.chelem) for o in outcomes}
    assert {(True, A), (False, A), (True, None), (False, D), (True, D)} <= chelems
    assert any(o.petit_au_bout is D and score_deal(o).won for o in outcomes)
    for camp in Camp:
        for won in (True, False):
            assert any(
                any(c is camp for c, _ in o.poignees) and score_deal(o).won is won for o in outcomes
            ), (camp, won)


# ------------------------------------------------------------------ score_row


def test_score_row_places_each_role() -> None:
    score = score_deal(DealOutcome(5, GARDE, hp("45"), 2))
    assert score_row(score, 5, taker=3, partner=0) == [58, -58, -58, 116, -58]
    alone = score_deal(DealOutcome(5, GARDE, hp("45"), 2, alone=True))
    assert score_row(alone, 5, taker=4, partner=None) == [-58, -58, -58, -58, 232]


def test_score_row_refuses_inconsistent_seats() -> None:
    with_partner = score_deal(DealOutcome(5, GARDE, hp("45"), 2))
    with pytest.raises(ValueError, match="give the partner's seat"):
        score_row(with_partner, 5, 0, None)
    with pytest.raises(ValueError, match="cannot be the taker"):
        score_row(with_partner, 5, 2, 2)
    four = score_deal(DealOutcome(4, GARDE, hp("45"), 2))
    with pytest.raises(ValueError, match="partner must be None"):
        score_row(four, 4, 0, 1)
    with pytest.raises(ValueError, match="taker's seat"):
        score_row(four, 4, 4, None)
    with pytest.raises(ValueError, match="not computed for 3 players"):
        score_row(four, 3, 0, None)


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(players=6), "3, 4 or 5 players"),
        (dict(contract="garde"), "unknown contract"),
        (dict(attack_half_points=183), "between 0 and 182"),
        (dict(attack_half_points=-1), "between 0 and 182"),
        (dict(attack_half_points=81.0), "whole number"),
        (dict(bouts=4), "0, 1, 2 or 3 bouts"),
        (dict(alone=True), "only a five-player taker"),
        (dict(bouts=3, attack_half_points=20), "worth at least 12 points"),
        (dict(bouts=0, attack_half_points=180), "defence holds 3 bout"),
        (dict(poignees=((A, SIMPLE), (A, SIMPLE))), "only 1 player"),
        (dict(poignees=((A, TRIPLE), (D, SIMPLE))), "25 trumps"),
        (dict(poignees=((A, "simple"),)), "a poignée is a"),
        (dict(petit_au_bout=A, bouts=0, attack_half_points=120), "at least 1 bout"),
        (dict(petit_au_bout=D, bouts=3), "at most 2 bouts"),
        (dict(chelem=A, attack_half_points=60), "made its contract"),
        (dict(chelem=D), "cannot have made"),
        (dict(chelem=A, attack_half_points=174, petit_au_bout=D), "cannot have taken the Petit"),
    ],
)
def test_outcome_validation(kwargs: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = dict(players=4, contract=GARDE, attack_half_points=hp("49"), bouts=2)
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        DealOutcome(**base)


# ------------------------------------------------------------------ property: rows sum to zero


@st.composite
def outcomes(draw: st.DrawFn) -> DealOutcome:
    players = draw(st.sampled_from([3, 4, 5]))
    alone = draw(st.booleans()) if players == 5 else False
    contract = draw(st.sampled_from(list(Contract)))
    bouts = draw(st.integers(0, 3))
    chelem = draw(st.sampled_from([None, A, D]))
    low, high = 8 * bouts, 182 - 8 * (3 - bouts)
    need = 2 * points_to_make(bouts)
    if chelem is A:
        low = max(low, need)
    elif chelem is D:
        high = min(high, need - 1)
    points = draw(st.integers(low, high))
    # Every card is an odd number of half points: at four players, and whenever a chelem fixes
    # the tricks, the cards the attack counts fix whether its points are whole.
    counted = 0 if contract is CONTRE else variant(players).chien_size
    tricks = {A: variant(players).tricks, D: 0}.get(chelem)
    if players == 4 or tricks is not None:
        if points % 2 != (players * (tricks or 0) + counted) % 2:
            points += 1 if points < high else -1
    attack_size = 2 if players == 5 and not alone else 1
    poignees: list[tuple[Camp, PoigneeSize]] = []
    trumps = 0
    for camp, seats in ((A, attack_size), (D, players - attack_size)):
        for _ in range(draw(st.integers(0, seats))):
            size = draw(st.sampled_from(list(PoigneeSize)))
            if trumps + variant(players).threshold(size) <= 22:
                trumps += variant(players).threshold(size)
                poignees.append((camp, size))
    petit_choices: list[Camp | None] = [None]
    if bouts > 0 and chelem is not D:
        petit_choices.append(A)
    if bouts < 3 and chelem is not A:
        petit_choices.append(D)
    return DealOutcome(
        players=players,
        contract=contract,
        attack_half_points=points,
        bouts=bouts,
        poignees=tuple(draw(st.permutations(poignees))),
        petit_au_bout=draw(st.sampled_from(petit_choices)),
        chelem_announced=draw(st.booleans()),
        chelem=chelem,
        alone=alone,
    )


@given(outcomes(), st.data())
def test_every_row_sums_to_zero(outcome: DealOutcome, data: st.DataObject) -> None:
    score = score_deal(outcome)
    n = outcome.players
    seats = data.draw(st.permutations(range(n)))
    partner = seats[1] if score.partner is not None else None
    row = score_row(score, n, seats[0], partner)
    assert sum(row) == 0
    assert score.defender == -score.unit
    assert row.count(score.defender) == n - outcome.attack_size or score.unit == 0
    # The sign of the base score follows the result; the bonuses never flip who "won" the deal.
    assert score.won == (outcome.attack_half_points >= 2 * points_to_make(outcome.bouts))
    assert all(isinstance(v, int) for v in row)


# ------------------------------------------------------------------ the score sheet


def test_penalty_row_sums_to_zero_and_costs_the_offender_exactly() -> None:
    four = ScoreSheet(["N", "S", "E", "O"])
    row = four.add_penalty(1)  # 100 among 3: 34 to the next seat in play order, then 33, 33
    assert row.scores == (33, -100, 34, 33)
    assert row.kind is RowKind.PENALTY and row.seat == 1 and row.label == "renonce"
    three = ScoreSheet(["a", "b", "c"])
    assert three.add_penalty(2).scores == (50, 50, -100)
    five = ScoreSheet(["a", "b", "c", "d", "e"])
    assert five.add_penalty(0, 100, "renonce at deal 3").scores == (-100, 25, 25, 25, 25)
    assert five.add_penalty(4, 7).scores == (2, 2, 2, 1, -7)
    with pytest.raises(ScoreSheetError, match="positive"):
        five.add_penalty(0, 0)
    with pytest.raises(ScoreSheetError, match="seat 0..4"):
        five.add_penalty(5)


def test_void_deal_is_a_row_of_zeros() -> None:
    sheet = ScoreSheet(["a", "b", "c"])
    sheet.add_void()
    sheet.add_void("Petit sec")
    assert [row.scores for row in sheet.rows] == [(0, 0, 0), (0, 0, 0)]
    assert sheet.totals() == [0, 0, 0]
    assert sheet.rows[1].kind is RowKind.VOID and sheet.rows[1].label == "Petit sec"


def test_sheet_refuses_rows_that_do_not_sum_to_zero() -> None:
    sheet = ScoreSheet(["a", "b", "c", "d"])
    with pytest.raises(ScoreSheetError, match="sums to 1"):
        sheet.add_deal([1, 0, 0, 0])
    with pytest.raises(ScoreSheetError, match="needs 4 scores"):
        sheet.add_deal([0, 0, 0])
    with pytest.raises(ScoreSheetError, match="played by 5 players"):
        sheet.add_outcome(DealOutcome(5, GARDE, hp("45"), 2), 0, 1)
    with pytest.raises(ScoreSheetError, match="3, 4 or 5 players"):
        ScoreSheet(["a", "b"])
    with pytest.raises(ScoreSheetError, match="non-empty"):
        ScoreSheet(["a", "", "c"])
    assert len(sheet) == 0


def test_sheet_json_round_trip() -> None:
    sheet = ScoreSheet(["Alice", "Bob", "Chloé", "Dan", "Émile"])
    sheet.add_outcome(DealOutcome(5, GARDE, hp("45"), 2), taker=2, partner=4)
    sheet.add_void()
    sheet.add_outcome(DealOutcome(5, SANS, hp("50"), 2, ((A, TRIPLE),), alone=True), taker=0, label="GS seul")
    sheet.add_penalty(3)
    text = sheet.to_json()
    again = ScoreSheet.from_json(text)
    assert again == sheet
    assert again.rows == sheet.rows
    assert again.totals() == sheet.totals() == [704 - 58 + 25, -58 - 176 + 25, 116 - 176 + 25, -58 - 176 - 100, 58 - 176 + 25]
    assert json.loads(text)["totals"] == sheet.totals()
    assert ScoreSheet.from_json(text.encode()) == sheet


def _corrupt(change: Any) -> str:
    sheet = ScoreSheet(["a", "b", "c", "d"])
    sheet.add_outcome(DealOutcome(4, GARDE, hp("49"), 2), 0)
    data = json.loads(sheet.to_json())
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not JSON"),
        ("[]", "expected a JSON object"),
        (_corrupt(lambda d: d.update(format="other")), "format"),
        (_corrupt(lambda d: d.update(version=99)), "version 99"),
        (_corrupt(lambda d: d.update(players=["a", "b"])), "3, 4 or 5 players"),
        (_corrupt(lambda d: d.update(rows={})), "'rows' must be a list"),
        (_corrupt(lambda d: d["rows"][0]["scores"].__setitem__(0, 1000)), "row 1: .*sums to"),
        (_corrupt(lambda d: d["rows"][0]["scores"].__setitem__(0, "198")), "row 1: scores are whole numbers"),
        (_corrupt(lambda d: d["rows"][0].update(kind="bonus")), "row 1: kind 'bonus'"),
        (_corrupt(lambda d: d["rows"][0].update(contract="grande")), "row 1: unknown contract"),
        (_corrupt(lambda d: d["rows"][0].pop("label")), "row 1: expected the keys"),
        (_corrupt(lambda d: d["rows"][0].update(seat=9)), "row 1: .*seat 0..3"),
        (_corrupt(lambda d: d.update(totals=[0, 0, 0, 0])), "totals"),
    ],
)
def test_corrupt_sheet_is_refused_clearly(text: str, message: str) -> None:
    with pytest.raises(ScoreSheetError, match="corrupt score sheet: .*" + message):
        ScoreSheet.from_json(text)


def test_deal_score_is_plain_data() -> None:
    assert DealScore(True, 0, 25, 75, None, -25) == score_deal(DealOutcome(4, PETITE, hp("41"), 2))
