"""``scripts/play`` in a real terminal: started in a detached tmux session, the hand appears,
keys sent to the pane play a whole deal, ``capture-pane`` shows the score sheet, and ``q``
stops every daemon the script started.  The test reads the screen and answers what it
shows — it polls for content, it never sleeps blindly.

tmux runs on a server socket of its own (``-L``, :class:`lab.tmux.Pane`), so nothing of
another tmux is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemons import ROOT

from lab.tmux import Pane, answer, scored

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


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
                cmdline = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                continue
            if text in cmdline and "tarotd.cli" in cmdline:
                pids.append(int(entry.name))
    return pids


def play_one_deal(pane: Pane) -> str:
    """Answer what the screen asks until the deal is scored; the screen then."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        screen = pane.screen()
        if scored(screen):
            return screen
        keys = answer(screen)
        if keys is None:
            pane.wait(lambda now, before=screen: now != before, "the table to move on")
        else:
            pane.press(*keys)
    raise AssertionError(f"no score sheet within 120 s; the screen:\n{pane.screen()}")


def scripts_play(state_home: Path, name: str, *options: str) -> Pane:
    """``scripts/play`` for three players in English, with bots that answer at once; the
    pane shows ``EXITED`` and the script's status once it stops."""
    env = {**os.environ, "XDG_STATE_HOME": str(state_home), "LANG": "C.UTF-8"}
    more = " ".join(options)
    return Pane(
        f"cd {ROOT} && scripts/play --players 3 --lang en --name {name} --think 0 {more}; echo "
        "EXITED $?; read",
        env,
    )


def quit_play(pane: Pane) -> str:
    """q, which asks first at a game and says what becomes of it; q again quits.  The question."""
    pane.keys("q")
    asked = pane.wait(lambda s: "Quit?" in s, "q to ask first")
    pane.keys("q")
    pane.wait(lambda s: "EXITED 0" in s, "scripts/play to stop", timeout=30)
    return asked


def test_scripts_play_in_tmux_plays_a_whole_deal_and_stops_its_daemons(state_home: Path) -> None:
    pane = scripts_play(state_home, "marie")
    try:
        screen = pane.wait(
            lambda s: "Your hand" in s and re.search(r"\d+♠|\d+♥|\d+♦|\d+♣", s), "the hand"
        )
        assert "marie (you)" in screen and "anne" in screen and "bruno" in screen
        screen = play_one_deal(pane)
        assert "Score sheet" in screen and "Total" in screen
        assert re.search(r"Garde|Petite", screen)  # the contract of the deal, in French
        runs = list((state_home / "tarot").iterdir())
        assert len(runs) == 1 and len(_processes_mentioning(str(runs[0]))) == 3  # you and two bots
        asked = quit_play(pane)
        assert "the game is deleted" in asked.replace("\n", " ")  # said before it is
        assert not (state_home / "tarot" / runs[0].name).exists()  # its run directory removed
        assert _processes_mentioning(str(runs[0])) == []  # every daemon it started, stopped
    finally:
        pane.kill()


def test_scripts_play_names_no_bot_like_the_player(state_home: Path) -> None:
    """A player called Anne plays against bruno and chloe, not against a second anne: two
    seats of one name would share a column title on the score sheet."""
    pane = scripts_play(state_home, "Anne", "--bots random")
    try:
        screen = pane.wait(
            lambda s: "Your hand" in s and "bruno" in s and "chloe" in s, "the table"
        )
        assert "Anne (you)" in screen and "anne" not in screen.replace("Anne (you)", "")
        assert "(bot random)" in screen  # each bot's level by its name
        quit_play(pane)
    finally:
        pane.kill()


def test_scripts_play_home_keeps_its_table_size_and_says_so(tmp_path: Path) -> None:
    """A game kept with --home is taken up at its own size; another --players is refused in
    one line before any daemon starts; --help is no error."""
    (tmp_path / "g" / "play").mkdir(parents=True)
    (tmp_path / "g" / "play" / "players").write_text("5\n")
    out = subprocess.run(
        [str(ROOT / "scripts" / "play"), "--home", str(tmp_path / "g"), "--players", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "holds a game of 5 players; give --players 5" in out.stderr
    assert _processes_mentioning(str(tmp_path)) == []
    shown = subprocess.run(
        [str(ROOT / "scripts" / "play"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0 and "--bots LEVEL" in shown.stdout
