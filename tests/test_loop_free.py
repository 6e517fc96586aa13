"""Nothing slow runs on a daemon's event loop: a bot thinking, the disk syncing what a seat
signed.  Either held every frame behind it — another seat's card to show, a relay, the local
API's answers — which is what doubled the play's p99 (docs/performance.md).

Three daemons of one table share this test's event loop, as in tests/test_table_start.py: a
bot whose decision waits on an event the test holds, or a disk whose ``fdatasync`` does, and
the loop must still answer the API meanwhile.  Behaviour, not a timed bound: on the loop, the
wait blocks the whole loop, and only the watchdog's release (seconds later) lets the test see
the answer — after the release, which fails it.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from daemons import free_ports

from client.api import ask
from protocol.bots.bots import BasicPolicy, make_bot
from protocol.bots.players import Policy, decide
from protocol.rules.deal import Deal
from protocol.rules.variants import Contract, variant
from protocol.rules.view import SeatView
from tarotd import daemon as daemon_module
from tarotd import hosting as hosting_module
from tarotd import runner as runner_module
from tarotd.daemon import Daemon, Options, StaticPeer
from tarotd.home import Home, load_or_create_identity
from tarotd.mesh import Mesh
from tarotd.store import Store
from tarotd.thinking import BotTurn

pytestmark = pytest.mark.daemons

PLAYERS = 3
WATCHDOG = 8.0  #: seconds before the test lets a blocked loop go, to fail rather than hang
#: The daemons' seeds (``--deal-seed``, + the daemon's index): the same cards on most runs
#: (which daemon opens the table, and so its id, is a race), a deal that is bid.
DEAL_SEED = 1


class Gate:
    """An event the test holds, and a watchdog that opens it if the test cannot: ``entered``
    says that something waits on it; ``on_loop``, whether that something ran on the loop."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.entered = threading.Event()
        self.by_watchdog = False
        self.on_loop: list[bool] = []
        self._watchdog = threading.Timer(WATCHDOG, self._give_up)
        self._watchdog.daemon = True

    def _give_up(self) -> None:
        self.by_watchdog = True
        self.open.set()

    def wait(self) -> None:
        self.on_loop.append(threading.current_thread() is threading.main_thread())
        if not self.entered.is_set():
            self._watchdog.start()
        self.entered.set()
        self.open.wait()

    def release(self) -> None:
        self.open.set()
        self._watchdog.cancel()


def _daemons(tmp_path: Path) -> tuple[list[Daemon], list[Path]]:
    homes = [tmp_path / f"d{i}" for i in range(PLAYERS)]
    keys = [load_or_create_identity(Home(home)).public_key for home in homes]
    ports = free_ports(PLAYERS)
    daemons = [
        Daemon(
            Options(
                home=home,
                name=f"joueur{i}",
                listen=f"tcp://127.0.0.1:{ports[i]}",
                discovery=False,
                bot="basic",
                table="club",
                seats=PLAYERS,
                deals=1,
                timeout=20.0,
                deal_seed=DEAL_SEED + i,
                peers=[
                    StaticPeer(f"tcp://127.0.0.1:{ports[j]}", keys[j])
                    for j in range(PLAYERS)
                    if j != i
                ],
            )
        )
        for i, home in enumerate(homes)
    ]
    return daemons, homes


async def _while_held(
    daemons: Sequence[Daemon],
    homes: Sequence[Path],
    gate: Gate,
    ready: Callable[[], bool] = lambda: True,
) -> tuple[list[dict[str, Any]], bool, list[int]]:
    """Play the table; once something waits on the gate (and ``ready``), ask every daemon's
    API for its state — noting whether the gate was still shut when the answers came — then
    open it and let the deal end."""
    runs = [asyncio.create_task(daemon.run()) for daemon in daemons]
    try:
        while not (gate.entered.is_set() and ready()):
            stopped = [run for run in runs if run.done()]
            assert not stopped, f"a daemon stopped before the gate: {stopped[0]}"
            await asyncio.sleep(0.02)
        states = [await ask(home, "state") for home in homes]
        held = not gate.open.is_set()
        gate.release()
        codes = list(await asyncio.wait_for(asyncio.gather(*runs), 60))
    finally:
        gate.release()
        for run in runs:
            run.cancel()
    return states, held, codes


def _scores_ok(homes: Sequence[Path]) -> None:
    for home in homes:
        sheet = json.loads((home / "scores.json").read_text())
        assert [deal["audit"] for deal in sheet["deals"]] == ["ok"]


