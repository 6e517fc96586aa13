"""When a table's silence becomes a time-out (``tarotd --timeout``).

A seat the deal waits for is treated as gone once the *table* has not moved for the timeout:
no message taken in by its machines, none signed here, no seat of a round collected.  Timing
it from this daemon's own last message instead, as the daemon once did, abandoned honest
deals: a daemon whose seat has nothing to say while the others bid or play hears the deal
move, yet sends nothing for as long as the others take — five players answering in 8 s
each leave a daemon silent for 32 s between two of its cards — and it timed out
whichever seat's turn had just come, each daemon a different one (measured: four bots
answering in 0.5 s, a timeout of 1.2 s, nine time-outs in one deal, the sheets naming two
different culprits).

Nor is the time a daemon's own event loop was held (an audit on a starved machine) anyone
else's silence: it heard nobody meanwhile, so that time is not counted (:meth:`held`).

How long a table may stand still is the daemon's to say, look by look: a person deciding at a
daemon that answers may think for ``--decision-timeout``; a deck step, which a daemon computes
without anyone's say, or a seat whose daemon is away, gets ``--timeout``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Protocol

from protocol.replication.public import Stage


class Table(Protocol):
    """What the clock reads of a table (a :class:`~tarotd.runner.TableRunner`)."""

    @property
    def table_id(self) -> bytes: ...

    @property
    def progress(self) -> Hashable: ...

    @property
    def deal_stage(self) -> Stage: ...

    def waiting_for(self) -> set[int]: ...


@dataclass
class SilenceClock:
    """For each table, its last progress mark and since when it has shown it."""

    _since: dict[bytes, tuple[Hashable, float]] = field(default_factory=dict)

    def silent(self, table: bytes, progress: Hashable, now: float, timeout: float) -> bool:
        """True if ``table`` has shown the same ``progress`` (any value that changes
        whenever the deal moves) for more than ``timeout`` seconds by ``now``.  The clock
        then starts again, so that a table stalled in vain is not stalled at every look but
        a whole timeout later."""
        mark = self._since.get(table)
        if mark is not None and mark[0] == progress and now - mark[1] <= timeout:
            return False  # standing still, not for long yet
        self._since[table] = (progress, now)
        return mark is not None and mark[0] == progress  # standing still for too long

    def overdue(self, table: Table, now: float, patience: float) -> bool:
        """Whether ``table`` waits for seats that have let it stand still for more than
        ``patience`` seconds: time to time them out.  Never between deals: the next deal's
        commitments wait for every member, however long (a player reading the sheet)."""
        return (
            self.silent(table.table_id, table.progress, now, patience)
            and bool(table.waiting_for())
            and table.deal_stage is not Stage.COMMIT
        )

    def held(self, seconds: float) -> None:
        """This daemon heard nothing for ``seconds`` (its event loop was busy): that time
        is taken off every table's silence."""
        self._since = {
            table: (progress, since + seconds) for table, (progress, since) in self._since.items()
        }
