"""The daemon: the IO around the sans-IO pieces, wired.

It owns the world-facing parts — the home directory and its lock, the SQLite store, the
ZeroMQ mesh to the other daemons, LAN discovery, the local API — and moves bytes between
them and the pure objects that decide: the :class:`~tarotd.lobby.Lobby` (forming tables),
one :class:`~tarotd.runner.TableRunner` per table (the deals) and the
:class:`~tarotd.event_desk.EventDesk` (events).  Everything is one asyncio task per concern
and small glue, each role in a module of its own, which :class:`Daemon` only wires:

* :mod:`tarotd.answers` — the local API's requests, typed (:mod:`tarotd.requests`), answered;
* :mod:`tarotd.hosting` — the tables played here: runners, bots' turns, relays, pauses;
* :mod:`tarotd.journal` — nothing signed leaves, nothing received is acknowledged, before
  the disk holds it;
* :mod:`tarotd.event_glue` — the event desk's frames, seatings and requests;
* :mod:`tarotd.status` — peers trusted and needed, discovery's offers, the ``status``;
* :mod:`tarotd.regroup` and :mod:`tarotd.autoplay` — going on without the gone and the away.

The rules, the cryptography and the order of messages all live in ``protocol``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from protocol import wire
from protocol.replication.identity import Identity, fingerprint
from tarotd.answers import Answers, bot_name
from tarotd.api import ApiServer
from tarotd.autoplay import Autoplay
from tarotd.channels import DEAL, HEARTBEAT, LOBBY, RELAYS, SETTLE
from tarotd.discovery import DISCOVERY_PORT, Discovery
from tarotd.event_bots import EventBots
from tarotd.event_desk import CHANNEL as EVENT
from tarotd.event_desk import EventDesk
from tarotd.event_glue import EventGlue
from tarotd.gate import CannotListen
from tarotd.guard import is_this_machine, raise_descriptor_limit
from tarotd.home import DaemonLock, Home, load_or_create_identity
from tarotd.hosting import Hosting
from tarotd.journal import Journal
from tarotd.lobby import BROADCAST, FrameOut, Lobby
from tarotd.mesh import Mesh, PeerState
from tarotd.mesh.wire import MAX_FRAME
from tarotd.options import Options, StaticPeer
from tarotd.refusals import Cause
from tarotd.regroup import Regroup
from tarotd.runner import seeded_entropy
from tarotd.silence import SilenceClock
from tarotd.status import PeerWatch
from tarotd.store import Store
from tarotd.ticks import ticks

__all__ = ["DEAL", "LOBBY", "Daemon", "OptionError", "Options", "StaticPeer", "bot_name"]

log = logging.getLogger("tarotd")

#: What binding ``--listen`` fails with when the address is not this machine's (ENODEV: not
#: even an interface's name), or the port is taken, or not ours to take.
_BIND_ERRORS = frozenset(
    {errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.ENODEV, errno.EACCES, errno.EINVAL}
)


class OptionError(Exception):
    """An option this machine cannot honour, found only by trying it — the address of
    ``--listen`` is none of its own, or its port is taken, or the discovery port is held by
    a program that does not share it: ``tarotd`` reports it as it does every bad option, one
    line and exit status 2.  The text names the option, or the one to use instead."""


@dataclass
class Daemon:
    """One daemon: its world-facing parts, made by :meth:`start`, and the roles that read
    them from here (module docstring) — wired, not decided, here."""

    options: Options
    home: Home = field(init=False)
    identity: Identity = field(init=False)
    seats: list[tuple[Identity, str]] = field(init=False)
    store: Store = field(init=False)
    mesh: Mesh = field(init=False)
    lobby: Lobby = field(init=False)
    api: ApiServer = field(init=False)
    discovery: Discovery | None = field(init=False, default=None)
    #: the events this daemon organises or plays in (issue 23)
    events: EventDesk = field(init=False)
    #: the event bots hosted here (``tarot event join --bots``), each a daemon of its own
    event_bots: EventBots | None = field(init=False, default=None)
    done: asyncio.Event = field(init=False, default_factory=asyncio.Event)
    interrupted: bool = field(init=False, default=False)  #: stopped by a signal (interrupt)
    silence: SilenceClock = field(init=False, default_factory=SilenceClock)
    # Its roles (module docstring), made at the start: each reads the parts above from here.
    hosting: Hosting = field(init=False)
    journal: Journal = field(init=False)
    peers: PeerWatch = field(init=False)
    event_glue: EventGlue = field(init=False)
    regroup: Regroup = field(init=False)
    autoplay: Autoplay = field(init=False)
    answers: Answers = field(init=False)
    _lock: DaemonLock | None = field(init=False, default=None)

    # --- Start and stop -------------------------------------------------------------

    async def start(self) -> None:
        options = self.options
        self.home = Home(options.home)
        self._lock = DaemonLock(self.home)
        # The database before the first key: a home with keys has its database, and one
        # found empty there was lost (Store, established), not begun.
        self.store = Store(self.home.db, established=self.home.established())
        if self.store.log_lost:
            log.warning(
                "%s: the daemon before stopped without closing it, and its log %s-wal was deleted "
                "since: what it wrote after the last deal it scored is lost, and no table it was "
                "playing is taken up again",
                self.home.db,
                self.home.db.name,
            )
        self.identity = load_or_create_identity(self.home)
        self.hosting, self.journal = Hosting(self), Journal(self)
        self.peers, self.event_glue = PeerWatch(self), EventGlue(self)
        self.regroup, self.autoplay, self.answers = Regroup(self), Autoplay(self), Answers(self)
        self.seats = [(self.identity, options.name)]
        for k in range(1, options.bots + 1):
            self.seats.append(
                (load_or_create_identity(self.home, f"bot-{k}"), bot_name(options.name, k))
            )
        raise_descriptor_limit()  # before the mesh sizes its bounds on it
        asyncio.get_running_loop().set_exception_handler(self._on_loop_error)
        self.mesh = Mesh(
            self.identity,
            options.listen,
            on_message=self._on_message,
            name=options.name,
            before_ack=self.journal.before_ack,
            on_status=self.peers.on_status,
            faults=options.faults,
            curve=options.curve,
            keeps=self.peers.needed,
        )
        try:
            await self.mesh.start()
        except CannotListen as error:
            if error.errno not in _BIND_ERRORS:
                raise
            raise OptionError(
                f"--listen {options.listen.removeprefix('tcp://')}: cannot listen there "
                f"({os.strerror(error.errno)}): give an address of this machine (0.0.0.0: all of "
                "them) and a port free for you on it (0: any free port)"
            ) from None
        entropy = os.urandom if options.deal_seed is None else seeded_entropy(options.deal_seed)
        self.lobby = Lobby(
            self.identity.public_key,
            self.mesh.endpoint,
            self.seats,
            entropy,
            trusts=self.peers.keys.__contains__,
            silence=options.silence,
            timeout=options.timeout,
            proved=self.peers.favour,
        )
        level = options.bot or options.bot_level  # what the hosted bots are played at
        self.lobby.bot_levels.update({i.public_key: level for i, _ in self.seats[1:]})
        if options.bot:  # our own seat played by a bot (an event bot's daemon too)
            self.lobby.bot_levels[self.identity.public_key] = options.bot
        self.events = EventDesk(self.identity, lambda: self.mesh.endpoint, self.store)
        self.events.load()  # before the tables are taken up: an event table's deals are the event's
        for peer in options.peers:
            self.mesh.connect(peer.endpoint, expected_key=peer.key, keep=True)
        self.api = ApiServer(self.home.api_sock, self.answers)
        await self.api.start()
        if options.discovery:
            port = options.discovery_port or DISCOVERY_PORT
            self.discovery = Discovery(self.identity, self.peers.announcement, port=port)
            self.discovery.on_change(self.peers.on_peers)
            try:
                await self.discovery.start()
            except OSError as error:
                raise OptionError(
                    f"discovery: cannot bind UDP port {port} ({error.strerror}): another program "
                    "holds it without sharing it (another user's tarotd?); start with "
                    "--no-discovery, and --peer KEY@HOST:PORT for each peer"
                ) from None
        self.hosting.resume_tables()
        if options.table is not None and not self.hosting.runners:  # one taken up is the one
            self._want_the_table(options.table)
        self.peers.want_tables()  # before discovery hears a beacon: the players' come first
        self.event_bots = EventBots(
            self.home.path,
            options.name,
            options.bots + 1,
            self._event_bot,
            options.listen.rpartition(":")[0],
        )
        await self.event_bots.resume()
        asyncio.get_running_loop().set_exception_handler(self._on_loop_error)  # not a bot's
        log.info(
            "tarotd %s [%s] listening on %s%s; its key (--peer KEY@HOST:PORT): %s",
            options.name,
            fingerprint(self.identity.public_key),
            self.mesh.endpoint,
            ", CURVE encryption on" if options.curve else ", UNENCRYPTED (--no-curve)",
            self.identity.public_key.hex(),
        )
        if not options.curve:
            log.warning(
                "--no-curve: nothing between the members is encrypted — anyone on the LAN reads "
                "the whole public record of the game (names, tables, bids, cards played, scores) "
                "and the HELLOs, and whoever can also send on it may speak in a member's session "
                "(its routing id and session token travel in clear): for debugging only"
            )

    def _want_the_table(self, table: str) -> None:
        """``--table``: seek it in the lobby, unless its ``--deals`` are played already."""
        options = self.options
        if options.deals is not None and self.hosting.played(table):
            log.info("table %s: its %d deals are played already", table, options.deals)
            self.done.set()  # restarted after the end: nothing more to do
            return
        self.send_lobby(self.lobby.want(table, options.seats, options.invite))
        self.hosting.start_ready_tables()  # a daemon hosting every seat needs nobody else
        if self.lobby.invite is not None:  # None: we joined the table of a --peer, heard already
            code = self.lobby.invite.shown
            log.info(
                "table %s: invite code %s — a player whose tarotd does not list this one with "
                "--peer joins with --invite %s and the same --table and --seats",
                table,
                code,
                code,
            )

    async def run(self) -> int:
        await self.start()
        return await self.serve()

    async def serve(self) -> int:
        """The daemon started: its heartbeat until it is done, then its close."""
        try:
            tasks = [asyncio.create_task(self._tick())]
            if self.options.autoplay is not None:
                tasks.append(asyncio.create_task(self.autoplay.loop(self.options.autoplay)))
            await self.done.wait()
            for runner in self.hosting.runners.values():
                self.hosting.send_relays(runner)
            await self._linger(self.options.timeout)
            await self.hosting.until_rows_are_held()
            for task in tasks:
                task.cancel()
        finally:
            await self.close()
        return 0

    async def _linger(self, limit: float) -> None:
        """Before exiting, let the peers acknowledge what we sent last (our score signature):
        without it they would wait for their timeout to finish the deal — or, restarting
        after a crash just then, could never finish it."""
        deadline = time.monotonic() + limit
        while (self.mesh.unacknowledged() or self.journal.waiting) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def interrupt(self) -> None:
        """SIGINT or SIGTERM: stop now — a finished table's last row is served to whoever
        lacks it the next time this daemon runs, rather than waited for."""
        self.interrupted = True
        self.done.set()

    async def close(self) -> None:
        if self.event_bots is not None:
            await self.event_bots.close()
        self.hosting.thinker.close()
        if self.discovery is not None:
            await self.discovery.close()
        await self.api.close()
        await self.mesh.close()
        self.store.close()
        self.hosting.close_files()
        if self._lock is not None:
            self._lock.release()

    # --- Moving bytes ----------------------------------------------------------------

    def send_lobby(self, outs: list[FrameOut]) -> None:
        """Lobby frames: to one daemon, or to every peer we know."""
        for destination, frame in outs:
            body = msgpack.packb(frame, use_bin_type=True)
            targets = (
                [p.key for p in self.mesh.peers()] if destination == BROADCAST else [destination]
            )
            for target in targets:
                self.mesh.send(target, LOBBY, body)

    async def _on_message(self, peer: bytes, channel: str, body: bytes) -> None:
        if channel == LOBBY:
            self._on_lobby(peer, body)
        elif channel == EVENT:
            self.event_glue.receive(peer, body)
        elif channel in (DEAL, RELAYS):
            self.hosting.on_deal_message(peer, channel, body)
        elif channel == SETTLE:
            self.hosting.on_settle(peer, body)

    def _on_lobby(self, peer: bytes, body: bytes) -> None:
        try:
            frame = wire.unpack(body, max_size=MAX_FRAME, what="a lobby frame")
        except wire.FieldError:
            return
        self.peers.learn_keys()
        host = self.mesh.host_of(peer)  # guesses of our code are counted per host
        self.send_lobby(self.lobby.receive(peer, frame, "" if is_this_machine(host) else host))
        joined = self.lobby.offers.get(self.lobby.joined) if self.lobby.joined else None
        if joined is not None:  # the other members of our table: a star of --peer meets this way
            self.peers.connect_members(joined.members)
        self.hosting.start_ready_tables()

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The event loop's own errors; with no descriptor left (a flood of connections where the
        limit could not be raised), asyncio's accept of the local API fails at every try: that
        is counted and said once a while, not a traceback each time."""
        error = context.get("exception")
        if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE):
            self.mesh.refusals.refuse(
                Cause.NO_DESCRIPTORS,
                time.monotonic(),
                f"{context.get('message', 'the event loop')}: no file descriptor left",
            )
            return
        loop.default_exception_handler(context)

    # --- The heartbeat ------------------------------------------------------------------

    async def _tick(self) -> None:
        """Heartbeat of the game: offers repeated, silent seats timed out.  The time the
        event loop was held (an audit on a starved machine) is nobody's silence: the daemon
        heard nobody meanwhile (:mod:`tarotd.ticks`)."""
        async for now, held in ticks(HEARTBEAT):
            if held:
                self.silence.held(held)
            try:
                self._heartbeat(now)
            except Exception:  # a bug must not stop the heartbeat of every table
                log.exception("error in the daemon's heartbeat")

    def _heartbeat(self, now: float) -> None:
        self.send_lobby(self.lobby.announcements())
        self.send_lobby(self.lobby.heartbeat(now))  # the dealer coin's rounds
        self.hosting.start_ready_tables()
        self.event_glue.send(self.events.heartbeat(now))
        self.event_glue.seat_tables()
        self.peers.say_unreachable()
        self.regroup.bots_go_on()
        self.peers.want_tables()
        if self.discovery is not None:  # links the mesh forgot, to peers still beaconing
            self.peers.on_peers(self.discovery.peers())
        up = [p.key for p in self.mesh.peers() if p.state is PeerState.UP]
        self.hosting.heartbeat(now, up)

    def _event_bot(
        self, home: Path, name: str, level: str, listen: str, peers: Sequence[tuple[str, bytes]]
    ) -> Daemon:
        """A hosted event bot's daemon: this one's options, but its own home and name, its
        own seat played by the bot, on this machine's address (a port of its own)."""
        return Daemon(
            dataclasses.replace(
                self.options,
                home=home,
                name=name,
                listen=listen,
                peers=[*self.options.peers, *(StaticPeer(e, k) for e, k in peers)],
                bot=level,
                bots=0,
                bot_level=level,
                table=None,
                invite=None,
                deals=None,
                autoplay=None,
                faults=None,
                cheat=None,
                deal_seed=None,
            )
        )
