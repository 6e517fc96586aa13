"""A home last used by a ``tarot/v2`` daemon, opened by this one (``tarot/v3``, ristretto255).

``tests/fixtures/v2-home`` is seat 0's home after three tarot/v2 daemons (the tree of commit
8ffff83) played one deal of a table ``club``, its table then marked as still being played — a
v2 table interrupted mid-game.  Its manifest is signed under ``tarot/v2/manifest`` and its deck
is in Ed25519's subgroup, so the table cannot go on; but its sheet must stay readable, the store
must open and the daemon must start, saying why the table stopped.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

import msgpack
import pytest
from daemons import free_ports

from client.cli import main as tarot
from protocol.replication.identity import verify
from tarotd.daemon import Daemon, Options
from tarotd.lobby import ReadyTable
from tarotd.store import SCHEMA_VERSION, Store, TableState

pytestmark = pytest.mark.daemons

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "v2-home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A copy of the v2 home (opening it migrates the database in place)."""
    copy = tmp_path / "home"
    shutil.copytree(FIXTURE, copy)
    copy.chmod(0o700)
    for path in copy.iterdir():
        path.chmod(0o600)  # as a daemon leaves them (git keeps no mode but the executable bit)
    return copy


def test_tarot_scores_reads_the_sheet_of_a_v2_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tarot(["--home", str(home), "scores"]) == 0
    shown = capsys.readouterr().out
    assert "total" in shown and "joueur0" in shown


def test_the_store_of_a_v2_home_opens_and_stops_the_v2_table_keeping_everything(
    home: Path,
) -> None:
    with Store(home / "tarot.db") as db:
        (table,) = db.tables()
        assert table.state is TableState.PROTOCOL_V2 and table.name == "club"
        assert db._db.execute("SELECT version FROM schema_version").fetchall() == [
            (SCHEMA_VERSION,)
        ]
        sheet = db.sheet(table.table_id)
        assert sheet is not None and len(sheet.rows) == 1
        assert len(db.messages(table.table_id, 0)) == 101
        assert len(db.members(table.table_id)) == 3
        # Why it cannot be taken up: its manifest was signed under tarot/v2's domain.
        assert table.manifest is not None
        with pytest.raises(ValueError, match="signature by seat 0"):
            ReadyTable.from_bytes(table.manifest)
        document, signatures, _ = msgpack.unpackb(table.manifest, raw=False)
        keys = [member[0] for member in msgpack.unpackb(document, raw=False)[2]]
        assert all(
            verify(key, signature, b"tarot/v2/manifest\x00" + document)
            for key, signature in zip(keys, signatures, strict=True)
        )


def test_a_daemon_starts_on_a_v2_home_and_says_why_its_table_stopped(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (port,) = free_ports(1)
    daemon = Daemon(
        Options(home=home, name="joueur0", listen=f"tcp://127.0.0.1:{port}", discovery=False)
    )

    async def start_and_close() -> None:
        await daemon.start()
        await daemon.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(asyncio.wait_for(start_and_close(), 60))
    assert "was being played under protocol tarot/v2" in caplog.text
    with Store(home / "tarot.db") as db:
        assert [table.state for table in db.tables()] == [TableState.PROTOCOL_V2]
