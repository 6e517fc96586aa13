"""The event's record: an honest event verifies and gives one ranking everywhere; every way an
organiser or a player could tamper with it is refused, and named — round, table, deal, seat."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypedDict, Unpack

import msgpack
import pytest

from protocol.event.event import (
    DealStatus,
    Entry,
    EntryKind,
    EventConfig,
    EventError,
    EventRecord,
    EventReport,
    EventRow,
    Finding,
    close_round,
    open_event,
    open_round,
    plan_digest,
    read_event,
    register,
    row_entry,
    row_of_audit,
    sign_row,
    table_entry,
    table_id,
    verify_event,
)
from protocol.event.movement import Movement, RoundPlan
from protocol.event.ranking import Mark
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity
from protocol.replication.manifest import SilenceCost, sign_manifest
from protocol.replication.verdict import Fault, Verdict


def identity(name: str) -> Identity:
    return Identity.from_private_bytes(hashlib.sha256(name.encode()).digest())


ORGANISER = identity("the organiser")


class RowChanges(TypedDict, total=False):
    """What a test changes of an honest row: typed, so that ``replace`` checks each change."""

    plan: bytes
    status: DealStatus
    scores: tuple[int, ...]
    penalties: tuple[int, ...]
    silent: tuple[int, ...]


@dataclass
class Event:
    """An event played in one process: the record and who is who."""

    record: EventRecord
    config: EventConfig
    people: dict[bytes, tuple[Identity, str]]
    plans: dict[int, RoundPlan] = field(default_factory=dict)

    @property
    def event_id(self) -> bytes:
        return self.config.event_id

    def report(self) -> EventReport:
        return verify_event(self.record)

    def plan(self, round_: int) -> RoundPlan:
        if round_ not in self.plans:
            self.plans[round_] = self.report().plans[round_ - 1]
        return self.plans[round_]

    def enrol(self, name: str) -> Identity:
        player = identity(name)
        self.people[player.public_key] = (player, name)
        self.record = self.record.append(register(player, self.event_id, name))
        return player

    def open(self, places: Sequence[bytes | None] | None = None) -> None:
        self.record = self.record.append(open_round(ORGANISER, self.record, places))

    def close(self, lost: Sequence[tuple[int, int]] = ()) -> None:
        self.record = self.record.append(close_round(ORGANISER, self.record, lost))

    def seat_table(self, round_: int, table: int) -> tuple[bytes, ...]:
        members = self.plan(round_).tables[table - 1]
        manifest = sign_manifest(
            table_id(self.event_id, round_, table),
            f"table {table}",
            [self.people[key] for key in members],
            self.config.silence,
        )
        self.record = self.record.append(table_entry(manifest))
        return members

    def row(
        self,
        round_: int,
        table: int,
        deal: int,
        members: Sequence[bytes],
        **changes: Unpack[RowChanges],
    ) -> EventRow:
        players = len(members)
        swing = 10 * (deal + table + round_) + 5 * (hash_byte(members[0]) % 7)
        scores = (swing * (players - 1), *([-swing] * (players - 1)))
        row = EventRow(
            round_,
            table,
            deal,
            plan_digest(self.event_id, self.plan(round_)),
            table_id(self.event_id, round_, table),
            hashlib.sha256(b"head %d %d %d" % (round_, table, deal)).digest(),
            DealStatus.PLAYED,
            scores,
        )
        return replace(row, **changes)

    def sign(self, row: EventRow, members: Sequence[bytes], silent: Sequence[int] = ()) -> None:
        signatures = [
            None if seat in silent else sign_row(self.people[key][0], self.event_id, row)
            for seat, key in enumerate(members)
        ]
        self.record = self.record.append(row_entry(self.event_id, row, signatures))

    def play_round(
        self, round_: int, skip: Callable[[int, int], bool] = lambda table, deal: False
    ) -> None:
        self.open()
        for table in range(1, len(self.plan(round_).tables) + 1):
            members = self.seat_table(round_, table)
            for deal in range(1, self.config.deals + 1):
                if not skip(table, deal):
                    self.sign(self.row(round_, table, deal, members), members)


def hash_byte(key: bytes) -> int:
    return hashlib.sha256(key).digest()[0]


def new_event(
    players: int,
    rounds: int = 3,
    deals: int = 4,
    movement: Movement = Movement.FFT,
    table_size: int = 4,
) -> Event:
    config = EventConfig(
        b"club night 00001",
        "Club « Petit au bout »",
        ORGANISER.public_key,
        rounds,
        deals,
        table_size,
        movement,
    )
    event = Event(open_event(ORGANISER, config), config, {})
    for i in range(players):
        event.enrol(f"Joueur {i + 1}")
    return event


def played(players: int, rounds: int = 3, movement: Movement = Movement.FFT) -> Event:
    event = new_event(players, rounds, movement=movement)
    for round_ in range(1, rounds + 1):
        event.play_round(round_)
        event.close()
    return event


@pytest.fixture(scope="module")
def sixteen() -> Event:
    return played(16)


def entries_of(record: EventRecord, kind: EntryKind) -> list[int]:
    return [i for i, entry in enumerate(record.entries) if entry.kind is kind]


def with_entry(record: EventRecord, index: int, entry: Entry | None) -> EventRecord:
    """The record with entry ``index`` replaced (or dropped, for None)."""
    entries = list(record.entries)
    if entry is None:
        del entries[index]
    else:
        entries[index] = entry
    return EventRecord(tuple(entries))


def row_index(record: EventRecord, round_: int, table: int, deal: int) -> int:
    for index in entries_of(record, EntryKind.ROW):
        fields = msgpack.unpackb(record.entries[index].document)
        if fields[1:4] == [round_, table, deal]:
            return index
    raise LookupError


def found(report: EventReport, **where: object) -> list[Finding]:
    return [
        f
        for f in report.findings
        if all(getattr(f, name) == value for name, value in where.items())
    ]


# --------------------------------------------------------------------------- honest events


def test_sixteen_players_three_rounds_of_four_deals_verify(sixteen: Event) -> None:
    report = sixteen.report()
    assert report.ok, report.findings
    assert report.closed == 3 and not report.pending
    # the FFT's Howell at 4 tables
    assert [plan.movement for plan in report.plans] == [Movement.FFT] * 3
    assert all([len(t) for t in plan.tables] == [4, 4, 4, 4] for plan in report.plans)
    assert len(report.standings) == 16 and sum(s.total for s in report.standings) == 0
    assert all(result.mark is Mark.PLAYED for s in report.standings for result in s.rounds)
    assert len(report.results) == 12 and all(len(rows) == 4 for rows in report.results.values())


@pytest.mark.heavy
def test_thirteen_players_sit_five_four_four() -> None:
    event = played(13)
    report = event.report()
    assert report.ok, report.findings
    assert all([len(t) for t in plan.tables] == [5, 4, 4] for plan in report.plans)
    assert {plan.movement for plan in report.plans} == {Movement.RANDOM}  # no FFT movement for 5s


def test_every_reader_gets_the_same_plans_and_ranking(sixteen: Event) -> None:
    again = read_event(sixteen.record.to_bytes())
    assert again == sixteen.record
    first, second = sixteen.report(), verify_event(again)
    assert first.plans == second.plans and first.standings == second.standings


@pytest.mark.heavy
def test_the_organisers_restart_loses_nothing() -> None:
    """The record is all there is: read back from its bytes, the event goes on as before."""
    event = new_event(8, rounds=2, movement=Movement.BEST)
    event.play_round(1)
    event.close()
    # no plan kept
    restarted = Event(read_event(event.record.to_bytes()), event.config, event.people)
    restarted.play_round(2)
    restarted.close()
    event.play_round(2)
    event.close()
    assert restarted.record == event.record and restarted.report().ok


@pytest.mark.heavy
def test_best_against_best_seats_by_the_ranking_of_the_rows() -> None:
    event = played(16, rounds=2, movement=Movement.BEST)
    report = event.report()
    assert report.ok and report.plans[1].movement is Movement.BEST
    after_one = verify_event(
        EventRecord(event.record.entries[: entries_of(event.record, EntryKind.CLOSE)[0] + 1])
    )
    assert report.plans[1].tables[0][0] == after_one.standings[0].player


def test_the_live_ranking_counts_the_open_rounds_rows_so_far() -> None:
    partial = new_event(8, rounds=2, movement=Movement.RANDOM)
    partial.play_round(1, skip=lambda table, deal: deal > 2)
    report = partial.report()
    assert report.ok and report.closed == 0
    assert report.pending == ((1, 1, 3), (1, 1, 4), (1, 2, 3), (1, 2, 4))
    assert sum(abs(s.total) for s in report.live) > 0 and not any(s.total for s in report.standings)


# --------------------------------------------------------------------------- faults at a table


def test_a_member_gone_mid_round_leaves_abandoned_rows_signed_by_the_others() -> None:
    event = new_event(8, rounds=1)
    event.open()
    for table in (1, 2):
        members = event.seat_table(1, table)
        for deal in range(1, 5):
            if table == 2 and deal >= 3:  # seat 1 of table 2 is gone from deal 3 on
                zeros = (0,) * len(members)
                row = event.row(
                    1, table, deal, members, status=DealStatus.ABANDONED, scores=zeros, silent=(1,)
                )
                event.sign(row, members, silent=(1,))
            else:
                event.sign(event.row(1, table, deal, members), members)
    event.close()
    report = event.report()
    assert report.ok, report.findings
    gone = event.plan(1).tables[1][1]
    line = next(s for s in report.standings if s.player == gone)
    assert line.rounds[0].mark is Mark.ABANDONED
    others = [
        s for s in report.standings if s.player in event.plan(1).tables[1] and s.player != gone
    ]
    assert all(s.rounds[0].mark is Mark.PLAYED for s in others)


def test_penalty_rows_count_as_the_tables_sheet_counts_them() -> None:
    """A penalty on seat 1 of a table of 4: −100 to it, 33, 34, 33 to the others."""
    event = new_event(4, rounds=1, deals=1)
    event.open()
    members = event.seat_table(1, 1)
    event.sign(
        event.row(1, 1, 1, members, scores=(0, 0, 0, 0), status=DealStatus.VOID, penalties=(1,)),
        members,
    )
    event.close()
    report = event.report()
    assert report.ok
    totals = {s.player: (s.total, s.rounds[0].penalties) for s in report.standings}
    assert [totals[key] for key in members] == [(33, 0), (-100, 1), (34, 0), (33, 0)]


@pytest.mark.heavy
def test_a_substitute_takes_the_place_of_a_player_who_left() -> None:
    event = new_event(16, rounds=2)
    event.play_round(1)
    event.close()
    bot = event.enrol("Bot (niveau fort)")
    leaving = event.plan(1).tables[0][0]
    event.open(replace_place(first_places(event), leaving, bot.public_key))
    for table in range(1, 5):
        members = event.seat_table(2, table)
        for deal in range(1, 5):
            event.sign(event.row(2, table, deal, members), members)
    event.close()
    report = event.report()
    assert report.ok, report.findings
    assert report.plans[1].movement is Movement.FFT  # the substitute moves as the player did
    lines = {s.player: s for s in report.standings}
    assert lines[leaving].rounds[1].mark is Mark.ABSENT
    assert lines[bot.public_key].rounds[0].mark is Mark.ABSENT
    assert lines[bot.public_key].rounds[1].mark is Mark.PLAYED


def first_places(event: Event) -> list[bytes | None]:
    entry = event.record.entries[entries_of(event.record, EntryKind.ROUND)[0]]
    places: list[bytes | None] = msgpack.unpackb(entry.document)[3]
    return places


def replace_place(places: list[bytes | None], old: bytes, new: bytes | None) -> list[bytes | None]:
    return [new if key == old else key for key in places]


def test_a_withdrawal_without_substitute_seats_the_rest_at_random() -> None:
    event = new_event(16, rounds=2)
    event.play_round(1)
    event.close()
    event.open(replace_place(first_places(event), event.plan(1).tables[0][0], None))
    plan = event.plan(2)
    assert plan.movement is Movement.RANDOM and [len(t) for t in plan.tables] == [5, 5, 5]


def test_rows_declared_lost_score_nothing_and_show_it() -> None:
    event = new_event(8, rounds=1)
    event.play_round(1, skip=lambda table, deal: table == 2)
    event.close(lost=[(2, deal) for deal in range(1, 5)])
    report = event.report()
    assert report.ok, report.findings
    lost = [s for s in report.standings if s.player in event.plan(1).tables[1]]
    assert all(s.total == 0 and s.rounds[0].mark is Mark.INCOMPLETE for s in lost)


def test_row_of_audit_takes_what_the_audit_gave() -> None:
    silence = Verdict(2, "play", "stopped answering", (), Fault.SILENCE)
    audit = DealAudit(silence, (0, 0, 0, 0), None, None, abandoned=True, penalties=(), silent=(2,))
    row = row_of_audit(1, 3, 2, b"p" * 32, b"t" * 16, b"h" * 32, audit)
    assert (row.status, row.scores, row.silent, row.penalties) == (
        DealStatus.ABANDONED,
        (0, 0, 0, 0),
        (2,),
        (),
    )
    cheat = Verdict(1, "play", "renonce")
    scored = DealAudit(cheat, (-150, 50, 50, 50), None, None, abandoned=False, penalties=(cheat,))
    row = row_of_audit(1, 3, 2, b"p" * 32, b"t" * 16, b"h" * 32, scored)
    assert (row.status, row.penalties) == (DealStatus.PLAYED, (1,))


# --------------------------------------------------------------------------- tampering


def altered_row_document(record: EventRecord, index: int, **fields: object) -> Entry:
    entry = record.entries[index]
    values = msgpack.unpackb(entry.document)
    names = [
        "event",
        "round",
        "table",
        "deal",
        "plan",
        "table_id",
        "head",
        "status",
        "scores",
        "penalties",
        "silent",
    ]
    for name, value in fields.items():
        values[names.index(name)] = value
    return Entry(entry.kind, msgpack.packb(values, use_bin_type=True), entry.signatures)


def test_an_altered_row_is_named_with_every_seat_whose_signature_it_lost(sixteen: Event) -> None:
    index = row_index(sixteen.record, 2, 3, 4)
    scores = msgpack.unpackb(sixteen.record.entries[index].document)[8]
    forged = altered_row_document(sixteen.record, index, scores=[scores[1], scores[0], *scores[2:]])
    report = verify_event(with_entry(sixteen.record, index, forged))
    named = found(report, round=2, table=3, deal=4)
    assert sorted(f.seat or 0 for f in named) == [0, 1, 2, 3] and all(
        f.seat is not None for f in named
    )
    assert all("not signed by" in f.problem for f in named)
    assert not report.ok


def test_a_dropped_row_is_named_missing(sixteen: Event) -> None:
    index = row_index(sixteen.record, 1, 2, 3)
    report = verify_event(with_entry(sixteen.record, index, None))
    assert [f.problem for f in found(report, round=1, table=2, deal=3)] == ["the row is missing"]
    assert found(
        report, round=1, problem="the organiser's entry does not follow the record before it"
    )


def test_a_row_resigned_by_a_non_member_names_the_seat_and_the_signer(sixteen: Event) -> None:
    index = row_index(sixteen.record, 3, 1, 1)
    entry = sixteen.record.entries[index]
    outsider_key = sixteen.plan(3).tables[1][0]  # a registered player of another table
    outsider, outsider_name = sixteen.people[outsider_key]
    signatures = list(entry.signatures)
    signatures[2] = outsider.sign(EntryKind.ROW.domain + entry.document)
    report = verify_event(
        with_entry(sixteen.record, index, Entry(entry.kind, entry.document, tuple(signatures)))
    )
    (finding,) = found(report, round=3, table=1, deal=1)
    assert finding.seat == 2 and finding.player == sixteen.plan(3).tables[0][2]
    assert outsider_name in finding.problem and "not by the member" in finding.problem


def test_a_stranger_key_is_refused_too(sixteen: Event) -> None:
    index = row_index(sixteen.record, 3, 1, 1)
    entry = sixteen.record.entries[index]
    signatures = list(entry.signatures)
    signatures[0] = identity("nobody").sign(EntryKind.ROW.domain + entry.document)
    report = verify_event(
        with_entry(sixteen.record, index, Entry(entry.kind, entry.document, tuple(signatures)))
    )
    (finding,) = found(report, round=3, table=1, deal=1)
    assert finding.seat == 0 and "altered, or signed by another key" in finding.problem


def test_a_missing_signature_is_named(sixteen: Event) -> None:
    index = row_index(sixteen.record, 1, 4, 2)
    entry = sixteen.record.entries[index]
    signatures = (*entry.signatures[:3], None)
    report = verify_event(
        with_entry(sixteen.record, index, Entry(entry.kind, entry.document, signatures))
    )
    (finding,) = found(report, round=1, table=4, deal=2)
    assert finding.seat == 3 and "did not sign" in finding.problem


def test_silence_is_no_excuse_for_a_minority(sixteen: Event) -> None:
    """Two of four naming the other two gone do not settle a row (seat 0 is among the silent)."""
    event = new_event(4, rounds=1, deals=1)
    event.open()
    members = event.seat_table(1, 1)
    row = event.row(
        1, 1, 1, members, status=DealStatus.ABANDONED, scores=(0, 0, 0, 0), silent=(0, 1)
    )
    event.sign(row, members, silent=(0, 1))
    (finding,) = found(event.report(), round=1, table=1, deal=1)
    assert "too few members" in finding.problem


def test_reordered_rounds_are_refused(sixteen: Event) -> None:
    rounds, closes = (
        entries_of(sixteen.record, EntryKind.ROUND),
        entries_of(sixteen.record, EntryKind.CLOSE),
    )
    entries = list(sixteen.record.entries)
    second, third = entries[rounds[1] : closes[1] + 1], entries[rounds[2] : closes[2] + 1]
    swapped = entries[: rounds[1]] + third + second
    report = verify_event(EventRecord(tuple(swapped)))
    assert found(report, round=3, problem="round 3 opened out of order (after round 1 closed)")
    assert not report.ok


def test_a_changed_registration_is_refused(sixteen: Event) -> None:
    index = entries_of(sixteen.record, EntryKind.REGISTER)[5]
    entry = sixteen.record.entries[index]
    event_id, key, _ = msgpack.unpackb(entry.document)
    renamed = Entry(
        entry.kind,
        msgpack.packb([event_id, key, "Quelqu'un d'autre"], use_bin_type=True),
        entry.signatures,
    )
    report = verify_event(with_entry(sixteen.record, index, renamed))
    assert found(report, entry=index, player=key)
    assert "not signed by its player" in found(report, entry=index)[0].problem


def test_a_dropped_registration_changes_the_draw_and_is_refused(sixteen: Event) -> None:
    index = entries_of(sixteen.record, EntryKind.REGISTER)[0]
    report = verify_event(with_entry(sixteen.record, index, None))
    assert found(
        report, round=1, problem="the places of round 1 are not the draw of the registered players"
    )


def test_a_forged_ranking_is_named(sixteen: Event) -> None:
    index = entries_of(sixteen.record, EntryKind.CLOSE)[2]
    event_id, round_, head, ranking, lost = msgpack.unpackb(sixteen.record.entries[index].document)
    ranking[0][2] += 100  # the winner's total, a little higher
    document = msgpack.packb([event_id, round_, head, ranking, lost], use_bin_type=True)
    forged = Entry(EntryKind.CLOSE, document, (ORGANISER.sign(EntryKind.CLOSE.domain + document),))
    report = verify_event(with_entry(sixteen.record, index, forged))
    (finding,) = report.findings
    winner = sixteen.people[ranking[0][0]][1]
    assert finding.round == 3 and f"line 1 should be {winner}" in finding.problem


def test_a_plan_the_movement_does_not_give_is_refused(sixteen: Event) -> None:
    """The organiser seats two players' places swapped: the plan is no longer the movement's —
    and no table's members signed it."""
    index = entries_of(sixteen.record, EntryKind.ROUND)[0]
    event_id, round_, head, places, digest = msgpack.unpackb(sixteen.record.entries[index].document)
    places[0], places[1] = places[1], places[0]
    document = msgpack.packb([event_id, round_, head, places, digest], use_bin_type=True)
    forged = Entry(EntryKind.ROUND, document, (ORGANISER.sign(EntryKind.ROUND.domain + document),))
    report = verify_event(with_entry(sixteen.record, index, forged))
    assert found(
        report, round=1, problem="the places of round 1 are not the draw of the registered players"
    )


