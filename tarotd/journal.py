"""Written before sent: what the tables signed leaves, and what the mesh acknowledges is
acknowledged, only once the store's journal holds it on the disk.

A signature sent and then lost in a crash would let this daemon, taken up again from its
journal, sign something else in its place — contradict itself, which the others take for
cheating.  So every frame of play waits behind an ``fdatasync`` of every commit so far, made
on the store's thread while the loop takes the next frames in (:meth:`Store.sync_later`), and
the frames leave in order.  A fault of the disk (full, an I/O error) holds them, never fails
them: they wait, tried again every :data:`HEARTBEAT`, and the table it hit is paused by
:mod:`tarotd.hosting`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from tarotd.channels import DEAL, HEARTBEAT
from tarotd.runner import WireOut
from tarotd.store import StoreFault

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")


class Journal:
    """The frames of play waiting for the disk, and the mesh's wait before it acknowledges."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._unsynced: deque[list[WireOut]] = deque()  #: signed, waiting for the disk
        self._syncing = False  #: a sync for them under way

    @property
    def waiting(self) -> bool:
        """Whether something signed has not left yet (the daemon lingers for it)."""
        return bool(self._unsynced)

    def send(self, outs: list[WireOut]) -> None:
        """What the tables signed leaves once every commit so far is on the disk — what we
        signed first of all (the runners leave us that sync: ``sync_deferred``) — the
        ``fdatasync`` on the store's thread while the loop takes the next frames in, and in
        order, behind what still waits for the disk.  The commit itself is made by the move:
        a fault there (the disk full) is the move's, which pauses the table, and ``outs``
        never leave (the table taken up again sends what its journal holds)."""
        if not outs:
            return
        syncing = self.daemon.store.sync_later()
        self._unsynced.append(outs)
        if not self._syncing:
            self._after_sync(syncing)

    def _after_sync(self, syncing: Future[None] | None) -> None:
        """Send what waits once ``syncing`` is done (None: every commit is on the disk)."""
        if syncing is None:
            while self._unsynced:
                for daemon, data in self._unsynced.popleft():
                    self.daemon.mesh.send(daemon, DEAL, data)
            return
        self._syncing = True
        asyncio.wrap_future(syncing).add_done_callback(self._synced)

    def _synced(self, syncing: asyncio.Future[None]) -> None:
        """A sync is done: what came meanwhile may need another (:meth:`_sync_again`)."""
        if syncing.cancelled() or syncing.exception() is not None:
            log.warning("could not sync the journal: what we signed waits; trying again")
            asyncio.get_running_loop().call_later(HEARTBEAT, self._sync_again)
        else:
            self._sync_again()

    def _sync_again(self) -> None:
        """Every commit so far on the disk, then send: tried every heartbeat until it is
        (nothing leaves before it is on the disk)."""
        self._syncing = False
        try:
            syncing = self.daemon.store.sync_later()
        except StoreFault:
            self._syncing = True
            asyncio.get_running_loop().call_later(HEARTBEAT, self._sync_again)
            return
        self._after_sync(syncing)

    def before_ack(self) -> Awaitable[None] | None:
        """The mesh's ``before_ack``: what it acknowledges is on the disk first, the loop
        going on meanwhile (:meth:`Store.sync_later`).  A local fault (the disk full) does
        not fail it, which the mesh would log with a traceback at each try: the
        acknowledgements wait until the store gets it there (:meth:`_on_disk_when_it_clears`)
        — the peers keep what is unacknowledged — and the table it stops says the fault."""
        try:
            syncing = self.daemon.store.sync_later()
        except StoreFault:
            return self._on_disk_when_it_clears()
        return None if syncing is None else self._on_disk(asyncio.wrap_future(syncing))

    async def _on_disk(self, syncing: Awaitable[None]) -> None:
        try:
            await syncing
        except StoreFault:
            await self._on_disk_when_it_clears()

    async def _on_disk_when_it_clears(self) -> None:
        """Every :data:`HEARTBEAT`, until every commit so far is on the disk."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            try:
                syncing = self.daemon.store.sync_later()
                if syncing is not None:
                    await asyncio.wrap_future(syncing)
                return
            except StoreFault:
                continue
