"""Fault injection: frames dropped, duplicated, reordered and delayed on their way out, for
the tests, the chaos runs (``tarotd --faults``) and the LAN simulator.  Without a plan, frames
go straight to their socket."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from tarotd.zsocket import LoopSocket


@dataclass(frozen=True)
class FaultPlan:
    """Faults applied to every frame this mesh sends, for tests and soaks.  ``seed`` makes a
    run reproducible, as far as the event loop's timing allows."""

    drop: float = 0.0  #: probability a frame is silently lost
    duplicate: float = 0.0  #: probability it is sent twice
    reorder: float = 0.0  #: probability it is held back and sent after the next one
    delay_ms: float = 0.0  #: every frame is delayed uniformly in [0, delay_ms]
    seed: int = 0


class Wire:
    """Puts frames on sockets, through the fault plan when there is one."""

    def __init__(self, faults: FaultPlan | None) -> None:
        self._faults = faults
        self._rng = random.Random(faults.seed if faults else 0)
        self._held: dict[tuple[int, bytes], tuple[LoopSocket, list[bytes]]] = {}
        self._timers: set[asyncio.TimerHandle] = set()

    def send(self, sock: LoopSocket, parts: list[bytes]) -> bool:
        """True if the frame left, or the fault plan took charge of it (so a dropped frame
        looks sent: finding out is the retransmission's job, as on a real network).  A frame
        the fault plan delays finds its socket closed if its link was recycled meanwhile."""
        faults = self._faults
        if faults is None:
            return sock.send(parts)
        rng = self._rng
        if rng.random() < faults.drop:
            return True
        copies = 2 if rng.random() < faults.duplicate else 1
        destination = (id(sock), parts[0] if len(parts) > 1 else b"")
        if destination not in self._held and rng.random() < faults.reorder:
            self._held[destination] = (sock, parts)
            return True
        for _ in range(copies):
            self._send_later(sock, parts)
        held = self._held.pop(destination, None)
        if held is not None:
            self._send_later(*held)
        return True

    def flush(self) -> None:
        """Release held-back frames that no later frame overtook."""
        held, self._held = self._held, {}
        for sock, parts in held.values():
            self._send_later(sock, parts)

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        self._held.clear()

    def _send_later(self, sock: LoopSocket, parts: list[bytes]) -> None:
        assert self._faults is not None
        delay = self._rng.uniform(0, self._faults.delay_ms) / 1000
        if delay <= 0:
            sock.send(parts)
            return

        def fire() -> None:
            self._timers.discard(timer)
            sock.send(parts)

        timer = asyncio.get_running_loop().call_later(delay, fire)
        self._timers.add(timer)
