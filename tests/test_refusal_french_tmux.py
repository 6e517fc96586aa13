"""A French player reads the daemon's refusal in French (issue 38, item 4): ``tarot --lang fr``
in tmux at 80×24 against a real ``tarotd``, which organises an event no one has joined yet;
``e`` asks it to start the event, and the refusal — too few players — comes back as its code,
said in French with its parameter, not in the daemon's English words."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from daemons import ROOT, daemon_argv, free_ports, kill_all, log_path, spawn, wait_for_path

from client.api import ask
from client.tui.i18n import Texts
from lab.tmux import Pane

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


def test_a_french_player_reads_the_daemons_refusal_in_french(tmp_path: Path) -> None:
    home = tmp_path / "d0"
    argv = daemon_argv(home, "marie", free_ports(1)[0], [], bot=None, table=None)
    daemon = spawn(argv, log_path(tmp_path, 0))
    pane = None
    try:
        wait_for_path(home / "api.sock", daemon)
        asyncio.run(ask(home, "event-open", name="soirée", rounds=2, deals=2))
        command = (
            f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang fr "
            f"2> {tmp_path}/client.err"
        )
        pane = Pane(command, {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, 80, 24)
        pane.wait(lambda s: "soirée" in s, "the event in the lobby", timeout=30)
        pane.keys("e")  # start it: the daemon refuses, nobody has joined
        french = Texts("fr")("refused", reason="une position demande au moins 3 joueurs")
        screen = pane.wait(lambda s: french in " ".join(s.split()), "the refusal, in French", 20)
        assert "a round needs" not in screen and "Refused" not in screen
        assert "pas 0" in " ".join(screen.split())  # its parameter, said
    finally:
        if pane is not None:
            pane.kill()
        kill_all([daemon])
