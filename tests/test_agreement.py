"""Every member ends a deal with the same row, whatever was cut, paused or killed (issue 26,
item 6): the others' word decides for the seat they timed out
(:mod:`protocol.replication.agreement`).

Four seats in one process (``test_deal_tamper.Table``), one of them cut off from the others
for a while — its messages held, the others' held for it — then joined again, the held
messages delivered in their order as the mesh would.  Before the rule, each of these ended with
two different rows for the deal:

* a seat killed between its last card and its reveal, back after the others' timeout: they
  scored it as keeping its seed, it scored the deal "ok";
* a seat stopped (SIGSTOP) at its turn to play, continued after the timeout: they abandoned
  the deal for its silence, it played on and abandoned the deal for theirs;
* a seat whose cable was cut at its turn: the same, and it recorded the deal at once.
"""

from __future__ import annotations

import pytest
from test_deal_tamper import PLAYERS, Table

from protocol.bots.players import decide
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Kind, Message
from protocol.replication.public import Stage

pytestmark = pytest.mark.heavy

ALONE = 2  #: the seat cut off


class Cut:
    """The table with :data:`ALONE` cut off: what it sends and what is sent to it, held."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.to_alone: list[Message] = []
        self.from_alone: list[Message] = []
        self.others = [s for s in range(PLAYERS) if s != ALONE]

    @property
    def alone(self) -> SeatMachine:
        return self.table.machines[ALONE]

    @property
    def answering(self) -> list[SeatMachine]:
        return [self.table.machines[s] for s in self.others]

    def pump(self) -> None:
        """Deliver the queue across the cut: among the others, and nothing over it."""
        table = self.table
        while table.queue:
            message = table.queue.pop(0)
            if message.seat == ALONE:
                self.from_alone.append(message)
            else:
                table.deliver(message, to=self.others)
                self.to_alone.append(message)

    def time_out(self, machines: list[SeatMachine]) -> None:
        """Each of ``machines`` times out whoever it waits for, until none waits (its clock
        runs out again at each round)."""
        for _ in range(4):
            self.pump()
            stalled = [message for machine in machines for message in machine.stall()]
            if not stalled:
                return
            self.table.queue.extend(stalled)
        self.pump()

    def join(self) -> None:
        """The cut ends: what each side sent meanwhile arrives, in order, then everything
        goes on as usual until nobody waits."""
        table = self.table
        for message in self.to_alone:
            table.queue.extend(self.alone.receive(message))
        for message in self.from_alone:
            table.deliver(message, to=self.others)
        self.to_alone, self.from_alone = [], []
        table.pump()


def assert_one_record(table: Table) -> None:
    machines = table.machines
    assert all(m.done for m in machines), [
        (m.seat, m.public.stage, m.public.stalled) for m in machines
    ]
    heads = {m.transcript.head for m in machines}
    assert len(heads) == 1, "the members hold different chains"
    audits = [m.audit for m in machines]
    assert all(a is not None for a in audits)
    rows = {(a.scores, a.penalised, a.verdict, a.abandoned) for a in audits if a is not None}
    assert len(rows) == 1, rows


def at_reveal_without_alone(table: Table) -> Cut:
    """Every card played; the cut comes just before :data:`ALONE`'s reveal leaves."""
    table.run_until(lambda: any(m.seat == ALONE and m.kind is Kind.REVEAL for m in table.queue))
    cut = Cut(table)
    for message in [m for m in table.queue if m.kind not in (Kind.REVEAL, Kind.SCORE_SIGN)]:
        table.queue.remove(message)
        table.deliver(message)  # the last card, which left before the cut
    cut.pump()
    assert all(m.public.played_out for m in table.machines)
    return cut


def test_a_seat_back_after_the_timeout_at_its_reveal_takes_the_others_row() -> None:
    """Killed between its last card and its reveal, back after the others' ``--timeout``:
    its reveal comes too late for them, they score the deal without its seed and charge it.
    It reveals, takes their reveals and signs — and then sees every one of them sign the chain
    without its reveal: it takes that chain, and their row."""
    table = Table()
    cut = at_reveal_without_alone(table)
    cut.time_out(cut.answering)
    assert all(m.done for m in cut.answering) and all(
        m.public.stalled == (ALONE,) for m in cut.answering
    )
    cut.join()
    assert_one_record(table)
    audit = cut.alone.audit
    assert audit is not None and audit.penalised == (ALONE,) and not audit.abandoned


def test_a_seat_paused_at_its_turn_takes_the_others_abandon_and_plays_nothing_more() -> None:
    """Stopped (SIGSTOP) when its turn to play came, continued after the others' timeout:
    they abandoned the deal for its silence; it finds their reveals naming it gone and stops
    there, its card never played."""
    table = Table()
    table.run_until(
        lambda: (
            table.machines[ALONE].decision() is not None
            and table.machines[0].public.stage is Stage.PLAY
        )
    )
    cut = Cut(table)
    cut.time_out(cut.answering)
    assert all(m.done for m in cut.answering)
    cut.join()
    assert cut.alone.decision() is None, "it would play on in a deal the others ended"
    assert_one_record(table)
    audit = cut.alone.audit
    assert (
        audit is not None
        and audit.abandoned
        and audit.verdict is not None
        and audit.verdict.seat == ALONE
    )


