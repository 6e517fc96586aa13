"""Table hosting: one :class:`~tarotd.runner.TableRunner` per table played here, driven
move by move, its bots thought over beside the loop, its relays batched, its player's events
published, and its faults turned into pauses.

Every move of a table goes through :meth:`Hosting.drive`: the move, what it signed sent
behind the journal's sync (:mod:`tarotd.journal`), then what follows from it
(:meth:`Hosting._after_step`) — the player's events first, so that the card is on the screen
before the bots here answer it (the play's latency), then the bots' turn and the relays
scheduled.

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
import functools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.localapi import PauseDocument
from protocol.replication.audit import DealAudit
from protocol.replication.identity import Identity
from protocol.replication.messages import Message
from protocol.rules.deal import Action
from tarotd.ahead import FileAhead
from tarotd.channels import DEAL, HEARTBEAT, RELAYS, SETTLE
from tarotd.home import load_or_create_identity
from tarotd.lobby import ReadyTable
from tarotd.mesh import NotHandled
from tarotd.runner import TableRunner, WireOut, bot_policies, decoded, relayed
from tarotd.settlement import LINGER_TIMEOUTS, Settlement, SettleOut, served
from tarotd.settlement import FrameError as SettleFrameError
from tarotd.settlement import parse as parse_settle
from tarotd.store import LocalFault, MemberRecord, TableRecord, TableState
from tarotd.thinking import BotTurn, Thinker
from tarotd.views import scores_document

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")

#: Seconds relays wait to go out together (tarotd/runner.py, "Relays"): long enough for a
#: batch to gather the messages of a whole trick between bots, short enough for a proof to be
#: everywhere before a person has played the next card.  (0.1 s gave 2–4 % slower deals.)
RELAY_DELAY = 0.25
#: seconds at most between two tries to take up a table paused by a fault (doubling from HEARTBEAT)
MAX_RETRY = 8.0


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


class Hosting:
    """The tables this daemon plays: their runners and settlements, and what drives them."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.runners: dict[bytes, TableRunner] = {}
        #: How each table's deals are settled with its members (tarotd/settlement.py).
        self.settlements: dict[bytes, Settlement] = {}
        self.paused: dict[bytes, Paused] = {}  #: tables a local fault paused
        self.thinker = Thinker()  #: the bots' thread
        self._thinking: set[bytes] = set()  #: tables with a bot turn scheduled or thought over
        self._relaying: set[bytes] = set()  #: tables with a batch of relays scheduled
        self._sheets_written: dict[bytes, int] = {}  #: deals in each table's scores.json
        # What a deal's end writes, opened now: it may come when a flood took every descriptor.
        self._sheet_file = FileAhead(daemon.home.path)  #: scores.json, through a file opened ahead
        self._proof_files = FileAhead(daemon.home.path / "proofs")  #: home/proofs, likewise

    def close_files(self) -> None:
        self._sheet_file.close()
        self._proof_files.close()

    # --- Tables taken up ----------------------------------------------------------

    def start_ready_tables(self) -> None:
        daemon = self.daemon
        for ready in daemon.lobby.take_ready():
            if ready.setup.table_id in self.runners:
                continue  # already playing it (taken up again after a restart)
            if self.playing() >= daemon.options.max_tables:
                log.warning(
                    "table %s refused: already playing %d tables (--max-tables)",
                    ready.setup.table_id.hex()[:8],
                    self.playing(),
                )
                continue
            log.info(
                "table %s (%s) formed: %s",
                ready.name or "-",
                ready.setup.table_id.hex()[:8],
                ", ".join(ready.setup.names),
            )
            self.drive(self._runner(ready), functools.partial(self._take_up, ready))
            daemon.event_glue.send(daemon.events.table_ready(ready))

    def _take_up(self, ready: ReadyTable) -> list[WireOut]:
        """Play ``ready``'s table from what the store holds of it: a new one from its first
        deal, one left by a crash or paused by a fault where its journal left it."""
        self._remember(ready)
        return self.runners[ready.setup.table_id].resume()

    def playing(self) -> int:
        return sum(1 for runner in self.runners.values() if not runner.finished)

    def _runner(self, ready: ReadyTable) -> TableRunner:
        daemon, options = self.daemon, self.daemon.options
        hosted = self._hosted_identities(ready)
        seats = [s for s, m in enumerate(ready.members) if m.key in hosted]
        own = daemon.identity.public_key
        bot_seats = [s for s in seats if ready.members[s].key != own or options.bot]
        level = options.bot or options.bot_level
        event_deals = daemon.events.deals_of(ready.setup.table_id)
        runner = TableRunner(
            ready,
            own,
            hosted,
            bot_policies(bot_seats, level, options.deal_seed),
            daemon.store,
            event_deals or options.deals,
            cheat=options.cheat,
            proofs=self._proof_files,
            deal_seed=options.deal_seed,
        )
        self.settlements[ready.setup.table_id] = Settlement(runner, daemon.store, options.timeout)
        runner.on_events = functools.partial(self._publish, runner)
        runner.on_scored = functools.partial(self._on_scored, runner)
        runner.sync_deferred = True  # the journal syncs, off the loop (tarotd/journal.py)
        runner.bots_decide_here = False  # they think on the bots' thread (:meth:`_bot_turn`)
        # A runner dropped by a fault had them scheduled: this one schedules its own.
        self._thinking.discard(ready.setup.table_id)
        self._relaying.discard(ready.setup.table_id)
        daemon.peers.connect_members(ready.members)
        self.runners[ready.setup.table_id] = runner
        return runner

    def _on_scored(self, runner: TableRunner, deal: int, head: bytes, audit: DealAudit) -> None:
        """A deal scored here: at an event table, our player signs its row for the organiser."""
        events = self.daemon.events
        self.daemon.event_glue.send(events.scored(runner.table_id, deal, head, audit))

    def _hosted_identities(self, ready: ReadyTable) -> dict[bytes, Identity]:
        """The identities of our seats at this table: the ones started with, and bots a
        player added through the API (kept in the home, so found again after a restart)."""
        daemon = self.daemon
        known = {identity.public_key: identity for identity, _ in daemon.seats}
        ours = [m.key for m in ready.members if m.daemon == daemon.identity.public_key]
        if any(key not in known for key in ours):
            for path in sorted(daemon.home.keys.glob("bot-*.key")):
                identity = load_or_create_identity(daemon.home, path.stem)
                known.setdefault(identity.public_key, identity)
        return {key: known[key] for key in ours if key in known}

    def _remember(self, ready: ReadyTable) -> None:
        """The table and its members in the store, if they are not there yet — folded into
        ``tarot.db`` at once, so that a copy of the file alone, or one whose log is lost, knows
        the table (and does not take it up)."""
        setup, store = ready.setup, self.daemon.store
        if store.table(setup.table_id) is not None:
            return
        record = TableRecord(
            setup.table_id,
            ready.name,
            setup.players,
            TableState.PLAYING,
            time.time(),
            ready.to_bytes(),
        )
        store.save_table(record)
        store.save_members(
            setup.table_id,
            [MemberRecord(s, m.key, m.name, m.endpoint) for s, m in enumerate(ready.members)],
        )
        store.checkpoint()

    def played(self, name: str) -> bool:
        """Whether a table of this name was played here to its end."""
        return any(
            record.name == name and record.state == TableState.FINISHED
            for record in self.daemon.store.tables()
        )

    def resume_tables(self) -> None:
        """Tables left unfinished by a crash: rebuild their runners from the journal.  A
        table stopped by the upgrade to protocol v2, or by a lost log, is said once, at each
        start."""
        for record in self.daemon.store.tables():
            if record.state in (TableState.PROTOCOL_V1, TableState.PROTOCOL_V2):
                log.warning(
                    "table %s (%s) was being played under protocol tarot/%s, which this tarotd no "
                    "longer speaks: its score sheet is kept, its deal cannot go on; open a new "
                    "table",
                    record.table_id.hex()[:8],
                    record.name,
                    record.state.value.removeprefix("protocol-"),
                )
            if record.state == TableState.LOG_LOST:
                log.warning(
                    "table %s (%s) cannot go on: what this daemon signed and received in its last "
                    "deals was in the log of %s, which is lost, and playing on could make it "
                    "contradict itself; its score sheet is kept as far as the database has it; "
                    "open a new table",
                    record.table_id.hex()[:8],
                    record.name,
                    self.daemon.home.db.name,
                )
            if record.state == TableState.PLAYING and record.manifest is not None:
                ready = ReadyTable.from_bytes(record.manifest)
                log.info("taking table %s up again where it was", record.table_id.hex()[:8])
                self.drive(self._runner(ready), functools.partial(self._take_up, ready))

    def drop(self, runner: TableRunner) -> None:
        """The table ends here, its sheet kept: its members went on without some of them."""
        self.daemon.store.set_table_state(runner.table_id, TableState.REGROUPED)
        del self.runners[runner.table_id]
        self.settlements.pop(runner.table_id, None)

    # --- Moves ------------------------------------------------------------------------

    def _after_step(self, runner: TableRunner) -> None:
        daemon = self.daemon
        self._publish(runner)  # the player sees the card before our bots answer it
        daemon.journal.send(runner.step(decisions=0))
        loop = asyncio.get_running_loop()
        if runner.bot_to_decide() is not None and runner.table_id not in self._thinking:
            self._thinking.add(runner.table_id)  # a table's bots one at a time, in order
            loop.call_later(daemon.options.think, self._bot_turn, runner)
        if runner.relays and runner.table_id not in self._relaying:
            self._relaying.add(runner.table_id)
            loop.call_later(RELAY_DELAY, self.send_relays, runner)
        self._publish(runner)
        settlement = self.settlements.get(runner.table_id)
        if settlement is not None:
            self._send_settle(settlement.after_step(time.monotonic()))
        if runner.finished:
            daemon.store.set_table_state(runner.table_id, TableState.FINISHED)
            if daemon.options.deals is not None and all(r.finished for r in self.runners.values()):
                daemon.done.set()

    def drive(self, runner: TableRunner, move: Callable[[], list[WireOut]]) -> bool:
        """Make one move of ``runner``'s table — a message taken in, a decision, a timeout, a
        new deal — send what it produced and go on from there (:meth:`_after_step`).  False,
        and nothing done, if the table is paused or ``runner`` was dropped; False too if a
        local fault stops the move, which pauses the table (:meth:`_pause`).  Any other
        exception is the caller's (a move the rules refuse, a bug)."""
        if not self._current_runner(runner) or runner.table_id in self.paused:
            return False
        fault = self._move(runner, move)
        if fault is not None:
            self._pause(runner.ready, fault)
        return fault is None

    def _move(self, runner: TableRunner, move: Callable[[], list[WireOut]]) -> LocalFault | None:
        """:meth:`drive`'s move, whatever the table's state: the fault that stopped it, if
        one did.  Nothing it sends is lost by that: ``runner`` hands out only what it wrote."""
        try:
            self.daemon.journal.send(move())
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

    # --- Pauses -----------------------------------------------------------------------

    def _pause(self, ready: ReadyTable, fault: LocalFault) -> None:
        """Pause the table a local fault stopped (module docstring): said once, in the log and
        to the clients, and tried again by :meth:`_retry_paused`."""
        table_id, now = ready.setup.table_id, time.monotonic()
        self.paused[table_id] = Paused(ready, fault, now, now + HEARTBEAT)
        log.warning(
            "table %s paused here: %s, so this daemon can write nothing down, and it sends "
            "nothing it has not written down. Nobody is blamed and nothing is lost: the others' "
            "messages wait, unacknowledged, and the table goes on by itself once %s",
            table_id.hex()[:8],
            fault.said,
            fault.clears,
        )
        self.daemon.api.broadcast({"event": "paused", "fault": fault.value})

    def _retry_paused(self) -> None:
        """Try to take up each paused table whose time has come, from its journal as after a
        crash; the tries back off from :data:`HEARTBEAT` to :data:`MAX_RETRY` seconds (a try
        replays the deal so far, its proofs checked again)."""
        now = time.monotonic()
        for table_id, paused in list(self.paused.items()):
            if now < paused.retry_at:
                continue
            fault = self._move(
                self._runner(paused.ready), functools.partial(self._take_up, paused.ready)
            )
            if fault is None:
                del self.paused[table_id]
                log.info(
                    "table %s goes on: %s no more (paused %.0f s)",
                    table_id.hex()[:8],
                    paused.fault.said,
                    now - paused.since,
                )
                self.daemon.api.broadcast({"event": "resumed"})
            elif fault is not paused.fault:
                self._pause(paused.ready, fault)  # another fault now: said as well
            else:
                paused.wait = min(2 * paused.wait, MAX_RETRY)
                paused.retry_at = now + paused.wait

    def pause_said(self, runner: TableRunner) -> PauseDocument | None:
        """What ``state`` and ``status`` say of a paused table: the fault and for how long."""
        paused = self.paused.get(runner.table_id)
        if paused is None:
            return None
        return {"fault": paused.fault.value, "seconds": round(time.monotonic() - paused.since, 1)}

    # --- Bots and relays ------------------------------------------------------------------

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
        self.think(runner, turn)

    def think(self, runner: TableRunner, turn: BotTurn) -> None:
        """``turn`` thought over on the bots' thread; its answer played on the loop."""
        thought = asyncio.wrap_future(self.thinker.think(turn))
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
        self.drive(runner, functools.partial(runner.answer, turn, thought.result()))

    def send_relays(self, runner: TableRunner) -> None:
        if not self._current_runner(runner):
            return  # a runner dropped by a fault: its successor relays what it takes in
        self._relaying.discard(runner.table_id)
        for daemon, batch in runner.take_relays():
            self.daemon.mesh.send(daemon, RELAYS, batch)

    # --- What the player sees -------------------------------------------------------------

    def _publish(self, runner: TableRunner) -> None:
        """The events of the player's own seat go to its clients; those of the bot seats
        hosted here stay here (their hands are theirs)."""
        own = self.own_seat(runner)
        for seat, event in runner.events:
            if seat == own:
                self.daemon.api.broadcast({"event": event.kind, "seat": seat, **event.data})
        runner.events.clear()
        if self._sheets_written.get(runner.table_id) != runner.completed:
            self._write_scores(runner)

    def _write_scores(self, runner: TableRunner) -> None:
        """``scores.json`` in the home: what ``tarot scores`` reads, daemon running or not.
        Written when a table starts and after each deal: replacing a file is slow (the
        filesystem syncs it), far too slow to do after every message.  Noted as written
        once it is: a full disk pauses the table, which writes it again when it goes on."""
        document = json.dumps(scores_document(runner), ensure_ascii=False, indent=1)
        self._sheet_file.replace(self.daemon.home.scores.name, document.encode())
        self._sheets_written[runner.table_id] = runner.completed

    def current(self) -> TableRunner | None:
        """The table being played: the first not finished (an event's player goes from table
        to table, round by round), else the last one played."""
        return next(
            (r for r in self.runners.values() if not r.finished),
            next(reversed(self.runners.values()), None),
        )

    def own_seat(self, runner: TableRunner) -> int | None:
        own = self.daemon.identity.public_key
        return next((s for s, m in enumerate(runner.ready.members) if m.key == own), None)

    # --- The mesh's messages of play --------------------------------------------------------

    def on_deal_message(self, peer: bytes, channel: str, body: bytes) -> None:
        """Hand a message of play (or a batch of relays) to the runners of the tables it names.
        One for the table still forming here is kept by the mesh, to hand over again once the
        table starts; one for a table we do not play is dropped."""
        named: dict[bytes, list[Message]] = {}
        for message in decoded([body] if channel == DEAL else relayed(body)):
            named.setdefault(message.table_id, []).append(message)
        lobby = self.daemon.lobby
        early = [t for t in named if t not in self.runners and lobby.forming(t, peer)]
        if early:
            raise NotHandled(
                f"table {early[0].hex()[:8]} is not started here yet: a coin is still on its way"
            )
        for table_id, messages in named.items():
            runner = self.runners.get(table_id)
            if runner is None or peer not in runner.other_daemons():
                continue
            if not self.drive(runner, functools.partial(runner.receive, *messages)):
                paused = self.paused[runner.table_id]
                raise NotHandled(
                    f"table {runner.table_id.hex()[:8]} is paused here: {paused.fault.said}"
                )

    def on_settle(self, peer: bytes, body: bytes) -> None:
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
            self.drive(runner, settlement.take_adopted)
            return
        store = self.daemon.store
        record = store.table(frame.table_id)
        if record is None or record.manifest is None:
            return
        members = ReadyTable.from_bytes(record.manifest).members
        if peer in {m.daemon for m in members}:
            answer = served(store, frame)
            if answer is not None:
                self.daemon.mesh.send(peer, SETTLE, answer)

    def _send_settle(self, outs: list[SettleOut]) -> None:
        for daemon, body in outs:
            self.daemon.mesh.send(daemon, SETTLE, body)

    # --- The heartbeat ------------------------------------------------------------------

    def heartbeat(self, now: float, up: list[bytes]) -> None:
        """Paused tables tried again; settlements' rounds; silent seats timed out (``up``:
        the peers the mesh has up)."""
        self._retry_paused()
        for table_id, settlement in list(self.settlements.items()):
            if table_id not in self.paused and self.runners.get(table_id) is settlement.runner:
                self._send_settle(settlement.heartbeat(now, up))
        for runner in list(self.runners.values()):
            if runner.table_id in self.paused:
                continue  # it waits for our disk, not for anybody's answer
            patience = self._patience(runner)
            if self.daemon.silence.overdue(runner, now, patience):
                log.warning(
                    "table %s: seats %s silent for %.0f s",
                    runner.table_id.hex()[:8],
                    sorted(runner.waiting_for()),
                    patience,
                )
                self.drive(runner, functools.partial(runner.stall, up))

    def _patience(self, runner: TableRunner) -> float:
        """How long ``runner``'s table may stand still before the seats it waits for are
        treated as gone: a player thinking at a daemon that answers, ``--decision-timeout``;
        a deck step, which nobody has to think about, or a seat whose daemon is away,
        ``--timeout``."""
        options = self.daemon.options
        seat = runner.deciding
        if seat is None or seat in self.daemon.peers.away(runner):
            return options.timeout
        return options.decision_timeout

    # --- A finished table's last row ---------------------------------------------------------

    def rows_awaited(self, runner: TableRunner) -> list[str]:
        """The members a finished table waits for, to hold its last row (by name)."""
        settlement = self.settlements.get(runner.table_id)
        if settlement is None:
            return []
        return [_member_name(runner, d) for d in settlement.waiting_for_rows()]

    async def until_rows_are_held(self) -> None:
        """Before exiting at the end of a finite table, wait — within
        ``LINGER_TIMEOUTS`` timeouts — until every member holds its last row (the heartbeat
        goes on meanwhile: it serves the closing to a member that asks), and say whose."""
        said: set[bytes] = set()
        finished = [s for s in self.settlements.values() if s.runner.finished]
        while not self.daemon.interrupted and not all(
            s.may_leave(time.monotonic()) for s in finished
        ):
            for settlement in finished:
                waiting = set(settlement.waiting_for_rows()) - said
                if waiting:
                    said |= waiting
                    log.info(
                        "table %s is over: waiting (at most %.0f s) until %s hold its last row",
                        settlement.runner.table_id.hex()[:8],
                        LINGER_TIMEOUTS * self.daemon.options.timeout,
                        ", ".join(_member_name(settlement.runner, d) for d in waiting),
                    )
            await asyncio.sleep(HEARTBEAT / 2)


def _member_name(runner: TableRunner, daemon: bytes) -> str:
    names = [m.name for m in runner.ready.members if m.daemon == daemon]
    return "/".join(names) or daemon.hex()[:8]