def test_a_table_of_other_members_than_the_plan_is_refused() -> None:
    event = new_event(8, rounds=1)
    event.open()
    plan = event.plan(1)
    swapped = [plan.tables[0][0], plan.tables[1][1], *plan.tables[0][2:]]
    manifest = sign_manifest(
        table_id(event.event_id, 1, 1), "table 1", [event.people[k] for k in swapped]
    )
    event.record = event.record.append(table_entry(manifest))
    report = event.report()
    assert found(report, round=1, table=1, seat=1, player=plan.tables[1][1])
    assert found(report, round=1, table=1, player=plan.tables[0][1])


def test_a_table_under_another_rule_for_silence_is_refused() -> None:
    event = new_event(4, rounds=1)
    event.open()
    members = event.plan(1).tables[0]
    manifest = sign_manifest(
        table_id(event.event_id, 1, 1), "t", [event.people[k] for k in members], SilenceCost.PENALTY
    )
    event.record = event.record.append(table_entry(manifest))
    assert "rule for silence" in found(event.report(), round=1, table=1)[0].problem


def test_lost_rows_that_the_record_holds_are_a_false_claim() -> None:
    event = new_event(8, rounds=1)
    event.play_round(1)
    event.close(lost=[(1, 2)])
    assert [f.problem for f in event.report().findings] == [
        "declared lost, but the record holds the row"
    ]


