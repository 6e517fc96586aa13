"""One table as this daemon plays it: its hosted seats' machines, deal after deal.

The runner is the small, dumb loop around the protocol's state machines (sans IO too: the
daemon moves the bytes).  It hands every message a hosted seat signs to the other seats
hosted here and to the daemons of the other members, feeds every message that arrives to
the hosted seats, lets the bots decide, records each scored deal on the table's score sheet
and starts the next deal with the next dealer (counter-clockwise).

Everything a seat signs or receives is written to the journal *before* it is sent or acted
on, with each deal's seeds before the first commitment: a daemon killed at any moment is
rebuilt from its journal (:meth:`TableRunner.resume`) and the deal goes on.  So is everything
the daemon takes in of the next deal before it has started it (a faster daemon's
commitments), and a deal's result is in :attr:`TableRunner.sheet` only once it is on the
disk.  A runner whose journal failed (the disk full) may have moved in memory past what is
on the disk: the daemon drops it and takes the table up again from the journal, as after a
crash, once the journal works again.

**Relays.**  A seat passes on every message it accepts from another seat
(protocol/replication/machine.py): a seat an equivocator sent another message for the same slot then
holds both, the proof, and a message still reaches a daemon whose link to its signer is down.
Neither needs the relay at once, and sent at once every message would cross the table four times at
five players, each copy a frame to receive, hash and acknowledge.  So what a hosted seat signs goes
out at once, while relays wait in :attr:`TableRunner.relays` until the daemon sends them together,
one frame per daemon (:meth:`TableRunner.take_relays`, :func:`relayed`).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import random
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import msgpack

from protocol import wire
from protocol.bots.bots import make_bot
from protocol.bots.players import Policy, decide
from protocol.deck.proofs import frame
from protocol.plugins import Cheater, required_cheat_lab
from protocol.refusal import Refusal, Refused
from protocol.replication.agreement import void_certified
from protocol.replication.audit import Audits, DealAudit
from protocol.replication.identity import Identity
from protocol.replication.machine import Event, SeatMachine
from protocol.replication.manifest import SignedManifest
from protocol.replication.messages import Message, MessageError, decode, encode
from protocol.replication.public import Stage
from protocol.replication.transcript import proof_file
from protocol.replication.verdict import Fault, Verdict
from protocol.rules.deal import Action
from protocol.rules.scoring import ScoreSheet
from protocol.rules.view import SeatView
from tarotd.ahead import FileAhead
from tarotd.lobby import ReadyTable
from tarotd.mesh.wire import MAX_FRAME
from tarotd.store import DealState
from tarotd.thinking import BotTurn
from tarotd.views import deal_breakdown

log = logging.getLogger(__name__)

WireOut = tuple[bytes, bytes]  #: (destination daemon key, encoded message — or a batch of relays)
MAX_AHEAD = 512  #: messages of the next deal kept while this one ends here
MAX_RELAYED = 512  #: messages in one batch of relays; a batch holding more is refused whole
#: a batch is cut before it grows past this (the mesh takes 2 MiB frames)
RELAY_BATCH_BYTES = 512 * 1024


class Journal(Protocol):
    """What the runner writes before it acts, and reads back after a crash (the store)."""

    def save_seed(self, table_id: bytes, deal: int, seat: int, seed: bytes) -> None: ...

    def seed(self, table_id: bytes, deal: int, seat: int) -> bytes | None: ...

    def append_message(self, table_id: bytes, deal: int, message: Message, own: bool) -> bool: ...

    def sync(self) -> None:
        """Put what was written so far on the disk (appended messages may wait for this)."""

    def messages(self, table_id: bytes, deal: int) -> list[Message]: ...

    def start_deal(self, table_id: bytes, deal: int, dealer: int) -> object: ...

    def deals(self, table_id: bytes) -> Sequence[StoredDeal]: ...

    def record_deal(
        self,
        table_id: bytes,
        deal: int,
        sheet: ScoreSheet,
        results: Sequence[Mapping[str, object]],
        closing: Sequence[Message] | Mapping[int, bytes] = (),
    ) -> None:
        """The deal :attr:`DealState.SCORED`, with the sheet and results that hold it and its
        certificate (served to the members that lack it), at once."""

    def sheet(self, table_id: bytes) -> ScoreSheet | None: ...

    def results(self, table_id: bytes) -> list[dict[str, object]]: ...


class StoredDeal(Protocol):
    @property
    def deal(self) -> int: ...

    @property
    def state(self) -> DealState: ...


def deal_result(number: int, dealer: int, audit: DealAudit) -> dict[str, object]:
    """One row of ``tarot scores --json``: what the audit of the deal found and gave."""
    referee, verdict = audit.referee, audit.verdict
    played = referee is not None and audit.outcome is not None
    return {
        "deal": number,
        "dealer": dealer,
        "contract": referee.contract.code if played and referee and referee.contract else None,
        "taker": referee.taker if played and referee else None,
        "scores": list(audit.scores),
        "penalties": list(audit.penalised),
        "audit": "ok" if verdict is None else _verdict_json(audit, verdict),
        "breakdown": deal_breakdown(
            audit
        ),  #: the score as checked by hand, the hidden cards once audited
    }


def scored_line(names: Sequence[str], result: Mapping[str, object]) -> str:
    """A scored deal for the daemon's log, from its row (:func:`deal_result`): the contract and
    its taker, or why it scored nothing, and each seat's score — what every member's sheet
    shows, never a card."""
    taker, contract, scores = result.get("taker"), result.get("contract"), result.get("scores")
    if isinstance(taker, int) and contract is not None:
        what = f"{contract} by {names[taker]}"
    else:
        what = str(result.get("void") or "no contract")
    each = ", ".join(
        f"{n} {s:+d}" for n, s in zip(names, scores if isinstance(scores, list) else [])
    )
    audit = result.get("audit")
    said = "" if audit in ("ok", "void") else "; the audit named a fault (tarot scores)"
    return f"{what}: {each}{said}"


def _verdict_json(audit: DealAudit, verdict: Verdict) -> dict[str, object]:
    """A row's verdict; a silence also says whose word it rests on (``reported_by``, seats)."""
    named = verdict.to_json()
    if verdict.fault is Fault.SILENCE:
        named["reported_by"] = list(audit.reporters(len(audit.scores)))
    return named


