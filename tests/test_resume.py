"""A seat's machine rebuilt after a crash from what it had stored: it carries on the deal
and signs nothing new for a slot it had already spoken in."""

from __future__ import annotations

import random

import pytest

from client.simulation import sim_table
from protocol.bots.bots import make_bot
from protocol.bots.players import decide
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Message, decode, encode

pytestmark = pytest.mark.heavy

PLAYERS = 5


def run_with_crash(crash_after: int, victim: int = 2) -> list[SeatMachine]:
    """Play a deal; after ``crash_after`` messages, seat ``victim`` loses its memory and is
    rebuilt from its stored messages (every message it received or signed, in that order)."""
    table, identities = sim_table(PLAYERS, seed=12)
    seeds = [bytes([s]) * 32 for s in range(PLAYERS)]
    machines = [SeatMachine(table, 0, 1, s, identities[s], seeds[s]) for s in range(PLAYERS)]
    policies = [make_bot("basic", random.Random(s)) for s in range(PLAYERS)]
    stored: list[Message] = []
    queue = [m for machine in machines for m in machine.start()]
    stored.extend(m for m in queue if m.seat == victim)
    delivered = 0
    crashed = False
    while not all(m.done for m in machines):
        while queue:
            message = decode(encode(queue.pop(0)))
            delivered += 1
            for machine in machines:
                if machine.seat == message.seat:
                    continue
                if machine.seat == victim:
                    stored.append(message)
                out = machine.receive(message)
                stored.extend(m for m in out if machine.seat == victim)
                queue.extend(out)
            if not crashed and delivered >= crash_after:
                crashed = True
                rebuilt, resent = SeatMachine.resume(
                    table, 0, 1, victim, identities[victim], seeds[victim], stored
                )
                assert rebuilt.transcript.head == machines[victim].transcript.head
                machines[victim] = rebuilt
                queue.extend(resent)  # duplicates: the peers ignore them
        deciding = next((m for m in machines if m.decision() is not None), None)
        if deciding is None:
            break
        assert deciding.game is not None
        for action in decide(deciding.game, policies[deciding.seat]):
            out = deciding.act(action)
            if deciding.seat == victim:
                stored.extend(out)
            queue.extend(out)
    return machines


@pytest.mark.parametrize("crash_after", [3, 12, 40, 80, 120])
def test_a_resumed_seat_finishes_the_deal_identically(crash_after: int) -> None:
    machines = run_with_crash(crash_after)
    assert all(m.done for m in machines)
    assert len({m.transcript.head for m in machines}) == 1
    audits = [m.audit for m in machines]
    assert all(a is not None and a.ok for a in audits)


@pytest.mark.parametrize("victim", range(PLAYERS))
def test_every_seat_can_resume_mid_tricks(victim: int) -> None:
    """Whoever crashes — the taker after its écart included — the deal ends the same."""
    machines = run_with_crash(60, victim)
    assert all(m.done for m in machines)
    assert len({m.transcript.head for m in machines}) == 1


def test_resume_refuses_another_seed() -> None:
    table, identities = sim_table(PLAYERS, seed=12)
    machine = SeatMachine(table, 0, 1, 2, identities[2], bytes([2]) * 32)
    stored = machine.start()
    with pytest.raises(ValueError, match="seed"):
        SeatMachine.resume(table, 0, 1, 2, identities[2], bytes([9]) * 32, stored)


def test_a_seat_that_timed_a_peer_out_resumes_after_its_reveal() -> None:
    """Seat 2 falls silent in the tricks; seats 0 and 1 time it out and reveal.  Seat 0,
    killed then and rebuilt from its journal, learns its own time-out from the reveal it had
    signed — it signs nothing different — and the deal ends abandoned by seat 2."""
    players, silent = 3, 2
    # a deal that reaches the tricks under the v2 card points
    table, identities = sim_table(players, seed=7)
    seeds = [bytes([s + 1]) * 32 for s in range(players)]
    machines = [SeatMachine(table, 0, 0, s, identities[s], seeds[s]) for s in range(players)]
    policies = [make_bot("basic", random.Random(s)) for s in range(players)]
    journal: list[Message] = []  # seat 0's: what it received and signed, in that order
    reachable = machines  # once seat 2 is gone, nothing reaches it any more

    def sent_by(machine: SeatMachine, messages: list[Message]) -> list[Message]:
        if machine.seat == 0:
            journal.extend(messages)
        return messages

    def deliver(queue: list[Message]) -> None:
        while queue:
            message = queue.pop(0)
            for machine in reachable:
                if machine.seat != message.seat:
                    if machine.seat == 0:
                        journal.append(message)
                    queue.extend(sent_by(machine, machine.receive(message)))

    deliver([m for machine in machines for m in sent_by(machine, machine.start())])
    while (deciding := next((m for m in machines if m.decision() is not None), None)) is not None:
        assert deciding.game is not None
        if deciding.seat == silent and len(deciding.game.tricks) >= 2:
            break  # seat 2 goes silent at its turn in the third trick or later
        deliver(
            sent_by(
                deciding, deciding.act(next(iter(decide(deciding.game, policies[deciding.seat]))))
            )
        )
    assert machines[0].public.stage.value == "play"
    reachable = machines[:silent]
    deliver([m for machine in reachable for m in sent_by(machine, machine.stall())])
    assert any(m.kind.value == "reveal" for m in journal if m.seat == 0)
    rebuilt, resent = SeatMachine.resume(table, 0, 0, 0, identities[0], seeds[0], journal)
    assert rebuilt.transcript.head == machines[0].transcript.head
    machines[0] = reachable[0] = rebuilt
    deliver([*resent, *machines[1].stall()])
    assert rebuilt.done and machines[1].done
    audit = rebuilt.audit
    assert (
        audit is not None
        and audit.abandoned
        and audit.verdict is not None
        and audit.verdict.seat == silent
    )
