"""``scripts/play --home DIR`` taken up again speaks the game's language (issue 37, finding
6): a game begun with ``--lang fr`` comes back in French without ``--lang``, in an English
locale; a ``--lang`` given again changes it.  In tmux, real daemons, one table of three."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemons import ROOT
from test_play_tmux import _processes_mentioning

from client.tui.i18n import Texts
from lab.tmux import Pane

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


@pytest.fixture
def game(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "h7game"
    for pid in _processes_mentioning(str(tmp_path)):
        os.kill(pid, 9)


def play(home: Path, *options: str) -> Pane:
    env = {**os.environ, "XDG_STATE_HOME": str(home.parent / "state"), "LANG": "C.UTF-8"}
    return Pane(
        f"cd {ROOT} && scripts/play --players 3 --name marie --think 0 --home {home} "
        f"{' '.join(options)}; echo EXITED $?; read",
        env,
    )


def hand_then_quit(pane: Pane, lang: str) -> str:
    texts = Texts(lang)
    try:
        screen = pane.wait(lambda s: texts("hand") in s, f"the hand, in {lang}", timeout=90)
        pane.keys("q")
        pane.wait(lambda s: texts("quit_kept", home="")[:12] in s, "q asking first")
        pane.keys("q")
        pane.wait(lambda s: "EXITED 0" in s, "scripts/play to stop", timeout=30)
        return screen
    finally:
        pane.kill()


def test_a_game_kept_with_home_keeps_its_language(game: Path) -> None:
    screen = hand_then_quit(play(game, "--lang fr"), "fr")
    assert "marie (vous)" in screen
    screen = hand_then_quit(play(game), "fr")  # no --lang, an English locale: French still
    assert "marie (vous)" in screen and "Your hand" not in screen
    assert (game / "play" / "lang").read_text().strip() == "fr"
    screen = hand_then_quit(play(game, "--lang en"), "en")  # changed when asked
    assert "marie (you)" in screen
    assert (game / "play" / "lang").read_text().strip() == "en"
