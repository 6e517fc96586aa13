"""The daemon's SQLite store: tables, members, deals, transcripts, seeds, score sheets,
settings and events.

The daemon's rule is *written before sent*: whatever it is about to tell a peer (a message it
signed, a seed it committed to) or to acknowledge (a message it received) is on the disk
first — a daemon that came back from a power cut having forgotten a message its peers hold
could sign a different one for the same slot (an equivocation, by accident), or wait forever
for one a peer no longer keeps.  The connection runs with

* ``journal_mode=WAL`` — a commit is one append to the log;
* ``synchronous=NORMAL`` — a commit survives a crash of the process (``kill -9``) at once,
  and reaches the disk when the log is fsynced: every write method but one does that before
  it returns (:meth:`Store.sync`).  The exception is :meth:`Store.append_message`, called
  for every message of a deal — about 600 a deal at five, sent and received.  It only
  queues the message; the queue is committed, in one transaction, by the next
  :meth:`Store.sync` or before any other write or read, and its caller calls
  :meth:`Store.sync` once before it sends or acknowledges what it appended (the runner
  before it hands out its messages; the mesh before an acknowledgement, through
  :meth:`Store.sync_later`, whose ``fdatasync`` runs off the event loop): one commit and one
  fsync for a burst of messages instead of one each.  A transaction per message cost a
  receiver ≈ 0.25 ms of CPU before it could show a card, and the fsyncs were a sixth of a
  daemon's busy time.  A crash loses only queued messages nobody was told of: a peer sends
  again what was never acknowledged, and what a seat here signed was synced before it left;
* ``foreign_keys=ON`` — a member, deal or seed of a table that was never saved is a bug in
  the caller, to be stopped here rather than found later as an orphan.

**Seeds are secrets.**  Until the reveal, a seat's seed opens its cards.  The file is created
mode 0600 (SQLite gives its ``-wal`` and ``-shm`` files the same mode) inside the 0700 home
(:mod:`tarotd.home`), and no method of this module logs or puts a seed in an error message.

Anything wrong with the file itself — not a database, another program's database, a schema
from a newer ``tarotd``, a damaged row — is a :class:`StoreError` saying which file and what
to do, never a bare ``sqlite3`` exception.  So is a database **lost**: a home that has its
identity keys was used, and its database with them, so an empty ``tarot.db`` there (truncated
by a bad copy, or only the header left after its log was deleted) is refused rather than
taken for a fresh one — the daemon would come back to its table as a member that forgot
everything (:class:`Store`, ``established``).  A fault of this machine's that clears — the
disk full, an I/O error, no descriptor free — is a :class:`StoreFault`, saying which
(:class:`LocalFault`): the caller waits for it to clear and calls again (every write here may
be made twice), and no peer is blamed for it.

**The space it takes** is the database, which keeps every transcript (they are the proofs),
and the log beside it, which is bounded: folded into the database (a checkpoint) and emptied
at every opening, when a table starts and after every scored deal; by SQLite itself whenever
it passes :data:`LOG_PAGES` pages (4 MiB); and cut back to :data:`LOG_LIMIT` bytes after each
of those.  Between deals ``tarot.db`` alone holds everything but the deal being played.

**An unclean stop without its log.**  Every opening writes a mark into the database and folds
it into the file at once; a clean close removes it.  A mark found with no ``tarot.db-wal``
beside the file means that a daemon stopped without closing (a crash, a power cut) and that
its log, the commits since the last checkpoint, was deleted (or the file was copied alone):
what this daemon signed and received since then is gone, so no table it was playing is taken
up again — it could sign a second message for a slot it already spoke in (each such table is
set to :attr:`TableState.LOG_LOST`, its sheet kept, and :attr:`Store.log_lost` says so).

The connection is used from the daemon's one asyncio thread; every write is a handful of
statements, short enough not to stall the loop.  The one other thread,
:meth:`Store.sync_later`'s, never touches the connection: it opens the log's file and syncs
it.
"""

from __future__ import annotations

import enum
import errno
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import msgpack

from protocol.replication.messages import Message, MessageError, decode, encode
from protocol.rules.scoring import ScoreSheet, ScoreSheetError


class StoreError(Exception):
    """The store cannot do what was asked; the text names the file and says what to do."""


class LocalFault(enum.Enum):
    """A fault of this machine's that keeps the daemon from writing its home, and that clears
    — space freed, descriptors closed, the disk back.  Nobody else's doing: a table waits for
    it to clear, and no peer is ever blamed for it."""

    DISK_FULL = "disk-full"
    DISK_ERROR = "disk-error"
    NO_DESCRIPTORS = "no-descriptors"

    @property
    def said(self) -> str:
        """What happened, as the log and the local API say it."""
        return _FAULT_WORDS[self][0]

    @property
    def clears(self) -> str:
        """What it takes for the fault to clear, as they say it."""
        return _FAULT_WORDS[self][1]

    @classmethod
    def of(cls, error: BaseException) -> LocalFault | None:
        """The fault behind ``error`` — a :class:`StoreFault`, an ``OSError`` or an SQLite
        error for one of these — or None for anything else (a bug, a damaged file)."""
        if isinstance(error, StoreFault):
            return error.fault
        if isinstance(error, OSError):
            return _ERRNO_FAULTS.get(error.errno or 0)
        if isinstance(error, sqlite3.Error):
            code = getattr(error, "sqlite_errorcode", None)
            # an extended code's primary
            return None if code is None else _SQLITE_FAULTS.get(code & 0xFF)
        return None


