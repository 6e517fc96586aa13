"""The offline club night (issue 37, item 4): the wheel, ``scripts/wheelhouse`` and an install
with no network at all.

In the default suite (CI's ``.ci/run``): the wheelhouse for this machine only (``--here``), and
a fresh virtual environment that installs ``tarot-lan`` from it with the package index
disabled — pip's own configuration set aside (this machine's points at local mirrors), and,
as root, inside a network namespace of its own whose only interface is down, so that nothing
can be reached whatever pip would try.  The installed ``tarot`` and ``tarotd``, run outside
the repository, then play a deal against bots.  Slow (``-m slow``): the whole wheelhouse, every
platform it says it covers, each with a wheel of every binary dependency.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.daemons

ROOT = Path(__file__).resolve().parent.parent
WHEELHOUSE = ROOT / "scripts" / "wheelhouse"
#: The project's runtime dependencies with compiled code: a player's laptop has no compiler,
#: so each needs a wheel for every platform the wheelhouse covers.
BINARY = ("pyzmq", "msgpack", "cryptography", "pynacl", "rbcl", "cffi")


def _offline_env() -> dict[str, str]:
    """This process's environment with pip's configuration left out (``PIP_*``, and the
    machine's pip.conf through ``PIP_CONFIG_FILE``) and the index disabled."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _cut_off(command: list[str]) -> list[str]:
    """``command`` in a network namespace of its own (no route anywhere) where this user may
    make one (root, as in CI), else as it is — the index disabled all the same."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--net", "true"], capture_output=True).returncode == 0:
        return [unshare, "--net", *command]
    return command


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]


def test_the_wheel_lists_every_package_the_commands_import() -> None:
    """pyproject's packages: every package of the game, the daemon and the client, and the
    lab's the commands import (``tarot bench``, ``--cheat``); a package left out would install
    and then fail at its first import on a player's machine."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    wanted = {"lab", "lab.bench", "lab.cheats"}
    for top in ("protocol", "tarotd", "client"):
        for init in (ROOT / top).rglob("*.py"):
            if "__pycache__" not in init.parts:
                wanted.add(".".join(init.parent.relative_to(ROOT).parts))
    assert wanted - listed == set()


@pytest.fixture(scope="module")
def stick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scripts/wheelhouse DIR --here``: the stick for this machine (the index is reached)."""
    folder = tmp_path_factory.mktemp("stick")
    made = _run(
        [str(WHEELHOUSE), str(folder), "--here"],
        env={**os.environ, "TAROT_PYTHON": sys.executable},
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    return folder


def test_the_wheelhouse_holds_the_project_and_every_dependency(stick: Path) -> None:
    names = {re.split(r"-", wheel.name)[0].lower() for wheel in stick.glob("*.whl")}
    assert {"tarot_lan", "prompt_toolkit", "wcwidth", "pip", *BINARY} <= names
    assert not list(stick.glob("*.tar.gz")), "a source package needs a compiler to install"
    assert "--no-index --find-links" in (stick / "INSTALL.txt").read_text()


def test_a_fresh_venv_installs_it_with_no_network_and_plays_a_deal(
    stick: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    assert made.returncode == 0, made.stderr
    python, env = venv / "bin" / "python", _offline_env()
    install = [str(python), "-m", "pip", "install", "--no-index", "--find-links", str(stick)]
    installed = _run(_cut_off([*install, "tarot-lan"]), env=env, cwd=tmp_path, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # The commands come from the environment, not from the repository.
    where = _run([str(python), "-c", "import client, tarotd; print(client.__file__)"], cwd=tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    bin_ = venv / "bin"
    for command in ("tarot", "tarotd"):
        helped = _run([str(bin_ / command), "--help"], cwd=tmp_path, env=env, timeout=120)
        assert helped.returncode == 0, helped.stderr
    joining = _run([str(bin_ / "tarot"), "join", "--help"], cwd=tmp_path, env=env, timeout=120)
    assert joining.returncode == 0 and "CODE" in joining.stdout, joining.stderr

    # A deal against two bots: one daemon hosting every seat of a table of three.
    home = tmp_path / "home"
    played = _run(
        [
            str(bin_ / "tarotd"),
            *("--home", str(home), "--name", "solo", "--table", "salon", "--seats", "3"),
            *("--bots", "2", "--bot", "basic", "--deals", "1"),
            *("--no-discovery", "--listen", "127.0.0.1:0"),
        ],
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert played.returncode == 0, played.stderr[-3000:]
    scores = _run([str(bin_ / "tarot"), "--home", str(home), "scores", "--json"], cwd=tmp_path)
    rows = json.loads(scores.stdout)["deals"]
    assert len(rows) == 1 and rows[0]["audit"] == "ok" and sum(rows[0]["scores"]) == 0

    # Its log at INFO says the table formed, the deal dealt and scored — and no secret.
    log = played.stderr
    assert re.search(r"table salon \(\w+\) formed: solo, solo-bot1, solo-bot2", log), log
    assert re.search(r"deal 1, solo(-bot\d)? deals", log), log
    assert re.search(r"deal 1 scored — ", log), log
    with sqlite3.connect(home / "tarot.db") as db:
        seeds = [bytes(seed).hex() for (seed,) in db.execute("SELECT seed FROM seeds")]
    keys = [path.read_bytes().hex() for path in [home / "identity.key", *home.glob("keys/*")]]
    assert seeds and keys
    for secret in seeds + keys:
        assert secret[:16] not in log.lower()

    # One command per player, from the stick's install: its daemon starts in the background.
    player = tmp_path / "player"
    joined = _run(
        [str(bin_ / "tarot"), "--home", str(player), "join", "--name", "bob", "--no-client",
         "--tarotd=--no-discovery --listen 127.0.0.1:0"],
        cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    pid = int((player / "daemon.pid").read_text() or 0) if (player / "daemon.pid").exists() else 0
    try:
        assert joined.returncode == 0 and pid, joined.stderr
        status = _run(
            [str(bin_ / "tarot"), "--home", str(player), "status", "--json"], cwd=tmp_path
        )
        assert json.loads(status.stdout)["name"] == "bob"
    finally:
        if pid:
            os.kill(pid, signal.SIGTERM)


@pytest.mark.slow
def test_the_whole_wheelhouse_covers_every_platform_it_names(tmp_path: Path) -> None:
    """Linux x86_64 and aarch64 (manylinux 2.28), macOS arm64 and x86_64, CPython 3.11–3.13:
    for each, a wheel of every binary dependency that pip would install there."""
    from packaging.tags import Tag
    from packaging.utils import parse_wheel_filename

    made = _run(
        [str(WHEELHOUSE), str(tmp_path)],
        env={**os.environ, "TAROT_PYTHON": sys.executable},
        timeout=1800,
    )
    assert made.returncode == 0, made.stderr
    wheels = [parse_wheel_filename(w.name) for w in tmp_path.glob("*.whl")]
    universal = ["macosx_10_15_universal2", "macosx_10_10_universal2", "macosx_10_9_universal2"]
    platforms = {  # as scripts/wheelhouse asks pip for them
        "linux x86_64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
        "linux aarch64": [
            "manylinux_2_28_aarch64",
            "manylinux_2_17_aarch64",
            "manylinux2014_aarch64",
        ],
        "macOS arm64": ["macosx_11_0_arm64", *universal],
        "macOS x86_64": [f"macosx_10_{v}_x86_64" for v in (15, 13, 12, 9)] + universal,
    }
    for minor in (11, 12, 13):
        for label, tags in platforms.items():
            fits = {
                Tag(i, abi, p)
                for i in [f"cp3{m}" for m in range(2, minor + 1)]
                for abi in (f"cp3{minor}", "abi3", "none")
                for p in tags
            }
            for dependency in BINARY:
                assert any(
                    name == dependency and set(tagset) & fits
                    for name, _version, _build, tagset in wheels
                ), f"no {dependency} wheel for CPython 3.{minor} on {label}"


def test_the_api_asks_the_peers_user_the_systems_own_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local API's credential check (README, "Systems"): Linux's SO_PEERCRED gives our own
    uid; on a system without it and no other way to ask (Windows), the connection is refused
    (None) rather than the daemon's handler failing on a missing constant."""
    import socket

    from tarotd.api import peer_uid

    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        assert peer_uid(ours) == os.getuid()
        monkeypatch.delattr(socket, "SO_PEERCRED")
        monkeypatch.setattr(sys, "platform", "win32")
        assert peer_uid(ours) is None
