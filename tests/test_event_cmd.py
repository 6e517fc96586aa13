"""``tarot event`` and ``tarot audit EVENT`` (client/event_cmd.py): the screens and the audit
from a record made in one process, and the command line's mistakes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from client.cli import main
from client.event_cmd import audit_event, is_event_file, screen
from protocol.event.event import EventConfig, EventRecord, open_event, register
from protocol.event.movement import Movement
from protocol.replication.identity import Identity


def identity(name: str) -> Identity:
    return Identity.from_private_bytes(hashlib.sha256(name.encode()).digest())


def small_record() -> EventRecord:
    organiser = identity("organiser")
    config = EventConfig(b"n" * 16, "Club", organiser.public_key, 2, 2, 4, Movement.RANDOM)
    record = open_event(organiser, config)
    for name in ("Ana", "Bo", "Cy"):
        record = record.append(register(identity(name), config.event_id, name))
    return record


def test_audit_of_an_event_record_holds_and_lists_the_players(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = small_record().to_bytes()
    assert is_event_file(data) and not is_event_file(b"\x92\xc4\x05tarot")
    assert audit_event(data) == 0
    out = capsys.readouterr().out
    assert "the record holds" in out and "3 players, 0 of 2 rounds closed" in out and "Bo [" in out


def test_audit_names_a_registration_for_another_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = small_record()
    forged = register(identity("Eve"), bytes(16), "Eve")  # a registration for another event
    path = tmp_path / "event.tarot-event"
    path.write_bytes(record.append(forged).to_bytes())
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert "DOES NOT HOLD" in out and "FAULT: event: an entry of another event" in out


def test_a_file_that_is_no_record_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.tarot-event"
    path.write_bytes(small_record().to_bytes()[:-3])
    assert main(["audit", str(path)]) == 2
    assert "not an event record" in capsys.readouterr().err


def test_the_screen_says_where_to_sit_and_the_ranking() -> None:
    event = {
        "name": "Club",
        "rounds": 2,
        "deals": 2,
        "tables": 4,
        "movement": "random",
        "organiser": "ab12",
        "role": "player",
        "players": [{"name": "Ana"}, {"name": "Bo"}],
        "closed": 1,
        "open": 2,
        "plans": [{"round": 1, "movement": "random", "tables": [["Ana", "Bo", "Cy", "Di"]]}],
        "seat": {"round": 2, "table": 1, "seat": 2, "with": ["Bo", "Cy", "Ana", "Di"]},
        "pending": [[2, 1, 1], [2, 1, 2]],
        "findings": [],
        "ranking": [
            {
                "place": 1,
                "name": "Ana",
                "fingerprint": "ab",
                "total": 120,
                "rounds": [[120, "played"]],
            },
            {
                "place": 2,
                "name": "Bo",
                "fingerprint": "cd",
                "total": -40,
                "rounds": [[-40, "abandoned"]],
            },
        ],
    }
    lines = screen(event, "en", ours="cd")
    assert "You sit at table 1 of round 2, with Bo, Cy, Ana, Di" in lines
    assert (
        "Round 2 is being played — score rows awaited: 2" in lines
        and "  table 1: deals 1, 2 to come" in lines
    )
    assert "Round 1 (random):" in lines and "  table 1: Ana, Bo, Cy, Di" in lines  # the table plan
    assert "2 registered: Ana, Bo" in lines
    words = [" ".join(line.split()) for line in lines]  # the columns' padding aside
    # ours marked
    assert "1. Ana +120 [ab] +120" in words and "→ 2. Bo -40 [cd] -40 (abandoned)" in words
    french = screen(event, "fr")
    assert (
        "Vous êtes à la table 1 de la position 2, avec Bo, Cy, Ana, Di" in french
        and "Classement provisoire" in french
    )
    assert "Position 1 (aléatoire) :" in french and "2. Bo -40 [cd] -40 (abandon)" in [
        " ".join(line.split()) for line in french
    ]


def test_the_format_and_the_counts_are_not_given_together(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["event", "open", "Club", "--format", "6x4", "--rounds", "3"]) == 2
    assert "give --format, or --rounds and --deals, not both" in capsys.readouterr().err
    assert main(["event", "open", "Club", "--rounds", "3"]) == 2
    assert "--rounds and --deals go together" in capsys.readouterr().err
