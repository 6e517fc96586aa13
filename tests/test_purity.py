"""``protocol`` is plain functions and state machines (issue 24, item 2): it starts no thread
and reads no clock, so it imports nothing that schedules, waits or talks to the network —
the daemon and the tools pass in what runs its work (:func:`protocol.deck.group.use_scheduler`)
and the time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROTOCOL = Path(__file__).resolve().parent.parent / "protocol"
#: Modules only a program's own layer (``tarotd``, ``client``) may use.
SCHEDULING = {
    "threading",
    "concurrent",
    "asyncio",
    "socket",
    "time",
    "os",
    "multiprocessing",
    "selectors",
    "signal",
}


def _imported(path: Path) -> set[str]:
    """The top-level packages ``path`` imports, wherever in the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted(PROTOCOL.glob("*.py")), ids=lambda path: path.name)
def test_protocol_imports_nothing_that_schedules_waits_or_talks(path: Path) -> None:
    assert not _imported(path) & SCHEDULING
