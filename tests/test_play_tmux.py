"""``scripts/play`` in a real terminal: started in a detached tmux session, the hand appears,
keys sent to the pane play a whole deal, ``capture-pane`` shows the score sheet, and ``q``
stops every daemon the script started.  The test reads the screen and answers what it
shows — it polls for content, it never sleeps blindly.

tmux runs on a server socket of its own (``-L``), so nothing of another tmux is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemons import ROOT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")


class Pane:
    """A detached tmux session on a private server, read with ``capture-pane``."""

    def __init__(self, command: str, env: dict[str, str], width: int = 120, height: int = 36) -> None:
        self.socket = f"tarot-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        self.tmux("new-session", "-d", "-s", "play", "-x", str(width), "-y", str(height), command)

    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env, timeout=10)
        return out.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "play")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "play", *keys)

    def wait(self, predicate: Callable[[str], object], what: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; the screen:\n{screen}")
            time.sleep(0.1)

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env)


@pytest.fixture
def state_home(tmp_path: Path) -> Iterator[Path]:
    """``$XDG_STATE_HOME`` for the script: its run directories go there."""
    yield tmp_path / "state"
    # Whatever happened, no daemon of this test may outlive it (each killed by its own id).
    for pid in _processes_mentioning(str(tmp_path)):
        os.kill(pid, 9)


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and "tarotd.cli" in cmdline:
                pids.append(int(entry.name))
    return pids


def play_one_deal(pane: Pane) -> str:
    """Answer what the screen asks until the deal is scored: bid a garde when it is
    offered, Space along the hand for the écart until it is complete, no chelem, and Enter
    on the highlighted playable card.  The screen when the score sheet shows."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        screen = pane.screen()
        if "Deal scored" in screen:
            return screen
        ecart = re.search(r"Your écart: (\d+)/(\d+) cards", screen)
        if "Your bid:" in screen:
            keys = ["g", "Enter"]
        elif ecart:
            keys = ["Enter"] if ecart.group(1) == ecart.group(2) else ["Space"]
        elif "Your turn:" in screen or "chelem?" in screen or "Call a card:" in screen:
            keys = ["Enter"]
        else:
            time.sleep(0.05)
            continue
        pane.keys(*keys)
        pane.wait(lambda now: now != screen, "the screen to answer the keys", timeout=10)
    raise AssertionError(f"no score sheet within 120 s; the screen:\n{pane.screen()}")


def test_scripts_play_in_tmux_plays_a_whole_deal_and_stops_its_daemons(state_home: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(state_home), "LANG": "C.UTF-8"}
    env.pop("TMUX", None)
    command = f"cd {ROOT} && scripts/play --players 3 --lang en --name marie --think 0; echo EXITED $?; read"
    pane = Pane(command, env)
    try:
        screen = pane.wait(lambda s: "Your hand" in s and re.search(r"\d+♠|\d+♥|\d+♦|\d+♣", s), "the hand")
        assert "marie (you)" in screen and "anne" in screen and "bruno" in screen
        screen = play_one_deal(pane)
        assert "Score sheet" in screen and "Total" in screen
        assert re.search(r"Garde|Petite", screen)  # the contract of the deal, in French
        runs = list((state_home / "tarot").iterdir())
        assert len(runs) == 1 and len(_processes_mentioning(str(runs[0]))) == 3  # you and two bots
        pane.keys("q")
        pane.wait(lambda s: "EXITED 0" in s, "scripts/play to stop", timeout=30)
        assert not (state_home / "tarot" / runs[0].name).exists()  # its run directory removed
        assert _processes_mentioning(str(runs[0])) == []  # every daemon it started, stopped
    finally:
        pane.kill()
