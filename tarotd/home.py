"""The daemon's home directory: its identity keys, its database, its socket, its lock.

One home is one daemon.  Everything ``tarotd`` keeps lives in one private directory::

    identity.key    the daemon's own Ed25519 key (the "main" seat)
    keys/NAME.key   one more key per extra seat it hosts ("bot-1", "bot-2", ...)
    tarot.db        the SQLite store: tables, transcripts, seeds, score sheets (tarotd.store),
                    with SQLite's tarot.db-wal and tarot.db-shm beside it
    api.sock        the local client API, a Unix socket (tarotd.api)
    daemon.pid      the lock that keeps a second daemon out, and the pid of the one inside
    scores.json     the score sheet of the last table, for ``tarot scores`` (daemon running or not)
    proofs/         the proof files of the cheating this daemon's seats found (tarotd.runner)
    .ahead.tmp      (here and in proofs/) the next file written, held open ahead (tarotd.ahead)

The log is not kept here: the daemon writes it to its standard error, for whoever started
it to keep or not.  The directory is mode 0700, and the keys, the database, the socket and
the score sheet in it 0600: the keys sign as the player, and the database holds the deal
seeds, which open the player's cards before the reveal.  Keeping it all in one place is what
lets ``--home DIR`` run several daemons side by side on one machine (tests, a player plus
bot daemons) without any of them stepping on another.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import logging
import os
import pwd
import re
import secrets
import sqlite3
import stat
from pathlib import Path
from types import TracebackType
from typing import Final

from protocol.replication.identity import PRIVATE_KEY_SIZE, Identity
from tarotd.api import MAX_SOCKET_PATH, staging_path

log = logging.getLogger(__name__)

MAIN = "main"
#: A key name becomes a file name: keep it to characters that cannot escape ``keys/``.
_KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class HomeError(Exception):
    """The home directory, a key file or the lock cannot be used; the text says what to do."""


class Unwritable(enum.Enum):
    """Why the home could not be written, read from the system's error behind a failure: the
    player's to mend — a remount, a permission, some space — not a bug, so ``tarotd`` says it
    in one line and what to do rather than with a traceback."""

    READ_ONLY = "read-only"
    DENIED = "denied"
    FULL = "full"

    @classmethod
    def of(cls, error: BaseException, home: Path) -> Unwritable | None:
        """The cause behind ``error`` — itself, or what it was raised from (a
        :class:`HomeError` or a :class:`~tarotd.store.StoreError` wraps an ``OSError`` or an
        SQLite error) — or None for any other failure.  SQLite says a disk full as it extends
        its shared memory file as ``disk I/O error``: a system error with less than
        :data:`HOME_NEEDS` free on the home's disk is that disk full."""
        causes: list[BaseException] = []
        cause: BaseException | None = error
        while cause is not None:
            if isinstance(cause, OSError) and cause.errno in _ERRNOS:
                return _ERRNOS[cause.errno]
            code = getattr(cause, "sqlite_errorcode", None)
            if isinstance(cause, sqlite3.Error) and code is not None and code & 0xFF in _SQLITE:
                return _SQLITE[code & 0xFF]
            causes.append(cause)
            cause = cause.__cause__ or cause.__context__
        system = any(isinstance(c, (OSError, sqlite3.Error)) for c in causes)
        return Unwritable.FULL if system and free_space(home) < HOME_NEEDS else None

    def advice(self, home: Path, error: BaseException) -> str:
        """What happened to ``home`` — and, from ``error``, at which file — and what to do:
        the line ``tarotd`` prints."""
        said, remedy = _WORDS[self]
        return f"cannot write the home {home}: {said} ({error}); {remedy}"


#: The space a home needs free to start (docs/operations.md, "Space"), besides 200 KiB a deal.
HOME_NEEDS: Final = 5 * 1024 * 1024


