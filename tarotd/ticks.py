"""A periodic loop that knows when the event loop was held.

The mesh's housekeeping and the daemon's heartbeat both judge silence — a peer not heard
from, a seat that does not answer — and both must not count the time their own event loop
was held (an audit on a starved machine) as the others' silence: meanwhile the frames that
came waited unread in the sockets.  A round that comes more than :data:`HELD` seconds late
says the loop was held for that long.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

HELD = 0.5  #: seconds late beyond which a round says the event loop was held


async def ticks(period: float) -> AsyncIterator[tuple[float, float]]:
    """Every ``period`` seconds (from the start of one round to the next), ``(now, held)``:
    the monotonic time, and the seconds the event loop was held before this round (0 when
    it came on time, or less than :data:`HELD` late)."""
    due = time.monotonic() + period
    while True:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        now = time.monotonic()
        late = now - due
        due = now + period
        yield now, late if late > HELD else 0.0