_FAULT_WORDS: Final = {
    LocalFault.DISK_FULL: ("the disk of the home is full", "there is room on the disk again"),
    LocalFault.DISK_ERROR: ("the disk of the home fails (an I/O error)", "the disk answers again"),
    LocalFault.NO_DESCRIPTORS: (
        "the daemon has no file descriptor left",
        "descriptors are free again",
    ),
}
_ERRNO_FAULTS: Final = {
    errno.ENOSPC: LocalFault.DISK_FULL,
    errno.EDQUOT: LocalFault.DISK_FULL,
    errno.EIO: LocalFault.DISK_ERROR,
    errno.EROFS: LocalFault.DISK_ERROR,
    errno.EMFILE: LocalFault.NO_DESCRIPTORS,
    errno.ENFILE: LocalFault.NO_DESCRIPTORS,
}
_SQLITE_FAULTS: Final = {
    sqlite3.SQLITE_FULL: LocalFault.DISK_FULL,
    sqlite3.SQLITE_IOERR: LocalFault.DISK_ERROR,
    # once open, what SQLite cannot open is for want of a descriptor
    sqlite3.SQLITE_CANTOPEN: LocalFault.NO_DESCRIPTORS,
}


class StoreFault(StoreError):
    """The store could not write or read for a :class:`LocalFault` of this machine's.  What was
    being written may or may not be on the disk: the same call, made again once the fault
    has cleared, does no harm."""

    def __init__(self, message: str, fault: LocalFault) -> None:
        super().__init__(message)
        self.fault = fault


def _failed(what: str, error: OSError | sqlite3.Error) -> StoreError:
    """The error for ``what`` having failed with ``error``: a :class:`StoreFault` if a fault
    of the machine's is behind it."""
    fault = LocalFault.of(error)
    message = f"{what}: {error}"
    return StoreError(message) if fault is None else StoreFault(message, fault)


class TableState(enum.StrEnum):
    """Where a table is, as its row in the store says."""

    PLAYING = "playing"
    FINISHED = "finished"
    #: Being played under protocol ``tarot/v1`` when its home was opened by a daemon of
    #: ``tarot/v2``: it is kept — score sheet, members, transcripts — and never taken up
    #: again, since its messages are of a protocol no member speaks any more (and whose lock
    #: step let other seats read hands).
    PROTOCOL_V1 = "protocol-v1"
    #: Being played under protocol ``tarot/v2`` when its home was opened by a daemon of
    #: ``tarot/v3``: kept like a v1 table and never taken up again — its deck is in Ed25519's
    #: subgroup, not in the ristretto255 of every member now.
    PROTOCOL_V2 = "protocol-v2"
    #: Being played when the daemon stopped uncleanly and its log was then lost (module
    #: docstring): never taken up again, its sheet kept as far as the database has it.
    LOG_LOST = "log-lost"
    #: Left by its members for a new table without one of them, gone for good (``regroup``):
    #: its sheet kept, never taken up again.
    REGROUPED = "regrouped"


class DealState(enum.StrEnum):
    """Where a deal is, as its row in the store says."""

    STARTED = "started"  #: written by :meth:`Store.start_deal`
    SCORED = "scored"  #: written by :meth:`Store.record_deal`


_State = TypeVar("_State", TableState, DealState)


@dataclass(frozen=True)
class TableRecord:
    table_id: bytes
    name: str
    seats: int
    state: TableState
    created: float  #: seconds since the epoch
    manifest: bytes | None = None  #: msgpack of the signed manifest, once every member signed


@dataclass(frozen=True)
class MemberRecord:
    seat: int
    key: bytes  #: the seat's Ed25519 public key
    name: str
    endpoint: str  #: the peer endpoint of the daemon hosting the seat


@dataclass(frozen=True)
class DealRecord:
    deal: int
    dealer: int
    state: DealState


