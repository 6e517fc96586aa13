"""``rbcl`` writes the libsodium it bundles to a new temporary file at each import and never
removes it — 2.7 MB a process; a test run left thousands (5.6 GB) in ``/tmp``.  The programs
remove it once the library is loaded (``protocol.deck.group.binding_file``).  Each case runs a real
process with a temporary directory of its own, so the files of other processes do not count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.daemons

ROOT = Path(__file__).resolve().parent.parent


def leftovers(tmp_path: Path, code: str) -> list[str]:
    """The files a Python process running ``code`` leaves in its temporary directory."""
    private = tmp_path / "tmp"
    private.mkdir()
    env = dict(os.environ, TMPDIR=str(private))
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True)
    return sorted(path.name for path in private.iterdir())


def test_importing_the_group_leaves_rbcl_s_file(tmp_path: Path) -> None:
    """The leak itself: what the programs must clean up (if rbcl stops leaving it, this
    fails, and the clean-up can go)."""
    (left,) = leftovers(tmp_path, "import protocol.deck.group")
    assert left.startswith("tmp") and left.endswith(".so")


@pytest.mark.parametrize(
    "code",
    [
        "from client.cli import main; main(['scores', '--help'])",
        "from tarotd.cli import main; main(['--help'])",
    ],
    ids=["tarot", "tarotd"],
)
def test_the_programs_remove_it(tmp_path: Path, code: str) -> None:
    assert leftovers(tmp_path, f"import sys\ntry:\n    {code}\nexcept SystemExit:\n    pass") == []
