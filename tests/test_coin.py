"""The first dealer's coin (tarotd/coin.py, run by tarotd/lobby/core.py): a copied commitment
opens for nobody, a coin kept back is named and the dealer drawn without it, and every honest
member draws the same dealer whatever a coalition reveals, to whom and when.

The lobbies run on a simulated LAN with a clock: each frame takes a delay drawn for it, at
most :data:`DELAY` between honest daemons, in order per link; every lobby beats every second,
each at its own phase.  A cheating daemon runs the real lobby, its frames filtered by a
:data:`Cheat`.

Before this change (checked against 69d2423 with the same moves, on the pure lobby): a copied
commitment was taken — the commitment was ``SHA-256(coin ‖ key)`` and a reveal the bytes
committed to, so the copier revealed its victim's ``coin ‖ key`` and every member took it —
and a coin kept back left every other member's table ``full`` for ever, the lobby with no
clock to end the wait and ``leave`` refused ("the table has started"): only restarting the
daemons, a new table and new coins — a re-roll — got the players out.
"""

from __future__ import annotations

import heapq
import logging
import random
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import pytest

from protocol.replication.identity import Identity
from tarotd.coin import commitment, first_dealer
from tarotd.lobby import BROADCAST, FrameOut, Lobby, OfferState, ReadyTable
from tarotd.lobby import core as lobby_module

TIMEOUT = 10.0  #: a round of reveals (tarotd --timeout)
DELAY = 2.0  #: the most an honest frame takes: TIMEOUT ≥ 2 DELAY + a heartbeat
#: What a cheating daemon does with a frame to a daemon: the extra delay, or None: not sent.
Cheat = Callable[[bytes, dict[str, Any]], float | None]


class Lan:
    """Daemons hosting ``hosted[i]`` seats each, every one the others' ``--peer``."""

    def __init__(self, hosted: Sequence[int], seed: int) -> None:
        self.rng = random.Random(seed)
        self.lobbies: dict[bytes, Lobby] = {}
        for index, seats in enumerate(hosted):
            daemon = self.identity()
            identities = [(self.identity(), f"d{index}-s{k}") for k in range(seats)]
            self.lobbies[daemon.public_key] = Lobby(
                daemon.public_key,
                f"tcp://127.0.0.1:{9000 + index}",
                identities,
                self.rng.randbytes,
                trusts=self.lobbies.__contains__,
                timeout=TIMEOUT,
            )
        self.cheats: dict[bytes, Cheat] = {}
        self.now = 0.0
        self._frames: list[tuple[float, int, bytes, bytes, Any]] = []
        self._sent = 0
        self._link: dict[tuple[bytes, bytes], float] = {}
        self._beats = {key: self.rng.random() for key in self.lobbies}
        self.ready: dict[bytes, list[ReadyTable]] = {key: [] for key in self.lobbies}

    def identity(self) -> Identity:
        return Identity.from_private_bytes(self.rng.randbytes(32))

    @property
    def daemons(self) -> list[bytes]:
        return list(self.lobbies)

    def honest(self) -> list[bytes]:
        return [key for key in self.lobbies if key not in self.cheats]

    def seats_of(self, daemon: bytes) -> list[bytes]:
        return list(self.lobbies[daemon].hosted)

    def post(self, sender: bytes, outs: list[FrameOut]) -> None:
        for destination, frame in outs:
            targets = (
                [k for k in self.lobbies if k != sender]
                if destination == BROADCAST
                else [destination]
            )
            for target in targets:
                delay = self.rng.uniform(0, DELAY)
                if sender in self.cheats:
                    extra = self.cheats[sender](target, frame)
                    if extra is None:
                        continue
                    delay += extra
                at = max(self.now + delay, self._link.get((sender, target), 0.0))
                self._link[sender, target] = at
                wire = msgpack.unpackb(msgpack.packb(frame, use_bin_type=True), raw=False)
                self._sent += 1
                heapq.heappush(self._frames, (at, self._sent, sender, target, wire))

    def form(self) -> bytes:
        """Daemon 0 opens a table for every seat, the others join it: its id."""
        first, *others = self.lobbies
        seats = sum(len(lobby.hosted) for lobby in self.lobbies.values())
        self.post(first, self.lobbies[first].open("club", seats))
        self.run(DELAY)
        table = self.lobbies[first].joined
        assert table is not None
        for key in others:
            self.post(key, self.lobbies[key].join(table))
        return table

    def run(self, until: float) -> None:
        """Frames and heartbeats in time order, up to ``until``."""
        while True:
            beat_key = min(self._beats, key=self._beats.__getitem__)
            beat = self._beats[beat_key]
            frame_at = self._frames[0][0] if self._frames else float("inf")
            if min(beat, frame_at) > until:
                break
            if frame_at <= beat:
                self.now, _, sender, target, wire = heapq.heappop(self._frames)
                self.post(target, self.lobbies[target].receive(sender, wire))
            else:
                self.now = beat
                self._beats[beat_key] += 1.0
                self.post(beat_key, self.lobbies[beat_key].heartbeat(beat))
            for key, lobby in self.lobbies.items():
                self.ready[key] += lobby.take_ready()
        self.now = until

    def drawn(self, daemons: Sequence[bytes]) -> set[tuple[bytes, int, tuple[bytes, ...]]]:
        """(table, dealer, withheld) as each of ``daemons`` drew it."""
        out = set()
        for key in daemons:
            (ready,) = self.ready[key]
            offer = self.lobbies[key].offers[ready.setup.table_id]
            out.add((ready.setup.table_id, ready.first_dealer, offer.withheld))
        return out


