"""The local API: how the player's client talks to its own daemon.

A Unix socket in the daemon's home (``api.sock``), mode 0600 inside a 0700 directory, and
the peer's credentials checked on every connection (``SO_PEERCRED``): only the daemon's own
Unix user gets in, whatever the file modes say.  Nothing of it is reachable from the network.

The protocol is one JSON object per line.  A request ``{"id": 7, "op": "play", "card": "KH"}``
gets a response ``{"id": 7, "ok": true, "result": …}`` or ``{"id": 7, "ok": false, "code":
"not-at-table", "params": {}, "error": "…"}`` — a :class:`~protocol.refusal.Refusal` code the
client translates, and the English text older clients show.  Events (``{"event": "trick",
…}``) stream to every connected client between responses.  A client may drop and reconnect
at any time: the ``state`` request returns its seat's whole view.  A malformed line gets an
error response and changes nothing; a line longer than :data:`MAX_LINE` closes the
connection.

At most :data:`MAX_CLIENTS` clients at once.  Only the daemon's own user can connect, so only
that user's own programs can take every place (a script left running, windows of ``tarot``):
the one turned away is told so in one error line, and closing one of them frees a place.  No
place is reserved — a reserved place would go to whichever of them comes first anyway.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import struct
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from protocol.localapi import ApiEvent, Reply
from protocol.refusal import Refusal, Refused

log = logging.getLogger("tarotd.api")

MAX_LINE = 64 * 1024
MAX_CLIENTS = 16
#: The longest path a Unix socket can have: ``sun_path`` holds 108 bytes on Linux, 104 on macOS
#: and the BSDs, NUL included.
MAX_SOCKET_PATH = 107 if sys.platform.startswith("linux") else 103
#: macOS's and the BSDs' ``SOL_LOCAL``/``LOCAL_PEERCRED`` (<sys/un.h>), and the size of the
#: ``struct xucred`` it fills: a version, the uid, then the groups.
_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE = 0, 1, 76
Handler = Callable[[dict[str, Any]], Awaitable[Any]]


class ApiError(Refused):
    """A request the daemon refuses: its code and parameters, which the client translates,
    and its English text.  Only the dispatcher (:mod:`tarotd.answers`) makes one of another
    exception — a :class:`~protocol.refusal.Refused` of the lobby or an event is a refusal for
    the player only where it says so; elsewhere it is a bug, and logged."""

    @classmethod
    def of(cls, error: Refused) -> ApiError:
        return cls(str(error), error.code, **error.params)


def refusal(error: Refused) -> Reply:
    """The reply that says ``error``."""
    params = dict(error.params)
    return {"ok": False, "code": error.code.value, "params": params, "error": str(error)}


def peer_uid(sock: socket.socket) -> int | None:
    """The Unix user at the other end of a Unix socket: Linux's ``SO_PEERCRED``, macOS's and
    the BSDs' ``LOCAL_PEERCRED`` (untested there); None where neither answers, and the
    connection is refused."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            return int(uid)
        if sys.platform == "darwin" or "bsd" in sys.platform:
            xucred = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
            _version, uid = struct.unpack_from("=II", xucred)
            return int(uid)
    except (OSError, struct.error):
        return None
    return None


def staging_path(path: Path) -> Path:
    """Where the socket of ``path`` is made before it is renamed into place (the longer of
    the two paths, so the one that must fit in :data:`MAX_SOCKET_PATH`)."""
    return path.with_name(path.name + ".new")


class ApiServer:
    def __init__(self, path: Path, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self.refused = 0

    @property
    def clients(self) -> int:
        """Clients connected now (a player's screen, or a command asking once)."""
        return len(self._clients)

    async def start(self) -> None:
        """Listen on :attr:`path`.  The socket is made under another name and renamed into
        place once it listens: a client that sees the path can connect (a socket file also
        exists between ``bind`` and ``listen``, refusing connections)."""
        fresh = staging_path(self.path)
        for stale in (self.path, fresh):
            if stale.exists() or stale.is_symlink():
                stale.unlink()
        old = os.umask(0o177)  # the socket file is created 0600, never wider for an instant
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(fresh), limit=MAX_LINE
            )
        finally:
            os.umask(old)
        os.chmod(fresh, 0o600)
        os.replace(fresh, self.path)

    async def close(self) -> None:
        for writer in list(self._clients):
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self.path.exists():
            self.path.unlink()

    def broadcast(self, event: ApiEvent) -> None:
        """Send an event to every connected client; a slow or gone client is dropped."""
        line = _line(event)
        for writer in list(self._clients):
            if writer.transport.get_write_buffer_size() > 4 * MAX_LINE:
                writer.close()  # it stopped reading: it will reconnect and ask for the state
                self._clients.discard(writer)
                continue
            writer.write(line)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is None or peer_uid(sock) != os.getuid():
            self.refused += 1
            log.warning("refused a local API connection from another user")
            writer.close()
            return
        if len(self._clients) >= MAX_CLIENTS:
            self.refused += 1
            log.warning(
                "refused a local API connection: %d clients of this user are connected already",
                MAX_CLIENTS,
            )
            turned_away = Refused(
                f"this daemon already serves {MAX_CLIENTS} clients of yours (other tarot "
                "windows or scripts): close one of them and try again",
                Refusal.TOO_MANY_CLIENTS,
                limit=MAX_CLIENTS,
            )
            writer.write(_line(refusal(turned_away)))
            writer.close()
            return
        self._clients.add(writer)
        try:
            while True:
                try:
                    raw = await reader.readline()
                except (asyncio.LimitOverrunError, ValueError):
                    too_long = Refused(
                        f"request longer than {MAX_LINE} bytes",
                        Refusal.LINE_TOO_LONG,
                        limit=MAX_LINE,
                    )
                    writer.write(_line(refusal(too_long)))
                    break
                if not raw:
                    break
                writer.write(_line(await self._answer(raw)))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self._clients.discard(writer)
            writer.close()

    async def _answer(self, raw: bytes) -> Reply:
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON or not UTF-8; also an integer of
            # thousands of digits (ValueError) and nesting deeper than the parser's stack
            return refusal(
                Refused("not a JSON object: send one JSON object per line", Refusal.NOT_JSON)
            )
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            no_op = Refused('a request is a JSON object with an "op"', Refusal.NOT_A_REQUEST)
            return refusal(no_op)
        reply: Reply = {"id": request.get("id")} if "id" in request else {}
        try:
            reply.update({"ok": True, "result": await self.handler(request)})
        except ApiError as error:
            reply.update(refusal(error))
        except Exception:  # a bug must not take the daemon, nor the game, down
            log.exception("local API request %r failed", request.get("op"))
            reply.update(
                refusal(Refused("internal error in the daemon; see its log", Refusal.INTERNAL))
            )
        return reply


def _line(obj: Reply | ApiEvent) -> bytes:
    # A request may carry a lone surrogate ("\\ud800" is valid JSON) that comes back in its
    # id or its error: UTF-8 cannot encode it, so it goes out escaped, as JSON allows.
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"