def test_a_row_for_another_plan_is_refused() -> None:
    event = new_event(4, rounds=1, deals=1)
    event.open()
    members = event.seat_table(1, 1)
    event.sign(event.row(1, 1, 1, members, plan=b"\x00" * 32), members)
    (finding,) = found(event.report(), round=1, table=1, deal=1)
    assert "another plan" in finding.problem


def test_a_config_not_signed_by_its_organiser_stops_everything() -> None:
    config = EventConfig(b"n" * 16, "x", identity("someone").public_key, 1, 1, 4, Movement.RANDOM)
    document = config.document()
    record = EventRecord(
        (Entry(EntryKind.CONFIG, document, (ORGANISER.sign(EntryKind.CONFIG.domain + document),)),)
    )
    report = verify_event(record)
    assert [f.problem for f in report.findings] == [
        "the config is not signed by the organiser it names"
    ]
    assert report.config is None
    assert verify_event(EventRecord(())).findings


def test_the_builders_refuse_to_go_on_from_a_record_that_does_not_verify(sixteen: Event) -> None:
    broken = with_entry(sixteen.record, row_index(sixteen.record, 1, 1, 1), None)
    with pytest.raises(EventError):
        close_round(ORGANISER, broken)


# --------------------------------------------------------------------------- the gate


