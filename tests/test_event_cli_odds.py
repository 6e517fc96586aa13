"""The event's odds and ends on the command line (issue 37, finding 7): the ranking of
``tarot event show`` has column headers; "1 round", "1 deal", "deal 3 to come" in the
singular; ``--lang`` and ``--home`` taken after the action; ``tarot status`` counts deals
from 1, as the client does — in French and English.  Without a daemon."""

from __future__ import annotations

from typing import Any

import pytest
from test_tui_app import _event_summary

from client import event_cmd, status_cmd
from client.cli import build_parser
from client.tui.i18n import _TEXT as CATALOGUE
from client.tui.i18n import LANGUAGES, Texts


@pytest.mark.parametrize(
    ("lang", "heads"),
    [
        ("en", ["Pl.", "Player", "Total", "Key", "R1"]),
        ("fr", ["Pl.", "Joueur", "Total", "Clé", "P1"]),
    ],
)
def test_the_ranking_has_column_headers(lang: str, heads: list[str]) -> None:
    lines = event_cmd.screen(_event_summary(), lang, "aaaa")
    at = lines.index(Texts(lang)("event_ranking"))
    assert lines[at + 1].split() == heads
    first = lines[at + 2]
    assert first.index("anne") == lines[at + 1].index(heads[1])  # the names under their header
    assert first.rstrip().endswith("+300") and lines[at + 1].rstrip().endswith(heads[-1])


@pytest.mark.parametrize(
    ("lang", "shape", "awaited"),
    [
        ("en", "2 rounds of 1 deal,", "table 2: deal 3 to come"),
        ("fr", "2 positions de 1 donne,", "table 2 : donne 3 à venir"),
    ],
)
def test_one_deal_is_singular(lang: str, shape: str, awaited: str) -> None:
    event = _event_summary(rounds=2, deals=1, pending=[[2, 2, 3]])
    text = "\n".join(event_cmd.screen(event, lang))
    assert shape in text and awaited in text, text
    assert "1 deals" not in text and "1 donnes" not in text


def test_lang_and_home_after_the_action() -> None:
    parser = build_parser()
    args = parser.parse_args(["event", "show", "--lang", "fr", "--home", "/tmp/h", "abc"])
    assert (args.lang, str(args.home), args.event) == ("fr", "/tmp/h", "abc")
    args = parser.parse_args(["--lang", "en", "event", "show"])
    assert args.lang == "en"  # before the action, as before
    args = parser.parse_args(["--lang", "en", "event", "list", "--lang", "fr"])
    assert args.lang == "fr"
    args = parser.parse_args(["event", "export", "--csv", "x.csv", "--lang", "fr"])
    assert args.lang == "fr"


def test_status_counts_deals_from_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status = {
        "name": "moi",
        "fingerprint": "aaaa-bbbb",
        "endpoint": "tcp://127.0.0.1:1",
        "curve": True,
        "key": "k",
        "peers": [],
        "tables": [
            {
                "table": "ab" * 16,
                "seats": ["moi", "anne", "bruno"],
                "deal": 0,
                "scored": 0,
                "waiting_for": [],
                "unsettled": True,
            }
        ],
    }

    async def ask(home: Any, op: str, **params: Any) -> Any:
        return status

    monkeypatch.setattr(status_cmd, "ask", ask)
    assert status_cmd.run(build_parser().parse_args(["--home", "/tmp/h", "status"])) == 0
    out = capsys.readouterr().out
    assert "— deal 1, 0 scored" in out and "deal 1 unsettled here" in out, out


def test_both_languages_have_the_new_words() -> None:
    fr, en = (set(CATALOGUE[lang]) for lang in LANGUAGES)
    assert fr == en
    for lang in LANGUAGES:
        texts = Texts(lang)
        assert texts.counted("rounds", 2) != texts.counted("rounds", 1)


@pytest.mark.parametrize(("lang", "said"), [("en", ", 1 player"), ("fr", ", 1 joueur")])
def test_one_player_is_singular(lang: str, said: str) -> None:
    from client.tui.event import event_line

    line = event_line(
        Texts(lang),
        {
            "name": "x",
            "organiser": "aaaa-bbbb",
            "role": "player",
            "players": 1,
            "closed": 0,
            "rounds": 2,
        },
    )
    assert said in line and f"{said}s" not in line, line
    shown = "\n".join(
        event_cmd.screen(_event_summary(players=[{"name": "anne", "fingerprint": "x"}]), lang)
    )
    assert (
        "1 inscrit :" if lang == "fr" else "1 registered:"
    ) in shown and "1 inscrits" not in shown
