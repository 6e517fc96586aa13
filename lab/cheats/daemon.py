"""``tarotd --cheat KIND``: the daemon's own seat runs an attack of the cheat lab.

The attack itself is the seat machine of :mod:`lab.cheats.attacks`, the same one ``tarot sim
--cheat`` runs; this module is what a daemon adds around it, the transport:

* the frames the cheater addresses itself (:meth:`~lab.cheats.attacks.Cheater.take_addressed`)
  go through the mesh to the daemons of the seats they are for, exactly as they are — so an
  equivocation really sends different bytes to different peers, a flood really sends junk,
  and a replay re-sends bytes of the deal before;
* a replaying seat is given its own messages of the deal before, from the journal.

It exists for tests and demonstrations: an honest daemon never starts one.  Peeking through
another daemon's local API is not among the attacks: the API is a Unix socket that only the
same user on the same machine reaches (``tarotd/api.py``), and that user is the player.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lab.cheats.attacks import Cheater, cheat_machine
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Message
from tarotd.lobby import ReadyTable

if TYPE_CHECKING:  # the runner imports this module
    from tarotd.runner import WireOut


def machine_class(
    cheat: str | None, ready: ReadyTable, daemon_key: bytes, seat: int
) -> type[SeatMachine]:
    """The machine for a hosted seat: the attack for the daemon's own seat when it cheats,
    the honest machine for every other (its bot seats play fair)."""
    if cheat is not None and ready.members[seat].key == daemon_key:
        return cheat_machine(cheat)
    return SeatMachine


def arm(machine: SeatMachine, earlier: Callable[[], Sequence[Message]]) -> None:
    """Give a cheater what its attack needs from the journal: its messages of the deal before."""
    if isinstance(machine, Cheater):
        machine.earlier = [m for m in earlier() if m.seat == machine.seat]


def addressed(
    machines: Sequence[SeatMachine], ready: ReadyTable, daemon_key: bytes
) -> list[WireOut]:
    """The frames the cheaters among ``machines`` address themselves, to the daemons hosting
    the seats they are for (every other daemon when they name none)."""
    outs: list[WireOut] = []
    for machine in machines:
        if not isinstance(machine, Cheater):
            continue
        for seats, frame in machine.take_addressed():
            chosen = range(len(ready.members)) if seats is None else sorted(seats)
            daemons = dict.fromkeys(ready.members[s].daemon for s in chosen)
            outs += [(daemon, frame) for daemon in daemons if daemon != daemon_key]
    return outs
