"""What the whole suite shares.

* The marks ``daemons`` and ``heavy`` are given at the test (``pytestmark`` in its module, or a
  decorator), so that a renamed test keeps its mark.  ``-m "not daemons"`` runs the pure half:
  the tests that start no daemon, socket, subprocess, tmux or network namespace; and
  ``-m "not daemons and not heavy"`` its quick part, in under a minute.  In a run whose ``-m``
  names ``daemons``, a test left unmarked is held to it: opening a socket or starting a process
  fails it, saying which mark to add.
* ``slow`` tests run only when ``-m`` names ``slow`` (``-m slow``; ``-m "slow or not slow"``
  for everything): ``-m "not daemons"`` leaves them out too.
* No Hypothesis deadline: a wall-clock bound on each example fails on a loaded machine and
  says nothing of the code.
* The group's work runs on the tools' threads (:data:`client.workers.TOOLS`), as in ``tarot``:
  the protocol alone runs serially, and the suite's in-process deals took a third longer so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import zmq
from hypothesis import settings

from client.workers import TOOLS
from protocol.deck.group import binding_file, use_scheduler

use_scheduler(TOOLS)

# rbcl leaves its copy of libsodium in the temporary directory at each import: the suite's own
# process removes it once loaded, as the programs do (tests/test_binding_file.py).
if (_loaded := binding_file()) is not None:
    with contextlib.suppress(OSError):
        os.unlink(_loaded)

# On the profile Hypothesis loaded: its ``ci`` one under CI=true (derandomized), or its default.
settings.register_profile("tarot", parent=settings.default, deadline=None)
settings.load_profile("tarot")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "slow" not in config.getoption("markexpr"):
        slow = [item for item in items if item.get_closest_marker("slow") is not None]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item.get_closest_marker("slow") is None]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if "daemons" not in item.config.getoption("markexpr") or item.get_closest_marker("daemons"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        for owner, name in OPENERS:
            patch.setattr(owner, name, _refused(item, owner, name))
        yield


#: What a pure test must not call: where sockets and processes begin.
OPENERS: tuple[tuple[Any, str], ...] = (
    (socket.socket, "__init__"),
    (subprocess.Popen, "__init__"),
    (os, "fork"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (zmq.Context, "socket"),
)


def _refused(item: pytest.Item, owner: Any, name: str) -> Callable[..., Any]:
    original = getattr(owner, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        if owner is socket.socket and (len(args) > 4 or kwargs.get("fileno") is not None):
            return original(*args, **kwargs)  # a descriptor wrapped: asyncio's socketpair
        called = f"{getattr(owner, '__name__', owner)}.{name}"
        pytest.fail(
            f"{item.nodeid} is not marked daemons but calls {called}: mark it at the test, "
            "@pytest.mark.daemons on it or pytestmark = pytest.mark.daemons in its module"
        )

    return refuse