def no_coins(target: bytes, frame: dict[str, Any]) -> float | None:
    """A daemon that never reveals (nor relays) a coin."""
    return None if frame["t"] == "coin" else 0.0


def test_a_commitment_is_bound_to_its_table_and_member() -> None:
    coin, table = bytes(32), bytes(16)
    alice, bob = bytes([1]) * 32, bytes([2]) * 32
    mine = commitment(table, alice, coin)
    assert mine != commitment(table, bob, coin) and mine != commitment(bytes([1]) * 16, alice, coin)
    # Framed: moving a byte from the key to the coin is another commitment.
    assert mine != commitment(table, alice[:-1], alice[-1:] + coin)


def test_a_copied_commitment_cannot_be_opened_by_its_copier(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The copier commits with its victim's commitment (a modified daemon: what it sends in
    its ``sign`` frame, and seals), then reveals its victim's coin under its own key: nobody
    takes it, nor can any coin open the copy.  It is named, the dealer drawn without it."""
    lan = Lan([1, 1, 1], seed=7)
    victim, copier, third = lan.daemons
    (victim_seat,), (copier_seat,) = lan.seats_of(victim), lan.seats_of(copier)
    honest = commitment

    def copied(table: bytes, key: bytes, coin: bytes) -> bytes:
        if key != copier_seat:
            return honest(table, key, coin)
        return honest(table, victim_seat, lan.lobbies[victim]._coins[table])  # off the wire

    monkeypatch.setattr(lobby_module, "commitment", copied)
    table = lan.form()
    lan.run(5 * DELAY)
    victim_coin = lan.lobbies[victim]._coins[table]
    forged = {"t": "coin", "table": table, "coins": [[copier_seat, victim_coin, []]]}
    lan.post(copier, [(victim, forged), (third, forged)])
    lan.run(lan.now + DELAY)
    for key in (victim, third):
        toss = lan.lobbies[key]._tosses[table]
        assert toss.revealed and toss.coins.get(victim_seat) == victim_coin
        assert copier_seat not in toss.coins, "the copier's reveal of its victim's coin was taken"
    assert not any(lan.ready.values())
    with caplog.at_level(logging.WARNING, logger="tarotd.lobby"):
        lan.run(3 * TIMEOUT + 5 * DELAY)
    ((_, dealer, withheld),) = lan.drawn([victim, third])
    assert withheld == (copier_seat,)
    assert "d1-s0" in caplog.text and "did not reveal its coin" in caplog.text


def test_a_coin_kept_back_is_named_and_the_dealer_drawn_without_it_not_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Four daemons, one never reveals: after R = 3 rounds of ``--timeout`` every other one
    starts the same table, with the dealer of the three coins revealed, the fourth named."""
    lan = Lan([1, 1, 1, 1], seed=3)
    *others, withholder = lan.daemons
    lan.cheats[withholder] = no_coins
    table = lan.form()
    lan.run(2 * TIMEOUT + DELAY)  # the start is at most 4 hops after the manifest
    assert not any(lan.ready[key] for key in others), "drawn before the last round was over"
    assert all(lan.lobbies[key].offers[table].state is OfferState.FULL for key in others)
    with caplog.at_level(logging.WARNING, logger="tarotd.lobby"):
        lan.run(3 * TIMEOUT + 6 * DELAY)
    ((drawn_table, dealer, withheld),) = lan.drawn(others)
    (seat,) = lan.seats_of(withholder)
    assert drawn_table == table and withheld == (seat,)  # the same table: nothing re-rolled
    members = lan.ready[others[0]][0].members
    coins = [None if m.key == seat else lan.lobbies[m.daemon]._coins[table] for m in members]
    assert dealer == first_dealer(table, coins)
    assert "d3-s0 (" in caplog.text
    assert "did not reveal its coin: the first dealer is drawn without it" in caplog.text


