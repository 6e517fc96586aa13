"""Club night in a real terminal (issue 37, findings 1, 3, 5): ``tarot`` in tmux against a
scripted daemon, captured at 80×24, 120×40 and 200×50 as players see it — an event's round
over, its last deal still on screen when the daemon has seated the next round, until Enter;
the score sheet beside the table at 3, 4 and 5 players with long names, every score whole;
the seats of bots the daemon hosts tagged, the top ones apart at 100 to 104 columns (finding
5); a client started after the round ended holding its last deal all the same, and the bots
of another daemon tagged.  One tmux session a test."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from daemons import ROOT
from test_tui_round_change import finished, next_round
from test_tui_seats import seated
from test_tui_terminal import Scripted, playing, readable, resized
from test_tui_widths import LONG, sheet_state

from client.tui.contrast import plain
from client.tui.i18n import Texts
from lab.tmux import Pane

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]

SIZES = ((80, 24), (120, 40), (200, 50))


def client(home: Path, lang: str) -> Pane:
    command = (
        f"cd {ROOT} && {sys.executable} -m client.cli --home {home} --lang {lang} "
        f"2> {home}/client.err"
    )
    return Pane(command, {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, 80, 24)


def joined(screen: str) -> str:
    return " ".join(screen.split())


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_round_over_stays_until_enter_at_every_size(tmp_path: Path, lang: str) -> None:
    texts = Texts(lang)
    daemon = Scripted(tmp_path, finished())
    pane = client(tmp_path, lang)
    try:
        pane.wait(lambda s: texts("sheet") in s, "the finished table's sheet", timeout=20)
        daemon.state = next_round()  # the daemon has seated round 2
        hint = " ".join(texts("round_over_next").split()[:6])
        pane.wait(lambda s: hint in joined(s), "the round over, held", timeout=20)
        for width, height in SIZES:
            captured = resized(pane, width, height, texts("sheet"))
            readable(captured)
            screen = joined(plain(captured))
            assert hint in screen, screen
            assert texts("prompt_bid") not in screen
        pane.keys("Enter")
        pane.wait(lambda s: texts("hand") in s, "the new table after Enter")
    finally:
        pane.kill()
        daemon.stop()


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_sheet_beside_the_table_keeps_every_score_whole(tmp_path: Path, players: int) -> None:
    state = sheet_state(players)
    state["between_deals"] = False
    state["view"] = next_round()["view"] | {"players": players}
    state["view"]["dealer"] = 0
    state["dealer"] = 0
    daemon = Scripted(tmp_path, state)
    pane = client(tmp_path, "en")
    try:
        pane.wait(lambda s: "Your hand" in s, "the table", timeout=20)
        resized(pane, 120, 40, "│")
        pane.keys("Tab")  # the sheet beside the table, in the log's place
        for width, height in SIZES[1:]:
            screen = plain(resized(pane, width, height, "Score sheet"))
            panel = "\n".join(line.split("│", 1)[1] for line in screen.splitlines() if "│" in line)
            totals = {f"{t:+d}" for t in state["scores"]}
            assert totals <= set(re.findall(r"[+-]\d+", panel)), (width, panel)
            assert LONG[0][:4] in panel
        screen = plain(resized(pane, 80, 24, "Your hand"))  # folded: Tab again shows the sheet
        assert "│" not in screen
    finally:
        pane.kill()
        daemon.stop()


class HostingBots(Scripted):
    """The scripted daemon, its ``status`` saying the bot seats it hosts (``--bots N``)."""

    bots: dict[str, str] = {}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            op, reply = request["op"], {"id": request["id"], "ok": True}
            if op == "status":
                reply["result"] = {
                    "name": self.state["seats"][self.state["seat"]],
                    "fingerprint": "0abc-0000",
                    "peers": [],
                    "tables": [],
                    "bots": self.bots,
                }
            elif op in ("state", "tables"):
                reply["result"] = self.state if op == "state" else []
            else:
                reply = {"id": request["id"], "ok": False, "error": f"scripted: {op} refused"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()


@pytest.mark.parametrize("players", [3, 5])
def test_the_top_seats_labels_apart_and_the_bots_tagged(tmp_path: Path, players: int) -> None:
    """A daemon started with ``--bots`` hosts its table's other seats: each is tagged with its
    level, and at 100 to 104 columns the two top seats' labels stay apart."""
    state = seated(players)
    HostingBots.bots = {name: "strong" for name in state["seats"][1:]}
    daemon = HostingBots(tmp_path, state)
    pane = client(tmp_path, "en")
    try:
        pane.wait(lambda s: "Your hand" in s, "the table", timeout=20)
        for width, height in ((100, 30), (102, 30), (104, 30), *SIZES):
            screen = plain(resized(pane, width, height, "(bot strong)"))
            table = [line.split("│", 1)[0] for line in screen.splitlines()]
            assert sum(line.count("(bot strong)") for line in table) == players - 1, screen
            for line in table:
                for label in re.split(r"\s{2,}", line.strip()):
                    if "(bot strong)" in label:
                        assert label.endswith("(bot strong)") and label.count("(bot") == 1, line
    finally:
        pane.kill()
        daemon.stop()


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_a_client_started_after_the_round_ended_holds_its_last_deal(
    tmp_path: Path, lang: str
) -> None:
    """The client opened once the daemon is at round 2 (``state`` with round 1's finished
    table as ``earlier``): round 1's last deal is on screen at every size until Enter."""
    texts = Texts(lang)
    daemon = Scripted(tmp_path, {**next_round(), "earlier": finished()})
    pane = client(tmp_path, lang)
    try:
        hint = " ".join(texts("round_over_next").split()[:6])
        pane.wait(lambda s: hint in joined(s), "round 1's last deal, held", timeout=20)
        for width, height in SIZES:
            screen = joined(plain(resized(pane, width, height, texts("sheet"))))
            assert hint in screen and texts("prompt_bid") not in screen, screen
        pane.keys("Enter")
        pane.wait(lambda s: texts("hand") in s, "the new table after Enter")
    finally:
        pane.kill()
        daemon.stop()


