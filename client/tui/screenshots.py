"""``scripts/screenshots``: the client's main screens as ``tmux capture-pane`` shows them at
80×24, for the README — the lobby, the bidding, the écart, a trick, the deal's summary with
the score sheet, and the replay of that deal — from the real program: ``tarotd`` and
``tarot`` for the lobby, ``scripts/play`` for the game.  Printed as Markdown on stdout, so
that the README's screens can be made again after a change.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from client.tui.tmux import Pane, answer, scored

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 80, 24


def _trimmed(screen: str) -> str:
    return screen.rstrip("\n") + "\n"


def lobby(lang: str, env: dict[str, str], workdir: Path) -> str:
    """A lone daemon, a table of five opened from the lobby and a bot added: seats filling."""
    home = workdir / "lobby"
    daemon = subprocess.Popen([sys.executable, "-m", "tarotd.cli", "--home", str(home), "--name", "marie",
                               "--listen", "127.0.0.1:0", "--no-discovery", "--log-level", "warning"],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (home / "api.sock").exists() and daemon.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    pane = Pane(f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang {lang}", env, WIDTH, 12)
    try:
        pane.wait(lambda s: "5" in s and ("Lobby" in s or "Salon" in s), "the lobby", timeout=30)
        pane.keys("5")
        pane.wait(lambda s: "1/5" in s, "the table opened")
        pane.keys("b")
        return pane.wait(lambda s: "2/5" in s, "a bot seated")
    finally:
        pane.kill()
        daemon.terminate()
        daemon.wait(timeout=10)


def game(lang: str, env: dict[str, str], workdir: Path, deals: int = 8) -> dict[str, str]:
    """``scripts/play`` at five: the first bidding, the écart just begun, the fourth card the
    player is asked for, the summary and sheet of the deal in which they made the écart, and
    its replay at the fifth trick."""
    command = f"cd {ROOT} && scripts/play --players 5 --lang {lang} --name marie --think 0 --home {workdir / 'game'}"
    pane = Pane(command, env, WIDTH, HEIGHT)
    screens: dict[str, str] = {}
    turns = 0
    deadline = time.monotonic() + 60 * deals
    try:
        while time.monotonic() < deadline:
            screen = pane.screen()
            if scored(screen):
                if "ecart" in screens:
                    screens["summary"] = screen
                    pane.press("r")
                    for _ in range(5):
                        screens["replay"] = pane.press("Right")
                    pane.press("Escape")
                    return screens
                pane.press("n")
                continue
            keys = answer(screen)
            if keys is None:
                pane.wait(screen.__ne__, "the table to move on")
                continue
            if keys == ["g", "Enter"]:
                screens.setdefault("bidding", screen)
            elif re.search(r"(Your turn|À vous de jouer)", screen):
                turns += 1
                if turns == 4 and "trick" not in screens:
                    screens["trick"] = screen
            after = pane.press(*keys)
            if keys == ["Space"] and "ecart" not in screens:
                screens["ecart"] = after  # one Space: most often a trump, refused with the reason
        raise AssertionError(f"no écart in {deals} deals; the screen:\n{pane.screen()}")
    finally:
        pane.keys("q")  # q asks first, q again: scripts/play stops its daemons, the session ends with it
        pane.wait(lambda s: "Quit?" in s or "Quitter ?" in s, "q to ask first", timeout=10)
        pane.keys("q")
        pane.wait(lambda _: pane.ended(), "scripts/play to stop its daemons", timeout=30)
        pane.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots", description=__doc__)
    parser.add_argument("--lang", choices=("fr", "en"), default="en")
    args = parser.parse_args(argv)
    env = {**os.environ, "LANG": "C.UTF-8"}
    with tempfile.TemporaryDirectory(prefix="tarot-screens-") as tmp:
        workdir = Path(tmp)
        env["XDG_STATE_HOME"] = str(workdir / "state")
        screens = {"lobby": lobby(args.lang, env, workdir), **game(args.lang, env, workdir)}
    for name in ("lobby", "bidding", "ecart", "trick", "summary", "replay"):
        print(f"**{name}**\n\n```text\n{_trimmed(screens[name])}```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
