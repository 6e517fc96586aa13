"""The daemon's side of an event, sans network (tarotd/event_desk.py): an organiser's desk and
eight players' desks exchanging frames in memory, each with its own store."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import random
from pathlib import Path
from typing import Any

import msgpack
import pytest

from protocol.event.event import EventError, register, verify_event
from protocol.event.movement import Movement
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity
from protocol.replication.manifest import MANIFEST_DOMAIN, manifest_document
from tarotd.event_desk import EventDesk
from tarotd.event_frames import Announce, EventOut, RowSig
from tarotd.lobby import BROADCAST, ReadyTable
from tarotd.store import Store

pytestmark = pytest.mark.heavy


class Room:
    def __init__(self, tmp_path: Path, players: int, seed: int = 0) -> None:
        self.tmp_path = tmp_path
        self.rng = random.Random(seed)
        self.identities = [Identity.generate() for _ in range(players + 1)]
        self.stores = [Store(tmp_path / f"d{n}.db") for n in range(players + 1)]
        self.desks = [self.desk(n) for n in range(players + 1)]
        self.queue: list[tuple[bytes, bytes, bytes]] = []

    def desk(self, n: int) -> EventDesk:
        return EventDesk(self.identities[n], lambda: f"tcp://127.0.0.1:{9200 + n}", self.stores[n])

    @property
    def organiser(self) -> EventDesk:
        return self.desks[0]

    @property
    def players(self) -> list[EventDesk]:
        return self.desks[1:]

    def by_key(self, key: bytes) -> EventDesk:
        return next(desk for desk in self.desks if desk.key == key)

    def post(self, sender: bytes, outs: list[EventOut]) -> None:
        for destination, frame in outs:
            targets = (
                [d.key for d in self.desks if d.key != sender]
                if destination == BROADCAST
                else [destination]
            )
            self.queue += [(sender, target, frame.to_wire()) for target in targets]

    def run(self) -> None:
        while self.queue:
            sender, target, frame = self.queue.pop(0)
            self.post(target, self.by_key(target).receive(sender, frame))

    def beat(self, now: float) -> None:
        for desk in self.desks:
            self.post(desk.key, desk.heartbeat(now))
        self.run()

    def play_open_round(self) -> None:
        """Every table of the open round forms and plays its deals; each member signs its rows."""
        tables: dict[bytes, list[EventDesk]] = {}
        for desk in self.desks:  # the organiser's too: its player, if it plays, sits
            for seating in desk.seatings():
                tables.setdefault(seating.slot.table_id, []).append(desk)
        for table_id_, desks in tables.items():
            slot = desks[0].seatings()[0].slot
            ready = ready_table(
                slot.table_id, slot.name, [self.by_key(k).identity for k in slot.keys]
            )
            deals = self.organiser.held[next(iter(self.organiser.held))].config.deals
            for desk in desks:
                self.post(desk.key, desk.table_ready(ready))
            self.run()
            for deal in range(deals):
                swing = 10 * (deal + 1) + self.rng.randrange(5)
                scores = (swing * (len(slot.keys) - 1), *[-swing] * (len(slot.keys) - 1))
                head = hashlib.sha256(table_id_ + bytes([deal])).digest()
                for desk in desks:
                    self.post(
                        desk.key,
                        desk.scored(
                            table_id_, deal, head, DealAudit(None, scores, None, None, False)
                        ),
                    )
                self.run()


def packed(frame: object) -> bytes:
    """A frame as a stranger's daemon puts it on the wire."""
    body: bytes = msgpack.packb(frame, use_bin_type=True)
    return body


def ready_table(table_id_: bytes, name: str, members: list[Identity]) -> ReadyTable:
    entries = [
        [m.public_key, f"p{n}", m.public_key, "tcp://127.0.0.1:1"] for n, m in enumerate(members)
    ]
    document = manifest_document(table_id_, name, entries)
    signatures = [m.sign(MANIFEST_DOMAIN + document) for m in members]
    return ReadyTable.from_bytes(msgpack.packb([document, signatures, 0], use_bin_type=True))