class Pondering(BasicPolicy):
    """The basic bot, whose first bid at the table waits for the gate."""

    gate: Gate

    def bid(self, view: SeatView, allowed: list[Contract]) -> Contract | None:
        if not self.gate.entered.is_set():
            self.gate.wait()
        return super().bid(view, allowed)


def test_a_bot_thinks_while_the_loop_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    monkeypatch.setattr(Pondering, "gate", gate, raising=False)
    real = runner_module.bot_policies

    def pondering(seats: Sequence[int], level: str, seed: int | None = None) -> dict[int, Policy]:
        real(seats, level, seed)
        return {seat: Pondering() for seat in seats}

    monkeypatch.setattr(hosting_module, "bot_policies", pondering)
    daemons, homes = _daemons(tmp_path)
    states, held, codes = asyncio.run(_while_held(daemons, homes, gate))
    assert gate.on_loop == [False], "the bot thought on the daemon's event loop"
    assert held, "the API answered only once the bot's thinking was let go"
    assert all(isinstance(state, dict) for state in states)
    assert codes == [0] * PLAYERS
    _scores_ok(homes)


class Arming(BasicPolicy):
    """The basic bot, which arms the disk's gate as it makes its first bid."""

    armed: threading.Event

    def bid(self, view: SeatView, allowed: list[Contract]) -> Contract | None:
        self.armed.set()
        return super().bid(view, allowed)


def test_what_a_seat_signed_waits_for_the_disk_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the first daemon's first bid on, its ``fdatasync`` waits for the gate: its loop
    answers meanwhile, and none of what its seat signed leaves before the sync is done."""
    gate = Gate()
    armed = threading.Event()
    monkeypatch.setattr(Arming, "armed", armed, raising=False)
    real = runner_module.bot_policies

    def arming(seats: Sequence[int], level: str, seed: int | None = None) -> dict[int, Policy]:
        bots = real(seats, level, seed)
        return {seat: Arming() for seat in seats} if seed == DEAL_SEED else bots

    monkeypatch.setattr(hosting_module, "bot_policies", arming)
    daemons, homes = _daemons(tmp_path)
    real_sync = Store._fdatasync_log
    first = str(homes[0])

    def has_bid() -> bool:
        return any(
            machine.game is not None and any(bid.seat == seat for bid in machine.game.bids)
            for runner in list(daemons[0].hosting.runners.values())
            for seat, machine in list(runner.machines.items())
        )

    def slow_sync(store: Store) -> None:
        if str(store.path).startswith(first) and armed.is_set() and not gate.open.is_set():
            gate.wait()
        real_sync(store)

    monkeypatch.setattr(Store, "_fdatasync_log", slow_sync)
    sent: list[bool] = []  #: for each of the first daemon's deal frames, whether held
    real_send = Mesh.send

    def send(mesh: Any, peer_key: bytes, channel: str, body: bytes) -> int:
        if mesh is daemons[0].mesh and channel == daemon_module.DEAL:
            sent.append(gate.entered.is_set() and not gate.open.is_set())
        return real_send(mesh, peer_key, channel, body)

    monkeypatch.setattr(Mesh, "send", send)
    states, held, codes = asyncio.run(_while_held(daemons, homes, gate, has_bid))
    assert held, "the API answered only once the disk was let go"
    assert True not in gate.on_loop, "an fdatasync ran on the daemon's event loop"
    assert sent and True not in sent, "a message the seat signed left before it was on the disk"
    assert codes == [0] * PLAYERS
    _scores_ok(homes)


def test_a_seeded_bot_decides_the_same_on_a_copy() -> None:
    """The worker reads a copy of the game: the same decision as on the game itself."""
    for level in ("basic", "random"):
        deal = Deal.from_seed(variant(4), 0, 7)
        twin = Deal.from_seed(variant(4), 0, 7)
        bots = [make_bot(level, random.Random(seat)) for seat in range(4)]
        twins = [make_bot(level, random.Random(seat)) for seat in range(4)]
        while not deal.finished:
            seat = deal.to_act
            assert seat is not None
            turn = BotTurn.ask(0, seat, deal, bots[seat])
            actions = turn.think()
            assert actions == decide(twin, twins[seat])
            assert turn.stands(0, deal)
            for action in actions:
                deal.push(action)
                twin.push(action)
            assert not turn.stands(0, deal)
