"""The public course of one deal, rebuilt from its signed messages alone.

Every seat runs one :class:`PublicDeal` on the transcript's chain, message after message, and
so does the audit of a saved transcript: the same code decides, everywhere, whether a message
is acceptable, what the deal looks like after it, and which messages may come next.  It
holds no secret, and every decision rests on public information only (``game``), so that
all seats stop a deal at the same message.  A seat's own hand, when given, feeds a second
copy of the deal, ``mine``: the seat's view, for its player or bot, which decides nothing.

The order of rounds (DESIGN §4–5): commit (all) → shuffle (seat order) → lock (seat order)
→ deal keys (all) → hand check (all: ``ok``, a petit sec shown, or a hand that does not
decrypt) → bids → call (five players) → chien keys (all, on a Petite or a Garde) → écart →
chelem → tricks, each card opened by its key (a poignée just before a player's first card)
→ reveal (all) → score signatures (all).  A deviation stops the deal: the next round is
the reveal, then the audit names the culprit.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, NoReturn

from protocol.deck.payloads import ChienKeys, DealKeys, DeckPayload, EcartCommitment, Lock, Shuffle
from protocol.deck.public_deck import DeckPhase, PublicDeck
from protocol.deck.setup import DeckSetup
from protocol.replication.manifest import DEFAULT_SILENCE, Manifest, SilenceCost
from protocol.replication.messages import Kind, Message, WireValue
from protocol.replication.payloads import (
    UNUSED_KIND,
    BidPayload,
    CallPayload,
    ChelemPayload,
    CommitPayload,
    HandCheckPayload,
    HandStatus,
    MessagePayload,
    Opened,
    PayloadError,
    PlayPayload,
    PoigneePayload,
    RevealPayload,
    ScoreSignPayload,
    decode_payload,
    has_payload,
    timed_out_in,
)
from protocol.replication.transcript import Slot
from protocol.replication.verdict import KEPT_SEED, Code, Fault, Verdict, VerdictError
from protocol.rules.cards import DECK, Card
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
from protocol.rules.rules import RuleError, has_petit_sec
from protocol.rules.variants import Variant, variant


class Stage(enum.Enum):
    COMMIT = "commit"
    SHUFFLE = "shuffle"
    LOCK = "lock"
    DEAL_KEYS = "deal_keys"
    HAND_CHECK = "hand_check"
    BIDDING = "bidding"
    CALL = "call"
    CHIEN = "chien"
    ECART = "ecart"
    CHELEM = "chelem"
    PLAY = "play"
    REVEAL = "reveal"
    SIGN = "sign"
    DONE = "done"


class Cause(enum.Enum):
    """What moves a deal from one stage to another, besides the deck and the game."""

    STALL = "stall"  #: seats stopped answering (the caller's timeout)
    STOP = "stop"  #: a deviation: the deal goes to the reveal, then the audit names the culprit
    REVEALED = "revealed"  #: every seat still answering has revealed its seed
    SIGNED = "signed"  #: every seat still answering has signed the score


_BEFORE_REVEAL: Final = tuple(s for s in Stage if s not in (Stage.REVEAL, Stage.SIGN, Stage.DONE))
#: The stages at which every seat can read its own hand: every deal key is in (the hand check
#: is sent once it is read), and the reveal has not come.  The chien round is one of them.
_HAND_READ: Final = frozenset(_BEFORE_REVEAL[_BEFORE_REVEAL.index(Stage.HAND_CHECK) :])

#: The closing rounds' kinds, which may come at any stage: a seat that stopped the deal on a
#: proof kept beside the chain (an equivocation, a forgery) sends its reveal and signature
#: from where it stopped, and the chain alone, replayed, does not show that stop.
_CLOSING: Final = frozenset({Kind.REVEAL, Kind.SCORE_SIGN})
#: stage → the kinds of message the deal takes at it, as h11 does it: any other kind is an
#: :class:`UnexpectedMove`.  A reveal or a signature before its round first moves the deal
#: to that round when it shows why (:meth:`PublicDeal.stall_implied_by`).
MOVES: Final[Mapping[Stage, frozenset[Kind]]] = MappingProxyType(
    {
        Stage.COMMIT: frozenset({Kind.COMMIT}) | _CLOSING,
        Stage.SHUFFLE: frozenset({Kind.SHUFFLE}) | _CLOSING,
        Stage.LOCK: frozenset({Kind.LOCK}) | _CLOSING,
        Stage.DEAL_KEYS: frozenset({Kind.DEAL_KEYS}) | _CLOSING,
        Stage.HAND_CHECK: frozenset({Kind.PETIT_SEC}) | _CLOSING,
        Stage.BIDDING: frozenset({Kind.BID}) | _CLOSING,
        Stage.CALL: frozenset({Kind.CALL}) | _CLOSING,
        Stage.CHIEN: frozenset({Kind.CHIEN_OPEN}) | _CLOSING,
        Stage.ECART: frozenset({Kind.ECART}) | _CLOSING,
        Stage.CHELEM: frozenset({Kind.CHELEM}) | _CLOSING,
        Stage.PLAY: frozenset({Kind.PLAY, Kind.POIGNEE}) | _CLOSING,
        Stage.REVEAL: _CLOSING,
        Stage.SIGN: _CLOSING,
        Stage.DONE: _CLOSING,
    }
)
#: (stage, cause) → the next stage.  Every pair is either here or in :data:`REFUSED`.
TRANSITIONS: Final[Mapping[tuple[Stage, Cause], Stage]] = MappingProxyType(
    {
        **{(stage, Cause.STALL): Stage.REVEAL for stage in _BEFORE_REVEAL},
        # the seed kept: scored from what the others revealed
        (Stage.REVEAL, Cause.STALL): Stage.SIGN,
        (Stage.SIGN, Cause.STALL): Stage.DONE,
        **{(stage, Cause.STOP): Stage.REVEAL for stage in _BEFORE_REVEAL},
        # stopped at the reveal (the round closes with it), or over already (a proof that
        # came after the end): the deal ends as it is
        (Stage.REVEAL, Cause.STOP): Stage.REVEAL,
        (Stage.SIGN, Cause.STOP): Stage.DONE,
        (Stage.DONE, Cause.STOP): Stage.DONE,
        (Stage.REVEAL, Cause.REVEALED): Stage.SIGN,
        (Stage.SIGN, Cause.SIGNED): Stage.DONE,
        # A closing round complete at another stage (:data:`_CLOSING`): the chain stays where
        # it shows the deal; the proof beside it, in the audit's evidence, says why it stopped.
        **{(stage, Cause.REVEALED): stage for stage in Stage if stage is not Stage.REVEAL},
        **{(stage, Cause.SIGNED): stage for stage in Stage if stage is not Stage.SIGN},
    }
)
#: The (stage, cause) pairs that cannot happen: nobody is timed out once the deal is over
#: (:meth:`PublicDeal.stall` returns first).
REFUSED: Final = frozenset({(Stage.DONE, Cause.STALL)})


class UnexpectedMove(VerdictError):
    """A message of a kind the deal does not take at its stage (:data:`MOVES`): its sender
    deviated, and the deal stops on this verdict."""

    def __init__(self, stage: Stage, message: Message) -> None:
        self.stage = stage
        self.kind = message.kind
        reason = f"sent a {message.kind.value} message at the {stage.value} stage"
        super().__init__(Verdict(message.seat, message.kind.value, reason, (message.digest.hex(),)))


class TransitionError(RuntimeError):
    """A (stage, cause) pair in :data:`REFUSED`: a bug of the caller, never a peer's doing."""

    def __init__(self, stage: Stage, cause: Cause) -> None:
        self.stage = stage
        self.cause = cause
        super().__init__(f"no transition from the {stage.value} stage on {cause.value}")


