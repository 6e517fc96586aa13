"""How the members of a table settle each deal between themselves (first step: the daemon's
behaviour before certificates — it lingers after the last deal for ``timeout``, then leaves)."""

from __future__ import annotations

from collections.abc import Sequence

from tarotd.runner import TableRunner, WireOut
from tarotd.store import Store

SettleOut = tuple[bytes, bytes]  #: (destination daemon key, frame body)


class Settlement:
    def __init__(self, runner: TableRunner, store: Store, timeout: float) -> None:
        self.runner = runner
        self.store = store
        self.timeout = timeout
        self._finished_at: float | None = None

    def after_step(self, now: float) -> list[SettleOut]:
        if self.runner.finished and self._finished_at is None:
            self._finished_at = now
        return []

    def receive(self, peer: bytes, body: bytes, now: float) -> list[SettleOut]:
        return []

    def take_adopted(self) -> list[WireOut]:
        return []

    def heartbeat(self, now: float, peers: Sequence[bytes]) -> list[SettleOut]:
        return []

    def may_leave(self, now: float) -> bool:
        return self._finished_at is not None and now - self._finished_at >= self.timeout
