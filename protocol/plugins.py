"""The hook through which the lab plugs into the programs, so that the product names no module
of the lab: the entry points its package declares (``pyproject.toml``).

* Group ``tarot.commands``: the ``tarot`` subcommands the lab adds (``tarot bench``), each
  naming a module with ``register(subparsers)`` as ``client/cli.py`` describes.
* Group ``tarot.cheats``, entry ``lab``: the cheat lab, an object that is a :class:`CheatLab`
  (``tarot sim --cheat``, ``tarotd --cheat``).

Installed without the lab — a wheel of the product alone — a lab command is not there and
``--cheat`` is refused, each saying why (:func:`not_installed`).  It lives in ``protocol``, as
``localapi`` does, because both programs use it; reading the installed packages' metadata is
what an import does, not I/O of the game.

>>> cheat_lab() is not None  # the source tree installs the lab
True
>>> "revoke" in cheat_lab().kinds
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol, cast

from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Message

COMMANDS = "tarot.commands"
CHEATS = "tarot.cheats"

#: The commands the lab adds, named here only so that a missing one is explained, not unknown.
LAB_COMMANDS = ("bench",)

#: A frame a cheater addresses itself: the seats it is for (None: every other), its bytes.
Addressed = tuple[frozenset[int] | None, bytes]


class Cheater(Protocol):
    """What a cheating seat machine tells its transport, beyond the messages it returns."""

    #: Its own messages of the deal before, for a replay.
    earlier: Sequence[Message]

    @property
    def attempted(self) -> bool:
        """Whether the attack was carried out in this deal (some need a chance)."""
        ...

    def take_addressed(self) -> list[Addressed]:
        """Frames for some seats only, raw bytes or old messages, delivered as they are."""
        ...


class CheatLab(Protocol):
    """The cheat lab as the programs use it: attacks by name, each a seat machine."""

    @property
    def kinds(self) -> Sequence[str]:
        """The attacks' names, sorted."""
        ...

    def machine(self, kind: str) -> type[SeatMachine]:
        """The seat machine that runs attack ``kind``."""
        ...

    def cheater(self, machine: SeatMachine) -> Cheater | None:
        """``machine`` as the attack it runs; None for an honest machine."""
        ...


@functools.cache
def cheat_lab() -> CheatLab | None:
    """The installed cheat lab, or None without it."""
    found = [_loaded(point) for point in entry_points(group=CHEATS, name="lab")]
    return cast(CheatLab, found[0]) if found and found[0] is not None else None


def required_cheat_lab(what: str) -> CheatLab:
    """The cheat lab, for ``what`` that cannot run without it (:class:`NotInstalled`)."""
    lab = cheat_lab()
    if lab is None:
        raise NotInstalled(not_installed(what))
    return lab


class NotInstalled(LookupError):
    """A tool of the lab asked for where the lab is not installed."""


@functools.cache
def commands() -> dict[str, Any]:
    """The lab's ``tarot`` subcommands installed: each module (``register``), by name."""
    points = sorted(entry_points(group=COMMANDS), key=lambda point: point.name)
    loaded = {point.name: _loaded(point) for point in points}
    return {name: module for name, module in loaded.items() if module is not None}


def _loaded(point: EntryPoint) -> Any:
    """What ``point`` names, or None when its package is not there: an entry point declared by
    a wheel built without the lab."""
    try:
        return point.load()
    except ModuleNotFoundError as error:
        if error.name is not None and point.module.startswith(error.name):
            return None
        raise


def not_installed(what: str) -> str:
    """Why ``what`` of the lab cannot run here."""
    return (
        f"{what} is a developer tool of the lab, not installed here: "
        "install the project from its source tree (pip install -e .) to have it"
    )
