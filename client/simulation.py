"""Whole deals in one process, through the real protocol: ``tarot sim``.

Every seat is its own :class:`~protocol.machine.SeatMachine` with its own identity; every
message is really signed, encoded, decoded and checked by every other seat, as between
daemons.  Only the network is missing: a queue hands each message to the other seats in the
order it was sent.

Deterministic for a seed: the simulator derives the identities, every seat's secret deck
seed and the bots' choices from ``--seed`` (the daemon never does: it uses the OS CSPRNG).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol.bots import make_bot
from protocol.cards import codes
from protocol.cheats import cheat_machine
from protocol.identity import Identity
from protocol.machine import SeatMachine
from protocol.messages import decode, encode
from protocol.players import decide
from protocol.public import TableSetup
from protocol.scoring import ScoreSheet

#: Rounds of "nobody can move" after which the simulator plays the timeout of a real table.
STALLS_BEFORE_GIVING_UP = 4


@dataclass(frozen=True)
class Cheat:
    seat: int
    kind: str


def _derive(seed: int, *labels: object) -> bytes:
    text = "/".join(["tarot-sim", str(seed), *(str(label) for label in labels)])
    return hashlib.sha256(text.encode()).digest()


def sim_table(players: int, seed: int) -> tuple[TableSetup, list[Identity]]:
    identities = [Identity.from_private_bytes(_derive(seed, "identity", s)) for s in range(players)]
    names = tuple(f"bot-{s}" for s in range(players))
    table = TableSetup(_derive(seed, "table")[:16], tuple(i.public_key for i in identities), names)
    return table, identities


def play_one_deal(
    table: TableSetup,
    identities: Sequence[Identity],
    deal_number: int,
    dealer: int,
    seed: int,
    bots: Sequence[str],
    cheat: Cheat | None = None,
) -> list[SeatMachine]:
    """Play a deal to its end (score signed by every seat still answering); returns the machines."""
    machines: list[SeatMachine] = []
    for seat in range(table.players):
        factory = cheat_machine(cheat.kind) if cheat is not None and cheat.seat == seat else SeatMachine
        deck_seed = _derive(seed, "deck", deal_number, seat)
        machines.append(factory(table, deal_number, dealer, seat, identities[seat], deck_seed))
    policies = [make_bot(bots[s % len(bots)], random.Random(_derive(seed, "bot", deal_number, s))) for s in range(table.players)]
    queue = deque(message for machine in machines for message in machine.start())
    stalls = 0
    while not all(m.done for m in machines):
        while queue:
            message = decode(encode(queue.popleft()))
            for machine in machines:
                if machine.seat != message.seat:
                    queue.extend(machine.receive(message))
        deciding = next((m for m in machines if m.decision() is not None), None)
        if deciding is not None and deciding.game is not None:
            for action in decide(deciding.game, policies[deciding.seat]):
                queue.extend(deciding.act(action))
            continue
        if all(m.done for m in machines):
            break
        stalls += 1  # nobody can move: someone withholds a message; every seat times out
        if stalls > STALLS_BEFORE_GIVING_UP:
            break
        for machine in machines:
            queue.extend(machine.stall())
    return machines


def _points(half_points: int) -> float | int:
    return half_points // 2 if half_points % 2 == 0 else half_points / 2


def deal_report(machine: SeatMachine, deal_number: int, elapsed_ms: float) -> dict[str, object]:
    """The JSON object of one deal, from an honest seat's point of view after the audit."""
    audit = machine.audit
    public = machine.public
    referee = audit.referee if audit is not None else None
    outcome = audit.outcome if audit is not None else None
    played = referee is not None and outcome is not None
    report: dict[str, object] = {
        "deal": deal_number,
        "dealer": public.dealer,
        "taker": referee.taker if played and referee else None,
        "contract": referee.contract.code if played and referee and referee.contract else None,
        "called": referee.called.code if played and referee and referee.called else None,
        "partner": referee.partner if played and referee else None,
        "hands": [codes(h or ()) for h in referee.dealt] if referee else None,
        "chien": codes(referee.chien or ()) if referee else None,
        "ecart": codes(referee.ecart) if played and referee else [],
        "points": _points(outcome.attack_half_points) if outcome else None,
        "bouts": outcome.bouts if outcome else None,
        "scores": list(audit.scores) if audit else [0] * machine.table.players,
        "penalty": audit.penalty if audit else None,
        "audit": "ok" if audit is None or audit.verdict is None else audit.verdict.to_json(),
        "void": referee.void_reason if referee is not None and audit is not None and audit.void else None,
        "ms": round(elapsed_ms, 1),
    }
    return report


def honest_seat(machines: Sequence[SeatMachine], cheat: Cheat | None) -> SeatMachine:
    return next(m for m in machines if cheat is None or m.seat != cheat.seat)


def simulate(
    players: int,
    deals: int,
    seed: int,
    bots: Sequence[str],
    cheat: Cheat | None = None,
    transcripts: Path | None = None,
) -> Iterator[tuple[dict[str, object], ScoreSheet]]:
    """Play ``deals`` deals at one table; yields each deal's report and the running sheet."""
    table, identities = sim_table(players, seed)
    sheet = ScoreSheet(list(table.names))
    dealer = seed % players
    for number in range(deals):
        started = time.perf_counter()
        machines = play_one_deal(table, identities, number, dealer, seed, bots, cheat)
        witness = honest_seat(machines, cheat)
        report = deal_report(witness, number, (time.perf_counter() - started) * 1000)
        _record(sheet, witness, report)
        if transcripts is not None:
            transcripts.mkdir(parents=True, exist_ok=True)
            (transcripts / f"deal-{number:04d}.tarot").write_bytes(witness.transcript.to_bytes())
        yield report, sheet
        dealer = (dealer + 1) % players


def _record(sheet: ScoreSheet, machine: SeatMachine, report: dict[str, object]) -> None:
    audit = machine.audit
    referee = audit.referee if audit else None
    if audit is None or referee is None or audit.outcome is None:
        sheet.add_void(str(report.get("void") or "abandoned"))
    else:
        sheet.add_deal(list(audit.scores), contract=referee.contract, taker=referee.taker, partner=referee.partner)
    if audit is not None and audit.penalty is not None:
        sheet.add_penalty(audit.penalty)