def test_a_seat_cut_off_alone_keeps_the_deal_open_then_takes_the_others_record() -> None:
    """Its cable cut after it played a card: it never hears the next one, and times the
    others out; they time it out.  Alone against three, its record does not stand — the deal
    stays open there — until it hears them, and takes theirs."""
    table = Table()
    table.run_until(
        lambda: (
            table.machines[ALONE].decision() is not None
            and table.machines[0].public.stage is Stage.PLAY
        )
    )
    game = table.machines[ALONE].game
    assert game is not None
    for action in decide(game, table.policies[ALONE]):  # it plays its card, which nobody gets
        table.queue.extend(table.machines[ALONE].act(action))
    cut = Cut(table)
    cut.time_out(cut.answering)
    cut.time_out([cut.alone])
    # It timed out the seat after it (whose turn never came for it) and, in the reveal, would
    # have timed out the other two: left alone, it declines and waits for their word.
    assert cut.alone.outvoted and len(cut.alone.public.stalled) == 1
    assert not cut.alone.done, "a seat alone recorded the deal"
    assert all(m.done for m in cut.answering), "the majority's record waits for nobody"
    cut.join()
    assert_one_record(table)
    assert cut.alone.public.stalled == (ALONE,)


def test_one_member_naming_a_seat_gone_does_not_push_it_out() -> None:
    """The others must all say it: a reveal from one member naming an honest seat gone
    changes nothing for that seat, and the deal ends as usual."""
    table = Table()
    table.run_until(
        lambda: (
            table.machines[ALONE].decision() is not None
            and table.machines[0].public.stage is Stage.PLAY
        )
    )
    liar = 0
    machine = table.machines[liar]
    forged = table.signed(
        liar, Kind.REVEAL, {"deck": machine.secret.reveal().to_wire(), "gone": [ALONE]}
    )
    head = table.machines[ALONE].transcript.head
    table.machines[ALONE].receive(forged)
    assert (
        table.machines[ALONE].transcript.head == head
        and ALONE not in table.machines[ALONE].public.stalled
    )
    assert table.machines[ALONE].decision() is not None


def test_the_others_time_a_seat_out_one_after_the_other_and_agree() -> None:
    """Each daemon's clock runs out at its own moment: the first one's reveal reaches the
    others while they still wait for the silent seat.  Kept aside, it must count once their
    own timeout opens the round — before, it never did: they timed each other out at the
    reveal, each alone on its chain."""
    table = Table()
    table.run_until(lambda: table.machines[ALONE].decision() is not None)
    cut = Cut(table)
    first, *later = cut.answering
    for message in first.stall():
        table.deliver(message, to=cut.others)
    for machine in later:
        table.queue.extend(machine.stall())
    cut.pump()
    assert all(m.done for m in cut.answering), [
        (m.seat, m.public.stage, m.waiting_for()) for m in cut.answering
    ]
    assert len({m.transcript.head for m in cut.answering}) == 1


def test_a_seat_cut_off_before_the_card_it_waits_for_catches_up_then_takes_the_others_record() -> (
    None
):
    """The cut comes just before the card this seat waits for: it times out the seat that
    played it, the others time it out a card later, at a head it never reached.  Joined again,
    it goes back to where it timed them out, takes the card, reaches that head — and their
    reveals naming it gone."""
    table = Table()
    table.run_until(
        lambda: (
            table.machines[0].public.stage is Stage.PLAY
            and (g := table.machines[0].game) is not None
            and g.to_act == (ALONE - 1) % PLAYERS
            and not table.queue
        )
    )
    before = table.machines[(ALONE - 1) % PLAYERS]
    assert before.game is not None
    cut = Cut(table)
    for action in decide(before.game, table.policies[before.seat]):
        table.queue.extend(before.act(action))  # the card ALONE waits for: it never gets it
    cut.time_out(cut.answering)
    cut.time_out([cut.alone])
    assert not cut.alone.done and all(m.done for m in cut.answering)
    cut.join()
    assert_one_record(table)
    assert cut.alone.public.stalled == (ALONE,)


def test_a_seat_that_knows_its_links_are_down_times_nobody_out() -> None:
    """Its daemon reaches no member: the one seat it waits for is not timed out as if the
    others stood by it — it reveals nothing, and waits for their word."""
    table = Table()
    alone = table.machines[ALONE]
    table.run_until(
        lambda: (
            alone.public.stage is Stage.PLAY
            and bool(alone.waiting_for())
            and ALONE not in alone.waiting_for()
        )
    )
    others = [s for s in range(PLAYERS) if s != ALONE]
    assert alone.stall(unreachable=others) == [] and alone.outvoted
    assert alone.public.stage is Stage.PLAY and not alone.public.stalled
    sent = alone.stall()  # not told its links are down: three answer, in its view
    assert [m.kind for m in sent] == [Kind.REVEAL] and alone.public.stalled
