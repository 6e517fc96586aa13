"""The pure parts of the HELLO (see "HELLO freshness, without clocks" in docs/protocol.md):
the challenges a ROUTER has given out and not yet seen answered, and what the clock a HELLO
tells says of the peer's — time and randomness passed in or drawn here, no sockets."""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Final

from tarotd.mesh.wire import TOKEN_SIZE

MAX_CHALLENGES: Final = 1024  #: routing ids whose challenges await their HELLO (the latest kept)
#: a link asks again after a heartbeat: its HELLO may answer an earlier ``hi``
CHALLENGES_PER_ROUTE: Final = 4
CLOCK_NOTED: Final = 60.0  #: seconds between a peer's clock and ours that the log mentions


class Challenges:
    """The challenges given to each routing id, the latest :data:`CHALLENGES_PER_ROUTE` of it
    kept: on a slow machine a link asks again before the first answer came, and its HELLO for
    the first must not be refused as stale.  Those of the latest :data:`MAX_CHALLENGES`
    routing ids are kept, so a flood of ``hi`` from strangers only pushes the oldest out,
    whose DEALER asks again after its heartbeat."""

    def __init__(self) -> None:
        self._by_route: OrderedDict[bytes, list[bytes]] = OrderedDict()

    def issue(self, route: bytes) -> bytes:
        """A fresh challenge for the DEALER under ``route``."""
        challenge = os.urandom(TOKEN_SIZE)
        self._by_route[route] = [
            *self._by_route.pop(route, [])[1 - CHALLENGES_PER_ROUTE :],
            challenge,
        ]
        while len(self._by_route) > MAX_CHALLENGES:
            self._by_route.popitem(last=False)
        return challenge

    def spend(self, route: bytes) -> list[bytes]:
        """Every challenge ``route`` holds, taken away: a HELLO answers one of them, once,
        whatever comes of it."""
        return self._by_route.pop(route, [])


def clock_offset(offset: float) -> str | None:
    """How far a peer's clock is from ours, ``offset`` seconds ahead, as the log says it
    (``1 h 0 min ahead of``), or None under :data:`CLOCK_NOTED`: nothing in the mesh or the
    game depends on it, but the times in that peer's logs and files will not match ours."""
    if abs(offset) < CLOCK_NOTED:
        return None
    seconds = round(abs(offset))  # a HELLO's time is in whole seconds
    minutes = round(abs(offset) / 60)
    if minutes >= 60:
        amount = f"{minutes // 60} h {minutes % 60} min"
    else:
        amount = f"{seconds // 60} min {seconds % 60} s"
    return f"{amount} {'ahead of' if offset > 0 else 'behind'}"
