"""The daemon's home directory and SQLite store (DESIGN §6, identity and persistence): private
file modes, identities that survive restarts and never exist half-written, one daemon per home,
every store method round-tripping, and a store that a ``kill -9`` mid-write leaves consistent."""

from __future__ import annotations

import errno
import os
import resource
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from protocol.replication.identity import Identity
from protocol.replication.messages import Kind, Message, encode, sign_message
from protocol.rules.scoring import ScoreSheet
from tarotd import store as store_module
from tarotd.ahead import TEMPORARY, FileAhead
from tarotd.home import (
    DaemonLock,
    Home,
    HomeError,
    Unwritable,
    default_home,
    load_or_create_identity,
)
from tarotd.store import (
    LOG_LIMIT,
    LOG_PAGES,
    SCHEMA_VERSION,
    DealRecord,
    DealState,
    LocalFault,
    MemberRecord,
    Store,
    StoreError,
    StoreFault,
    TableRecord,
    TableState,
)
from tests.disk import fill, free, small_disk

REPO = Path(__file__).resolve().parent.parent
TABLE = bytes(range(16))
OTHER_TABLE = bytes(range(1, 17))
ALICE = Identity.from_private_bytes(bytes(range(32)))
PREV = bytes(32)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def message(n: int, seat: int = 0, deal: int = 0, table: bytes = TABLE) -> Message:
    return sign_message(ALICE, table, deal, Kind.PLAY, seat, {"n": n}, PREV)


def python(script: str, *args: str) -> subprocess.Popen[str]:
    """A child Python running ``script`` with this repository importable."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 0, so that any private mode seen was set on purpose, not inherited."""
    previous = os.umask(0)
    yield
    os.umask(previous)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "tarot.db") as opened:
        opened.save_table(TableRecord(TABLE, "salle 1", 5, TableState.PLAYING, 100.0))
        yield opened


# --- the home directory ----------------------------------------------------------------------


def test_xdg_data_home_is_honoured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_home() == tmp_path / "data" / "tarot"


@pytest.mark.parametrize("xdg", [None, "", "relative/path"])
def test_default_home_without_a_usable_xdg_data_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert default_home() == tmp_path / ".local" / "share" / "tarot"


def test_home_is_created_private_with_its_paths(tmp_path: Path, open_umask: None) -> None:
    home = Home(tmp_path / "a" / "b" / "tarot")
    assert home.path.is_dir() and mode(home.path) == 0o700
    names = [home.identity_key, home.db, home.api_sock, home.pid_file, home.scores]
    assert [p.name for p in names] == [
        "identity.key",
        "tarot.db",
        "api.sock",
        "daemon.pid",
        "scores.json",
    ]
    assert all(p.parent == home.path for p in names)
    assert home.key_path() == home.identity_key
    assert home.key_path("bot-1") == home.path / "keys" / "bot-1.key"


def test_a_private_file_is_replaced_whole_and_0600_whatever_the_umask(
    home: Home, open_umask: None
) -> None:
    """``scores.json`` was written 0644 beside 0600 keys and database: now 0600, even over an
    older, wider file; the next temporary is open already, 0600 too."""
    home.scores.write_text("{}")
    home.scores.chmod(0o644)
    files = FileAhead(home.path)
    try:
        files.replace(home.scores.name, b'{"deals": []}')
    finally:
        files.close()
    assert home.scores.read_bytes() == b'{"deals": []}' and mode(home.scores) == 0o600
    assert sorted(p.name for p in home.path.iterdir()) == [TEMPORARY, "scores.json"]
    assert mode(home.path / TEMPORARY) == 0o600


def test_a_file_opened_ahead_is_written_with_no_descriptor_left(tmp_path: Path) -> None:
    """A deal's end writes the sheet and any proof when a flood may have taken every
    descriptor: the file opened ahead is written all the same, and the next one is opened
    once descriptors are free again."""
    files = FileAhead(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowest = os.dup(0)
    os.close(lowest)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowest, hard))  # no new descriptor from here
    try:
        with pytest.raises(OSError):
            os.open(tmp_path / "other", os.O_CREAT | os.O_WRONLY)
        written = files.replace("scores.json", b'{"deals": [1]}')
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert written.read_bytes() == b'{"deals": [1]}'
    assert files.replace("scores.json", b'{"deals": [1, 2]}').read_bytes() == b'{"deals": [1, 2]}'
    files.close()


def test_home_with_wider_permissions_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "home"
    path.mkdir()
    path.chmod(0o755)
    Home(path)
    assert mode(path) == 0o700


def test_home_of_another_user_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: path.stat().st_uid + 1)
    with pytest.raises(HomeError, match="belongs to .* not to you"):
        Home(path)


def test_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("")
    with pytest.raises(HomeError, match="not a directory"):
        Home(tmp_path / "home")


@pytest.mark.parametrize("name", ["", "../main", "a/b", ".hidden", "x" * 65])
def test_identity_names_cannot_escape_the_keys_directory(home: Home, name: str) -> None:
    with pytest.raises(ValueError, match="identity name"):
        home.key_path(name)


