"""An event played by real daemons on 127.0.0.1 (issue 23): an organiser's daemon and one per
player, every seat a bot — the tables formed as the round plans say, every row signed by its
table, the one record and ranking on every daemon, ``tarot audit`` holding on the record
exported and refusing it tampered."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from daemons import (
    ROOT,
    assert_no_traceback,
    daemon_argv,
    free_ports,
    home_key,
    log_path,
    spawn,
    wait_for_path,
)
from event_daemons import EventRoom, open_event, start_event_room
from intruder import Intruder
from lan import NEEDS_ROOT, fleet, lan_of

from client.api import ask
from protocol.event.event import EntryKind, EventReport, read_event, register, verify_event
from protocol.event.movement import Movement
from protocol.replication.identity import Identity
from protocol.replication.manifest import Manifest
from tarotd.event_bots import SPEC

pytestmark = pytest.mark.daemons


def tarot(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client.cli", *map(str, argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def play_event(
    tmp_path: Path,
    players: int,
    rounds: int,
    deals: int,
    movement: str,
    tables: int = 4,
    crash: int | None = None,
    sizes: tuple[int, ...] = (4, 4),
) -> EventReport:
    """The event played through; with ``crash``, that daemon (0: the organiser's) is killed
    (``kill -9``) as soon as the first row is in, and started again."""
    room = start_event_room(tmp_path, players)
    try:
        event = open_event(room, rounds, deals, movement, tables)
        if crash is not None:

            def a_row_in() -> bool:
                shown = room.ask(room.organiser, "event", event=event)
                return shown["open"] == 1 and len(shown["pending"]) < deals * (players // tables)

            room.wait("a first row in", a_row_in, 120)
            room.crash_and_restart(crash)
        room.wait(
            "every round closed, on every daemon",
            lambda: all(
                room.ask(home, "event", event=event)["closed"] == rounds for home in room.homes
            ),
            120 * rounds,
        )
        report = check_event(room, event, players, rounds, deals, sizes)
    finally:
        room.stop()
    assert_no_traceback(tmp_path, len(room.homes))
    return report


def check_event(
    room: EventRoom, event: str, players: int, rounds: int, deals: int, sizes: tuple[int, ...]
) -> EventReport:
    records = {
        bytes.fromhex(room.ask(home, "event-record", event=event)["record"]) for home in room.homes
    }
    assert len(records) == 1, "the daemons hold different records"
    (data,) = records
    record = read_event(data)
    report = verify_event(record)
    assert report.ok and report.closed == rounds and not report.pending
    assert len(report.names) == players and len(report.plans) == rounds
    for round_, plan in enumerate(report.plans, start=1):
        assert sorted(plan.players) == sorted(report.names), (
            f"round {round_} does not seat every player once"
        )
        assert tuple(map(len, plan.tables)) == sizes
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
    assert audited.returncode == 0 and "the record holds" in audited.stdout, (
        audited.stdout + audited.stderr
    )
    for line in summaries[0]["ranking"]:  # the ranking the audit reproduces, line by line
        assert (
            f"{line['place']:>3}. {line['name']} [{line['fingerprint']}] {line['total']:+d}"
            in audited.stdout
        )
    top = summaries[0]["ranking"][0]
    tampered = room.tmp_path / "tampered.tarot-event"
    tampered.write_bytes(with_a_row_changed(data))
    refused = tarot("audit", tampered)
    assert refused.returncode == 1 and "DOES NOT HOLD" in refused.stdout
    assert "is not signed by" in refused.stdout, refused.stdout
    shown = tarot("--home", room.players[0], "--lang", "en", "event", "show")
    assert shown.returncode == 0 and "The event is over." in shown.stdout, (
        shown.stdout + shown.stderr
    )
    assert f" 1. {top['name']} {top['total']:+d} [{top['fingerprint'].split('-')[0]}]" in " ".join(
        shown.stdout.split()
    )
    listed = tarot("--home", room.players[0], "--lang", "fr", "event", "list")
    assert f"{event[:12]}  « Soirée du club »" in listed.stdout and "inscrit" in listed.stdout
    html = room.tmp_path / "event.html"
    assert (
        tarot(
            "--home", room.organiser, "--lang", "fr", "event", "export", "--html", html
        ).returncode
        == 0
    )
    assert top["name"] in html.read_text(encoding="utf-8")
    return report


def with_a_row_changed(data: bytes) -> bytes:
    """The record with a row's scores swapped between two seats that scored differently,
    signatures kept."""
    magic, entries = msgpack.unpackb(data, raw=False)
    for entry in entries:
        if entry[0] == EntryKind.ROW.value:
            fields = msgpack.unpackb(entry[1], raw=False)
            scores = fields[8]
            seats = [seat for seat in range(1, len(scores)) if scores[seat] != scores[0]]
            if not seats:
                continue  # an all-passed deal: nothing to swap
            scores[0], scores[seats[0]] = scores[seats[0]], scores[0]
            entry[1] = msgpack.packb(fields, use_bin_type=True)
            record: bytes = msgpack.packb([magic, entries], use_bin_type=True)
            return record
    raise AssertionError("no row to change")


def test_eight_players_two_rounds_of_two_deals(tmp_path: Path) -> None:
    play_event(tmp_path, 8, rounds=2, deals=2, movement="random")


@pytest.mark.slow
def test_eight_players_two_rounds_of_two_deals_the_organiser_crashing_in_round_one(
    tmp_path: Path,
) -> None:
    play_event(tmp_path, 8, rounds=2, deals=2, movement="random", crash=0)
    said = log_path(tmp_path, 0).read_text()
    assert "taken up as organiser" in said and "round 2 complete, closed" in said


@pytest.mark.slow
def test_eight_players_two_rounds_of_two_deals_a_player_crashing_in_round_one(
    tmp_path: Path,
) -> None:
    play_event(tmp_path, 8, rounds=2, deals=2, movement="random", crash=3)
    said = log_path(tmp_path, 3).read_text()
    assert "taken up as player" in said


@pytest.mark.slow
def test_sixteen_players_three_rounds_of_four_deals_fft_movement(tmp_path: Path) -> None:
    report = play_event(tmp_path, 16, rounds=3, deals=4, movement="fft", sizes=(4, 4, 4, 4))
    assert [plan.movement for plan in report.plans] == [Movement.FFT] * 3


@pytest.mark.slow
def test_thirteen_players_at_tables_of_five_four_and_four(tmp_path: Path) -> None:
    play_event(tmp_path, 13, rounds=3, deals=4, movement="random", sizes=(5, 4, 4))


def test_a_stranger_s_event_frames_are_refused_said_and_change_nothing(tmp_path: Path) -> None:
    """A forged registration, a row signature of no member, malformed frames: the organiser's
    daemon says each and goes on, its record as it was."""
    room = start_event_room(tmp_path, 0)

    async def attack(event: str) -> None:
        intruder = Intruder()
        victim = Identity.generate()
        await intruder.start([(f"tcp://127.0.0.1:{room.ports[0]}", home_key(room.organiser))])
        try:
            while not intruder.up:
                await asyncio.sleep(0.05)
            (daemon,) = intruder.up
            event_id = bytes.fromhex(event)
            frames: list[object] = [
                {
                    "t": "register",
                    "event": event_id,
                    "entry": register(victim, event_id, "usurpé").wire,
                    "endpoint": intruder.endpoint,
                },
                {"t": "rowsig", "event": event_id, "row": b"\x91\x01", "seat": 0, "sig": bytes(64)},
                {
                    "t": "entries",
                    "event": event_id,
                    "from": 0,
                    "entries": [b"\xc1"],
                    "endpoints": [],
                },
                {"t": "no such frame"},
                [1, 2, 3],
            ]
            for frame in frames:
                intruder.mesh.send(daemon, "event", msgpack.packb(frame, use_bin_type=True))
            intruder.mesh.send(daemon, "event", b"\xc1 not msgpack")
            while intruder.mesh.unacknowledged():
                await asyncio.sleep(0.05)
        finally:
            await intruder.close()

    try:
        event = room.ask(room.organiser, "event-open", name="Tournoi", format="3x8")["event"]
        asyncio.run(asyncio.wait_for(attack(event), 60))
        room.wait(
            "the refusals said",
            lambda: "a daemon registers its own player" in log_path(tmp_path, 0).read_text(),
            20,
        )
        shown = room.ask(room.organiser, "event", event=event)
        assert shown["players"] == [] and shown["entries"] == 1 and shown["findings"] == []
    finally:
        room.stop()
    said = log_path(tmp_path, 0).read_text()
    for refusal in (
        "refused a register frame",
        "refused a rowsig frame",
        "refused a entries frame",
        "an unknown event frame",
        "refused a malformed frame",
    ):
        assert refusal in said, said
    assert_no_traceback(tmp_path, 1)


@pytest.mark.slow
def test_a_player_s_daemon_dying_mid_round_leaves_abandoned_rows_and_an_empty_place(
    tmp_path: Path,
) -> None:
    """A member's daemon is killed as its table forms: the others abandon the deal it stalls
    (--timeout), sign the round's deals left abandoned once it is gone for good, and round 2
    seats the seven others (tables of 4 and 3); the ranking shows it abandoned, then absent."""
    room = start_event_room(tmp_path, 8, timeout=4)
    keys = {home_key(home): index for index, home in enumerate(room.homes)}
    try:
        event = open_event(room, 2, 2, "random")

        def a_table_formed() -> bytes | None:
            record = read_event(
                bytes.fromhex(room.ask(room.organiser, "event-record", event=event)["record"])
            )
            tables = [e for e in record.entries if e.kind is EntryKind.TABLE]
            return Manifest.from_bytes(tables[0].document).keys[1] if tables else None

        room.wait("a table formed", lambda: a_table_formed() is not None, 60)
        victim = a_table_formed()
        assert victim is not None
        dead = keys[victim.hex()]
        room.kill(dead)
        living = [home for index, home in enumerate(room.homes) if index != dead]
        room.wait(
            "both rounds closed on the daemons alive",
            lambda: all(room.ask(home, "event", event=event)["closed"] == 2 for home in living),
            240,
        )
        records = {room.ask(home, "event-record", event=event)["record"] for home in living}
        assert len(records) == 1
        report = verify_event(read_event(bytes.fromhex(records.pop())))
    finally:
        room.stop()
    assert report.ok and victim not in report.plans[1].players
    assert sorted(map(len, report.plans[1].tables)) == [3, 4]
    line = next(s for s in report.standings if s.player == victim)
    assert [r.mark.value for r in line.rounds] == ["abandoned", "absent"]
    said = "".join(log_path(tmp_path, i).read_text() for i in range(len(room.homes)) if i != dead)
    assert "gone for good — the" in said and "its place stays empty" in said


@pytest.mark.slow
def test_the_organiser_substitutes_withdraws_and_closes_a_round_with_real_daemons(
    tmp_path: Path,
) -> None:
    """The organiser's commands, from ``tarot event`` on real daemons: a newcomer registers
    once the event has started and takes joueur7's place from round 2 (``substitute``),
    joueur8 is withdrawn from round 2 on (``withdraw``), and round 2 is closed as soon as it
    opens (``close``), its rows declared lost; round 3 seats the seven, every daemon alive
    holds the one record, and the ranking shows each of it."""
    room = start_event_room(tmp_path, 8, timeout=4, think=0.2)  # round 1 outlasts the commands
    try:
        event = open_event(room, 3, 2, "random")
        newcomer = tmp_path / "d9"
        argv = daemon_argv(
            newcomer,
            "remplacant",
            free_ports(1)[0],
            [(room.organiser, room.ports[0])],
            bot="basic",
            table=None,
            timeout=4,
            extra=["--think", "0.2"],
        )
        room.homes.append(newcomer)
        room.argvs.append(argv)
        room.processes.append(spawn(argv, log_path(tmp_path, 9)))
        wait_for_path(newcomer / "api.sock", room.processes[-1])
        room.wait(
            "the event heard by the newcomer",
            lambda: any(e["event"] == event for e in room.ask(newcomer, "events")),
            30,
        )
        room.ask(newcomer, "event-join", event=event)
        room.wait(
            "the newcomer registered",
            lambda: len(room.ask(room.organiser, "event", event=event)["players"]) == 9,
            30,
        )
        organiser = ("--home", room.organiser, "--lang", "en", "event")
        substituted = tarot(*organiser, "substitute", "remplacant", "joueur7")
        assert substituted.returncode == 0, substituted.stderr
        assert "remplacant takes the place of joueur7 from the next round on" in substituted.stdout
        withdrawn = tarot(*organiser, "withdraw", "joueur8")
        assert (
            withdrawn.returncode == 0
            and "joueur8: no place from the next round on" in withdrawn.stdout
        )
        refused = tarot(*organiser, "substitute", "remplacant", "joueur6")  # one place a newcomer
        assert refused.returncode == 1 and "remplacant holds a place already" in refused.stderr
        assert room.ask(room.organiser, "event", event=event)["closed"] == 0, (
            "round 1 ended before the commands"
        )
        room.wait(
            "round 2 open", lambda: room.ask(room.organiser, "event", event=event)["open"] == 2, 120
        )
        closed = tarot(*organiser, "close")
        assert closed.returncode == 0, closed.stderr
        room.wait(
            "round 3 closed on every daemon",
            lambda: all(room.ask(home, "event", event=event)["closed"] == 3 for home in room.homes),
            240,
        )
        records = {room.ask(home, "event-record", event=event)["record"] for home in room.homes}
        shown = tarot(*organiser, "show")
    finally:
        room.stop()
    assert len(records) == 1, "the daemons hold different records"
    report = verify_event(read_event(bytes.fromhex(records.pop())))
    assert report.ok and report.closed == 3, report.findings
    names = {name: key for key, name in report.names.items()}
    for round_ in (2, 3):
        seated = report.plans[round_ - 1].players
        assert (
            names["remplacant"] in seated
            and names["joueur7"] not in seated
            and names["joueur8"] not in seated
        )
        assert sorted(map(len, report.plans[round_ - 1].tables)) == [3, 4]
    marks = {
        report.names[line.player]: [r.mark.value for r in line.rounds] for line in report.standings
    }
    assert marks["joueur7"][1:] == marks["joueur8"][1:] == ["absent", "absent"]
    assert marks["remplacant"][0] == "absent" and marks["remplacant"][2] == "played"
    assert all(mark[1] in ("incomplete", "played", "absent") for mark in marks.values())
    # round 2's rows declared lost
    assert any(mark[1] == "incomplete" for mark in marks.values()), marks
    assert "The event is over." in shown.stdout and "(deals lost)" in shown.stdout, shown.stdout
    assert_no_traceback(tmp_path, len(room.homes))


def test_the_organiser_plays_and_one_daemon_hosts_four_event_bots(tmp_path: Path) -> None:
    """Finding 8 on real daemons: an event of eight — the organiser's own player (its seat a
    bot), four event bots hosted by one daemon (``tarot event join --bots 4``: that daemon's
    own player does not register) and three players' daemons — plays two rounds of one deal;
    every player's ``tarot event show`` (the hosted bots' homes included) gives one ranking,
    the bots tagged by name, and the record holds."""
    play_with_hosted_bots(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("ports", ["kept", "taken"])
def test_a_daemon_hosting_event_bots_killed_mid_round_takes_them_up_again(
    tmp_path: Path, ports: str
) -> None:
    """The same, the bots' host killed (``kill -9``) once round 1's first row is in and
    started again: it takes its four bots up from their homes, each goes on from its store
    and listens where it did — or, its port taken meanwhile by another program (two of the
    four), elsewhere: it tells the organiser, who tells the players, and round 2's tables
    still form."""
    play_with_hosted_bots(tmp_path, crash_host=True, take_ports=ports == "taken")


def play_with_hosted_bots(
    tmp_path: Path, crash_host: bool = False, take_ports: bool = False
) -> None:
    ports = free_ports(5)
    homes = [tmp_path / f"d{i}" for i in range(5)]
    organiser = [(homes[0], ports[0])]
    argvs = [daemon_argv(homes[0], "organisatrice", ports[0], [], table=None)]
    argvs += [
        daemon_argv(homes[i], f"joueur{i}", ports[i], organiser, table=None) for i in range(1, 5)
    ]
    processes = [spawn(argv, log_path(tmp_path, i)) for i, argv in enumerate(argvs)]
    room = EventRoom(tmp_path, homes, processes, ports, argvs)
    squatters: list[socket.socket] = []  # programs holding ports the bots listened on
    try:
        for home, process in zip(homes, processes):
            wait_for_path(home / "api.sock", process)
        event = str(
            room.ask(
                homes[0], "event-open", name="Soirée du club", rounds=2, deals=1, movement="random"
            )["event"]
        )
        room.wait(
            "the event heard by every player's daemon",
            lambda: all(
                any(e["event"] == event for e in room.ask(home, "events")) for home in homes[1:]
            ),
            30,
        )
        joined = tarot("--home", homes[0], "event", "join", event[:8])
        assert joined.returncode == 0, joined.stderr
        hosted = tarot("--home", homes[1], "event", "join", event[:8], "--bots", "4")
        assert hosted.returncode == 0, hosted.stderr
        bots = [f"joueur1-bot{k}" for k in range(1, 5)]
        assert ", ".join(bots) in hosted.stdout
        refused = tarot("--home", homes[1], "event", "join", event[:8], "--bots", "99")
        assert refused.returncode == 1 and "--bots is from 1 to 16" in refused.stderr
        for home in homes[2:]:
            room.ask(home, "event-join", event=event)
        room.wait(
            "eight registrations in",
            lambda: len(room.ask(homes[0], "event", event=event)["players"]) == 8,
            60,
        )
        room.ask(homes[0], "event-start", event=event)
        if crash_host:
            room.wait(
                "a first row in",
                lambda: len(room.ask(homes[0], "event", event=event)["pending"]) < 2,
                120,
            )
            room.crash_and_restart(
                1, lambda: squatters.extend(take_bot_ports(homes[1], 4 if take_ports else 0))
            )
        players = [homes[0], *(homes[1] / "event-bots" / str(k) for k in range(1, 5)), *homes[2:]]
        room.wait(
            "both rounds closed, on every player's daemon",
            lambda: all(room.ask(home, "event", event=event)["closed"] == 2 for home in players),
            300,
        )
        records = {room.ask(home, "event-record", event=event)["record"] for home in players}
        assert len(records) == 1, "the players hold different records"
        record = read_event(bytes.fromhex(records.pop()))
        report = verify_event(record)
        assert report.ok and report.closed == 2 and not report.pending
        assert report.names[bytes.fromhex(home_key(homes[0]))] == "organisatrice"
        assert sorted(n for n in report.names.values() if "-bot" in n) == bots
        # the host registered its bots only
        assert bytes.fromhex(home_key(homes[1])) not in report.names
        for plan in report.plans:
            assert sorted(plan.players) == sorted(report.names)
        rows = [e for e in record.entries if e.kind is EntryKind.ROW]
        assert len(rows) == 4 and all(None not in e.signatures for e in rows)  # all signed
        path = tmp_path / "event.tarot-event"
        assert tarot("--home", homes[0], "event", "export", "--record", path).returncode == 0
        audited = tarot("audit", path)
        assert audited.returncode == 0 and "the record holds" in audited.stdout, audited.stdout
        shown = []
        for home in [*players, homes[1]]:  # and the host's: the event as its bots hold it
            out = tarot("--home", home, "event", "show", event[:8], "--json")
            assert out.returncode == 0, out.stderr
            shown.append(json.loads(out.stdout)["ranking"])
        assert all(ranking == shown[0] for ranking in shown) and len(shown[0]) == 8
        assert {line["name"] for line in shown[0]} >= {"organisatrice", *bots}
        if take_ports:
            said = log_path(tmp_path, 1).read_text()
            for squatter in squatters:
                assert f"its port {squatter.getsockname()[1]} is taken" in said
    finally:
        room.stop()
        for squatter in squatters:
            squatter.close()
    assert_no_traceback(tmp_path, len(homes))


def take_bot_ports(host: Path, count: int) -> list[socket.socket]:
    """Another program listening on the ports the first ``count`` event bots of ``host``
    listened on."""
    squatters = []
    for k in range(1, count + 1):
        port = json.loads((host / "event-bots" / str(k) / SPEC).read_text())["port"]
        squatter = socket.socket()
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        squatters.append(squatter)
    return squatters


@pytest.mark.slow
@NEEDS_ROOT
def test_the_organiser_plays_and_hosts_bots_over_lan_discovery(tmp_path: Path) -> None:
    """The same on a LAN of three namespaces, every daemon found by discovery alone (no
    ``--peer``): the organiser plays and hosts three bots, anne plays and hosts two, bruno
    plays — eight players over two rounds of one deal; each hosted bot listens on a port of
    its own and beacons on the shared UDP port like any daemon; every player's daemon holds the
    one record, and its ranking."""
    with lan_of(3) as lan, fleet(lan, tmp_path, 420) as group:
        daemons = [group.start(host, name) for host, name in enumerate(("orga", "anne", "bruno"))]
        for daemon in daemons:
            while group.status(daemon) is None:
                assert group.remaining() > 0 and daemon.process.poll() is None, group.logs()
                time.sleep(0.2)
        orga, anne, bruno = (d.home for d in daemons)

        def ask_(home: Path, op: str, **params: Any) -> Any:
            return asyncio.run(ask(home, op, **params))

        event = str(
            ask_(orga, "event-open", name="Vendredi", rounds=2, deals=1, movement="random")["event"]
        )
        ask_(orga, "event-join", event=event)
        ask_(orga, "event-join", event=event, bots=3)
        for home in (anne, bruno):
            while not any(e["event"] == event for e in ask_(home, "events")):
                assert group.remaining() > 0, group.logs()
                time.sleep(0.5)
            ask_(home, "event-join", event=event)
        ask_(anne, "event-join", event=event, bots=2)
        while len(ask_(orga, "event", event=event)["players"]) < 8:
            assert group.remaining() > 0, group.logs()
            time.sleep(0.5)
        ask_(orga, "event-start", event=event)
        players = [
            orga,
            anne,
            bruno,
            *(orga / "event-bots" / str(k) for k in (1, 2, 3)),
            *(anne / "event-bots" / str(k) for k in (1, 2)),
        ]
        while not all(ask_(home, "event", event=event)["closed"] == 2 for home in players):
            assert group.remaining() > 0, group.logs()
            time.sleep(2)
        records = {ask_(home, "event-record", event=event)["record"] for home in players}
        assert len(records) == 1
        report = verify_event(read_event(bytes.fromhex(records.pop())))
        assert report.ok and len(report.names) == 8 and report.closed == 2
        rankings = [ask_(home, "event", event=event)["ranking"] for home in players]
        assert all(ranking == rankings[0] for ranking in rankings)
