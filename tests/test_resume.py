"""A seat's machine rebuilt after a crash from what it had stored: it carries on the deal
and signs nothing new for a slot it had already spoken in."""

from __future__ import annotations

import random

import pytest

from client.simulation import sim_table
from protocol.bots import make_bot
from protocol.machine import SeatMachine
from protocol.messages import Message, decode, encode
from protocol.players import decide

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
                rebuilt, resent = SeatMachine.resume(table, 0, 1, victim, identities[victim], seeds[victim], stored)
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
