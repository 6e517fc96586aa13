"""A table of daemons in one process, on a fake clock and a simulated network, with faults.

Each simulated daemon is what a real one is for a table: a :class:`~tarotd.runner.TableRunner`
over its own SQLite store (the real journal), a :class:`~tarotd.silence.SilenceClock`, a
heartbeat that times silent seats out as :meth:`tarotd.hosting.Hosting.heartbeat` does, relays
sent in batches, and :class:`~tarotd.settlement.Settlement` — the agreement between members —
driven exactly as the daemon drives it.  What a real daemon gets from the OS and the mesh is
modelled:

* **the mesh**: each frame reaches a live peer once and in order per link, whatever the
  delay; a frame waits while the link is down or its receiver is stopped or dead (its sender
  keeps it until acknowledged) and is lost with its *sender*'s death (the mesh keeps nothing
  on disk);
* **a cut**: every link of a member down; **a partition**: links between two sides down, or
  (not clean) any set of links — A hears B, B hears C, C does not hear A;
* **a pause** (SIGSTOP): the member takes in nothing and its timers stand still; when it
  goes on, its heartbeat sees it was held and does not count that time as anyone's silence;
* **a kill and a restart**: memory gone, the store kept; the runner resumes from it;
* **the end of a finite table**: a member that has played its deals lingers, as the daemon
  does, then exits; it may be started again later (an idle daemon that still serves).

Everything is drawn from one seed, so a run replays exactly.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import random
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from protocol.replication.identity import Identity
from protocol.replication.manifest import DEFAULT_SILENCE, SilenceCost, sign_manifest
from protocol.replication.public import Stage, TableSetup
from tarotd.lobby import Member, ReadyTable
from tarotd.runner import TableRunner, WireOut, bot_policies, decoded, relayed, seeded
from tarotd.settlement import Settlement, SettleOut
from tarotd.silence import SilenceClock
from tarotd.store import MemberRecord, Store, TableRecord, TableState

HEARTBEAT = 1.0  #: seconds between two heartbeats of a daemon (tarotd's HEARTBEAT)
RELAY_DELAY = 0.25  #: seconds a daemon gathers relays before sending them (tarotd's)
LATENCY = (0.001, 0.02)  #: a frame's time on the wire, drawn uniformly
THINK = (0.05, 0.5)  #: seconds a bot takes over a decision (tarotd --think)
DECK_STEP = (0.1, 0.6)  #: seconds of CPU a move of the deck costs (a shuffle, a lock, keys)
DECK_STAGES = frozenset({Stage.SHUFFLE, Stage.LOCK, Stage.DEAL_KEYS})


class Channel(enum.StrEnum):
    DEAL = "deal"
    RELAYS = "relays"
    SETTLE = "settle"


@dataclass(frozen=True)
class Frame:
    sender: int
    receiver: int
    channel: Channel
    body: bytes


@dataclass(order=True)
class _Timer:
    at: float
    seq: int
    action: Callable[[], None] = field(compare=False)


class Clock:
    """Fake time: actions run in the order of their time, ties in the order they were set."""

    def __init__(self) -> None:
        self.now = 0.0
        self._timers: list[_Timer] = []
        self._seq = itertools.count()

    def at(self, when: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._timers, _Timer(max(when, self.now), next(self._seq), action))

    def later(self, delay: float, action: Callable[[], None]) -> None:
        self.at(self.now + delay, action)

    def run_until(self, end: float, stop: Callable[[], bool]) -> None:
        while self._timers and self._timers[0].at <= end and not stop():
            timer = heapq.heappop(self._timers)
            self.now = timer.at
            timer.action()
        if not stop():
            self.now = max(self.now, end)


class State(enum.StrEnum):
    RUNNING = "running"
    PAUSED = "paused"
    DEAD = "dead"  #: killed: to be started again
    EXITED = "exited"  #: the table finished here and the daemon went away


class SimDaemon:
    """One member's daemon, hosting one seat played by a bot."""

    def __init__(self, world: World, seat: int, identity: Identity, directory: Path) -> None:
        self.world = world
        self.seat = seat
        self.identity = identity
        self.key = identity.public_key
        self.store = Store(directory / f"daemon-{seat}.db")
        self.state = State.DEAD
        self.runner: TableRunner | None = None
        self.settlement: Settlement | None = None
        self.silence = SilenceClock()
        self.paused_at = 0.0
        self.relaying = False
        self.thinking = False
        self.busy_until = 0.0  #: outputs leave once the CPU work of the move is done
        self.starts = 0

    # --- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start (or start again): the runner taken up from the store, as a daemon does."""
        world, ready = self.world, self.world.ready
        if self.store.table(ready.setup.table_id) is None:
            self.store.save_table(
                TableRecord(
                    ready.setup.table_id, "sim", ready.setup.players, TableState.PLAYING, 0.0
                )
            )
            self.store.save_members(
                ready.setup.table_id,
                [MemberRecord(s, m.key, m.name, m.endpoint) for s, m in enumerate(ready.members)],
            )
        self.starts += 1
        self.state = State.RUNNING
        self.silence = SilenceClock()
        self.relaying = self.thinking = False
        self.runner = TableRunner(
            ready,
            self.key,
            {self.key: self.identity},
            bot_policies([self.seat], "basic", seed=world.seed * 31 + self.seat),
            self.store,
            world.deals,
            deal_seed=world.seed,
        )
        self.settlement = Settlement(self.runner, self.store, world.timeout)
        self._drive(self.runner.resume)
        world.clock.later(world.rng.uniform(0, HEARTBEAT), self._heartbeat)
        world.pump_to(self.seat)

    def kill(self) -> None:
        if self.state in (State.DEAD, State.EXITED):
            return
        self.state = State.DEAD
        self.runner = self.settlement = None
        self.world.network.lost_from(self.seat)
        self.store.close()
        self.store = Store(self.store.path)

    def pause(self) -> None:
        if self.state is State.RUNNING:
            self.state, self.paused_at = State.PAUSED, self.world.clock.now

    def resume(self) -> None:
        if self.state is State.PAUSED:
            self.state = State.RUNNING
            self.silence.held(self.world.clock.now - self.paused_at)
            self.world.pump_to(self.seat)

    @property
    def listening(self) -> bool:
        return self.state is State.RUNNING

    # --- the daemon's glue ----------------------------------------------------------------

    def _send(self, outs: list[WireOut], channel: Channel = Channel.DEAL) -> None:
        world = self.world
        for daemon, data in outs:
            world.network.send(self.seat, world.seat_of[daemon], channel, data, self.busy_until)

    def _send_settle(self, outs: list[SettleOut]) -> None:
        if self.world.closings:
            self._send(outs, Channel.SETTLE)

    def _drive(self, move: Callable[[], list[WireOut]]) -> None:
        """A move of the table, then the bots and the relays (Hosting.drive, _after_step)."""
        runner, world = self.runner, self.world
        assert runner is not None and self.settlement is not None
        stage = runner.deal_stage
        outs = move()
        if outs and stage in DECK_STAGES:  # this seat computed a step of the deck
            self.busy_until = max(world.clock.now, self.busy_until) + world.rng.uniform(*DECK_STEP)
        self._send(outs)
        self._send(runner.step(decisions=0))
        if runner.bot_to_decide() is not None and not self.thinking:
            self.thinking = True
            world.clock.later(world.rng.uniform(*THINK), self._bot_turn)
        self._send_settle(self.settlement.after_step(self.world.clock.now))
        if runner.relays and not self.relaying:
            self.relaying = True
            self.world.clock.later(RELAY_DELAY, self._relay)

    def _bot_turn(self) -> None:
        self.thinking = False
        if self.runner is None or self.state in (State.DEAD, State.EXITED):
            return
        if self.state is State.PAUSED:
            self.thinking = True
            self.world.clock.later(HEARTBEAT / 4, self._bot_turn)
            return
        runner = self.runner
        self._drive(lambda: runner.step(decisions=1))

    def _relay(self) -> None:
        self.relaying = False
        if self.runner is not None and self.listening:
            self._send(self.runner.take_relays(), Channel.RELAYS)
        elif self.runner is not None:
            self.world.clock.later(RELAY_DELAY, self._relay)
            self.relaying = True

    def receive(self, frame: Frame) -> None:
        runner, settlement = self.runner, self.settlement
        assert runner is not None and settlement is not None
        peer = self.world.daemons[frame.sender].key
        if frame.channel is Channel.SETTLE:
            self._send_settle(settlement.receive(peer, frame.body, self.world.clock.now))
            self._drive(settlement.take_adopted)
            return
        bodies = [frame.body] if frame.channel is Channel.DEAL else relayed(frame.body)
        messages = decoded(bodies)
        self._drive(lambda: runner.receive(*messages))

    def _heartbeat(self) -> None:
        if self.state in (State.DEAD, State.EXITED):
            return  # a restart sets a heartbeat of its own
        world = self.world
        world.clock.later(HEARTBEAT, self._heartbeat)
        if self.state is State.PAUSED:
            return
        runner, settlement = self.runner, self.settlement
        assert runner is not None and settlement is not None
        now = world.clock.now
        if self.silence.overdue(runner, now, world.timeout):
            reachable = world.peers_heard(self.seat)
            self._drive(lambda: runner.stall(reachable))
        self._send_settle(settlement.heartbeat(now, world.peers_heard(self.seat)))
        if settlement.may_leave(now):
            self.state = State.EXITED
            world.network.lost_from(self.seat)


