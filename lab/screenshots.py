"""``scripts/screenshots``: the client's main screens as ``tmux capture-pane`` shows them at
80×24, for docs/client.md — the lobby, the bidding, the écart, a trick, the deal's summary with
the score sheet, and the replay of that deal — from the real program: ``tarotd`` and
``tarot`` for the lobby, ``scripts/play`` for the game.  Printed as Markdown on stdout, so
that the screens shown can be made again after a change.

``--event DIR``: an evening instead — the organiser's daemon and eight bots' daemons on
127.0.0.1 play a small event; the organiser's ``tarot event show`` and a player's client
during round 2, then the event's HTML page, written to DIR — with pictures of the three
(``organiser.png``, ``player.png``, ``event.png``) when ``aha`` and ``wkhtmltoimage`` are there.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from client.api import ask
from lab.tmux import Pane, answer, scored

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 80, 24


def _trimmed(screen: str) -> str:
    return screen.rstrip("\n") + "\n"


def _daemon(home: Path, name: str, *extra: str) -> subprocess.Popen[bytes]:
    """A ``tarotd`` on 127.0.0.1 (any free port, no discovery), once its local API is up."""
    daemon = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tarotd.cli",
            "--home",
            str(home),
            "--name",
            name,
            "--listen",
            "127.0.0.1:0",
            "--no-discovery",
            "--log-level",
            "warning",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while (
        not (home / "api.sock").exists() and daemon.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    return daemon


def _ask(home: Path, op: str, **params: Any) -> Any:
    return asyncio.run(ask(home, op, **params))


def _until(what: str, done: Callable[[], object], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.2)


def lobby(lang: str, env: dict[str, str], workdir: Path) -> str:
    """A lone daemon, a table of five opened from the lobby and a bot added: seats filling."""
    daemon = _daemon(home := workdir / "lobby", "marie")
    pane = Pane(
        f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang {lang}", env, WIDTH, 12
    )
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
    command = (
        f"cd {ROOT} && scripts/play --players 5 --lang {lang} --name marie --think 0 "
        f"--home {workdir / 'game'}"
    )
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
        # q asks first, q again: scripts/play stops its daemons, the session ends with it
        pane.keys("q")
        pane.wait(lambda s: "Quit?" in s or "Quitter ?" in s, "q to ask first", timeout=10)
        pane.keys("q")
        pane.wait(lambda _: pane.ended(), "scripts/play to stop its daemons", timeout=30)
        pane.kill()


#: The prompt of a table whose deals are all played, in either language.
_OVER = "La partie est finie|The game is over|Manche jouée|Round played"
#: The event's ranking beside the table, in either language.
_RANKING = "Classement|Ranking"
#: The players of the evening, each a bot's daemon; the client looks over the third's shoulder.
PLAYERS = ("anne", "bruno", "carla", "denis", "emma", "fabien", "gaëlle", "hugo")


def _picture(screen: str, path: Path) -> None:
    """A terminal's screen (ANSI colours kept) as a picture, through ``aha`` (to HTML) and
    ``wkhtmltoimage``; nothing when either is missing."""
    if not (shutil.which("aha") and shutil.which("wkhtmltoimage")):
        return
    html = subprocess.run(
        ["aha", "--title", path.stem], input=screen, capture_output=True, text=True, check=True
    ).stdout
    html = html.replace(
        "<pre>",
        '<pre style="font-family: DejaVu Sans Mono, monospace; font-size: 13px; line-height: 1.25; '
        'background: #fdfdf8; padding: 10px; border: 1px solid #999; display: inline-block">',
    )
    page = path.with_suffix(".html")
    page.write_text(html, encoding="utf-8")
    subprocess.run(
        ["wkhtmltoimage", "--quiet", "--width", "1000", "--quality", "30", str(page), str(path)],
        check=True,
    )
    page.unlink()


def _hears(player: Path, event_id: str) -> bool:
    return any(event["event"] == event_id for event in _ask(player, "events"))


def _cards_on_table(organiser: Path, player: Path, event_id: str) -> bool:
    """The player's table of round 2 or later has cards on it (a round of deals all passed
    shows none: the next round's then)."""
    view = _ask(player, "state").get("view") or {}
    return (
        bool(view.get("current")) and (_ask(organiser, "event", event=event_id)["open"] or 0) >= 2
    )


