"""Going on without the members gone for good: a table whose member's daemon stopped
answering ends here, its sheet kept, and the others meet again at a new table of the same
name — or, at an event table, the round's deals left are signed abandoned.

A player asks for it (``regroup``); a daemon with no player (its seat a bot's) does it by
itself between deals, once the member has been gone :data:`REGROUP_AFTER` timeouts, as its
player would: so the others' players, pressing their key, find it in the new table.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.refusal import Refusal
from protocol.replication.public import Stage
from tarotd.api import ApiError
from tarotd.runner import TableRunner

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")

#: timeouts a member is gone between deals before a bots' daemon goes on without it
REGROUP_AFTER = 3


class Regroup:
    """The tables a bots' daemon tried to go on from, and how it goes on."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._tried: set[bytes] = set()  #: tables a bots' daemon tried to go on from

    def gone(self, runner: TableRunner) -> list[int]:
        """The seats whose daemon has not answered for ``--timeout`` or more."""
        timeout = self.daemon.options.timeout
        return sorted(
            seat for seat, seconds in self.daemon.peers.away(runner).items() if seconds >= timeout
        )

    def bots_go_on(self) -> None:
        """A daemon with no player (its seat a bot's, ``--bot``) goes on without a member gone
        for :data:`REGROUP_AFTER` timeouts between deals, as its player would."""
        daemon = self.daemon
        runner = daemon.hosting.current()
        if (
            daemon.options.bot is None
            or runner is None
            or runner.players_here
            or runner.deal_stage is not Stage.COMMIT
        ):
            return
        away = daemon.peers.away(runner)
        gone = self.gone(runner)
        if runner.table_id in self._tried or not gone:
            return
        if all(away[seat] >= REGROUP_AFTER * daemon.options.timeout for seat in gone):
            self._tried.add(runner.table_id)
            try:
                self.regroup()
            except ApiError as why:
                log.info(
                    "table %s: cannot go on without the members gone: %s",
                    runner.table_id.hex()[:8],
                    why,
                )

    def regroup(self) -> dict[str, Any]:
        """Go on without the members gone for good: this table ends here (its sheet kept), and
        the daemon seeks a new table of the same name with the members left — trusted, since
        they played together — which each of them asks for in turn (a bot's daemon by itself:
        :meth:`bots_go_on`).  ApiError if nobody is gone, or fewer than three would be left."""
        daemon = self.daemon
        runner = daemon.hosting.current()
        if runner is None:
            raise ApiError("you are not at a table", Refusal.NOT_AT_TABLE)
        gone, names = self.gone(runner), runner.ready.setup.names
        if not gone:
            raise ApiError(
                f"no member has been silent for {daemon.options.timeout:.0f} s (--timeout) yet: "
                "the table waits for them",
                Refusal.NOBODY_GONE,
                seconds=round(daemon.options.timeout),
            )
        if daemon.events.seating_of(runner.table_id) is not None:
            return self._abandon_event_table(runner, gone)
        left = [m for seat, m in enumerate(runner.ready.members) if seat not in gone]
        without = ", ".join(names[seat] for seat in gone)
        if len(left) < 3:
            raise ApiError(
                f"a table needs three players: without {without}, {len(left)} would be left",
                Refusal.TOO_FEW_LEFT,
                without=without,
                left=len(left),
            )
        daemon.hosting.drop(runner)
        own = daemon.identity.public_key
        daemon.peers.keys.update(m.daemon for m in left if m.daemon != own)
        name = runner.ready.name or "tarot"
        log.info(
            "table %s: going on without %s, gone for good — a new table %s of %d with the others",
            runner.table_id.hex()[:8],
            without,
            name,
            len(left),
        )
        daemon.lobby.forget_joined()
        daemon.send_lobby(daemon.lobby.want(name, len(left)))
        daemon.hosting.start_ready_tables()
        return {
            "table": name,
            "seats": len(left),
            "without": [names[seat] for seat in gone],
            "gone": without,
        }

    def _abandon_event_table(self, runner: TableRunner, gone: list[int]) -> dict[str, Any]:
        """An event table goes on without nobody: the round's deals it has not played are
        abandoned, each row signed by the members left and naming the gone silent, and the
        table ends here (its sheet kept).  The event's next round seats the others."""
        daemon = self.daemon
        names = runner.ready.setup.names
        without = ", ".join(names[seat] for seat in gone)
        daemon.hosting.drop(runner)
        log.info(
            "event table %s: %s gone for good — the %d deals left of the round are signed "
            "abandoned",
            runner.table_id.hex()[:8],
            without,
            max(0, (runner.deals_wanted or 0) - runner.completed),
        )
        daemon.event_glue.send(daemon.events.abandon(runner.table_id, runner.completed, gone))
        return {
            "table": runner.ready.name,
            "without": [names[seat] for seat in gone],
            "gone": without,
            "abandoned": True,
        }
