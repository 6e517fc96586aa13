"""Files opened before they are needed, so that writing them needs no new descriptor.

The score sheet (``scores.json``) and a proof file are written at the end of a deal — the
moment a flood of connections from the LAN may have taken every descriptor this process has
(:mod:`tarotd.guard`).  So each is written through a temporary file opened *ahead*: at start,
and again right after each use.  Writing is then a truncate, a write and a rename on
descriptors already held; only opening the next one needs a new descriptor, and if that fails
it is tried again at the next write (which then opens its file as any write would).

A :class:`FileAhead` is for one directory; each write names its file.  Mode 0600 from the first
byte: the temporary is created so, never narrowed afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

TEMPORARY: Final = ".ahead.tmp"  #: the name of the file held open, in the directory


class FileAhead:
    """Atomic replacement of files in ``directory`` through a temporary held open."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd: int | None = None
        self.prepare()

    def prepare(self) -> bool:
        """Open the next temporary if none is held; False if this process has no descriptor
        (or the disk refuses), to be tried again at the next write."""
        if self._fd is None:
            try:
                self.directory.mkdir(mode=0o700, exist_ok=True)
                self._fd = os.open(
                    self.directory / TEMPORARY, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600
                )
                os.fchmod(self._fd, 0o600)  # one left by a crash may have another mode
            except OSError:
                self._fd = None
        return self._fd is not None

    def replace(self, name: str, data: bytes) -> Path:
        """Make ``directory/name`` hold ``data`` — the old content or the new for any reader,
        never half — and open the next temporary.  OSError if it could not be written."""
        if not self.prepare():
            raise OSError("no descriptor for the file, and none held ahead")
        fd, self._fd = self._fd, None
        assert fd is not None
        try:
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        path = self.directory / name
        os.replace(self.directory / TEMPORARY, path)
        self.prepare()
        return path

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
