"""Tables run by several daemons' runners, moved by hand: deal after deal, same score sheets."""

from __future__ import annotations

import random

from protocol.identity import Identity
from protocol.messages import Message
from protocol.scoring import ScoreSheet
from tarotd.lobby import Member, ReadyTable
from protocol.public import TableSetup
from tarotd.runner import TableRunner, bot_policies


class MemoryJournal:
    def __init__(self) -> None:
        self.seeds: dict[tuple[bytes, int, int], bytes] = {}
        self.messages: list[tuple[int, Message, bool]] = []
        self.sheets: list[ScoreSheet] = []
        self.deals: list[tuple[int, int]] = []

    def save_seed(self, table_id: bytes, deal: int, seat: int, seed: bytes) -> None:
        self.seeds[(table_id, deal, seat)] = seed

    def append_message(self, table_id: bytes, deal: int, message: Message, own: bool) -> bool:
        self.messages.append((deal, message, own))
        return True

    def start_deal(self, table_id: bytes, deal: int, dealer: int) -> None:
        self.deals.append((deal, dealer))

    def save_sheet(self, table_id: bytes, sheet: ScoreSheet) -> None:
        self.sheets.append(sheet)


def make_runners(hosting: list[int], deals: int) -> list[TableRunner]:
    daemons = [Identity.generate() for _ in hosting]
    seats: list[tuple[Identity, Member]] = []
    for index, count in enumerate(hosting):
        for k in range(count):
            identity = Identity.generate()
            seats.append((identity, Member(identity.public_key, f"p{index}-{k}", daemons[index].public_key, f"tcp://h{index}")))
    members = tuple(m for _, m in seats)
    setup = TableSetup(b"T" * 16, tuple(m.key for m in members), tuple(m.name for m in members))
    ready = ReadyTable(setup, members, first_dealer=2, manifest=b"", signatures=())
    runners = []
    for index, daemon in enumerate(daemons):
        mine = {identity.public_key: identity for identity, member in seats if member.daemon == daemon.public_key}
        hosted = [seat for seat, m in enumerate(members) if m.key in mine]
        runners.append(TableRunner(ready, daemon.public_key, mine, bot_policies(hosted, "basic", seed=index), MemoryJournal(), deals))
    return runners


def run(runners: list[TableRunner], shuffle_seed: int = 0) -> None:
    rng = random.Random(shuffle_seed)
    by_key = {r.daemon_key: r for r in runners}
    pending: list[tuple[bytes, bytes]] = []
    for runner in runners:
        pending += runner.start_deal()
    for _ in range(200_000):
        for runner in runners:
            pending += runner.step()
        if not pending:
            if all(r.finished for r in runners):
                return
            continue
        index = rng.randrange(len(pending)) if rng.random() < 0.3 else 0  # some reordering
        destination, data = pending.pop(index)
        pending += by_key[destination].receive(data)
    raise AssertionError("the table did not finish")


def test_three_deals_between_daemons_hosting_one_or_several_seats() -> None:
    runners = make_runners([1, 3, 1], deals=3)
    run(runners, shuffle_seed=4)
    sheets = [r.sheet for r in runners]
    assert all(sheet == sheets[0] for sheet in sheets)
    assert len(runners[0].history) == 3
    assert all(record.audit.ok for record in runners[0].history)
    assert [record.dealer for record in runners[0].history] == [2, 3, 4]
    for row in sheets[0].rows:
        assert sum(row.scores) == 0


def test_everything_signed_is_journaled_with_its_seed_first() -> None:
    runners = make_runners([2, 2], deals=1)
    run(runners)
    journal = runners[0].journal
    assert isinstance(journal, MemoryJournal)
    assert len(journal.seeds) == 2
    own = [m for _, m, is_own in journal.messages if is_own]
    assert own and all(m.seat in runners[0].hosted_seats for m in own)
