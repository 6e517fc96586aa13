"""The cheat lab's runs: one attack at a table of ``tarot sim``, as every honest seat saw it
(:func:`run_cheat`, what ``tests/test_cheats.py`` asserts on), and ``scripts/cheat-lab``'s
table of every kind over many seeds (:func:`main`, ``python -m lab.cheats.runs``).

Every seat plays in one process through the real protocol (``client/simulation.py``): the
cheater's machine is the attack, the others are honest and must name it, each with a proof
file that ``tarot audit`` audits to the same verdict, and blame nobody else.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from client.simulation import Cheat, play_one_deal, sim_manifest, sim_table
from lab.cheats.attacks import CHEATS, Cheater
from protocol.replication.audit import audit_transcript
from protocol.replication.machine import SeatMachine
from protocol.replication.manifest import SignedManifest
from protocol.replication.messages import Message
from protocol.replication.transcript import proof_file, read_proof_file
from protocol.replication.verdict import Fault, Verdict

#: The seat that runs each attack in the lab: the tracer is the first shuffler's attack.
LAB_SEATS = {"tracer": 0}


@dataclass(frozen=True)
class CheatRun:
    """One attack in ``tarot sim``, as every honest seat saw it."""

    kind: str
    players: int
    seed: int
    seat: int  #: the cheater
    deal: int  #: the deal in which it carried the attack out (or the last one tried)
    attempted: bool
    verdicts: dict[int, Verdict | None]  #: each honest seat's verdict, after its audit
    #: what ``tarot audit`` gives on each honest seat's proof file
    proofs: dict[int, Verdict | None]
    #: "at once", "at once, named by the audit", "at the audit", "at the timeout", "refused"
    when: str
    refused: dict[int, int]  #: frames that changed nothing, by sending seat
    unchanged: bool  #: the scores are those of the same deal without the attack (flood)
    ms: float

    @property
    def blamed(self) -> set[int]:
        """Honest seats that some honest seat named: must stay empty."""
        verdicts = (*self.verdicts.values(), *self.proofs.values())
        return {
            v.seat for v in verdicts if v is not None and v.seat is not None and v.seat != self.seat
        }

    @property
    def caught(self) -> bool:
        """Every honest seat names the cheater with one verdict, and each proof file audits
        to it — or, for junk that proves nothing (a flood), every frame was refused, the
        transport pins them on the sender alone and the deal ended as without them."""
        if self.kind == "flood":
            return (
                self.unchanged
                and set(self.refused) == {self.seat}
                and not any(self.verdicts.values())
            )
        stated = {_key(v) for v in self.verdicts.values()}
        audited = {_key(v) for v in self.proofs.values()}
        return len(stated) == 1 and stated == audited and next(iter(stated))[0] == self.seat

    @property
    def rule(self) -> str:
        verdict = next(iter(self.verdicts.values()), None)
        return "—" if verdict is None else f"{verdict.step}: {verdict.reason}"


def _key(verdict: Verdict | None) -> tuple[int | None, str, str]:
    return (None, "", "") if verdict is None else (verdict.seat, verdict.step, verdict.reason)


def run_cheat(
    kind: str,
    players: int,
    seed: int,
    seat: int | None = None,
    *,
    bots: Sequence[str] = ("basic",),
    tries: int = 3,
    watch: Callable[[SeatMachine], None] | None = None,
) -> CheatRun:
    """Play deals at a table where ``seat`` (by default the lab's) runs attack ``kind``, until
    it has had the chance to carry it out (``tries`` deals at most: a replay needs a deal
    before it, a false call a contract): what every honest seat concluded, and what the
    audit of each one's proof file gives."""
    cheater = LAB_SEATS.get(kind, seed % players) if seat is None else seat
    cheat = Cheat(cheater, kind)
    table, identities = sim_table(players, seed)
    earlier: list[Message] = []
    for number in range(tries):
        dealer = (seed + number) % players
        started = time.perf_counter()
        refused: Counter[int] = Counter()
        machines = play_one_deal(
            table,
            identities,
            number,
            dealer,
            seed,
            bots,
            cheat,
            earlier=earlier,
            refused=refused,
            watch=watch,
        )
        ms = (time.perf_counter() - started) * 1000
        attack = machines[cheater]
        assert isinstance(attack, Cheater)
        earlier = [m for m in attack.transcript.messages if m.seat == cheater]
        if attack.attempted or number == tries - 1:
            break
    honest = [m for m in machines if m.seat != cheater]
    verdicts = {m.seat: m.audit.verdict if m.audit is not None else None for m in honest}
    audited: dict[bytes, Verdict | None] = {}  # seats holding the same file: audit it once
    manifest = sim_manifest(machines)
    proofs = {m.seat: _audit_proof(m, manifest, audited) for m in honest}
    unchanged = True
    assert isinstance(attack, Cheater)
    if kind == "flood":
        clean = play_one_deal(table, identities, number, dealer, seed, bots)
        unchanged = all(_scores(m) == _scores(clean[m.seat]) for m in honest)
    return CheatRun(
        kind,
        players,
        seed,
        cheater,
        number,
        attack.attempted,
        verdicts,
        proofs,
        _when(honest[0], kind),
        dict(refused),
        unchanged,
        ms,
    )


def _scores(machine: SeatMachine) -> tuple[int, ...] | None:
    return None if machine.audit is None else machine.audit.scores


def _audit_proof(
    machine: SeatMachine, manifest: SignedManifest, audited: dict[bytes, Verdict | None]
) -> Verdict | None:
    """Write the seat's proof file and audit it offline, as ``tarot audit`` does."""
    verdict = machine.audit.verdict if machine.audit is not None else None
    if verdict is None:
        return None
    data = proof_file(machine.transcript, verdict, manifest)
    if data not in audited:
        _, transcript, signed = read_proof_file(data)
        audited[data] = audit_transcript(transcript, signed)[2].verdict
    return audited[data]


def _when(witness: SeatMachine, kind: str) -> str:
    """When the honest seats knew: from the verdict the live checks reached, if any."""
    live = witness.public.verdict
    if kind == "flood":
        return "refused"
    if live is None:
        return "at the audit"
    if not live.attributed:
        return "at once, named by the audit"
    return "at the timeout" if live.fault is Fault.SILENCE else "at once"


def one(job: tuple[str, int, int]) -> CheatRun:
    kind, players, seed = job
    return run_cheat(kind, players, seed)


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/cheat-lab")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=5)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "kinds", nargs="*", metavar="KIND", help=f"default: all of {', '.join(CHEATS)}"
    )
    args = parser.parse_args()
    unknown = set(args.kinds) - set(CHEATS)
    if unknown:
        parser.error(f"unknown kinds {', '.join(sorted(unknown))}")
    kinds = args.kinds or list(CHEATS)
    if args.players != 5:
        kinds = [k for k in kinds if k != "false-call"]  # nobody calls a card below five
    jobs = [(kind, args.players, seed) for kind in kinds for seed in range(args.seeds)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(one, jobs))
    elapsed = time.perf_counter() - started
    print(f"cheat lab: {args.players} players, {args.seeds} seeds per kind, bots basic\n")
    print(
        f"{'kind':20} {'runs':>4} {'tried':>5} {'caught':>6} {'blamed':>6}  {'when':28} "
        f"{'median s':>8}  check"
    )
    for kind in kinds:
        mine = [r for r in runs if r.kind == kind]
        tried = [r for r in mine if r.attempted]
        caught = sum(r.caught for r in tried)
        blamed = sum(len(r.blamed) for r in mine)
        when = ", ".join(sorted({r.when for r in tried}))
        rules = sorted({r.rule.split(" (")[0] for r in tried})
        median = statistics.median(r.ms for r in mine) / 1000
        check = (rules[0] if rules else "—") + (
            f" (+{len(rules) - 1} alike)" if len(rules) > 1 else ""
        )
        print(
            f"{kind:20} {len(mine):4} {len(tried):5} {caught:6} {blamed:6}  {when:28} "
            f"{median:8.1f}  {check}"
        )
    tried = [r for r in runs if r.attempted]
    caught = sum(r.caught for r in tried)
    blamed = sum(len(r.blamed) for r in runs)
    share = 100 * caught / len(tried) if tried else 0.0
    print(
        f"\n{len(runs)} runs, {len(tried)} attacks carried out, {caught} caught ({share:.1f} %), "
        f"{blamed} honest seats blamed, {elapsed:.0f} s"
    )
    # an attack never tried is reported, not failed
    return 0 if caught == len(tried) and blamed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
