"""The tools' threads for the group's arithmetic: the :class:`~protocol.deck.group.Scheduler` that
``tarot`` gives :func:`protocol.deck.group.use_scheduler` when it starts.

The tools that deal or audit in one process (``tarot sim``, ``tarot audit``, ``tarot bench``'s
in-process figures) spread a batch's slices over the machine's cores like the daemon
(libsodium runs without Python's lock).  Unlike the daemon (``tarotd.workers``), they run
the checks nobody waits for in the caller's thread: every seat is in this process, so there
is no other seat's work to give the cores to first.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from protocol.deck.group import MAX_WORKERS

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class Threads:
    """The group's slices over ``workers`` threads, made on first use — and again in a
    forked child (``tarot match``'s workers), which has none of its parent's threads."""

    def __init__(self, workers: int | None = None) -> None:
        self._workers = workers if workers is not None else min(MAX_WORKERS, os.cpu_count() or 1)
        self._made: tuple[int, ThreadPoolExecutor] | None = None  # (its process, the pool)

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, work: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
        pid = os.getpid()
        if self._made is None or self._made[0] != pid:
            self._made = (pid, ThreadPoolExecutor(self._workers, thread_name_prefix="tarot-mul"))
        return list(self._made[1].map(work, items))

    def in_background(self, work: Callable[[], _Result]) -> _Result:
        return work()


#: The one the tools install (:func:`client.cli.main`): made once, so that a process calling
#: ``main`` again and again (the tests) does not leave a pool behind each time.
TOOLS = Threads()
