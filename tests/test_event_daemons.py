"""An event played by real daemons on 127.0.0.1 (issue 23): an organiser's daemon and one per
player, every seat a bot — the tables formed as the round plans say, every row signed by its
table, the one record and ranking on every daemon, ``tarot audit`` holding on the record
exported and refusing it tampered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from daemons import ROOT, assert_no_traceback
from event_daemons import EventRoom, open_event, start_event_room

from protocol.event import EntryKind, read_event, verify_event


def tarot(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "client.cli", *map(str, argv)], cwd=ROOT, capture_output=True, text=True)


def play_event(tmp_path: Path, players: int, rounds: int, deals: int, movement: str, tables: int = 4) -> None:
    room = start_event_room(tmp_path, players)
    try:
        event = open_event(room, rounds, deals, movement, tables)
        room.wait("every round closed, on every daemon", lambda: all(
            room.ask(home, "event", event=event)["closed"] == rounds for home in room.homes), 120 * rounds)
        check_event(room, event, players, rounds, deals, tables)
    finally:
        room.stop()
    assert_no_traceback(tmp_path, len(room.homes))


def check_event(room: EventRoom, event: str, players: int, rounds: int, deals: int, tables: int) -> None:
    records = {bytes.fromhex(room.ask(home, "event-record", event=event)["record"]) for home in room.homes}
    assert len(records) == 1, "the daemons hold different records"
    (data,) = records
    record = read_event(data)
    report = verify_event(record)
    assert report.ok and report.closed == rounds and not report.pending
    assert len(report.names) == players and len(report.plans) == rounds
    for round_, plan in enumerate(report.plans, start=1):
        assert sorted(plan.players) == sorted(report.names), f"round {round_} does not seat every player once"
        for table in range(1, len(plan.tables) + 1):
            assert len(report.results[round_, table]) == deals
    manifests = [e for e in record.entries if e.kind is EntryKind.TABLE]
    assert len(manifests) == sum(len(plan.tables) for plan in report.plans)
    summaries = [room.ask(home, "event", event=event) for home in room.homes]
    assert all(s["ranking"] == summaries[0]["ranking"] for s in summaries)
    assert sum(line["total"] for line in summaries[0]["ranking"]) == 0
    # tarot audit EVENT on the record exported, then on a copy with one row's score changed
    path = room.tmp_path / "event.tarot-event"
    assert tarot("--home", room.players[0], "event", "export", "--record", path).returncode == 0
    audited = tarot("audit", path)
    assert audited.returncode == 0 and "the record holds" in audited.stdout, audited.stdout + audited.stderr
    top = summaries[0]["ranking"][0]
    assert f"{top['name']} [{top['fingerprint']}] {top['total']:+d}" in audited.stdout
    tampered = room.tmp_path / "tampered.tarot-event"
    tampered.write_bytes(with_a_row_changed(data))
    refused = tarot("audit", tampered)
    assert refused.returncode == 1 and "DOES NOT HOLD" in refused.stdout
    assert "is not signed by" in refused.stdout, refused.stdout
    html = room.tmp_path / "event.html"
    assert tarot("--home", room.organiser, "--lang", "fr", "event", "export", "--html", html).returncode == 0
    assert top["name"] in html.read_text(encoding="utf-8")


def with_a_row_changed(data: bytes) -> bytes:
    """The record with the first row's scores swapped between two seats, signatures kept."""
    magic, entries = msgpack.unpackb(data, raw=False)
    for entry in entries:
        if entry[0] == EntryKind.ROW.value:
            fields = msgpack.unpackb(entry[1], raw=False)
            scores = fields[8]
            scores[0], scores[1] = scores[1], scores[0]
            if scores[0] == scores[1]:
                continue
            entry[1] = msgpack.packb(fields, use_bin_type=True)
            return msgpack.packb([magic, entries], use_bin_type=True)  # type: ignore[no-any-return]
    raise AssertionError("no row to change")


def test_eight_players_two_rounds_of_two_deals(tmp_path: Path) -> None:
    play_event(tmp_path, 8, rounds=2, deals=2, movement="random")


@pytest.mark.slow
def test_sixteen_players_three_rounds_of_four_deals_fft_movement(tmp_path: Path) -> None:
    play_event(tmp_path, 16, rounds=3, deals=4, movement="fft")


@pytest.mark.slow
def test_thirteen_players_at_tables_of_five_four_and_four(tmp_path: Path) -> None:
    play_event(tmp_path, 13, rounds=3, deals=4, movement="random")
