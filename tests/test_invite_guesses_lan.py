"""Guessing a table's invite code from a host of the LAN (issue 36, item 2), between real
``tarotd`` daemons each in a network namespace of its own (:mod:`lan`), finding each other by
discovery alone: the opener starts ``--table club --seats 4 --invite CODE``; a stranger on
another host (:mod:`guesser`, a process of its own) runs exchanges with three fresh keys one
after the other, each as fast as the opener answers, every one for a wrong code.  The first
key is told to wait, keeps knocking, and is locked out — and so is its **host**: the next fresh
keys from it are refused at once, and so is a real player's daemon on that host, though its
code is right.  Two players on other hosts join with the code; the opener lifts the lockout
(``unlock``), and the player on the guesser's host then sits down too: the four play a deal.

Root only (namespaces), skipped otherwise.  Namespaces ``h5-…``, on 198.18.50.0/24.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lan import NEEDS_ROOT, PEER_PORT, ROOT, Daemon, Fleet, check_table, fleet, lan_of

from client.api import DaemonRefused, DaemonUnavailable, ask
from lab.lansim import Lan
from tarotd.home import Home, load_or_create_identity

pytestmark = [pytest.mark.daemons, NEEDS_ROOT]

SUBNET = "198.18.50."  #: this module's LAN, apart from the other tests'
OPENER, GUESSER, PLAYERS = 0, 1, (2, 3)
CODE = "H4NP-3WRC"
GUESSER_PORT = 47500


def api(daemon: Daemon, op: str, **params: Any) -> Any:
    """The daemon's answer; DaemonRefused's text if it refuses; None while it does not answer."""
    try:
        return asyncio.run(asyncio.wait_for(ask(daemon.home, op, timeout=5, **params), 10))
    except DaemonRefused as error:
        return str(error)
    except (DaemonUnavailable, OSError, TimeoutError):
        return None


def until(group: Fleet, what: str, look: Any) -> Any:
    while group.remaining() > 0:
        value = look()
        if value:
            return value
        time.sleep(0.2)
    group.fail(f"waited in vain for {what}")


def test_a_guessing_host_is_locked_out_and_the_players_still_sit_down(tmp_path: Path) -> None:
    with lan_of(4, "h5", SUBNET) as lan, fleet(lan, tmp_path, budget=240) as group:
        run(lan, group)


def run(lan: Lan, group: Fleet) -> None:
    common = ("--deals", "1", "--timeout", "30")
    opener = group.start(
        OPENER, "ana", "--table", "club", "--seats", "4", "--invite", CODE, *common
    )
    until(group, "the opener's table", lambda: api(opener, "tables"))
    key = load_or_create_identity(Home(opener.home)).public_key.hex()
    results = []
    for k in range(3):  # three fresh keys from the guesser's host, one after the other
        guesser = lan.run(
            GUESSER,
            [sys.executable, "tests/guesser.py", "--listen", lan.ip(GUESSER)]
            + ["--port", str(GUESSER_PORT + k), "--opener", f"tcp://{lan.ip(OPENER)}:{PEER_PORT}"]
            + ["--key", key, "--guesses", "100", "--code", "H4NP3WRD"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = guesser.communicate(timeout=120)
        assert guesser.returncode == 0, err
        results.append(json.loads(out))
    print("guesser:", results)
    first, *fresh = [result["keys"][0] for result in results]
    assert first.get("code", 0) <= 3 and first.get("locked", 0) >= 40 and "proven" not in first
    assert all(keys == {"locked": 100} for keys in fresh)  # its host is locked out
    locked = api(opener, "status")["guesses"]["locked"]
    assert {(entry["kind"], entry.get("who")) for entry in locked} >= {("host", lan.ip(GUESSER))}
    # A player on the guesser's host, with the right code: refused, its host locked out.
    neighbour = group.start(GUESSER, "bob", *common)
    tables = until(group, "bob hearing the table", lambda: api(neighbour, "tables"))
    refusal = api(neighbour, "join", table=tables[0]["table"], invite=CODE)
    assert "locked this daemon out" in refusal, refusal
    players = [
        group.start(host, name, "--table", "club", "--seats", "4", "--invite", CODE, *common)
        for host, name in zip(PLAYERS, ("cid", "dan"))
    ]
    until(
        group,
        "cid and dan at the opener's table",
        lambda: any(len(t["members"]) == 3 for t in api(opener, "tables") or []),
    )
    assert api(opener, "unlock") == {"unlocked": 2}  # the first key, and its host
    (table, *_) = until(
        group,
        "bob hearing the table of three",
        lambda: [t for t in api(neighbour, "tables") or [] if len(t["members"]) == 3],
    )
    assert api(neighbour, "join", table=table["table"], invite=CODE) == {"joined": True}
    daemons = [opener, neighbour, *players]
    group.wait(daemons)
    sheet = check_table(group, daemons, deals=1)
    assert sheet["table"] == "club"
