"""A table starts at its members' daemons one at a time: each starts it on the last coin it
receives, and deals at once.  Three daemons in one event loop, the coins between two of them
held back: the third has every coin first and sends its commitment to two daemons that do not
play the table yet.  The mesh keeps it for them (``NotHandled``) until they do; it used to be
counted delivered and dropped by both, and the deal waited for it for ever.
"""

from __future__ import annotations

import asyncio
from collections import deque
from functools import cached_property
from pathlib import Path

import msgpack
import pytest
from daemons import free_ports, scores

from tarotd import daemon as daemon_module
from tarotd.daemon import LOBBY, Daemon, Options, StaticPeer
from tarotd.home import Home, load_or_create_identity
from tarotd.mesh import Mesh

pytestmark = pytest.mark.daemons

HELD_BACK = 1.5  #: seconds a coin takes between the two slow daemons: longer than via the third


class SlowLinks(Mesh):
    """A mesh whose coin for the daemon :attr:`slow` names leaves :data:`HELD_BACK` seconds
    late, and what follows it to that daemon after it, in order, as on a slow link."""

    slow: dict[bytes, bytes] = {}  #: our key → the key of the daemon our link to is slow
    held: list[bytes] = []  #: the keys of the daemons that held a coin back

    @cached_property
    def _queue(self) -> deque[tuple[bytes, str, bytes]]:
        """What this daemon holds back on its slow link, in order: made on first use, so that
        ``Mesh.__init__`` is inherited as it is."""
        return deque()

    def send(self, peer_key: bytes, channel: str, body: bytes) -> int:
        if peer_key != self.slow.get(self._identity.public_key):
            return super().send(peer_key, channel, body)
        if self._queue or (channel == LOBBY and msgpack.unpackb(body).get("t") == "coin"):
            self.held.append(self._identity.public_key)
            self._queue.append((peer_key, channel, body))
            asyncio.get_running_loop().call_later(HELD_BACK, self._release)
            return 0
        return super().send(peer_key, channel, body)

    def _release(self) -> None:
        super().send(*self._queue.popleft())


def test_the_first_deal_s_messages_wait_for_a_daemon_that_has_not_started_the_table_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    homes = [tmp_path / f"d{i}" for i in range(3)]
    keys = [load_or_create_identity(Home(home)).public_key for home in homes]
    ports = free_ports(3)
    monkeypatch.setattr(daemon_module, "Mesh", SlowLinks)
    monkeypatch.setattr(SlowLinks, "slow", {keys[1]: keys[2], keys[2]: keys[1]})
    monkeypatch.setattr(SlowLinks, "held", [])
    daemons = [
        Daemon(
            Options(
                home=home,
                name=f"joueur{i}",
                listen=f"tcp://127.0.0.1:{ports[i]}",
                discovery=False,
                bot="basic",
                table="club",
                seats=3,
                deals=1,
                timeout=10.0,
                peers=[
                    StaticPeer(f"tcp://127.0.0.1:{ports[j]}", keys[j]) for j in range(3) if j != i
                ],
            )
        )
        for i, home in enumerate(homes)
    ]

    async def play() -> list[int]:
        # A guard against a wedged table, not a speed target: three daemons share this one
        # process and its loop, and on a loaded machine their deal has taken over a minute.
        return list(
            await asyncio.wait_for(asyncio.gather(*(daemon.run() for daemon in daemons)), 240)
        )

    assert asyncio.run(play()) == [0, 0, 0]
    assert set(SlowLinks.held) == {keys[1], keys[2]}, (
        "no coin was held back: the test tested nothing"
    )
    assert all(daemons[i].mesh.stats.not_handled > 0 for i in (1, 2)), (
        "no message came before its table started"
    )
    sheets = [scores(home) for home in homes]
    assert isinstance(sheets[0]["deals"], list) and len(sheets[0]["deals"]) == 1, sheets[0]
    assert all(sheet == sheets[0] for sheet in sheets)
