"""Whole deals in one process, through the real protocol: ``tarot sim``.

Every seat is its own :class:`~protocol.replication.machine.SeatMachine` with its own identity;
every message is really signed, encoded, decoded and checked by every other seat, as between
daemons.  Only the network is missing: a queue hands each message to the other seats in the
order it was sent.

Deterministic for a seed: the simulator derives the identities, every seat's secret deck
seed and the bots' choices from ``--seed`` (the daemon never does: it uses the OS CSPRNG).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol.bots.bots import make_bot
from protocol.bots.players import decide
from protocol.plugins import Addressed, Cheater, required_cheat_lab
from protocol.replication.audit import Audits
from protocol.replication.identity import Identity
from protocol.replication.machine import SeatMachine
from protocol.replication.manifest import SignedManifest, sign_manifest
from protocol.replication.messages import Message, MessageError, decode, encode
from protocol.replication.public import TableSetup
from protocol.replication.transcript import proof_file
from protocol.rules.cards import codes
from protocol.rules.scoring import ScoreSheet

#: Rounds of "nobody can move" after which the simulator plays the timeout of a real table.
STALLS_BEFORE_GIVING_UP = 4


@dataclass(frozen=True)
class Cheat:
    seat: int
    kind: str


def _derive(seed: int, *labels: object) -> bytes:
    text = "/".join(["tarot-sim", str(seed), *(str(label) for label in labels)])
    return hashlib.sha256(text.encode()).digest()


def sim_manifest(machines: Sequence[SeatMachine]) -> SignedManifest:
    """The manifest of the simulated table, every seat signing it at once (a daemon's lobby
    has each member sign its own): what a proof file carries for its names and rules."""
    table = machines[0].table
    return sign_manifest(
        table.table_id,
        "tarot sim",
        [(m.identity, table.names[m.seat]) for m in machines],
        table.silence,
    )


def sim_table(players: int, seed: int) -> tuple[TableSetup, list[Identity]]:
    identities = [Identity.from_private_bytes(_derive(seed, "identity", s)) for s in range(players)]
    names = tuple(f"bot-{s}" for s in range(players))
    table = TableSetup(_derive(seed, "table")[:16], tuple(i.public_key for i in identities), names)
    return table, identities


def _attack(kind: str) -> type[SeatMachine]:
    """The seat machine of attack ``kind``: the lab's, loaded by a table with a cheater only."""
    return required_cheat_lab("tarot sim --cheat").machine(kind)


def _cheater(machine: SeatMachine, cheat: Cheat | None) -> Cheater | None:
    """``machine`` as the attack it runs, if it is the cheat's seat; None for an honest seat."""
    if cheat is None or machine.seat != cheat.seat:
        return None
    return required_cheat_lab("tarot sim --cheat").cheater(machine)


def play_one_deal(
    table: TableSetup,
    identities: Sequence[Identity],
    deal_number: int,
    dealer: int,
    seed: int,
    bots: Sequence[str],
    cheat: Cheat | None = None,
    *,
    earlier: Sequence[Message] = (),
    watch: Callable[[SeatMachine], None] | None = None,
    refused: Counter[int] | None = None,
) -> list[SeatMachine]:
    """Play a deal to its end (score signed by every seat still answering); returns the machines.

    Each message goes to every seat but the one that sent it (its author, or a seat that
    relays it).  A cheating seat may also hand the network frames for some seats only, or raw
    bytes (:meth:`~protocol.plugins.Cheater.take_addressed`); ``earlier`` are its messages of
    the deal before (for a replay).  ``watch`` sees each machine after it took a message or
    acted; ``refused`` counts, by sending seat, the frames that changed nothing anywhere — what
    a transport can pin on the peer that sent them, signed or not."""
    machines: list[SeatMachine] = []
    audits = Audits()  # the deck replayed once, not once a seat
    for seat in range(table.players):
        factory = _attack(cheat.kind) if cheat is not None and cheat.seat == seat else SeatMachine
        deck_seed = _derive(seed, "deck", deal_number, seat)
        machine = factory(table, deal_number, dealer, seat, identities[seat], deck_seed)
        machine.audits = audits
        cheater = _cheater(machine, cheat)
        if cheater is not None:
            cheater.earlier = tuple(earlier)
        machines.append(machine)
    policies = [
        make_bot(bots[s % len(bots)], random.Random(_derive(seed, "bot", deal_number, s)))
        for s in range(table.players)
    ]
    network = _Network(machines, watch, refused, cheat)
    for machine in machines:
        network.send(machine, machine.start())
    answering = [m for m in machines if cheat is None or m.seat != cheat.seat]
    silent: set[int] = set()  # seats that owe a decision and sign nothing for it
    stalls = 0
    while not all(m.done for m in answering):
        network.run()
        deciding = next(
            (m for m in machines if m.seat not in silent and m.decision() is not None), None
        )
        if deciding is not None and deciding.game is not None:
            head = deciding.transcript.head
            for action in decide(deciding.game, policies[deciding.seat]):
                # a cheat's first action may have ended the deal
                if deciding.decision() is not None:
                    network.send(deciding, deciding.act(action))
            if deciding.transcript.head == head:  # it signed nothing for its turn: it withholds
                silent.add(deciding.seat)
            continue
        if all(m.done for m in answering):
            break
        stalls += 1  # nobody can move: someone withholds a message; every seat times out
        if stalls > STALLS_BEFORE_GIVING_UP:
            break
        for machine in machines:
            network.send(machine, machine.stall())
    return machines