#: The stage of each phase of the deck's protocol, until the hands are dealt.
_DECK_STAGES: Final[Mapping[DeckPhase, Stage]] = MappingProxyType(
    {
        DeckPhase.COMMIT: Stage.COMMIT,
        DeckPhase.SHUFFLE: Stage.SHUFFLE,
        DeckPhase.LOCK: Stage.LOCK,
        DeckPhase.DEAL: Stage.DEAL_KEYS,
        DeckPhase.PLAY: Stage.HAND_CHECK,
    }
)
#: The stage of each phase of the game once dealt (the écart's waits for the chien first).
_GAME_STAGES: Final[Mapping[Phase, Stage]] = MappingProxyType(
    {
        Phase.VOID: Stage.REVEAL,
        Phase.DONE: Stage.REVEAL,
        Phase.BIDDING: Stage.BIDDING,
        Phase.CALL: Stage.CALL,
        Phase.ECART: Stage.ECART,
        Phase.CHELEM: Stage.CHELEM,
        Phase.PLAYING: Stage.PLAY,
    }
)

#: The stages where every seat answers at once, and the kind of their answer.
_ROUND_KINDS: Final[Mapping[Stage, Kind]] = MappingProxyType(
    {
        Stage.COMMIT: Kind.COMMIT,
        Stage.DEAL_KEYS: Kind.DEAL_KEYS,
        Stage.HAND_CHECK: Kind.PETIT_SEC,
        Stage.CHIEN: Kind.CHIEN_OPEN,
        Stage.REVEAL: Kind.REVEAL,
        Stage.SIGN: Kind.SCORE_SIGN,
    }
)
#: The stages where one seat decides (but the play), and the kind of its decision.
_TURN_KINDS: Final[Mapping[Stage, Kind]] = MappingProxyType(
    {
        Stage.BIDDING: Kind.BID,
        Stage.CALL: Kind.CALL,
        Stage.ECART: Kind.ECART,
        Stage.CHELEM: Kind.CHELEM,
    }
)


