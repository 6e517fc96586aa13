"""The cheat lab with real daemons: one ``tarotd --cheat KIND`` among honest ``tarotd`` on
127.0.0.1 (static peers, bots at every seat).  Every honest daemon's score sheet names the
cheating seat and no other, and the proof file it wrote in its home passes ``tarot audit``.

Three kinds run in the default suite (a deck attack, a transport attack, a rule broken in
the play); every kind runs behind ``-m slow``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemons import ROOT, daemon_argv, free_ports, kill_all, log_path, logs, scores, spawn

from protocol.cheats import CHEATS

PLAYERS = 3
CHEATER = 1  #: the index of the daemon started with --cheat
DEFAULT = ["bad-shuffle", "equivocate", "revoke"]


def play_with_a_cheater(tmp_path: Path, kind: str, players: int = PLAYERS, timeout: float = 240) -> list[Path]:
    """Start the table, wait for every honest daemon to play its deal and exit; the cheater
    (which may be waiting for ever for what it withholds) is then stopped.  The honest homes."""
    ports = free_ports(players)
    homes = [tmp_path / f"d{i}" for i in range(players)]
    processes = []
    for i, home in enumerate(homes):
        extra = ["--cheat", kind] if i == CHEATER else []
        peers = [port for j, port in enumerate(ports) if j != i]
        argv = daemon_argv(home, f"joueur{i}", ports[i], peers, seats=players, deals=1, timeout=5, extra=extra)
        processes.append(spawn(argv, log_path(tmp_path, i)))
    honest = [p for i, p in enumerate(processes) if i != CHEATER]
    deadline = time.monotonic() + timeout
    try:
        for process in honest:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the honest daemons did not finish in {timeout} s:\n{logs(tmp_path, players)}")
    finally:
        kill_all(processes)
    assert [p.returncode for p in honest] == [0] * len(honest), logs(tmp_path, players)
    return [home for i, home in enumerate(homes) if i != CHEATER]


def cheater_seat(sheet: dict[str, object]) -> int:
    """The seat the cheating daemon (``joueur1``) played."""
    names = sheet["seats"]
    assert isinstance(names, list)
    return names.index(f"joueur{CHEATER}")


def check_caught(tmp_path: Path, kind: str, players: int = PLAYERS) -> None:
    honest = play_with_a_cheater(tmp_path, kind, players)
    verdicts = []
    for home in honest:
        sheet = scores(home)
        deals = sheet["deals"]
        assert isinstance(deals, list) and len(deals) == 1, sheet
        audit = deals[0]["audit"]
        assert isinstance(audit, dict), f"{kind}: {home.name} saw no cheat: {sheet}"
        assert audit["culprit"] == cheater_seat(sheet), f"{kind}: {home.name} named {audit}"
        verdicts.append((audit["culprit"], audit["step"], audit["rule"]))
        proof = Path(audit["proof"])
        assert proof.parent == home / "proofs" and proof.suffix == ".tarot-proof"
        out = subprocess.run([sys.executable, "-m", "client.cli", "audit", str(proof)], cwd=ROOT, capture_output=True, text=True)
        assert out.returncode == 1 and "proof: holds" in out.stdout, out.stdout + out.stderr
    assert len(set(verdicts)) == 1, verdicts  # every honest daemon reached the same verdict


@pytest.mark.parametrize("kind", DEFAULT)
def test_an_honest_table_names_the_cheating_daemon(tmp_path: Path, kind: str) -> None:
    check_caught(tmp_path, kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(set(CHEATS) - set(DEFAULT) - {"flood"}))
def test_every_cheating_daemon_is_named(tmp_path: Path, kind: str) -> None:
    check_caught(tmp_path, kind, players=5 if kind == "false-call" else PLAYERS)  # a call needs five


@pytest.mark.slow
def test_a_flooding_daemon_changes_nothing(tmp_path: Path) -> None:
    """Junk proves nothing against anybody: the honest daemons refuse it, count it against
    the peer that sent it, and play the deal to its end."""
    honest = play_with_a_cheater(tmp_path, "flood")
    for home in honest:
        sheet = scores(home)
        deals = sheet["deals"]
        assert isinstance(deals, list) and deals[0]["audit"] == "ok", sheet