def opened(room: Room, rounds: int = 2, deals: int = 2) -> bytes:
    held = room.organiser.open("Soirée du club", rounds, deals, 4, Movement.RANDOM)
    room.beat(0.0)  # the event is heard
    for n, desk in enumerate(room.players):
        room.post(desk.key, desk.join(held.event_id, f"joueur{n}"))
    room.run()
    return held.event_id


def test_an_event_of_eight_goes_round_by_round_to_one_record_everywhere(tmp_path: Path) -> None:
    room = Room(tmp_path, 8)
    event_id = opened(room)
    assert len(room.organiser.held[event_id].report.names) == 8
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    for round_ in (1, 2):
        seatings = [s for desk in room.players for s in desk.seatings()]
        assert len(seatings) == 8 and {s.round for s in seatings} == {round_}
        assert sorted(len(s.slot.keys) for s in seatings) == [4] * 8
        # where the client says to sit: with the three others
        for n, desk in enumerate(room.players):
            seat = desk.summary(desk.held[event_id])["seat"]
            assert (
                seat["round"] == round_
                and len(seat["with"]) == 3
                and f"joueur{n}" not in seat["with"]
            )
        room.play_open_round()
    record = room.organiser.held[event_id].record
    report = verify_event(record)
    assert report.ok and report.closed == 2 and not report.pending
    assert all(len(rows) == 2 for rows in report.results.values()) and len(report.results) == 4
    for desk in room.players:
        assert desk.held[event_id].record.to_bytes() == record.to_bytes()
        assert desk.seatings() == []
    assert sum(line.total for line in report.standings) == 0
    restarted = room.desk(0)
    restarted.load()
    assert restarted.held[event_id].record.to_bytes() == record.to_bytes()


def test_what_a_player_sent_is_sent_again_until_the_record_holds_it(tmp_path: Path) -> None:
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    room.queue.clear()
    lost = room.players[0]
    seating = lost.seatings()[0]
    lost.table_ready(
        ready_table(
            seating.slot.table_id,
            seating.slot.name,
            [room.by_key(k).identity for k in seating.slot.keys],
        )
    )  # lost on the way
    again = room.desk(1)  # and the player's daemon restarts
    again.load()
    assert again.endpoints(seating.slot.keys) == lost.endpoints(seating.slot.keys) != []
    room.desks[1] = again
    room.beat(10.0)
    assert any(e.kind.value == "table" for e in room.organiser.held[event_id].record.entries)


def test_a_player_restarted_elsewhere_is_sought_there_by_every_player(tmp_path: Path) -> None:
    """A daemon that comes back on another port (or another address) says so to the
    organiser, who tells the players: its table mates link to where it listens now."""
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    moved = room.players[0].key
    others = room.desks[2:]
    assert {d.endpoints([moved])[0][1] for d in others} == {"tcp://127.0.0.1:9201"}
    again = EventDesk(room.identities[1], lambda: "tcp://127.0.0.1:9301", room.stores[1])
    again.load()
    room.desks[1] = again
    room.beat(10.0)
    assert {d.endpoints([moved])[0][1] for d in others} == {"tcp://127.0.0.1:9301"}
    assert room.organiser.held[event_id].endpoints[moved] == "tcp://127.0.0.1:9301"
    told = room.desk(2)  # a mate restarted after: the new endpoint is in its store
    told.load()
    assert told.endpoints([moved]) == [(moved, "tcp://127.0.0.1:9301")]
    # told: it says it no more — nor does a player that never moved
    assert all(desk.heartbeat(20.0) == [] for desk in room.players)


