"""Autoplay (``tarotd --autoplay``): a player whose client is closed does not hold the table
up — after a while a bot takes the decision the seat owes, or asks for the next deal.

The clock of a decision restarts whenever a client is connected: somebody is at the screen,
and a person thinking is not a person gone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")


class Autoplay:
    """The decisions the player's seats owe, since when, and which a bot plays for now."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._owed: dict[tuple[bytes, int], float] = {}  #: a player's decision, since
        self._stood_in: set[tuple[bytes, int]] = set()  #: seats a bot plays for now

    async def loop(self, patience: float) -> None:
        """After ``patience`` seconds with no client, a bot decides for the player."""
        while True:
            await asyncio.sleep(min(1.0, patience / 4))
            try:
                self._autoplay(patience)
            except Exception:
                log.exception("error in the autoplay of a player's seat")

    def _autoplay(self, patience: float) -> None:
        hosting = self.daemon.hosting
        now, owed = time.monotonic(), {}
        for runner in list(hosting.runners.values()):
            for seat in runner.players_here:
                machine = runner.machines.get(seat)
                if runner.between_deals or (machine is not None and machine.decision() is not None):
                    owed[runner.table_id, seat] = self._owed.get((runner.table_id, seat), now)
        self._owed = owed
        if self.daemon.api.clients:
            # Somebody is at the screen: the clock restarts.
            self._owed = {slot: now for slot in owed}
            self._stood_in.clear()
            return
        for (table_id, seat), since in list(owed.items()):
            runner = hosting.runners[table_id]
            if now - since < patience or table_id in hosting.paused:
                continue
            if (table_id, seat) not in self._stood_in:
                self._stood_in.add((table_id, seat))
                log.info(
                    "table %s: seat %d autoplayed until a client connects (none for %.1f s)",
                    table_id.hex()[:8],
                    seat,
                    now - since,
                )
            self._owed.pop((table_id, seat))
            if runner.between_deals:
                hosting.drive(runner, runner.next_deal)
            else:  # a stand-in thinks beside the loop too
                turn = runner.stand_in_turn(seat, self.daemon.options.bot_level)
                if turn is not None:
                    hosting.think(runner, turn)
