"""The daemon's threads for the group's arithmetic: the :class:`~protocol.deck.group.Scheduler`
``tarotd`` gives :func:`protocol.deck.group.use_scheduler` when it starts.

The slices of a batch (a shuffle's 78 multiplications, the checks of its points) go to a
pool of threads: libsodium runs without Python's lock (cffi releases it around each call), so
two cores nearly halve a step's time.  The checks nobody waits for go to a second pool, of
the lowest CPU priority (:meth:`Workers.in_background`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import suppress
from typing import TypeVar

from protocol.deck.group import MAX_WORKERS

#: The niceness of background threads: the lowest, so that they run on what the work
#: somebody waits for leaves of the cores.
BACKGROUND_NICENESS = 19
#: Seconds a caller leaves its work to the background before doing it itself.  With the
#: five daemons of a table on two cores, a background check was done in 25 ms at the median
#: and 110 ms at worst (171 checks of a ``tarot bench --quick``).
BACKGROUND_PATIENCE = 0.5

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class _Threads:
    """The pools and the background's turn of one process: a forked child (a process pool's
    worker, say) has none of its parent's threads, and a lock a parent's thread held is never
    released there, so the child makes its own (:meth:`Workers._threads`)."""

    def __init__(self, workers: int) -> None:
        self.foreground = ThreadPoolExecutor(workers, thread_name_prefix="tarot-mul")
        # One thread for the work, enough for the slices it hands on — not for two works.
        self.background = ThreadPoolExecutor(
            workers + 1, thread_name_prefix="tarot-background", initializer=_into_background
        )
        self.turn = threading.Lock()  #: held while a work is in the background


_background = threading.local()


def _in_background() -> bool:
    return getattr(_background, "active", False)


def _into_background() -> None:
    _background.active = True
    if sys.platform.startswith("linux"):  # a thread's own niceness (POSIX would renice the process)
        with suppress(OSError):  # a sandbox that forbids it: the work runs at the usual priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)


class Workers:
    """The group's slices over ``workers`` threads; the checks nobody waits for on threads of
    the lowest priority, for ``patience`` seconds at most.  The threads are made on first
    use: a daemon that never deals never starts them."""

    def __init__(self, workers: int | None = None, patience: float = BACKGROUND_PATIENCE) -> None:
        self._workers = workers if workers is not None else min(MAX_WORKERS, os.cpu_count() or 1)
        self.patience = patience
        self._made: tuple[int, _Threads] | None = None  # (the process it was made in, its threads)

    @property
    def workers(self) -> int:
        return self._workers

    def _threads(self) -> _Threads:
        pid = os.getpid()
        if self._made is None or self._made[0] != pid:
            self._made = (pid, _Threads(self._workers))
        return self._made[1]

    def map(self, work: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
        """The background's threads hand their slices on to one another, at their own low
        priority; every other thread's go to the foreground pool."""
        threads = self._threads()
        pool = threads.background if _in_background() else threads.foreground
        return list(pool.map(work, items))

    def in_background(self, work: Callable[[], _Result]) -> _Result:
        """``work()``, on threads of the lowest CPU priority; the caller waits for it — for
        :attr:`patience` seconds, then does the work itself, at its own priority.

        For checks nobody waits for.  When the five daemons of a table share a machine's
        cores, every seat checks each shuffle and lock step as it comes, while the next seat
        must check it and then compute its own — the step everybody waits for.  With the other
        seats' checks on low-priority threads, the next seat's work gets the cores first.  The
        checks are the same and done before the caller goes on: only the order in which the
        machine runs them changes.  (A thread's own niceness is Linux's; elsewhere the work
        runs at the usual priority.)

        The patience is for a machine whose cores are never free — fifty daemons on two, in
        the load test — where a thread of niceness 19 gets a sliver of a core for seconds on
        end, and the caller, a daemon's event loop, answers no heartbeat meanwhile: its peers
        took it for gone and tables were abandoned.  The starved copy is dropped if it has not
        started, else left to finish, its result thrown away.  So ``work`` may run twice at
        once: it must read nothing another thread changes and change nothing.  Until that copy
        is done it holds the background (the pool has one thread for ``work`` and enough for
        the slices it hands on, not for two), and other callers do their work at once,
        themselves."""
        if _in_background():
            return work()  # already there
        threads = self._threads()
        if not threads.turn.acquire(blocking=False):
            return work()
        future = threads.background.submit(work)
        future.add_done_callback(lambda _: threads.turn.release())
        done, _ = wait([future], timeout=self.patience)
        if done:
            return future.result()
        future.cancel()
        return work()


#: The one ``tarotd`` installs (:func:`tarotd.cli.main`): made once, so that a process calling
#: ``main`` again (the tests) does not leave pools behind each time.
DAEMON = Workers()
