"""``tarot event show`` while a round is played (issue 37, finding 7): the round in progress is
shown for what it is — the deals its table has played so far, or "in progress" before its
first row — not a ``+0`` that reads as a round played for nothing; the rounds closed keep
their points; in French and English, under the ranking's headers.  The daemon's answer says
how many rows each player's table has in each round; the screen reads it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from test_event_desk import Room, opened, ready_table

from client import event_cmd
from client.tui.i18n import Texts
from protocol.replication.audit import DealAudit


def _score_one_deal(room: Room, deal: int) -> None:
    """The open round's one table plays deal ``deal`` (from 0): the taker +90, the others -30."""
    desks = [d for d in room.desks if d.seatings()]
    slot = desks[0].seatings()[0].slot
    if deal == 0:
        ready = ready_table(slot.table_id, slot.name, [room.by_key(k).identity for k in slot.keys])
        for desk in desks:
            room.post(desk.key, desk.table_ready(ready))
        room.run()
    head = hashlib.sha256(slot.table_id + bytes([deal])).digest()
    audit = DealAudit(None, (90, -30, -30, -30), None, None, False)
    for desk in desks:
        room.post(desk.key, desk.scored(slot.table_id, deal, head, audit))
    room.run()


def test_the_daemon_says_how_many_deals_each_round_has_so_far(tmp_path: Path) -> None:
    room = Room(tmp_path, 4)
    event_id = opened(room, rounds=2, deals=2)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    summary = room.organiser.summary(room.organiser.held[event_id])
    assert all(line["rounds"] == [[0, "played", 0]] for line in summary["ranking"])
    _score_one_deal(room, 0)
    summary = room.organiser.summary(room.organiser.held[event_id])
    assert sorted(line["rounds"][0][0] for line in summary["ranking"]) == [-30, -30, -30, 90]
    assert all(line["rounds"][0][1:] == ["played", 1] for line in summary["ranking"])
    _score_one_deal(room, 1)  # round 1 over, round 2 open with nothing scored
    summary = room.organiser.summary(room.organiser.held[event_id])
    assert summary["closed"] == 1 and summary["open"] == 2
    assert all(line["rounds"][0][2] == 2 for line in summary["ranking"])
    assert all(line["rounds"][1] == [0, "played", 0] for line in summary["ranking"])


def _mid_event(played: int) -> dict[str, Any]:
    """Round 1 of 2 closed, round 2 open with ``played`` of its 4 deals in."""
    points = [60, -20, -20, -20]
    return {
        "event": "ee" * 16,
        "name": "mardi",
        "role": "organiser",
        "organiser": "9999-8888",
        "rounds": 2,
        "deals": 4,
        "tables": 4,
        "movement": "random",
        "silence": "nothing",
        "players": [
            {"name": n, "fingerprint": f"{n}-0"} for n in ("anne", "bruno", "carla", "dan")
        ],
        "plans": [],
        "closed": 1,
        "open": 2,
        "pending": [[2, 1, d] for d in range(played + 1, 5)],
        "ranking": [
            {
                "place": i + 1,
                "name": name,
                "fingerprint": f"{name}-0",
                "total": 100 - 10 * i + (points[i] if played else 0),
                "rounds": [
                    [100 - 10 * i, "played", 4],
                    [points[i] if played else 0, "played", played],
                ],
            }
            for i, name in enumerate(("anne", "bruno", "carla", "dan"))
        ],
        "seat": None,
        "findings": [],
        "entries": 12,
    }


@pytest.mark.parametrize(
    ("lang", "started", "so_far"),
    [("en", "in progress", "+60 (2/4 deals)"), ("fr", "en cours", "+60 (2/4 donnes)")],
)
def test_the_round_in_progress_is_shown_for_what_it_is(
    lang: str, started: str, so_far: str
) -> None:
    texts = Texts(lang)
    for played, shown in ((0, started), (2, so_far)):
        lines = event_cmd.screen(_mid_event(played), lang)
        at = lines.index(texts("event_ranking"))
        header, first = lines[at + 1], lines[at + 2]
        assert header.split()[-2:] == [
            texts("event_column_round", round=1),
            texts("event_column_round", round=2),
        ]
        assert " ".join(first.split()).endswith(f"+100 {shown}"), first
        assert "+0" not in "\n".join(lines[at:]), lines
