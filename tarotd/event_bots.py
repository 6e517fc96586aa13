"""Event bots a daemon hosts (issue 37, finding 8): ``tarot event join EVENT --bots N``.

A bot that takes part in an event is a *player* of it: the record registers its own key, the
movement seats it round by round — at any table, possibly another than its host's other bots
— and it signs its rows like anyone.  Each one is therefore a whole daemon of its own (its
identity, mesh endpoint, lobby, event desk and store, under ``HOME/event-bots/K``), run here,
in the host's process and event loop, beside the host: the organiser who fills the last
table, or a club that puts two bots at the back, starts no process and makes no home for them.

Why not seats of the host's own daemon, as ``tarotd --bots N`` hosts a table's bots: a round
plan's seat names the daemon to reach (a registered player is its daemon's key), and a daemon's
lobby forms one table at a time, while an event may seat two bots of one host at two tables in
the same round.  A daemon per bot keeps both rules — and every check of the record, the lobby
and the tables — as they are; it costs one mesh port and one small store per bot.

The host knows each bot's key, and so **reads its hand** (its deck secrets are in its home, as
any daemon's are): a bot's host can see the cards of every deal the bot plays, and must be
trusted not to tell a person at the bot's table.  The record says nothing of who hosts whom;
the names do (``NAME-botK``: :func:`tarotd.daemon.bot_name`), in every ranking and page.

A hosted bot stays: restarted, the host takes every bot of its home up again (``bot.json``:
its level, the organiser's daemon it links to, and its port) and each goes on from its store,
listening where it did — the record's players reach it there.  If another program took that
port meanwhile, it listens on another and tells the organiser, who tells the players
(:meth:`tarotd.event_member.Member.resend`).  A bot in no unfinished event is taken again for
the ``--bots`` of its level at an event of the organiser it links to.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from protocol.bots.bots import BOTS
from protocol.event.event import EventError
from protocol.refusal import Refusal
from protocol.replication.identity import fingerprint
from protocol.replication.manifest import MAX_NAME
from tarotd.event_book import Heard, Held
from tarotd.event_desk import EventDesk
from tarotd.mesh import WILDCARD_HOSTS

log = logging.getLogger(__name__)

DIRECTORY: Final = "event-bots"  #: under the host's home, a home per bot: ``event-bots/K``
SPEC: Final = "bot.json"  #: in a bot's home: its level and the daemons it links to
MAX_EVENT_BOTS: Final = 16  #: bots one daemon hosts, all events together


class HostedDaemon(Protocol):
    """What the host needs of a bot's daemon (:class:`tarotd.daemon.Daemon`)."""

    events: EventDesk

    async def start(self) -> None: ...

    async def serve(self) -> int: ...

    def interrupt(self) -> None: ...


#: Makes a bot's daemon: its home, name, level, where it listens (``tcp://HOST:PORT``) and the
#: ``--peer`` daemons it links to.
MakeBot = Callable[[Path, str, str, str, Sequence[tuple[str, bytes]]], HostedDaemon]


@dataclass
class Hosted:
    number: int  #: K of ``event-bots/K``
    name: str
    level: str
    daemon: HostedDaemon
    task: asyncio.Task[int]
    peers: Sequence[tuple[str, bytes]]  #: the daemons it was started linked to

    def free_for(self, event_id: bytes, peers: Sequence[tuple[str, bytes]]) -> bool:
        """Whether it can register with ``event_id``: in no event still being played, and
        started linked to the daemons the event needs (its organiser's)."""
        return set(peers) <= set(self.peers) and all(
            event_id != held.event_id and held.report.closed >= held.config.rounds
            for held in self.daemon.events.held.values()
        )