@dataclass(frozen=True)
class TableSetup:
    """What the members of a table signed before the first deal
    (:mod:`protocol.replication.manifest`)."""

    table_id: bytes
    members: tuple[bytes, ...]  #: Ed25519 public keys, by seat
    names: tuple[str, ...]
    silence: SilenceCost = DEFAULT_SILENCE  #: the table's rule for a seat timed out mid-deal

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> TableSetup:
        return cls(manifest.table_id, manifest.keys, manifest.names, manifest.silence)

    @property
    def variant(self) -> Variant:
        return variant(len(self.members))

    @property
    def players(self) -> int:
        return len(self.members)


@dataclass
class Rounds:
    """What the deal waits for next: one of ``slots`` (sequential), or each of them (a round)."""

    slots: tuple[Slot, ...]
    concurrent: bool


@dataclass
class PublicDeal:
    table: TableSetup
    deal_number: int
    dealer: int
    own_seat: int | None = None  #: the seat whose replica this is (None for an auditor)
    deck: PublicDeck = field(init=False)
    game: Deal | None = field(init=False, default=None)  #: the public deal: no hand visible
    mine: Deal | None = field(init=False, default=None)  #: the own seat's view of it
    stage: Stage = field(init=False, default=Stage.COMMIT)
    verdict: Verdict | None = field(init=False, default=None)  #: why the deal stopped
    #: Seats that stopped answering, and the stage the deal was at when they were timed out:
    #: before the reveal the deal is abandoned; at the reveal the seed was kept.
    stalled_at: dict[int, Stage] = field(init=False, default_factory=dict)
    #: The seats among them that could read their own hand when they were timed out
    #: (:meth:`_could_read_hand`): what their silence costs depends on it (``SilenceCost``).
    could_read: set[int] = field(init=False, default_factory=set)
    hand_reports: dict[int, HandCheckPayload] = field(init=False, default_factory=dict)
    seeds: dict[int, bytes] = field(init=False, default_factory=dict)
    #: seats whose reveal is in the chain, good or bad
    revealed: set[int] = field(init=False, default_factory=set)
    signatures: dict[int, Mapping[str, WireValue]] = field(init=False, default_factory=dict)
    game_messages: list[Message] = field(init=False, default_factory=list)  #: bids, plays…
    own_hand: tuple[Card, ...] | None = field(init=False, default=None)
    own_ecart: tuple[Card, ...] | None = field(init=False, default=None)
    _deck_messages: list[Message] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.deck = PublicDeck(
            DeckSetup(self.table.table_id, self.deal_number, self.table.variant, self.dealer),
            self.own_seat,
        )

    @property
    def players(self) -> int:
        return self.table.players

    @property
    def stalled(self) -> tuple[int, ...]:
        """The seats that stopped answering, in seat order."""
        return tuple(sorted(self.stalled_at))

    @property
    def stopped(self) -> bool:
        return self.verdict is not None or bool(self.stalled)

    @property
    def played_out(self) -> bool:
        """Every card has been played: each hand is open, and the deal can be scored from
        the record even without every seed (``protocol/replication/audit.py``)."""
        return self.game is not None and self.game.phase is Phase.DONE

    # --- What comes next ------------------------------------------------------------

    def next_rounds(self) -> Rounds:
        everyone = tuple(range(self.players))
        answering = tuple(s for s in everyone if s not in self.stalled)
        stage = self.stage
        if stage in (Stage.SHUFFLE, Stage.LOCK):
            kind = Kind.SHUFFLE if stage is Stage.SHUFFLE else Kind.LOCK
            return Rounds(tuple(Slot(kind, s) for s in sorted(self.deck.waiting_for())), False)
        round_kind = _ROUND_KINDS.get(stage)
        if round_kind is not None:
            seats = answering if stage in (Stage.REVEAL, Stage.SIGN) else everyone
            return Rounds(tuple(Slot(round_kind, s) for s in seats), True)
        if stage is Stage.DONE:
            return Rounds((), False)
        game = self._game()
        seat = game.to_act
        assert seat is not None
        turn_kind = _TURN_KINDS.get(stage)
        if turn_kind is not None:
            return Rounds((Slot(turn_kind, seat),), False)
        slots = [Slot(Kind.PLAY, seat)]
        if game.poignee_allowed(seat):
            slots.append(Slot(Kind.POIGNEE, seat))
        return Rounds(tuple(slots), False)

    # --- Applying a message from the chain -------------------------------------------

    def apply(self, message: Message) -> None:
        """Take ``message`` (already in the chain) into the deal.  A deviation in it stops the
        deal with a verdict; nothing is raised."""
        try:
            self._apply(message)
        except VerdictError as error:
            self._stop(self._with_digests(error.verdict))

    def stall(self, seats: Iterable[int]) -> None:
        """``seats`` stopped answering (the caller's timeout): the deal goes on without them to
        the reveal, or, from the reveal, to the score.  The first one is named."""
        gone = sorted(set(seats) - set(self.stalled))
        if not gone or self.stage is Stage.DONE:
            return
        self.stalled_at.update((seat, self.stage) for seat in gone)
        self.could_read.update(seat for seat in gone if self._could_read_hand(seat))
        if self.verdict is None and self.stage not in (Stage.REVEAL, Stage.SIGN):
            self.verdict = silence_verdict(gone[0], self.stage)
        self._advance(Cause.STALL)

    def _could_read_hand(self, seat: int) -> bool:
        """Whether ``seat``, timed out now, could read its own hand, from the public record.

        The deal keys come in no order, so the last seat to send holds every other seat's keys
        for its positions before it sends its own.  A round enters the chain only whole, and
        the seats timed out at it are those whose message had not come (the others' reveals
        name them): timed out alone, the seat had every other seat's keys — it could read its
        hand; two timed out, neither had the other's.  From the hand check to the reveal,
        every seat could."""
        if self.stage is Stage.DEAL_KEYS:
            return self.stalled == (seat,)
        return self.stage in _HAND_READ

    def stall_implied_by(self, message: Message) -> bool:
        """A reveal or a signature before its round means its sender gave up waiting for some
        seats: the reveal names them; the signature, those that did not reveal.  A restarted
        seat replaying its journal learns its own time-outs the same way, from what it signed.
        True if it stalled seats."""
        stalled = self.stalled
        if message.kind is Kind.REVEAL and self.stage not in (Stage.REVEAL, Stage.SIGN, Stage.DONE):
            self.stall(timed_out_in(message))
        elif message.kind is Kind.SCORE_SIGN and self.stage is Stage.REVEAL:
            self.stall(set(range(self.players)) - self.revealed)
        return self.stalled != stalled

    def _stop(self, verdict: Verdict) -> None:
        if self.verdict is None:
            self.verdict = verdict
        self._advance(Cause.STOP)

    def _advance(self, cause: Cause) -> None:
        """Move the deal on ``cause`` by :data:`TRANSITIONS`; a refused pair raises."""
        stage = TRANSITIONS.get((self.stage, cause))
        if stage is None:
            raise TransitionError(self.stage, cause)
        self.stage = stage

    def _apply(self, message: Message) -> None:
        self.stall_implied_by(message)
        if message.kind not in MOVES[self.stage]:
            raise UnexpectedMove(self.stage, message)
        try:
            payload = decode_payload(message)
        except PayloadError as error:
            if message.kind is Kind.REVEAL and isinstance(message.payload, dict):
                self._on_reveal(message, error)  # a bad seed still answers the round
                return
            self._fail(message, str(error))
        self._on_payload(message, payload)

    def _on_payload(self, message: Message, payload: MessagePayload) -> None:
        """The handler of each kind."""
        match payload:
            case CommitPayload():
                self._on_commit(message, payload)
            case Shuffle() | Lock() | DealKeys():
                self._on_deck_step(message, payload)
            case HandCheckPayload():
                self._on_hand_check(message, payload)
            case BidPayload(contract):
                self._push(message, Bid(message.seat, contract))
            case CallPayload():
                self._on_call(message, payload)
            case ChienKeys():
                self._on_chien(message, payload)
            case EcartCommitment():
                self._on_ecart(message, payload)
            case ChelemPayload(announce):
                self._push(message, AnnounceChelem(message.seat, announce))
            case PoigneePayload():
                self._on_poignee(message, payload)
            case PlayPayload(opened):
                self._on_play(message, opened)
            case RevealPayload():
                self._on_reveal(message, payload)
            case ScoreSignPayload(score):
                self._on_sign(message, score)

    def _fail(self, message: Message, reason: str) -> NoReturn:
        raise VerdictError(
            Verdict(message.seat, message.kind.value, reason, (message.digest.hex(),))
        )

    def _feed(self, message: Message, step: DeckPayload) -> None:
        """Feed the deck payload ``message`` carries to the public deck."""
        self._deck_messages.append(message)
        self.deck.receive(step)

    def _with_digests(self, verdict: Verdict) -> Verdict:
        """Deck verdicts cite payloads as ``kind/seat@n`` (the n-th fed to the deck): name the
        signed messages instead, which anyone can check."""
        evidence = []
        for ref in verdict.evidence:
            at = ref.rpartition("@")[2]
            if "/" in ref and at.isdigit() and int(at) < len(self._deck_messages):
                evidence.append(self._deck_messages[int(at)].digest.hex())
            else:
                evidence.append(ref)
        cited = tuple(dict.fromkeys(evidence))
        return Verdict(
            verdict.seat,
            verdict.step,
            verdict.reason,
            cited,
            code=verdict.code,
            position=verdict.position,
        )

    def _game(self) -> Deal:
        if self.game is None:
            raise VerdictError(Verdict(None, self.stage.value, "the deal has not started", ()))
        return self.game

    def _push(self, message: Message, action: Action) -> None:
        try:
            self._game().push(action)
        except RuleError as error:
            self._fail(message, str(error))
        self._mirror(lambda view: view.push(action, strict=False))
        self.game_messages.append(message)
        self._follow_game()

    def _mirror(self, change: Callable[[Deal], object]) -> None:
        """Apply a public change to the own seat's view too.  Only a seat that broke the rules
        itself can see it refused there; the public deal, which decides, has gone on."""
        if self.mine is not None:
            with suppress(RuleError):
                change(self.mine)

    def _follow_game(self) -> None:
        """Set the stage from the rules engine's phase."""
        game = self._game()
        stage = _GAME_STAGES[game.phase]
        self.stage = Stage.CHIEN if stage is Stage.ECART and game.chien is None else stage

    # --- Handlers, one per kind ---------------------------------------------------

    def _on_commit(self, message: Message, payload: CommitPayload) -> None:
        # The commitment also binds the dealer, which fixes who receives which position.
        if payload.dealer != self.dealer:
            self._fail(
                message, f"commits to a deal by seat {payload.dealer!r}, not by seat {self.dealer}"
            )
        self._on_deck_step(message, payload.deck)

    def _on_deck_step(self, message: Message, step: DeckPayload) -> None:
        self._feed(message, step)
        self.stage = _DECK_STAGES[self.deck.phase]

    def _on_hand_check(self, message: Message, payload: HandCheckPayload) -> None:
        if payload.opened is not None:
            self._feed(message, payload.opened)
            hand = [DECK[o.card] for o in payload.opened.openings]
            if len(hand) != self.table.variant.hand_size or not has_petit_sec(hand):
                self._fail(message, "showed a hand that is not a petit sec")
        elif payload.status is HandStatus.BAD:
            layout = self.deck.setup.layout
            if payload.position not in layout.positions_of(message.seat):
                self._fail(message, "reported a bad card at a position that is not its own")
        self.hand_reports[message.seat] = payload
        if len(self.hand_reports) == self.players:
            self._after_hand_check()

    def hand_status(self, seat: int) -> HandStatus | None:
        report = self.hand_reports.get(seat)
        return None if report is None else report.status

    def _after_hand_check(self) -> None:
        """Every hand is checked: a bad card stops the deal before any card is played — the
        keys of that position name a culprit, or the audit will; a petit sec voids it."""
        for report in (r for _, r in sorted(self.hand_reports.items())):
            if report.status is HandStatus.BAD and report.position is not None:
                keys = self.deck.published_keys(report.position)
                raise VerdictError(
                    self._with_digests(self.deck.blame("deal", report.position, keys))
                )
        v = self.table.variant
        self.game = Deal(v, self.dealer, (None,) * self.players, None)
        if self.own_seat is not None and self.own_hand is not None:
            self.mine = Deal.observed(v, self.dealer, self.own_seat, self.own_hand)
        if any(self.hand_status(s) is HandStatus.PETIT_SEC for s in range(self.players)):
            self.game.declare_void("petit sec")
            self._mirror(_void_petit_sec)
        self._follow_game()

    def _on_call(self, message: Message, payload: CallPayload) -> None:
        called = payload.card
        if payload.opened is not None:
            # A lower call needs the four cards of each higher rank: shown with their keys.
            shown = set(self._opened_cards(message, payload.opened))
            needed = {c for c in DECK if c.suit.is_colour and called.rank < c.rank <= 14}
            if shown != needed:
                self._fail(
                    message,
                    f"called {called.code} without showing the four cards of each higher rank",
                )
        self._push(message, Call(message.seat, called))

    def _on_chien(self, message: Message, keys: ChienKeys) -> None:
        self._feed(message, keys)
        chien = self.deck.chien()
        if chien is not None:
            self._game().turn_chien(chien)
            self._mirror(lambda view: view.turn_chien(chien))
            self._follow_game()

    def _on_ecart(self, message: Message, ecart: EcartCommitment) -> None:
        self._feed(message, ecart)
        shown = tuple(DECK[o.card] for o in ecart.openings)
        try:
            self._game().hidden_ecart(shown)
        except RuleError as error:
            self._fail(message, str(error))
        if message.seat == self.own_seat and self.own_ecart is not None:
            own = Ecart(message.seat, self.own_ecart)
            self._mirror(lambda view: view.push(own))
        else:
            self._mirror(lambda view: view.hidden_ecart(shown))
        self.game_messages.append(message)
        self._follow_game()

    def _opened_cards(self, message: Message, opened: Opened) -> tuple[Card, ...]:
        self._feed(message, opened)
        return _cards(opened)

    def _on_poignee(self, message: Message, payload: PoigneePayload) -> None:
        opened = self._opened_cards(message, payload.opened)
        shown = self._game().poignee_ecart(message.seat)
        for c in payload.again:
            if c not in shown:
                self._fail(
                    message, f"showed {c.code} again from its écart, where it did not show it"
                )
        self._push(message, ShowPoignee(message.seat, (*opened, *payload.again)))

    def _on_play(self, message: Message, opened: Opened) -> None:
        cards = self._opened_cards(message, opened)
        if len(cards) != 1:
            self._fail(message, "a play opens exactly one card")
        self._push(message, Play(message.seat, cards[0]))

    def _on_reveal(self, message: Message, payload: RevealPayload | PayloadError) -> None:
        """A seat's reveal is its answer to the round even when its seed is bad: that is a
        proven deviation, and the round closes with it — waiting on would time out seats
        that did reveal, each replica its own."""
        self.revealed.add(message.seat)
        try:
            if isinstance(payload, PayloadError):
                self._fail(message, str(payload))
            self._feed(message, payload.deck)
            self.seeds[message.seat] = payload.deck.seed
        except VerdictError as error:
            self.verdict = self.verdict or self._with_digests(error.verdict)
        if len(self.revealed) == self.players - len(self.stalled):
            self._advance(Cause.REVEALED)

    def _on_sign(self, message: Message, score: Mapping[str, WireValue]) -> None:
        self.signatures[message.seat] = score
        if len(self.signatures) == self.players - len(self.stalled):
            self._advance(Cause.SIGNED)


