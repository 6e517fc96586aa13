"""Tables run by several daemons' runners, moved by hand: deal after deal, same score sheets."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pytest

from protocol.bots.players import decide
from protocol.replication.identity import Identity
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Message, decode, encode
from protocol.replication.public import TableSetup
from protocol.rules.scoring import ScoreSheet
from tarotd import runner as runner_module
from tarotd.lobby import Member, ReadyTable
from tarotd.runner import MAX_RELAYED, TableRunner, bot_policies, decoded, relayed
from tarotd.store import DealState, LocalFault, Store, StoreFault, TableRecord, TableState

pytestmark = pytest.mark.heavy


class MemoryJournal:
    """The runner's journal in memory (the daemon's is the SQLite store)."""

    def __init__(self) -> None:
        self.seeds: dict[tuple[bytes, int, int], bytes] = {}
        self.journal: list[tuple[int, Message, bool]] = []
        self.sheets: list[ScoreSheet] = []
        self.started: dict[int, Deal] = {}
        self.recorded: list[dict[str, object]] = []  #: the results as last recorded
        self.synced = 0  #: how many entries of ``journal`` a sync has put "on the disk"

    def save_seed(self, table_id: bytes, deal: int, seat: int, seed: bytes) -> None:
        self.seeds[(table_id, deal, seat)] = seed

    def seed(self, table_id: bytes, deal: int, seat: int) -> bytes | None:
        return self.seeds.get((table_id, deal, seat))

    def append_message(self, table_id: bytes, deal: int, message: Message, own: bool) -> bool:
        if any(m.digest == message.digest for _, m, _ in self.journal):
            return False
        self.journal.append((deal, message, own))
        return True

    def sync(self) -> None:
        self.synced = len(self.journal)

    def messages(self, table_id: bytes, deal: int) -> list[Message]:
        return [m for d, m, _ in self.journal if d == deal]

    def start_deal(self, table_id: bytes, deal: int, dealer: int) -> bool:
        self.started.setdefault(deal, Deal(deal, DealState.STARTED))
        return True

    def deals(self, table_id: bytes) -> list[Deal]:
        return [self.started[d] for d in sorted(self.started)]

    def record_deal(
        self,
        table_id: bytes,
        deal: int,
        sheet: ScoreSheet,
        results: Sequence[Mapping[str, object]],
        closing: Sequence[Message] = (),
    ) -> None:
        self.started[deal] = Deal(deal, DealState.SCORED)
        self.sheets.append(ScoreSheet.from_json(sheet.to_json()))
        self.recorded = json.loads(json.dumps(list(results)))

    def sheet(self, table_id: bytes) -> ScoreSheet | None:
        return self.sheets[-1] if self.sheets else None

    def results(self, table_id: bytes) -> list[dict[str, object]]:
        return list(self.recorded)


@dataclass(frozen=True)
class Deal:
    deal: int
    state: str


def make_runners(hosting: list[int], deals: int) -> list[TableRunner]:
    daemons = [Identity.generate() for _ in hosting]
    seats: list[tuple[Identity, Member]] = []
    for index, count in enumerate(hosting):
        for k in range(count):
            identity = Identity.generate()
            seats.append(
                (
                    identity,
                    Member(
                        identity.public_key,
                        f"p{index}-{k}",
                        daemons[index].public_key,
                        f"tcp://h{index}",
                    ),
                )
            )
    members = tuple(m for _, m in seats)
    setup = TableSetup(b"T" * 16, tuple(m.key for m in members), tuple(m.name for m in members))
    ready = ReadyTable(setup, members, first_dealer=2, manifest=b"", signatures=())
    runners = []
    for index, daemon in enumerate(daemons):
        mine = {
            identity.public_key: identity
            for identity, member in seats
            if member.daemon == daemon.public_key
        }
        hosted = [seat for seat, m in enumerate(members) if m.key in mine]
        runners.append(
            TableRunner(
                ready,
                daemon.public_key,
                mine,
                bot_policies(hosted, "basic", seed=index),
                MemoryJournal(),
                deals,
            )
        )
    return runners


def synced(runner: TableRunner, outs: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``outs``, once checked to leave only after every message a hosted seat signed is on
    the "disk" (a relay of a message received need not wait for it)."""
    journal = runner.journal
    assert isinstance(journal, MemoryJournal)
    if outs:
        unsynced = journal.journal[journal.synced :]
        assert not any(own for _, _, own in unsynced), (
            "a signed message is sent before the journal is synced"
        )
    return outs