@dataclass
class TableRunner:
    ready: ReadyTable
    daemon_key: bytes
    identities: dict[bytes, Identity]  #: the hosted seats' identities, by public key
    bots: dict[int, Policy]  #: seats played by a bot here (a seat hosted but absent is a human's)
    journal: Journal
    deals_wanted: int | None = None
    deal_number: int = 0
    #: ``tarotd --cheat``: the daemon's own seat runs this attack (protocol/plugins.py)
    cheat: str | None = None
    #: where (home/proofs) an honest seat that names a cheater writes the proof file
    proofs: FileAhead | None = None
    #: ``tarotd --deal-seed``, tests only: the hosted seats' seeds derived from it
    deal_seed: int | None = None
    machines: dict[int, SeatMachine] = field(default_factory=dict)
    sheet: ScoreSheet = field(init=False)
    results: list[dict[str, object]] = field(default_factory=list)  #: one per scored deal
    events: list[tuple[int, Event]] = field(default_factory=list)
    between_deals: bool = False  #: the last deal is scored; the next waits for the player's "next"
    #: each hosted seat's view as the last deal ended
    last_views: dict[int, SeatView] = field(default_factory=dict)
    #: messages of the next deal journaled before it started here (:meth:`_keep_ahead`)
    _ahead: int = 0
    #: The digest of every message handed to this deal's machines: each one arrives up to once
    #: from its signer and once relayed by every other daemon, and a copy is known by it before
    #: it costs a write and a pass through the machines.
    _seen: set[bytes] = field(default_factory=set)
    #: bots autoplaying for absent players
    _stand_ins: dict[int, Policy] = field(default_factory=dict)
    _audits: Audits = field(default_factory=Audits)  #: one for the hosted seats: one replay a deal
    #: Messages of other seats the hosted seats accepted, to pass on with the next batch.
    relays: list[Message] = field(default_factory=list)
    #: Called with the events of a message received, before the sync that must precede
    #: sending what the hosted seats signed in answer: a player sees a card as soon as it is
    #: checked, not after the disk (the last card of a deal makes every seat sign its
    #: reveal, and an fsync shared by five daemons took up to 10 ms).  Showing what another
    #: seat did needs no sync: that seat holds it, and a restart is sent it again.
    on_events: Callable[[], None] | None = None
    #: Called with each deal's number, its transcript's head and its audit once the deal is
    #: scored here, just before it is written down: an event table's daemon signs the deal's
    #: row then.  A crash (or a full disk) between the two scores the same deal again from
    #: the journal, and the row is signed again, the same (the signature is deterministic);
    #: the other order left a row scored but never signed.
    on_scored: Callable[[int, bytes, DealAudit], None] | None = None
    #: Whether the caller syncs the journal before it sends what :meth:`_dispatch` returns
    #: — the daemon, on the store's thread (``Store.sync_later``), while its loop takes the
    #: next frames in: an ``fdatasync`` of 5 to 50 ms on a shared disk held every frame behind
    #: it.  False (the default): the runner syncs before it returns them.
    sync_deferred: bool = False
    #: Whether :meth:`act` and :meth:`stall` let the bots decide at once, as :meth:`step`
    #: does; False for the daemon, whose bots think on a thread of their own, each asked by
    #: :meth:`bot_turn` (tarotd/thinking.py).
    bots_decide_here: bool = True

    def __post_init__(self) -> None:
        self.sheet = ScoreSheet(list(self.ready.setup.names))

    # --- Who is where -----------------------------------------------------------------

    @property
    def table_id(self) -> bytes:
        return self.ready.setup.table_id

    @property
    def hosted_seats(self) -> list[int]:
        return [
            seat for seat, member in enumerate(self.ready.members) if member.key in self.identities
        ]

    @property
    def dealer(self) -> int:
        return (self.ready.first_dealer + self.deal_number) % self.ready.setup.players

    @property
    def completed(self) -> int:
        return len(self.results)

    @property
    def players_here(self) -> list[int]:
        """Hosted seats played by a person through the local API (not by a bot)."""
        return [seat for seat in self.hosted_seats if seat not in self.bots]

    @property
    def finished(self) -> bool:
        return self.deals_wanted is not None and self.completed >= self.deals_wanted

    def other_daemons(self) -> list[bytes]:
        return list(
            dict.fromkeys(m.daemon for m in self.ready.members if m.daemon != self.daemon_key)
        )

    # --- The loop -------------------------------------------------------------------

    def start_deal(self) -> list[WireOut]:
        """Seeds first, written down; then the hosted seats commit."""
        self.journal.start_deal(self.table_id, self.deal_number, self.dealer)
        log.info(
            "table %s: deal %d, %s deals",
            self.table_id.hex()[:8],
            self.deal_number + 1,
            self.ready.setup.names[self.dealer],
        )
        outgoing: list[Message] = []
        for seat in self.hosted_seats:
            seed = self.journal.seed(self.table_id, self.deal_number, seat) or self._new_seed(seat)
            self.journal.save_seed(self.table_id, self.deal_number, seat, seed)
            factory = self._machine_class(seat)
            machine = factory(
                self.ready.setup, self.deal_number, self.dealer, seat, self._identity(seat), seed
            )
            self._arm(machine)
            machine.trusted_seats, machine.audits = self._trusted, self._audits
            self.machines[seat] = machine
        for machine in list(self.machines.values()):
            outgoing.extend(machine.start())
        outs = self._dispatch(outgoing)
        self._ahead = 0
        for message in self.journal.messages(self.table_id, self.deal_number):
            # what the others sent before the deal started here
            if message.seat not in self.machines:
                outs += self._route(message)
        return outs

    def receive(self, *messages: Message) -> list[WireOut]:
        """Messages from another daemon, decoded by it (:func:`decoded`) — one, or a batch of
        relays: each written down and handed to the hosted seats, as if it came alone."""
        outs: list[WireOut] = []
        for message in messages:
            if message.digest in self._seen or message.table_id != self.table_id:
                continue  # a copy (a relay) of a message the machines have had, or another table's
            # A message for a hosted seat is checked by its machine: a copy, or a forgery that
            # names its signer.
            outs += self._route(message)
        return outs

    def take_relays(self) -> list[WireOut]:
        """The relays waiting, as batches for the daemon of every other member but each
        message's signer's (which has it); none are left waiting."""
        relays, self.relays = self.relays, []
        outs: list[WireOut] = []
        for daemon in self.other_daemons():
            wires = [encode(m) for m in relays if self.ready.members[m.seat].daemon != daemon]
            outs.extend((daemon, batch) for batch in _batches(wires))
        return outs

    def _route(self, message: Message) -> list[WireOut]:
        upcoming = self.deal_number + 1 if self.machines else self.deal_number
        if message.deal == upcoming and not self.finished:
            self._keep_ahead(message)
            return []
        if message.deal != self.deal_number or not self.machines:
            return []  # the deal is scored here already, or further ahead than any member can be
        return self._deliver(message)

    def _keep_ahead(self, message: Message) -> None:
        """A faster daemon has started the next deal: its message goes to the journal, to be
        handed to the machines when the deal starts here (:meth:`start_deal`) — in the
        journal, not in memory, because the mesh counts it delivered, and nobody would send
        it again after a crash here.  Unchecked until then, so at most :data:`MAX_AHEAD`."""
        if self._ahead < MAX_AHEAD and self.journal.append_message(
            self.table_id, message.deal, message, own=False
        ):
            self._ahead += 1

    def _deliver(self, message: Message) -> list[WireOut]:
        self._seen.add(message.digest)
        self.journal.append_message(self.table_id, self.deal_number, message, own=False)
        outgoing: list[Message] = []
        for machine in self.machines.values():
            outgoing.extend(machine.receive(message))
        self._take_events()
        if self.events and self.on_events is not None:
            self.on_events()
        return self._dispatch(outgoing)

    def step(self, decisions: int | None = None) -> list[WireOut]:
        """Let the bots decide (at most ``decisions`` of them: a daemon that paces its bots
        takes one at a time); when the deal is over everywhere here, score it and go on."""
        outs: list[WireOut] = []
        taken = 0
        while decisions is None or taken < decisions:
            seat = self.bot_to_decide()
            if seat is None:
                break
            machine = self.machines[seat]
            assert machine.game is not None
            for action in decide(machine.game, self.bots[seat]):
                outs += self._dispatch(machine.act(action))
            taken += 1
        if self.settled:
            self._record()
            if not self.finished:
                self.deal_number += 1
                outs += self._deal_again()
        return outs

    @property
    def _decisions(self) -> int | None:
        """What :meth:`act` and :meth:`stall` let :meth:`step` decide: every bot, or none."""
        return None if self.bots_decide_here else 0

    def bot_turn(self) -> BotTurn | None:
        """The decision a hosted bot owes now, if any, asked over a copy of its seat's game
        for a worker to think over while the daemon goes on (tarotd/thinking.py)."""
        seat = self.bot_to_decide()
        if seat is None:
            return None
        game = self.machines[seat].game
        assert game is not None
        return BotTurn.ask(self.deal_number, seat, game, self.bots[seat])

    def answer(self, turn: BotTurn, actions: Sequence[Action]) -> list[WireOut]:
        """A bot's actions for the turn it was asked, played if the turn still stands (else
        dropped: :meth:`bot_turn` asks it again); then, as after any move, :meth:`step`
        without deciding."""
        machine = self.machines.get(turn.seat)
        outs: list[WireOut] = []
        if (
            machine is not None
            and machine.decision() is not None
            and turn.stands(self.deal_number, machine.game)
        ):
            for action in actions:
                outs += self._dispatch(machine.act(action))
        return outs + self.step(decisions=0)

    def next_deal(self) -> list[WireOut]:
        """The player has read the score sheet: deal again."""
        if self.finished:
            raise Refused("the table has finished", Refusal.TABLE_FINISHED)
        if not self.between_deals:
            raise Refused("the deal is not over yet", Refusal.DEAL_NOT_SCORED)
        self.between_deals = False
        return self.start_deal()

    def _deal_again(self) -> list[WireOut]:
        """Bots deal again at once; a person first reads the score sheet and asks for the
        next deal (the other daemons keep its first messages until then)."""
        if self.players_here:
            self.between_deals = True
            return []
        return self.start_deal()

    @property
    def deal_stage(self) -> Stage:
        """Where the current deal is, :attr:`Stage.DONE` between deals."""
        machine = next(iter(self.machines.values()), None)
        return Stage.DONE if machine is None else machine.public.stage

    @property
    def stage(self) -> str:
        """:attr:`deal_stage` as ``tarot status`` says it
        ("shuffle", "bidding", "play, trick 3"…)."""
        stage = self.deal_stage
        game = next(iter(self.machines.values())).public.game if self.machines else None
        if stage is Stage.PLAY and game is not None:
            return f"play, trick {len(game.tricks) + 1}"
        return stage.value

    def bot_to_decide(self) -> int | None:
        """A hosted bot seat that owes a decision now, if any."""
        return next(
            (
                s
                for s, m in self.machines.items()
                if s in self.bots and m.decision() is not None and m.game is not None
            ),
            None,
        )

    def act(self, seat: int, action: Action) -> list[WireOut]:
        """A human player's decision for a hosted seat (RuleError if the rules forbid it,
        :class:`~protocol.refusal.Refused` if the seat has no decision here)."""
        machine = self.machines.get(seat)
        if seat not in self.hosted_seats:
            raise Refused(
                f"seat {seat} is not played from this daemon", Refusal.NOT_PLAYED_HERE, seat=seat
            )
        if machine is None and not self.between_deals:
            raise Refused("the deal is scored and the table has finished", Refusal.TABLE_FINISHED)
        if machine is None:
            raise Refused(
                "it is not this seat's turn to decide: the deal is scored; ask for the next deal",
                Refusal.DEAL_SCORED,
            )
        return self._dispatch(machine.act(action)) + self.step(self._decisions)

    def stall(self, reachable: Collection[bytes] | None = None) -> list[WireOut]:
        """Time out the seats the deal waits for (:meth:`SeatMachine.stall`); ``reachable``,
        the member daemons the mesh reaches now, if the caller knows: the seats of the others
        do not count as answering."""
        unreachable = (
            []
            if reachable is None
            else [
                seat
                for seat, member in enumerate(self.ready.members)
                if member.daemon != self.daemon_key and member.daemon not in reachable
            ]
        )
        outgoing: list[Message] = []
        for machine in self.machines.values():
            outgoing.extend(machine.stall(unreachable))
        return self._dispatch(outgoing) + self.step(self._decisions)

    def adopt(self, deal: int, closing: Sequence[Message]) -> bool:
        """Take the other members' closing chain of the deal being played here, if it is one
        (:meth:`SeatMachine.follow`) and the deal is not settled here yet: every hosted seat
        then stands where the chain ends it, and :meth:`step` scores it.  False, and nothing
        changed, otherwise.  Not journaled message by message: the closing is written with
        the deal's row, and a crash before that asks for it again."""
        if deal != self.deal_number or not self.machines or self.settled:
            return False
        followed: dict[int, SeatMachine] = {}
        for seat, machine in self.machines.items():
            follower = self._machine_class(seat).follow(
                self.ready.setup,
                deal,
                self.dealer,
                seat,
                self._identity(seat),
                machine.seed,
                closing,
                self._audits,
                self._trusted,
            )
            if follower is None:
                return False
            followed[seat] = follower
        self.machines = followed
        self._seen.update(message.digest for message in closing)
        return True

    def vote_void(self) -> dict[int, bytes]:
        """The hosted seats' votes to void the deal, if every one of them may vote
        (:meth:`SeatMachine.vote_void`); none otherwise — a daemon's seats vote together."""
        if not self.machines or not all(m.cannot_settle for m in self.machines.values()):
            return {}
        votes = {seat: m.vote_void() for seat, m in self.machines.items()}
        return {seat: vote for seat, vote in votes.items() if vote is not None}

    def void(self, deal: int, votes: Mapping[int, bytes]) -> list[WireOut]:
        """Record the deal being played here as void, on a quorum's votes
        (:func:`~protocol.replication.agreement.void_certified`) — no score, nobody charged — and
        deal the next.  Nothing changes if the votes do not certify it or the deal is settled
        here."""
        setup = self.ready.setup
        if deal != self.deal_number or not self.machines or self.settled:
            return []
        if not void_certified(setup.table_id, setup.members, deal, votes):
            return []
        reason = (
            "abandoned: the members were cut off from each other and could not agree where "
            "the deal stopped — nobody charged"
        )
        sheet = ScoreSheet.from_json(self.sheet.to_json())
        sheet.add_void(reason)
        result: dict[str, object] = {
            "deal": deal,
            "dealer": self.dealer,
            "contract": None,
            "taker": None,
            "scores": [0] * setup.players,
            "penalties": [],
            "audit": "void",
            "void": reason,
            "breakdown": None,
        }
        results = [*self.results, result]
        self.journal.record_deal(self.table_id, deal, sheet, results, dict(votes))
        self.sheet, self.results = sheet, results
        self._log_scored(result)
        self.last_views = {}
        self.machines = {}
        self._seen.clear()
        if self.finished:
            return []
        self.deal_number += 1
        return self._deal_again()

    @property
    def settled(self) -> bool:
        """The deal being played here is over and its record stands (nothing to adopt)."""
        return bool(self.machines) and all(m.done for m in self.machines.values())

    @property
    def unsettled(self) -> bool:
        """This daemon's seats timed out as many members as answered: it cannot end the deal
        alone, and waits for the others' word or closing (:mod:`protocol.replication.agreement`)."""
        return any(
            m.outvoted or (m.public.stage is Stage.DONE and not m.done)
            for m in self.machines.values()
        )

    def waiting_for(self) -> set[int]:
        waiting: set[int] = set()
        for machine in self.machines.values():
            waiting |= machine.waiting_for()
        return waiting - set(self.machines)

    @property
    def deciding(self) -> int | None:
        """The seat whose player owes a decision now, if the deal waits for one rather than
        for a deck step (:attr:`SeatMachine.deciding`)."""
        machine = next(iter(self.machines.values()), None)
        return None if machine is None else machine.deciding

    @property
    def progress(self) -> Hashable:
        """A mark that changes whenever the deal moves here — a new deal, a message added to
        the chain, a seat's message of a round collected — and only then: the daemon times a
        silent seat from its last change (:mod:`tarotd.silence`)."""
        chain = max(
            (len(machine.transcript.messages) for machine in self.machines.values()), default=0
        )
        return self.deal_number, chain, frozenset(self.waiting_for())

    # --- Inside -----------------------------------------------------------------------

    def _new_seed(self, seat: int) -> bytes:
        """A seat's seed for this deal: from the OS, or from a test's ``--deal-seed`` (the
        same for the same deal and seat on every run, so that a test can count on a hand)."""
        if self.deal_seed is None:
            return os.urandom(32)
        return seeded(self.deal_seed, b"seat", self.deal_number, seat)

    def _write_down_signed(self, message: Message) -> bool:
        """Journal ``message`` if a seat hosted here signed it (True), and know it when the
        others relay it back; a relay of another seat's message was written down on arrival."""
        if message.seat not in self.machines:
            return False
        self.journal.append_message(self.table_id, message.deal, message, own=True)
        self._seen.add(message.digest)
        return True

    @property
    def _trusted(self) -> frozenset[int]:
        """The seats whose shuffle and lock the audit need not replay: ours, computed here
        from our seeds — unless a seat of ours cheats (the lab), when every step is replayed."""
        return frozenset() if self.cheat is not None else frozenset(self.hosted_seats)

    # --- The cheat lab: only a daemon started with --cheat loads it, through its hook -----
    # What a daemon adds around the attack is the transport: the frames the cheater addresses
    # itself go through the mesh exactly as they are (an equivocation really sends different
    # bytes to different peers), and a replaying seat is given its messages of the deal before.

    def _machine_class(self, seat: int) -> type[SeatMachine]:
        """The honest machine, but for our own seat's attack when this daemon cheats (its bot
        seats play fair)."""
        if self.cheat is None or self.ready.members[seat].key != self.daemon_key:
            return SeatMachine
        return required_cheat_lab("tarotd --cheat").machine(self.cheat)

    def _arm(self, machine: SeatMachine) -> None:
        """Give a cheater its messages of the deal before, from the journal."""
        cheater = self._cheater(machine)
        if cheater is not None:
            earlier = self.journal.messages(self.table_id, self.deal_number - 1)
            cheater.earlier = [m for m in earlier if m.seat == machine.seat]

    def _addressed_by_cheaters(self) -> list[WireOut]:
        """The frames our cheaters address themselves, to the daemons hosting the seats they
        are for (every other daemon when they name none)."""
        outs: list[WireOut] = []
        for machine in self.machines.values():
            cheater = self._cheater(machine)
            for seats, data in cheater.take_addressed() if cheater is not None else ():
                chosen = range(len(self.ready.members)) if seats is None else sorted(seats)
                daemons = dict.fromkeys(self.ready.members[s].daemon for s in chosen)
                outs += [(daemon, data) for daemon in daemons if daemon != self.daemon_key]
        return outs

    def _cheater(self, machine: SeatMachine) -> Cheater | None:
        return None if self.cheat is None else required_cheat_lab("tarotd --cheat").cheater(machine)

    def _cheats(self, machine: SeatMachine) -> bool:
        return self._cheater(machine) is not None

    def _identity(self, seat: int) -> Identity:
        return self.identities[self.ready.members[seat].key]

    def _dispatch(self, messages: Sequence[Message]) -> list[WireOut]:
        """Write each message a hosted seat signed down, give it to the other hosted seats,
        then send it, once all of them (and what was received before) are on the disk: one
        sync, here or the caller's (:attr:`sync_deferred`).  A relay — another seat's message
        passed on — was written down on arrival: it waits in :attr:`relays` for the next
        batch.

        Every hosted seat that accepts a message passes it on, so with several seats here the
        same message comes back once per seat: it is taken once.  (Taken again, each of a
        three-seat daemon's messages left three times for every other daemon.)"""
        outs: list[WireOut] = []
        queue = list(messages)
        taken: set[bytes] = set()
        signed_here = False
        while queue:
            message = queue.pop(0)
            if message.digest in taken or (
                message.seat in self.machines and message.digest in self._seen
            ):
                continue  # passed back by another hosted seat: every machine here has it
            taken.add(message.digest)
            if self._write_down_signed(message):
                signed_here = True
                outs += self._to_others([message])
            else:
                self.relays.append(message)
            for seat, machine in self.machines.items():
                # not its own relay
                if seat != message.seat and not machine.transcript.accepted(message):
                    queue.extend(machine.receive(message))
        if signed_here and not self.sync_deferred:
            self.journal.sync()
        self._take_events()
        return outs + self._addressed_by_cheaters()

    def _take_events(self) -> None:
        for seat, machine in self.machines.items():
            self.events.extend((seat, event) for event in machine.take_events())

    def _record(self) -> None:
        """Score the deal over on the disk — its row on a copy of the sheet, its result, its
        state, in one write — and only then here: a write that failed (the disk full) leaves
        the runner as it was, to record the same deal, once, when it is called again."""
        witness = self.machines[self.hosted_seats[0]]
        audit = witness.audit
        if audit is None:
            return
        referee = audit.referee
        result = deal_result(self.deal_number, self.dealer, audit)
        named = result["audit"]
        if (
            audit.verdict is not None
            and isinstance(named, dict)
            and self.proofs is not None
            and not self._cheats(witness)
        ):
            # Relative to the home, so that every honest daemon's sheet holds the same row.
            path = self._write_proof(self.proofs, witness, audit.verdict)
            named["proof"] = f"{self.proofs.directory.name}/{path.name}"
        sheet = ScoreSheet.from_json(self.sheet.to_json())
        if audit.outcome is not None and referee is not None:
            sheet.add_deal(
                list(audit.scores),
                contract=referee.contract,
                taker=referee.taker,
                partner=referee.partner,
            )
        else:
            reason = result["void"] = self._void_reason(audit)
            sheet.add_void(reason)
        audit.charge(sheet)
        results = [*self.results, result]
        if self.on_scored is not None:
            self.on_scored(self.deal_number, witness.transcript.head, audit)
        self.journal.record_deal(
            self.table_id, self.deal_number, sheet, results, witness.transcript.messages
        )
        self.sheet, self.results = sheet, results
        self._log_scored(result)
        self.last_views = {
            seat: view for seat, m in self.machines.items() if (view := m.view()) is not None
        }
        self.machines = {}
        self._seen.clear()

    def _log_scored(self, result: Mapping[str, object]) -> None:
        log.info(
            "table %s: deal %d scored — %s",
            self.table_id.hex()[:8],
            self.deal_number + 1,
            scored_line(self.ready.setup.names, result),
        )

    def _write_proof(self, files: FileAhead, witness: SeatMachine, verdict: Verdict) -> Path:
        """The signed transcript that proves the verdict, for ``tarot audit`` on any machine
        (through a file opened ahead: it is written when descriptors may be short)."""
        proof = proof_file(
            witness.transcript, verdict, SignedManifest(self.ready.manifest, self.ready.signatures)
        )
        return files.replace(f"{self.table_id.hex()}-{self.deal_number}.tarot-proof", proof)

    def _void_reason(self, audit: DealAudit) -> str:
        """Why a deal scored nothing, for the sheet: who abandoned it, by name, and why."""
        verdict, names = audit.verdict, self.ready.setup.names
        if audit.abandoned and verdict is not None and verdict.seat is not None:
            if verdict.proven:
                return (
                    f"abandoned: {names[verdict.seat]} cheated, "
                    f"proven by its own signed messages — {verdict.reason}"
                )
            reporters = ", ".join(names[seat] for seat in audit.reporters(len(names)))
            return (
                f"abandoned: {names[verdict.seat]} {verdict.reason} — "
                f"unproven: reported silent by {reporters}"
            )
        referee = audit.referee
        return (referee.void_reason if referee else None) or (
            "abandoned" if audit.abandoned else "void"
        )

    def stand_in_turn(self, seat: int, level: str) -> BotTurn | None:
        """The decision a bot takes once for a player's seat (its client is gone and the table
        waits), asked as :meth:`bot_turn` asks a bot's, and answered by :meth:`answer`."""
        machine = self.machines.get(seat)
        if machine is None or machine.game is None or machine.decision() is None:
            return None
        stand_in = self._stand_ins.setdefault(seat, bot_policies([seat], level)[seat])
        return BotTurn.ask(self.deal_number, seat, machine.game, stand_in)

    # --- After a crash ----------------------------------------------------------------

    def resume(self) -> list[WireOut]:
        """Take the table up where the journal left it: the current deal's machines rebuilt
        from their seeds and stored messages (signing nothing new for a slot already
        spoken in), or the next deal started.  Returns what to send again: peers ignore what
        they already have.

        That includes our messages of the deal before: killed just after scoring it, our
        last ones (the reveal, the score signature) may have died with the mesh's outbox in
        memory, and the others cannot finish that deal without them."""
        self.results = self.journal.results(self.table_id)
        self.sheet = self.journal.sheet(self.table_id) or self.sheet
        deals = list(self.journal.deals(self.table_id))
        if not deals:
            return self.start_deal()
        last = deals[-1]
        self.deal_number = last.deal + (1 if last.state is DealState.SCORED else 0)
        earlier = self._own_messages(self.deal_number - 1) if self.deal_number > 0 else []
        if last.state is DealState.SCORED:
            return earlier + ([] if self.finished else self._deal_again())
        stored = self.journal.messages(self.table_id, self.deal_number)
        outgoing: list[Message] = []
        for seat in self.hosted_seats:
            seed = self.journal.seed(self.table_id, self.deal_number, seat)
            if seed is None:  # killed before this seat's seed was written: it never committed
                return earlier + self.start_deal()
            factory = self._machine_class(seat)
            args = (self.ready.setup, self.deal_number, self.dealer, seat, self._identity(seat))
            try:
                machine, resend = factory.resume(*args, seed, stored)
            except ValueError:
                # What it signed followed timeouts its replay cannot retrace (a chain rewound
                # to the others'): it signs nothing more in this deal, and ends it on the
                # others' closing or a void (protocol/replication/agreement.py) — never
                # contradicting itself.
                machine, resend = factory.mute(*args, seed, stored), []
            machine.trusted_seats, machine.audits = self._trusted, self._audits
            self.machines[seat] = machine
            outgoing.extend(resend)
        for message in outgoing:  # what the seed signs again, written down as anything sent
            self._write_down_signed(message)
        self.journal.sync()
        outgoing.extend(m for m in stored if m.seat in self.machines)
        return earlier + self._to_others(outgoing)

    def _own_messages(self, deal: int) -> list[WireOut]:
        """What the hosted seats signed in ``deal``, to send again."""
        hosted = set(self.hosted_seats)
        return self._to_others(
            [m for m in self.journal.messages(self.table_id, deal) if m.seat in hosted]
        )

    def _to_others(self, messages: Sequence[Message]) -> list[WireOut]:
        """Messages the hosted seats signed, each encoded once, for the daemon of every other
        member (relays go in batches: :meth:`take_relays`)."""
        daemons = self.other_daemons()
        return [(daemon, data) for data in map(encode, messages) for daemon in daemons]


