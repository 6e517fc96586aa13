"""Discovery on a real (simulated) LAN: three network namespaces on one bridge, each
running ``python -m tarotd.discovery`` with plain interface broadcast, as on a LAN party.

Root only; skipped with the reason otherwise.  Traffic stays inside the namespaces, on
198.18.0.0/24.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.lansim import BROADCAST, Lan, LanError

ROOT = Path(__file__).resolve().parent.parent
HOSTS = 3

pytestmark = [
    pytest.mark.daemons,
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root for network namespaces"
    ),
]


@pytest.fixture(scope="module")
def lan() -> Iterator[Lan]:
    try:
        with Lan(HOSTS) as built:
            yield built
    except LanError as exc:
        pytest.skip(f"ip netns failed, no simulated LAN here: {exc}")


def discovery(lan: Lan, i: int, *args: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "tarotd.discovery", "--name", f"host{i}", "--json", *args]
    return lan.run(i, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def reports(process: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """The JSON lines the diagnostic printed, once it has finished (JSON: their values Any, as
    ``lan.Fleet.status`` gives them)."""
    out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def names(report: dict[str, object]) -> set[str]:
    peers = report["peers"]
    assert isinstance(peers, list)
    return {peer["name"] for peer in peers}


def others(i: int) -> set[str]:
    return {f"host{j}" for j in range(HOSTS) if j != i}


def test_hosts_have_their_own_interface_and_broadcast_address(lan: Lan) -> None:
    code = "from tarotd.discovery import broadcast_addresses; print(broadcast_addresses())"
    process = lan.run(0, [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    out, _ = process.communicate(timeout=10)
    assert out.strip() == repr([BROADCAST])
    assert [lan.ip(i) for i in range(HOSTS)] == ["198.18.0.1", "198.18.0.2", "198.18.0.3"]


def test_every_host_discovers_the_others_by_broadcast(lan: Lan) -> None:
    processes = [
        discovery(lan, i, "--watch", "--interval", "0.3", "--listen-seconds", "2.5")
        for i in range(HOSTS)
    ]
    for i, process in enumerate(processes):
        lines = reports(process)
        # The fullest view any host had (at the end, the first to stop has said goodbye).
        fullest = max(lines, key=lambda report: len(names(report)))
        assert names(fullest) == others(i)
        peers = fullest["peers"]
        assert isinstance(peers, list)
        # Each peer's address is where its datagrams came from, on the simulated LAN.
        assert {peer["host"] for peer in peers} == {lan.ip(j) for j in range(HOSTS) if j != i}
        final = lines[-1]
        assert final["final"] is True and final["stats"]["malformed"] == 0


def test_a_pulled_cable_expires_the_host_and_plugging_it_back_brings_it_back(lan: Lan) -> None:
    listen = 6.0
    args = ("--watch", "--interval", "0.25", "--expiry", "1.0", "--listen-seconds", str(listen))
    processes = [discovery(lan, i, *args) for i in range(HOSTS)]
    try:
        time.sleep(2.0)
        lan.link_down(2)
        time.sleep(2.0)
    finally:
        lan.link_up(2)
    # The views up to a second before the end: after that, hosts stop and say goodbye.
    histories = [
        [names(report) for report in reports(process) if float(report["elapsed"]) < listen - 1]
        for process in processes
    ]
    for i in (0, 1):
        history = histories[i]
        assert history[-1] == others(i), history  # host2 is back
        seen = [view == others(i) for view in history].index(True)
        assert any("host2" not in view for view in history[seen:]), history  # it had expired
    # host2 itself heard nobody while unplugged, and both again after.
    assert histories[2][-1] == others(2), histories[2]
    assert set() in histories[2][histories[2].index(others(2)) :], histories[2]


def test_lan_sim_script_runs_a_command_on_every_host_and_cleans_up(tmp_path: Path) -> None:
    command = [str(ROOT / "scripts" / "lan-sim"), "--hosts", "2", "--log-dir", str(tmp_path), "--"]
    command += ["sh", "-c", "echo host {i} at {ip}; ip -4 -o addr show dev eth0"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    for i in range(2):
        log = (tmp_path / f"host-{i}.log").read_text()
        assert f"host {i} at 198.18.0.{i + 1}" in log
        assert f"inet 198.18.0.{i + 1}/24 brd 198.18.0.255" in log
    lan_id = result.stdout.split("LAN ")[1].split(":")[0]
    assert not _namespaces_of(lan_id)


def test_lan_sim_script_tears_down_on_interrupt(tmp_path: Path) -> None:
    command = [
        str(ROOT / "scripts" / "lan-sim"),
        "--hosts",
        "2",
        "--log-dir",
        str(tmp_path),
        "--",
        "sleep",
        "30",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    banner = process.stdout.readline()
    lan_id = banner.split("LAN ")[1].split(":")[0]
    assert len(_namespaces_of(lan_id)) == 3
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=15)
    assert process.returncode == 130
    assert not _namespaces_of(lan_id)


def _namespaces_of(lan_id: str) -> list[str]:
    listing = subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=True
    ).stdout
    return [line.split()[0] for line in listing.splitlines() if line.startswith(f"trt-{lan_id}-")]
