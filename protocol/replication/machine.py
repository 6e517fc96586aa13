"""One seat's side of a replicated deal: feed it messages, it tells you what to send.

A :class:`SeatMachine` joins three pieces: the seat's
:class:`~protocol.replication.transcript.Transcript` (signatures, the hash chain, who may speak),
the deal's public course (:class:`~protocol.replication.public.PublicDeal`, the same code every
seat and the audit run) and the seat's secrets (:class:`~protocol.deck.seat_deck.SeatDeck`).  It
is sans-IO, like h11: the caller moves the bytes, decides when a wait has become a timeout, and
asks a player or a bot for the seat's decisions.

* :meth:`start` returns the first message (the seed commitment);
* :meth:`receive` takes a message from another seat and returns what this seat sends now
  (the protocol's automatic steps: shuffle, lock, keys, reveal, signature);
* :meth:`decision` says what the seat must decide (bid, call, écart, chelem, poignée, card),
  :meth:`act` takes that decision and returns the message that carries it;
* :meth:`take_events` drains what happened, for a screen — only what this seat may know.

Only this seat's secrets ever go into what it sends; the seed only in the final reveal.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import ClassVar, Final

from protocol.deck.payloads import EcartCommitment
from protocol.deck.seat_deck import DeckUsageError, SeatDeck
from protocol.replication.agreement import (
    left_out_of_reveal,
    settled,
    timed_out_before_reveal,
    void_vote,
)
from protocol.replication.audit import (
    Audits,
    DealAudit,
    convicted,
    signed_offence,
    signed_score,
    wrong_signature,
)
from protocol.replication.identity import Identity
from protocol.replication.messages import Kind, Message, sign_message, verify_signature
from protocol.replication.payloads import (
    BidPayload,
    CallPayload,
    ChelemPayload,
    CommitPayload,
    HandCheckPayload,
    HandStatus,
    MessagePayload,
    PlayPayload,
    PoigneePayload,
    RevealPayload,
    ScoreSignPayload,
    decode_payload,
    encode_payload,
    timed_out_in,
)
from protocol.replication.public import PublicDeal, Stage, TableSetup, action_of
from protocol.replication.transcript import Transcript
from protocol.replication.verdict import Verdict, VerdictError
from protocol.rules.cards import Card, codes
from protocol.rules.deal import (
    Action,
    AnnounceChelem,
    Bid,
    Call,
    Deal,
    Ecart,
    Phase,
    Play,
    ShowPoignee,
)
from protocol.rules.rules import Rule, RuleError, has_petit_sec
from protocol.rules.view import SeatView, seat_view

#: The kinds that carry a decision of the seat's player (the rest the machine sends itself).
_DECISIONS = frozenset({Kind.BID, Kind.CALL, Kind.ECART, Kind.CHELEM, Kind.POIGNEE, Kind.PLAY})
#: The stages at which the deal waits for a player's decision.
_DECIDING = frozenset({Stage.BIDDING, Stage.CALL, Stage.ECART, Stage.CHELEM, Stage.PLAY})


class Say(enum.Enum):
    """What a seat may still sign in a deal and whose word it waits for, besides what the
    deal's stage asks for: one value, changed only through :data:`SAY`.

    Three facts, once three flags: what it signs (its steps and decisions; nothing while it
    replays the others' closing, :meth:`SeatMachine.follow`; nothing more once it voted to void
    the deal); whether it is *outvoted* (it timed out as many seats as answered, so it waits for
    their word until its chain moves); whether its signed score is a *dead end* (the seats that
    will not sign its head — they signed another or voted — leave no quorum to close it).
    One value because together they decide what the seat may do — it votes only when outvoted
    or voted already, and never while a score it signed may still close — and one table then
    lists every change.  Nine members, no fewer:
    each fact outlives the others' changes (a seat that voted may be outvoted again, a dead end
    outlives the wait), and merging any two would change when a seat votes or when its daemon
    asks the others for their closing (``TableRunner.unsettled``).
    """

    PLAYING = "playing"  #: its steps and its player's decisions
    OUTVOTED = "outvoted"  #: as playing, and it waits for the others' word: it may vote
    DEAD_END = "dead end"  #: as playing; the score it signed can never be closed
    OUTVOTED_DEAD_END = "outvoted, dead end"  #: both: it may vote
    FOLLOWING = "following"  #: nothing: it replays the others' closing chain
    VOTED = "voted"  #: nothing more: it voted to void the deal (:meth:`vote_void`, :meth:`mute`)
    VOTED_OUTVOTED = "voted, outvoted"  #: voted, and it waits for the others' word
    VOTED_DEAD_END = "voted, dead end"  #: voted; a score it had signed can never be closed
    VOTED_OUTVOTED_DEAD_END = "voted, outvoted, dead end"


class SayEvent(enum.Enum):
    FOLLOW = "follow"  #: it starts replaying a closing chain
    FOLLOWED = "followed"  #: the closing chain is replayed
    VOTE = "vote"  #: it votes to void the deal (again: a vote is given once, asked many times)
    OUTVOTED = "outvoted"  #: its timeout found as many seats silent as answering
    MOVED = "moved"  #: its chain moved on: a message fitted, the others' word came
    DEAD_END = "dead end"  #: too few seats are left that may sign its signed score


#: (say, event) → the next say, as h11 does it: any other pair raises :class:`SayError`.  A
#: seat follows a closing from a fresh machine, and votes only once outvoted or voted (or
#: from a fresh machine, muted); a seat replaying a closing is never timed out nor has signed.
SAY: Final[Mapping[tuple[Say, SayEvent], Say]] = MappingProxyType(
    {
        (Say.PLAYING, SayEvent.FOLLOW): Say.FOLLOWING,
        (Say.FOLLOWING, SayEvent.FOLLOWED): Say.PLAYING,
        # a vote keeps the wait and the dead end
        (Say.PLAYING, SayEvent.VOTE): Say.VOTED,
        (Say.OUTVOTED, SayEvent.VOTE): Say.VOTED_OUTVOTED,
        (Say.OUTVOTED_DEAD_END, SayEvent.VOTE): Say.VOTED_OUTVOTED_DEAD_END,
        (Say.VOTED, SayEvent.VOTE): Say.VOTED,
        (Say.VOTED_OUTVOTED, SayEvent.VOTE): Say.VOTED_OUTVOTED,
        (Say.VOTED_DEAD_END, SayEvent.VOTE): Say.VOTED_DEAD_END,
        (Say.VOTED_OUTVOTED_DEAD_END, SayEvent.VOTE): Say.VOTED_OUTVOTED_DEAD_END,
        # outvoted, whatever it signs
        (Say.PLAYING, SayEvent.OUTVOTED): Say.OUTVOTED,
        (Say.OUTVOTED, SayEvent.OUTVOTED): Say.OUTVOTED,
        (Say.DEAD_END, SayEvent.OUTVOTED): Say.OUTVOTED_DEAD_END,
        (Say.OUTVOTED_DEAD_END, SayEvent.OUTVOTED): Say.OUTVOTED_DEAD_END,
        (Say.VOTED, SayEvent.OUTVOTED): Say.VOTED_OUTVOTED,
        (Say.VOTED_OUTVOTED, SayEvent.OUTVOTED): Say.VOTED_OUTVOTED,
        (Say.VOTED_DEAD_END, SayEvent.OUTVOTED): Say.VOTED_OUTVOTED_DEAD_END,
        (Say.VOTED_OUTVOTED_DEAD_END, SayEvent.OUTVOTED): Say.VOTED_OUTVOTED_DEAD_END,
        # the chain moves: the wait ends, nothing else does
        (Say.PLAYING, SayEvent.MOVED): Say.PLAYING,
        (Say.OUTVOTED, SayEvent.MOVED): Say.PLAYING,
        (Say.DEAD_END, SayEvent.MOVED): Say.DEAD_END,
        (Say.OUTVOTED_DEAD_END, SayEvent.MOVED): Say.DEAD_END,
        (Say.FOLLOWING, SayEvent.MOVED): Say.FOLLOWING,
        (Say.VOTED, SayEvent.MOVED): Say.VOTED,
        (Say.VOTED_OUTVOTED, SayEvent.MOVED): Say.VOTED,
        (Say.VOTED_DEAD_END, SayEvent.MOVED): Say.VOTED_DEAD_END,
        (Say.VOTED_OUTVOTED_DEAD_END, SayEvent.MOVED): Say.VOTED_DEAD_END,
        # a dead end, for good (a rewind that drops the signature does not undo it)
        (Say.PLAYING, SayEvent.DEAD_END): Say.DEAD_END,
        (Say.OUTVOTED, SayEvent.DEAD_END): Say.OUTVOTED_DEAD_END,
        (Say.DEAD_END, SayEvent.DEAD_END): Say.DEAD_END,
        (Say.OUTVOTED_DEAD_END, SayEvent.DEAD_END): Say.OUTVOTED_DEAD_END,
        (Say.VOTED, SayEvent.DEAD_END): Say.VOTED_DEAD_END,
        (Say.VOTED_OUTVOTED, SayEvent.DEAD_END): Say.VOTED_OUTVOTED_DEAD_END,
        (Say.VOTED_DEAD_END, SayEvent.DEAD_END): Say.VOTED_DEAD_END,
        (Say.VOTED_OUTVOTED_DEAD_END, SayEvent.DEAD_END): Say.VOTED_OUTVOTED_DEAD_END,
    }
)

#: The says in which a seat signs its steps and its player's decisions.
SIGNING: Final = frozenset({Say.PLAYING, Say.OUTVOTED, Say.DEAD_END, Say.OUTVOTED_DEAD_END})
#: The says of a seat that voted to void the deal.
VOTED_SAYS: Final = frozenset(
    {Say.VOTED, Say.VOTED_OUTVOTED, Say.VOTED_DEAD_END, Say.VOTED_OUTVOTED_DEAD_END}
)
#: The says of a seat that waits for the others' word.
OUTVOTED_SAYS: Final = frozenset(
    {Say.OUTVOTED, Say.OUTVOTED_DEAD_END, Say.VOTED_OUTVOTED, Say.VOTED_OUTVOTED_DEAD_END}
)
#: The says of a seat whose signed score can never be closed.
DEAD_END_SAYS: Final = frozenset(
    {Say.DEAD_END, Say.OUTVOTED_DEAD_END, Say.VOTED_DEAD_END, Say.VOTED_OUTVOTED_DEAD_END}
)


class SayError(RuntimeError):
    """A change of say :data:`SAY` does not list: a bug of the caller, never a peer's doing."""

    def __init__(self, say: Say, event: SayEvent) -> None:
        self.say = say
        self.event = event
        super().__init__(f"no change of say from {say.value} on {event.value}")