def test_bad_frames_are_refused_said_and_change_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    held = room.organiser.held[event_id]
    before = held.record.to_bytes()
    stranger = Identity.generate()
    victim = room.players[0]
    forged = {
        "t": "register",
        "event": event_id,
        "endpoint": "tcp://10.0.0.9:1",
        "entry": b"\xc1 not an entry",
    }
    with caplog.at_level(logging.WARNING):
        assert room.organiser.receive(stranger.public_key, packed(forged)) == []
        assert room.organiser.receive(stranger.public_key, packed({"t": "rowsig"})) == []
        assert room.organiser.receive(stranger.public_key, packed([1, 2])) == []
        entries = packed({"t": "entries", "event": event_id})
        assert room.organiser.receive(stranger.public_key, entries) == []
        someone_else = register(Identity.generate(), event_id, "usurpateur")
        usurped = {
            "t": "register",
            "event": event_id,
            "entry": someone_else.wire,
            "endpoint": "tcp://x:1",
        }
        assert room.organiser.receive(stranger.public_key, packed(usurped)) == []
        seating = victim.seatings()[0]
        ready = ready_table(
            seating.slot.table_id,
            seating.slot.name,
            [room.by_key(k).identity for k in seating.slot.keys],
        )
        room.post(victim.key, victim.table_ready(ready))
        room.run()
        before = held.record.to_bytes()
        head = bytes(32)
        outs = victim.scored(
            seating.slot.table_id, 0, head, DealAudit(None, (30, -10, -10, -10), None, None, False)
        )
        frame = next(f for d, f in outs if d == room.organiser.key)
        assert isinstance(frame, RowSig)
        # the victim's signature passed off as another member's
        frame = dataclasses.replace(frame, seat=(frame.seat + 1) % 4)
        assert room.organiser.receive(victim.key, frame.to_wire()) == []
        sig = stranger.sign(b"tarot/v2/event-row\x00" + frame.document)
        intruder = dataclasses.replace(frame, sig=sig)
        assert room.organiser.receive(stranger.public_key, intruder.to_wire()) == []
    assert held.record.to_bytes() == before
    said = caplog.text
    assert (
        "refused a register frame" in said
        and "not an event frame" in said
        and "rowsig frame misses the fields 'event', 'row', 'seat', 'sig'" in said
    )
    assert "sent by another daemon: a daemon registers its own player" in said
    assert "that is not the member's of seat" in said


def test_a_member_gone_for_good_leaves_abandoned_rows_and_an_empty_place(tmp_path: Path) -> None:
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    seating = room.players[0].seatings()[0]
    gone = seating.slot.keys[2]
    members = [room.by_key(k) for k in seating.slot.keys]
    ready = ready_table(seating.slot.table_id, seating.slot.name, [m.identity for m in members])
    for desk in members:
        room.post(desk.key, desk.table_ready(ready))
    audit = DealAudit(None, (30, -10, -10, -10), None, None, False)
    for desk in members:
        room.post(desk.key, desk.scored(seating.slot.table_id, 0, bytes(range(32)), audit))
    room.run()
    for desk in members:
        if desk.key != gone:  # deal 2 never starts: the others sign it abandoned
            room.post(desk.key, desk.abandon(seating.slot.table_id, 1, [2]))
    room.run()
    others = [
        d
        for d in room.players
        if d.seatings() and d.seatings()[0].slot.table_id != seating.slot.table_id
    ]
    other = others[0].seatings()[0].slot
    members_2 = [room.by_key(k) for k in other.keys]
    ready_2 = ready_table(other.table_id, other.name, [m.identity for m in members_2])
    for desk in members_2:
        room.post(desk.key, desk.table_ready(ready_2))
        for deal in range(2):
            room.post(desk.key, desk.scored(other.table_id, deal, bytes(32), audit))
    room.run()
    report = room.organiser.held[event_id].report
    assert report.ok and report.closed == 1 and len(report.plans) == 2
    assert gone not in report.plans[1].players and sorted(map(len, report.plans[1].tables)) == [
        3,
        4,
    ]
    assert room.by_key(gone).seatings() == []
    line = next(s for s in report.live if s.player == gone)
    assert [r.mark.value for r in line.rounds] == ["abandoned", "absent"]


def test_the_organiser_closes_a_round_without_a_table_that_never_formed(tmp_path: Path) -> None:
    """A player whose daemon died before its table formed: withdrawn, then the round closed
    with that table's rows declared lost; round 2 seats the seven others."""
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    absent = room.players[3]
    assert (
        room.organiser.withdraw(event_id, room.organiser.held[event_id].report.names[absent.key])
        == room.organiser.held[event_id].report.names[absent.key]
    )
    with pytest.raises(EventError, match="no registered player"):
        room.organiser.withdraw(event_id, "personne")
    room.post(room.organiser.key, room.organiser.close_now(event_id))
    room.run()
    report = room.organiser.held[event_id].report
    assert report.ok and report.closed == 1 and absent.key not in report.plans[1].players
    assert all(line.rounds[0].mark.value == "incomplete" for line in report.live)
    restarted = room.desk(0)
    restarted.load()
    assert restarted.held[event_id].withdrawn == {absent.key}


