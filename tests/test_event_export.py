"""The event's exports: the CSV of the ranking and the static page, in French and English,
every name escaped."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

import pytest
from test_event_record import Event, new_event  # the event played in one process

from protocol.event.event import DealStatus, EventRecord, verify_event
from protocol.event.export import LABELS, available, counted, event_html, ranking_csv
from protocol.event.movement import Movement
from protocol.event.ranking import Mark

NASTY = '<script>alert("x")</script> & Cie'
FORMULA = '=HYPERLINK("http://evil")'


@pytest.fixture(scope="module")
def event() -> Event:
    """13 players, two rounds; two of them with names that would do harm unescaped, one gone
    mid-round 2, one round left open with deals to come."""
    game = new_event(11, rounds=3, deals=2)
    game.enrol(NASTY)
    game.enrol(FORMULA)
    for round_ in (1, 2):
        game.open()
        for table in range(1, len(game.plan(round_).tables) + 1):
            members = game.seat_table(round_, table)
            for deal in (1, 2):
                if round_ == 2 and table == 1 and deal == 2:
                    row = game.row(
                        round_,
                        table,
                        deal,
                        members,
                        status=DealStatus.ABANDONED,
                        scores=(0,) * len(members),
                        silent=(2,),
                    )
                    game.sign(row, members, silent=(2,))
                else:
                    game.sign(game.row(round_, table, deal, members), members)
        game.close()
    game.open()  # round 3 open, nothing played yet
    return game


def test_the_csv_is_the_ranking(event: Event) -> None:
    report = event.report()
    rows = list(csv.reader(io.StringIO(ranking_csv(report, LABELS["en"]))))
    assert rows[0][:7] == [
        "Place",
        "Tied",
        "Player",
        "Fingerprint",
        "Total",
        "Rounds won",
        "Best round",
    ]
    assert rows[0][7:] == ["Round 1", "Round 1 mark", "Round 2", "Round 2 mark"]  # all named
    assert len(rows) == 1 + 13
    assert [int(row[4]) for row in rows[1:]] == [line.total for line in report.standings]
    assert sum(int(row[4]) for row in rows[1:]) == 0
    assert [(int(row[0]), row[1] == "yes") for row in rows[1:]] == [
        (line.place, line.tied) for line in report.standings
    ]  # the place a number, its tie a column of its own
    gone = next(row for row in rows[1:] if "abandoned" in row)
    assert gone[10] == "abandoned"


def test_the_csv_defuses_formulas_and_keeps_names(event: Event) -> None:
    text = ranking_csv(event.report(), LABELS["fr"])
    names = [row[2] for row in csv.reader(io.StringIO(text))][1:]
    assert "'" + FORMULA in names and NASTY in names
    assert not any(name.startswith("=") for name in names)
    assert text.splitlines()[0].startswith("Place,Ex æquo,Joueur,Empreinte,Total,Positions gagnées")


def test_the_page_escapes_every_name(event: Event) -> None:
    page = event_html(event.report(), LABELS["en"])
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Cie" in page
    assert page.count("&lt;script&gt;") >= 1 + 2  # the ranking and each round's plan


def test_the_page_is_self_contained_and_well_formed(event: Event) -> None:
    page = event_html(event.report(), LABELS["fr"])
    assert not re.search(r"\b(src|href)\s*=", page) and "@import" not in page and "url(" not in page
    checker = _Balance()
    checker.feed(page)
    assert checker.stack == [] and checker.errors == []
    assert '<html lang="fr">' in page and "font-size: 24px" in page and "@media print" in page


def test_the_page_shows_every_rounds_plan_the_results_and_the_ranking(event: Event) -> None:
    report = event.report()
    page = event_html(report, LABELS["fr"])
    for round_, plan in enumerate(report.plans, start=1):  # each with the movement that seated it
        assert f"Position {round_} ({LABELS['fr'][plan.movement.value]})" in page
    tables = sum(len(plan.tables) for plan in report.plans)
    assert page.count("<caption>Table ") == tables
    assert "Classement après la position 2" in page and "abandon" in page
    assert "En cours : 6 donnes attendues" in page  # round 3: three tables of two deals
    assert "3 positions de 2 donnes" in page
    for line in report.standings:
        assert f'<td class="num total">{line.total}</td>' in page
    assert "Chaque donne est signée" in page


def test_a_record_with_faults_says_so_on_the_page(event: Event) -> None:
    broken = verify_event(EventRecord(event.record.entries[:-3] + event.record.entries[-2:]))
    assert not broken.ok
    page = event_html(broken, LABELS["en"])
    assert "Faults found" in page and "cannot be certified" in page


def test_both_languages_have_the_same_labels() -> None:
    assert set(LABELS["fr"]) == set(LABELS["en"])
    assert all(mark.value in LABELS["fr"] for mark in Mark)
    assert available("en") is LABELS["en"]
    with pytest.raises(ValueError):
        available("de")


class _Balance(HTMLParser):
    """Every element closed in order (the void ones aside)."""

    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def test_the_page_says_the_movement_that_seated_the_rounds() -> None:
    """The FFT's movement asked for eight players of two rounds, which seats them at random:
    the page says so, not "FFT"; and one deal is singular."""
    game = new_event(8, rounds=2, deals=1)
    game.open()
    report = game.report()
    assert [plan.movement for plan in report.plans] == [Movement.RANDOM]
    page = event_html(report, LABELS["en"])
    assert "Movement: random (FFT asked)" in page and "Movement: FFT" not in page
    assert "2 rounds of 1 deal " in page and "1 deals" not in page
    assert "Mouvement : aléatoire (FFT demandé)" in event_html(report, LABELS["fr"])


def test_one_deal_and_one_round_are_singular() -> None:
    for lang, words in (
        ("en", ("1 round", "1 deal", "2 deals")),
        ("fr", ("1 position", "1 donne", "2 donnes")),
    ):
        labels = LABELS[lang]
        assert (counted(labels, "rounds", 1), counted(labels, "deals", 1)) == words[:2]
        assert counted(labels, "deals", 2) == words[2]