def run(runners: list[TableRunner], shuffle_seed: int = 0) -> None:
    rng = random.Random(shuffle_seed)
    by_key = {r.daemon_key: r for r in runners}
    pending: list[tuple[bytes, bytes]] = []
    for runner in runners:
        pending += synced(runner, runner.start_deal())
    for _ in range(200_000):
        for runner in runners:
            pending += synced(runner, runner.step())
        if not pending:
            if all(r.finished for r in runners):
                return
            continue
        index = rng.randrange(len(pending)) if rng.random() < 0.3 else 0  # some reordering
        destination, data = pending.pop(index)
        pending += synced(by_key[destination], by_key[destination].receive(decode(data)))
    raise AssertionError("the table did not finish")


def test_three_deals_between_daemons_hosting_one_or_several_seats() -> None:
    runners = make_runners([1, 3, 1], deals=3)
    run(runners, shuffle_seed=4)
    sheets = [r.sheet for r in runners]
    assert all(sheet == sheets[0] for sheet in sheets)
    assert runners[0].completed == 3
    assert all(result["audit"] == "ok" for result in runners[0].results)
    assert [result["dealer"] for result in runners[0].results] == [2, 3, 4]
    for row in sheets[0].rows:
        assert sum(row.scores) == 0


def test_everything_signed_is_journaled_with_its_seed_first() -> None:
    runners = make_runners([2, 2], deals=1)
    run(runners)
    journal = runners[0].journal
    assert isinstance(journal, MemoryJournal)
    assert len(journal.seeds) == 2
    own = [m for _, m, is_own in journal.journal if is_own]
    assert own and all(m.seat in runners[0].hosted_seats for m in own)


@pytest.mark.parametrize("power_cut", [False, True], ids=["kill-9", "power-cut"])
def test_a_daemon_killed_mid_deal_resumes_from_its_journal(power_cut: bool) -> None:
    """A kill -9 loses what was in memory; a power cut also what was journaled since the
    last sync, which may only be messages received and not yet acknowledged (the runner
    syncs before it sends anything): their senders still hold them and send them again."""
    runners = make_runners([1, 1, 1, 1], deals=2)
    by_key = {r.daemon_key: r for r in runners}
    pending: list[tuple[bytes, bytes]] = []
    for runner in runners:
        pending += runner.start_deal()
    delivered = 0
    crashes = [40, 150]  # mid-deal: during the lock/deal steps and during the tricks
    for _ in range(200_000):
        for runner in runners:
            pending += synced(runner, runner.step())
        if not pending:
            if all(r.finished for r in runners):
                break
            continue
        destination, data = pending.pop(0)
        victim = by_key[destination]
        journal = victim.journal
        assert isinstance(journal, MemoryJournal)
        unsynced = journal.journal[journal.synced :]
        if crashes and delivered >= crashes[0] and (unsynced or not power_cut):
            crashes.pop(0)
            # kill -9: everything in memory is lost; what was journaled stays.
            if power_cut:
                assert not any(own for _, _, own in unsynced)
                del journal.journal[journal.synced :]
                pending += [(victim.daemon_key, encode(message)) for _, message, _ in unsynced]
            reborn = TableRunner(
                victim.ready,
                victim.daemon_key,
                victim.identities,
                victim.bots,
                victim.journal,
                victim.deals_wanted,
            )
            pending += synced(reborn, reborn.resume())
            runners[runners.index(victim)] = by_key[destination] = reborn
        pending += synced(by_key[destination], by_key[destination].receive(decode(data)))
        delivered += 1
    assert not crashes and all(r.finished for r in runners)
    sheets = [r.sheet for r in runners]
    assert all(sheet == sheets[0] for sheet in sheets) and len(sheets[0].rows) == 2
    assert all(result["audit"] == "ok" for r in runners for result in r.results)


