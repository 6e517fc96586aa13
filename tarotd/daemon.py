"""The daemon: the IO around the sans-IO pieces.

It owns the world-facing parts — the home directory and its lock, the SQLite store, the
ZeroMQ mesh to the other daemons, LAN discovery, the local API — and moves bytes between
them and the pure objects that decide: the :class:`~tarotd.lobby.Lobby` (forming tables) and
one :class:`~tarotd.runner.TableRunner` per table (the deals).  Everything here is one
asyncio task per concern and small glue; the rules, the cryptography and the order of
messages all live in ``protocol``.

**A fault of this machine's** — the disk of the home full, an I/O error, no descriptor left
(:class:`~tarotd.store.LocalFault`) — is nobody's cheating and loses nothing.  The table it
hit is *paused* here: its runner, which may have moved in memory past what the disk holds, is
dropped; what it had not written was never sent (*written before sent*); what arrives for the
table meanwhile is refused to the mesh, which keeps it unacknowledged and hands it over
again (:class:`~tarotd.mesh.NotHandled`); the log says so once, and the player's client
sees it in ``state``.  Every :data:`HEARTBEAT` or so (backing off to :data:`MAX_RETRY`) the
daemon tries to take the table up from its journal, as after a crash (``TableRunner.resume``),
and once that works the table goes on by itself, and the log says that too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import functools
import json
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import msgpack

from protocol.event.event import FFT_FORMATS, EventError
from protocol.event.movement import Movement
from protocol.localapi import PauseDocument, Status, TableOffer
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity, fingerprint
from protocol.replication.manifest import SilenceCost
from protocol.replication.messages import Message
from protocol.replication.public import Stage
from protocol.rules.cards import CardCodeError, card, cards
from protocol.rules.deal import Action, AnnounceChelem, Bid, Call, Ecart, Play, ShowPoignee
from protocol.rules.rules import RuleError
from protocol.rules.variants import Contract
from tarotd.ahead import FileAhead
from tarotd.api import ApiError, ApiServer
from tarotd.discovery import DISCOVERY_PORT, Announcement, Discovery, TableInfo
from tarotd.discovery import Peer as DiscoveredPeer
from tarotd.event_bots import EventBots
from tarotd.event_desk import CHANNEL as EVENT
from tarotd.event_desk import EventDesk, Heard, Role
from tarotd.gate import CannotListen
from tarotd.guard import is_this_machine, raise_descriptor_limit
from tarotd.home import DaemonLock, Home, load_or_create_identity
from tarotd.lobby import BROADCAST, FrameOut, Lobby, Member, OfferState, ReadyTable
from tarotd.mesh import WILDCARD_HOSTS, FaultPlan, Mesh, NotHandled, PeerState, PeerStatus
from tarotd.mesh.bounds import Standing
from tarotd.refusals import Cause
from tarotd.runner import TableRunner, WireOut, bot_policies, decoded, relayed, seeded_entropy
from tarotd.settlement import LINGER_TIMEOUTS, Settlement, SettleOut, served
from tarotd.settlement import FrameError as SettleFrameError
from tarotd.settlement import parse as parse_settle
from tarotd.silence import SilenceClock
from tarotd.store import LocalFault, MemberRecord, Store, StoreFault, TableRecord, TableState
from tarotd.thinking import BotTurn, Thinker
from tarotd.ticks import ticks
from tarotd.views import earlier_state, scores_document, seat_state

log = logging.getLogger("tarotd")

LOBBY, DEAL, RELAYS, SETTLE = "lobby", "deal", "relays", "settle"
#: Seconds relays wait to go out together (tarotd/runner.py, "Relays"): long enough for a
#: batch to gather the messages of a whole trick between bots, short enough for a proof to be
#: everywhere before a person has played the next card.  (0.1 s gave 2–4 % slower deals.)
RELAY_DELAY = 0.25
HEARTBEAT = (
    1.0  #: seconds between two heartbeats of the game (offers repeated, silent seats timed out)
)
REGROUP_AFTER = (
    3  #: timeouts a member is gone between deals before a bots' daemon goes on without it
)
#: seconds between two offers of one discovered peer to the mesh (which forgets the silent)
RELINK_EVERY = 10.0
#: What discovery and the links it asks for refused (``discovery_refused`` in ``status``).
DISCOVERY_CAUSES = frozenset(
    cause.value
    for cause in (
        Cause.BEACONS_FROM_HOST,
        Cause.DISCOVERY_FULL,
        Cause.DISCOVERY_STRANGERS_FULL,
        Cause.DISCOVERY_EVICTED,
        Cause.LINKS_FULL,
        Cause.LINKS_STRANGERS_FULL,
        Cause.LINKS_EVICTED,
        Cause.LINKS_UNANSWERED,
    )
)
#: seconds at most between two tries to take up a table paused by a fault (doubling from HEARTBEAT)
MAX_RETRY = 8.0


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
class Paused:
    """A table paused by a :class:`~tarotd.store.LocalFault` of this machine's
    (module docstring)."""

    ready: ReadyTable
    fault: LocalFault
    since: float  #: monotonic
    retry_at: float  #: monotonic: the next try to take it up
    wait: float = HEARTBEAT  #: seconds before the try after that

    @property
    def refusal(self) -> str:
        """Why the local API takes no move for the table meanwhile."""
        return (
            f"the table is paused: {self.fault.said}; "
            f"it goes on by itself once {self.fault.clears} (your move was not taken)"
        )


def bot_name(name: str, k: int) -> str:
    """The name shown for the ``k``-th bot seat (from 1) of the daemon called ``name``."""
    return f"{name}-bot{k}"


@dataclass(frozen=True)
class StaticPeer:
    """A ``--peer``: the daemon's endpoint and, if given, its identity key — the one it must
    prove there, and the one the mesh encrypts to (so it is needed but with ``--no-curve``)."""

    endpoint: str
    key: bytes | None = None


@dataclass
class Options:
    home: Path
    name: str
    listen: str = "tcp://0.0.0.0:0"
    peers: Sequence[StaticPeer] = ()
    discovery: bool = True
    discovery_port: int | None = None
    bot: str | None = None  #: play this daemon's own seat with a bot of this level
    bots: int = 0  #: extra bot seats hosted here
    bot_level: str = "basic"
    table: str | None = None
    seats: int = 5
    invite: str | None = None  #: ``--invite``: the code of the --table, from its opener's screen
    deals: int | None = None
    timeout: float = (
        30.0  #: seconds a table may stand still at a deck step, or for a seat whose daemon is away
    )
    decision_timeout: float = (
        300.0  #: seconds it may stand still while a player at a daemon that answers decides
    )
    think: float = 0.0  #: seconds a bot takes to decide, so that a person can follow the game
    autoplay: float | None = (
        None  #: with no client connected, a bot decides for the player after this
    )
    max_tables: int = 4  #: tables played at once; more are refused, with a logged reason
    faults: FaultPlan | None = None  #: transport faults injected, for tests and soaks
    cheat: str | None = (
        None  #: the cheat lab: this daemon's own seat runs this attack (lab/cheats/daemon.py)
    )
    #: ZeroMQ CURVE encryption between members, keys derived from the identities (off: --no-curve)
    curve: bool = True
    silence: SilenceCost = (
        SilenceCost.NOTHING
    )  #: what a seat timed out before the reveal costs (``--silence``)
    #: Tests only (``tarotd --deal-seed``, refused without ``TAROT_TESTING=1``): the seeds of
    #: the seats hosted here, the lobby's table ids and coins and the bots' choices all come
    #: from it, so that a daemon hosting every seat deals the same cards on every run.
    deal_seed: int | None = None


@dataclass
class Daemon:
    options: Options
    home: Home = field(init=False)
    identity: Identity = field(init=False)
    seats: list[tuple[Identity, str]] = field(init=False)
    store: Store = field(init=False)
    mesh: Mesh = field(init=False)
    lobby: Lobby = field(init=False)
    api: ApiServer = field(init=False)
    discovery: Discovery | None = field(init=False, default=None)
    events: EventDesk = field(
        init=False
    )  #: the events this daemon organises or plays in (issue 23)
    event_bots: EventBots | None = field(
        init=False, default=None
    )  #: the event bots hosted here (``tarot event join --bots``), each a daemon of its own
    runners: dict[bytes, TableRunner] = field(init=False, default_factory=dict)
    #: How each table's deals are settled with its members (tarotd/settlement.py).
    settlements: dict[bytes, Settlement] = field(init=False, default_factory=dict)
    done: asyncio.Event = field(init=False, default_factory=asyncio.Event)
    interrupted: bool = field(init=False, default=False)  #: stopped by a signal (interrupt)
    _lock: DaemonLock | None = field(init=False, default=None)
    silence: SilenceClock = field(init=False, default_factory=SilenceClock)
    _thinking: set[bytes] = field(
        init=False, default_factory=set
    )  #: tables with a bot turn scheduled or being thought over
    _thinker: Thinker = field(init=False, default_factory=Thinker)  #: the bots' thread
    #: What the tables signed, waiting for the disk before it leaves (:meth:`_send_deal`).
    _unsynced: deque[list[WireOut]] = field(init=False, default_factory=deque)
    _syncing: bool = field(init=False, default=False)  #: a sync for them under way
    _owed: dict[tuple[bytes, int], float] = field(
        init=False, default_factory=dict
    )  #: a player's decision, since
    _sheets_written: dict[bytes, int] = field(
        init=False, default_factory=dict
    )  #: deals in each table's scores.json
    _stood_in: set[tuple[bytes, int]] = field(
        init=False, default_factory=set
    )  #: seats a bot plays for now
    _relaying: set[bytes] = field(
        init=False, default_factory=set
    )  #: tables with a batch of relays scheduled
    _peer_keys: set[bytes] = field(
        init=False, default_factory=set
    )  #: of the --peer daemons: the lobby trusts them
    _paused: dict[bytes, Paused] = field(
        init=False, default_factory=dict
    )  #: tables a local fault paused
    _sheet_file: FileAhead = field(init=False)  #: scores.json, written through a file opened ahead
    _proof_files: FileAhead = field(init=False)  #: home/proofs, likewise
    _offered: dict[bytes, tuple[float, Standing]] = field(
        init=False, default_factory=dict
    )  #: discovered key → offered to the mesh at, and at what standing
    _regroup_tried: set[bytes] = field(
        init=False, default_factory=set
    )  #: tables a bots' daemon tried to go on from
    _unreachable_said: set[str] = field(
        init=False, default_factory=set
    )  #: --peer endpoints said unreachable

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
                "since: what it "
                "wrote after the last deal it scored is lost, and no table it was playing is "
                "taken up again",
                self.home.db,
                self.home.db.name,
            )
        self.identity = load_or_create_identity(self.home)
        # What a deal's end writes, opened now: it may come when a flood took every descriptor.
        self._sheet_file, self._proof_files = (
            FileAhead(self.home.path),
            FileAhead(self.home.path / "proofs"),
        )
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
            before_ack=self._journal_on_disk,
            on_status=self._on_status,
            faults=options.faults,
            curve=options.curve,
            keeps=self._needed,
        )
        try:
            await self.mesh.start()
        except CannotListen as error:
            if error.errno not in _BIND_ERRORS:
                raise
            raise OptionError(
                f"--listen {options.listen.removeprefix('tcp://')}: cannot listen there "
                f"({os.strerror(error.errno)}): give "
                "an address of this machine (0.0.0.0: all of them) and a port free for you on it "
                "(0: any free port)"
            ) from None
        entropy = os.urandom if options.deal_seed is None else seeded_entropy(options.deal_seed)
        self.lobby = Lobby(
            self.identity.public_key,
            self.mesh.endpoint,
            self.seats,
            entropy,
            trusts=self._peer_keys.__contains__,
            silence=options.silence,
            timeout=options.timeout,
            proved=self.favour,
        )
        level = options.bot or options.bot_level  # what _runner plays them at
        self.lobby.bot_levels.update({i.public_key: level for i, _ in self.seats[1:]})
        if options.bot:  # our own seat played by a bot (an event bot's daemon too)
            self.lobby.bot_levels[self.identity.public_key] = options.bot
        self._peer_keys.update(peer.key for peer in options.peers if peer.key is not None)
        self.events = EventDesk(self.identity, lambda: self.mesh.endpoint, self.store)
        self.events.load()  # before the tables are taken up: an event table's deals are the event's
        for peer in options.peers:
            self.mesh.connect(peer.endpoint, expected_key=peer.key, keep=True)
        self.api = ApiServer(self.home.api_sock, self._on_request)
        await self.api.start()
        if options.discovery:
            port = options.discovery_port or DISCOVERY_PORT
            self.discovery = Discovery(self.identity, self._announcement, port=port)
            self.discovery.on_change(self._on_peers)
            try:
                await self.discovery.start()
            except OSError as error:
                raise OptionError(
                    f"discovery: cannot bind UDP port {port} ({error.strerror}): another program "
                    "holds it without "
                    "sharing it (another user's tarotd?); start with --no-discovery, and --peer "
                    "KEY@HOST:PORT for each peer"
                ) from None
        self._resume_tables()
        if options.table is not None and not self.runners:  # a table taken up again is the one
            if options.deals is not None and self._played(options.table):
                log.info("table %s: its %d deals are played already", options.table, options.deals)
                self.done.set()  # restarted after the end: nothing more to do
            else:
                self._send(self.lobby.want(options.table, options.seats, options.invite))
                self._start_ready_tables()  # a daemon hosting every seat needs nobody else
                if (
                    self.lobby.invite is not None
                ):  # None: we joined the table of a --peer, heard already
                    code = self.lobby.invite.shown
                    log.info(
                        "table %s: invite code %s — a player whose tarotd does not list this one "
                        "with --peer "
                        "joins with --invite %s and the same --table and --seats",
                        options.table,
                        code,
                        code,
                    )
        self._want_tables()  # before discovery hears a beacon: the players' come first at once
        self.event_bots = EventBots(self.home.path, options.name, options.bots + 1, self._event_bot)
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
                "the whole public "
                "record of the game (names, tables, bids, cards played, scores) and the HELLOs, "
                "and whoever can "
                "also send on it may speak in a member's session (its routing id and session "
                "token travel in "
                "clear): for debugging only"
            )

    async def run(self) -> int:
        await self.start()
        return await self.serve()

    async def serve(self) -> int:
        """The daemon started: its heartbeat until it is done, then its close."""
        try:
            tasks = [asyncio.create_task(self._tick())]
            if self.options.autoplay is not None:
                tasks.append(asyncio.create_task(self._autoplay_loop(self.options.autoplay)))
            await self.done.wait()
            for runner in self.runners.values():
                self._send_relays(runner)
            await self._linger(self.options.timeout)
            await self._until_rows_are_held()
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
        while (self.mesh.unacknowledged() or self._unsynced) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def interrupt(self) -> None:
        """SIGINT or SIGTERM: stop now — a finished table's last row is served to whoever
        lacks it the next time this daemon runs, rather than waited for."""
        self.interrupted = True
        self.done.set()

    async def _until_rows_are_held(self) -> None:
        """Before exiting at the end of a finite table, wait — within
        ``LINGER_TIMEOUTS`` timeouts — until every member holds its last row (the heartbeat
        goes on meanwhile: it serves the closing to a member that asks), and say whose."""
        said: set[bytes] = set()
        finished = [s for s in self.settlements.values() if s.runner.finished]
        while not self.interrupted and not all(s.may_leave(time.monotonic()) for s in finished):
            for settlement in finished:
                waiting = set(settlement.waiting_for_rows()) - said
                if waiting:
                    said |= waiting
                    log.info(
                        "table %s is over: waiting (at most %.0f s) until %s hold its last row",
                        settlement.runner.table_id.hex()[:8],
                        LINGER_TIMEOUTS * self.options.timeout,
                        ", ".join(self._member_name(settlement.runner, d) for d in waiting),
                    )
            await asyncio.sleep(HEARTBEAT / 2)

    @staticmethod
    def _member_name(runner: TableRunner, daemon: bytes) -> str:
        names = [m.name for m in runner.ready.members if m.daemon == daemon]
        return "/".join(names) or daemon.hex()[:8]

    async def close(self) -> None:
        if self.event_bots is not None:
            await self.event_bots.close()
        self._thinker.close()
        if self.discovery is not None:
            await self.discovery.close()
        await self.api.close()
        await self.mesh.close()
        self.store.close()
        self._sheet_file.close()
        self._proof_files.close()
        if self._lock is not None:
            self._lock.release()

    # --- Moving bytes ----------------------------------------------------------------

    def _send(self, outs: list[FrameOut]) -> None:
        """Lobby frames: to one daemon, or to every peer we know."""
        for destination, frame in outs:
            body = msgpack.packb(frame, use_bin_type=True)
            targets = (
                [p.key for p in self.mesh.peers()] if destination == BROADCAST else [destination]
            )
            for target in targets:
                self.mesh.send(target, LOBBY, body)

    def _send_deal(self, outs: list[WireOut]) -> None:
        """What the tables signed leaves once every commit so far is on the disk — what we
        signed first of all (the runners leave us that sync: ``sync_deferred``) — the
        ``fdatasync`` on the store's thread while the loop takes the next frames in, and in
        order, behind what still waits for the disk.  The commit itself is made here, in the
        move: a fault there (the disk full) is the move's, which pauses the table, and ``outs``
        never leave (the table taken up again sends what its journal holds)."""
        if not outs:
            return
        syncing = self.store.sync_later()
        self._unsynced.append(outs)
        if not self._syncing:
            self._after_sync(syncing)

    def _after_sync(self, syncing: Future[None] | None) -> None:
        """Send what waits once ``syncing`` is done (None: every commit is on the disk)."""
        if syncing is None:
            while self._unsynced:
                for daemon, data in self._unsynced.popleft():
                    self.mesh.send(daemon, DEAL, data)
            return
        self._syncing = True
        asyncio.wrap_future(syncing).add_done_callback(self._synced)

    def _synced(self, syncing: asyncio.Future[None]) -> None:
        """A sync is done: what came meanwhile may need another (:meth:`_sync_again`)."""
        if syncing.cancelled() or syncing.exception() is not None:
            log.warning("could not sync the journal: what we signed waits; trying again")
            asyncio.get_running_loop().call_later(HEARTBEAT, self._sync_again)
        else:
            self._sync_again()

    def _sync_again(self) -> None:
        """Every commit so far on the disk, then send: tried every heartbeat until it is
        (nothing leaves before it is on the disk)."""
        self._syncing = False
        try:
            syncing = self.store.sync_later()
        except StoreFault:
            self._syncing = True
            asyncio.get_running_loop().call_later(HEARTBEAT, self._sync_again)
            return
        self._after_sync(syncing)

    async def _on_message(self, peer: bytes, channel: str, body: bytes) -> None:
        if channel == LOBBY:
            try:
                frame = msgpack.unpackb(body, raw=False)
            except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
                return
            self._learn_peer_keys()
            host = self.mesh.host_of(peer)  # guesses of our code are counted per host
            self._send(self.lobby.receive(peer, frame, "" if is_this_machine(host) else host))
            joined = self.lobby.offers.get(self.lobby.joined) if self.lobby.joined else None
            if (
                joined is not None
            ):  # the other members of our table: a star of --peer meets this way
                self._connect_members(joined.members)
            self._start_ready_tables()
        elif channel == EVENT:
            try:
                frame = msgpack.unpackb(body, raw=False)
            except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
                frame = None  # refused by the desk, and said
            self._send_event(self.events.receive(peer, frame))
            self._seat_event_tables()
        elif channel in (DEAL, RELAYS):
            self._on_deal_message(peer, channel, body)
        elif channel == SETTLE:
            self._on_settle(peer, body)

    def _on_settle(self, peer: bytes, body: bytes) -> None:
        """A settle frame: to the table's settlement if it is played here; a ``want`` of a
        table played here before (finished, or left) is served from the store, to a member."""
        try:
            frame = parse_settle(body)
        except SettleFrameError:
            return
        runner = self.runners.get(frame.table_id)
        settlement = self.settlements.get(frame.table_id)
        if runner is not None and settlement is not None:
            self._send_settle(settlement.receive(peer, body, time.monotonic()))
            self._drive(runner, settlement.take_adopted)
            return
        record = self.store.table(frame.table_id)
        if record is None or record.manifest is None:
            return
        members = ReadyTable.from_bytes(record.manifest).members
        if peer in {m.daemon for m in members}:
            answer = served(self.store, frame)
            if answer is not None:
                self.mesh.send(peer, SETTLE, answer)

    def _send_settle(self, outs: list[SettleOut]) -> None:
        for daemon, body in outs:
            self.mesh.send(daemon, SETTLE, body)

    def _on_deal_message(self, peer: bytes, channel: str, body: bytes) -> None:
        """Hand a message of play (or a batch of relays) to the runners of the tables it names.
        One for the table still forming here is kept by the mesh, to hand over again once the
        table starts; one for a table we do not play is dropped."""
        named: dict[bytes, list[Message]] = {}
        for message in decoded([body] if channel == DEAL else relayed(body)):
            named.setdefault(message.table_id, []).append(message)
        early = [t for t in named if t not in self.runners and self.lobby.forming(t, peer)]
        if early:
            raise NotHandled(
                f"table {early[0].hex()[:8]} is not started here yet: a coin is still on its way"
            )
        for table_id, messages in named.items():
            runner = self.runners.get(table_id)
            if runner is None or peer not in runner.other_daemons():
                continue
            if not self._drive(runner, functools.partial(runner.receive, *messages)):
                paused = self._paused[runner.table_id]
                raise NotHandled(
                    f"table {runner.table_id.hex()[:8]} is paused here: {paused.fault.said}"
                )

    def _send_event(self, outs: list[FrameOut]) -> None:
        """Event frames: to one daemon, or to every peer we know."""
        for destination, frame in outs:
            body = msgpack.packb(frame, use_bin_type=True)
            targets = (
                [p.key for p in self.mesh.peers()] if destination == BROADCAST else [destination]
            )
            for target in targets:
                if target != self.identity.public_key:
                    self.mesh.send(target, EVENT, body)

    def _seat_event_tables(self) -> None:
        """Our player's table in each event round open now: linked to its members' daemons
        and formed through the lobby, under the id the event gives it."""
        self.lobby.fellows = self.events.fellows()
        for seating in self.events.seatings():
            table_id = seating.slot.table_id
            if table_id in self.runners or self.store.table(table_id) is not None:
                continue
            if table_id not in self.lobby.slots:
                log.info(
                    "event %s: round %d, table %d, seat %d — forming it",
                    seating.event_id.hex()[:8],
                    seating.round,
                    seating.table,
                    seating.seat,
                )
            for key, endpoint in self.events.endpoints(seating.slot.keys):
                host = endpoint[len("tcp://") :].rpartition(":")[0]
                if host not in WILDCARD_HOSTS:
                    self.mesh.connect(endpoint, expected_key=key, keep=True)
            self._send(self.lobby.expect(seating.slot))
        self._start_ready_tables()

    def _learn_peer_keys(self) -> None:
        """The keys the daemons at our ``--peer HOST:PORT`` addresses proved there (a peer
        given with its key is known from the start): the lobby trusts them — and, besides,
        whoever proves an invite code.  Kept for the run, so that a peer's later link
        elsewhere (it restarted under another address) does not undo it."""
        static = {peer.endpoint for peer in self.options.peers}
        self._peer_keys.update(
            status.key for status in self.mesh.peers() if status.endpoint in static
        )

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

    def _needed(self, key: bytes) -> bool:
        """Whether a table needs the daemon of ``key`` — a ``--peer``, a member of a table we
        play or are forming: the mesh never forgets it nor refuses it for room."""
        if key in self._peer_keys or any(
            key in runner.other_daemons() for runner in self.runners.values()
        ):
            return True
        events: EventDesk | None = getattr(self, "events", None)  # None while the mesh starts
        if events is not None and events.needs(key):
            return True
        lobby: Lobby | None = getattr(self, "lobby", None)  # None while the mesh starts
        joined = lobby.offers.get(lobby.joined) if lobby is not None and lobby.joined else None
        return joined is not None and any(member.daemon == key for member in joined.members)

    def _connect_members(self, members: Sequence[Member]) -> None:
        """Keep links to the daemons of these members.  An endpoint on a wildcard address
        (``--listen 0.0.0.0:P``) says nothing of where that daemon is: it is reached through
        discovery or ``--peer``, which tell the mesh its real address."""
        for member in members:
            host = member.endpoint[len("tcp://") :].rpartition(":")[0]
            if member.daemon != self.identity.public_key and host not in WILDCARD_HOSTS:
                self.mesh.connect(member.endpoint, expected_key=member.daemon, keep=True)

    def _journal_on_disk(self) -> Awaitable[None] | None:
        """The mesh's ``before_ack``: what it acknowledges is on the disk first, the loop
        going on meanwhile (:meth:`Store.sync_later`).  A local fault (the disk full) does
        not fail it, which the mesh would log with a traceback at each try: the
        acknowledgements wait until the store gets it there (:meth:`_on_disk_when_it_clears`)
        — the peers keep what is unacknowledged — and the table it stops says the fault."""
        try:
            syncing = self.store.sync_later()
        except StoreFault:
            return self._on_disk_when_it_clears()
        return None if syncing is None else self._on_disk(asyncio.wrap_future(syncing))

    async def _on_disk(self, syncing: Awaitable[None]) -> None:
        try:
            await syncing
        except StoreFault:
            await self._on_disk_when_it_clears()

    async def _on_disk_when_it_clears(self) -> None:
        """Every :data:`HEARTBEAT`, until every commit so far is on the disk."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            try:
                syncing = self.store.sync_later()
                if syncing is not None:
                    await asyncio.wrap_future(syncing)
                return
            except StoreFault:
                continue

    def _on_status(self, status: PeerStatus) -> None:
        """A peer came up: tell it about our open tables (it may have started after us)."""
        if status.state is PeerState.UP:
            log.info(
                "peer %s [%s] found at %s",
                status.name,
                fingerprint(status.key),
                (status.endpoint or "its own connection").removeprefix("tcp://"),
            )
            for _destination, frame in self.lobby.announcements():
                self.mesh.send(status.key, LOBBY, msgpack.packb(frame, use_bin_type=True))
        else:
            log.info("peer %s is %s", status.name, status.state.value)

    def _on_peers(self, peers: list[DiscoveredPeer]) -> None:
        """Link to the peers discovery lists, each at most once every :data:`RELINK_EVERY`
        (or sooner once its standing rose): the list changes with every beacon of a new key,
        and offering the whole of it each time would make a beacon flood cost a pass over it
        per beacon (and count a refusal for every peer listed each time).  The best standing
        first: the mesh keeps its links for them before strangers."""
        now = time.monotonic()
        never = (float("-inf"), Standing.STRANGER)
        due = [
            peer
            for peer in peers
            if (offered := self._offered.get(peer.key, never))[0] + RELINK_EVERY <= now
            or peer.standing > offered[1]
        ]
        for peer in sorted(due, key=lambda peer: -peer.standing):
            self._offered[peer.key] = (now, peer.standing)
            self.mesh.connect(peer.endpoint, expected_key=peer.key, standing=peer.standing)
        if len(self._offered) > 4 * len(peers) + 64:  # keys discovery no longer lists
            listed = {peer.key for peer in peers}
            self._offered = {key: at for key, at in self._offered.items() if key in listed}

    def favour(self, key: bytes) -> None:
        """``key``'s daemon proved our invite code (the lobby's exchange): discovery lists it,
        and the mesh links to it, before strangers and before keys that only name our table
        in their beacons — which anyone can."""
        if self.discovery is not None:
            self.discovery.favour(key)

    def _want_tables(self) -> None:
        """Tell discovery the names of the tables we opened, joined or look for: beacons that
        name one come before strangers' (a flood of fresh keys cannot keep a player out)."""
        if self.discovery is None:
            return
        lobby = self.lobby
        names = {
            offer.name
            for offer in lobby.tables()
            if offer.state is not OfferState.WITHDRAWN
            and (offer.opener == self.identity.public_key or offer.table_id == lobby.joined)
        }
        if lobby.wanted is not None:
            names.add(lobby.wanted[0])
        self.discovery.want(names)

    def _announcement(self) -> Announcement:
        tables = tuple(
            TableInfo(
                o.name,
                o.seats,
                min(len(o.members), o.seats),
                o.state is OfferState.OPEN,
                o.table_id,
            )
            for o in self.lobby.tables()
            if o.state is not OfferState.WITHDRAWN
        )
        return Announcement(self.options.name, self.mesh.port, tables[:8])

    # --- Tables ------------------------------------------------------------------

    def _start_ready_tables(self) -> None:
        for ready in self.lobby.take_ready():
            if ready.setup.table_id in self.runners:
                continue  # already playing it (taken up again after a restart)
            if self._playing() >= self.options.max_tables:
                log.warning(
                    "table %s refused: already playing %d tables (--max-tables)",
                    ready.setup.table_id.hex()[:8],
                    self._playing(),
                )
                continue
            log.info(
                "table %s (%s) formed: %s",
                ready.name or "-",
                ready.setup.table_id.hex()[:8],
                ", ".join(ready.setup.names),
            )
            self._drive(self._runner(ready), functools.partial(self._take_up, ready))
            self._send_event(self.events.table_ready(ready))

    def _take_up(self, ready: ReadyTable) -> list[WireOut]:
        """Play ``ready``'s table from what the store holds of it: a new one from its first
        deal, one left by a crash or paused by a fault where its journal left it."""
        self._remember(ready)
        return self.runners[ready.setup.table_id].resume()

    def _playing(self) -> int:
        return sum(1 for runner in self.runners.values() if not runner.finished)

    def _room_for_a_table(self) -> None:
        if self._playing() >= self.options.max_tables:
            raise ApiError(
                f"this daemon already plays {self._playing()} tables, its limit (tarotd "
                "--max-tables)"
            )

    def _runner(self, ready: ReadyTable) -> TableRunner:
        hosted = self._hosted_identities(ready)
        seats = [s for s, m in enumerate(ready.members) if m.key in hosted]
        bot_seats = [
            s for s in seats if ready.members[s].key != self.identity.public_key or self.options.bot
        ]
        level = self.options.bot or self.options.bot_level
        event_deals = self.events.deals_of(ready.setup.table_id)
        runner = TableRunner(
            ready,
            self.identity.public_key,
            hosted,
            bot_policies(bot_seats, level, self.options.deal_seed),
            self.store,
            event_deals or self.options.deals,
            cheat=self.options.cheat,
            proofs=self._proof_files,
            deal_seed=self.options.deal_seed,
        )
        self.settlements[ready.setup.table_id] = Settlement(
            runner, self.store, self.options.timeout
        )
        runner.on_events = functools.partial(self._publish, runner)
        runner.on_scored = functools.partial(self._on_scored, runner)
        runner.sync_deferred = True  # :meth:`_send_deal` syncs, off the loop
        runner.bots_decide_here = False  # they think on the bots' thread (:meth:`_bot_turn`)
        self._thinking.discard(
            ready.setup.table_id
        )  # a runner dropped by a fault had them scheduled:
        self._relaying.discard(ready.setup.table_id)  # this one schedules its own
        self._connect_members(ready.members)
        self.runners[ready.setup.table_id] = runner
        return runner

    def _on_scored(self, runner: TableRunner, deal: int, head: bytes, audit: DealAudit) -> None:
        """A deal scored here: at an event table, our player signs its row for the organiser."""
        self._send_event(self.events.scored(runner.table_id, deal, head, audit))

    def _hosted_identities(self, ready: ReadyTable) -> dict[bytes, Identity]:
        """The identities of our seats at this table: the ones started with, and bots a
        player added through the API (kept in the home, so found again after a restart)."""
        known = {identity.public_key: identity for identity, _ in self.seats}
        ours = [m.key for m in ready.members if m.daemon == self.identity.public_key]
        if any(key not in known for key in ours):
            for path in sorted(self.home.keys.glob("bot-*.key")):
                identity = load_or_create_identity(self.home, path.stem)
                known.setdefault(identity.public_key, identity)
        return {key: known[key] for key in ours if key in known}

    def _remember(self, ready: ReadyTable) -> None:
        """The table and its members in the store, if they are not there yet — folded into
        ``tarot.db`` at once, so that a copy of the file alone, or one whose log is lost, knows
        the table (and does not take it up)."""
        setup = ready.setup
        if self.store.table(setup.table_id) is not None:
            return
        record = TableRecord(
            setup.table_id,
            ready.name,
            setup.players,
            TableState.PLAYING,
            time.time(),
            ready.to_bytes(),
        )
        self.store.save_table(record)
        self.store.save_members(
            setup.table_id,
            [MemberRecord(s, m.key, m.name, m.endpoint) for s, m in enumerate(ready.members)],
        )
        self.store.checkpoint()

    def _played(self, name: str) -> bool:
        return any(
            record.name == name and record.state == TableState.FINISHED
            for record in self.store.tables()
        )

    def _resume_tables(self) -> None:
        """Tables left unfinished by a crash: rebuild their runners from the journal.  A
        table stopped by the upgrade to protocol v2, or by a lost log, is said once, at each
        start."""
        for record in self.store.tables():
            if record.state in (TableState.PROTOCOL_V1, TableState.PROTOCOL_V2):
                log.warning(
                    "table %s (%s) was being played under protocol tarot/%s, which this tarotd no "
                    "longer "
                    "speaks: its score sheet is kept, its deal cannot go on; open a new table",
                    record.table_id.hex()[:8],
                    record.name,
                    record.state.value.removeprefix("protocol-"),
                )
            if record.state == TableState.LOG_LOST:
                log.warning(
                    "table %s (%s) cannot go on: what this daemon signed and received in its last "
                    "deals was in the "
                    "log of %s, which is lost, and playing on could make it contradict itself; "
                    "its score sheet is kept "
                    "as far as the database has it; open a new table",
                    record.table_id.hex()[:8],
                    record.name,
                    self.home.db.name,
                )
            if record.state == TableState.PLAYING and record.manifest is not None:
                ready = ReadyTable.from_bytes(record.manifest)
                log.info("taking table %s up again where it was", record.table_id.hex()[:8])
                self._drive(self._runner(ready), functools.partial(self._take_up, ready))

    def _after_step(self, runner: TableRunner) -> None:
        self._publish(runner)  # the player sees the card before our bots answer it
        self._send_deal(runner.step(decisions=0))
        loop = asyncio.get_running_loop()
        if runner.bot_to_decide() is not None and runner.table_id not in self._thinking:
            self._thinking.add(runner.table_id)  # a table's bots one at a time, in order
            loop.call_later(self.options.think, self._bot_turn, runner)
        if runner.relays and runner.table_id not in self._relaying:
            self._relaying.add(runner.table_id)
            loop.call_later(RELAY_DELAY, self._send_relays, runner)
        self._publish(runner)
        settlement = self.settlements.get(runner.table_id)
        if settlement is not None:
            self._send_settle(settlement.after_step(time.monotonic()))
        if runner.finished:
            self.store.set_table_state(runner.table_id, TableState.FINISHED)
            if self.options.deals is not None and all(r.finished for r in self.runners.values()):
                self.done.set()

    def _drive(self, runner: TableRunner, move: Callable[[], list[WireOut]]) -> bool:
        """Make one move of ``runner``'s table — a message taken in, a decision, a timeout, a
        new deal — send what it produced and go on from there (:meth:`_after_step`).  False,
        and nothing done, if the table is paused or ``runner`` was dropped; False too if a
        local fault stops the move, which pauses the table (:meth:`_pause`).  Any other
        exception is the caller's (a move the rules refuse, a bug)."""
        if not self._current_runner(runner) or runner.table_id in self._paused:
            return False
        fault = self._move(runner, move)
        if fault is not None:
            self._pause(runner.ready, fault)
        return fault is None

    def _move(self, runner: TableRunner, move: Callable[[], list[WireOut]]) -> LocalFault | None:
        """:meth:`_drive`'s move, whatever the table's state: the fault that stopped it, if
        one did.  Nothing it sends is lost by that: ``runner`` hands out only what it wrote."""
        try:
            self._send_deal(move())
            self._after_step(runner)
        except Exception as error:
            fault = LocalFault.of(error)
            if fault is None:
                raise
            log.debug("table %s: %s", runner.table_id.hex()[:8], error)
            return fault
        return None

    def _current_runner(self, runner: TableRunner) -> bool:
        """Whether ``runner`` is the one playing its table (not one dropped by a fault)."""
        return self.runners.get(runner.table_id) is runner

    def _pause(self, ready: ReadyTable, fault: LocalFault) -> None:
        """Pause the table a local fault stopped (module docstring): said once, in the log and
        to the clients, and tried again by :meth:`_retry_paused`."""
        table_id, now = ready.setup.table_id, time.monotonic()
        self._paused[table_id] = Paused(ready, fault, now, now + HEARTBEAT)
        log.warning(
            "table %s paused here: %s, so this daemon can write nothing down, and it sends "
            "nothing it has not "
            "written down. Nobody is blamed and nothing is lost: the others' messages wait, "
            "unacknowledged, and "
            "the table goes on by itself once %s",
            table_id.hex()[:8],
            fault.said,
            fault.clears,
        )
        self.api.broadcast({"event": "paused", "fault": fault.value})

    def _retry_paused(self) -> None:
        """Try to take up each paused table whose time has come, from its journal as after a
        crash; the tries back off from :data:`HEARTBEAT` to :data:`MAX_RETRY` seconds (a try
        replays the deal so far, its proofs checked again)."""
        now = time.monotonic()
        for table_id, paused in list(self._paused.items()):
            if now < paused.retry_at:
                continue
            fault = self._move(
                self._runner(paused.ready), functools.partial(self._take_up, paused.ready)
            )
            if fault is None:
                del self._paused[table_id]
                log.info(
                    "table %s goes on: %s no more (paused %.0f s)",
                    table_id.hex()[:8],
                    paused.fault.said,
                    now - paused.since,
                )
                self.api.broadcast({"event": "resumed"})
            elif fault is not paused.fault:
                self._pause(paused.ready, fault)  # another fault now: said as well
            else:
                paused.wait = min(2 * paused.wait, MAX_RETRY)
                paused.retry_at = now + paused.wait

    def _pause_said(self, runner: TableRunner) -> PauseDocument | None:
        """What ``state`` and ``status`` say of a paused table: the fault and for how long."""
        paused = self._paused.get(runner.table_id)
        if paused is None:
            return None
        return {"fault": paused.fault.value, "seconds": round(time.monotonic() - paused.since, 1)}

    def _bot_turn(self, runner: TableRunner) -> None:
        """A bot's turn (``--think`` seconds after it came), thought over on the bots' thread
        while the loop goes on (tarotd/thinking.py); the next one is scheduled by
        :meth:`_after_step` (none for a runner dropped since by a fault: its successor
        schedules its own)."""
        if not self._current_runner(runner):
            return
        turn = runner.bot_turn()
        if turn is None:
            self._thinking.discard(runner.table_id)
            return
        self._think(runner, turn)

    def _think(self, runner: TableRunner, turn: BotTurn) -> None:
        """``turn`` thought over on the bots' thread; its answer played on the loop."""
        thought = asyncio.wrap_future(self._thinker.think(turn))
        thought.add_done_callback(functools.partial(self._bot_answer, runner, turn))

    def _bot_answer(
        self, runner: TableRunner, turn: BotTurn, thought: asyncio.Future[list[Action]]
    ) -> None:
        """Play the bot's answer (:meth:`TableRunner.answer`), on the loop."""
        if not self._current_runner(runner) or thought.cancelled():
            return  # a runner dropped by a fault (its successor asks its own), or closing
        if turn.seat in runner.bots:  # a stand-in's answer leaves the bots' turn alone
            self._thinking.discard(runner.table_id)
        error = thought.exception()
        if error is not None:
            log.error("table %s: a bot failed to decide", runner.table_id.hex()[:8], exc_info=error)
            return
        self._drive(runner, functools.partial(runner.answer, turn, thought.result()))

    def _send_relays(self, runner: TableRunner) -> None:
        if not self._current_runner(runner):
            return  # a runner dropped by a fault: its successor relays what it takes in
        self._relaying.discard(runner.table_id)
        for daemon, batch in runner.take_relays():
            self.mesh.send(daemon, RELAYS, batch)

    def _publish(self, runner: TableRunner) -> None:
        """The events of the player's own seat go to its clients; those of the bot seats
        hosted here stay here (their hands are theirs)."""
        own = self._own_seat(runner)
        for seat, event in runner.events:
            if seat == own:
                self.api.broadcast({"event": event.kind, "seat": seat, **event.data})
        runner.events.clear()
        if self._sheets_written.get(runner.table_id) != runner.completed:
            self._write_scores(runner)

    def _write_scores(self, runner: TableRunner) -> None:
        """``scores.json`` in the home: what ``tarot scores`` reads, daemon running or not.
        Written when a table starts and after each deal: replacing a file is slow (the
        filesystem syncs it), far too slow to do after every message.  Noted as written
        once it is: a full disk pauses the table, which writes it again when it goes on."""
        document = json.dumps(scores_document(runner), ensure_ascii=False, indent=1)
        self._sheet_file.replace(self.home.scores.name, document.encode())
        self._sheets_written[runner.table_id] = runner.completed

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
        self._send(self.lobby.announcements())
        self._send(self.lobby.heartbeat(now))  # the dealer coin's rounds
        self._start_ready_tables()
        self._send_event(self.events.heartbeat(now))
        self._seat_event_tables()
        self._say_unreachable()
        self._regroup_bots()
        self._want_tables()
        if self.discovery is not None:  # links the mesh forgot, to peers still beaconing
            self._on_peers(self.discovery.peers())
        self._retry_paused()
        up = [p.key for p in self.mesh.peers() if p.state is PeerState.UP]
        for table_id, settlement in list(self.settlements.items()):
            if table_id not in self._paused and self.runners.get(table_id) is settlement.runner:
                self._send_settle(settlement.heartbeat(now, up))
        for runner in list(self.runners.values()):
            if runner.table_id in self._paused:
                continue  # it waits for our disk, not for anybody's answer
            patience = self._patience(runner)
            if self.silence.overdue(runner, now, patience):
                log.warning(
                    "table %s: seats %s silent for %.0f s",
                    runner.table_id.hex()[:8],
                    sorted(runner.waiting_for()),
                    patience,
                )
                self._drive(runner, functools.partial(runner.stall, up))

    def _patience(self, runner: TableRunner) -> float:
        """How long ``runner``'s table may stand still before the seats it waits for are
        treated as gone: a player thinking at a daemon that answers, ``--decision-timeout``;
        a deck step, which nobody has to think about, or a seat whose daemon is away,
        ``--timeout``."""
        seat = runner.deciding
        if seat is None or seat in self._away(runner):
            return self.options.timeout
        return self.options.decision_timeout

    async def _autoplay_loop(self, patience: float) -> None:
        """A player whose client is closed does not hold the table up: after ``patience``
        seconds a bot takes the decision it owes (or asks for the next deal)."""
        while True:
            await asyncio.sleep(min(1.0, patience / 4))
            try:
                self._autoplay(patience)
            except Exception:
                log.exception("error in the autoplay of a player's seat")

    def _autoplay(self, patience: float) -> None:
        now, owed = time.monotonic(), {}
        for runner in list(self.runners.values()):
            for seat in runner.players_here:
                machine = runner.machines.get(seat)
                if runner.between_deals or (machine is not None and machine.decision() is not None):
                    owed[runner.table_id, seat] = self._owed.get((runner.table_id, seat), now)
        self._owed = owed
        if self.api.clients:
            self._owed = {
                slot: now for slot in owed
            }  # somebody is at the screen: the clock restarts
            self._stood_in.clear()
            return
        for (table_id, seat), since in list(owed.items()):
            runner = self.runners[table_id]
            if now - since < patience or table_id in self._paused:
                continue
            if (table_id, seat) not in self._stood_in:
                self._stood_in.add((table_id, seat))
                log.info(
                    "table %s: seat %d autoplayed until a client connects (none for %.1f s)",
                    table_id.hex()[:8],
                    seat,
                    now - since,
                )
            self._owed.pop((table_id, seat))
            if runner.between_deals:
                self._drive(runner, runner.next_deal)
            else:  # a stand-in thinks beside the loop too
                turn = runner.stand_in_turn(seat, self.options.bot_level)
                if turn is not None:
                    self._think(runner, turn)

    # --- The local API -----------------------------------------------------------

    async def _on_request(self, request: dict[str, Any]) -> Any:
        op = request["op"]
        if op == "event-join" and request.get("bots") is not None:
            try:
                return await self._host_event_bots(request)
            except EventError as error:
                raise ApiError(str(error)) from None
        if op.startswith("event"):
            try:
                return self._event_request(op, request)
            except EventError as error:
                raise ApiError(str(error)) from None
        if op in _ACTIONS:
            return self._act(op, request)
        if op == "join":
            return await self._join_by_code(request)
        handler = _REQUESTS.get(op)
        if handler is None:
            raise ApiError(f"unknown request {op!r}")
        return handler(self, request)

    def _scores(self) -> Any:
        runner = self._current()
        return scores_document(runner) if runner else None

    def _state(self) -> dict[str, Any]:
        runner = self._current()
        if runner is None:
            return {"table": None}
        return {
            **seat_state(runner, self.identity.public_key, self._away(runner)),
            "paused": self._pause_said(runner),
            "unsettled": runner.unsettled,
            "rows_awaited": self._rows_awaited(runner),
            "earlier": earlier_state(list(self.runners.values()), runner, self.identity.public_key),
        }

    def _rows_awaited(self, runner: TableRunner) -> list[str]:
        """The members a finished table waits for, to hold its last row (by name)."""
        settlement = self.settlements.get(runner.table_id)
        if settlement is None:
            return []
        return [self._member_name(runner, d) for d in settlement.waiting_for_rows()]

    def _tables(self) -> list[TableOffer]:
        return [
            {
                "table": o.table_id.hex(),
                "name": o.name,
                "seats": o.seats,
                "members": [m.name for m in o.members],
                "bots": [m.bot for m in o.members],
                "state": o.state.value,
                "invite": o.invite.shown if o.invite else None,
                "silence": o.silence.value,
                "verified": self.lobby.verified(o),
                "refused": o.refused,
            }
            for o in self.lobby.tables()
        ]

    def _unlock(self) -> dict[str, Any]:
        """``tarot unlock``: lift every lockout of guessers of our invite codes."""
        return {"unlocked": self.lobby.unlock()}

    def _open(self, request: dict[str, Any]) -> dict[str, Any]:
        name, seats = request.get("name", ""), request.get("seats", 5)
        if not isinstance(name, str) or len(name) > 64 or not name.isprintable():
            raise ApiError('"name" is the table\'s name: at most 64 printable characters')
        if type(seats) is not int:
            raise ApiError('"seats" is the number of seats: 3, 4 or 5')
        self._room_for_a_table()
        try:
            self._send(self.lobby.open(name, seats))
        except ValueError as error:
            raise ApiError(str(error)) from None
        return {"opened": True}

    def _join(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            table = bytes.fromhex(str(request.get("table", "")))
        except ValueError:
            raise ApiError('"table" is a table id in hexadecimal, as "tables" lists it') from None
        invite = request.get("invite")
        if invite is not None and not isinstance(invite, str):
            raise ApiError("\"invite\" is the table's invite code, as its opener's screen shows it")
        self._room_for_a_table()
        self._learn_peer_keys()
        try:
            self._send(self.lobby.join(table, invite))
        except ValueError as error:
            raise ApiError(str(error)) from None
        self._start_ready_tables()
        return {"joined": True}

    async def _join_by_code(self, request: dict[str, Any]) -> dict[str, Any]:
        """``join``: at once for a table we trust; with an invite code, once the table's opener
        answered our proof of it (a run of CPace, :mod:`protocol.pake`) — a wrong code is
        refused as before, by the opener now — or ``--timeout`` passed."""
        joined = self._join(request)
        table = bytes.fromhex(str(request.get("table", "")))
        deadline = time.monotonic() + self.options.timeout
        while self.lobby.proving(table) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        refusal = self.lobby.refusal(table) if request.get("invite") is not None else None
        if refusal is not None:
            raise ApiError(refusal)
        return joined

    def _leave(self) -> dict[str, Any]:
        try:
            self._send(self.lobby.leave())
        except ValueError as error:
            raise ApiError(str(error)) from None
        return {"left": True}

    def _event_request(self, op: str, request: dict[str, Any]) -> Any:
        """``events``, ``event-open``, ``event-join``, ``event-start``, ``event-close`` (the
        rows awaited declared lost), ``event-withdraw``, ``event-substitute``, ``event`` (one
        event's state) and ``event-record`` (its record, in hexadecimal): EventError for the
        client."""
        if op == "events":
            return self.events.listing()
        if op == "event-open":
            return self._open_event(request)
        event_id = self.events.find(str(request.get("event", "")))
        if op == "event-join":
            self._send_event(self.events.join(event_id, self.options.name))
            return {"joined": event_id.hex()}
        if op == "event-start":
            self._send_event(self.events.start(event_id))
            return {"started": event_id.hex()}
        if op == "event-close":
            self._send_event(self.events.close_now(event_id))
            return {"closed": event_id.hex()}
        if op == "event-withdraw":
            return {"withdrawn": self.events.withdraw(event_id, str(request.get("player", "")))}
        if op == "event-substitute":
            newcomer, player = self.events.substitute(
                event_id, str(request.get("newcomer", "")), str(request.get("player", ""))
            )
            return {"newcomer": newcomer, "player": player}
        held, desk = self.events.held.get(event_id), self.events
        if held is None and self.event_bots is not None:  # our bots play it, we do not
            desk, held = self.event_bots.holding(event_id) or (desk, None)
        if held is None:
            raise EventError("this daemon is not in that event: tarot event join")
        if op == "event":
            return desk.summary(held) | ({} if desk is self.events else {"seat": None})
        if op == "event-record":
            return {"event": event_id.hex(), "record": held.record.to_bytes().hex()}
        raise ApiError(f"unknown request {op!r}")

    async def _host_event_bots(self, request: dict[str, Any]) -> dict[str, Any]:
        """``event-join`` with ``bots``: that many bots hosted here register with the event,
        each a player of its own (:mod:`tarotd.event_bots`); the daemon's own player does not."""
        event_id = self.events.find(str(request.get("event", "")))
        count, level = request["bots"], request.get("level", self.options.bot_level)
        if type(count) is not int or not isinstance(level, str):
            raise EventError('"bots" is a number, "level" a bot\'s level')
        held = self.events.held.get(event_id)
        if held is not None and held.role is Role.ORGANISER:
            endpoint = self.mesh.endpoint
            host = endpoint.removeprefix("tcp://").rpartition(":")[0]
            if host in WILDCARD_HOSTS:  # the bots run here: this machine's loopback reaches us
                endpoint = endpoint.replace(host, "127.0.0.1", 1)
            heard = Heard(held.config, held.record.entries[0].wire, endpoint, 1)
        elif event_id in self.events.heard:
            heard = self.events.heard[event_id]
        else:
            raise EventError("no event of that id is heard here (tarot event list)")
        assert self.event_bots is not None  # made at the start
        names = await self.event_bots.add(event_id, heard, count, level)
        return {"joined": event_id.hex(), "bots": names}

    def _event_bot(
        self, home: Path, name: str, level: str, peers: Sequence[tuple[str, bytes]]
    ) -> Daemon:
        """A hosted event bot's daemon: this one's options, but its own home and name, its
        own seat played by the bot, on this machine's address (a port of its own)."""
        listen = self.options.listen.rpartition(":")[0] + ":0"
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

    def _open_event(self, request: dict[str, Any]) -> dict[str, Any]:
        name, rounds, deals = request.get("name"), request.get("rounds"), request.get("deals")
        fmt = request.get("format")
        if isinstance(fmt, str):
            if fmt not in FFT_FORMATS:
                raise EventError(f"format {fmt!r}: one of {', '.join(FFT_FORMATS)}")
            rounds, deals = FFT_FORMATS[fmt]
        if not isinstance(name, str) or type(rounds) is not int or type(deals) is not int:
            raise EventError('"name", and "format" or "rounds" and "deals", give the event')
        size, movement = request.get("tables", 4), request.get("movement", Movement.FFT.value)
        moves = {m.value: m for m in Movement} | {"best": Movement.BEST}
        if type(size) is not int or movement not in moves:
            raise EventError(f'"tables" is 4 or 5, "movement" one of {", ".join(moves)}')
        held = self.events.open(name, rounds, deals, size, moves[movement], self.options.silence)
        self._send_event(self.events.heartbeat(time.monotonic()))
        return {"event": held.event_id.hex(), "name": name, "rounds": rounds, "deals": deals}

    def _next_deal(self) -> dict[str, Any]:
        runner = self._current()
        if runner is None:
            raise ApiError("you are not at a table yet: open or join one")
        try:
            moved = self._drive(runner, runner.next_deal)
        except ValueError as error:
            raise ApiError(str(error)) from None
        if not moved:
            raise ApiError(self._paused[runner.table_id].refusal)
        return {"deal": runner.deal_number}

    def _gone(self, runner: TableRunner) -> list[int]:
        """The seats whose daemon has not answered for ``--timeout`` or more."""
        return sorted(
            seat for seat, seconds in self._away(runner).items() if seconds >= self.options.timeout
        )

    def _regroup_bots(self) -> None:
        """A daemon with no player (its seat a bot's, ``--bot``) goes on without a member gone
        for :data:`REGROUP_AFTER` timeouts between deals, as its player would: so the others'
        players, pressing their key, find it in the new table."""
        runner = self._current()
        if (
            self.options.bot is None
            or runner is None
            or runner.players_here
            or runner.deal_stage is not Stage.COMMIT
        ):
            return
        away = self._away(runner)
        gone = self._gone(runner)
        if runner.table_id in self._regroup_tried or not gone:
            return
        if all(away[seat] >= REGROUP_AFTER * self.options.timeout for seat in gone):
            self._regroup_tried.add(runner.table_id)
            try:
                self._regroup()
            except ApiError as why:
                log.info(
                    "table %s: cannot go on without the members gone: %s",
                    runner.table_id.hex()[:8],
                    why,
                )

    def _regroup(self) -> dict[str, Any]:
        """Go on without the members gone for good: this table ends here (its sheet kept), and
        the daemon seeks a new table of the same name with the members left — trusted, since
        they played together — which each of them asks for in turn (a bot's daemon by itself:
        :meth:`_regroup_bots`).  ApiError if nobody is gone, or fewer than three would be left."""
        runner = self._current()
        if runner is None:
            raise ApiError("you are not at a table")
        gone, names = self._gone(runner), runner.ready.setup.names
        if not gone:
            raise ApiError(
                f"no member has been silent for {self.options.timeout:.0f} s (--timeout) yet: the "
                "table "
                "waits for them"
            )
        if self.events.seating_of(runner.table_id) is not None:
            return self._abandon_event_table(runner, gone)
        left = [m for seat, m in enumerate(runner.ready.members) if seat not in gone]
        without = ", ".join(names[seat] for seat in gone)
        if len(left) < 3:
            raise ApiError(
                f"a table needs three players: without {without}, {len(left)} would be left"
            )
        self.store.set_table_state(runner.table_id, TableState.REGROUPED)
        del self.runners[runner.table_id]
        self.settlements.pop(runner.table_id, None)
        self._peer_keys.update(m.daemon for m in left if m.daemon != self.identity.public_key)
        name = runner.ready.name or "tarot"
        log.info(
            "table %s: going on without %s, gone for good — a new table %s of %d with the others",
            runner.table_id.hex()[:8],
            without,
            name,
            len(left),
        )
        self.lobby.forget_joined()
        self._send(self.lobby.want(name, len(left)))
        self._start_ready_tables()
        return {
            "table": name,
            "seats": len(left),
            "without": [names[seat] for seat in gone],
            "gone": without,
        }

    def _abandon_event_table(self, runner: TableRunner, gone: list[int]) -> dict[str, Any]:
        """An event table goes on without nobody: the round's deals it has not played are
        abandoned, each row signed by the members left and naming the gone silent, and the
        table ends here (its sheet kept).  The event's next round seats the others."""
        names = runner.ready.setup.names
        without = ", ".join(names[seat] for seat in gone)
        self.store.set_table_state(runner.table_id, TableState.REGROUPED)
        del self.runners[runner.table_id]
        self.settlements.pop(runner.table_id, None)
        log.info(
            "event table %s: %s gone for good — the %d deals left of the round are signed "
            "abandoned",
            runner.table_id.hex()[:8],
            without,
            max(0, (runner.deals_wanted or 0) - runner.completed),
        )
        self._send_event(self.events.abandon(runner.table_id, runner.completed, gone))
        return {
            "table": runner.ready.name,
            "without": [names[seat] for seat in gone],
            "gone": without,
            "abandoned": True,
        }

    def _add_bot(self) -> dict[str, Any]:
        """One more bot seat, hosted here, joins the table we are at (before it starts)."""
        try:
            self.lobby.filling()
        except ValueError as error:
            raise ApiError(str(error)) from None
        k = len(self.seats)
        identity, name = (
            load_or_create_identity(self.home, f"bot-{k}"),
            bot_name(self.options.name, k),
        )
        self._send(self.lobby.add_seat(identity, name, self.options.bot or self.options.bot_level))
        self.seats.append((identity, name))
        self._start_ready_tables()
        return {"bot": name, "level": self.options.bot_level}  # the client shows it by the name

    def _away(self, runner: TableRunner) -> dict[int, float]:
        """The seats of members whose daemon is unreachable, with seconds since last heard."""
        now, peers = time.time(), {p.key: p for p in self.mesh.peers()}
        away: dict[int, float] = {}
        for seat, member in enumerate(runner.ready.members):
            peer = peers.get(member.daemon)
            if peer is not None and peer.state is not PeerState.UP:
                away[seat] = now - peer.last_heard if peer.last_heard is not None else 0.0
        return away

    def _current(self) -> TableRunner | None:
        """The table being played: the first not finished (an event's player goes from table
        to table, round by round), else the last one played."""
        return next(
            (r for r in self.runners.values() if not r.finished),
            next(reversed(self.runners.values()), None),
        )

    def _own_seat(self, runner: TableRunner) -> int | None:
        return next(
            (s for s, m in enumerate(runner.ready.members) if m.key == self.identity.public_key),
            None,
        )

    def _act(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        runner = self._current()
        if runner is None:
            raise ApiError("you are not at a table yet: open or join one")
        seat = self._own_seat(runner)
        if seat is None:
            raise ApiError("this daemon has no seat of its own at the table")
        if seat in runner.bots:
            raise ApiError(
                "this daemon's seat is played by a bot (tarotd --bot): it takes no moves from a "
                "client"
            )
        try:
            action = _action(op, seat, request)
            moved = self._drive(runner, functools.partial(runner.act, seat, action))
        except (RuleError, CardCodeError, ValueError) as error:
            raise ApiError(str(error)) from None
        if not moved:
            raise ApiError(self._paused[runner.table_id].refusal)
        return {"done": op}

    def _status(self) -> Status:
        return {
            "name": self.options.name,
            "fingerprint": fingerprint(self.identity.public_key),
            "key": self.identity.public_key.hex(),
            "curve": self.options.curve,
            "endpoint": self.mesh.endpoint,
            "peers": [
                {"name": p.name, "fingerprint": fingerprint(p.key), "state": p.state.value}
                for p in self.mesh.peers()
            ],
            "connections": self.mesh.connections(),
            "refused": self._refused(),
            "mesh": self.mesh.stats.counted(),
            "unreachable": sorted(
                endpoint.removeprefix("tcp://") for endpoint in self._unreachable_peers()
            ),
            "discovery": None if self.discovery is None else {"reaching": self.discovery.reaching},
            "discovery_refused": self._discovery_refused(),
            "guesses": self.lobby.guesses.summary(),
            "tables": [
                {
                    "table": r.table_id.hex(),
                    "seats": list(r.ready.setup.names),
                    "deal": r.deal_number,
                    "stage": r.stage,
                    "scored": r.completed,
                    "waiting_for": sorted(r.waiting_for()),
                    "unsettled": r.unsettled,
                    "rows_awaited": self._rows_awaited(r),
                    "paused": self._pause_said(r),
                }
                for r in self.runners.values()
            ],
            "bots": {name: self.options.bot_level for _, name in self.seats[1:]},
        }

    def _unreachable_peers(self) -> dict[str, float]:
        """The ``--peer`` endpoints no daemon has answered at for ``--timeout``,
        with the seconds."""
        static = {peer.endpoint for peer in self.options.peers}
        return {
            e: s
            for e, s in self.mesh.unreachable().items()
            if e in static and s >= self.options.timeout
        }

    def _say_unreachable(self) -> None:
        """Say once when a ``--peer`` cannot be reached, and once when it answers again: a
        mistyped address or key would otherwise look like a player who has not come yet."""
        down = self._unreachable_peers()
        for endpoint in sorted(down.keys() - self._unreachable_said):
            log.warning(
                "--peer %s: no daemon has answered there for %.0f s — is it started, on this "
                "network, "
                "listening on that port, and is the key given for it its own (tarot status on "
                "that machine)?",
                endpoint.removeprefix("tcp://"),
                down[endpoint],
            )
        for endpoint in sorted(self._unreachable_said - down.keys()):
            log.info("--peer %s answers again", endpoint.removeprefix("tcp://"))
        self._unreachable_said = set(down)

    def _refused(self) -> dict[str, int]:
        """What the mesh and discovery turned away, by cause (:mod:`tarotd.refusals`)."""
        counts = self.mesh.refusals.counts()
        if self.discovery is not None:
            counts.update(self.discovery.refusals.counts())
        return counts

    def _discovery_refused(self) -> dict[str, int]:
        """Of :meth:`_refused`, what a flood of beacons costs: beacons, entries and links."""
        return {cause: n for cause, n in self._refused().items() if cause in DISCOVERY_CAUSES}


def _action(op: str, seat: int, request: dict[str, Any]) -> Action:
    """The game action a local API request asks for (ValueError for a bad card or contract)."""
    if op == "bid":
        contract = request.get("contract")
        return Bid(seat, None if contract in (None, "pass") else Contract.from_code(str(contract)))
    if op == "call":
        return Call(seat, card(str(request.get("card", ""))))
    if op == "ecart":
        return Ecart(seat, tuple(cards(_codes(request))))
    if op == "chelem":
        return AnnounceChelem(seat, request.get("announce") is True)
    if op == "poignee":
        return ShowPoignee(seat, tuple(cards(_codes(request))))
    return Play(seat, card(str(request.get("card", ""))))


def _codes(request: dict[str, Any]) -> list[str]:
    value = request.get("cards", [])
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise ValueError('"cards" is a list of card codes, such as ["KH", "T21"]')
    return value


_ACTIONS = frozenset({"bid", "call", "ecart", "chelem", "poignee", "play"})
#: The other requests of the local API (``event…`` and the actions aside), by ``op``.
_REQUESTS: Final[Mapping[str, Callable[[Daemon, dict[str, Any]], Any]]] = MappingProxyType(
    {
        "status": lambda daemon, request: daemon._status(),
        "scores": lambda daemon, request: daemon._scores(),
        "state": lambda daemon, request: daemon._state(),
        "next": lambda daemon, request: daemon._next_deal(),
        "bot": lambda daemon, request: daemon._add_bot(),
        "tables": lambda daemon, request: daemon._tables(),
        "open": Daemon._open,
        "join": Daemon._join,
        "regroup": lambda daemon, request: daemon._regroup(),
        "leave": lambda daemon, request: daemon._leave(),
        "unlock": lambda daemon, request: daemon._unlock(),
    }
)