def test_a_substitute_registered_late_takes_a_players_place_in_the_next_round(
    tmp_path: Path,
) -> None:
    room = Room(tmp_path, 9)  # the ninth registers once the event has started
    late = room.players[8]
    held = room.organiser.open("Soirée du club", 2, 2, 4, Movement.RANDOM)
    room.beat(0.0)
    for n, desk in enumerate(room.players[:8]):
        room.post(desk.key, desk.join(held.event_id, f"joueur{n}"))
    room.run()
    room.post(room.organiser.key, room.organiser.start(held.event_id))
    room.run()
    room.post(late.key, late.join(held.event_id, "remplaçant"))
    room.run()
    replaced = room.players[2]
    with pytest.raises(EventError, match="holds a place already"):
        room.organiser.substitute(held.event_id, "joueur3", "joueur2")
    assert room.organiser.substitute(held.event_id, "remplaçant", "joueur2") == (
        "remplaçant",
        "joueur2",
    )
    assert late.seatings() == []
    room.play_open_round()
    report = room.organiser.held[held.event_id].report
    assert report.ok and len(report.plans) == 2
    assert late.key in report.plans[1].players and replaced.key not in report.plans[1].players
    assert late.seatings()[0].round == 2 and replaced.seatings() == []
    marks = {line.player: [r.mark.value for r in line.rounds] for line in report.live}
    assert marks[replaced.key] == ["played", "absent"] and marks[late.key] == ["absent", "played"]


def test_members_signing_different_rows_are_said_and_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    seating = room.players[0].seatings()[0]
    members = [room.by_key(k) for k in seating.slot.keys]
    ready = ready_table(seating.slot.table_id, seating.slot.name, [m.identity for m in members])
    room.post(members[0].key, members[0].table_ready(ready))
    room.run()
    audit = DealAudit(None, (30, -10, -10, -10), None, None, False)
    with caplog.at_level(logging.WARNING):
        for n in range(12):  # one member, twelve heads for one deal
            outs = members[0].scored(seating.slot.table_id, 0, bytes([n]) * 32, audit)
            frame = next(f for d, f in outs if d == room.organiser.key)
            room.organiser.receive(members[0].key, frame.to_wire())
    assert "sign different rows for deal 1 of round 1" in caplog.text
    assert "more than 8 versions of the row of round 1" in caplog.text
    assert len(room.organiser.held[event_id].signatures[1, seating.table, 1]) == 8


def test_every_member_holds_its_tables_rows_whole_and_can_hand_them_in(tmp_path: Path) -> None:
    """The organiser's daemon hears no member's signature: the rows still come in whole, from
    members, each of which holds every row of its table signed by all."""
    room = Room(tmp_path, 8)
    event_id = opened(room)
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    organiser = room.organiser.key
    post = room.post

    def no_signatures_to_the_organiser(sender: bytes, outs: list[EventOut]) -> None:
        post(sender, [(d, f) for d, f in outs if not (d == organiser and isinstance(f, RowSig))])

    room.post = no_signatures_to_the_organiser  # type: ignore[method-assign]  # the network made to lose the row signatures
    room.play_open_round()
    report = room.organiser.held[event_id].report
    assert report.ok and report.closed == 1
    for desk in room.players:
        rows = desk.held[event_id].rows
        assert len(rows) == 2 and all(
            wire in {e.wire for e in report_record(room, event_id)} for wire in rows.values()
        )


def report_record(room: Room, event_id: bytes) -> tuple[Any, ...]:
    return room.organiser.held[event_id].record.entries