def play_with_a_person(
    runners: list[TableRunner], between_deals: Callable[[TableRunner], TableRunner]
) -> TableRunner:
    """Play the table with the seat of ``runners[0]`` played through the API (its bot's
    choices, by hand); whenever that daemon waits between deals with nothing else moving,
    ``between_deals`` gets it and returns the runner to go on with.  Returns the last one."""
    person = runners[0]
    seat = person.hosted_seats[0]
    policy = person.bots.pop(seat)  # the seat is now played through the API
    by_key = {r.daemon_key: r for r in runners}
    pending = [out for runner in runners for out in runner.start_deal()]
    for _ in range(200_000):
        machine = person.machines.get(seat)
        if machine is not None and machine.decision() is not None and machine.game is not None:
            for action in decide(machine.game, policy):
                pending += person.act(seat, action)
        for runner in runners:
            pending += runner.step()
        if pending:
            destination, data = pending.pop(0)
            pending += by_key[destination].receive(decode(data))
        elif person.between_deals:
            person = runners[0] = by_key[person.daemon_key] = between_deals(person)
            pending += person.next_deal()
        elif all(r.finished for r in runners):
            break
    return person


def test_a_person_reads_the_score_sheet_before_the_next_deal() -> None:
    """Bots deal again at once; the daemon of a person waits for its "next", and the other
    daemons keep the next deal's first messages meanwhile."""
    runners = make_runners([1, 1, 1], deals=2)
    with pytest.raises(ValueError, match="not over"):
        runners[0].next_deal()

    def reads_the_sheet(person: TableRunner) -> TableRunner:
        assert person.completed == 1 and not person.machines
        # they wait for its commit
        assert all(r.deal_number == 1 and r.machines for r in runners[1:])
        return person

    person = play_with_a_person(runners, reads_the_sheet)
    assert all(r.finished for r in runners) and not person.between_deals
    assert all(r.sheet == person.sheet for r in runners) and len(person.sheet.rows) == 2
    with pytest.raises(ValueError, match="finished"):
        person.next_deal()


def test_relays_wait_for_a_batch_that_reaches_every_daemon_but_the_signers() -> None:
    """What a hosted seat signs goes out at once; what it passes on of the others' waits in
    ``relays`` for one batch per daemon, and a batch is received as its messages would be."""
    a, b, c = make_runners([1, 1, 1], deals=1)
    first = a.start_deal()
    b.start_deal(), c.start_deal()
    commit = next(data for daemon, data in first if daemon == b.daemon_key)
    outs = b.receive(decode(commit))
    assert all(decode(data).seat in b.hosted_seats for _, data in outs)  # no relay in them
    assert [m.seat for m in b.relays] == a.hosted_seats
    batches = b.take_relays()
    assert not b.relays and [daemon for daemon, _ in batches] == [c.daemon_key]  # not back to a
    journal = c.journal
    assert isinstance(journal, MemoryJournal)
    before = len(journal.journal)
    c.receive(*decoded(relayed(batches[0][1])))
    assert journal.journal[before][1] == decode(commit)
    # a copy
    assert c.receive(*decoded(relayed(batches[0][1]))) == [] and len(journal.journal) == before + 1


def test_a_daemon_hosting_several_seats_sends_and_relays_each_message_once() -> None:
    """Each seat here that accepts a message passes it on; the daemon takes it once — its
    own seats' messages leave once for each other daemon, a relay batch holds no copy."""
    runners = make_runners([1, 3, 1], deals=1)
    host = runners[1]
    frames: list[tuple[bytes, bytes]] = []
    relayed: list[list[bytes]] = []
    original = host._dispatch

    def counting(messages: list[Message]) -> list[tuple[bytes, bytes]]:
        outs = original(messages)
        frames.extend((daemon, decode(data).digest) for daemon, data in outs)
        relayed.append([m.digest for m in host.relays])
        return outs

    host._dispatch = counting  # type: ignore[method-assign]  # a spy around the runner's own dispatch
    run(runners, shuffle_seed=4)
    per_message = Counter(digest for _, digest in frames)
    assert frames and set(per_message.values()) == {2}  # to each of the two other daemons, once
    assert all(len(set(batch)) == len(batch) for batch in relayed)


