"""A small disk of the test's own that fills up on demand: a tmpfs mounted in the test's
directory (root only: the test is skipped otherwise), unmounted when the test ends.

A real full disk rather than an injected error, because what matters is what SQLite, the
kernel and the daemon do with ``ENOSPC`` together: which write fails, whether a failed
commit leaves a transaction open, whether the daemon comes back once there is room.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

FILLER = "filler"  #: the file that takes the disk's last free byte


@contextmanager
def small_disk(path: Path, size: str = "2m") -> Iterator[Path]:
    """``path``, made a tmpfs of ``size`` (mount's ``size=`` syntax) for the block."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill takes root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(disk: Path) -> None:
    """Take every free byte of ``disk`` (and keep it until :func:`free`)."""
    fd = os.open(disk / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as error:
        if error.errno != errno.ENOSPC:  # full is what was wanted
            raise
        while True:  # the last blocks, smaller than a chunk
            try:
                os.write(fd, b"\0" * 512)
            except OSError:
                break
    finally:
        os.close(fd)


def free(disk: Path) -> None:
    """Give back what :func:`fill` took."""
    (disk / FILLER).unlink()