class _Network:
    """The simulator's network: a queue of (sender, frame, recipients), delivered in order."""

    def __init__(
        self,
        machines: Sequence[SeatMachine],
        watch: Callable[[SeatMachine], None] | None,
        refused: Counter[int] | None,
        cheat: Cheat | None,
    ) -> None:
        self.machines = machines
        self.cheat = cheat
        self.watch = watch
        self.refused = refused if refused is not None else Counter()
        self.queue: deque[tuple[int, bytes, frozenset[int] | None]] = deque()

    def send(self, sender: SeatMachine, messages: Sequence[Message]) -> None:
        """Queue what ``sender`` sends, and any frames it addresses itself."""
        frames: list[Addressed] = [(None, encode(message)) for message in messages]
        cheater = _cheater(sender, self.cheat)
        if cheater is not None:
            frames += cheater.take_addressed()
        self.queue.extend((sender.seat, frame, to) for to, frame in frames)
        if self.watch is not None:
            self.watch(sender)

    def run(self) -> None:
        while self.queue:
            sender, frame, to = self.queue.popleft()
            try:
                message = decode(frame)
            except MessageError:
                self.refused[sender] += 1
                continue
            taken = False  # by some seat, now or before (a relayed copy is no junk)
            for machine in self.machines:
                if machine.seat != sender and (to is None or machine.seat in to):
                    held = machine.transcript.holds(message)
                    out = machine.receive(message)
                    taken |= held or bool(out)
                    self.send(machine, out)
            if not taken:
                self.refused[sender] += 1


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
        "penalties": list(audit.penalised) if audit else [],
        "audit": "ok"
        if audit is None or audit.verdict is None
        else audit.verdict.named_json(machine.table.names, machine.table.members),
        "void": referee.void_reason
        if referee is not None and audit is not None and audit.void
        else None,
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
    proofs: Path | None = None,
) -> Iterator[tuple[dict[str, object], ScoreSheet]]:
    """Play ``deals`` deals at one table; yields each deal's report and the running sheet.
    With a cheat, each report says whether the attack was carried out (``cheat``) and which
    seats sent frames that changed nothing (``refused``); with ``proofs``, every honest seat
    that names a culprit writes its proof file there."""
    table, identities = sim_table(players, seed)
    sheet = ScoreSheet(list(table.names))
    dealer = seed % players
    earlier: list[Message] = []
    for number in range(deals):
        started = time.perf_counter()
        refused: Counter[int] = Counter()
        machines = play_one_deal(
            table, identities, number, dealer, seed, bots, cheat, earlier=earlier, refused=refused
        )
        witness = honest_seat(machines, cheat)
        report = deal_report(witness, number, (time.perf_counter() - started) * 1000)
        if cheat is not None:
            cheater = machines[cheat.seat]
            attack = _cheater(cheater, cheat)
            attempted = attack is not None and attack.attempted
            report["cheat"] = {"seat": cheat.seat, "kind": cheat.kind, "attempted": attempted}
            report["refused"] = {str(seat): count for seat, count in sorted(refused.items())}
            earlier = [m for m in cheater.transcript.messages if m.seat == cheat.seat]
        _record(sheet, witness, report)
        if transcripts is not None:
            transcripts.mkdir(parents=True, exist_ok=True)
            (transcripts / f"deal-{number:04d}.tarot").write_bytes(witness.transcript.to_bytes())
        if proofs is not None:
            write_proofs(machines, cheat, proofs, f"deal-{number:04d}")
        yield report, sheet
        dealer = (dealer + 1) % players


def write_proofs(
    machines: Sequence[SeatMachine], cheat: Cheat | None, directory: Path, stem: str
) -> list[Path]:
    """Each honest seat whose audit names a culprit writes the proof file, as a daemon does."""
    written = []
    manifest = sim_manifest(machines)
    for machine in machines:
        verdict = machine.audit.verdict if machine.audit is not None else None
        if verdict is None or (cheat is not None and machine.seat == cheat.seat):
            continue
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{stem}-seat-{machine.seat}.tarot-proof"
        path.write_bytes(proof_file(machine.transcript, verdict, manifest))
        written.append(path)
    return written


def _record(sheet: ScoreSheet, machine: SeatMachine, report: dict[str, object]) -> None:
    audit = machine.audit
    referee = audit.referee if audit else None
    if audit is None or referee is None or audit.outcome is None:
        sheet.add_void(str(report.get("void") or "abandoned"))
    else:
        sheet.add_deal(
            list(audit.scores),
            contract=referee.contract,
            taker=referee.taker,
            partner=referee.partner,
        )
    if audit is not None:
        audit.charge(sheet)