#: the log is folded into the database when it passes this many pages (SQLite's default)
LOG_PAGES: Final = 1000
#: bytes the emptied log is cut back to (it is kept, for reuse, up to this)
LOG_LIMIT: Final = 4 * 1024 * 1024
#: The settings row that says a daemon has the database open (module docstring).
_OPEN_MARK: Final = "store/open"
_SET_SETTING: Final = (
    "INSERT INTO settings (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)

_SCHEMA_V1: Final = (
    """CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT""",
    """CREATE TABLE tables (
        table_id BLOB NOT NULL PRIMARY KEY,
        name TEXT NOT NULL,
        seats INTEGER NOT NULL,
        manifest BLOB,
        state TEXT NOT NULL,
        created REAL NOT NULL
    ) STRICT""",
    """CREATE TABLE members (
        table_id BLOB NOT NULL REFERENCES tables ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        key BLOB NOT NULL,
        name TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        PRIMARY KEY (table_id, seat),
        UNIQUE (table_id, key)
    ) STRICT""",
    """CREATE TABLE deals (
        table_id BLOB NOT NULL REFERENCES tables ON DELETE CASCADE,
        deal INTEGER NOT NULL,
        dealer INTEGER NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (table_id, deal)
    ) STRICT""",
    # A message references its table, not its deal row: a faster peer's first message of
    # the next deal can arrive before this daemon has started that deal, and must be kept.
    """CREATE TABLE messages (
        table_id BLOB NOT NULL REFERENCES tables ON DELETE CASCADE,
        deal INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        digest BLOB NOT NULL UNIQUE,
        seat INTEGER NOT NULL,
        kind TEXT NOT NULL,
        data BLOB NOT NULL,
        own INTEGER NOT NULL CHECK (own IN (0, 1)),
        PRIMARY KEY (table_id, deal, idx)
    ) STRICT""",
    """CREATE TABLE seeds (
        table_id BLOB NOT NULL,
        deal INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        seed BLOB NOT NULL,
        PRIMARY KEY (table_id, deal, seat),
        FOREIGN KEY (table_id, deal) REFERENCES deals ON DELETE CASCADE
    ) STRICT""",
    """CREATE TABLE scores (
        table_id BLOB NOT NULL PRIMARY KEY REFERENCES tables ON DELETE CASCADE,
        sheet TEXT NOT NULL
    ) STRICT""",
    # Never written: the daemons a daemon knows are its discovery's and its tables' members.
    """CREATE TABLE peers (
        key BLOB NOT NULL PRIMARY KEY,
        name TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        last_seen REAL NOT NULL
    ) STRICT""",
    """CREATE TABLE mesh_outbox (
        peer BLOB NOT NULL,
        seq INTEGER NOT NULL,
        channel TEXT NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (peer, seq)
    ) STRICT""",
    """CREATE TABLE mesh_delivered (
        peer BLOB NOT NULL PRIMARY KEY,
        last_seq INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE settings (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT""",
)

#: Version 2: the mesh keeps what it has not had acknowledged in memory, and a restarted
#: daemon sends its own messages again from the transcripts (``TableRunner.resume``): the
#: outbox and delivery marks of version 1 were never written.
_SCHEMA_V2: Final = (
    "DROP TABLE mesh_outbox",
    "DROP TABLE mesh_delivered",
)

#: Version 3 is the first of protocol ``tarot/v2``: the tables still being played stop.
_SCHEMA_V3: Final = (
    f"UPDATE tables SET state = '{TableState.PROTOCOL_V1}' WHERE state = '{TableState.PLAYING}'",
)

#: Version 4: events (issue 23).  ``event_entries`` is an event's record, entry by entry, as
#: the organiser appended it (``protocol/event/event.py``: the record is all an event's state);
#: ``event_notes`` what a daemon keeps beside it — its role and the organiser's endpoint, the
#: row signatures it made (sent again until the record holds the row).
_SCHEMA_V4: Final = (
    """CREATE TABLE event_entries (
        event_id BLOB NOT NULL,
        idx INTEGER NOT NULL,
        entry BLOB NOT NULL,
        PRIMARY KEY (event_id, idx)
    ) STRICT""",
    """CREATE TABLE event_notes (
        event_id BLOB NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        PRIMARY KEY (event_id, key)
    ) STRICT""",
)

#: Version 5: each scored deal's certificate (issue 35) — its closing chain, the transcript
#: through the score signatures of the members that answered, or the quorum's votes that
#: voided it (msgpack: a list of messages, or a map of seat → vote): kept and served to a
#: member that lacks the deal, whenever this daemon runs.
_SCHEMA_V5: Final = (
    """CREATE TABLE closings (
        table_id BLOB NOT NULL,
        deal INTEGER NOT NULL,
        chain BLOB NOT NULL,
        PRIMARY KEY (table_id, deal)
    ) STRICT""",
)

#: Version 6 is the first of protocol ``tarot/v3`` (the deck on ristretto255): the tables still
#: being played stop, their sheets kept.
_SCHEMA_V6: Final = (
    f"UPDATE tables SET state = '{TableState.PROTOCOL_V2}' WHERE state = '{TableState.PLAYING}'",
)

#: ``_MIGRATIONS[n]`` takes the schema from version ``n`` to ``n + 1`` (0 is an empty file).
#: A change of schema is a new entry here, never an edit of an old one.
_MIGRATIONS: Final = (_SCHEMA_V1, _SCHEMA_V2, _SCHEMA_V3, _SCHEMA_V4, _SCHEMA_V5, _SCHEMA_V6)
SCHEMA_VERSION: Final = len(_MIGRATIONS)


class Store:
    """The daemon's database at ``path``, created if absent and migrated to
    :data:`SCHEMA_VERSION`.  Use as a context manager, or call :meth:`close`.

    ``established``: the home already has its identity keys, so a database that is there was
    made and used with them — empty, it was lost, and is refused (:class:`StoreError`) rather
    than started again.  An absent file is new either way (its keys may have been made
    first, ``tarotd --print-key``; or the player deleted it to start over on purpose).
    """

    def __init__(self, path: str | os.PathLike[str], *, established: bool = False) -> None:
        self.path = Path(path)
        #: the last daemon stopped uncleanly and its log is gone (module docstring)
        self.log_lost = False
        self._commits = 0  #: commits that changed the database, counted from the opening
        self._synced = 0  #: of those, how many are known to be on the disk (see :meth:`sync`)
        self._synced_lock = threading.Lock()  #: :meth:`sync_later`'s thread moves ``_synced`` too
        self._syncer: ThreadPoolExecutor | None = None  #: the thread of :meth:`sync_later`
        #: Messages appended and not yet committed, by digest, in the order of acceptance.
        self._queued: dict[bytes, tuple[object, ...]] = {}
        self._tables_seen: set[bytes] = set()  #: tables known to exist (never deleted)
        self._closed = False
        lost_if_empty = established and self.path.exists()
        log_kept = Path(f"{self.path}-wal").exists()
        try:
            _create_private_file(self.path)
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise _failed(f"could not open the database {self.path}", exc) from exc
        try:
            if lost_if_empty:
                self._refuse_if_empty()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute(f"PRAGMA wal_autocheckpoint={LOG_PAGES}")
            self._db.execute(f"PRAGMA journal_size_limit={LOG_LIMIT}")
            self._migrate()
            self._mark_open(log_kept)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if LocalFault.of(exc) is not None:
                raise _failed(f"could not open the database {self.path}", exc) from exc
            raise StoreError(
                f"{self.path} is not a usable tarot database (SQLite says: {exc}). If it is "
                f"damaged, restore it from a backup; otherwise move it away and start again to "
                f"begin with an empty one (its tables, transcripts and score sheets stay in the "
                f"file you moved)"
            ) from None
        except StoreError:
            self._db.close()
            raise

    def close(self) -> None:
        """Commit what is queued (synced or not: a clean stop loses nothing), say the stop
        was clean (the mark of :meth:`_mark_open` removed), and close — after a
        :meth:`sync_later` still running, whose caller is told it is done.  SQLite folds the
        log into the database as it closes, and deletes it."""
        if self._closed:
            return
        try:
            self._commit_queued()
            # SQLite's checkpoint syncs it
            with self._write("mark the database closed", durable=False) as db:
                db.execute("DELETE FROM settings WHERE key = ?", (_OPEN_MARK,))
        finally:
            self._closed = True
            if self._syncer is not None:
                self._syncer.shutdown(wait=True)
            self._db.close()

    def _commit_queued(self) -> None:
        if self._queued:
            with self._write("save the messages received", durable=False):
                pass  # the queue goes first in every write

    def sync(self) -> None:
        """Put every commit so far on the disk (one ``fdatasync`` of the write-ahead log, as
        SQLite does), if any is not there yet: what ``synchronous=FULL`` does after each
        commit.  (``fsync`` would also write the file's times, for nothing: ten times slower
        here under load.)"""
        self._commit_queued()
        self._sync_to(self._commits)

    def sync_later(self) -> Future[None] | None:
        """What :meth:`sync` does, its ``fdatasync`` on a thread of the store's: the future is
        done once every commit so far is on the disk (None: they already are).  For the
        mesh's acknowledgements, which wait for it — and not the daemon's event loop, which
        takes the next card in meanwhile: with five daemons on two cores an ``fdatasync``
        took 1–9 ms, and a receiver's loop spent a fifth of its busy time in those of its
        acknowledgements, holding up the card a player waited to see (measured: README,
        "Performance")."""
        self._commit_queued()
        target = self._commits
        if self._synced >= target:
            return None
        if self._syncer is None:
            self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tarotd-sync")
        return self._syncer.submit(self._sync_to, target)

    def _sync_to(self, commits: int) -> None:
        """The first ``commits`` commits on the disk; on the caller's thread or the syncer's,
        so it touches no connection, only the log's file."""
        if self._synced >= commits:
            return
        self._fdatasync_log()
        with self._synced_lock:
            self._synced = max(self._synced, commits)

    def _fdatasync_log(self) -> None:
        try:
            fd = os.open(f"{self.path}-wal", os.O_RDONLY)
        except FileNotFoundError:  # no log: every commit is in the database file, synced by SQLite
            return
        except OSError as exc:
            raise _failed(f"could not open the log of {self.path} to sync it", exc) from exc
        try:
            os.fdatasync(fd)
        except OSError as exc:
            raise _failed(f"could not sync the log of {self.path} to the disk", exc) from exc
        finally:
            os.close(fd)

    def checkpoint(self) -> None:
        """Fold the log into the database file and empty it (SQLite's ``TRUNCATE``
        checkpoint, which syncs both): from now on ``tarot.db`` alone holds every commit.
        Done at each opening and scored deal, and by the daemon when a table starts."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:
            raise _failed(f"could not fold the log of {self.path} into it", exc) from exc

    def _mark_open(self, log_kept: bool) -> None:
        """Write the mark that a daemon has the database open, into the file itself (a
        checkpoint), so that an unclean stop whose log is then lost is known at the next
        opening; and if that is what came before, stop the tables that were being played
        (module docstring)."""
        if not log_kept and self.get_setting(_OPEN_MARK) is not None:
            self.log_lost = True
            with self._write("stop the tables whose log is lost") as db:
                db.execute(
                    "UPDATE tables SET state = ? WHERE state = ?",
                    (TableState.LOG_LOST, TableState.PLAYING),
                )
        self.set_setting(_OPEN_MARK, "open")
        self.checkpoint()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- schema

    def _refuse_if_empty(self) -> None:
        """An empty database where one was made and used is lost (:class:`Store`,
        ``established``): refused before anything is written to it, so that it can still be
        looked at, or restored over, as it was found."""
        if self._schema_version() == 0:
            raise StoreError(
                f"{self.path} is empty, but this home has its identity keys: the database made "
                "with them is "
                f"lost (emptied, or only its first page left after its log {self.path.name}-wal "
                "was deleted), and "
                "with it this daemon's tables, seeds and score sheets. Restore it from a backup, "
                "with its "
                f"{self.path.name}-wal if there was one; or, to go on under the same identity "
                "with an empty "
                f"database, delete {self.path} and start again"
            )

    def _migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION`, all steps in one transaction, so a
        crash mid-way leaves the old version intact rather than half of the new one."""
        with self._write("upgrade the schema") as db:
            version = self._schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer tarotd (schema version {version}; this "
                    f"one reads up to {SCHEMA_VERSION}). Upgrade tarotd, or move the file away to "
                    f"start with an empty database"
                )
            if version == SCHEMA_VERSION:
                return
            for statements in _MIGRATIONS[version:]:
                for statement in statements:
                    db.execute(statement)
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    def _schema_version(self) -> int:
        names = {
            name
            for (name,) in self._db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
            if not name.startswith("sqlite_")
        }
        if "schema_version" not in names:
            if names:
                raise StoreError(
                    f"{self.path} is an SQLite database of some other program (tables: "
                    f"{', '.join(sorted(names))}), not a tarot database; move it away, or "
                    f"choose another tarot home"
                )
            return 0
        rows = self._db.execute("SELECT version FROM schema_version").fetchall()
        if len(rows) != 1 or type(rows[0][0]) is not int:
            raise StoreError(
                f"{self.path}: the schema version is damaged ({len(rows)} rows); restore the "
                f"file from a backup, or move it away to start with an empty database"
            )
        version: int = rows[0][0]
        return version

    @contextmanager
    def _write(self, what: str, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction, committed on leaving (rolled back on an exception) and, if
        ``durable``, on the disk when the block ends.  ``IMMEDIATE`` takes the write lock at
        once, so the block never fails half-way on a busy database."""
        changes = self._db.total_changes
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if self._queued:
                    self._insert_queued()
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                # A COMMIT that failed (the disk full) may leave the transaction open, and
                # the next BEGIN would fail for that instead: SQLite says to roll back.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise _failed(f"could not {what} in {self.path}", exc) from exc
        self._queued.clear()  # committed with the rest
        if self._db.total_changes != changes:
            self._commits += 1
        if durable:
            self.sync()

    def _insert_queued(self) -> None:
        """Inside the transaction being written: the queued messages first, in order (a
        message is on the disk before anything written after it).  The queue is emptied
        once the transaction commits; a failure leaves it for the next try."""
        self._db.executemany(
            "INSERT INTO messages (table_id, deal, idx, digest, seat, kind, data, own)"
            " SELECT ?, ?, coalesce(max(idx) + 1, 0), ?, ?, ?, ?, ?"
            " FROM messages WHERE table_id = ? AND deal = ?"
            " ON CONFLICT (digest) DO NOTHING",
            self._queued.values(),
        )

    def _read(self, what: str, sql: str, parameters: tuple[object, ...]) -> list[Any]:
        self._commit_queued()  # a read sees every message appended
        return self._query(what, sql, parameters)

    def _query(self, what: str, sql: str, parameters: tuple[object, ...]) -> list[Any]:
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            raise _failed(f"could not read {what} from {self.path}", exc) from exc

    def _insert_once(
        self,
        what: str,
        insert: str,
        select: str,
        key: tuple[object, ...],
        values: tuple[object, ...],
    ) -> None:
        """Insert the row ``key + values``; if ``key`` is taken, its row must hold ``values``.

        For what has been sent or committed to: writing it again after a restart is fine,
        but other values under the same key would make this daemon contradict itself.
        The error does not show the values, which may be secret.
        """
        with self._write(f"save {what}") as db:
            inserted = db.execute(insert, key + values).rowcount
            if not inserted and tuple(db.execute(select, key).fetchone()) != values:
                raise StoreError(
                    f"{self.path} already holds a different {what}; it cannot be replaced"
                )

    # -- tables and members

    def save_table(self, table: TableRecord) -> None:
        """Insert the table, or update every field of an existing one.  (An update, not a
        replace: replacing the row would delete its members, deals and transcripts.)"""
        with self._write(f"save table {table.table_id.hex()}") as db:
            db.execute(
                "INSERT INTO tables (table_id, name, seats, manifest, state, created)"
                " VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET name = excluded.name,"
                " seats = excluded.seats, manifest = excluded.manifest,"
                " state = excluded.state, created = excluded.created",
                (
                    table.table_id,
                    table.name,
                    table.seats,
                    table.manifest,
                    table.state,
                    table.created,
                ),
            )

    def table(self, table_id: bytes) -> TableRecord | None:
        rows = self._read(
            "a table",
            "SELECT table_id, name, seats, state, created, manifest FROM tables WHERE table_id = ?",
            (table_id,),
        )
        return self._table_record(rows[0]) if rows else None

    def tables(self) -> list[TableRecord]:
        """Every table, oldest first."""
        rows = self._read(
            "the tables",
            "SELECT table_id, name, seats, state, created, manifest FROM tables"
            " ORDER BY created, table_id",
            (),
        )
        return [self._table_record(row) for row in rows]

    def _table_record(self, row: Sequence[Any]) -> TableRecord:
        table_id, name, seats, state, created, manifest = row
        return TableRecord(
            table_id, name, seats, self._state(TableState, state, "a table"), created, manifest
        )

    def _state(self, states: type[_State], value: str, what: str) -> _State:
        """The state ``value`` read from a row of ``what``; a :class:`StoreError` if this
        ``tarotd`` does not know it."""
        try:
            return states(value)
        except ValueError:
            raise StoreError(
                f"{self.path} holds {what} in the state {value!r}, which this tarotd does not "
                "know: "
                "it was written by a newer tarotd — run that one"
            ) from None

    def set_table_state(self, table_id: bytes, state: TableState) -> None:
        with self._write(f"set the state of table {table_id.hex()}") as db:
            changed = db.execute(
                "UPDATE tables SET state = ? WHERE table_id = ?", (state, table_id)
            )
            if changed.rowcount == 0:
                raise StoreError(f"{self.path} has no table {table_id.hex()}")

    def save_members(self, table_id: bytes, members: Iterable[MemberRecord]) -> None:
        """Make ``members`` the table's whole membership (it changes while the table forms)."""
        with self._write(f"save the members of table {table_id.hex()}") as db:
            db.execute("DELETE FROM members WHERE table_id = ?", (table_id,))
            db.executemany(
                "INSERT INTO members (table_id, seat, key, name, endpoint) VALUES (?, ?, ?, ?, ?)",
                [(table_id, m.seat, m.key, m.name, m.endpoint) for m in members],
            )

    def members(self, table_id: bytes) -> list[MemberRecord]:
        """The table's members by seat."""
        rows = self._read(
            "the members",
            "SELECT seat, key, name, endpoint FROM members WHERE table_id = ? ORDER BY seat",
            (table_id,),
        )
        return [MemberRecord(*row) for row in rows]

    # -- deals, seeds and transcripts

    def start_deal(self, table_id: bytes, deal: int, dealer: int) -> bool:
        """Record deal ``deal`` with state :attr:`DealState.STARTED`.  True if it is new; False if
        it was already recorded with this dealer (a restart replaying its steps).  Another
        dealer for a recorded deal is a :class:`StoreError`."""
        with self._write(f"start deal {deal} of table {table_id.hex()}") as db:
            inserted = db.execute(
                "INSERT INTO deals (table_id, deal, dealer, state) VALUES (?, ?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (table_id, deal, dealer, DealState.STARTED),
            ).rowcount
            if inserted:
                return True
            (stored,) = db.execute(
                "SELECT dealer FROM deals WHERE table_id = ? AND deal = ?", (table_id, deal)
            ).fetchone()
            if stored != dealer:
                raise StoreError(
                    f"{self.path}: deal {deal} of table {table_id.hex()} was started with "
                    f"dealer {stored}, not {dealer}"
                )
            return False

    def deals(self, table_id: bytes) -> list[DealRecord]:
        """The table's deals in order."""
        rows = self._read(
            "the deals",
            "SELECT deal, dealer, state FROM deals WHERE table_id = ? ORDER BY deal",
            (table_id,),
        )
        return [
            DealRecord(deal, dealer, self._state(DealState, state, "a deal"))
            for deal, dealer, state in rows
        ]

    def record_deal(
        self,
        table_id: bytes,
        deal: int,
        sheet: ScoreSheet,
        results: Sequence[Mapping[str, object]],
        closing: Sequence[Message] | Mapping[int, bytes] = (),
    ) -> None:
        """Deal ``deal`` is scored: the table's score sheet and results (the rows of ``tarot
        scores --json``) with it, its certificate — the closing chain, or the votes that
        voided it — and the deal :attr:`DealState.SCORED`, in
        one transaction.  A crash or a full disk leaves them all as they were or all new —
        never a sheet holding a deal whose state says it is still being played, which taken up
        again would be scored twice.  Then the log is folded into the database: between deals
        ``tarot.db`` alone holds every scored deal."""
        with self._write(f"record deal {deal} of table {table_id.hex()}") as db:
            if closing:
                chain = msgpack.packb(
                    [encode(m) for m in closing] if isinstance(closing, Sequence) else closing,
                    use_bin_type=True,
                )
                db.execute(
                    "INSERT INTO closings (table_id, deal, chain) VALUES (?, ?, ?)"
                    " ON CONFLICT DO UPDATE SET chain = excluded.chain",
                    (table_id, deal, chain),
                )
            changed = db.execute(
                "UPDATE deals SET state = ? WHERE table_id = ? AND deal = ?",
                (DealState.SCORED, table_id, deal),
            )
            if changed.rowcount == 0:
                raise StoreError(f"{self.path} has no deal {deal} of table {table_id.hex()}")
            db.execute(
                "INSERT INTO scores (table_id, sheet) VALUES (?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET sheet = excluded.sheet",
                (table_id, sheet.to_json()),
            )
            db.execute(_SET_SETTING, (_results_key(table_id), json.dumps(list(results))))
        self.checkpoint()

    def closing(self, table_id: bytes, deal: int) -> list[Message] | dict[int, bytes] | None:
        """The certificate of a scored deal (:meth:`record_deal`): its closing chain, or the
        votes that voided it (seat → signature); None if this daemon has none — the deal is
        not scored here, or was scored before certificates were kept."""
        rows = self._read(
            "a closing",
            "SELECT chain FROM closings WHERE table_id = ? AND deal = ?",
            (table_id, deal),
        )
        if not rows:
            return None
        try:
            kept = msgpack.unpackb(rows[0][0], raw=False, strict_map_key=False)
            if isinstance(kept, dict):
                return {int(seat): bytes(vote) for seat, vote in kept.items()}
            return [decode(data) for data in kept]
        except (MessageError, ValueError, TypeError, msgpack.ExtraData) as exc:
            raise StoreError(
                f"{self.path}: the closing of deal {deal} is damaged ({exc})"
            ) from None

    def results(self, table_id: bytes) -> list[dict[str, object]]:
        """The table's results as :meth:`record_deal` last saved them, oldest deal first."""
        text = self.get_setting(_results_key(table_id))
        results: list[dict[str, object]] = json.loads(text) if text is not None else []
        return results

    def save_seed(self, table_id: bytes, deal: int, seat: int, seed: bytes) -> None:
        """Keep a seat's seed for a deal, before its commitment is sent.  Saving the same seed
        again is a no-op; a different one is refused, because after a restart the seat must
        go on with the seed it committed to, not draw a new one."""
        self._insert_once(
            f"seed for seat {seat} of deal {deal} of table {table_id.hex()}",
            "INSERT INTO seeds (table_id, deal, seat, seed) VALUES (?, ?, ?, ?) ON CONFLICT DO "
            "NOTHING",
            "SELECT seed FROM seeds WHERE table_id = ? AND deal = ? AND seat = ?",
            (table_id, deal, seat),
            (seed,),
        )

    def seed(self, table_id: bytes, deal: int, seat: int) -> bytes | None:
        rows = self._read(
            "a seed",
            "SELECT seed FROM seeds WHERE table_id = ? AND deal = ? AND seat = ?",
            (table_id, deal, seat),
        )
        seed: bytes | None = rows[0][0] if rows else None
        return seed

    def append_message(self, table_id: bytes, deal: int, message: Message, own: bool) -> bool:
        """Add ``message`` to the end of the deal's transcript as this daemon accepted it;
        ``own`` marks a message signed by a seat hosted here.  Returns False, and changes
        nothing, if a message with the same digest is already stored: a message can arrive
        twice (a resend after a reconnection), and is kept once.

        The message is queued: it is committed by the next :meth:`sync`, write or read, and
        survives a power cut after the next :meth:`sync` (module docstring)."""
        if (message.table_id, message.deal) != (table_id, deal):
            raise ValueError(
                f"{message!r} belongs to deal {message.deal} of table {message.table_id.hex()}, "
                f"not deal {deal} of table {table_id.hex()}"
            )
        self._check_table(table_id, f"save {message!r}")
        digest = message.digest
        if digest in self._queued or self._stored(digest):
            return False
        self._queued[digest] = (
            table_id,
            deal,
            digest,
            message.seat,
            message.kind.value,
            encode(message),
            int(own),
            table_id,
            deal,
        )
        return True

    def _check_table(self, table_id: bytes, what: str) -> None:
        """The table exists: checked when the message is queued, not when it is committed
        with some later write, which would then fail for a reason of its own."""
        if table_id in self._tables_seen:
            return
        if not self._read("a table", "SELECT 1 FROM tables WHERE table_id = ?", (table_id,)):
            raise StoreError(
                f"could not {what} in {self.path}: there is no table {table_id.hex()} here"
            )
        self._tables_seen.add(table_id)

    def _stored(self, digest: bytes) -> bool:
        """Committed already (a look that leaves the queue queued)."""
        return bool(self._query("a message", "SELECT 1 FROM messages WHERE digest = ?", (digest,)))

    def messages(self, table_id: bytes, deal: int) -> list[Message]:
        """The deal's transcript in the order this daemon accepted it.  Each row is decoded
        and checked against its digest; a damaged row is a :class:`StoreError` naming it."""
        rows = self._read(
            "a transcript",
            "SELECT idx, digest, data FROM messages WHERE table_id = ? AND deal = ? ORDER BY idx",
            (table_id, deal),
        )
        transcript: list[Message] = []
        for idx, digest, data in rows:
            where = f"{self.path}: message {idx} of deal {deal} of table {table_id.hex()}"
            try:
                message = decode(data)
            except MessageError as exc:
                raise StoreError(f"{where} is damaged ({exc})") from None
            if message.digest != digest:
                raise StoreError(f"{where} is damaged (its bytes no longer match its digest)")
            transcript.append(message)
        return transcript

    # -- score sheets

    def sheet(self, table_id: bytes) -> ScoreSheet | None:
        rows = self._read(
            "a score sheet", "SELECT sheet FROM scores WHERE table_id = ?", (table_id,)
        )
        if not rows:
            return None
        try:
            return ScoreSheet.from_json(rows[0][0])
        except ScoreSheetError as exc:
            raise StoreError(
                f"{self.path}: the score sheet of table {table_id.hex()}: {exc}"
            ) from None

    # -- events

    def append_event_entries(self, event_id: bytes, start: int, entries: Sequence[bytes]) -> None:
        """Entries ``start``, ``start + 1``, … of an event's record, in one transaction, on the
        disk when it returns.  An index already held must hold the same bytes: a record is
        append-only, and a daemon that stored another entry there would contradict itself."""
        with self._write(f"save entries of event {event_id.hex()[:8]}") as db:
            for index, entry in enumerate(entries, start):
                inserted = db.execute(
                    "INSERT INTO event_entries (event_id, idx, entry) VALUES (?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (event_id, index, entry),
                ).rowcount
                if not inserted:
                    (held,) = db.execute(
                        "SELECT entry FROM event_entries WHERE event_id = ? AND idx = ?",
                        (event_id, index),
                    ).fetchone()
                    if held != entry:
                        raise StoreError(
                            f"{self.path} holds another entry {index} of event {event_id.hex()}"
                        )

    def event_entries(self, event_id: bytes) -> list[bytes]:
        rows = self._read(
            "an event's record",
            "SELECT entry FROM event_entries WHERE event_id = ? ORDER BY idx",
            (event_id,),
        )
        return [entry for (entry,) in rows]

    def events(self) -> list[bytes]:
        """The ids of the events this daemon holds a record or notes of, in the order it took
        them up (its first note of each: an event opened or joined last comes last)."""
        rows = self._read(
            "the events",
            "SELECT event_id FROM (SELECT event_id FROM event_entries UNION SELECT event_id"
            " FROM event_notes) AS e ORDER BY (SELECT MIN(rowid) FROM event_notes AS n"
            " WHERE n.event_id = e.event_id) NULLS LAST, event_id",
            (),
        )
        return [event_id for (event_id,) in rows]

    def set_event_note(self, event_id: bytes, key: str, value: bytes) -> None:
        with self._write(f"save a note of event {event_id.hex()[:8]}") as db:
            db.execute(
                "INSERT INTO event_notes (event_id, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (event_id, key) DO UPDATE SET value = excluded.value",
                (event_id, key, value),
            )

    def event_notes(self, event_id: bytes) -> dict[str, bytes]:
        rows = self._read(
            "an event's notes", "SELECT key, value FROM event_notes WHERE event_id = ?", (event_id,)
        )
        return {key: value for key, value in rows}

    # -- settings

    def get_setting(self, key: str) -> str | None:
        rows = self._read("a setting", "SELECT value FROM settings WHERE key = ?", (key,))
        value: str | None = rows[0][0] if rows else None
        return value

    def set_setting(self, key: str, value: str) -> None:
        with self._write(f"save setting {key!r}") as db:
            db.execute(_SET_SETTING, (key, value))


def _results_key(table_id: bytes) -> str:
    """The settings row of a table's results (:meth:`Store.record_deal`)."""
    return f"results/{table_id.hex()}"


def _create_private_file(path: Path) -> None:
    """Create the database file mode 0600 before SQLite opens it (SQLite would create it
    with the umask's mode, and the seeds would sit in a world-readable file until a chmod);
    narrow the mode of an existing file that is wider."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