def test_each_hosted_seat_is_handed_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat that accepts a message passes it on (a relay): the runner hands it to the other
    seats hosted here, not back to the one that passed it on, which has it."""
    handed: Counter[tuple[int, bytes]] = Counter()
    original = SeatMachine.receive

    def counting(machine: SeatMachine, message: Message) -> list[Message]:
        handed[(id(machine), message.digest)] += 1
        return original(machine, message)

    monkeypatch.setattr(SeatMachine, "receive", counting)
    runners = make_runners([1, 3, 1], deals=1)
    run(runners, shuffle_seed=4)
    assert all(r.finished for r in runners)
    assert handed and max(handed.values()) == 1, handed.most_common(3)


@pytest.mark.parametrize(
    "junk",
    [
        b"\xc1",
        msgpack.packb({"not": "a list"}),
        msgpack.packb([b"ok", 3]),
        msgpack.packb([b"x"] * (MAX_RELAYED + 1)),
    ],
    ids=["not-msgpack", "a-map", "not-bytes", "too-many"],
)
def test_a_malformed_batch_of_relays_changes_nothing(junk: bytes) -> None:
    a, _, _ = make_runners([1, 1, 1], deals=1)
    a.start_deal()
    journal = a.journal
    assert isinstance(journal, MemoryJournal)
    before = list(journal.journal)
    assert relayed(junk) == [] and a.receive(*decoded(relayed(junk))) == []
    assert journal.journal == before and not a.relays


def test_relays_are_cut_into_batches_under_the_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "RELAY_BATCH_BYTES", 100)
    wires = [bytes([k]) * 40 for k in range(7)]
    batches = [msgpack.unpackb(batch) for batch in runner_module._batches(wires)]
    assert [len(batch) for batch in batches] == [2, 2, 2, 1]
    assert [wire for batch in batches for wire in batch] == wires


def test_a_table_finishes_over_relays_alone_when_a_link_loses_everything() -> None:
    """Daemons 0 and 1 cannot reach each other directly: every message between them goes
    round through the relays of the two others, and the table plays its deals as usual."""
    runners = make_runners([1, 1, 1, 1], deals=2)
    cut = {
        (runners[0].daemon_key, runners[1].daemon_key),
        (runners[1].daemon_key, runners[0].daemon_key),
    }
    by_key = {r.daemon_key: r for r in runners}
    pending: list[tuple[bytes, bytes, bytes, bool]] = []  # (from, to, data, is a batch)

    def send(runner: TableRunner, outs: list[tuple[bytes, bytes]], batch: bool = False) -> None:
        pending.extend((runner.daemon_key, to, data, batch) for to, data in synced(runner, outs))

    for runner in runners:
        send(runner, runner.start_deal())
    for _ in range(200_000):
        for runner in runners:
            send(runner, runner.step())
        if not pending:
            if all(r.finished for r in runners):
                break
            for runner in runners:  # nothing else moves: the relays go out
                send(runner, runner.take_relays(), batch=True)
            continue
        sender, destination, data, batch = pending.pop(0)
        if (sender, destination) in cut:
            continue
        target = by_key[destination]
        send(target, target.receive(*decoded(relayed(data) if batch else [data])))
    assert all(r.finished for r in runners)
    sheets = [r.sheet for r in runners]
    assert all(sheet == sheets[0] for sheet in sheets) and len(sheets[0].rows) == 2
    assert all(result["audit"] == "ok" for r in runners for result in r.results)


class LoggedJournal(MemoryJournal):
    """A memory journal that logs what a hosted seat signs and every sync, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    def append_message(self, table_id: bytes, deal: int, message: Message, own: bool) -> bool:
        if own:
            self.log.append(f"sign {message.kind.value}")
        return super().append_message(table_id, deal, message, own)

    def sync(self) -> None:
        self.log.append("sync")
        super().sync()


def test_a_player_sees_what_it_received_before_the_sync_of_what_its_seat_signs_in_answer() -> None:
    """``on_events`` shows the events of a message received before the answer the hosted seat
    signed to it (its reveal after the last card, or after the last bid when every seat passed)
    is written down and synced; the answer itself still leaves only after the sync (``synced``
    checks that)."""
    runners = make_runners([1, 1, 1, 1, 1], deals=1)
    for runner in runners:
        journal = runner.journal = LoggedJournal()

        def show(runner: TableRunner = runner, journal: LoggedJournal = journal) -> None:
            journal.log.extend(f"show {event.kind}" for _, event in runner.events)
            runner.events.clear()

        runner.on_events = show
    run(runners, shuffle_seed=2)
    assert all(r.finished for r in runners)
    for runner in runners:
        assert isinstance(runner.journal, LoggedJournal)
        log = runner.journal.log
        reveal = log.index("sign reveal")
        last_shown = max(k for k, line in enumerate(log[:reveal]) if line.startswith("show "))
        assert "sync" not in log[last_shown:reveal]  # shown, then signed, then synced
        assert "sync" in log[reveal:]