def test_the_file_round_trips(sixteen: Event) -> None:
    assert read_event(sixteen.record.to_bytes()) == sixteen.record


@pytest.mark.parametrize(
    "mangle",
    [
        lambda data: data + b"\x00",  # trailing bytes
        lambda data: data[:-1],  # cut short
        lambda data: msgpack.packb({"tarot-event": 1}),  # a map
        lambda data: msgpack.packb(
            [b"tarot-event", [["config", b"", [1]]]], use_bin_type=True
        ),  # a number for a signature
        lambda data: msgpack.packb(
            [b"tarot-event", [["vote", b"", []]]], use_bin_type=True
        ),  # unknown kind
        lambda data: data.replace(
            b"\xc4\x10", b"\xc5\x00\x10", 1
        ),  # a longer header for the same bytes
    ],
)
def test_the_gate_refuses_what_is_not_canonical(
    sixteen: Event, mangle: Callable[[bytes], bytes]
) -> None:
    with pytest.raises(EventError):
        read_event(mangle(sixteen.record.to_bytes()))


def test_a_malformed_document_inside_is_a_finding_not_a_crash(sixteen: Event) -> None:
    index = row_index(sixteen.record, 1, 1, 1)
    entry = sixteen.record.entries[index]
    report = verify_event(
        with_entry(sixteen.record, index, Entry(entry.kind, b"\x92\x01", entry.signatures))
    )
    assert found(report, entry=index)[0].problem.startswith("malformed row entry")


@pytest.mark.parametrize(
    "changes",
    [{"rounds": 0}, {"deals": 13}, {"table_size": 3}, {"name": ""}, {"nonce": b"short"}],
)
def test_a_config_out_of_bounds_cannot_be_made(changes: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "nonce": b"n" * 16,
        "name": "x",
        "organiser": ORGANISER.public_key,
        "rounds": 3,
        "deals": 4,
        "table_size": 4,
        "movement": Movement.FFT,
    }
    fields.update(changes)
    with pytest.raises(EventError):
        EventConfig(**fields)  # type: ignore[arg-type]  # fields of mixed types from one dict: the bounds are under test
