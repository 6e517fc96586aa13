"""A ``--peer`` nobody answers at is said once in the log and shown by ``tarot status``
(issue 26, item 10): a mistyped address or key looked exactly like a player not come yet."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from protocol.replication.identity import Identity
from tests.daemons import answer, daemon_argv, free_ports, kill_all, log_path, spawn

pytestmark = pytest.mark.daemons


def test_an_unreachable_peer_is_logged_once_and_shown_in_status(tmp_path: Path) -> None:
    nowhere = free_ports(1)[0]  # reserved for this run, and never bound
    argv = daemon_argv(tmp_path / "d0", "joueur0", 0, [], timeout=1)
    argv += ["--peer", f"{Identity.generate().public_key.hex()}@127.0.0.1:{nowhere}"]
    process = spawn(argv, log_path(tmp_path, 0))
    try:
        deadline, shown = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            status = answer(tmp_path / "d0", "status")
            if isinstance(status, dict) and status.get("unreachable"):
                shown = status["unreachable"]
                break
            time.sleep(0.2)
        assert shown == [f"127.0.0.1:{nowhere}"], shown
        time.sleep(3)  # several heartbeats, and a recycled link or two: still one line
        text = log_path(tmp_path, 0).read_text()
        assert text.count(f"--peer 127.0.0.1:{nowhere}: no daemon has answered there") == 1, text
    finally:
        kill_all([process])