def relayed(data: bytes) -> list[bytes]:
    """The messages of a batch of relays (:meth:`TableRunner.take_relays`); none — the batch
    refused whole — if it is not a list of byte strings, or holds more than :data:`MAX_RELAYED`."""
    try:
        batch = wire.array(
            "a batch of relays",
            wire.unpack(data, max_size=MAX_FRAME, what="a batch of relays", max_depth=2),
            max_length=MAX_RELAYED,
        )
        return [wire.binary(f"relay {k}", item, MAX_FRAME) for k, item in enumerate(batch)]
    except wire.FieldError:
        return []


def decoded(frames: Sequence[bytes]) -> list[Message]:
    """The messages these frames hold, those that decode: the daemon decodes each frame
    once, to hand it to the runner of the table it names."""
    messages = []
    for data in frames:
        try:
            messages.append(decode(data))
        except MessageError:
            pass
    return messages


def _batches(wires: Sequence[bytes]) -> list[bytes]:
    """``wires`` packed into msgpack lists of at most :data:`MAX_RELAYED` messages and about
    :data:`RELAY_BATCH_BYTES` bytes each."""
    batches: list[bytes] = []
    start, size = 0, 0
    for end, message in enumerate(wires):
        if end > start and (end - start >= MAX_RELAYED or size + len(message) > RELAY_BATCH_BYTES):
            batches.append(_packed(wires[start:end]))
            start, size = end, 0
        size += len(message)
    if start < len(wires):
        batches.append(_packed(wires[start:]))
    return batches