class Network:
    """The links between the simulated daemons: per direction, frames in order."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.queues: dict[tuple[int, int], deque[tuple[float, Frame]]] = {}
        self._down: dict[frozenset[int], int] = {}  #: each link down, by how many faults
        self.frames = 0

    @property
    def down(self) -> set[frozenset[int]]:
        return set(self._down)

    def cut(self, links: set[frozenset[int]]) -> None:
        for link in links:
            self._down[link] = self._down.get(link, 0) + 1

    def mend(self, links: set[frozenset[int]]) -> None:
        for link in links:
            self._down[link] -= 1
            if not self._down[link]:
                del self._down[link]
        for sender, receiver in list(self.queues):
            self.pump(sender, receiver)

    def send(
        self, sender: int, receiver: int, channel: Channel, body: bytes, after: float = 0.0
    ) -> None:
        queue = self.queues.setdefault((sender, receiver), deque())
        ready = max(after, self.world.clock.now) + self.world.rng.uniform(*LATENCY)
        if queue:
            ready = max(ready, queue[-1][0])
        queue.append((ready, Frame(sender, receiver, channel, body)))
        if len(queue) == 1:
            self.world.clock.at(ready, lambda: self.pump(sender, receiver))

    def usable(self, sender: int, receiver: int) -> bool:
        daemons = self.world.daemons
        return (
            frozenset((sender, receiver)) not in self._down
            and daemons[sender].state is not State.EXITED
            and daemons[receiver].listening
        )

    def pump(self, sender: int, receiver: int) -> None:
        """Deliver what is due on one link, if it can carry it now."""
        queue = self.queues.get((sender, receiver))
        while queue and queue[0][0] <= self.world.clock.now and self.usable(sender, receiver):
            _, frame = queue.popleft()
            self.frames += 1
            self.world.daemons[receiver].receive(frame)
        if queue and self.usable(sender, receiver):
            self.world.clock.at(queue[0][0], lambda: self.pump(sender, receiver))

    def lost_from(self, sender: int) -> None:
        """The sender's process is gone: what it had not delivered goes with it."""
        for (a, _), queue in self.queues.items():
            if a == sender:
                queue.clear()


