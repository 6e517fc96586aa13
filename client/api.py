"""The client's side of the daemon's local API (see ``tarotd/api.py`` for the protocol).

The client never imports the daemon: it only knows the socket's place in the home directory
and the JSON lines spoken on it.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, cast

from client.events import ScreenEvent, parse_event
from protocol.localapi import ApiEvent, Reply


class DaemonUnavailable(Exception):
    """The daemon is not running (or not reachable); the message says how to start it."""


class DaemonRefused(Exception):
    """The daemon answered with an error: the message is the daemon's English text (what the
    command-line tools print), ``code`` and ``params`` what the screen translates
    (:meth:`client.tui.i18n.Texts.refusal`) — None and empty from a daemon older than them."""

    def __init__(
        self, message: str, code: str | None = None, params: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.params: Mapping[str, object] = params or {}

    @classmethod
    def of(cls, reply: Reply, default: str) -> DaemonRefused:
        """The refusal ``reply`` says; ``default`` is its text if it has none."""
        code, params = reply.get("code"), reply.get("params")
        return cls(
            str(reply.get("error", default)),
            code if isinstance(code, str) else None,
            params if isinstance(params, dict) else None,
        )


def default_home() -> Path:
    """Where ``tarotd`` keeps its files unless told otherwise: ``$XDG_DATA_HOME/tarot``, or
    ``~/.local/share/tarot`` when that is unset or relative — the daemon's own rule
    (``tarotd/home.py``), restated here because the client never imports the daemon."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "tarot"


def socket_path(home: Path) -> Path:
    return home / "api.sock"


_TURNED_AWAY = "the daemon refused the connection"


class DaemonClient:
    def __init__(self, home: Path) -> None:
        self.home = home
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._next_id = 0
        self._events: asyncio.Queue[ApiEvent] = asyncio.Queue()
        self._waiting: dict[int, asyncio.Future[Reply]] = {}
        self._pump: asyncio.Task[None] | None = None
        self._closed = False
        #: why the daemon turned this connection away, if it said
        self._refusal: Reply | None = None

    async def connect(self) -> None:
        path = socket_path(self.home)
        try:
            self._reader, self._writer = await asyncio.open_unix_connection(
                str(path), limit=1 << 20
            )
        except (FileNotFoundError, ConnectionRefusedError) as error:
            raise DaemonUnavailable(
                f"no daemon is running with the home {self.home} ({error.strerror}). "
                f"Start one with: tarotd --home {self.home}"
            ) from None
        except PermissionError:
            raise DaemonUnavailable(f"the daemon's socket {path} belongs to another user") from None
        self._pump = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
        if self._writer is not None:
            self._writer.close()

    async def request(self, op: str, **params: Any) -> Any:
        if self._writer is None or self._closed:
            if self._refusal is not None:
                raise DaemonRefused.of(self._refusal, _TURNED_AWAY)
            raise DaemonUnavailable("not connected to the daemon (it may have stopped)")
        self._next_id += 1
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = future
        try:
            self._writer.write(
                json.dumps({"id": self._next_id, "op": op, **params}).encode() + b"\n"
            )
            await self._writer.drain()
        except OSError:  # the daemon went away while we were writing
            self._waiting.pop(self._next_id, None)
            raise DaemonUnavailable("the daemon closed the connection") from None
        reply = await future
        if not reply.get("ok"):
            raise DaemonRefused.of(reply, "the daemon refused")
        return reply.get("result")

    async def events(self) -> AsyncIterator[ApiEvent]:
        """The daemon's event lines as they come, their JSON keys untouched (the contract)."""
        while True:
            yield await self._events.get()

    async def screen_events(self) -> AsyncIterator[ScreenEvent]:
        """The daemon's events typed once, here (:func:`client.events.parse_event`): one of
        unknown kind or with a malformed field is logged and skipped, never shown."""
        async for raw in self.events():
            event = parse_event(raw)
            if event is not None:
                yield event

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while line := await self._reader.readline():
                message = json.loads(line)
                if "event" in message:
                    await self._events.put(message)
                elif isinstance(message.get("id"), int) and message["id"] in self._waiting:
                    self._waiting.pop(message["id"]).set_result(cast(Reply, message))
                # Turned away, and told why.
                elif "id" not in message and message.get("ok") is False:
                    self._refusal = cast(Reply, message)
        except (OSError, ValueError):
            pass  # a broken connection, or not the daemon at the other end: as if it closed
        self._closed = True
        error: Exception = DaemonUnavailable("the daemon closed the connection")
        if self._refusal is not None:
            error = DaemonRefused.of(self._refusal, _TURNED_AWAY)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        await self._events.put({"event": "disconnected"})


async def ask(home: Path, op: str, *, timeout: float = 10.0, **params: Any) -> Any:
    """One request, on a connection of its own (the command-line tools)."""
    client = DaemonClient(home)
    try:
        await asyncio.wait_for(client.connect(), timeout)
        return await asyncio.wait_for(client.request(op, **params), timeout)
    except TimeoutError:
        raise DaemonUnavailable(
            f"the daemon with the home {home} did not answer within {timeout:.0f} s"
        ) from None
    finally:
        await client.close()