def free_space(path: Path) -> int:
    """Bytes free for this user on the disk of ``path`` (or of its nearest existing parent)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    disk = os.statvfs(path)
    return (disk.f_bfree if os.geteuid() == 0 else disk.f_bavail) * disk.f_frsize


_WORDS: Final = {
    Unwritable.READ_ONLY: (
        "it is on a read-only file system",
        "remount that disk read-write, or start with --home on a writable one",
    ),
    Unwritable.DENIED: (
        "you may not write there",
        "make it writable by you, or start with --home a directory of yours",
    ),
    Unwritable.FULL: (
        "its disk is full",
        f"free some space there (a home needs {HOME_NEEDS >> 20} MiB free, plus 200 KiB a deal "
        "to come) and start again",
    ),
}
_ERRNOS: Final = {
    errno.EROFS: Unwritable.READ_ONLY,
    errno.EACCES: Unwritable.DENIED,
    errno.EPERM: Unwritable.DENIED,
    errno.ENOSPC: Unwritable.FULL,
    errno.EDQUOT: Unwritable.FULL,
}
_SQLITE: Final = {
    sqlite3.SQLITE_READONLY: Unwritable.READ_ONLY,
    sqlite3.SQLITE_FULL: Unwritable.FULL,
}


def default_home() -> Path:
    """``$XDG_DATA_HOME/tarot``, or ``~/.local/share/tarot`` when that is unset, empty or
    relative (the XDG base directory spec says to ignore a relative path).

    *Data*, not config or state: the identity key is who the player is at every table (peers
    know them by its fingerprint) and the transcripts and score sheets are their records and
    proofs.  None of it can be recreated, so it belongs with the user's data.
    ``$XDG_CONFIG_HOME`` is for settings people edit and often publish in a dotfiles
    repository, the last place for a private key; ``$XDG_STATE_HOME`` is, by the spec, for
    what is "not important or portable enough" for the data directory, such as history.
    """
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "tarot"


class Home:
    """A home directory, created or checked on construction.

    Raises :class:`HomeError` if it cannot be created, is not a directory or belongs to
    another user.  A directory of ours with wider permissions than 0700 is narrowed (with a
    warning in the log) rather than refused: nothing in it has been written by this version
    with wider permissions, and a stray ``chmod`` should not stop the game.  Whether the keys
    inside leaked is judged per key file, by :func:`load_or_create_identity`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        problem = path_problem(self.path)
        if problem is not None:
            raise HomeError(problem)
        _private_directory(self.path)

    def __repr__(self) -> str:
        return f"Home({str(self.path)!r})"

    @property
    def identity_key(self) -> Path:
        return self.path / "identity.key"

    @property
    def keys(self) -> Path:
        return self.path / "keys"

    @property
    def db(self) -> Path:
        return self.path / "tarot.db"

    @property
    def api_sock(self) -> Path:
        """The client API socket: its path has to fit in a Unix socket's (:func:`path_problem`)."""
        return _api_sock(self.path)

    @property
    def pid_file(self) -> Path:
        return self.path / "daemon.pid"

    @property
    def scores(self) -> Path:
        return self.path / "scores.json"

    def established(self) -> bool:
        """Whether the home has an identity already (a key file): then it was used, and a
        database found empty in it was lost, not begun (:class:`~tarotd.store.Store`)."""
        return self.identity_key.exists() or any(self.keys.glob("*.key"))

    def key_path(self, name: str = MAIN) -> Path:
        """Where the identity called ``name`` is kept: ``identity.key`` for the daemon's own
        seat, ``keys/NAME.key`` for every other seat it hosts.  Raises ``ValueError`` for a
        name that is not a plain word (letters, digits, ``-``, ``_``)."""
        if not _KEY_NAME.fullmatch(name):
            raise ValueError(
                f"identity name {name!r}: use letters, digits, '-' and '_' (at most 64), "
                "starting with a letter or digit"
            )
        return self.identity_key if name == MAIN else self.keys / f"{name}.key"


def path_problem(path: Path) -> str | None:
    """What rules ``path`` out as a home whatever the disk holds, or None: a path so long that
    the API socket in it would not fit in a Unix socket's 107 bytes.  ``tarotd`` asks with its
    other options, before anything is made, rather than fail at its socket with a traceback."""
    socket_path = staging_path(_api_sock(path))
    size = len(os.fsencode(socket_path))
    if size <= MAX_SOCKET_PATH:
        return None
    return (
        f"{path} is too long a path for a home: its API socket's would be {size} bytes, and a "
        "Unix socket's path "
        f"is at most {MAX_SOCKET_PATH}: choose one at least {size - MAX_SOCKET_PATH} bytes shorter"
    )


def _api_sock(home: Path) -> Path:
    return home / "api.sock"


def load_or_create_identity(home: Home, name: str = MAIN) -> Identity:
    """The identity ``name`` of this home, created on first use.

    A new key is written to a fresh temporary file (``O_EXCL``, mode 0600), flushed to disk,
    then linked into place and the directory synced, so the key file is either absent or
    complete, even after a crash or a power cut.  Linking rather than renaming means two
    processes creating the same key at once cannot overwrite each other: the loser reads the
    winner's key, and nobody ends up holding an identity that is not the one on disk.

    An existing key file is refused (:class:`HomeError`) if it is not a 32-byte regular file
    of ours readable by us alone: a key others could read may be in someone else's hands, and
    it is for the player, not the program, to decide whether to keep using it.
    """
    path = home.key_path(name)
    if path.parent != home.path:
        _private_directory(path.parent)
    try:
        return _read_key(path)
    except FileNotFoundError:
        return _create_key(path)


