"""Identity pinning: a table's members are their keys, not their names or addresses.

Mid-deal, one member's daemon is replaced by an impostor — same name, same address and port,
a key of its own.  The others show it under its own fingerprint, accept nothing from it for
the seat, and wait for the real member; when the real daemon comes back, the deal finishes.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from daemons import (
    assert_no_traceback,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    start_daemons,
    wait_all,
    wait_for_path,
)

from client.api import ask

pytestmark = pytest.mark.daemons


def state_of(home: Path) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.run(ask(home, "state"))
    return result


def status_of(home: Path) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.run(ask(home, "status"))
    return result


def until(condition: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def test_an_impostor_with_a_members_name_and_address_cannot_act_for_its_seat(
    tmp_path: Path,
) -> None:
    # Five deals: a deal everyone passes has no tricks (one in ten between three basic bots,
    # `tarot sim`), and a table whose deals were all passed is over (its daemons gone) before
    # the tricks this test waits for: with three, a fresh-clone run once found them gone.
    deals = 5
    processes, homes = start_daemons(tmp_path, 3, deals, "--think", "0.05", timeout=60)
    impostor = None
    try:
        wait_for_path(homes[0] / "api.sock", processes[0])
        until(
            lambda: (
                (view := state_of(homes[0]).get("view")) is not None and view["phase"] == "playing"
            ),
            "the tricks",
        )
        before = state_of(homes[0])
        seat = before["seats"].index("joueur2")
        real = before["fingerprints"][seat]
        argv = processes[2].args
        assert isinstance(argv, list), "start_daemons spawns each daemon from an argv list"
        real_argv = [str(arg) for arg in argv]
        processes[2].send_signal(signal.SIGKILL)
        processes[2].wait()
        # Same name, same address and port, same peers and table — another home, another key.
        impostor_argv = [*real_argv]
        impostor_argv[impostor_argv.index("--home") + 1] = str(tmp_path / "impostor")
        impostor = spawn(impostor_argv, tmp_path / "impostor.log")
        wait_for_path(tmp_path / "impostor" / "api.sock", impostor)
        fake = status_of(tmp_path / "impostor")["fingerprint"]
        assert fake != real

        def impostor_seen() -> bool:
            peers = status_of(homes[0])["peers"]
            return any(p["name"] == "joueur2" and p["fingerprint"] == fake for p in peers)

        until(impostor_seen, "the impostor shown under its own fingerprint")
        time.sleep(3)  # whatever it sends meanwhile must move nothing
        during = state_of(homes[0])
        assert during["fingerprints"][seat] == real and during["seats"] == before["seats"]
        assert (
            during["results"] == before["results"]
            and seat in [a["seat"] for a in during["away"]] + during["waiting_for"]
        )
        impostor.send_signal(signal.SIGKILL)
        impostor.wait()
        processes[2] = spawn(real_argv, log_path(tmp_path, 2))  # the real member comes back
        wait_all(processes, tmp_path, timeout=90)
    except BaseException:
        kill_all([*processes, *([impostor] if impostor else [])])
        print(logs(tmp_path, 3))
        raise
    sheets = [scores(home) for home in homes]
    assert sheets[0] == sheets[1] == sheets[2]
    rows = sheets[0]["deals"]
    assert isinstance(rows, list) and [deal["audit"] for deal in rows] == ["ok"] * deals
    assert_no_traceback(tmp_path, 3)