@pytest.mark.parametrize("players", [3, 5])
def test_the_bots_of_another_daemon_are_tagged(tmp_path: Path, players: int) -> None:
    """This daemon hosts no bot (its ``status`` lists none): the seats its ``state`` says a
    bot plays — from the signed manifest — are tagged all the same, at every size."""
    state = seated(players)
    state["bots"] = ["", *["basic"] * (players - 1)]
    HostingBots.bots = {}
    daemon = HostingBots(tmp_path, state)
    pane = client(tmp_path, "en")
    try:
        pane.wait(lambda s: "Your hand" in s, "the table", timeout=20)
        for width, height in SIZES:
            screen = plain(resized(pane, width, height, "(bot basic)"))
            table = [line.split("│", 1)[0] for line in screen.splitlines()]
            assert sum(line.count("(bot basic)") for line in table) == players - 1, screen
    finally:
        pane.kill()
        daemon.stop()


def test_the_terminal_rings_when_a_decision_waits_and_a_silences_it(tmp_path: Path) -> None:
    """What reaches the terminal, read by tmux's pipe-pane: one bell when the card is ours to
    play, none once ``a`` has silenced the alert (build item 5)."""
    waiting = {**playing(), "decision": None, "options": None, "waiting_for": [2]}
    daemon = Scripted(tmp_path, waiting)
    pane = client(tmp_path, "en")
    heard = tmp_path / "h7-output"
    try:
        pane.wait(lambda s: "Your hand" in s, "the table", timeout=20)
        pane.tmux("pipe-pane", "-o", "-t", "tarot", f"cat >> {heard}")
        daemon.state = playing()  # our card to play
        pane.wait(lambda s: "Your turn" in s, "our turn")
        pane.wait(lambda s: heard.exists() and b"\a" in heard.read_bytes(), "the bell")
        rung = heard.read_bytes().count(b"\a")
        pane.keys("a")
        pane.wait(lambda s: "Turn alert off" in s, "the alert silenced")
        daemon.state = waiting
        pane.wait(lambda s: "Your turn" not in s, "another's turn")
        daemon.state = {**playing(), "deal": 2}  # ours again, another decision
        pane.wait(lambda s: "Your turn" in s, "our turn again")
        assert heard.read_bytes().count(b"\a") == rung == 1
    finally:
        pane.kill()
        daemon.stop()
