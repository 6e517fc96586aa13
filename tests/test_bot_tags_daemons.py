"""Bots tagged on every member's screen, with real daemons (issue 37, finding 5): a daemon
started with ``--bot basic --bots 1`` and a person's daemon form a table of three on
127.0.0.1; the person's daemon, which hosts neither bot, gives its client each seat's level
from the signed manifest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.daemons import answer, daemon_argv, free_ports, kill_all, log_path, logs, spawn

pytestmark = pytest.mark.daemons


def test_the_persons_daemon_says_which_seats_the_other_daemon_plays_with_bots(
    tmp_path: Path,
) -> None:
    ports = free_ports(2)
    homes = [tmp_path / "d0", tmp_path / "d1"]
    argvs = [
        daemon_argv(
            homes[0],
            "joueur0",
            ports[0],
            [(homes[1], ports[1])],
            bot="strong",
            extra=["--bots", "1"],
        ),
        daemon_argv(homes[1], "joueur1", ports[1], [(homes[0], ports[0])], bot=None),
    ]
    processes = [spawn(argv, log_path(tmp_path, i)) for i, argv in enumerate(argvs)]
    try:
        deadline = time.monotonic() + 60
        state: Any = None
        while not (isinstance(state, dict) and state.get("table")):
            assert time.monotonic() < deadline, logs(tmp_path, 2)
            time.sleep(0.3)
            state = answer(homes[1], "state")
    finally:
        kill_all(processes)
    levels = dict(zip(state["seats"], state["bots"], strict=True))
    assert levels == {"joueur0": "strong", "joueur0-bot1": "strong", "joueur1": ""}, levels