def test_the_organiser_plays_in_its_own_event_and_signs_its_rows_like_anyone(
    tmp_path: Path,
) -> None:
    """Finding 8: the organiser's daemon registers its own player (7 others: 8 in all); it is
    seated round by round, signs its rows with its table, and the record holds — its row is
    in only once its table mates signed it too."""
    room = Room(tmp_path, 7)
    event_id = opened(room)
    organiser = room.organiser
    room.post(organiser.key, organiser.join(event_id, "organisateur"))
    room.run()
    with pytest.raises(EventError, match="registered in that event already"):
        organiser.join(event_id, "encore")
    held = organiser.held[event_id]
    assert held.report.names[organiser.key] == "organisateur" and len(held.report.names) == 8
    room.post(organiser.key, organiser.start(event_id))
    room.run()
    (seating,) = organiser.seatings()
    assert seating.round == 1 and organiser.key in seating.slot.keys
    assert organiser.key in organiser.fellows()
    assert organiser.summary(held)["seat"]["round"] == 1
    # its own signature alone does not put its row in the record
    mates = [room.by_key(k) for k in seating.slot.keys]
    ready = ready_table(seating.slot.table_id, seating.slot.name, [d.identity for d in mates])
    for desk in mates:
        room.post(desk.key, desk.table_ready(ready))
    room.run()
    audit = DealAudit(None, (30, -10, -10, -10), None, None, False)
    room.post(organiser.key, organiser.scored(seating.slot.table_id, 0, bytes(32), audit))
    room.run()
    assert (1, seating.table, 1) in held.report.pending
    for desk in mates:
        if desk is not organiser:
            room.post(desk.key, desk.scored(seating.slot.table_id, 0, bytes(32), audit))
    room.run()
    assert (1, seating.table, 1) not in held.report.pending
    # the rest of the event as any: two rounds, one record everywhere
    for desk in mates:
        room.post(desk.key, desk.scored(seating.slot.table_id, 1, bytes(32), audit))
    room.run()
    room.play_open_round()  # round 1's other table
    assert held.report.closed == 1
    assert organiser.key in held.report.plans[1].players
    room.play_open_round()
    report = verify_event(held.record)
    assert report.ok and report.closed == 2 and not report.pending
    assert organiser.key in {line.player for line in report.standings}
    for desk in room.players:
        assert desk.held[event_id].record.to_bytes() == held.record.to_bytes()
    assert organiser.seatings() == []
    restarted = room.desk(0)
    restarted.load()
    assert restarted.held[event_id].record.to_bytes() == held.record.to_bytes()


def test_a_player_asks_for_entries_only_once_its_registration_is_in(tmp_path: Path) -> None:
    """An announcement heard between a registration and its answer asks for nothing: the
    organiser refuses a want of no registered player (a hosted bot's registration leaves at
    its daemon's next heartbeat: the organiser's announcement may come first)."""
    room = Room(tmp_path, 1)
    held = room.organiser.open("Soirée du club", 2, 1, 4, Movement.RANDOM)
    room.beat(0.0)
    player = room.players[0]
    player.join(held.event_id, "joueur")  # its registration not delivered yet
    ((_, announcement),) = room.organiser.heartbeat(1.0)
    assert isinstance(announcement, Announce)
    announcement = dataclasses.replace(announcement, count=3)
    assert player.receive(room.organiser.key, announcement.to_wire()) == []


def test_the_organisers_own_row_signature_survives_its_restart(tmp_path: Path) -> None:
    """The organiser's player signed its row and its daemon died before the signature left
    for its table mates: restarted, it hands the signature kept in its store to its record
    again, and the row goes in once the mates have signed."""
    room = Room(tmp_path, 7)
    event_id = opened(room, deals=1)
    room.post(room.organiser.key, room.organiser.join(event_id, "organisateur"))
    room.run()
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    (seating,) = room.organiser.seatings()
    mates = [room.by_key(k) for k in seating.slot.keys]
    ready = ready_table(seating.slot.table_id, seating.slot.name, [d.identity for d in mates])
    for desk in mates:
        room.post(desk.key, desk.table_ready(ready))
    room.run()
    audit = DealAudit(None, (30, -10, -10, -10), None, None, False)
    room.organiser.scored(seating.slot.table_id, 0, bytes(32), audit)  # lost with the crash
    restarted = room.desk(0)
    restarted.load()
    room.desks[0] = restarted
    for desk in mates:
        if desk.key != restarted.key:
            room.post(desk.key, desk.scored(seating.slot.table_id, 0, bytes(32), audit))
    room.run()
    held = restarted.held[event_id]
    assert (1, seating.table, 1) in held.report.pending
    room.beat(10.0)
    assert (1, seating.table, 1) not in held.report.pending
    assert verify_event(held.record).ok
