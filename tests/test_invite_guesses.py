"""Guessing a table's invite code online, between real ``tarotd`` daemons on 127.0.0.1 (issue
36, item 2): the opener starts ``--table club --seats 3 --invite CODE``; a stranger with a
throw-away key (:mod:`intruder`) runs 3,000 CPace exchanges with it, each for a wrong code, as
fast as the opener answers.  It used to be refused with one log line, and no counter, no
lockout; now the opener lets the first wrong proof through, tells it to wait (0.5 s, doubling),
locks the key out once it keeps knocking, says so in its log and its ``status``, and the two
players with the right code, from other keys, still sit down with it and play — one of them
after the opener lifted the lockout (the local API's ``unlock``, ``tarot unlock``).
Everything the opener sent the stranger is recorded: nothing in it tests a guess offline (no
proof in the offers, no tag of the opener's).

The players list the opener and each other with ``--peer``, the opener lists nobody: it seats
them on their proof of the code alone (and they, whose offers may win the smallest id, seat it
on its proof).  The stranger here is on this machine, whose address no host of the LAN has:
the opener counts its guesses per key alone (a host's tally is tests/test_lobby.py's).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import (
    assert_no_traceback,
    daemon_argv,
    free_ports,
    home_key,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
)
from intruder import Intruder

from client.api import DaemonRefused, DaemonUnavailable, ask
from protocol import pake
from tarotd.lobby import invite_code

pytestmark = pytest.mark.daemons

CODE = "H4NP-3WRC"
WRONG = b"H4NP3WRD"  #: one symbol off
GUESSES = int(os.environ.get("H5_GUESSES", "3000"))


def old_style_proof(code: str, table: bytes, opener: bytes) -> bytes:
    """The invite proof offers carried before: HMAC(scrypt(code, constant salt), "offer" ‖
    table ‖ opener) — an offline verifier of the code."""
    key = hashlib.scrypt(code.encode(), salt=b"tarot/lobby-invite\x00", n=2**14, r=8, p=1, dklen=32)
    return hmac.digest(key, b"offer" + table + opener, "sha256")


async def answer(home: Path, op: str) -> Any:
    try:
        return await ask(home, op, timeout=5)
    except (DaemonUnavailable, DaemonRefused, OSError):
        return None


async def tarot(home: Path, command: str) -> str:
    """What ``tarot --home HOME COMMAND`` prints."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client.cli",
        "--home",
        str(home),
        command,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    return out.decode()


