"""Issue 37's "Done when": an event of eight, the organiser playing, runs two rounds over LAN
discovery in network namespaces, and every player's client shows each round's last deal and
tonight's ranking (slow, root).

Three namespaces, one daemon each, found by discovery alone (no ``--peer``): ``orga`` (the
organiser, playing, hosting three event bots), ``anne`` (playing, hosting two) and ``bruno``.
Their players' clients are real ``tarot`` programs in tmux (120×40, the organiser's and
bruno's in English, anne's in French), reaching their daemons through the Unix socket in
each home: everything the event needs is done from their keys — Enter registers (the
organiser's own player too), ``b`` and a count registers event bots, ``e`` starts the event.
Each seat is played by its daemon's ``basic`` bot, the client following it (as a player who
lets the daemon play would).  Each client must hold round 1's last deal — its explanation and
the score sheet — on screen once its daemon has seated round 2, until Enter; and at the end
show tonight's event, over, with its final ranking, the player's own line in it.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import ROOT
from lan import NEEDS_ROOT, Fleet, fleet, lan_of

from client.api import ask
from client.tui.i18n import Texts
from lab.tmux import Pane
from protocol.event.event import read_event, verify_event

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.slow,
    NEEDS_ROOT,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

LANGS = {"orga": "en", "anne": "fr", "bruno": "en"}


def joined(screen: str) -> str:
    return " ".join(screen.split())


def client(home: Path, lang: str) -> Pane:
    command = (
        f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang {lang} "
        f"2> {home.parent}/{home.name}-client.err"
    )
    return Pane(command, {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, 120, 40)


def ask_(home: Path, op: str, **params: Any) -> Any:
    return asyncio.run(ask(home, op, **params))


def wait(group: Fleet, what: str, done: Any, pause: float = 0.5) -> None:
    while not done():
        if group.remaining() <= 0:
            group.fail(f"waited for {what}")
        time.sleep(pause)


def said(pane: Pane, group: Fleet, text: str, what: str) -> str:
    """The pane's screen once it shows ``text`` (its words, wherever the lines break)."""
    return pane.wait(lambda s: joined(text) in joined(s), what, timeout=max(1, group.remaining()))


def seated_again(event: dict[str, Any]) -> bool:
    """Round 2 seated (being played, or played already)."""
    return bool(event["open"] == 2 or event["closed"] == 2)


def test_every_players_client_shows_each_rounds_last_deal_and_tonights_ranking(
    tmp_path: Path,
) -> None:
    with lan_of(3) as lan, fleet(lan, tmp_path, 480) as group:
        daemons = [group.start(host, name) for host, name in enumerate(LANGS)]
        for daemon in daemons:
            wait(group, f"{daemon.home.name}'s daemon", lambda d=daemon: group.status(d), 0.2)
        orga, anne, bruno = (d.home for d in daemons)
        homes = {"orga": orga, "anne": anne, "bruno": bruno}
        texts = {name: Texts(lang) for name, lang in LANGS.items()}
        panes = {name: client(homes[name], LANGS[name]) for name in LANGS}
        try:
            for name, pane in panes.items():
                said(pane, group, texts[name]("lobby"), f"{name}'s lobby")
            event = str(
                ask_(orga, "event-open", name="Vendredi", rounds=2, deals=1, movement="random")[
                    "event"
                ]
            )
            # The organiser, from its client: Enter plays in its own event, b 3 Enter hosts
            # three bots in it.
            said(panes["orga"], group, "“Vendredi”", "the event in the organiser's lobby")
            panes["orga"].keys("Enter")
            said(panes["orga"], group, texts["orga"]("event_joined_own"), "registered")
            panes["orga"].keys("b")
            said(panes["orga"], group, "how many?", "the bots' question")
            panes["orga"].keys("3", "Enter")
            said(panes["orga"], group, "orga-bot3", "three bots registered")
            for name, bots in (("anne", 2), ("bruno", 0)):
                pane = panes[name]
                said(pane, group, "Vendredi", f"the event heard by {name}'s daemon")
                pane.keys("Enter")
                said(pane, group, texts[name]("event_joined"), f"{name} registered")
                if bots:
                    pane.keys("b")
                    said(pane, group, "combien ?", "the bots' question")
                    pane.keys(str(bots), "Enter")
                    said(pane, group, f"{name}-bot{bots}", f"{name}'s bots registered")
            wait(
                group,
                "eight registered",
                lambda: len(ask_(orga, "event", event=event)["players"]) == 8,
            )
            panes["orga"].keys("e")
            said(panes["orga"], group, texts["orga"]("event_started"), "the event started")
            held = {}
            for name, pane in panes.items():
                tongue = texts[name]
                hint = " ".join(tongue("round_over_next").split()[:6])
                screen = said(pane, group, hint, f"round 1 over on {name}'s client")
                wait(
                    group,
                    f"round 2 seated for {name}",
                    lambda home=homes[name]: seated_again(ask_(home, "event", event=event)),
                )
                time.sleep(1)  # the daemon at its round-2 table: the screen still holds
                screen = pane.screen()
                held[name] = screen
                assert hint in joined(screen), screen
                assert tongue("sheet") in screen, screen
                assert re.search(r"(Deal|Donne) 1\b", screen), screen
                pane.keys("Enter")
            players = [
                orga,
                anne,
                bruno,
                *(orga / "event-bots" / str(k) for k in (1, 2, 3)),
                *(anne / "event-bots" / str(k) for k in (1, 2)),
            ]
            wait(
                group,
                "the event over on every player's daemon",
                lambda: all(ask_(h, "event", event=event)["closed"] == 2 for h in players),
                2,
            )
            records = {ask_(h, "event-record", event=event)["record"] for h in players}
            # Every seat here is a bot (event bots, and each daemon's own --bot): bruno's daemon,
            # which hosts none but its own, tags them all, from the manifest they signed.
            assert set(ask_(bruno, "state")["bots"]) == {"basic"}
            assert len(records) == 1
            report = verify_event(read_event(bytes.fromhex(records.pop())))
            assert report.ok and len(report.names) == 8 and report.closed == 2
            ranking = ask_(orga, "event", event=event)["ranking"]
            for name, pane in panes.items():
                tongue = texts[name]
                final = tongue("event_ranking_final")
                for _ in range(4):  # Tab through the panels to the event's
                    if final in pane.screen():
                        break
                    pane.keys("Tab")
                    time.sleep(0.5)
                screen = said(pane, group, final, f"tonight's final ranking on {name}'s client")
                assert tongue("event_over") in joined(screen), screen
                # round 2's last deal, explained, and its sheet, beside tonight's ranking (not
                # round 1's, held: Enter let it go)
                assert " ".join(tongue("round_over_next").split()[:6]) not in joined(screen)
                assert tongue("sheet") in screen and re.search(r"(Deal|Donne) 1\b", screen), screen
                ours = next(line for line in ranking if line["name"] == name)
                line = rf"→ {ours['place']}\. {name} {re.escape(format(ours['total'], '+d'))}\b"
                assert re.search(line, joined(screen)), screen
        finally:
            for pane in panes.values():
                pane.kill()
