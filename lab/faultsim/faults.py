"""The faults of one simulated run, drawn from its seed, and their application on the clock."""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass

from lab.faultsim.world import State, World


class Kind(enum.StrEnum):
    CUT = "cut"  #: every link of one member down (a Wi-Fi drop, a cable pulled)
    PAUSE = "pause"  #: one member stopped (SIGSTOP, a laptop asleep)
    KILL = "kill"  #: one member killed (kill -9, a crash) and started again from its store
    SPLIT = "split"  #: the links between two sides down
    TANGLE = "tangle"  #: some links down, not two clean sides (A–B, B–C up; A–C down)


@dataclass(frozen=True)
class Fault:
    kind: Kind
    at: float  #: when it starts, seconds into the run
    length: float  #: how long it lasts
    members: tuple[int, ...]  #: the member it hits, or one side of a split
    links: tuple[tuple[int, int], ...] = ()  #: a tangle's links down

    def __str__(self) -> str:
        who = ",".join(map(str, self.members)) or ";".join(f"{a}-{b}" for a, b in self.links)
        return f"{self.kind.value}({who}) at {self.at:.2f} s for {self.length:.2f} s"


def draw(rng: random.Random, players: int, timeout: float, horizon: float) -> list[Fault]:
    """One to three faults, each starting anywhere in ``horizon`` seconds (every step of a
    deal is hit over enough seeds) and lasting from a fraction of ``timeout`` to several."""
    faults = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.choice(list(Kind))
        at = rng.uniform(0, horizon)
        length = timeout * rng.choice((0.3, 0.8, 1.5, 2.5, 4.0)) * rng.uniform(0.8, 1.2)
        seats = list(range(players))
        rng.shuffle(seats)
        if kind is Kind.SPLIT:
            faults.append(
                Fault(kind, at, length, tuple(sorted(seats[: rng.randrange(1, players)])))
            )
        elif kind is Kind.TANGLE:
            pairs = [(a, b) for a in range(players) for b in range(a + 1, players)]
            down = rng.sample(pairs, rng.randrange(1, max(2, len(pairs) // 2)))
            faults.append(Fault(kind, at, length, (), tuple(sorted(down))))
        else:
            faults.append(Fault(kind, at, length, (seats[0],)))
    return sorted(faults, key=lambda f: f.at)


def apply(world: World, fault: Fault) -> None:
    """Set ``fault`` on the world's clock: it starts at its time and heals ``length`` later."""
    clock, network, daemons = world.clock, world.network, world.daemons

    def links() -> set[frozenset[int]]:
        if fault.kind is Kind.TANGLE:
            return {frozenset(pair) for pair in fault.links}
        side = set(fault.members)
        if fault.kind is Kind.SPLIT:
            return {frozenset((a, b)) for a in side for b in range(world.players) if b not in side}
        return {
            frozenset((fault.members[0], b)) for b in range(world.players) if b != fault.members[0]
        }

    def begin() -> None:
        world.note(f"fault: {fault}")
        if fault.kind is Kind.PAUSE:
            daemons[fault.members[0]].pause()
        elif fault.kind is Kind.KILL:
            daemons[fault.members[0]].kill()
        else:
            network.cut(links())

    def end() -> None:
        world.note(f"healed: {fault}")
        if fault.kind is Kind.PAUSE:
            daemons[fault.members[0]].resume()
        elif fault.kind is Kind.KILL:
            daemon = daemons[fault.members[0]]
            if daemon.state is State.DEAD:
                daemon.start()
        else:
            network.mend(links())

    clock.at(fault.at, begin)
    clock.at(fault.at + fault.length, end)
