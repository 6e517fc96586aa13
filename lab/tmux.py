"""The client in a real terminal: a detached tmux session read with ``capture-pane`` and
driven with ``send-keys`` — for the terminal test and for ``scripts/screenshots``.

tmux runs on a server socket of its own (``-L``), so no other tmux session is touched, and
everything waits for what the screen shows rather than for a fixed time.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping

_ECART = re.compile(r"(?:Your écart|Votre écart) ?: (\d+)/(\d+)")


class Pane:
    """One detached tmux session running ``command`` in a ``width`` × ``height`` terminal."""

    def __init__(
        self, command: str, env: Mapping[str, str], width: int = 120, height: int = 36
    ) -> None:
        self.socket = f"tarot-{uuid.uuid4().hex[:8]}"
        self.env = dict(env)
        self.env.pop("TMUX", None)  # started from inside tmux: still a server of our own
        self.tmux("new-session", "-d", "-s", "tarot", "-x", str(width), "-y", str(height), command)

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=10,
        ).stdout

    def screen(self) -> str:
        """The pane's text, each line without its trailing blanks."""
        return "\n".join(
            line.rstrip() for line in self.tmux("capture-pane", "-p", "-t", "tarot").splitlines()
        )

    def coloured(self) -> str:
        """The pane's text with its colours, as ANSI escapes (``capture-pane -e``)."""
        return self.tmux("capture-pane", "-p", "-e", "-t", "tarot")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "tarot", *keys)

    def wait(self, predicate: Callable[[str], object], what: str, timeout: float = 60) -> str:
        """The screen, once ``predicate`` holds for it; AssertionError with the screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; the screen:\n{screen}")
            time.sleep(0.1)

    def press(self, *keys: str) -> str:
        """Send keys and wait for the screen to change in answer."""
        before = self.screen()
        self.keys(*keys)
        return self.wait(lambda now: now != before, "the screen to answer the keys", timeout=10)

    def ended(self) -> bool:
        """The command has exited (and the session with it)."""
        done = subprocess.run(
            ["tmux", "-L", self.socket, "has-session", "-t", "tarot"],
            capture_output=True,
            env=self.env,
            timeout=10,
        )
        return done.returncode != 0

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            capture_output=True,
            env=self.env,
            timeout=10,
        )


def answer(screen: str) -> list[str] | None:
    """The keys a simple player presses for what the screen asks (either language): a garde
    when it is offered, Space along the hand until the écart is complete then Enter, and
    Enter for the highlighted card, the call, or no chelem; None when nothing is asked."""
    ecart = _ECART.search(screen)
    if ecart:
        return ["Enter"] if ecart.group(1) == ecart.group(2) else ["Space"]
    if "Your bid:" in screen or "À vous d'annoncer" in screen:
        return ["g", "Enter"]
    asked = (
        "Your turn:",
        "À vous de jouer",
        "chelem?",
        "chelem ?",
        "Call a card:",
        "Appelez une carte",
    )
    if any(text in screen for text in asked):
        return ["Enter"]
    return None


def scored(screen: str) -> bool:
    return "Deal scored" in screen or "Donne marquée" in screen
