"""``kill -9`` a daemon in the middle of a deal; started again with the same home, it takes
the deal up where it was, and every score sheet ends identical."""

from __future__ import annotations

import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.daemons import (
    ROOT,
    daemon_argv,
    free_ports,
    home_key,
    log_path,
    scores,
    spawn,
    stage_of,
    wait_all,
)

pytestmark = pytest.mark.daemons

PLAYERS = 3
#: Three deals, so that one of them reaches the tricks: at three players everyone passed 5 of
#: 60 simulated deals, and a table of two passed deals has no tricks to be killed in.
DEALS = 3


def command(tmp_path: Path, ports: list[int], i: int) -> list[str]:
    peers = [
        arg
        for j, port in enumerate(ports)
        if j != i
        for arg in ("--peer", f"{home_key(tmp_path / f'd{j}')}@127.0.0.1:{port}")
    ]
    return [
        sys.executable,
        "-m",
        "tarotd.cli",
        "--home",
        str(tmp_path / f"d{i}"),
        "--name",
        f"joueur{i}",
        "--listen",
        f"127.0.0.1:{ports[i]}",
        *peers,
        "--no-discovery",
        "--bot",
        "basic",
        "--table",
        "club",
        "--seats",
        str(PLAYERS),
        "--deals",
        str(DEALS),
        "--timeout",
        "30",
        "--think",
        "0.1",
    ]


#: A kill at every step of the deal is the fault simulator's (tests/test_faultsim.py: the real
#: runner over its real store, on a fake clock); here a real process, its journal and its
#: reconnection, once in the default suite and at the earlier steps in the slow one.
@pytest.mark.parametrize(
    "moment, reached",
    [
        pytest.param(
            "the deck steps",
            lambda stage: stage in ("commit", "shuffle", "lock", "deal_keys", "hand_check"),
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "the bidding",
            lambda stage: stage in ("bidding", "call", "chien", "ecart", "chelem"),
            marks=pytest.mark.slow,
        ),
        (
            "the tricks",
            lambda stage: stage.startswith("play, trick") and int(stage.split()[-1]) >= 4,
        ),
    ],
)
def test_killed_and_restarted_daemon_finishes_the_deal(
    tmp_path: Path, moment: str, reached: Callable[[str], bool]
) -> None:
    ports = free_ports(PLAYERS)
    logs = [open(tmp_path / f"d{i}.log", "ab") for i in range(PLAYERS)]
    processes = [
        subprocess.Popen(
            command(tmp_path, ports, i), cwd=ROOT, stdout=logs[i], stderr=subprocess.STDOUT
        )
        for i in range(PLAYERS)
    ]
    victim = 1
    try:
        deadline = time.monotonic() + 60
        seen = ""
        while time.monotonic() < deadline:
            seen = stage_of(tmp_path / f"d{victim}")
            if reached(seen):
                break
            time.sleep(0.01)
        else:
            pytest.fail(f"never saw {moment} (last stage {seen!r})")
        processes[victim].send_signal(signal.SIGKILL)
        processes[victim].wait()
        processes[victim] = subprocess.Popen(
            command(tmp_path, ports, victim),
            cwd=ROOT,
            stdout=logs[victim],
            stderr=subprocess.STDOUT,
        )
        wait_all(processes, tmp_path, timeout=180)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    sheets = [scores(tmp_path / f"d{i}") for i in range(PLAYERS)]
    assert all(sheet == sheets[0] for sheet in sheets), f"killed during {moment} ({seen})"
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == DEALS
    assert all(deal["audit"] == "ok" for deal in deals)
    assert "taking table" in (tmp_path / f"d{victim}.log").read_text()


def test_a_daemon_started_again_after_its_deals_are_played_exits_at_once(tmp_path: Path) -> None:
    """``--deals N`` played and saved, then the same command again (a crash just before it
    exited, a script run twice): it says so and exits 0 — no new table, no waiting."""
    argv = daemon_argv(tmp_path / "d0", "seul", 0, [], deals=1, extra=["--bots", "2"])
    first = spawn(argv, log_path(tmp_path, 0))
    wait_all([first], tmp_path, timeout=60)
    sheet = scores(tmp_path / "d0")
    assert stat.S_IMODE((tmp_path / "d0" / "scores.json").stat().st_mode) == 0o600  # like the keys
    again = spawn(argv, log_path(tmp_path, 0))
    wait_all([again], tmp_path, timeout=20)
    assert scores(tmp_path / "d0") == sheet
    assert "its 1 deals are played already" in log_path(tmp_path, 0).read_text()