def _packed(wires: Sequence[bytes]) -> bytes:
    packed: bytes = msgpack.packb(list(wires), use_bin_type=True)
    return packed


def seeded(deal_seed: int, purpose: bytes, *numbers: int, size: int = 32) -> bytes:
    """``size`` bytes that stand in for the OS's randomness under ``tarotd --deal-seed``: a
    hash of the seed, what the bytes are for and where (deal, seat, draw).  Anyone who knows
    the seed knows every one of them, which is what a test wants and a game must never have."""
    decimals = (str(n).encode() for n in (deal_seed, *numbers))
    return hashlib.shake_256(frame(b"tarot/test/deal-seed", purpose, *decimals)).digest(size)


def seeded_entropy(deal_seed: int) -> Callable[[int], bytes]:
    """The lobby's randomness (table ids, dealer coins) under ``tarotd --deal-seed``: draw
    after draw from :func:`seeded`, so that a daemon hosting every seat under the same keys
    forms the same table with the same first dealer on every run — the cards depend on both."""
    draws = itertools.count()
    return lambda size: seeded(deal_seed, b"lobby", next(draws), size=size)


def bot_policies(seats: Sequence[int], level: str, seed: int | None = None) -> dict[int, Policy]:
    """Bots for these seats; seeded only in tests (a daemon's bots draw from the OS)."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return {seat: make_bot(level, random.Random(rng.getrandbits(64))) for seat in seats}
