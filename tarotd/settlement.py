"""How the members of a table end every deal on one row, with no server: closings asked for,
served and adopted, and the last row of a finished table brought to every member.

**A deal is settled by its closing chain**: its transcript through the score signatures of
the members that answered — a quorum (:func:`protocol.replication.agreement.settled`).  That chain
is the certificate: signed message by message, it shows every step, who was timed out and where
(their reveals name them), and the score each signer gave.  Any member verifies it by
replaying it on its own seat (:meth:`~protocol.replication.machine.SeatMachine.follow`) and adopts
it: a member whose cable was cut at a deck step, one that timed the others out alone, one killed
and started again after the others moved on.  A member or a minority cannot make one: the
signatures of a quorum are needed.

**What a member lacks, it asks for** (``want``), rather than wait for the next message to
bring it: as soon as its deal is unsettled here or has stood still for ``--timeout``, and
again whenever a member comes back.  **Any member that has the deal scored serves it**
(``closing``) from its store, whenever it runs — at the table, at another one or idle
(:func:`served`).  A member that scores a deal says so to the others (``holds``); one that
has played a finite table's last deal stays, within :data:`LINGER_TIMEOUTS` timeouts, until
every member holds the last row, and says whose it waits for.

Frames, on the mesh's ``settle`` channel, are msgpack maps; each is checked here before use::

    {"t": "want",    "table": id, "deal": n}
    {"t": "closing", "table": id, "deal": n, "chain": [message, …]}
    {"t": "holds",   "table": id, "deal": n}

Sans IO like the runner: the daemon (and the fault simulator, ``lab/faultsim``) passes the
time in and moves the frames.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

import msgpack

from protocol import wire
from protocol.replication.agreement import settled, void_certified, void_statement
from protocol.replication.identity import verify
from protocol.replication.messages import Kind, Message, MessageError, decode, encode
from tarotd.runner import TableRunner, WireOut

SettleOut = tuple[bytes, bytes]  #: (destination daemon key, frame body)

ASK_EVERY: Final = 2.0  #: seconds between two rounds of asking for a closing (and serving one)
LINGER_TIMEOUTS: Final = 6  #: a finished table's member waits this many timeouts at most
MAX_CHAIN: Final = 4096  #: messages in a closing (a deal at five has about 250)
MAX_FRAME: Final = 4 * 1024 * 1024  #: bytes of a settle frame
MAX_SEATS: Final = 5
#: Seconds a member's word that it cannot settle the deal counts, unless said again.
STUCK_FOR: Final = 3 * ASK_EVERY


class FrameKind(enum.StrEnum):
    WANT = "want"
    CLOSING = "closing"
    HOLDS = "holds"
    VOID = "void"


@dataclass(frozen=True)
class SettleFrame:
    kind: FrameKind
    table_id: bytes
    deal: int
    chain: tuple[Message, ...] = ()
    #: A ``want``'s seats that cannot settle the deal (``outvoted``, or voted already).
    outvoted: tuple[int, ...] = ()
    #: A ``void``'s votes to void the deal, seat → signature.
    votes: Mapping[int, bytes] = field(default_factory=dict)

    def encode(self) -> bytes:
        body: dict[str, object] = {"t": self.kind.value, "table": self.table_id, "deal": self.deal}
        if self.kind is FrameKind.CLOSING:
            body["chain"] = [encode(m) for m in self.chain]
        elif self.kind is FrameKind.WANT and self.outvoted:
            body["outvoted"] = list(self.outvoted)
        elif self.kind is FrameKind.VOID:
            body["votes"] = dict(self.votes)
        packed: bytes = msgpack.packb(body, use_bin_type=True)
        return packed


class FrameError(ValueError):
    """A settle frame that is not one (the text says why): dropped, nothing changed."""


def parse(body: bytes) -> SettleFrame:
    """The one gate for a settle frame's untrusted bytes (:mod:`protocol.wire` unpacks them
    and checks each field).  Fields a kind does not use are ignored."""
    with wire.refused_as(FrameError):
        data = wire.unpack(
            body,
            max_size=MAX_FRAME,
            what="settle frame",
            max_depth=2,
            int_keys=True,
            max_array=MAX_CHAIN,
            max_map=MAX_SEATS + 8,
        )
        if type(data) is not dict:
            raise FrameError(f"a settle frame is a msgpack map, got {wire.describe(data)}")
        kind = wire.choice("t", data.get("t"), _KINDS)
        table_id = wire.blob("table", data.get("table"), 16)
        deal = wire.integer("deal", data.get("deal"), 0, 2**31 - 1)
        chain: tuple[Message, ...] = ()
        outvoted: tuple[int, ...] = ()
        votes: dict[int, bytes] = {}
        if kind is FrameKind.WANT and "outvoted" in data:
            outvoted = tuple(
                wire.array_of("outvoted", data["outvoted"], _seat, max_length=MAX_SEATS)
            )
        if kind is FrameKind.VOID:
            raw_votes = data.get("votes")
            if type(raw_votes) is not dict:
                raise FrameError(
                    f"votes is a map of seat to signature, got {wire.describe(raw_votes)}"
                )
            votes = {
                _seat("a voting seat", seat): wire.blob(f"the vote of seat {seat}", vote, 64)
                for seat, vote in raw_votes.items()
            }
        if kind is FrameKind.CLOSING:
            raw = wire.array_of("chain", data.get("chain"), _message, max_length=MAX_CHAIN)
            try:
                chain = tuple(decode(m) for m in raw)
            except MessageError as exc:
                raise FrameError(f"a message of the chain does not decode ({exc})") from None
    return SettleFrame(kind, table_id, deal, chain, outvoted, votes)


_KINDS: Final = {kind.value: kind for kind in FrameKind}


def _seat(what: str, value: object) -> int:
    return wire.integer(what, value, 0, MAX_SEATS - 1)


def _message(what: str, value: object) -> bytes:
    return wire.binary(what, value, MAX_FRAME)


class Closings(Protocol):
    """Where a daemon's scored deals' certificates are (the store)."""

    def closing(self, table_id: bytes, deal: int) -> list[Message] | dict[int, bytes] | None: ...


def served(closings: Closings, frame: SettleFrame) -> bytes | None:
    """The answer to a ``want``: the deal's certificate — its closing chain, or the votes
    that voided it — if this daemon has the deal scored.  The caller has checked that the
    asker is a member of the table."""
    if frame.kind is not FrameKind.WANT:
        return None
    kept = closings.closing(frame.table_id, frame.deal)
    if not kept:
        return None
    if isinstance(kept, dict):
        return SettleFrame(FrameKind.VOID, frame.table_id, frame.deal, votes=kept).encode()
    return SettleFrame(FrameKind.CLOSING, frame.table_id, frame.deal, tuple(kept)).encode()


class Settlement:
    """One table's settling at one daemon, beside its runner."""

    def __init__(self, runner: TableRunner, closings: Closings, timeout: float) -> None:
        self.runner = runner
        self.closings = closings
        self.timeout = timeout
        #: Deal → the daemons known to hold its row (this one included once it does).
        self.holders: dict[int, set[bytes]] = {}
        self.finished_at: float | None = None
        self._told = runner.completed  #: rows said to the others (those before, at the start)
        self._asked_at = -math.inf
        self._served: dict[tuple[bytes, int], float] = {}
        self._heard: set[bytes] = set()
        self._progress: object = None
        self._still_since = 0.0
        self._pending: SettleFrame | None = None
        self._pending_from = b""  #: the member that sent the closing pending
        self._deal = runner.deal_number
        #: Seats known not to be able to settle the deal being played, since when.
        self._stuck: dict[int, float] = {}
        #: Valid votes to void the deal being played, seat → signature.
        self.votes: dict[int, bytes] = {}

    @property
    def members(self) -> list[bytes]:
        """The other members' daemons."""
        return self.runner.other_daemons()

    # --- what the daemon calls ------------------------------------------------------------

    def after_step(self, now: float) -> list[SettleOut]:
        """After each move of the table: a new row here is said to every member."""
        runner, outs = self.runner, []
        me = runner.daemon_key
        while self._told < runner.completed:
            deal = self._told
            self.holders.setdefault(deal, set()).add(me)
            body = SettleFrame(FrameKind.HOLDS, runner.table_id, deal).encode()
            outs += [(daemon, body) for daemon in self.members]
            self._told += 1
        if runner.finished and self.finished_at is None:
            self.finished_at = now
        return outs

    def heartbeat(self, now: float, up: Iterable[bytes]) -> list[SettleOut]:
        """Every heartbeat, with the members the mesh reaches now: ask for the closing this
        daemon lacks, at once for a member that came back, else every :data:`ASK_EVERY` s."""
        up_now = set(up) & set(self.members)
        came_back, self._heard = up_now - self._heard, up_now
        self._new_deal()
        if not self.lacking(now):
            return []
        asked = up_now if now - self._asked_at >= ASK_EVERY else came_back
        if not asked:
            return []
        self._asked_at = now
        runner = self.runner
        outvoted = tuple(s for s, m in runner.machines.items() if m.cannot_settle)
        for seat in outvoted:
            self._stuck[seat] = now
        want = SettleFrame(FrameKind.WANT, runner.table_id, runner.deal_number, outvoted=outvoted)
        outs = [(daemon, want.encode()) for daemon in sorted(asked)]
        self._vote(now)
        if self.votes:
            void = SettleFrame(
                FrameKind.VOID, runner.table_id, runner.deal_number, votes=self.votes
            )
            outs += [(daemon, void.encode()) for daemon in sorted(asked)]
        return outs

    def _new_deal(self) -> None:
        """Forget what was said of the deal before."""
        if self._deal != self.runner.deal_number:
            self._deal = self.runner.deal_number
            self._stuck, self.votes = {}, {}

    def _vote(self, now: float) -> None:
        """Vote to void the deal if this daemon's seats cannot settle it and a quorum of
        seats said, lately, that they cannot either
        (:func:`~protocol.replication.agreement.void_certified`)."""
        stuck = {seat for seat, since in self._stuck.items() if now - since <= STUCK_FOR}
        players = self.runner.ready.setup.players
        if settled(players, set(range(players)) - stuck):
            self.votes.update(self.runner.vote_void())
            self._check_votes()

    def _check_votes(self) -> None:
        setup = self.runner.ready.setup
        if void_certified(setup.table_id, setup.members, self.runner.deal_number, self.votes):
            self._pending = SettleFrame(
                FrameKind.VOID, setup.table_id, self.runner.deal_number, votes=dict(self.votes)
            )

    def lacking(self, now: float) -> bool:
        """Whether the deal being played here may be closed elsewhere: it is unsettled here,
        or has stood still for a timeout (the others may have closed it without us)."""
        runner = self.runner
        if runner.finished or not runner.machines:
            return False
        if runner.unsettled:
            return True
        if runner.progress != self._progress:
            self._progress, self._still_since = runner.progress, now
            return False
        return now - self._still_since >= self.timeout

    def receive(self, peer: bytes, body: bytes, now: float) -> list[SettleOut]:
        """A settle frame from ``peer``: served, kept for adoption or noted.  A frame from a
        daemon that is not a member, or that does not parse, changes nothing."""
        if peer not in self.members:
            return []
        try:
            frame = parse(body)
        except FrameError:
            return []
        if frame.table_id != self.runner.table_id:
            return []
        self._new_deal()
        current = frame.deal == self.runner.deal_number
        if frame.kind is FrameKind.WANT and current:
            hosted = {s for s, m in enumerate(self.runner.ready.members) if m.daemon == peer}
            for seat in set(frame.outvoted) & hosted:
                self._stuck[seat] = now
        if frame.kind is FrameKind.VOID:
            if current and not self.runner.settled:
                self._take_votes(frame.votes)
            return []
        if frame.kind is FrameKind.HOLDS:
            self.holders.setdefault(frame.deal, set()).add(peer)
        elif frame.kind is FrameKind.CLOSING:
            if current and not self.runner.settled:
                self._pending, self._pending_from = frame, peer
        elif now - self._served.get((peer, frame.deal), -math.inf) >= ASK_EVERY / 2:
            answer = served(self.closings, frame)
            if answer is not None:
                self._served[(peer, frame.deal)] = now
                return [(peer, answer)]
        return []

    def _take_votes(self, votes: Mapping[int, bytes]) -> None:
        """Keep the valid votes among ``votes`` (each checked alone: one bad vote spoils
        nothing), and the certificate once they are a quorum's."""
        setup = self.runner.ready.setup
        statement = void_statement(setup.table_id, self.runner.deal_number)
        for seat, vote in votes.items():
            if seat < setup.players and verify(setup.members[seat], vote, statement):
                self.votes[seat] = vote
        for machine in self.runner.machines.values():  # a voter signs no score any more
            machine.note_voters(self.votes)
        self._check_votes()

    def take_adopted(self) -> list[WireOut]:
        """Adopt the closing or void certificate received, if it is one (the daemon drives
        this as a move of the table: the runner then scores the deal and deals the next)."""
        frame, self._pending = self._pending, None
        if frame is None:
            return []
        if frame.kind is FrameKind.VOID:
            return self.runner.void(frame.deal, frame.votes)
        if self.runner.adopt(frame.deal, frame.chain):
            # Whoever served it, and whoever signed the score it closes on, holds that row.
            members = self.runner.ready.members
            signers = {members[m.seat].daemon for m in frame.chain if m.kind is Kind.SCORE_SIGN}
            self.holders.setdefault(frame.deal, set()).update({*signers, self._pending_from})
        return []

    def waiting_for_rows(self) -> list[bytes]:
        """At a finished table, the members not known to hold its last row."""
        runner = self.runner
        if not runner.finished or not runner.completed:
            return []
        holders = self.holders.get(runner.completed - 1, set())
        return [daemon for daemon in self.members if daemon not in holders]

    def may_leave(self, now: float) -> bool:
        """A finished table's member may go: every member holds the last row, or it has
        waited :data:`LINGER_TIMEOUTS` timeouts (they will ask any member they meet)."""
        if self.finished_at is None:
            return False
        if not self.waiting_for_rows():
            return True
        return now - self.finished_at >= LINGER_TIMEOUTS * self.timeout