async def reply(intruder: Intruder, sid: bytes, seen: int, timeout: float = 10) -> dict[str, Any]:
    """The opener's next frame of the run ``sid``, after the first ``seen`` frames received."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, frame in intruder.received[seen:]:
            if frame.get("sid") == sid:
                return frame
        await asyncio.sleep(0.001)
    raise AssertionError("the opener did not answer a knock within 10 s")


async def guess(intruder: Intruder, opener: bytes, table: bytes, code: bytes) -> str:
    """One whole exchange for ``code``: what the opener made of it (``proven``, ``code``,
    ``wait`` or ``locked``)."""
    run = pake.Joining.start(code, pake.channel(table, intruder.key, opener), os.urandom)
    seen = len(intruder.received)
    intruder.send(opener, {"t": "knock", "table": table, "sid": run.sid, "share": run.share})
    frame = await reply(intruder, run.sid, seen)
    if frame["t"] == "answer":
        seen = len(intruder.received)
        tag = run.answer(frame["share"])
        intruder.send(opener, {"t": "prove", "table": table, "sid": run.sid, "tag": tag})
        frame = await reply(intruder, run.sid, seen)
    return "proven" if frame["t"] == "proven" else str(frame["why"])


def test_3000_wrong_guesses_are_throttled_counted_and_locked_out(tmp_path: Path) -> None:
    ports = free_ports(4)
    homes = [tmp_path / f"d{i}" for i in range(3)]
    opener_key = bytes.fromhex(home_key(homes[0]))
    processes = [
        spawn(
            daemon_argv(
                homes[0], "joueur0", ports[0], [], deals=1, timeout=10, extra=["--invite", CODE]
            ),
            log_path(tmp_path, 0),
        )
    ]

    def player(i: int) -> None:
        argv = daemon_argv(
            homes[i],
            f"joueur{i}",
            ports[i],
            [(homes[0], ports[0]), (homes[3 - i], ports[3 - i])],  # the other player too
            deals=1,
            timeout=10,
            extra=["--invite", CODE],
        )
        processes.append(spawn(argv, log_path(tmp_path, i)))

    measured: dict[str, Any] = {}

    async def attack() -> None:
        deadline = time.monotonic() + 60
        while await answer(homes[0], "status") is None:  # listening: the link will be answered
            assert time.monotonic() < deadline, "the opener did not come up in 60 s"
            await asyncio.sleep(0.2)
        intruder = Intruder(ports[3])
        measured["stranger"] = intruder.key.hex()
        await intruder.start([(f"tcp://127.0.0.1:{ports[0]}", opener_key.hex())])
        try:
            deadline = time.monotonic() + 30
            while not any(f.get("name") == "club" for f in intruder.heard_offers()):
                assert time.monotonic() < deadline, "no offer from the opener in 30 s"
                await asyncio.sleep(0.1)
            (table,) = {f["table"] for f in intruder.heard_offers() if f.get("name") == "club"}
            began = time.monotonic()
            outcomes = [await guess(intruder, opener_key, table, WRONG) for _ in range(GUESSES)]
            measured["seconds"] = time.monotonic() - began
            measured["outcomes"] = {o: outcomes.count(o) for o in set(outcomes)}
            measured["status"] = await answer(homes[0], "status")
            measured["recorded"] = [frame for _, frame in intruder.received]
            measured["tarot status"] = await tarot(homes[0], "status")
            player(1)  # the right code, from another key, while the stranger is locked out
            deadline = time.monotonic() + 60
            while True:
                tables = await answer(homes[0], "tables") or []
                if any(len(t["members"]) == 2 for t in tables):
                    break
                assert time.monotonic() < deadline, "the first player was not seated in 60 s"
                await asyncio.sleep(0.2)
            measured["unlock"] = await ask(homes[0], "unlock", timeout=5)
            measured["tarot unlock"] = await tarot(homes[0], "unlock")
            measured["after"] = await answer(homes[0], "status")
            player(2)
        finally:
            await intruder.close()

    try:
        asyncio.run(asyncio.wait_for(attack(), 300))
        for process in processes:
            process.wait(timeout=180)
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, len(processes)))
        raise
    outcomes, status = measured["outcomes"], measured["status"]
    # Everything the opener sent the stranger: offers, answers, refusals — nothing to test a
    # guess against offline: no proof in its offers (before, the right code's HMAC was there),
    # and no tag of the opener's, which it sends only to a daemon that proved the code.
    recorded = measured["recorded"]
    assert {frame["t"] for frame in recorded} <= {"offer", "answer", "refused"}
    values = {v for frame in recorded for v in frame.values() if isinstance(v, bytes)}
    offer = next(frame for frame in recorded if frame["t"] == "offer")
    for candidate in (CODE, WRONG.decode(), "7KQ2-M9XD"):
        assert old_style_proof(invite_code(candidate), offer["table"], opener_key) not in values
    print(f"{GUESSES} knocks in {measured['seconds']:.1f} s: {outcomes}")
    assert outcomes.get("proven", 0) == 0
    assert 1 <= outcomes.get("code", 0) <= 3  # the first, and those after each wait
    assert outcomes.get("locked", 0) >= GUESSES - 100  # locked out after 50 knocks told to wait
    guesses = status["guesses"]
    assert guesses["wrong"] == outcomes["code"] and guesses["lockouts"] == 1
    assert guesses["refused"] == GUESSES - outcomes["code"]
    (locked,) = guesses["locked"]
    assert locked["kind"] == "key" and locked["who"] == measured["stranger"]
    assert f"invite code: {outcomes['code']} wrong guesses" in measured["tarot status"]
    assert "locked out: key" in measured["tarot status"]
    assert measured["unlock"] == {"unlocked": 1}
    assert measured["tarot unlock"].strip() == "nobody was locked out"  # lifted already
    assert measured["after"]["guesses"]["locked"] == []
    assert [p.returncode for p in processes] == [0, 0, 0], logs(tmp_path, 3)
    sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets)
    seats = sheets[0]["seats"]
    assert isinstance(seats, list) and sorted(seats) == ["joueur0", "joueur1", "joueur2"]
    told = logs(tmp_path, 3, tail=10**6)
    assert "locked out after 50 knocks while told to wait" in told
    assert "lockouts of invite-code guessers lifted" in told
    assert_no_traceback(tmp_path, 3)