def event(lang: str, env: dict[str, str], workdir: Path, out: Path) -> dict[str, str]:
    """An event of three rounds of two deals at tables of four, by the FFT's movement: the
    organiser's ``tarot event show`` and carla's client (the event beside the table) once
    round 1 is ranked, then the HTML page once it is over (``out``/event.html, and .png)."""
    organiser = workdir / "organiser"
    daemons = [_daemon(organiser, "club")]
    try:
        status = _ask(organiser, "status")
        peer = f"{status['key']}@{status['endpoint'].removeprefix('tcp://')}"
        homes = [workdir / name for name in PLAYERS]
        daemons += [
            _daemon(home, name, "--peer", peer, "--bot", "basic", "--think", "1")
            for home, name in zip(homes, PLAYERS)
        ]
        event_id = _ask(
            organiser,
            "event-open",
            name="Mardi au club",
            rounds=3,
            deals=2,
            tables=4,
            movement="fft",
        )["event"]
        for home in homes:
            _until("the event heard", functools.partial(_hears, home, event_id), 60)
            _ask(home, "event-join", event=event_id)
        _until(
            "every registration",
            lambda: len(_ask(organiser, "event", event=event_id)["players"]) == len(homes),
            60,
        )
        _ask(organiser, "event-start", event=event_id)
        _until("round 1 ranked", lambda: _ask(organiser, "event", event=event_id)["closed"] >= 1)
        tarot = f"cd {ROOT} && {sys.executable} -m client.cli --lang {lang}"
        shown = subprocess.run(
            [
                sys.executable,
                "-m",
                "client.cli",
                "--home",
                str(organiser),
                "--lang",
                lang,
                "event",
                "show",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
        out.mkdir(parents=True, exist_ok=True)
        _picture(shown, out / "organiser.png")
        pane = Pane(f"{tarot} --home {homes[2]}", env, 120, 36)
        try:
            _until(
                "cards on carla's table, round 2 or later",
                lambda: _cards_on_table(organiser, homes[2], event_id),
                900,
            )
            for _ in range(3):  # Tab: the log, the sheet, the event
                if re.search(_RANKING, pane.screen()):
                    break
                pane.press("Tab")
            client = pane.wait(
                lambda s: re.search(_RANKING, s) and not re.search(_OVER, s),
                "the event beside the table",
                timeout=30,
            )
            _picture(pane.coloured(), out / "player.png")
        finally:
            pane.kill()
        _until(
            "the event over", lambda: _ask(organiser, "event", event=event_id)["closed"] == 3, 600
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "client.cli",
                "--home",
                str(organiser),
                "--lang",
                lang,
                "event",
                "export",
                "--html",
                str(out / "event.html"),
            ],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        if shutil.which("wkhtmltoimage"):
            subprocess.run(
                [
                    "wkhtmltoimage",
                    "--quiet",
                    "--width",
                    "900",
                    "--quality",
                    "30",
                    str(out / "event.html"),
                    str(out / "event.png"),
                ],
                check=True,
            )
        return {"organiser": shown, "player": client}
    finally:
        for daemon in daemons:
            daemon.terminate()
        for daemon in daemons:
            daemon.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots", description=__doc__)
    parser.add_argument("--lang", choices=("fr", "en"), default="en")
    parser.add_argument(
        "--event",
        type=Path,
        metavar="DIR",
        help="an event's screens instead; its HTML page into DIR",
    )
    args = parser.parse_args(argv)
    env = {**os.environ, "LANG": "C.UTF-8"}
    with tempfile.TemporaryDirectory(prefix="tarot-screens-") as tmp:
        workdir = Path(tmp)
        env["XDG_STATE_HOME"] = str(workdir / "state")
        if args.event is not None:
            screens = event(args.lang, env, workdir, args.event)
        else:
            screens = {"lobby": lobby(args.lang, env, workdir), **game(args.lang, env, workdir)}
    for name, screen in screens.items():
        print(f"**{name}**\n\n```text\n{_trimmed(screen)}```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
