"""A home the system will not let ``tarotd`` write — on a read-only disk, or on a full one —
stops it at start with one line on stderr saying what happened and what to do, and exit
status 2 (issue 35, item 5), as a bad option does: it was a traceback.

Real disks, as ``tests/disk.py`` makes them (root only, else skipped: root ignores a
directory's permissions, so a read-only home is a read-only mount): a full one is a small
tmpfs filled up; a read-only one is mounted in a private mount namespace of the daemon's own
(``unshare -m``), which nobody else sees and which ends with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from disk import fill, small_disk

from tarotd.home import Home, load_or_create_identity
from tarotd.store import Store

pytestmark = pytest.mark.daemons

ROOT = Path(__file__).resolve().parent.parent

#: Exit status of the namespace's script when it could not mount: the test is skipped.
NO_MOUNT = 97


def _tarotd(home: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tarotd.cli",
        "--home",
        str(home),
        "--name",
        "alice",
        "--no-discovery",
        "--listen",
        "127.0.0.1:0",
    ]


def _established(home: Path) -> None:
    """A home a daemon has used: its identity and its database (closed cleanly)."""
    made = Home(home)
    load_or_create_identity(made)
    Store(made.db, established=True).close()


def _refused(argv: Sequence[str]) -> str:
    """``argv`` (a ``tarotd`` that cannot start) run to its end: its one line of stderr."""
    done = subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True, timeout=60)
    if done.returncode == NO_MOUNT:
        pytest.skip(f"cannot mount in a private namespace here: {done.stderr.strip()}")
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
    assert done.stdout == ""
    return done.stderr


def _read_only(mount: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run after the shell command ``mount``, in a mount namespace of its own."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a read-only mount in a private namespace takes root and unshare")
    script = f'{mount} || exit {NO_MOUNT}; exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *argv]


def test_a_new_home_on_a_read_only_tmpfs(tmp_path: Path) -> None:
    """The home is the root of a read-only tmpfs (mode 1777, which ``tarotd`` narrows)."""
    home = tmp_path / "home"
    home.mkdir()
    line = _refused(_read_only(f"mount -t tmpfs -o ro tmpfs {home}", _tarotd(home)))
    assert line.startswith(f"tarotd: cannot write the home {home}: it is on a read-only file ")
    assert (
        "Read-only file system" in line and "remount that disk read-write, or start with " in line
    )


def test_an_established_home_mounted_read_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _established(home)
    mount = f"mount --bind {home} {home} && mount -o remount,bind,ro {home}"
    line = _refused(_read_only(mount, _tarotd(home)))
    assert line.startswith(f"tarotd: cannot write the home {home}: it is on a read-only file ")
    assert f"{home / 'daemon.pid'}: Read-only file system" in line


@pytest.mark.parametrize("killed", [False, True], ids=["stopped", "killed"])
def test_an_established_home_on_a_full_disk(tmp_path: Path, killed: bool) -> None:
    """Full, the disk refuses the lock's pid; after a ``kill -9`` the pid file keeps its
    page, the lock is taken and SQLite is refused instead (as ``disk I/O error``, extending
    its shared memory file)."""
    with small_disk(tmp_path / "disk") as disk:
        home = disk / "home"
        _established(home)
        if killed:
            (home / "daemon.pid").write_text("12345\n")
        fill(disk)
        line = _refused(_tarotd(home))
    assert line.startswith(f"tarotd: cannot write the home {home}: its disk is full (")
    assert "free some space there (a home needs 5 MiB free" in line
    assert ("database" in line) == killed, line
