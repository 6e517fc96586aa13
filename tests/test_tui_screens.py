"""The client's screens drawn from a seat's state, without a daemon: the seats counter-clockwise,
the trick in front of who played it, the log with the partner and the petit au bout, the
score sheet with a cheater's verdict and where its proof is, in French and English."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_toolkit.formatted_text import fragment_list_to_text

from client.tui.i18n import Texts
from client.tui.journal import deal_log
from client.tui.lobby import lobby_fragments
from client.tui.model import Model
from client.tui.sheet import sheet_fragments
from client.tui.table import table_fragments

NAMES = ["ana", "bob", "cid", "dan", "eve"]


def state(**view: Any) -> dict[str, Any]:
    base = {
        "seat": 0,
        "players": 5,
        "dealer": 4,
        "phase": "playing",
        "to_act": 2,
        "hand": ["KS"],
        "bids": [],
        "taker": 1,
        "contract": "garde",
        "called": "KH",
        "partner": None,
        "chien": [],
        "ecart": [],
        "chelem": False,
        "poignees": [],
        "tricks": [],
        "current": [],
        "leader": 0,
        "legal": [],
    }
    return {
        "table": "ab" * 16,
        "name": "club",
        "seats": NAMES,
        "fingerprints": [f"{i}{i}{i}{i}-0000-0000-0000" for i in range(5)],
        "seat": 0,
        "deal": 2,
        "dealer": 4,
        "view": {**base, **view},
        "waiting_for": [2],
        "away": [],
        "decision": None,
        "options": None,
        "between_deals": False,
        "finished": False,
        "scores": [0] * 5,
        "results": [],
    }


def model(lang: str, data: dict[str, Any]) -> Model:
    m = Model(Texts(lang), Path("/home/ana/.local/share/tarot"))
    m.update(data)
    return m


def test_the_seats_sit_counter_clockwise_with_the_trick_in_front_of_them() -> None:
    lines = fragment_list_to_text(
        table_fragments(model("en", state(current=["7H", "QH"], leader=0)))
    ).splitlines()
    row = {
        name: next(
            i for i, line in enumerate(lines) if f"{name} [" in line or f"{name} (you) [" in line
        )
        for name in NAMES
    }
    col = {
        name: max(lines[row[name]].find(f"{name} ["), lines[row[name]].find(f"{name} (you)"))
        for name in NAMES
    }
    assert row["ana"] == max(row.values())  # the player at the bottom
    assert col["bob"] > col["ana"] and row["bob"] < row["ana"]  # the next to play on the right
    # across, right then left
    assert row["cid"] == row["dan"] == min(row.values()) and col["cid"] > col["dan"]
    assert col["eve"] < col["ana"] and row["eve"] == row["bob"]  # the one before on the left
    assert "▶ cid" in lines[row["cid"]]  # who is to play
    ana_card = next(i for i, line in enumerate(lines) if "7♥" in line)
    assert row["bob"] < ana_card < row["ana"]  # ana's card, in front of her
    # bob's, on the right
    assert "Q♥" in lines[row["bob"] + 2] and lines[row["bob"] + 2].index("Q♥") > col["ana"]
    # French words in English
    assert "preneur Garde" in lines[row["bob"] + 1] and "called: K♥" in "\n".join(lines)


def test_the_log_tells_the_partner_and_the_petit_au_bout() -> None:
    tricks = (
        [{"leader": 0, "cards": ["2S", "KH", "3S", "4S", "5S"], "winner": 1}]
        + [{"leader": 1, "cards": ["2C", "3C", "4C", "5C", "6C"], "winner": 1}] * 13
        + [{"leader": 1, "cards": ["T1", "3D", "4D", "5D", "6D"], "winner": 1}]
    )
    data = state(
        tricks=tricks,
        partner=1,
        bids=[{"seat": 1, "contract": "garde"}, {"seat": 2, "contract": None}],
    )
    log = deal_log(model("fr", data))
    assert log[:3] == ["Donne 3, donneur : eve", "bob : Garde", "cid passe"]
    assert "bob appelle le Roi de cœur" in log and "Le partenaire est bob" in log
    assert (
        log[-1] == "Petit au bout pour bob"
        and "Pli 15 pour bob : bob 1, cid 3♦, dan 4♦, eve 5♦, ana 6♦" in log
    )  # who played each card
    assert "Pli 1 pour bob : ana 2♠, bob R♥, cid 3♠, dan 4♠, eve 5♠" in log


def test_the_score_sheet_names_a_cheater_and_where_the_proof_is() -> None:
    data = state()
    data["between_deals"] = True
    data["results"] = [
        {
            "deal": 0,
            "dealer": 4,
            "contract": "garde",
            "taker": 1,
            "scores": [-50, 100, -50, 50, -50],
            "penalty": None,
            "audit": "ok",
        },
        {
            "deal": 1,
            "dealer": 0,
            "contract": None,
            "taker": None,
            "scores": [25, 25, -100, 25, 25],
            "penalty": 2,
            "audit": {
                "culprit": 2,
                "step": "deal-keys",
                "rule": "a key does not open its position",
                "evidence": ["ab12"],
            },
        },
    ]
    data["scores"] = [-25, 125, -150, 75, -25]
    for lang, words in (
        (
            "en",
            [
                "Score sheet",
                "Garde (bob)",
                "void deal",
                "Cheating proven in deal 2: cid",
                "/home/ana/.local/share/tarot/tarot.db",
            ],
        ),
        (
            "fr",
            [
                "Feuille de marque",
                "donne nulle",
                "Tricherie prouvée à la donne 2 : cid",
                "« distribution des clés » : une clé n'ouvre pas sa position",
                "tarot audit",
            ],
        ),
    ):
        text = fragment_list_to_text(sheet_fragments(model(lang, data)))
        assert all(word in text for word in words), text
        assert "-150" in text and "+125" in text


def test_a_table_paused_by_our_own_full_disk_says_so_and_that_nothing_is_lost() -> None:
    """The daemon's ``state`` says ``paused`` when its own disk is full: the player reads it
    above the table, in either language, rather than a silent table."""
    data = {**state(), "paused": {"fault": "disk-full", "seconds": 7.2}}
    for lang, words in (
        ("en", ["Your daemon's disk is full (for 7 s)", "goes on by itself", "nothing is lost"]),
        (
            "fr",
            [
                "Le disque de votre démon est plein (depuis 7 s)",
                "reprend d'elle-même",
                "rien n'est perdu",
            ],
        ),
    ):
        text = fragment_list_to_text(table_fragments(model(lang, data)))
        assert all(word in text for word in words), text


def test_a_member_away_is_shown_with_the_key_to_go_on_without_it() -> None:
    data = {**state(), "away": [{"seat": 3, "seconds": 41.0}]}
    for lang, words in (
        ("en", ["dan has not answered for 41 s", "w: go on without them"]),
        ("fr", ["dan ne répond plus depuis 41 s", "w : continuer sans"]),
    ):
        text = fragment_list_to_text(table_fragments(model(lang, data)))
        assert all(word in text for word in words), text


def test_the_lobby_shows_a_table_whose_silence_costs_the_penalty() -> None:
    for lang, words in (
        ("en", "a player silent before the reveal takes the 100-point penalty"),
        ("fr", "un joueur muet avant la révélation paie la pénalité de 100 points"),
    ):
        m = model(lang, {**state(), "table": None})
        m.tables = [
            {
                "table": "cd" * 16,
                "name": "strict",
                "seats": 3,
                "members": ["bob"],
                "state": "open",
                "silence": "penalty",
            },
            {
                "table": "ef" * 16,
                "name": "club",
                "seats": 3,
                "members": ["cid"],
                "state": "open",
                "silence": "nothing",
            },
        ]
        lines = fragment_list_to_text(lobby_fragments(m)).splitlines()
        assert words in next(line for line in lines if "strict" in line)
        assert words not in next(line for line in lines if "club" in line)