def _read_key(path: Path) -> Identity:
    try:
        file = open(path, "rb")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise HomeError(f"could not read identity key {path}: {exc.strerror or exc}") from exc
    with file:
        # Check the file we opened, not the name: the name could change in between.
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise HomeError(
                f"identity key {path} is not a regular file; move it away and start again"
            )
        if info.st_uid != os.geteuid():
            raise HomeError(
                f"identity key {path} belongs to {_user(info.st_uid)}, not to you "
                f"({_user(os.geteuid())}): use your own tarot home, or if the key is really yours, "
                f"chown it to yourself"
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise HomeError(
                f"identity key {path} has mode {mode:04o}: other users may have read it, and "
                f"whoever holds it can sign as you. If you are sure nobody else could read it, "
                f"run `chmod 600 {path}` and start again; otherwise delete it to create a new "
                f"identity (other players will see a new fingerprint)"
            )
        if info.st_size != PRIVATE_KEY_SIZE:
            raise HomeError(
                f"identity key {path} is {info.st_size} bytes, but a key is exactly "
                f"{PRIVATE_KEY_SIZE}: the file is damaged or not a tarot key. Restore it from a "
                f"backup, or delete it to create a new identity (other players will see a new "
                f"fingerprint)"
            )
        return Identity.from_private_bytes(file.read())


def _create_key(path: Path) -> Identity:
    identity = Identity.generate()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            os.fchmod(fd, 0o600)  # exactly 0600, whatever the umask
            if os.write(fd, identity.private_bytes()) != PRIVATE_KEY_SIZE:
                raise OSError(errno.ENOSPC, "short write")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temporary, path)
        _sync_directory(path.parent)
    except FileExistsError:  # from os.link: the temporary name is fresh
        log.info("identity key %s was created by another process meanwhile; using it", path)
        return _read_key(path)
    except OSError as exc:
        raise HomeError(f"could not create identity key {path}: {exc.strerror or exc}") from exc
    finally:
        temporary.unlink(missing_ok=True)
    log.info("created identity %s in %s", identity.fingerprint, path)
    return identity


def _sync_directory(path: Path) -> None:
    """Make a new directory entry durable: without it, a power cut right after creating a
    key can lose the file, and the daemon would come back as a stranger to its table."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DaemonLock:
    """Exclusive use of a home by one daemon: an ``flock`` on ``daemon.pid``, which holds the
    owner's pid for the error message of the next one to try.

    ``flock`` rather than "the pid file exists": the kernel drops the lock when its holder
    dies, even by ``kill -9``, so a crash never leaves a stale lock to clean up by hand.  The
    file is never deleted, since deleting a lock file lets two processes lock two different
    files of the same name.  Use as a context manager, or call :meth:`release`.
    """

    def __init__(self, home: Home) -> None:
        self.path = home.pid_file
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # a read-only home (the cause says, for Unwritable)
            raise HomeError(f"could not lock {self.path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # a full disk refuses this
        except BlockingIOError:
            os.close(fd)
            raise HomeError(
                f"another tarotd ({_holder(self.path)}) is already using {home.path}; stop it "
                f"first, or start this one with another home directory"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise HomeError(f"could not lock {self.path}: {exc.strerror or exc}") from exc
        self._fd: int | None = fd

    def release(self) -> None:
        """Give up the lock (idempotent).  The pid is erased first so that the file never
        names a daemon that has gone."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DaemonLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _holder(path: Path) -> str:
    """'pid N' from the pid file of a locked home; the holder may not have written it yet."""
    try:
        text = path.read_text().strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "pid unknown"


def _private_directory(path: Path) -> None:
    """Create ``path`` as a 0700 directory, or check an existing one (see :class:`Home`)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        raise HomeError(
            f"{path} exists and is not a directory; move it away or choose another home"
        ) from None
    except OSError as exc:
        raise HomeError(f"could not create {path}: {exc.strerror or exc}") from exc
    info = path.stat()
    if info.st_uid != os.geteuid():
        raise HomeError(
            f"{path} belongs to {_user(info.st_uid)}, not to you ({_user(os.geteuid())}); a tarot "
            f"home holds private keys and must be yours alone. Use your own home directory, or, "
            f"if this one is really yours, chown it to yourself"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode != 0o700:
        try:
            os.chmod(path, 0o700)
        except OSError as exc:  # a read-only home
            raise HomeError(f"could not make {path} mode 0700: {exc.strerror or exc}") from exc
        if mode & 0o077:
            log.warning("%s had mode %04o; narrowed to 0700", path, mode)


def _user(uid: int) -> str:
    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