class FullDisk:
    """The store's connection, whose commits fail while ``full`` as on a full disk (SQLite's
    ``SQLITE_FULL``): the transaction is rolled back, nothing of it is on the disk."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.full = False
        self.refused = 0  #: commits refused

    def execute(self, sql: str, parameters: Sequence[object] = ()) -> sqlite3.Cursor:
        if self.full and sql == "COMMIT":
            self.refused += 1
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise error
        return self.db.execute(sql, parameters)

    def __getattr__(self, name: str) -> object:
        return getattr(self.db, name)


def stored_journal(runner: TableRunner, path: Path) -> FullDisk:
    """Give ``runner`` a real store at ``path`` (its table saved), whose disk can fill."""
    store = Store(path)
    store.save_table(
        TableRecord(runner.table_id, "t", len(runner.ready.members), TableState.PLAYING, 0.0)
    )
    disk = FullDisk(store._db)
    store._db = disk  # type: ignore[assignment]  # the store's connection behind a disk that fills
    runner.journal = store
    return disk


@pytest.mark.parametrize("again", ["the same runner", "a runner rebuilt from the journal"])
def test_a_deal_whose_recording_fails_is_on_the_sheet_once(tmp_path: Path, again: str) -> None:
    """The disk fills as the first deal ends, so recording it fails; recorded again once there
    is room — by the same runner, or by the one the daemon rebuilds from the journal — it is
    on the sheet, the results and the disk once.  (Added to the sheet before it was saved, a
    chaos run's deal was there five times, and the daemon believed its table finished while
    the others waited for its next commitments.)"""
    runners = make_runners([1, 1, 1], deals=2)
    victim = runners[1]
    disk = stored_journal(victim, tmp_path / "tarot.db")
    signed: list[tuple[int, bytes]] = []  # what an event table's daemon signs (on_scored)
    victim.on_scored = lambda deal, head, audit: signed.append((deal, head))
    by_key = {r.daemon_key: r for r in runners}
    pending = [out for runner in runners for out in runner.start_deal()]
    for _ in range(200_000):
        if victim.machines and all(m.done for m in victim.machines.values()) and not disk.refused:
            disk.full = True
            with pytest.raises(StoreFault, match="database or disk is full") as failed:
                victim.step()
            assert (
                failed.value.fault is LocalFault.DISK_FULL
                and victim.completed == 0
                and not victim.sheet.rows
            )
            # signed before the write: a crash now leaves it signed
            assert [deal for deal, _ in signed] == [0]
            disk.full = False
            if again != "the same runner":
                rebuilt = TableRunner(
                    victim.ready,
                    victim.daemon_key,
                    victim.identities,
                    victim.bots,
                    victim.journal,
                    2,
                )
                rebuilt.on_scored = victim.on_scored
                pending += rebuilt.resume()
                runners[1] = by_key[victim.daemon_key] = victim = rebuilt
        for runner in runners:
            pending += runner.step()
        if pending:
            destination, data = pending.pop(0)
            pending += by_key[destination].receive(decode(data))
        elif all(r.finished for r in runners):
            break
    assert disk.refused == 1 and all(r.finished for r in runners)
    assert all(r.sheet == runners[0].sheet for r in runners) and len(victim.sheet.rows) == 2
    assert [result["deal"] for result in victim.results] == [0, 1]
    # deal 0 signed again, the same
    assert [deal for deal, _ in signed] == [0, 0, 1] and signed[0] == signed[1]
    assert (
        isinstance(victim.journal, Store) and victim.journal.sheet(victim.table_id) == victim.sheet
    )


def test_the_next_deals_first_messages_outlive_a_crash_between_deals() -> None:
    """A person reads the score sheet while the others start the next deal: their commitments
    are journaled, not kept in memory — the mesh counted them delivered, and nobody sends
    them again — so the daemon killed then and started again deals on with them."""
    runners = make_runners([1, 1, 1], deals=2)

    def killed_and_started_again(person: TableRunner) -> TableRunner:
        # their commitments went out
        assert all(r.deal_number == 1 and r.machines for r in runners[1:])
        reborn = TableRunner(
            person.ready, person.daemon_key, person.identities, person.bots, person.journal, 2
        )
        reborn.resume()  # what it sends again of its last deal, the others have
        assert reborn.between_deals
        return reborn

    person = play_with_a_person(runners, killed_and_started_again)
    assert all(r.finished for r in runners)
    assert all(r.sheet == person.sheet for r in runners) and len(person.sheet.rows) == 2
