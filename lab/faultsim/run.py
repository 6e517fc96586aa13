"""One simulated run from a seed, and what must hold once the network is whole again."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from lab.faultsim.faults import Fault, Kind, apply, draw
from lab.faultsim.world import State, World

#: Seconds of a run in which faults may start (a deal takes a few on the fake LAN).
HORIZON = 40.0
#: After the last fault heals, how many timeouts the table has to finish its deals.
SETTLE_TIMEOUTS = 30


@dataclass
class Outcome:
    """What one run showed: the broken invariants (none: the run passed)."""

    players: int
    seed: int
    deals: int
    faults: list[Fault]
    failures: list[str] = field(default_factory=list)
    time: float = 0.0  #: simulated seconds
    frames: int = 0
    log: list[str] = field(default_factory=list)
    came_back: list[int] = field(default_factory=list)  #: members started again to serve a row

    @property
    def ok(self) -> bool:
        return not self.failures

    def replay(self) -> str:
        """The one line that runs this seed again, verbosely."""
        return (
            f"scripts/fault-sim --players {self.players} --deals {self.deals} "
            f"--seed {self.seed} --verbose"
        )


def faulted(faults: list[Fault]) -> set[int]:
    """The members a fault touched: only these may be named or charged."""
    seats: set[int] = set()
    for fault in faults:
        seats |= set(fault.members)
        for a, b in fault.links:
            seats |= {a, b}
        if fault.kind is Kind.SPLIT:  # either side may be the smaller one
            seats = set(range(64))
    return seats


def simulate(
    players: int, seed: int, deals: int = 2, timeout: float = 10.0, closings: bool = True
) -> Outcome:
    world = World(players, seed, deals, timeout, closings=closings)
    faults = draw(world.rng, players, timeout, HORIZON)
    outcome = Outcome(players, seed, deals, faults)
    try:
        for fault in faults:
            apply(world, fault)
        world.start()
        healed = max((f.at + f.length for f in faults), default=0.0)
        end = healed + SETTLE_TIMEOUTS * timeout
        everyone_left = lambda: all(d.state is State.EXITED for d in world.daemons)  # noqa: E731
        world.clock.run_until(end, everyone_left)
        if not complete(world):
            # Whoever left is started again, as a player does another evening: an idle daemon
            # still serves the rows it holds, and nothing may be lost.
            outcome.came_back = [d.seat for d in world.daemons if d.state is State.EXITED]
            for daemon in world.daemons:
                if daemon.state is State.EXITED:
                    daemon.start()
            world.clock.run_until(world.clock.now + SETTLE_TIMEOUTS * timeout, everyone_left)
        outcome.failures = check(world, faults)
    except Exception as error:  # a crash is a finding, with its seed
        outcome.failures = [f"crashed: {type(error).__name__}: {error}"]
    finally:
        outcome.time, outcome.frames, outcome.log = world.clock.now, world.network.frames, world.log
        for daemon in world.daemons:
            daemon.store.close()
        shutil.rmtree(world.directory, ignore_errors=True)
    return outcome


def complete(world: World) -> bool:
    """Every member holds a row for every deal."""
    table_id = world.ready.setup.table_id
    return all(len(d.store.results(table_id)) == world.deals for d in world.daemons)


def check(world: World, faults: list[Fault]) -> list[str]:
    """The invariants, once healed: one sheet everywhere, one row per deal, no seat named or
    charged that no fault touched, every deal played."""
    table_id = world.ready.setup.table_id
    failures: list[str] = []
    sheets: dict[int, str] = {}
    rows: dict[int, list[dict[str, object]]] = {}
    for daemon in world.daemons:
        sheet = daemon.store.sheet(table_id)
        sheets[daemon.seat] = sheet.to_json() if sheet else "null"
        results = daemon.store.results(table_id)
        rows[daemon.seat] = results
        played = [r["deal"] for r in results]
        if played != list(range(world.deals)):
            runner = daemon.runner
            waits = sorted(runner.waiting_for()) if runner is not None else "?"
            failures.append(
                f"p{daemon.seat} ({daemon.state.value}) holds rows for deals {played}, not "
                f"{list(range(world.deals))}; at deal {runner.deal_number if runner else '?'}, "
                f"stage {runner.stage if runner else '?'}, waiting for seats {waits}"
            )
    if len(set(sheets.values())) > 1:
        said = {seat: [r.get("void", "scored") for r in rows[seat]] for seat in rows}
        failures.append(f"the sheets differ: {said}")
    touched = faulted(faults)
    for seat, results in rows.items():
        for result in results:
            blamed = blamed_in(result) - touched
            if blamed:
                failures.append(
                    f"p{seat}'s row for deal {result['deal']} blames seats {sorted(blamed)} "
                    f"that no fault touched: {result['audit']}"
                )
    return failures


def blamed_in(result: dict[str, object]) -> set[int]:
    """The seats a row names (its verdict's) or charges (its penalties')."""
    seats: set[int] = set()
    named, penalties = result.get("audit"), result.get("penalties")
    for verdict in [named, *(penalties if isinstance(penalties, list) else [])]:
        seat = verdict.get("seat") if isinstance(verdict, dict) else None
        if isinstance(seat, int):
            seats.add(seat)
    return seats
