"""The measurements of ``tarot bench`` that need real daemons: five ``tarotd`` processes on
127.0.0.1, timed from outside through their local APIs, as a player's client sees them.

The client never imports the daemon (DESIGN §7): it starts ``python -m tarotd.cli`` with
static peers and no discovery — each given by its key, which ``tarotd --print-key`` makes
and prints before the daemons start, since they encrypt to it (or not, with ``curve=False``:
``--no-curve``, to measure what encryption costs) — connects a
:class:`~client.api.DaemonClient` to every daemon's API socket, and stamps every event on
arrival.  Every daemon publishes the events of its seat there whether a bot or a person plays
it, so five bot daemons can be timed too.

* ``loopback_deal_ms`` and ``full_deal_ms`` come from five bot daemons playing deal after
  deal.  A daemon starts deal *k* (its commitment) in the same step in which it records deal
  *k − 1*, just before it publishes that deal's ``score`` event: the first ``score`` event
  of deal *k − 1* marks the first commitment of deal *k*, give or take that one step.  A deal
  lasts until the last seat's ``hand`` event (the deck: every hand decrypted and checked) and
  the last seat's ``score`` event (the audit done and every score signature in).  Deal 0 is
  left out: it includes the daemons' start and the forming of the table.
* ``daemon_rss_mb``: the peak resident set (``ru_maxrss`` from ``wait4``) of each of those
  five daemons over all their deals.
* ``play_latency_ms`` comes from a table of four bot daemons and one whose seat the
  benchmark plays through the API (it passes, plays a seeded random legal card, and asks for
  the next deal as soon as one is scored): from
  the ``play`` request to the moment every other daemon's client has the ``play`` event of
  that card — the update of the trick on the other players' screens.

The daemons draw their deck seeds and their bots' choices from the OS, as they always do, so
these deals differ from run to run; the benchmark's own choices are seeded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from client.api import DaemonClient, DaemonUnavailable
from lab.bench.deck import BENCH_SEED
from lab.bench.stats import BenchError

PLAYERS = 5
#: How ``tarotd`` is started: the daemon of the interpreter running the benchmark.
TAROTD: tuple[str, ...] = (sys.executable, "-m", "tarotd.cli")
START_TIMEOUT = 30.0  #: seconds for a daemon to open its API socket
DEAL_TIMEOUT = 30.0  #: seconds a deal may take before the benchmark gives up on the table
SILENT_SEAT_TIMEOUT = 30.0  #: the daemons' own ``--timeout``
EXIT_TIMEOUT = 15.0  #: seconds for the last events of daemons that exited to come in
POLL = 0.05  #: seconds between two looks at something that sends no event


Event = dict[str, Any]


class EventLog:
    """Every event one daemon publishes on its API, stamped with ``perf_counter`` on arrival."""

    def __init__(self, client: DaemonClient) -> None:
        self.client = client
        self.events: list[tuple[float, Event]] = []
        self._changed = asyncio.Event()

    async def pump(self) -> None:
        async for event in self.client.events():
            self.events.append((time.perf_counter(), event))
            self._changed.set()
            if event["event"] == "disconnected":
                return

    def times(self, kind: str) -> list[float]:
        return [stamp for stamp, event in self.events if event["event"] == kind]

    async def first(self, wanted: Callable[[Event], bool], start: int, timeout: float) -> float:
        """The time of the first event from index ``start`` on that is ``wanted``."""
        deadline = time.monotonic() + timeout
        index = start
        while True:
            for stamp, event in self.events[index:]:
                if wanted(event):
                    return stamp
            index = len(self.events)
            self._changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass


@dataclass
class Daemon:
    """One ``tarotd`` process of the table, its home and its log."""

    index: int
    home: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    peak_rss_kb: int = 0
    cpu_s: float = 0.0  #: user and system time, from ``wait4`` once it exited
    events: EventLog | None = field(default=None, repr=False)

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()[-lines:]
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join(f"    {line}" for line in text)


class LoopbackTable:
    """Five ``tarotd`` on 127.0.0.1 forming the table ``bench`` and playing ``deals`` deals
    (``None``: until they are killed), every one connected to the benchmark by its API;
    ``humans`` are the daemons whose seat is left to the API (the others' seats are ``basic``
    bots); ``curve=False`` runs them with ``--no-curve``.  Homes and logs live in a temporary
    directory that is removed afterwards; every daemon still running then is killed."""

    def __init__(
        self,
        deals: int | None,
        humans: Sequence[int] = (),
        command: Sequence[str] = TAROTD,
        curve: bool = True,
    ) -> None:
        self.deals = deals
        self.humans = set(humans)
        self.command = list(command)
        self.curve = curve
        self._directory = tempfile.TemporaryDirectory(prefix="tarot-bench-")
        root = Path(self._directory.name)
        self.daemons = [Daemon(i, root / f"d{i}", root / f"d{i}.log") for i in range(PLAYERS)]
        self._pumps: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> LoopbackTable:
        try:
            await self._start()
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self._close()

    def tarotd(self, daemon: Daemon) -> list[str]:
        """``tarotd`` with the daemon's home and name: what its key and its run both start with."""
        return [*self.command, "--home", str(daemon.home), "--name", f"bench{daemon.index}"]

    def argv(self, daemon: Daemon, ports: Sequence[int], keys: Sequence[str]) -> list[str]:
        argv = [
            *self.tarotd(daemon),
            "--listen",
            f"127.0.0.1:{ports[daemon.index]}",
            "--no-discovery",
            "--table",
            "bench",
            "--seats",
            str(PLAYERS),
            "--timeout",
            str(SILENT_SEAT_TIMEOUT),
        ]
        if self.deals is not None:
            argv += ["--deals", str(self.deals)]
        if not self.curve:
            argv.append("--no-curve")
        for other, port in enumerate(ports):
            if other != daemon.index:
                argv += ["--peer", f"{keys[other]}@127.0.0.1:{port}"]
        return argv if daemon.index in self.humans else [*argv, "--bot", "basic"]

    async def _key(self, daemon: Daemon) -> str:
        """The daemon's key, its home made now (``tarotd --print-key``): the others' ``--peer``
        name it, the key they encrypt to.  Its stderr goes to the daemon's log."""
        with open(daemon.log, "wb") as log:
            done = await asyncio.to_thread(
                subprocess.run,
                [*self.tarotd(daemon), "--print-key"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        if done.returncode != 0:
            raise self.failure(
                f"tarotd {daemon.index} exited with status {done.returncode} at start"
            )
        return bytes(done.stdout).decode().strip()

    async def _start(self) -> None:
        ports = free_ports(PLAYERS)
        keys = [await self._key(daemon) for daemon in self.daemons]
        for daemon in self.daemons:
            # Popen, not asyncio's subprocesses: their child watcher would reap the daemons
            # before :meth:`finish` could read their resource usage with ``wait4``.
            with open(daemon.log, "ab") as log:
                daemon.process = subprocess.Popen(
                    self.argv(daemon, ports, keys),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
        for daemon in self.daemons:
            await self._connect(daemon)

    async def _connect(self, daemon: Daemon) -> None:
        """Connect to the daemon's API as soon as it listens: the socket file appears when it
        is bound, a moment before the daemon listens on it (refused meanwhile)."""
        assert daemon.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        client = DaemonClient(daemon.home)
        while True:
            if daemon.process.poll() is not None:
                raise self.failure(
                    f"tarotd {daemon.index} exited with status {daemon.process.returncode} at start"
                )
            try:
                await client.connect()
                break
            except DaemonUnavailable as error:
                if time.monotonic() > deadline:
                    raise self.failure(
                        f"tarotd {daemon.index} did not open its API within {START_TIMEOUT:.0f} "
                        f"s: {error}"
                    ) from None
            await asyncio.sleep(POLL)
        daemon.events = EventLog(client)
        self._pumps.append(asyncio.create_task(daemon.events.pump()))

    def events(self, index: int) -> EventLog:
        log = self.daemons[index].events
        assert log is not None, "the table is not started"
        return log

    def failure(self, what: str) -> BenchError:
        """The error to raise, with the end of every daemon's log."""
        logs = "\n".join(f"  tarotd {d.index} ({d.log.name}):\n{d.tail()}" for d in self.daemons)
        return BenchError(f"{what}\n{logs}")

    async def finish(self, timeout: float) -> None:
        """Wait for every daemon to exit (each has played its deals), taking its peak resident
        memory from ``wait4``, and for every event it published; a daemon that fails or hangs
        is an error."""
        deadline = time.monotonic() + timeout
        for daemon in self.daemons:
            process = daemon.process
            assert process is not None
            while process.returncode is None:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    process.returncode = os.waitstatus_to_exitcode(status)
                    daemon.peak_rss_kb = usage.ru_maxrss  # kilobytes on Linux
                    daemon.cpu_s = usage.ru_utime + usage.ru_stime
                elif time.monotonic() > deadline:
                    raise self.failure(
                        f"the daemons did not finish their {self.deals} deals in time"
                    )
                else:
                    await asyncio.sleep(POLL)
            if process.returncode != 0:
                raise self.failure(f"tarotd {daemon.index} exited with status {process.returncode}")
        try:
            # up to "disconnected"
            await asyncio.wait_for(asyncio.gather(*self._pumps), EXIT_TIMEOUT)
        except TimeoutError:
            raise self.failure("a daemon's API connection stayed open after it exited") from None

    def audits(self) -> list[object]:
        """Every deal's audit on the score sheet the first daemon left in its home."""
        sheet = json.loads((self.daemons[0].home / "scores.json").read_text())
        return [deal["audit"] for deal in sheet["deals"]]

    async def _close(self) -> None:
        for task in self._pumps:
            task.cancel()
        for daemon in self.daemons:
            if daemon.events is not None:
                await daemon.events.client.close()
            if daemon.process is not None and daemon.process.returncode is None:
                daemon.process.kill()
                daemon.process.wait()
        self._directory.cleanup()


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (the kernel picks them; a daemon binds them a moment later)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


# --------------------------------------------------------------------------- five bots


@dataclass(frozen=True)
class BotDeals:
    """What five bot daemons playing deal after deal show, in milliseconds and megabytes."""

    loopback_deal_ms: list[float]
    full_deal_ms: list[float]
    daemon_rss_mb: list[float]  #: each daemon's peak
    #: The CPU of the five daemons together, over their whole run (start and table forming
    #: included), divided by the deals they played: what a deal costs the table's machines.
    cpu_ms_per_deal: float = 0.0


class Timed(Protocol):
    """What :func:`deal_times` reads of a seat's log: the arrival times of one kind of event."""

    def times(self, kind: str) -> list[float]: ...


def deal_times(logs: Sequence[Timed], deals: int) -> tuple[list[float], list[float]]:
    """For deals 1 … ``deals`` − 1: from the first ``score`` of the deal before to the last
    ``hand`` (the deck), and to the last ``score`` (the whole deal), in milliseconds."""
    scores = [log.times("score") for log in logs]
    hands = [log.times("hand") for log in logs]
    if any(len(s) != deals for s in scores) or any(len(h) < deals - 1 for h in hands):
        raise BenchError(
            f"expected {deals} deals at every seat, saw scores {[len(s) for s in scores]}"
        )
    deck, whole = [], []
    for k in range(1, deals):
        start = min(s[k - 1] for s in scores)
        # deal 0's hand may be missed
        deck.append((max(h[-deals + k] for h in hands) - start) * 1000)
        whole.append((max(s[k] for s in scores) - start) * 1000)
    return deck, whole


async def bot_deals(deals: int, command: Sequence[str] = TAROTD, curve: bool = True) -> BotDeals:
    """Five bot daemons play ``deals`` deals (at least 2: deal 0 is not timed)."""
    async with LoopbackTable(deals, command=command, curve=curve) as table:
        await table.finish(START_TIMEOUT + deals * DEAL_TIMEOUT)
        bad = [audit for audit in table.audits() if audit != "ok"]
        if bad:
            raise table.failure(f"a benchmark deal's audit failed: {bad[0]}")
        deck, whole = deal_times([table.events(i) for i in range(PLAYERS)], deals)
    cpu = sum(d.cpu_s for d in table.daemons) * 1000 / deals
    return BotDeals(deck, whole, [d.peak_rss_kb / 1024 for d in table.daemons], cpu)


# --------------------------------------------------------------------------- a person's seat


class Player:
    """The benchmark at a seat, through the API: it passes, plays a seeded random legal card
    as soon as it may, and times each play until every other seat has seen it."""

    def __init__(self, table: LoopbackTable, index: int) -> None:
        self.table = table
        self.log = table.events(index)
        self.others = [table.events(i) for i in range(PLAYERS) if i != index]
        self.rng = random.Random(BENCH_SEED)
        self.latencies: list[float] = []
        self._started = time.perf_counter()

    async def play(self, samples: int) -> None:
        """Until ``samples`` plays are timed."""
        while len(self.latencies) < samples:
            try:
                state = await self.log.client.request("state")
            except DaemonUnavailable:
                raise self.table.failure("the daemon of the API seat went away") from None
            if not await self._decide(state):
                await self._next_event()

    async def _next_event(self) -> None:
        """Until something happens at the table — or a short while: the opening of the bidding,
        once every hand is checked, is no event at this seat.  A table where nothing happened
        for :data:`DEAL_TIMEOUT` seconds is stuck."""
        last = self.log.events[-1][0] if self.log.events else self._started
        if time.perf_counter() - last > DEAL_TIMEOUT:
            raise self.table.failure(f"nothing happened at the table for {DEAL_TIMEOUT:.0f} s")
        try:
            await self.log.first(lambda event: True, len(self.log.events), POLL)
        except TimeoutError:
            pass

    async def _decide(self, state: dict[str, Any]) -> bool:
        """Take the decision the seat owes, if any (True if it acted)."""
        if state.get("between_deals"):  # a person reads the sheet, then asks for the next deal
            await self.log.client.request("next")
            return True
        decision, view = state.get("decision"), state.get("view")
        if decision is None or view is None:
            return False
        if decision == "bidding":
            await self.log.client.request("bid", contract="pass")
        elif decision == "playing":
            await self._timed_play(view["seat"], self.rng.choice(view["legal"]))
        else:  # a seat that always passes is never the taker
            raise self.table.failure(f"the API seat owes an unexpected decision: {decision}")
        return True

    async def _timed_play(self, seat: int, card: str) -> None:
        marks = [len(log.events) for log in self.others]
        start = time.perf_counter()
        await self.log.client.request("play", card=card)

        def wanted(event: Event) -> bool:
            return (
                event["event"] == "play" and event.get("seat") == seat and event.get("card") == card
            )

        try:
            seen = [
                await log.first(wanted, mark, DEAL_TIMEOUT) for log, mark in zip(self.others, marks)
            ]
        except TimeoutError:
            raise self.table.failure(
                f"the play of {card} did not reach every seat within {DEAL_TIMEOUT:.0f} s"
            ) from None
        self.latencies.append((max(seen) - start) * 1000)


async def play_latency(
    samples: int, command: Sequence[str] = TAROTD, curve: bool = True
) -> list[float]:
    """Milliseconds from each of ``samples`` ``play`` requests of the API seat to every other
    seat's client holding that card; the table deals until then, and is killed."""
    async with LoopbackTable(None, humans=[0], command=command, curve=curve) as table:
        player = Player(table, 0)
        await player.play(samples)
    return player.latencies
