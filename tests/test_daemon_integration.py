"""Real ``tarotd`` processes on 127.0.0.1 with static peers, bots at every seat, whole deals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_daemons(tmp_path: Path, players: int, deals: int, *extra: str) -> tuple[list[subprocess.Popen[bytes]], list[Path]]:
    ports = free_ports(players)
    homes = [tmp_path / f"d{i}" for i in range(players)]
    processes = []
    for i, home in enumerate(homes):
        peers = [arg for j, port in enumerate(ports) if j != i for arg in ("--peer", f"127.0.0.1:{port}")]
        argv = [
            sys.executable, "-m", "tarotd.cli", "--home", str(home), "--name", f"joueur{i}",
            "--listen", f"127.0.0.1:{ports[i]}", *peers, "--no-discovery", "--bot", "basic",
            "--table", "club", "--seats", str(players), "--deals", str(deals), "--timeout", "20", *extra,
        ]
        log = open(tmp_path / f"d{i}.log", "wb")
        processes.append(subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))
    return processes, homes


def wait_all(processes: list[subprocess.Popen[bytes]], tmp_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    try:
        for process in processes:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        logs = "\n".join((tmp_path / f"d{i}.log").read_text()[-3000:] for i in range(len(processes)))
        pytest.fail(f"the daemons did not finish in {timeout} s:\n{logs}")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert [p.returncode for p in processes] == [0] * len(processes)


def scores(home: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "client.cli", "--home", str(home), "scores", "--json"],
        cwd=ROOT, capture_output=True, check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_daemons_play_three_deals_with_identical_score_sheets(tmp_path: Path, players: int) -> None:
    processes, homes = start_daemons(tmp_path, players, deals=3)
    wait_all(processes, tmp_path, timeout=240)
    sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets)
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 3
    for deal in deals:
        assert deal["audit"] == "ok"
        assert sum(deal["scores"]) == 0
    assert sheets[0]["totals"] == [sum(d["scores"][s] for d in deals) for s in range(players)]
    for home in homes:
        assert oct(home.stat().st_mode & 0o777) == "0o700"
        assert oct((home / "identity.key").stat().st_mode & 0o777) == "0o600"
        assert oct((home / "tarot.db").stat().st_mode & 0o777) == "0o600"
