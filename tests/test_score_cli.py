"""``tarot score``: the FFT examples through the command line, its plain and JSON output, and
one-line usage errors with exit status 2.  ``tarot scores``: every row of the sheet shown,
penalty rows included, so that the totals are the sum of the lines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from client.cli import main
from client.simulation import Cheat, honest_seat, play_one_deal, sim_table
from protocol.rules.scoring import ScoreSheet
from tarotd.runner import deal_result

ROOT = Path(__file__).resolve().parent.parent

# The five worked examples of the FFT rulebook (4 players): arguments, then the JSON expected.
FFT_EXAMPLES: list[tuple[list[str], dict[str, object]]] = [
    # Garde, 49 with 2 bouts, poignée and Petit au bout by the taker: (25+8)·2 + 20 + 20 = 106
    (
        (
            "--players 4 --contract garde --bouts 2 --points 49 --poignee attack:simple "
            "--petit-au-bout attack"
        ).split(),
        {"won": True, "difference": 8, "taker": 318, "partner": None, "defender": -106},
    ),
    # Garde Sans won by 4, Petit au bout by the defence: (25+4)·4 − 40 = 76
    (
        "--players 4 --contract garde-sans --bouts 2 --points 45 --petit-au-bout defence".split(),
        {"won": True, "difference": 4, "taker": 228, "partner": None, "defender": -76},
    ),
    # Prise lost by 7, poignée and Petit au bout by the taker: −(25+7) − 20 + 10 = −42
    (
        (
            "--players 4 --contract petite --bouts 1 --points 44 --poignee attack:simple "
            "--petit-au-bout attack"
        ).split(),
        {"won": False, "difference": 7, "taker": -126, "partner": None, "defender": 42},
    ),
    # Garde won by 11, poignée by the defence: (25+11)·2 + 20 = 92
    (
        "--players 4 --contract garde --bouts 2 --points 52 --poignee defence:simple".split(),
        {"won": True, "difference": 11, "taker": 276, "partner": None, "defender": -92},
    ),
    # Garde, chelem announced and made, 87 with 2 bouts: (25+46)·2 + 20 + 20 + 400 = 582
    (
        "--players 4 --contract garde --bouts 2 --points 87 --poignee attack:simple "
        "--petit-au-bout attack --chelem attack --chelem-announced".split(),
        {"won": True, "difference": 46, "taker": 1746, "partner": None, "defender": -582},
    ),
]

# 3- and 5-player deals through the command line (derivations in tests/test_scoring.py).
OTHER_TABLES: list[tuple[list[str], dict[str, object]]] = [
    # 3p garde contre, 3 bouts, 35.5 → lost by 1: u = −26·6 = −156, taker 2u
    (
        "--players 3 --contract garde-contre --bouts 3 --points 35.5".split(),
        {"won": False, "difference": 1, "taker": -312, "partner": None, "defender": 156},
    ),
    # 3p garde sans, 3 bouts, 91, chelem unannounced, Petit au bout: 80·4 + 40 + 200 = 560
    (
        (
            "--players 3 --contract garde-sans --bouts 3 --points 91 --chelem attack "
            "--petit-au-bout attack"
        ).split(),
        {"won": True, "difference": 55, "taker": 1120, "partner": None, "defender": -560},
    ),
    # 5p garde, 2 bouts, 45: u = 29·2 = 58; taker 2u, partner u
    (
        "--players 5 --contract garde --bouts 2 --points 45".split(),
        {"won": True, "difference": 4, "taker": 116, "partner": 58, "defender": -58},
    ),
    # 5p garde alone, 2 bouts, 40.5 → lost by 1: u = −52; taker 4u, no partner
    (
        "--players 5 --contract garde --bouts 2 --points 40.5 --alone".split(),
        {"won": False, "difference": 1, "taker": -208, "partner": None, "defender": 52},
    ),
    # 5p garde, 2 bouts, 41.5 → won by 1, Petit au bout by the defence: 26·2 − 20 = 32
    (
        "--players 5 --contract garde --bouts 2 --points 41.5 --petit-au-bout defence".split(),
        {"won": True, "difference": 1, "taker": 64, "partner": 32, "defender": -32},
    ),
    # 5p garde, 2 bouts, 55, chelem announced and failed: 39·2 − 200 = −122
    (
        "--players 5 --contract garde --bouts 2 --points 55 --chelem-announced".split(),
        {"won": True, "difference": 14, "taker": -244, "partner": -122, "defender": 122},
    ),
    # 5p garde alone, 1 bout (the Excuse, kept), 6.5 (with the écart of 3), the defence took
    # every trick: −70·2 − 200 = −340
    (
        "--players 5 --contract garde --bouts 1 --points 6.5 --alone --chelem defence".split(),
        {"won": False, "difference": 45, "taker": -1360, "partner": None, "defender": 340},
    ),
    # 5p garde, 1 bout, 55, poignées of both camps (both to the winner): 29·2 + 20 + 20 = 98
    (
        (
            "--players 5 --contract garde --bouts 1 --points 55 --poignee defence:simple "
            "--poignee attack:simple"
        ).split(),
        {"won": True, "difference": 4, "taker": 196, "partner": 98, "defender": -98},
    ),
]


def _json_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["score", *argv, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.count("\n") == 1  # exactly one object, on one line
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("argv, expected", FFT_EXAMPLES + OTHER_TABLES)
def test_json(
    argv: list[str], expected: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json_of(argv, capsys)
    assert data == expected
    assert list(data) == ["won", "difference", "taker", "partner", "defender"]


def test_plain_output_of_the_first_fft_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", *FFT_EXAMPLES[0][0]]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert err == ""
    assert "won by 8 points" in lines[0] and "gagné de 8 points" in lines[0]
    assert lines[1:] == ["Preneur (taker): +318", "Défenseur (each defender): -106"]


def test_plain_output_lost_with_partner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("score --players 5 --contract garde-sans --bouts 2 --points 40.5".split()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "lost by 1 point" in lines[0] and "40.5 / 41" in lines[0]
    assert lines[1:] == [
        "Preneur (taker): -208",
        "Partenaire (partner): -104",
        "Défenseur (each defender): +104",
    ]


def test_plain_output_juste_fait_and_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("score --players 5 --contract petite --bouts 1 --points 51 --alone".split()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "juste fait" in lines[0]
    assert lines[1:] == ["Preneur seul (taker alone): +100", "Défenseur (each defender): -25"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.mark.daemons
def test_subprocess_python_m(tmp_path: Path) -> None:
    """The real process: exit status, stdout and stderr as a shell sees them."""
    argv, expected = FFT_EXAMPLES[4]
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", "score", *argv, "--json"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == expected
    bad = subprocess.run(
        [sys.executable, "-m", "client.cli", "score", *argv, "--contract", "grande"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("tarot score: error: ")
    assert "petite, garde, garde-sans, garde-contre" in bad.stderr


@pytest.mark.daemons
def test_console_script() -> None:
    script = shutil.which("tarot", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip(
            "the `tarot` console script is not installed (pip install -e .); "
            "test_subprocess_python_m covers the same process"
        )
    argv, expected = FFT_EXAMPLES[0]
    done = subprocess.run(
        [script, "score", *argv, "--json"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == expected


# ------------------------------------------------------------------ errors

BASE = "score --players 4 --contract garde --bouts 2 --points 49".split()


@pytest.mark.parametrize(
    "argv, allowed",
    [
        (
            ["score", "--players", "4", "--contract", "prise", "--bouts", "2", "--points", "49"],
            ["petite", "garde", "garde-sans", "garde-contre"],
        ),
        ([*BASE, "--petit-au-bout", "taker"], ["attack", "defence"]),
        ([*BASE, "--poignee", "taker:simple"], ["attack", "defence"]),
        ([*BASE, "--poignee", "attack:quadruple"], ["simple", "double", "triple"]),
        (
            [*BASE, "--poignee", "attack"],
            ["CAMP:SIZE", "attack", "defence", "simple", "double", "triple"],
        ),
        (
            ["score", "--players", "4", "--contract", "garde", "--bouts", "2", "--points", "40.3"],
            ["0 to 91", ".5"],
        ),
        (
            ["score", "--players", "4", "--contract", "garde", "--bouts", "2", "--points", "40,5"],
            ["dot", "0 to 91", ".5"],
        ),
        (
            ["score", "--players", "4", "--contract", "garde", "--bouts", "2", "--points", "92"],
            ["0 to 91"],
        ),
        (
            ["score", "--players", "4", "--contract", "garde", "--bouts", "2", "--points", "-1"],
            ["0 to 91"],
        ),
        ([*BASE, "--alone"], ["5 players"]),
        (
            ["score", "--players", "4", "--contract", "garde", "--bouts", "4", "--points", "49"],
            ["0, 1, 2 or 3"],
        ),
        (
            ["score", "--players", "6", "--contract", "garde", "--bouts", "2", "--points", "49"],
            ["3, 4 or 5"],
        ),
        ([*BASE, "--chelem", "yes"], ["attack", "defence", "--chelem-announced"]),
        (["score", "--players", "4"], ["--contract", "--bouts", "--points"]),
        ([*BASE, "--chelem", "defence"], ["every trick", "0 or 1 bout"]),  # the écart holds no bout
    ],
)
def test_errors_are_one_line_with_status_2(
    argv: list[str], allowed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("tarot score: error: "), err
    for word in allowed:
        assert word in err, (word, err)


@pytest.mark.daemons
def test_no_command_opens_the_game_and_without_a_daemon_says_how_to_start_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--home", str(tmp_path), "--lang", "en"]) == 1
    err = capsys.readouterr().err
    assert "Start one first" in err and "Traceback" not in err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--help"]) == 0
    assert "--petit-au-bout" in capsys.readouterr().out


def test_a_chelem_announced_and_suffered_pays_both_penalties(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # « Chelem annoncé mais non réalisé : 200 points sont déduits du total. » and « Paradoxalement,
    # il arrive que la défense inflige un Chelem au déclarant. Dans ce cas, chaque défenseur
    # reçoit, en plus de la marque normale, une prime de 200 points. »  4p garde, 0 bouts, 3
    # points (the écart): lost by 53, u = −(25+53)·2 − 200 − 200 = −556; the taker 3u.
    argv = (
        "--players 4 --contract garde --bouts 0 --points 3 --chelem defence --chelem-announced"
    ).split()
    assert _json_of(argv, capsys) == {
        "won": False,
        "difference": 53,
        "taker": -1668,
        "partner": None,
        "defender": 556,
    }


@pytest.mark.parametrize(
    "argv, reason",
    [
        # At four the attack counts tricks of 4 cards and an écart or chien of 6 (or none): an
        # even number of cards, which the rulebook counts « deux par deux », a whole point a pair.
        (
            "--players 4 --contract garde --bouts 2 --points 40.5",
            "its tricks of 4 cards and the écart of 6",
        ),
        (
            "--players 4 --contract garde-contre --bouts 2 --points 45.5",
            "its tricks of 4 cards (the chien goes",
        ),
        # At three, a chelem is all 24 tricks of 3 cards and the chien of 6: 78 cards.
        (
            "--players 3 --contract garde-sans --bouts 3 --points 90.5 --chelem attack",
            "all 24 tricks of 3 cards",
        ),
        # At five, a Garde Contre made in a chelem is all 15 tricks of 5 cards: 75 cards, and a
        # chelem of the defence leaves the attack the 3 cards of its écart.
        ("--players 5 --contract garde-contre --bouts 3 --points 91 --chelem attack", "end in .5"),
        (
            "--players 5 --contract garde --bouts 1 --points 6 --chelem defence",
            "no trick and the écart of 3",
        ),
    ],
)
def test_points_no_pile_can_hold_are_refused_saying_why(
    argv: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # « Valeur de chaque carte : 1 Oudler […] 4,5 points, 1 Roi 4,5 points, 1 Dame 3,5 points,
    # 1 Cavalier 2,5 points, 1 Valet 1,5 point, Toute autre carte 0,5 point »: every card is a
    # whole number of points and a half, so the points are whole with an even number of cards.
    assert main(["score", *argv.split()]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err, err
    assert "worth a whole number of points and a half" in err


@pytest.mark.parametrize(
    "argv",
    [
        "--players 3 --contract garde --bouts 2 --points 40.5",
        "--players 5 --contract garde --bouts 2 --points 40.5",
        "--players 5 --contract garde-contre --bouts 3 --points 89.5 --chelem attack",
        "--players 5 --contract garde --bouts 1 --points 5.5 --chelem defence --chelem-announced",
    ],
)
def test_half_points_where_a_pile_can_hold_them(
    argv: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", *argv.split(), "--json"]) == 0


@pytest.mark.parametrize(
    "argv, reason",
    [
        # « On ne peut Ecarter ni Roi, ni Bout »: a defence chelem leaves the attack its écart
        (
            "--players 4 --contract garde --bouts 0 --points 30 --chelem defence",
            "counts only its écart of 6 cards, which holds no king and no bout, and its own Excuse",
        ),
        (
            "--players 4 --contract garde --bouts 3 --points 30 --chelem defence",
            "holds 0 or 1 bout, not 3",
        ),
        # « Sur une Garde contre le Chien, elles sont […] comptabilisées avec les levées de la
        # Défense »
        (
            "--players 4 --contract garde-contre --bouts 0 --points 3 --chelem defence",
            "exactly 0 points, not 3",
        ),
        (
            "--players 4 --contract garde-contre --bouts 1 --points 10 --chelem defence",
            "exactly 4 points, not 10",
        ),
        # « Réussir le CHELEM, c'est gagner toutes les levées »: every card but the defence's Excuse
        (
            "--players 4 --contract garde --bouts 1 --points 80 --chelem attack",
            "holds 2 or 3 bouts, not 1",
        ),
        (
            "--players 4 --contract garde --bouts 2 --points 80 --chelem attack",
            "exactly 87 points, not 80",
        ),
        (
            "--players 5 --contract garde-sans --bouts 3 --points 89 --chelem attack",
            "exactly 91 points, not 89",
        ),
        (
            "--players 4 --contract garde-contre --bouts 3 --points 60 --chelem attack",
            "the defence has only the chien of 6 cards",
        ),
        # without a chelem each camp took a trick: 3 bouts and the écart are 17 points at least
        ("--players 4 --contract garde --bouts 3 --points 16", "between 17 and 89 points, not 16"),
        ("--players 4 --contract garde --bouts 0 --points 78", "between 5 and 77 points, not 78"),
        (
            "--players 4 --contract garde-contre --bouts 0 --points 0",
            "the defence at least 1 trick of 4 cards and the chien",
        ),
        ("--players 5 --contract garde --bouts 0 --points 4.5", "at least 2 tricks of 5 cards"),
        # the Petit and the 21 in a chien nobody held cannot be shown
        (
            "--players 5 --contract garde-sans --bouts 3 --points 13.5 --chelem defence "
            "--poignee attack:simple --poignee defence:triple",
            "which no player held",
        ),
        # « La Poignée doit comprendre effectivement DIX, TREIZE, QUINZE Atouts »: 2 × 13 > 22
        (
            "--players 5 --contract garde --bouts 2 --points 50 --poignee attack:triple --poignee "
            "defence:triple",
            "26 trumps",
        ),
        (
            "--players 3 --contract garde --bouts 2 --points 50 --poignee attack:simple --poignee "
            "defence:simple",
            "26 trumps",
        ),
    ],
)
def test_deals_that_cannot_happen_are_refused_saying_why(
    argv: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", *argv.split()]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("tarot score: error: "), err
    assert reason in err, err


@pytest.mark.parametrize(
    "argv, expected",
    [
        # the last counts a deal reaches are scored: an écart of 4 queens and 2 cavaliers, lost by
        # 37: u = −(25+37)·2 − 200 = −324
        (
            "--players 4 --contract garde --bouts 0 --points 19 --chelem defence",
            {"won": False, "difference": 37, "taker": -972, "partner": None, "defender": 324},
        ),
        # the attack's Excuse kept in the defence's chelem at Garde Contre: 4 points, lost by 47:
        # u = −(25+47)·6 − 200 = −632
        (
            "--players 4 --contract garde-contre --bouts 1 --points 4 --chelem defence",
            {"won": False, "difference": 47, "taker": -1896, "partner": None, "defender": 632},
        ),
        # 3 bouts in one trick with the écart's low cards: 17 points, lost by 19: u = −44
        (
            "--players 4 --contract petite --bouts 3 --points 17",
            {"won": False, "difference": 19, "taker": -132, "partner": None, "defender": 44},
        ),
    ],
)
def test_the_bounds_themselves_are_scored(
    argv: str, expected: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _json_of(argv.split(), capsys) == expected


# -- tarot scores: the sheet of scores.json as text


def _scores_text(
    home: Path, document: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """``tarot scores`` on ``document`` written as the daemon's ``scores.json``."""
    home.mkdir(exist_ok=True)
    (home / "scores.json").write_text(json.dumps(document, ensure_ascii=False))
    assert main(["--home", str(home), "scores"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out.splitlines()


def _scores_of(line: str, players: int) -> list[int]:
    """The score columns of a line of the sheet (the 11 columns each after its label)."""
    return [int(line[17 + 11 * seat : 28 + 11 * seat]) for seat in range(players)]


def _adds_up(lines: list[str], players: int) -> None:
    """Every line between the names and ``total`` is a row, and the totals are their sum."""
    assert lines[-1].startswith("total")
    rows = [_scores_of(line, players) for line in lines[2:-1]]
    assert all(sum(row) == 0 for row in rows), lines
    assert _scores_of(lines[-1], players) == [sum(column) for column in zip(*rows, strict=True)]


@pytest.mark.heavy
def test_the_sheet_of_real_deals_shows_each_penalty_row_and_a_scored_deal_as_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tarot sim``'s deals, put on a sheet as a daemon does (tarotd/runner.py ``_record``):
    bot-2 keeps its seed after its last card (scored, then penalised), then bot-1 revokes
    (proven, penalised).  Before, neither penalty row was shown, so the totals were not the
    sum of the rows, and the first deal read ``abandoned``."""
    table, identities = sim_table(3, 0)
    sheet = ScoreSheet(list(table.names))
    deals = []
    for number, cheat in enumerate((Cheat(2, "withhold-reveal"), Cheat(1, "revoke"))):
        dealer = number % 3
        machines = play_one_deal(table, identities, number, dealer, number, ["basic"], cheat)
        audit = honest_seat(machines, cheat).audit
        assert audit is not None and audit.outcome is not None and audit.penalised == (cheat.seat,)
        sheet.add_deal(list(audit.scores))
        audit.charge(sheet)
        deals.append(deal_result(number, dealer, audit))
    document = {"table": "club", "seats": list(table.names), "deals": deals}
    lines = _scores_text(tmp_path, {**document, "totals": sheet.totals()}, capsys)
    assert len(lines) == 2 + len(sheet.rows) + 1, lines
    _adds_up(lines, 3)
    assert [_scores_of(line, 3) for line in lines[2:-1]] == [list(r.scores) for r in sheet.rows]
    assert lines[2].startswith("  1  petite") and "abandoned" not in lines[2]
    assert (
        "scored: bot-2 did not reveal its seed (unproven: reported silent by bot-0, bot-1)"
        in lines[2]
    )
    assert lines[3].startswith("     penalty") and lines[3].endswith(
        "bot-2: did not reveal its seed"
    )
    assert "cheating proven: bot-1 (renonce: " in lines[4]
    assert lines[5].startswith("     penalty") and "bot-1: renonce: " in lines[5]


#: A hand-built sheet at four: a deal, one abandoned by carol under a table whose rule makes a
#: silence cost the penalty row, and a deal that passed out.
HAND_BUILT: dict[str, object] = {
    "table": "club",
    "seats": ["alice", "bob", "carol", "dave"],
    "deals": [
        {
            "deal": 0,
            "contract": "garde",
            "scores": [-58, 174, -58, -58],
            "penalties": [],
            "audit": "ok",
            "breakdown": {
                "score": {"attack_half_points": 90, "needed": 41, "won": True, "difference": 4}
            },
        },
        {
            "deal": 1,
            "contract": None,
            "scores": [0, 0, 0, 0],
            "penalties": [2],
            "audit": {
                "culprit": 2,
                "step": "play",
                "rule": "stopped answering at the play step",
                "evidence": [],
                "fault": "silence",
                "reported_by": [0, 1, 3],
            },
            "breakdown": None,
        },
        {"deal": 2, "contract": None, "scores": [0, 0, 0, 0], "penalties": [], "audit": "ok"},
    ],
    "totals": [-25, 207, -158, -24],
}


def test_a_hand_built_sheet_with_a_penalty_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scores_text(tmp_path, HAND_BUILT, capsys) == [
        "Table club",
        "                       alice        bob      carol       dave",
        "  1  garde               -58       +174        -58        -58  45/41 made by 4",
        "  2  —                    +0         +0         +0         +0  abandoned: carol stopped "
        "answering at the play step (unproven: reported silent by alice, bob, dave)",
        "     penalty             +33        +33       -100        +34  carol: stopped answering "
        "at the play step",
        "  3  —                    +0         +0         +0         +0",
        "total                    -25       +207       -158        -24",
    ]


def test_a_sheet_whose_totals_are_not_its_rows_is_one_line_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scores.json").write_text(
        json.dumps({**HAND_BUILT, "totals": [-58, 174, -58, -58]})
    )
    assert main(["--home", str(tmp_path), "scores"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "its rows add up to [-25, 207, -158, -24], but its totals are [-58, 174" in err
    assert "tarot scores --json" in err