def silence_verdict(seat: int, stage: Stage) -> Verdict:
    """The verdict on a seat timed out at ``stage``: backed by the others' word only — at the
    reveal, that it kept its seed."""
    if stage is Stage.REVEAL:
        return Verdict(seat, "reveal", KEPT_SEED, (), Fault.SILENCE, Code.KEPT_SEED)
    return Verdict(
        seat,
        stage.value,
        f"stopped answering at the {stage.value} step",
        (),
        Fault.SILENCE,
        Code.SILENCE,
    )


def _void_petit_sec(view: Deal) -> None:
    if not view.finished:  # the seat's own petit sec already voided its view
        view.declare_void("petit sec")


def _cards(opened: Opened) -> tuple[Card, ...]:
    return tuple(DECK[o.card] for o in opened.openings)


def unused_kind(message: Message) -> Verdict | None:
    """A message of a kind no deal ever uses (no honest seat signs one), whenever it comes:
    it proves by itself a deviation of its signer — a request for what the protocol never
    gives, say.  None for the kinds the deal uses."""
    if has_payload(message.kind):
        return None
    return Verdict(message.seat, message.kind.value, UNUSED_KIND, (message.digest.hex(),))


def action_of(message: Message, ecart: tuple[Card, ...]) -> Action:
    """The game action a message of the chain carries (checked when it was applied).  An
    écart message does not show its cards: the caller knows them (the seat itself, or the
    audit from the revealed seeds)."""
    seat = message.seat
    match decode_payload(message):
        case BidPayload(contract):
            return Bid(seat, contract)
        case CallPayload(called):
            return Call(seat, called)
        case EcartCommitment():
            return Ecart(seat, ecart)
        case ChelemPayload(announce):
            return AnnounceChelem(seat, announce)
        case PlayPayload(opened):
            return Play(seat, _cards(opened)[0])
        case PoigneePayload(opened, again):
            return ShowPoignee(seat, (*_cards(opened), *again))
    raise ValueError(f"a {message.kind.value} message carries no game action")