def coalition_cheat(lan: Lan, rounds: int, sealed_to: set[bytes]) -> Cheat:
    """A coalition member that seals to ``sealed_to`` only, and sends each coin — its own,
    or one it relays — to each daemon late or never."""

    def cheat(target: bytes, frame: dict[str, Any]) -> float | None:
        if frame["t"] == "seal" and target not in sealed_to:
            return None
        if frame["t"] != "coin":
            return 0.0
        if lan.rng.random() < 1 / 3:
            return None
        return lan.rng.uniform(0, (rounds + 1) * TIMEOUT)

    return cheat


def test_every_honest_member_draws_the_same_dealer_whatever_a_coalition_reveals() -> None:
    """Seeded runs of three to five daemons (some hosting two seats), one to d − 2 of them
    cheating together: their seals reach some honest members only, each of their
    coins and relays reaches each daemon at any time or never.  Every honest member draws the
    same dealer and names the same members — never an honest one."""
    outcomes = {"kept back": 0, "late coins drawn": 0}
    for seed in range(120):
        rng = random.Random(seed)
        hosted = [rng.choice([1, 1, 1, 2]) for _ in range(rng.randint(3, 5))]
        while sum(hosted) > 5:
            hosted[hosted.index(2)] = 1
        lan = Lan(hosted, seed)
        daemons = lan.daemons
        cheaters = rng.sample(daemons[1:], rng.randint(1, len(daemons) - 2))
        honest = [key for key in daemons if key not in cheaters]
        rounds = len(daemons) - 1
        # Their seals reach some honest members only (none, and no coin is ever revealed).
        sealed_to = {*cheaters, *rng.sample(honest, rng.randint(1, len(honest)))}
        for key in cheaters:
            lan.cheats[key] = coalition_cheat(lan, rounds, sealed_to)
        lan.form()
        lan.run((rounds + 2) * TIMEOUT + 10 * DELAY)
        drawn = lan.drawn(honest)
        assert len(drawn) == 1, f"seed {seed}: the honest members drew {drawn}"
        ((_, _, withheld),) = drawn
        assert not set(withheld) & {s for key in honest for s in lan.seats_of(key)}, seed
        outcomes["kept back" if withheld else "late coins drawn"] += 1
    assert all(outcomes.values()), outcomes