class EventBots:
    """The event bots of one daemon (module docstring)."""

    def __init__(self, home: Path, host_name: str, first: int, make: MakeBot, address: str) -> None:
        """``first``: the number of the first event bot's name (after the daemon's table
        bots, ``tarotd --bots``, so that no two of its bots share a name); ``address``:
        ``tcp://HOST`` of the host's ``--listen``, where its bots listen too."""
        self.root = home / DIRECTORY
        self.host_name = host_name
        self.first = first
        self.make = make
        self.address = address
        self.hosted: list[Hosted] = []

    async def resume(self) -> None:
        """Every bot of the home, taken up again: each goes on from its store."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.iterdir(), key=lambda p: (len(p.name), p.name)):
            try:
                spec = json.loads((path / SPEC).read_text(encoding="utf-8"))
                number, level = int(path.name), str(spec["level"])
                peers = [(str(endpoint), bytes.fromhex(key)) for endpoint, key in spec["peers"]]
                port = int(spec.get("port", 0))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
                log.error("event bots: %s left aside, it cannot be read (%s)", path, error)
                continue
            await self._start(number, level, peers, port)

    async def add(self, event_id: bytes, heard: Heard, count: int, level: str) -> list[str]:
        """Register ``count`` bots of ``level`` with the event: bots in no unfinished event
        first, then new ones (EventError, and nothing done, past :data:`MAX_EVENT_BOTS`).
        Their names."""
        if level not in BOTS:
            levels = ", ".join(sorted(BOTS))
            raise EventError(
                f"a bot's level is one of {levels}", Refusal.EVENT_BOT_LEVEL, levels=levels
            )
        if not 1 <= count <= MAX_EVENT_BOTS:
            raise EventError(
                f"--bots is from 1 to {MAX_EVENT_BOTS}",
                Refusal.EVENT_BOTS_COUNT,
                most=MAX_EVENT_BOTS,
            )
        host = heard.endpoint.removeprefix("tcp://").rpartition(":")[0]
        # A wildcard address says nothing of where the organiser is: discovery finds it then.
        peers = [] if host in WILDCARD_HOSTS else [(heard.endpoint, heard.config.organiser)]
        free = [h for h in self.hosted if h.level == level and h.free_for(event_id, peers)]
        free = free[:count]
        new = count - len(free)
        if len(self.hosted) + new > MAX_EVENT_BOTS:
            raise EventError(
                f"this daemon hosts {len(self.hosted)} event bots, {len(free)} of them free: "
                f"at most {MAX_EVENT_BOTS} in all",
                Refusal.EVENT_BOTS_FULL,
                hosted=len(self.hosted),
                free=len(free),
                most=MAX_EVENT_BOTS,
            )
        taken = {h.number for h in self.hosted}
        numbers = [n for n in range(1, MAX_EVENT_BOTS * 2) if n not in taken][:new]
        for number in numbers:
            free.append(await self._start(number, level, peers))
        for bot in free:
            bot.daemon.events.heard[event_id] = heard
            # What join returns, its registration, is in the bot's outbox: its heartbeat sends
            # it — at once, then until the organiser's record holds it.
            bot.daemon.events.join(event_id, bot.name)
        log.info(
            "event %s: %d %s bots of this daemon registered: %s",
            event_id.hex()[:8],
            count,
            level,
            ", ".join(f"{b.name} [{fingerprint(b.daemon.events.key)}]" for b in free),
        )
        return [bot.name for bot in free]

    async def _start(
        self, number: int, level: str, peers: Sequence[tuple[str, bytes]], port: int = 0
    ) -> Hosted:
        """Bot ``number``'s daemon started and served, on ``port`` if it is free (0: any);
        its spec written, with the port it listens on."""
        suffix = f"-bot{self.first + number - 1}"
        name = self.host_name[: MAX_NAME - len(suffix)] + suffix
        home = self.root / str(number)
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if port and not can_listen(self.address, port):
            log.warning(
                "event bot %s: its port %d is taken by another program; it listens on another "
                "and tells its events' organisers",
                name,
                port,
            )
            port = 0
        daemon = self.make(home, name, level, f"{self.address}:{port}", peers)
        await daemon.start()
        port = int(daemon.events.endpoint().rpartition(":")[2])
        spec = {"level": level, "peers": [[e, key.hex()] for e, key in peers], "port": port}
        (home / SPEC).write_text(json.dumps(spec), encoding="utf-8")
        bot = Hosted(number, name, level, daemon, asyncio.create_task(daemon.serve()), peers)
        self.hosted.append(bot)
        log.info("event bot %s (%s) hosted here [%s]", name, level, fingerprint(daemon.events.key))
        return bot

    def holding(self, event_id: bytes) -> tuple[EventDesk, Held] | None:
        """The desk of a bot of ours in ``event_id``, and its event: what the host shows of an
        event it hosts bots in without playing it."""
        for bot in self.hosted:
            held = bot.daemon.events.held.get(event_id)
            if held is not None:
                return bot.daemon.events, held
        return None

    def events(self) -> dict[bytes, str]:
        """The events our bots are in, by id, with their names."""
        return {
            event_id: held.config.name
            for bot in self.hosted
            for event_id, held in bot.daemon.events.held.items()
        }

    def keys(self) -> frozenset[bytes]:
        """The keys of the bots hosted here."""
        return frozenset(bot.daemon.events.key for bot in self.hosted)

    async def close(self) -> None:
        """Every bot's daemon stopped, as a signal stops one."""
        for bot in self.hosted:
            bot.daemon.interrupt()
        for bot in self.hosted:
            try:
                await bot.task
            except Exception:  # one bot's fault must not keep the host from closing
                log.exception("event bot %s: error while it stopped", bot.name)
        self.hosted.clear()


def can_listen(address: str, port: int) -> bool:
    """Whether ``port`` is free to listen on at ``address`` (``tcp://HOST``), as ZeroMQ binds
    it (``SO_REUSEADDR``: a port whose connections linger after a crash is free).  A host
    that is not an address (an interface's name) is not tried: False."""
    host = address.removeprefix("tcp://").strip("[]")
    host = "" if host == "*" else host
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True