@dataclass
class World:
    """One table of ``players`` daemons and everything that happens to it, from ``seed``."""

    players: int
    seed: int
    deals: int = 2
    timeout: float = 10.0
    silence: SilenceCost = DEFAULT_SILENCE  #: the rule a new table signs
    #: Members ask for, serve and adopt closings; off, they only time each other out (the
    #: agreement before issue 35): the invariants must then fail on some seeds.
    closings: bool = True
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="faultsim-")))
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.clock = Clock()
        self.network = Network(self)
        identities = [
            Identity.from_private_bytes(seeded(self.seed, b"sim-identity", s))
            for s in range(self.players)
        ]
        names = [f"p{s}" for s in range(self.players)]
        table_id = seeded(self.seed, b"sim-table", size=16)
        manifest = sign_manifest(table_id, "sim", list(zip(identities, names)), self.silence)
        setup = TableSetup(
            table_id, tuple(i.public_key for i in identities), tuple(names), self.silence
        )
        members = tuple(
            Member(i.public_key, names[s], i.public_key, f"sim://{s}")
            for s, i in enumerate(identities)
        )
        first = self.rng.randrange(self.players)
        self.ready = ReadyTable(setup, members, first, manifest.document, manifest.signatures)
        self.daemons = [SimDaemon(self, s, i, self.directory) for s, i in enumerate(identities)]
        self.seat_of = {d.key: d.seat for d in self.daemons}

    def note(self, what: str) -> None:
        self.log.append(f"{self.clock.now:8.2f}  {what}")

    def peers_heard(self, seat: int) -> list[bytes]:
        """The members this daemon's mesh reaches now (its ``up`` peers)."""
        return [
            d.key
            for d in self.daemons
            if d.seat != seat and d.listening and frozenset((seat, d.seat)) not in self.network.down
        ]

    def pump_to(self, receiver: int) -> None:
        for sender in range(self.players):
            if sender != receiver:
                self.network.pump(sender, receiver)

    def start(self) -> None:
        for daemon in self.daemons:
            daemon.start()

    def running(self) -> Iterator[SimDaemon]:
        return (d for d in self.daemons if d.state is not State.EXITED)