#: Messages kept aside, per sending seat, because they came early (a reordering network);
#: retried as the chain moves.
MAX_EARLY_PER_SEAT = 32


@dataclass(frozen=True)
class Event:
    """Something this seat's player may learn: ``kind`` and JSON-friendly details."""

    kind: str
    data: dict[str, object] = field(default_factory=dict)


class SeatMachine:
    #: The seat's secret side: a cheat lab's machine swaps in one that bends a step.
    deck_class: ClassVar[type[SeatDeck]] = SeatDeck

    def __init__(
        self,
        table: TableSetup,
        deal_number: int,
        dealer: int,
        seat: int,
        identity: Identity,
        seed: bytes | None = None,
    ) -> None:
        if identity.public_key != table.members[seat]:
            raise ValueError(f"this identity is not the member at seat {seat}")
        self.table = table
        self.seat = seat
        self.identity = identity
        self.public = PublicDeal(table, deal_number, dealer, own_seat=seat)
        self.secret = self.deck_class(self.public.deck.setup, seat, seed)
        self.transcript = Transcript(table.table_id, deal_number, table.members, table.names)
        self.audit: DealAudit | None = None
        #: Where the end-of-deal audit is looked up: the owner of several seats of a deal
        #: hands them one, and the deck is replayed once
        # (:class:`~protocol.replication.audit.Audits`).
        self.audits = Audits()
        self._sent_rounds: dict[Kind, bytes] = {}  # round kind -> the head it was sent on
        self._outbox: list[Message] = []
        self._early: list[Message] = []
        self._events: list[Event] = []
        self._rejected: list[Verdict] = []
        self._stall_point: bytes | None = None  #: the head at this seat's first timeout in the deal
        #: The head this seat signed its score on, and the seats it needs that will never sign
        #: it (they voted, or signed another head): :meth:`note_voters`.
        self._wont_sign: tuple[bytes | None, frozenset[int]] = (None, frozenset())
        #: What this seat may still sign in the deal and whose word it waits for (:data:`SAY`);
        #: the deal's own course is ``public.stage``.
        self.say = Say.PLAYING

    # --- The caller's side ------------------------------------------------------------

    @property
    def trusted_seats(self) -> frozenset[int]:
        """Seats whose shuffle and lock this machine takes as published: neither checked live
        (:attr:`PublicDeck.trusted`) nor replayed by the end-of-deal audit (see
        :func:`~protocol.deck.audit_deck.audit_deck`).  Empty unless set, so that seats sharing a
        process and one audit (the simulator, the cheat lab) check every step.  A daemon sets
        it to the seats it hosts: it computed their steps itself, from their seeds and the
        steps published before them, with deterministic derivations — checking them proves
        nothing to it.  Never a cheating machine's seat: a trusted step is not checked at all."""
        return self.public.deck.trusted

    @trusted_seats.setter
    def trusted_seats(self, seats: frozenset[int]) -> None:
        self.public.deck.trusted = seats

    @property
    def voted(self) -> bool:
        """It voted to void the deal (:func:`~protocol.replication.agreement.void_vote`): it
        signs nothing more in it, and ends on a void certificate or the others' closing."""
        return self.say in VOTED_SAYS

    @property
    def outvoted(self) -> bool:
        """It timed out as many seats as answered, so did not stall them: it waits for the
        others' word (their next message, or their closing) — until its chain moves.  Its
        daemon asks the others for their closing meanwhile (``TableRunner.unsettled``)."""
        return self.say in OUTVOTED_SAYS

    @property
    def signed_dead_end(self) -> bool:
        """The score it signed can never be closed: the seats it needs that signed another
        head or voted to void the deal leave no quorum (:meth:`note_voters`)."""
        return self.say in DEAD_END_SAYS

    @property
    def cannot_settle(self) -> bool:
        """It cannot end the deal with the others' signatures: it is outvoted or voted (its
        daemon says so when it asks for their closing, and its seats vote together)."""
        return self.outvoted or self.voted

    def _turn(self, event: SayEvent) -> None:
        """Change this seat's say by :data:`SAY`; a pair not there raises."""
        say = SAY.get((self.say, event))
        if say is None:
            raise SayError(self.say, event)
        self.say = say

    @property
    def seed(self) -> bytes:
        """Store it durably before sending anything: the audit needs it back."""
        return self.secret.seed

    @property
    def done(self) -> bool:
        """The deal is over here and its record stands: a seat in a minority keeps it open
        until it hears the others (:mod:`protocol.replication.agreement`)."""
        return self.public.stage is Stage.DONE and settled(self.players, self.public.stalled)

    @property
    def players(self) -> int:
        return self.table.players

    @property
    def game(self) -> Deal | None:
        """This seat's view of the deal: its own hand visible, nobody else's."""
        return self.public.mine

    def start(self) -> list[Message]:
        self._sync()
        return self._flush()

    def receive(self, message: Message) -> list[Message]:
        """Take a message from the network; returns what this seat must send now.  Nothing
        a peer sends can make this raise: a bad message is refused and recorded."""
        self._offer(message)
        return self._flush()

    def stall(self, unreachable: Collection[int] = ()) -> list[Message]:
        """The caller's timeout: the seats the deal waits for are treated as gone.  At the
        reveal and the signatures, the messages of the seats that did answer count: the
        round closes with them (the audit needs every seed it can get).

        ``unreachable``: seats the caller knows it cannot reach now (their daemon's link is
        down).  They do not count as answering: a seat whose own cable is cut, and which knows
        it, does not time out the one seat it waits for as if the others stood by it."""
        if not self.done:
            gone = self.waiting_for() - {self.seat}
            proven = self.public.verdict is not None and self.public.verdict.proven
            closing = self.public.stage in (Stage.REVEAL, Stage.SIGN)
            silent = {*self.public.stalled, *gone, *unreachable} - {self.seat}
            if not proven and not settled(self.players, silent, tie_break=not closing):
                # Those it would time out are as many as those left: it cannot tell their
                # silence from its own cut cable, and a record of its own could not stand.
                # It waits for their word — their messages, or their closing of the deal.
                # (A deal stopped by a proof goes on to its reveal: every seat holds the proof.)
                self._turn(SayEvent.OUTVOTED)
                return self._flush()
            if self._stall_point is None:
                self._stall_point = self.transcript.head
            if self.public.stage in (Stage.REVEAL, Stage.SIGN):
                for message in self.transcript.close_round():
                    self.public.apply(message)
            self.public.stall(gone)
            self._sync()
            # the others' reveals that came before our own timeout opened the round
            self._retry_early()
        return self._flush()

    def vote_void(self) -> bytes | None:
        """This seat's vote to void the deal, if it may give one: it cannot settle the deal
        (``outvoted``) and has signed no score in it that a closing could count — none, or one
        on a head that can never be closed (``signed_dead_end``).  Once given, it signs
        nothing more in the deal."""
        if self.done or (Kind.SCORE_SIGN in self._sent_rounds and not self.signed_dead_end):
            return None
        if not self.cannot_settle:
            return None
        self._turn(SayEvent.VOTE)
        return void_vote(self.identity, self.table.table_id, self.public.deal_number)

    def waiting_for(self) -> set[int]:
        """The seats the deal waits for here; once it is over but unsettled (this seat alone
        timed them out), the seats whose word it waits for
        (:mod:`protocol.replication.agreement`)."""
        if self.public.stage is Stage.DONE and not self.done:
            return set(self.public.stalled) - {self.seat}
        return {slot.seat for slot in self.transcript.awaiting}

    @property
    def deciding(self) -> int | None:
        """The seat whose player owes a decision now — a bid, a call, an écart, a chelem, a
        card — or None while the deal waits for the deck's steps or is over.  A person may
        think; a daemon computing a step may not: the daemon gives each its own timeout."""
        game = self.public.mine
        if game is None or self.public.stopped or self.public.stage not in _DECIDING:
            return None
        return game.to_act

    def decision(self) -> Phase | None:
        """The phase of the decision this seat owes now, or None."""
        game = self.public.mine
        if game is None or self.deciding != self.seat or self.voted:
            return None
        return game.phase

    def view(self) -> SeatView | None:
        game = self.public.mine
        return None if game is None else seat_view(game, self.seat)

    def act(self, action: Action) -> list[Message]:
        """This seat's decision.  RuleError (and nothing sent) if the rules forbid it."""
        game = self.public.mine
        if self.voted:
            raise RuleError(
                "this seat voted to void the deal: it plays no more in it", Rule.VOTED_VOID
            )
        if self.decision() is None or game is None:
            raise RuleError("it is not this seat's turn to decide", Rule.NOT_TO_DECIDE)
        if action.seat != self.seat:
            raise RuleError(
                f"this machine plays seat {self.seat}, not seat {action.seat}",
                Rule.OTHER_SEAT,
                plays=self.seat,
                seat=action.seat,
            )
        game.check(action)  # refuse an illegal action before signing anything
        return self._send_action(action)

    def _send_action(self, action: Action) -> list[Message]:
        kind, payload = self._payload(action)
        self._send(kind, payload)
        return self._flush()

    @classmethod
    def resume(
        cls,
        table: TableSetup,
        deal_number: int,
        dealer: int,
        seat: int,
        identity: Identity,
        seed: bytes,
        stored: Sequence[Message],
    ) -> tuple[SeatMachine, list[Message]]:
        """Rebuild a seat's machine after a restart from what it had stored, in the order it
        stored it: the messages it received and the ones it signed.

        The seed makes every automatic step come out byte for byte as before, and the seat's
        own decisions are taken again from its stored messages, so the machine signs nothing
        new for a slot it had already spoken in (no equivocation).  Returns the machine and
        what it should (re)send now; peers ignore what they already have.
        """
        machine = cls(table, deal_number, dealer, seat, identity, seed)
        outbox = machine.start()
        for message in stored:
            if message.seat != seat:
                outbox.extend(machine.receive(message))
            elif message.kind in _DECISIONS and machine.decision() is not None:
                outbox.extend(machine._send_action(machine._action_of(message)))
            elif message.kind in (Kind.REVEAL, Kind.SCORE_SIGN) and machine.public.stall_implied_by(
                message
            ):
                machine._sync()  # it had timed seats out before signing this
                outbox.extend(machine._flush())
        signed = {m.digest for m in stored if m.seat == seat}
        regenerated = {m.digest for m in machine.transcript.messages if m.seat == seat}
        if not signed <= regenerated | {m.digest for m in outbox}:
            raise ValueError("the stored messages were not signed with this seed: cannot resume")
        return machine, outbox

    @classmethod
    def mute(
        cls,
        table: TableSetup,
        deal_number: int,
        dealer: int,
        seat: int,
        identity: Identity,
        seed: bytes,
        stored: Sequence[Message],
    ) -> SeatMachine:
        """The seat's machine for a deal it cannot take up (:meth:`resume` refused its
        journal): it signs nothing more in it — as a seat that voted to void it — and ends it
        on the others' closing (:meth:`follow`) or a void.  A score it had signed stays
        counted: it votes only if that score can never close."""
        machine = cls(table, deal_number, dealer, seat, identity, seed)
        machine._turn(SayEvent.VOTE)
        machine.start()
        signed = [m for m in stored if m.seat == seat and m.kind is Kind.SCORE_SIGN]
        if signed:
            machine._sent_rounds[Kind.SCORE_SIGN] = signed[-1].prev
        return machine

    @classmethod
    def follow(
        cls,
        table: TableSetup,
        deal_number: int,
        dealer: int,
        seat: int,
        identity: Identity,
        seed: bytes,
        closing: Sequence[Message],
        audits: Audits | None = None,
        trusted: frozenset[int] = frozenset(),
    ) -> SeatMachine | None:
        """The seat's machine at the end of a deal the other members closed, if ``closing`` is
        a valid closing chain of it (:mod:`protocol.replication.agreement`); None otherwise.

        The chain is taken as it stands, this seat's own messages in it included: the seat
        signs nothing while following it, so that what it had signed beyond the point where
        the others left it (a reveal of its own timeout, say) is simply not part of the deal.
        Every message must fit in turn, and the chain must end the deal with the score signed
        by every member that answered — a quorum (:func:`~protocol.replication.agreement.settled`).
        A member alone, or a minority, cannot close a deal for the others."""
        machine = cls(table, deal_number, dealer, seat, identity, seed)
        machine.audits = audits or Audits()
        machine.trusted_seats = trusted
        machine._turn(SayEvent.FOLLOW)
        machine.start()
        for message in closing:
            if message.deal != deal_number or message.table_id != table.table_id:
                return None
            machine._timed_out_as(message)
            machine._offer(message)
            if not machine.transcript.accepted(message):
                return None
        if machine.public.stage is Stage.SIGN:  # they closed the signatures without some
            machine._close_round_without(machine.public.signatures)
        machine._turn(SayEvent.FOLLOWED)
        machine._flush()
        return machine if machine.done and machine.audit is not None else None

    def _timed_out_as(self, message: Message) -> None:
        """Before a closing's reveal or signature that comes ahead of its round, time out the
        seats its signer had timed out, as its signer did: a reveal names them; a signature
        made in the reveal round, those whose reveal the round was closed without."""
        stage = self.public.stage
        if message.kind is Kind.REVEAL and stage not in (Stage.REVEAL, Stage.SIGN, Stage.DONE):
            self.public.stall(timed_out_in(message))
            self._sync()
        elif message.kind is Kind.SCORE_SIGN and stage is Stage.REVEAL:
            self._close_round_without(self.public.revealed)

    def _close_round_without(self, answered: Collection[int]) -> None:
        """Close the round being collected with what it has, the seats missing from
        ``answered`` timed out — this seat too, if it is one of them."""
        for message in self.transcript.close_round():
            self.public.apply(message)
        self.public.stall(set(range(self.players)) - set(answered))
        self._sync()

    def _action_of(self, message: Message) -> Action:
        """The decision one of this seat's own stored messages carries."""
        payload = decode_payload(message)
        return action_of(
            message, self._discarded(payload) if isinstance(payload, EcartCommitment) else ()
        )

    def _discarded(self, ecart: EcartCommitment) -> tuple[Card, ...]:
        """The cards of this seat's own écart, from the seed's re-commitment order."""
        chien = self.public.deck.chien() or ()
        ordered = sorted([*(self.public.own_hand or ()), *chien])
        committed = [ordered[k] for k in self.secret.secrets.recommit_order]
        return tuple(committed[k] for k in ecart.discarded)

    def take_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    @property
    def rejected(self) -> list[Verdict]:
        """Messages refused without blame (bad signature, another deal…), for the logs."""
        return list(self._rejected)

    # --- Sending ------------------------------------------------------------------

    def _payload(self, action: Action) -> tuple[Kind, MessagePayload]:
        if isinstance(action, Bid):
            return Kind.BID, BidPayload(action.contract)
        if isinstance(action, Call):
            if action.card.rank == 14 or not action.card.suit.is_colour:
                return Kind.CALL, CallPayload(action.card)
            proof = [
                c
                for c in self.secret.hand(self.public.deck).values()
                if c.suit.is_colour and c.rank > action.card.rank
            ]
            return Kind.CALL, CallPayload(action.card, self.secret.open(proof))
        if isinstance(action, Ecart):
            self.public.own_ecart = tuple(action.cards)
            return Kind.ECART, self.secret.ecart(self.public.deck, action.cards)
        if isinstance(action, AnnounceChelem):
            return Kind.CHELEM, ChelemPayload(action.announce)
        if isinstance(action, ShowPoignee):
            # The écart's trumps are named, not opened: the écart opened them already.
            again = tuple(c for c in action.cards if c in (self.public.own_ecart or ()))
            return Kind.POIGNEE, PoigneePayload(
                self.secret.open([c for c in action.cards if c not in again]), again
            )
        assert isinstance(action, Play)
        return Kind.PLAY, PlayPayload(self.secret.open([action.card]))

    def _send(self, kind: Kind, payload: MessagePayload) -> None:
        message = sign_message(
            self.identity,
            self.table.table_id,
            self.public.deal_number,
            kind,
            self.seat,
            encode_payload(payload),
            self.transcript.head,
        )
        self._outbox.append(message)
        self._offer(message)

    def _flush(self) -> list[Message]:
        out, self._outbox = self._outbox, []
        return out

    def _send_round(self, kind: Kind, payload: MessagePayload) -> None:
        """A concurrent round's message, once."""
        if kind not in self._sent_rounds:
            self._sent_rounds[kind] = self.transcript.head
            self._send(kind, payload)

    def _automatic(self) -> None:
        """The protocol's own steps, which ask the player nothing."""
        stage, deck = self.public.stage, self.public.deck
        if stage is Stage.COMMIT:
            self._send_round(Kind.COMMIT, CommitPayload(self.public.dealer, self.secret.commit()))
        elif stage is Stage.SHUFFLE and deck.waiting_for() == {self.seat}:
            self._send(Kind.SHUFFLE, self.secret.shuffle(deck))
        elif stage is Stage.LOCK and deck.waiting_for() == {self.seat}:
            self._send(Kind.LOCK, self.secret.lock(deck))
        elif stage is Stage.DEAL_KEYS:
            self._send_round(Kind.DEAL_KEYS, self.secret.deal_keys())
        elif stage is Stage.HAND_CHECK:
            self._send_round(Kind.PETIT_SEC, self._hand_check())
        elif stage is Stage.CHIEN:
            self._send_round(Kind.CHIEN_OPEN, self.secret.chien_keys())
        elif stage in (Stage.REVEAL, Stage.SIGN) and self.seat in self.public.stalled:
            # Timed out by the others (protocol.replication.agreement): no say in the rounds left.
            return
        elif stage is Stage.REVEAL:
            self._send_round(Kind.REVEAL, RevealPayload(self.secret.reveal(), self.public.stalled))
        elif stage is Stage.SIGN:
            self._send_round(Kind.SCORE_SIGN, self._score_signature())

    def _hand_check(self) -> HandCheckPayload:
        """Decrypt this seat's hand at once: a bad card must stop the deal before any play."""
        try:
            by_position = self.secret.hand(self.public.deck)
        except VerdictError as error:
            # the deck names the position it could not open
            assert error.verdict.position is not None
            return HandCheckPayload(HandStatus.BAD, position=error.verdict.position)
        hand = tuple(by_position[j] for j in sorted(by_position))
        self.public.own_hand = hand
        self._events.append(Event("hand", {"cards": codes(hand)}))
        if has_petit_sec(hand):
            return HandCheckPayload(HandStatus.PETIT_SEC, opened=self.secret.open(hand))
        return HandCheckPayload(HandStatus.OK)

    def _score_signature(self) -> ScoreSignPayload:
        if self.audit is None:
            self.audit = self.audits.of(self.public, self.transcript.head, self.trusted_seats)
        return ScoreSignPayload(signed_score(self.audit))

    # --- Receiving ----------------------------------------------------------------

    def _offer(self, message: Message) -> None:
        known = self.transcript.accepted(message)
        try:
            added = self.transcript.append(message)
        except VerdictError as error:
            self._refused(message, error.verdict)
            return
        if not known and message.seat != self.seat and self.transcript.accepted(message):
            # Relay what another seat sent: a seat that was sent another message for the
            # same slot then holds both, the proof of an equivocation.
            self._outbox.append(message)
        for accepted in added:
            before = self.public.verdict
            self.public.apply(accepted)
            self._events_for(accepted)
            if before is None and self.public.verdict is not None:
                self._event_verdict(self.public.verdict)
        if added:
            self._turn(SayEvent.MOVED)
            self._sync()
            self._retry_early()

    def _refused(self, message: Message, verdict: Verdict) -> None:
        """A message the transcript did not take: a proof against its signer, a message that
        may be early, or junk (recorded without blame)."""
        proven = verdict if verdict.attributed else self._proven(message)
        if proven is not None:
            self._convict(proven, message)
        elif self._maybe_early(message):
            self._keep_early(message)
            if message.kind is Kind.SCORE_SIGN:
                self._note_signed_elsewhere(message)
            if message.kind in (Kind.REVEAL, Kind.SCORE_SIGN):
                self._adopt()
        else:
            self._rejected.append(verdict)

    def _note_signed_elsewhere(self, signature: Message) -> None:
        """A seat that the score this seat signed still needs has signed another head: an
        honest seat signs one score a deal, so the head this seat signed can never be closed
        (the members' reveal rounds were closed on different sets of reveals).  This seat may
        then vote to void the deal (:meth:`vote_void`)."""
        signed_on = self._sent_rounds.get(Kind.SCORE_SIGN)
        if signed_on is not None and signature.prev != signed_on:
            self.note_voters({signature.seat})

    def note_voters(self, seats: Collection[int]) -> None:
        """``seats`` will sign no score on the head this seat signed (they signed another
        head, or voted to void the deal).  The head is a dead end once those, with the seats
        out of its chain before the signatures, leave no quorum that could close it: a closing
        of the signatures counts a strict majority of members, so a head short of one signer
        is not dead while the others may still close it without that seat."""
        signed_on = self._sent_rounds.get(Kind.SCORE_SIGN)
        if signed_on is None:
            return
        needed = {slot.seat for slot in self.transcript.awaiting} | {
            seat for seat, stage in self.public.stalled_at.items() if stage is Stage.SIGN
        }
        head, known = self._wont_sign
        refusing = (known if head == signed_on else frozenset()) | (needed & set(seats))
        self._wont_sign = (signed_on, refusing)
        out = {seat for seat, stage in self.public.stalled_at.items() if stage is not Stage.SIGN}
        if refusing and not settled(self.players, out | refusing, tie_break=False):
            self._turn(SayEvent.DEAD_END)

    def _adopt(self) -> None:
        """Take the chain of the members that timed this seat out, if they all say so
        (:mod:`protocol.replication.agreement`): back to the head where they left it, then on as a
        seat that stopped answering there."""
        transcript, public = self.transcript, self.public
        if self.seat in public.stalled:
            return  # on their chain already
        before = timed_out_before_reveal(self.seat, self.players, self._early, transcript.reached)
        if (
            before is None
            and self._stall_point is not None
            and timed_out_before_reveal(self.seat, self.players, self._early, lambda head: True)
            is not None
        ):
            # They left this seat at a head it has not reached: its own timeout cut off what
            # led there.  Back to where it timed them out, and on with what they sent.
            self._rewind(self._stall_point, replay=True)
            self._stall_point = None
            self._sync()
            self._retry_early()
            return
        if before is not None:
            head, gone = before
            self._rewind(head)
            self.public.stall(gone)
        else:
            left_out = left_out_of_reveal(self.seat, transcript, self._early)
            if left_out is None:
                return
            start, reveals = left_out
            self._rewind(transcript.head_before(start))
            transcript.expect_round(
                Kind.REVEAL, [s for s in range(self.players) if s not in self.public.stalled]
            )
            for message in reveals:
                transcript.append(message)
            # as they closed it, without this seat's reveal
            for message in transcript.close_round():
                self.public.apply(message)
            self.public.stall({self.seat})
        self._sync()
        self._retry_early()

    def _proven(self, message: Message) -> Verdict | None:
        """A deviation this message proves by itself (impersonation, an unused kind)."""
        if (message.table_id, message.deal) != (self.table.table_id, self.public.deal_number):
            return None
        return signed_offence(self.table.members, [message])

    def _convict(self, verdict: Verdict, message: Message) -> None:
        """Stop the deal on a signed proof.  Honest seats may each have accepted different
        messages after the head the offending message names (an equivocator sends one
        version to some, another to the others): each rewinds to that head, so they end the
        deal on one chain, and relays the proof so that every seat gets it."""
        # as the audit states it
        verdict = replace(verdict, evidence=tuple(sorted(verdict.evidence)))
        self.transcript.keep(message)
        if self.public.verdict is not None or self._sent_rounds.get(Kind.REVEAL) == message.prev:
            # Stopped already, or the proof is about the reveal round this seat has answered:
            # the deal ends as it is, and the file keeps the proof.
            self._rejected.append(verdict)
            return
        if not self.transcript.reached(message.prev):
            self._keep_early(message)  # proven, but on a head still ahead of this seat
            return
        self._rewind(message.prev)
        self.public._stop(verdict)
        self._outbox.append(message)
        self._event_verdict(verdict)
        self._sync()
        self._retry_early()

    def _rewind(self, head: bytes, replay: bool = False) -> None:
        """Cut the chain back to ``head`` and replay the deal's public course to there — also
        with the chain already there (``replay``): its own timeouts are undone."""
        if self.transcript.rewind(head) or replay:
            self.public = self._replayed()
            for kind in (Kind.REVEAL, Kind.SCORE_SIGN):  # sent on a head now cut off: again
                self._sent_rounds.pop(kind, None)
            self.audit = None

    def _replayed(self) -> PublicDeal:
        """The public course again from the (rewound) chain, with this seat's own secrets."""
        old = self.public
        public = PublicDeal(self.table, old.deal_number, old.dealer, own_seat=self.seat)
        public.own_hand, public.own_ecart = old.own_hand, old.own_ecart
        for message in self.transcript.messages:
            public.apply(message)
        return public

    def _maybe_early(self, message: Message) -> bool:
        """Authentic and of this deal: it may be early, keep it for when the chain gets there."""
        members = self.table.members
        return (
            message.deal == self.public.deal_number
            and message.seat < len(members)
            and verify_signature(message, members[message.seat])
        )

    def _keep_early(self, message: Message) -> None:
        """Keep a message for later, within its seat's share: a seat that floods the table
        with messages that may never fit fills its own share, never an honest seat's."""
        mine = sum(1 for kept in self._early if kept.seat == message.seat)
        if message not in self._early and mine < MAX_EARLY_PER_SEAT:
            self._early.append(message)

    def _retry_early(self) -> None:
        """Offer again the kept messages built on a head the chain has reached; the others
        cannot fit yet (and junk on a head nobody will reach costs nothing more)."""
        ready = [m for m in self._early if self.transcript.reached(m.prev)]
        self._early = [m for m in self._early if m not in ready]
        for message in ready:
            self._offer(message)

    def _sync(self) -> None:
        """Open the transcript slots of what comes next, and send what this seat owes."""
        rounds = self.public.next_rounds()
        if rounds.concurrent and rounds.slots:
            self.transcript.expect_round(rounds.slots[0].kind, [slot.seat for slot in rounds.slots])
        elif rounds.concurrent:
            pass  # every seat timed out (a journal replaying timeouts): nobody to wait for
        else:
            self.transcript.expect(*rounds.slots)
        if self.public.stage is Stage.SIGN and self.audit is None:
            self._score_signature()
        if self.public.stage is Stage.DONE and self.audit is not None:
            self._check_signatures()
        if self.say not in SIGNING:
            return
        try:
            self._automatic()
        except DeckUsageError:
            pass  # waiting for a step of another seat first

    def _check_signatures(self) -> None:
        """Every seat signs the score the audit gives; one that signs another is named."""
        assert self.audit is not None
        wrong = wrong_signature(self.public, self.audit)
        if wrong is not None:
            first = self.audit.verdict
            self.audit = convicted(self.audit, wrong)
            if self.audit.verdict != first:
                self._event_verdict(wrong)

    # --- Events ---------------------------------------------------------------------

    def _event_verdict(self, verdict: Verdict) -> None:
        self._events.append(
            Event(
                "verdict", {"culprit": verdict.seat, "step": verdict.step, "rule": verdict.reason}
            )
        )

    def _events_for(self, message: Message) -> None:
        game = self.public.mine
        if game is None:
            return
        kind = message.kind
        data: dict[str, object] = {"seat": message.seat}
        last = game.history[-1] if game.history else None
        if kind is Kind.BID and isinstance(last, Bid):
            data["contract"] = None if last.contract is None else last.contract.code
        elif kind is Kind.CALL and isinstance(last, Call):
            data["card"] = last.card.code
        elif kind is Kind.CHELEM and isinstance(last, AnnounceChelem):
            data["announce"] = last.announce
        elif kind is Kind.POIGNEE and isinstance(last, ShowPoignee):
            data["cards"] = codes(last.cards)
        elif kind is Kind.ECART:
            data["shown"] = codes(c for c in game.ecart if c.is_trump)
        elif kind is Kind.PLAY and isinstance(last, Play):
            data["card"] = last.card.code
        elif (
            kind is Kind.CHIEN_OPEN and game.chien is not None and self.public.stage is Stage.ECART
        ):
            self._events.append(Event("chien", {"cards": codes(game.chien)}))
            return
        elif kind is Kind.SCORE_SIGN and self.public.stage is Stage.DONE and self.audit is not None:
            self._events.append(Event("score", {"scores": list(self.audit.scores)}))
            return
        else:
            return
        self._events.append(Event(kind.value, data))
        if kind is Kind.PLAY and not game.current and game.tricks:
            trick = game.tricks[-1]
            self._events.append(
                Event("trick", {"winner": trick.winner, "cards": codes(trick.cards)})
            )