# --- identities ------------------------------------------------------------------------------


def test_identity_is_created_once_private_and_persists(home: Home, open_umask: None) -> None:
    first = load_or_create_identity(home)
    assert mode(home.identity_key) == 0o600
    assert home.identity_key.read_bytes() == first.private_bytes()
    again = load_or_create_identity(Home(home.path))
    assert again.public_key == first.public_key


def test_one_identity_per_hosted_seat(home: Home, open_umask: None) -> None:
    main, bot1, bot2 = (load_or_create_identity(home, name) for name in ("main", "bot-1", "bot-2"))
    assert len({main.public_key, bot1.public_key, bot2.public_key}) == 3
    assert mode(home.keys) == 0o700
    assert mode(home.keys / "bot-1.key") == 0o600
    assert load_or_create_identity(home, "bot-2").public_key == bot2.public_key


def test_failed_creation_leaves_no_key_file(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_failure(fd: int) -> None:
        raise OSError(5, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", disk_failure)
        with pytest.raises(HomeError, match="could not create identity key .*Input/output error"):
            load_or_create_identity(home)
    assert list(home.path.iterdir()) == []  # neither the key nor its temporary file
    assert (
        load_or_create_identity(home).public_key
        == Identity.from_private_bytes(home.identity_key.read_bytes()).public_key
    )


def test_short_write_leaves_no_key_file(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    with monkeypatch.context() as patch:
        patch.setattr(os, "write", lambda fd, data: real_write(fd, data[:10]))
        with pytest.raises(HomeError, match="short write"):
            load_or_create_identity(home)
    assert list(home.path.iterdir()) == []


def test_losing_a_creation_race_uses_the_winners_key(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    winner = Identity.generate()
    real_link = os.link

    def another_process_first(source: Path, destination: Path) -> None:
        fd = os.open(destination, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.write(fd, winner.private_bytes())
        os.close(fd)
        real_link(source, destination)

    monkeypatch.setattr(os, "link", another_process_first)
    assert load_or_create_identity(home).public_key == winner.public_key
    assert [p.name for p in home.path.iterdir()] == ["identity.key"]


@pytest.mark.parametrize("wide", [0o640, 0o604, 0o660, 0o644])
def test_key_readable_by_others_is_refused_with_advice(home: Home, wide: int) -> None:
    load_or_create_identity(home)
    home.identity_key.chmod(wide)
    with pytest.raises(HomeError) as caught:
        load_or_create_identity(home)
    text = str(caught.value)
    assert str(home.identity_key) in text and f"mode {wide:04o}" in text
    assert f"chmod 600 {home.identity_key}" in text and "new identity" in text


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_key_of_the_wrong_size_is_refused_with_advice(home: Home, size: int) -> None:
    fd = os.open(home.identity_key, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"k" * size)
    os.close(fd)
    with pytest.raises(HomeError, match=f"is {size} bytes, but a key is exactly 32.*backup"):
        load_or_create_identity(home)
    assert home.identity_key.stat().st_size == size  # never overwritten


def test_key_that_is_not_a_file_is_refused(home: Home) -> None:
    home.identity_key.symlink_to("/dev/null")
    with pytest.raises(HomeError, match="is not a regular file"):
        load_or_create_identity(home)
    home.identity_key.unlink()
    home.identity_key.mkdir()
    with pytest.raises(HomeError, match="could not read identity key .*directory"):
        load_or_create_identity(home)


# --- the daemon lock -------------------------------------------------------------------------

HOLD_LOCK = """
    import sys
    from pathlib import Path
    from tarotd.home import DaemonLock, Home
    lock = DaemonLock(Home(Path(sys.argv[1])))
    print("locked", flush=True)
    sys.stdin.read()
"""


@pytest.mark.daemons
def test_a_second_daemon_is_refused_and_told_the_holders_pid(home: Home) -> None:
    holder = python(HOLD_LOCK, str(home.path))
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        assert home.pid_file.read_text() == f"{holder.pid}\n"
        with pytest.raises(
            HomeError, match=f"another tarotd \\(pid {holder.pid}\\) is already using"
        ):
            DaemonLock(home)
    finally:
        holder.kill()  # kill -9: the kernel releases the lock, no stale pid file to clean
        holder.wait()
    with DaemonLock(home):
        assert home.pid_file.read_text() == f"{os.getpid()}\n"
    assert home.pid_file.read_text() == ""


def test_lock_is_exclusive_within_one_process_too(home: Home) -> None:
    with DaemonLock(home), pytest.raises(HomeError, match=f"pid {os.getpid()}"):
        DaemonLock(home)
    DaemonLock(home).release()


def _raised_from(error: BaseException, cause: BaseException) -> BaseException:
    error.__cause__ = cause
    return error


def _sqlite(code: int) -> sqlite3.Error:
    error = sqlite3.OperationalError("SQLite's message")
    error.sqlite_errorcode = code
    return error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (_raised_from(HomeError("could not lock"), OSError(errno.EROFS, "")), Unwritable.READ_ONLY),
        (_raised_from(HomeError("could not create"), OSError(errno.EACCES, "")), Unwritable.DENIED),
        (OSError(errno.ENOSPC, "No space left on device"), Unwritable.FULL),
        (_raised_from(StoreError("could not open"), _sqlite(sqlite3.SQLITE_FULL)), Unwritable.FULL),
        (_raised_from(StoreError("open"), _sqlite(sqlite3.SQLITE_READONLY)), Unwritable.READ_ONLY),
        # A disk I/O error with room on the disk is no full disk; nor a refusal with no cause.
        (_raised_from(StoreError("could not open"), _sqlite(sqlite3.SQLITE_IOERR)), None),
        (HomeError("identity key is not a regular file"), None),
    ],
)
def test_why_a_home_cannot_be_written_is_read_from_the_error_behind(
    tmp_path: Path, error: BaseException, expected: Unwritable | None
) -> None:
    """What ``tarotd`` says in one line, with exit status 2, rather than a traceback."""
    assert Unwritable.of(error, tmp_path) is expected


# --- the store: the file ---------------------------------------------------------------------


def test_database_is_private_and_durable(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "tarot.db"
    with Store(path) as db:
        db.set_setting("x", "y")
        assert mode(path) == 0o600
        assert mode(path.with_name("tarot.db-wal")) == 0o600
        assert mode(path.with_name("tarot.db-shm")) == 0o600
        pragmas = {
            name: db._db.execute(f"PRAGMA {name}").fetchone()[0]
            for name in (
                "journal_mode",
                "synchronous",
                "foreign_keys",
                "wal_autocheckpoint",
                "journal_size_limit",
            )
        }
        assert pragmas == {
            "journal_mode": "wal",
            "synchronous": 1,
            "foreign_keys": 1,  # 1 = NORMAL: Store.sync fsyncs
            "wal_autocheckpoint": LOG_PAGES,
            "journal_size_limit": LOG_LIMIT,
        }
        (version,) = db._db.execute("SELECT version FROM schema_version").fetchone()
        assert version == SCHEMA_VERSION == 6


def test_database_with_wider_permissions_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    Store(path).close()
    path.chmod(0o644)
    Store(path).close()
    assert mode(path) == 0o600


def test_everything_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    with Store(path) as db:
        db.save_table(TableRecord(TABLE, "salle 1", 3, TableState.PLAYING, 1.5, b"manifest"))
        db.start_deal(TABLE, 0, 2)
        db.save_seed(TABLE, 0, 1, b"s" * 32)
        db.append_message(TABLE, 0, message(1), own=True)
    with Store(path) as db:
        assert db.tables() == [
            TableRecord(TABLE, "salle 1", 3, TableState.PLAYING, 1.5, b"manifest")
        ]
        assert db.deals(TABLE) == [DealRecord(0, 2, DealState.STARTED)]
        assert db.seed(TABLE, 0, 1) == b"s" * 32
        assert db.messages(TABLE, 0) == [message(1)]


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    path.write_bytes(b"these are not the pages you are looking for\n" * 100)
    with pytest.raises(
        StoreError, match=f"{path} is not a usable tarot database .*backup.*move it away"
    ):
        Store(path)


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE recipes (name TEXT)")
    other.close()
    with pytest.raises(StoreError, match="some other program \\(tables: recipes\\)"):
        Store(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    Store(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    raw.close()
    with pytest.raises(
        StoreError, match=f"newer tarotd \\(schema version {SCHEMA_VERSION + 1}.*Upgrade"
    ):
        Store(path)


def test_a_damaged_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tarot.db"
    Store(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO schema_version VALUES (1)")
    raw.close()
    with pytest.raises(StoreError, match="schema version is damaged \\(2 rows\\)"):
        Store(path)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="could not open the database"):
        Store(tmp_path)


# --- the store: round trips ------------------------------------------------------------------


def test_tables(store: Store) -> None:
    first = TableRecord(TABLE, "salle 1", 5, TableState.PLAYING, 100.0)
    assert store.table(TABLE) == first and store.table(OTHER_TABLE) is None
    older = TableRecord(OTHER_TABLE, "salle 2", 3, TableState.PLAYING, 50.0)
    store.save_table(older)
    assert store.tables() == [older, first]
    store.set_table_state(TABLE, TableState.FINISHED)
    assert store.table(TABLE) == TableRecord(TABLE, "salle 1", 5, TableState.FINISHED, 100.0)
    with pytest.raises(StoreError, match=f"no table {bytes(16).hex()}"):
        store.set_table_state(bytes(16), TableState.PLAYING)


def test_saving_a_table_again_updates_it_and_keeps_what_hangs_off_it(store: Store) -> None:
    store.save_members(TABLE, [MemberRecord(0, b"k0", "Anne", "tcp://10.0.0.1:7000")])
    store.start_deal(TABLE, 0, 0)
    signed = TableRecord(TABLE, "salle 1", 5, TableState.FINISHED, 100.0, manifest=b"\x93signed")
    store.save_table(signed)
    assert store.table(TABLE) == signed
    assert len(store.members(TABLE)) == 1 and len(store.deals(TABLE)) == 1


def test_members(store: Store) -> None:
    members = [
        MemberRecord(2, b"k2", "Chloé", "tcp://10.0.0.3:7000"),
        MemberRecord(0, b"k0", "Anne", "tcp://10.0.0.1:7000"),
    ]
    store.save_members(TABLE, members)
    assert store.members(TABLE) == [members[1], members[0]]
    store.save_members(TABLE, members[:1])  # the whole membership, replaced
    assert store.members(TABLE) == members[:1]
    assert store.members(OTHER_TABLE) == []
    with pytest.raises(StoreError, match="could not save the members .*FOREIGN KEY"):
        store.save_members(OTHER_TABLE, members)  # a table never saved
    with pytest.raises(StoreError, match="UNIQUE"):
        store.save_members(
            TABLE, [MemberRecord(0, b"k", "A", "e"), MemberRecord(1, b"k", "B", "e")]
        )
    assert store.members(TABLE) == members[:1]  # the failed write changed nothing


def test_deals(store: Store) -> None:
    assert store.start_deal(TABLE, 1, 3) is True
    assert store.start_deal(TABLE, 0, 2) is True
    assert store.start_deal(TABLE, 1, 3) is False  # a restart replaying its steps
    with pytest.raises(StoreError, match="started with dealer 3, not 4"):
        store.start_deal(TABLE, 1, 4)
    store.record_deal(TABLE, 0, ScoreSheet(["Anne", "Bruno", "Chloé"]), [])
    assert store.deals(TABLE) == [
        DealRecord(0, 2, DealState.SCORED),
        DealRecord(1, 3, DealState.STARTED),
    ]
    with pytest.raises(StoreError, match="no deal 7"):
        store.record_deal(TABLE, 7, ScoreSheet(["Anne", "Bruno", "Chloé"]), [])


def test_seeds(store: Store) -> None:
    seed = bytes(range(100, 132))
    store.start_deal(TABLE, 0, 0)
    assert store.seed(TABLE, 0, 1) is None
    store.save_seed(TABLE, 0, 1, seed)
    store.save_seed(TABLE, 0, 1, seed)  # again after a restart: fine
    assert store.seed(TABLE, 0, 1) == seed and store.seed(TABLE, 0, 2) is None
    with pytest.raises(StoreError, match="already holds a different seed for seat 1") as caught:
        store.save_seed(TABLE, 0, 1, bytes(32))
    assert seed.hex() not in str(caught.value) and bytes(32).hex() not in str(caught.value)
    assert store.seed(TABLE, 0, 1) == seed
    with pytest.raises(StoreError, match="FOREIGN KEY"):
        store.save_seed(TABLE, 5, 1, seed)  # a deal never started


def test_messages_keep_the_order_of_acceptance_per_deal(store: Store) -> None:
    accepted = [message(3, seat=4), message(1, seat=0), message(2, seat=2)]
    for m in accepted:
        assert store.append_message(TABLE, 0, m, own=m.seat == 0) is True
    later_deal = message(9, deal=1)
    assert store.append_message(TABLE, 1, later_deal, own=False) is True  # no deal row needed
    assert store.messages(TABLE, 0) == accepted
    assert store.messages(TABLE, 1) == [later_deal]
    assert store.messages(TABLE, 2) == []
    rows = store._db.execute(
        "SELECT deal, idx, seat, kind, own FROM messages ORDER BY deal, idx"
    ).fetchall()
    assert rows == [
        (0, 0, 4, "play", 0),
        (0, 1, 0, "play", 1),
        (0, 2, 2, "play", 0),
        (1, 0, 0, "play", 0),
    ]


def test_every_write_is_synced_but_appended_messages_wait_for_sync(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One fsync of the log for a burst of messages; everything else on the disk at once."""
    synced: list[str] = []
    real_fdatasync = os.fdatasync

    def fdatasync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    for n in range(5):
        store.append_message(TABLE, 0, message(n), own=False)
    assert synced == []
    store.sync()
    assert synced == [f"{store.path}-wal"]
    store.sync()
    store.append_message(TABLE, 0, message(0), own=False)  # already there: nothing to sync
    store.sync()
    assert len(synced) == 1
    store.set_setting("x", "y")
    store.start_deal(TABLE, 0, dealer=0)
    store.save_seed(TABLE, 0, 0, bytes(32))
    assert len(synced) == 4


class HeldDisk:
    """``os.fdatasync`` held until :meth:`release`: a slow disk, noting which thread waits."""

    def __init__(self, fdatasync: Callable[[int], None]) -> None:
        self.started, self._released = threading.Event(), threading.Event()
        self.threads: list[str] = []
        self._fdatasync = fdatasync

    def fdatasync(self, fd: int) -> None:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self._released.wait(5)
        self._fdatasync(fd)

    def release(self) -> None:
        self._released.set()


@pytest.fixture
def held_disk(monkeypatch: pytest.MonkeyPatch) -> HeldDisk:
    """Ask for it after ``store``: opening the store syncs on the test's own thread, which
    nothing would release."""
    disk = HeldDisk(os.fdatasync)
    monkeypatch.setattr(os, "fdatasync", disk.fdatasync)
    return disk


def test_sync_later_syncs_on_its_own_thread_what_was_committed_when_it_was_called(
    store: Store, held_disk: HeldDisk
) -> None:
    """The mesh's acknowledgements wait for it, the event loop does not: the ``fdatasync``
    runs on the store's thread, and covers the commits made before the call, not those
    made while it runs."""
    assert store.sync_later() is None  # nothing written yet
    store.append_message(TABLE, 0, message(0), own=False)
    syncing = store.sync_later()
    assert syncing is not None and held_disk.started.wait(5)
    assert store.messages(TABLE, 0) == [message(0)]  # the caller goes on meanwhile
    store.append_message(TABLE, 0, message(1), own=False)
    store._commit_queued()  # committed while the sync runs: not covered by it
    assert not syncing.done()
    held_disk.release()
    assert syncing.result(timeout=5) is None
    synced = held_disk.threads
    assert synced == [synced[0]] and synced[0].startswith("tarotd-sync")
    store.sync()  # message(1) still needed its own sync
    assert len(synced) == 2
    assert store.sync_later() is None  # now everything is on the disk


def test_a_failed_sync_later_says_why_and_leaves_the_commits_to_sync(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_failure(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    store.append_message(TABLE, 0, message(0), own=False)
    with monkeypatch.context() as patch:
        patch.setattr(os, "fdatasync", disk_failure)
        syncing = store.sync_later()
        assert syncing is not None
        with pytest.raises(StoreError, match="could not sync the log .* Input/output error"):
            syncing.result(timeout=5)
    again = store.sync_later()
    assert again is not None and again.result(timeout=5) is None


def test_closing_waits_for_a_sync_later_still_running(store: Store, held_disk: HeldDisk) -> None:
    store.append_message(TABLE, 0, message(0), own=False)
    syncing = store.sync_later()
    assert syncing is not None
    threading.Timer(0.2, held_disk.release).start()
    store.close()
    assert syncing.done() and syncing.exception() is None


def test_a_burst_of_messages_is_one_transaction_committed_before_what_follows(store: Store) -> None:
    """Appending queues; the next sync, write or read commits the queue first, in one
    transaction — and a raw look at the file before that sees nothing."""
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    for n in range(5):
        store.append_message(TABLE, 0, message(n), own=n == 0)
    assert "COMMIT" not in statements
    store.start_deal(TABLE, 0, dealer=0)
    assert statements.count("COMMIT") == 1  # the queue went first, in the deal's transaction
    assert store.messages(TABLE, 0) == [message(n) for n in range(5)]
    store.append_message(TABLE, 0, message(5), own=False)
    assert store.messages(TABLE, 0)[-1] == message(5)  # a read sees what is queued
    assert statements.count("COMMIT") == 2


def test_closing_commits_what_is_queued(tmp_path: Path) -> None:
    with Store(tmp_path / "tarot.db") as store:
        store.save_table(TableRecord(TABLE, "t", 5, TableState.PLAYING, 1.0))
        store.append_message(TABLE, 0, message(1), own=True)
    with Store(tmp_path / "tarot.db") as store:
        assert store.messages(TABLE, 0) == [message(1)]


def test_append_message_is_idempotent(store: Store) -> None:
    assert store.append_message(TABLE, 0, message(1), own=True) is True
    assert store.append_message(TABLE, 0, message(2), own=True) is True
    assert store.append_message(TABLE, 0, message(1), own=False) is False  # a resend
    assert store.messages(TABLE, 0) == [message(1), message(2)]
    assert store.append_message(TABLE, 0, message(3), own=True) is True
    assert store.append_message(TABLE, 0, message(3), own=True) is False  # queued already
    store.sync()
    idx = [i for (i,) in store._db.execute("SELECT idx FROM messages ORDER BY idx")]
    assert idx == [0, 1, 2]


def test_append_message_checks_table_and_deal(store: Store) -> None:
    with pytest.raises(ValueError, match="belongs to deal 0"):
        store.append_message(TABLE, 1, message(1), own=True)
    with pytest.raises(StoreError, match=f"there is no table {OTHER_TABLE.hex()} here"):
        store.append_message(OTHER_TABLE, 0, message(1, table=OTHER_TABLE), own=True)
    store.set_setting("x", "y")  # the refused message is not left to fail a later write


def test_a_damaged_message_row_is_named(store: Store) -> None:
    for n in range(3):
        store.append_message(TABLE, 0, message(n), own=True)
    store.sync()  # committed: the rows are in the file to be damaged
    store._db.execute("UPDATE messages SET data = x'c1' WHERE idx = 1")
    with pytest.raises(
        StoreError, match=f"message 1 of deal 0 of table {TABLE.hex()} is damaged \\(frame"
    ):
        store.messages(TABLE, 0)
    store._db.execute("UPDATE messages SET data = ? WHERE idx = 1", (encode(message(7)),))
    with pytest.raises(StoreError, match="message 1 of deal 0 .* no longer match its digest"):
        store.messages(TABLE, 0)


def test_score_sheets_and_results_are_recorded_with_their_deal(store: Store) -> None:
    assert store.sheet(TABLE) is None and store.results(TABLE) == []
    sheet = ScoreSheet(["Anne", "Bruno", "Chloé"])
    for deal in (0, 1):
        store.start_deal(TABLE, deal, deal)
    sheet.add_void()
    store.record_deal(TABLE, 0, sheet, [{"deal": 0, "audit": "ok"}])
    sheet.add_penalty(1)
    store.record_deal(TABLE, 1, sheet, [{"deal": 0, "audit": "ok"}, {"deal": 1, "audit": "ok"}])
    assert store.sheet(TABLE) == sheet and [r["deal"] for r in store.results(TABLE)] == [0, 1]
    # all or nothing: the sheet is not saved either
    with pytest.raises(StoreError, match="no deal 2"):
        store.record_deal(TABLE, 2, ScoreSheet(["Anne", "Bruno", "Chloé"]), [])
    assert store.sheet(TABLE) == sheet and len(store.results(TABLE)) == 2
    store._db.execute("UPDATE scores SET sheet = '{\"format\": 1'")
    with pytest.raises(
        StoreError, match=f"score sheet of table {TABLE.hex()}: corrupt score sheet"
    ):
        store.sheet(TABLE)


def test_a_version_1_database_is_upgraded_without_the_mesh_tables_it_never_used(
    tmp_path: Path,
) -> None:
    """Version 1 made an outbox and delivery marks for the mesh, which keeps them in memory:
    version 2 drops both, and keeps everything else."""
    path = tmp_path / "tarot.db"
    with sqlite3.connect(path) as raw:
        for statement in store_module._SCHEMA_V1:
            raw.execute(statement)
        raw.execute("INSERT INTO schema_version (version) VALUES (1)")
        raw.execute("INSERT INTO settings (key, value) VALUES ('name', 'Anne')")
        raw.execute("INSERT INTO mesh_delivered (peer, last_seq) VALUES (x'00', 3)")
    with Store(path) as db:
        assert db.get_setting("name") == "Anne"
        tables = {
            name
            for (name,) in db._db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        }
        assert "settings" in tables and not {"mesh_outbox", "mesh_delivered"} & tables
        assert db._db.execute("SELECT version FROM schema_version").fetchall() == [
            (SCHEMA_VERSION,)
        ]


def test_a_table_being_played_under_protocol_v1_stops_and_keeps_its_sheet(tmp_path: Path) -> None:
    """A home upgraded to protocol v2: a v1 table cannot go on (no member speaks v1 any
    more), so it is not taken up again, and nothing of it is deleted."""
    path = tmp_path / "tarot.db"
    with sqlite3.connect(path) as raw:
        for statement in (*store_module._SCHEMA_V1, *store_module._SCHEMA_V2):
            raw.execute(statement)
        raw.execute("INSERT INTO schema_version (version) VALUES (2)")
        for table_id, state in ((b"p" * 16, "playing"), (b"f" * 16, "finished")):
            raw.execute("INSERT INTO tables VALUES (?, 'soir', 5, NULL, ?, 0)", (table_id, state))
            raw.execute("INSERT INTO scores VALUES (?, '{}')", (table_id,))
    with Store(path) as db:
        states = {record.table_id: record.state for record in db.tables()}
        assert states == {b"p" * 16: TableState.PROTOCOL_V1, b"f" * 16: TableState.FINISHED}
        assert db._db.execute("SELECT COUNT(*) FROM scores").fetchone() == (2,)


def test_the_states_of_an_old_store_read_as_enums_and_an_unknown_one_says_what_to_do(
    tmp_path: Path,
) -> None:
    """The states are stored as the strings they always were: rows written before they were
    enums read as the enums, and a state of a newer tarotd is refused with a remedy."""
    path = tmp_path / "tarot.db"
    with Store(path):
        pass
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO tables VALUES (?, 'soir', 5, NULL, 'finished', 0)", (TABLE,))
        raw.execute("INSERT INTO deals VALUES (?, 0, 2, 'scored')", (TABLE,))
        raw.execute("INSERT INTO deals VALUES (?, 1, 3, 'started')", (TABLE,))
    with Store(path) as db:
        (table,) = db.tables()
        assert table.state is TableState.FINISHED and db.table(TABLE) == table
        assert [deal.state for deal in db.deals(TABLE)] == [DealState.SCORED, DealState.STARTED]
        assert all(type(deal.state) is DealState for deal in db.deals(TABLE))
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE tables SET state = 'adjourned'")
        raw.execute("UPDATE deals SET state = 'replayed' WHERE deal = 1")
    with Store(path) as db:
        with pytest.raises(StoreError, match="a table in the state 'adjourned'.*newer tarotd"):
            db.tables()
        with pytest.raises(StoreError, match="a deal in the state 'replayed'.*newer tarotd"):
            db.deals(TABLE)


def test_settings(store: Store) -> None:
    assert store.get_setting("name") is None
    store.set_setting("name", "Anne")
    store.set_setting("name", "Anne B.")
    assert store.get_setting("name") == "Anne B."


# --- the store: kill -9 ----------------------------------------------------------------------

WRITE_FOREVER = """
    import sys
    from pathlib import Path
    from protocol.replication.identity import Identity
    from protocol.replication.messages import Kind, sign_message
    from tarotd.store import Store, TableRecord, TableState

    table, alice = bytes(range(16)), Identity.from_private_bytes(bytes(range(32)))
    store = Store(Path(sys.argv[1]))
    store.save_table(TableRecord(table, "crash", 3, TableState.PLAYING, 0.0))
    store.start_deal(table, 0, 0)
    n = 0
    while True:
        signed = sign_message(alice, table, 0, Kind.PLAY, n % 3, {"n": n}, bytes(32))
        store.append_message(table, 0, signed, own=True)
        if n % 3 == 2:  # a burst of three, synced before it is sent
            store.sync()
            print(n, flush=True)
        n += 1
"""


@pytest.mark.daemons
def test_kill_9_mid_write_leaves_a_consistent_prefix_and_the_deal_resumes(tmp_path: Path) -> None:
    """Twice: a writer is killed while appending; every message it reported synced is there,
    nothing else is half there, and the second writer, replaying from 0, stores each once."""
    path = tmp_path / "tarot.db"
    reported = -1
    for _ in range(2):
        writer = python(WRITE_FOREVER, str(path))
        assert writer.stdout is not None
        target = reported + 150
        while reported < target:
            reported = max(reported, int(writer.stdout.readline()))
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        with Store(path) as db:
            transcript = db.messages(TABLE, 0)  # every row decodes and matches its digest
            idx = [i for (i,) in db._db.execute("SELECT idx FROM messages ORDER BY idx")]
        assert idx == list(range(len(transcript)))
        assert [m.payload for m in transcript] == [{"n": n} for n in range(len(transcript))]
        assert len(transcript) > reported


def test_a_home_too_deep_for_its_socket_is_refused_before_it_is_made(tmp_path: Path) -> None:
    """A Unix socket's path is at most 107 bytes: the daemon used to make the home, then end in
    ``OSError: AF_UNIX path too long`` at its API socket."""
    path = tmp_path / ("x" * 120)
    with pytest.raises(HomeError, match="too long a path for a home: its API socket's would be"):
        Home(path)
    assert not path.exists()


# --- the store: lost, and full ---------------------------------------------------------------


MADE_AND_KILLED = """
    import os, sys
    from protocol.rules.scoring import ScoreSheet
    from tarotd.store import Store, TableRecord, TableState
    store, playing = Store(sys.argv[1]), bytes(range(16))
    store.save_table(TableRecord(bytes(16), "finie", 3, TableState.FINISHED, 0.0))
    store.save_table(TableRecord(playing, "en cours", 3, TableState.PLAYING, 1.0))
    store.start_deal(playing, 0, 0)
    store.record_deal(playing, 0, ScoreSheet(["Anne", "Bruno", "Chloé"]), [{"deal": 0}])  \
# folded into the file
    store.start_deal(playing, 1, 1)
    store.save_seed(playing, 1, 0, bytes(32))
    os._exit(0)  # no close: a crash, the last commits in the log alone
"""


def test_an_emptied_database_in_a_home_with_keys_is_refused_in_one_line(tmp_path: Path) -> None:
    """A home with its identity had its database: a 0-byte one (a bad copy, a truncation) was
    lost, not new, and is refused, saying what to do; taken as new, the daemon came back to
    its table as a member that had forgotten everything, and said nothing.  In a home that
    has no key yet, the same file is a database being made."""
    path = tmp_path / "tarot.db"
    path.touch()
    with pytest.raises(StoreError) as refused:
        Store(path, established=True)
    text = str(refused.value)
    assert "\n" not in text and f"{path} is empty, but this home has its identity keys" in text
    assert "Restore it from a backup" in text and f"delete {path} and start again" in text
    assert path.stat().st_size == 0  # refused before anything was written
    Store(path).close()  # no keys: a new database


def test_a_database_whose_first_log_was_deleted_is_refused_too(tmp_path: Path) -> None:
    """A database of an older tarotd whose every commit was still in its log (a crash in the
    first deals), the log then deleted: only its first page is left, which reads as empty."""
    path = tmp_path / "tarot.db"
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT")
    raw.close()
    with sqlite3.connect(path) as raw:  # the schema folded in, then emptied as after such a loss
        raw.execute("DROP TABLE schema_version")
    raw.close()
    with pytest.raises(StoreError, match="is empty, but this home has its identity keys"):
        Store(path, established=True)
    # no file at all: new (tarotd --print-key made the keys)
    Store(tmp_path / "absent.db", established=True).close()


def test_the_log_is_folded_into_the_database_at_each_scored_deal(tmp_path: Path) -> None:
    """After each scored deal (and each opening) the log is empty and ``tarot.db`` alone —
    copied without its ``-wal`` — holds the deal; before, the first deals lived only in the
    log (about 4 MiB), and a copy of the database file kept nothing."""
    path = tmp_path / "tarot.db"
    log = path.with_name("tarot.db-wal")
    with Store(path) as db:
        assert log.stat().st_size == 0
        db.save_table(TableRecord(TABLE, "salle 1", 3, TableState.PLAYING, 1.5, b"manifest"))
        db.start_deal(TABLE, 0, 2)
        for n in range(200):
            db.append_message(TABLE, 0, message(n), own=False)
        db.sync()
        assert log.stat().st_size > 0
        sheet = ScoreSheet(["Anne", "Bruno", "Chloé"])
        sheet.add_void()
        db.record_deal(TABLE, 0, sheet, [{"deal": 0}])
        assert log.stat().st_size == 0
        (tmp_path / "copy").mkdir()
        copy = tmp_path / "copy" / "tarot.db"
        copy.write_bytes(path.read_bytes())
    # a copy made while it was open, without the log: taken for what it is
    with Store(copy) as alone:
        assert alone.sheet(TABLE) == sheet and len(alone.messages(TABLE, 0)) == 200
        assert alone.deals(TABLE) == [DealRecord(0, 2, DealState.SCORED)]
        assert alone.log_lost and alone.table(TABLE) == TableRecord(
            TABLE, "salle 1", 3, TableState.LOG_LOST, 1.5, b"manifest"
        )


@pytest.mark.daemons
@pytest.mark.parametrize("log", ["kept", "deleted"])
def test_an_unclean_stop_whose_log_is_deleted_stops_the_tables_it_was_playing(
    tmp_path: Path, log: str
) -> None:
    """A daemon killed, and its log deleted before the next start: what it wrote since the
    last checkpoint is gone, so a table it was playing must not be taken up (it could sign
    a second message for a slot it spoke in); the table is stopped and its sheet kept, and
    ``log_lost`` tells the daemon to say so.  With the log kept, SQLite replays it: nothing is
    lost, nothing stops.  A clean close leaves no log, and nothing to say either."""
    path = tmp_path / "tarot.db"
    made = python(MADE_AND_KILLED, str(path))
    assert made.wait() == 0
    wal = path.with_name("tarot.db-wal")
    assert wal.exists()
    if log == "deleted":
        wal.unlink()
        path.with_name("tarot.db-shm").unlink()
    with Store(path, established=True) as db:
        assert db.log_lost is (log == "deleted")
        states = {record.name: record.state for record in db.tables()}
        assert states == {
            "finie": TableState.FINISHED,
            "en cours": TableState.LOG_LOST if log == "deleted" else TableState.PLAYING,
        }
        # folded into the file: kept either way
        assert db.results(bytes(range(16))) == [{"deal": 0}]
        # what the log alone held
        assert (db.seed(bytes(range(16)), 1, 0) is None) is (log == "deleted")
    assert not wal.exists()  # closed cleanly
    with Store(path, established=True) as db:
        assert not db.log_lost


@pytest.mark.daemons
def test_a_full_disk_is_a_fault_that_keeps_nothing_half_and_clears(tmp_path: Path) -> None:
    """On a real full disk (a tmpfs): every write fails with a :class:`StoreFault` saying the
    disk is full, the store is left as it was (no transaction left open by the failed
    commit), and once there is room the same calls succeed and lose nothing."""
    with small_disk(tmp_path / "disk", "1m") as disk:
        with Store(disk / "tarot.db") as db:
            db.save_table(TableRecord(TABLE, "salle 1", 3, TableState.PLAYING, 1.5, b"manifest"))
            db.start_deal(TABLE, 0, 2)
            fill(disk)
            for n in range(100):
                db.append_message(TABLE, 0, message(n), own=False)
            with pytest.raises(StoreFault, match="database or disk is full") as full:
                db.sync()
            assert full.value.fault is LocalFault.DISK_FULL
            sheet = ScoreSheet(["Anne", "Bruno", "Chloé"])
            sheet.add_void()
            with pytest.raises(StoreFault):
                db.record_deal(TABLE, 0, sheet, [{"deal": 0}])
            free(disk)
            db.record_deal(TABLE, 0, sheet, [{"deal": 0}])
            assert len(db.messages(TABLE, 0)) == 100 and db.sheet(TABLE) == sheet
            assert db.deals(TABLE) == [DealRecord(0, 2, DealState.SCORED)]


@pytest.mark.parametrize(
    "error, fault",
    [
        (OSError(errno.ENOSPC, "No space left on device"), LocalFault.DISK_FULL),
        (OSError(errno.EMFILE, "Too many open files"), LocalFault.NO_DESCRIPTORS),
        (OSError(errno.EIO, "Input/output error"), LocalFault.DISK_ERROR),
        (OSError(errno.EACCES, "Permission denied"), None),
        (ValueError("a bug"), None),
    ],
)
def test_local_faults_are_told_from_everything_else(
    error: BaseException, fault: LocalFault | None
) -> None:
    assert LocalFault.of(error) is fault
