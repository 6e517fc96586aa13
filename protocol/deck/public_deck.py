"""The mental-poker deck's public side (DESIGN §4): the checks every seat runs on every payload.

Two sides, as in any sans-IO protocol object:

* :class:`~protocol.deck.seat_deck.SeatDeck` is one seat's secret side.  It holds the seat's
  seed and everything derived from it (``seeds.SeatSecrets``) and produces that seat's
  payloads.
* :class:`PublicDeck` is what every seat runs on every payload, its own included: it checks
  the payload against the public state, in protocol order, and either accepts it or raises
  :class:`~protocol.replication.verdict.VerdictError`.  That is the only exception a payload can
  cause — a malformed payload is refused earlier, when it is built, with
  :class:`~protocol.deck.payloads.WireError`.

The rounds, for seats 0..n−1 (``Dᵢ`` and ``Eᵢ`` are lists of 78 points, one per pack position):

1. **commit** (concurrent): ``H(seed)`` and ``A = a·G``.
2. **shuffle** (seat order): ``Dᵢ = πᵢ(aᵢ·Dᵢ₋₁)`` from ``D₋₁ = [M₀..M₇₇]``, with a proof
   (:mod:`~protocol.deck.shuffle_proof`) that ``Dᵢ`` is a permutation of ``Dᵢ₋₁`` times the
   committed ``aᵢ``: a marked card is refused here, before anything is dealt.
3. **lock** (seat order): ``Bᵢ,ⱼ = bᵢ,ⱼ·G`` and ``Eᵢ,ⱼ = (bᵢ,ⱼ·aᵢ⁻¹)·Eᵢ₋₁,ⱼ`` from ``E₋₁ = Dₙ₋₁``,
   with a proof (:mod:`~protocol.deck.lock_proof`) that binds every position to its committed key.
   The key goes on in the same multiplication that takes the blanket off, so no published
   point ever lacks the locker's secret.  Position *j* now holds ``(Πᵢ bᵢ,ⱼ)·M_σ(j)``: only the
   product of every seat's key opens it.
4. **deal** (concurrent): each seat publishes its ``bᵢ,ⱼ`` for the positions dealt to *others*,
   each checked at once against its commitment (``b·G = Bᵢ,ⱼ``, a fixed-base multiplication):
   a wrong key names its sender.  Each recipient then decrypts its own positions at one
   multiplication each (``SeatDeck.hand``).  With every step proved a position always
   decrypts to a card; should one not (a step of a seat the caller trusted without checking),
   the verdict is unattributed and the deal stops before any card is played.
5. **play**: a seat opens its own positions (:class:`Open`: a play, a poignée, the four kings);
   all seats turn the chien (:class:`ChienKeys`); the taker re-commits hand + chien under fresh
   keys in a random order, marking the écart and showing the trumps in it
   (:class:`EcartCommitment`), and from then on opens re-commitments (:class:`OpenRecommitted`).
6. **reveal**: every seat publishes its seed; ``audit_deck`` replays the deal from them.

Evidence in a verdict names payloads as ``kind/seat@n``: the ``n``-th payload (from 0) fed to
this :class:`PublicDeck`, accepted or not — the message layer maps it to the signed message.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import (
    NoReturn,
    TypeVar,
)

from protocol.deck.group import (
    CARD_POINTS,
    GroupError,
    Point,
    Scalar,
    base_mul,
    card_of,
    check_point,
    check_scalar,
    first_invalid_point,
    in_background,
    invert,
    mul,
    scalar_product,
)
from protocol.deck.lock_proof import verify_lock
from protocol.deck.payloads import (
    ChienKeys,
    Commit,
    DealKeys,
    DeckPayload,
    EcartCommitment,
    Lock,
    Open,
    Opening,
    OpenRecommitted,
    Reveal,
    Shuffle,
)
from protocol.deck.seeds import commitment
from protocol.deck.setup import DeckSetup
from protocol.deck.shuffle_proof import verify_shuffle
from protocol.replication.verdict import Code, Verdict, VerdictError
from protocol.rules.cards import DECK, Card
from protocol.rules.layout import CHIEN

_Result = TypeVar("_Result")


class DeckPhase(enum.Enum):
    COMMIT = "commit"
    SHUFFLE = "shuffle"
    LOCK = "lock"
    DEAL = "deal"
    PLAY = "play"
    REVEAL = "reveal"


@dataclass(frozen=True)
class DeckRecord:
    """Every payload a :class:`PublicDeck` accepted, in order: what the audit replays."""

    setup: DeckSetup
    payloads: tuple[DeckPayload, ...]


@dataclass(frozen=True)
class _Origin:
    """Where a card was first seen opened."""

    recommitted: bool  #: from the taker's re-commitments rather than a dealt position
    where: int  #: pack position or commitment index
    holder: int  #: the seat it was dealt to, or CHIEN
    evidence: str


_WAITING_REASONS = {
    DeckPhase.COMMIT: ("commit", "did not commit to a seed"),
    DeckPhase.SHUFFLE: ("shuffle", "did not shuffle in its turn"),
    DeckPhase.LOCK: ("lock", "did not lock in its turn"),
    DeckPhase.DEAL: ("deal", "withheld its deal keys"),
    DeckPhase.PLAY: ("chien", "withheld its keys for the chien"),
    DeckPhase.REVEAL: ("reveal", "did not reveal its seed"),
}


class PublicDeck:
    """The public state of one deal's deck, and the checks on every payload.

    Feed it every payload, in protocol order, with :meth:`receive`.  A payload that breaks a
    rule raises :class:`VerdictError` and leaves the state as it was.
    """

    def __init__(self, setup: DeckSetup, own_seat: int | None = None) -> None:
        self.setup = setup
        #: The seat whose replica this is, if any: it checks at full priority only the steps
        #: it waits for (:meth:`_waits_for`).  None (an auditor) checks every step so.
        self.own_seat = own_seat
        #: Seats whose shuffle, lock and openings are taken without their point, proof and
        #: key checks: steps the caller computed itself (``SeatMachine.trusted_seats``).  A
        #: seat checking its own step before sending it would hold up every other seat, and
        #: could find nothing.
        self.trusted: frozenset[int] = frozenset()
        self._payloads: list[DeckPayload] = []
        self._refs: dict[tuple[str, int], str] = {}
        self._commits: dict[int, Commit] = {}
        self._shuffles: list[Shuffle] = []
        self._locks: list[Lock] = []
        self._keys: dict[int, dict[int, Scalar]] = {}  # position → seat → published lock key
        self._deal_keys_from: set[int] = set()
        self._chien_keys_from: set[int] = set()
        self._chien: dict[int, Card] | None = None
        self._known: dict[int, _Origin] = {}  # card index → where it was first opened
        self._ecart: EcartCommitment | None = None
        self._revealed: dict[int, bytes] = {}

    # -- what the state is --

    @property
    def phase(self) -> DeckPhase:
        n = self.setup.players
        if self._revealed:
            return DeckPhase.REVEAL
        if len(self._commits) < n:
            return DeckPhase.COMMIT
        if len(self._shuffles) < n:
            return DeckPhase.SHUFFLE
        if len(self._locks) < n:
            return DeckPhase.LOCK
        if len(self._deal_keys_from) < n:
            return DeckPhase.DEAL
        return DeckPhase.PLAY

    @property
    def record(self) -> DeckRecord:
        return DeckRecord(self.setup, tuple(self._payloads))

    def waiting_for(self) -> set[int]:
        """The seats whose payload the current round still needs (empty during play, except
        while the chien is being turned)."""
        phase, n = self.phase, self.setup.players
        if phase is DeckPhase.COMMIT:
            return set(range(n)) - set(self._commits)
        if phase is DeckPhase.SHUFFLE:
            return {len(self._shuffles)}
        if phase is DeckPhase.LOCK:
            return {len(self._locks)}
        if phase is DeckPhase.DEAL:
            return set(range(n)) - self._deal_keys_from
        if phase is DeckPhase.PLAY:
            return set(range(n)) - self._chien_keys_from if self._chien_keys_from else set()
        return set(range(n)) - set(self._revealed)

    def stalled(self) -> list[Verdict]:
        """One verdict per seat the current round is waiting for.  The caller decides when a
        wait has become a stall (a timeout); the deal is then abandoned by those seats."""
        step, reason = _WAITING_REASONS[self.phase]
        return [
            Verdict(seat, step, reason, (f"no {step} payload from seat {seat}",))
            for seat in sorted(self.waiting_for())
        ]

    def current_points(self) -> tuple[Point, ...]:
        """The latest list of 78 points: ``Dᵢ`` during the shuffle, ``Eᵢ`` from the lock on."""
        if self._locks:
            return self._locks[-1].locked
        if self._shuffles:
            return self._shuffles[-1].points
        return CARD_POINTS

    def final_point(self, position: int) -> Point:
        """``Eₙ₋₁,ⱼ``: the point every seat's key locks at that position."""
        return self._locks[-1].locked[position]

    def published_keys(self, position: int) -> dict[int, tuple[Scalar, str]]:
        """The lock keys published so far for ``position``: seat → (key, evidence reference)."""
        kind = ChienKeys.KIND if position in self.setup.layout.chien_positions else DealKeys.KIND
        return {
            seat: (key, self.ref(kind, seat)) for seat, key in self._keys.get(position, {}).items()
        }

    def chien(self) -> tuple[Card, ...] | None:
        """The chien once every seat has sent its chien keys, in pack order."""
        return None if self._chien is None else tuple(self._chien.values())

    def ref(self, kind: str, seat: int) -> str:
        """Evidence reference of an accepted payload of this kind from this seat."""
        return self._refs[(kind, seat)]

    def key_matches(self, seat: int, position: int, key: Scalar) -> bool:
        """``key·G == Bᵢ,ⱼ``: is ``key`` the lock key ``seat`` committed to at ``position``?"""
        return base_mul(key) == self._locks[seat].commitments[position]

    def has_deal_keys(self, seat: int) -> bool:
        return seat in self._deal_keys_from

    def blame(self, step: str, position: int, keys: Mapping[int, tuple[Scalar, str]]) -> Verdict:
        """Why ``position`` did not open to a card with these keys (seat → key and the evidence
        reference of the payload that published it): the first key that is not its seat's
        committed lock key, else a shuffle or lock step that was taken without its proof being
        checked (a trusted one), which only the audit can name."""
        for seat, (key, ref) in sorted(keys.items()):
            if not self.key_matches(seat, position, key):
                return Verdict(
                    seat,
                    step,
                    f"its key for position {position} does not match its lock",
                    (ref, self.ref("lock", seat)),
                    code=Code.BAD_KEY,
                    position=position,
                )
        steps = [self.ref("shuffle", s) for s in range(len(self._shuffles))]
        steps += [self.ref("lock", s) for s in range(len(self._locks))]
        return Verdict(
            None,
            step,
            f"position {position} holds no card, or a repeated one, although every key matches "
            "its lock: a shuffle or lock step deviated; reveal the seeds and audit",
            tuple(steps),
            code=Code.NO_CARD,
            position=position,
        )

    # -- the checks --

    def receive(self, payload: DeckPayload) -> None:
        """Check ``payload`` against the public state and accept it, or raise VerdictError."""
        index = len(self._payloads)
        ref = f"{payload.KIND}/{payload.seat}@{index}"
        if not 0 <= payload.seat < self.setup.players:
            raise VerdictError(
                Verdict(
                    None,
                    payload.KIND,
                    f"a payload from seat {payload.seat}, which is not at this table",
                    (ref,),
                )
            )
        known = dict(self._known)  # the one piece of state a check updates as it goes
        try:
            self._check(payload, ref)
        except VerdictError:
            self._known = known
            raise
        self._payloads.append(payload)
        self._refs.setdefault((payload.KIND, payload.seat), ref)

    def _check(self, payload: DeckPayload, ref: str) -> None:
        match payload:
            case Commit():
                self._on_commit(payload, ref)
            case Shuffle():
                self._on_shuffle(payload, ref)
            case Lock():
                self._on_lock(payload, ref)
            case DealKeys():
                self._on_deal_keys(payload, ref)
            case ChienKeys():
                self._on_chien_keys(payload, ref)
            case Open():
                self._on_open(payload, ref)
            case EcartCommitment():
                self._on_ecart(payload, ref)
            case OpenRecommitted():
                self._on_open_recommitted(payload, ref)
            case Reveal():
                self._on_reveal(payload, ref)

    def _expect(
        self,
        payload: DeckPayload,
        ref: str,
        phase: DeckPhase,
        step: str,
        *,
        turn: int | None = None,
    ) -> None:
        """Refuse a payload sent in the wrong round, out of turn, or twice."""
        if self.phase is not phase:
            self._fail(
                payload.seat,
                step,
                f"sent a {payload.KIND} payload during the {self.phase.value} round",
                ref,
            )
        if turn is not None and payload.seat != turn:
            self._fail(
                payload.seat,
                step,
                f"sent a {payload.KIND} payload out of turn (seat {turn} is next)",
                ref,
            )
        if (payload.KIND, payload.seat) in self._refs and payload.KIND not in (
            Open.KIND,
            OpenRecommitted.KIND,
        ):
            self._fail(payload.seat, step, f"sent its {payload.KIND} payload twice", ref)

    @staticmethod
    def _fail(seat: int | None, step: str, reason: str, *evidence: str) -> NoReturn:
        raise VerdictError(Verdict(seat, step, reason, evidence))

    def _points(self, seat: int, step: str, points: Sequence[bytes], name: str, ref: str) -> None:
        """Every point valid, none repeated."""
        bad = first_invalid_point(points)
        if bad is not None:
            try:
                check_point(points[bad], f"{name}[{bad}]")
            except GroupError as error:
                self._fail(seat, step, str(error), ref)
        self._repeats(seat, step, points, name, ref)

    def _repeats(self, seat: int, step: str, points: Sequence[bytes], name: str, ref: str) -> None:
        if len(set(points)) != len(points):
            first: dict[bytes, int] = {}
            for k, point in enumerate(points):
                if point in first:
                    self._fail(
                        seat, step, f"{name} repeats a point (entries {first[point]} and {k})", ref
                    )
                first[point] = k

    def _scalars(self, seat: int, step: str, scalars: Iterable[bytes], name: str, ref: str) -> None:
        for k, scalar in enumerate(scalars):
            try:
                check_scalar(scalar, f"{name}[{k}]")
            except GroupError as error:
                self._fail(seat, step, str(error), ref)

    def _on_commit(self, p: Commit, ref: str) -> None:
        self._expect(p, ref, DeckPhase.COMMIT, "commit")
        self._points(p.seat, "commit", [p.blanket_public], "blanket_public", ref)
        self._commits[p.seat] = p

    def _on_shuffle(self, p: Shuffle, ref: str) -> None:
        self._expect(p, ref, DeckPhase.SHUFFLE, "shuffle", turn=len(self._shuffles))
        if p.seat not in self.trusted:
            self._run_check(p, partial(self._check_shuffle, p, ref, self.current_points()))
        self._shuffles.append(p)

    def _check_shuffle(self, p: Shuffle, ref: str, before: tuple[Point, ...]) -> None:
        """The shuffle's proof, then no repeated point (a repeat in a proved shuffle would
        mean a repeat in its input, which the step before was refused for)."""
        a = self._commits[p.seat].blanket_public
        if not verify_shuffle(self.setup.binding(p.seat, "shuffle"), a, before, p.points, p.proof):
            self._points(p.seat, "shuffle", p.points, "points", ref)
            self._fail(
                p.seat,
                "shuffle",
                "the proof that its points are the previous ones, permuted, times its committed "
                "key does not hold",
                ref,
            )
        self._repeats(p.seat, "shuffle", p.points, "points", ref)

    def _on_lock(self, p: Lock, ref: str) -> None:
        self._expect(p, ref, DeckPhase.LOCK, "lock", turn=len(self._locks))
        if p.seat not in self.trusted:
            self._run_check(p, partial(self._check_lock, p, ref, self.current_points()))
        self._locks.append(p)

    def _run_check(self, p: Shuffle | Lock, check: Callable[[], _Result]) -> _Result:
        """``check()`` of step ``p``: now if this seat waits for it, else in the background
        (see :func:`~protocol.deck.group.in_background`) — at the same moment, at a lower
        priority.  A check reads the deck only through the step input it was handed (taken
        before, as the deck may have moved on when a starved copy runs) and the commits
        (settled before the first shuffle), and changes nothing."""
        if self._waits_for(p):
            return check()
        return in_background(check)

    def _waits_for(self, p: Shuffle | Lock) -> bool:
        """Whether this deck's seat waits for the check of step ``p`` before it can go on:
        the step just before its own turn, and the last lock (everyone's deal keys follow).
        A deck without a seat waits for every check."""
        players = self.setup.players
        last_lock = isinstance(p, Lock) and p.seat == players - 1
        return self.own_seat is None or last_lock or (p.seat + 1) % players == self.own_seat

    def _check_lock(self, p: Lock, ref: str, before: tuple[Point, ...]) -> None:
        a = self._commits[p.seat].blanket_public
        if not verify_lock(self.setup.binding(p.seat, "lock"), a, before, p.step):
            self._points(p.seat, "lock", p.commitments, "commitments", ref)
            self._points(p.seat, "lock", p.locked, "locked", ref)
            self._fail(
                p.seat,
                "lock",
                "the proof that every position was locked with its committed key does not hold",
                ref,
            )
        self._repeats(p.seat, "lock", p.locked, "locked", ref)

    def _on_deal_keys(self, p: DealKeys, ref: str) -> None:
        self._expect(p, ref, DeckPhase.DEAL, "deal")
        positions = self.setup.dealt_to_others(p.seat)
        if len(p.keys) != len(positions):
            self._fail(
                p.seat, "deal", f"sent {len(p.keys)} deal keys instead of {len(positions)}", ref
            )
        self._scalars(p.seat, "deal", p.keys, "keys", ref)
        self._committed_keys(p.seat, "deal", positions, p.keys, ref)
        for j, key in zip(positions, p.keys):
            self._keys.setdefault(j, {})[p.seat] = key
        self._deal_keys_from.add(p.seat)

    def _committed_keys(
        self, seat: int, step: str, positions: Sequence[int], keys: Sequence[Scalar], ref: str
    ) -> None:
        """Every key is the one ``seat`` committed to in its lock: one fixed-base
        multiplication each (≈ a fifth of a card's opening), not for a trusted seat."""
        if seat in self.trusted:
            return
        for j, key in zip(positions, keys):
            if not self.key_matches(seat, j, key):
                self._fail(
                    seat,
                    step,
                    f"its key for position {j} does not match its lock",
                    ref,
                    self.ref("lock", seat),
                )

    def _on_chien_keys(self, p: ChienKeys, ref: str) -> None:
        self._expect(p, ref, DeckPhase.PLAY, "chien")
        positions = self.setup.layout.chien_positions
        if len(p.keys) != len(positions):
            self._fail(
                p.seat, "chien", f"sent {len(p.keys)} chien keys instead of {len(positions)}", ref
            )
        self._scalars(p.seat, "chien", p.keys, "keys", ref)
        self._committed_keys(p.seat, "chien", positions, p.keys, ref)
        if len(self._chien_keys_from) == self.setup.players - 1:
            self._turn_chien(p, ref)
        for j, key in zip(positions, p.keys):
            self._keys.setdefault(j, {})[p.seat] = key
        self._chien_keys_from.add(p.seat)

    def _turn_chien(self, last: ChienKeys, last_ref: str) -> None:
        """Every seat's chien keys are in with ``last``: open the chien, or name who spoilt it."""
        chien: dict[int, Card] = {}
        for j, last_key in zip(self.setup.layout.chien_positions, last.keys):
            keys = self.published_keys(j)
            keys[last.seat] = (last_key, last_ref)
            index = card_of(self._unlock(j, [key for key, _ in keys.values()]))
            if index is None or DECK[index] in chien.values():
                raise VerdictError(self.blame("chien", j, keys))
            chien[j] = DECK[index]
        for j, card in chien.items():
            self._learn(card.index, _Origin(False, j, CHIEN, last_ref), "chien", None)
        self._chien = chien

    def _unlock(self, position: int, keys: Iterable[Scalar]) -> Point:
        return mul(invert(scalar_product(keys)), self.final_point(position))

    def _on_open(self, p: Open, ref: str) -> None:
        self._expect(p, ref, DeckPhase.PLAY, "open")
        if self._ecart is not None and p.seat == self._ecart.seat:
            self._fail(
                p.seat,
                "open",
                "opened a dealt position after re-committing its hand in the écart",
                ref,
            )
        owner = self.setup.layout.owner
        for o in p.openings:
            if owner[o.where] != p.seat:
                self._fail(
                    p.seat, "open", f"opened position {o.where}, which was not dealt to it", ref
                )
            if p.seat not in self.trusted:
                self._check_opening(p, o, ref)
            self._learn(o.card, _Origin(False, o.where, p.seat, ref), "open", self._taker)

    def _check_opening(self, p: Open, o: Opening, ref: str) -> None:
        """The key opens position ``o.where`` to the card claimed: the other seats' keys and
        this one undo the whole lock chain.  One multiplication, on the path of every card
        played, and so not done for a trusted seat's own card.  Checked forwards — the card
        locked by every key is the final point — which is the same equation as the unlock
        without the scalar inversion (≈ 50 µs, a tenth of a card's check)."""
        self._scalars(p.seat, "open", [o.key], "key", ref)
        keys = scalar_product([o.key, *self._keys[o.where].values()])
        if mul(keys, CARD_POINTS[o.card]) != self.final_point(o.where):
            if not self.key_matches(p.seat, o.where, o.key):
                self._fail(
                    p.seat,
                    "open",
                    f"its key for position {o.where} does not match its lock",
                    ref,
                    self.ref("lock", p.seat),
                )
            self._fail(
                p.seat,
                "open",
                f"claimed {DECK[o.card].code} at position {o.where}, which holds another card",
                ref,
            )

    @property
    def _taker(self) -> int | None:
        return None if self._ecart is None else self._ecart.seat

    def _on_ecart(self, p: EcartCommitment, ref: str) -> None:
        self._expect(p, ref, DeckPhase.PLAY, "ecart")
        if self._chien is None:
            self._fail(p.seat, "ecart", "re-committed its hand before the chien was turned", ref)
        count, chien_size = self.setup.recommit_count, self.setup.variant.chien_size
        if len(p.commitments) != count:
            self._fail(
                p.seat, "ecart", f"re-committed {len(p.commitments)} cards instead of {count}", ref
            )
        if p.seat not in self.trusted:
            self._points(p.seat, "ecart", p.commitments, "commitments", ref)
        if len(p.discarded) != chien_size:
            self._fail(
                p.seat, "ecart", f"discarded {len(p.discarded)} cards instead of {chien_size}", ref
            )
        for o in p.openings:
            self._check_recommitment(p.seat, "ecart", p.commitments, o, ref)
            if o.where not in p.discarded:
                self._fail(
                    p.seat,
                    "ecart",
                    f"showed re-commitment {o.where}, which is not in the écart",
                    ref,
                )
            card = DECK[o.card]
            if card.is_king or card.is_bout:
                self._fail(
                    p.seat,
                    "ecart",
                    f"discarded {card.code}: a king or a bout never goes to the écart",
                    ref,
                )
            if not card.is_trump:
                self._fail(
                    p.seat, "ecart", f"showed {card.code} in the écart: only trumps are shown", ref
                )
        for o in p.openings:
            self._learn(o.card, _Origin(True, o.where, p.seat, ref), "ecart", p.seat)
        self._ecart = p

    def _check_recommitment(
        self, seat: int, step: str, commitments: Sequence[Point], o: Opening, ref: str
    ) -> None:
        if o.where >= len(commitments):
            self._fail(seat, step, f"opened re-commitment {o.where}, which does not exist", ref)
        if seat in self.trusted:
            return
        self._scalars(seat, step, [o.key], "key", ref)
        if mul(o.key, CARD_POINTS[o.card]) != commitments[o.where]:
            self._fail(
                seat, step, f"re-commitment {o.where} does not open to {DECK[o.card].code}", ref
            )

    def _on_open_recommitted(self, p: OpenRecommitted, ref: str) -> None:
        self._expect(p, ref, DeckPhase.PLAY, "open")
        if self._ecart is None or self._ecart.seat != p.seat:
            self._fail(p.seat, "open", "opened re-commitments without having made an écart", ref)
        assert self._ecart is not None
        for o in p.openings:
            if o.where in self._ecart.discarded:
                self._fail(
                    p.seat, "open", f"opened re-commitment {o.where}, which it discarded", ref
                )
            self._check_recommitment(p.seat, "open", self._ecart.commitments, o, ref)
            self._learn(o.card, _Origin(True, o.where, p.seat, ref), "open", p.seat)

    def _learn(self, card: int, origin: _Origin, step: str, taker: int | None) -> None:
        """Remember where a card was opened; a card opened in two places is a verdict.

        The taker's re-commitments legitimately hold its own dealt cards and the chien, so a
        card seen both there and at one of those positions is fine.  Any other repeat is
        either the taker's fault (it re-committed a card it never had — dealt positions are
        bound to the lock chain, re-commitments only to the taker) or, between two dealt
        positions, a fault of the shuffle or lock that the audit will pin down.
        """
        seen = self._known.get(card)
        if seen is None:
            self._known[card] = origin
            return
        if (seen.recommitted, seen.where) == (origin.recommitted, origin.where):
            return
        code = DECK[card].code
        if seen.recommitted != origin.recommitted:
            dealt = origin if seen.recommitted else seen
            if dealt.holder in (taker, CHIEN):
                return
            self._fail(
                taker,
                step,
                f"re-committed {code}, which was dealt to seat {dealt.holder}",
                seen.evidence,
                origin.evidence,
            )
        if origin.recommitted:
            self._fail(taker, step, f"re-committed {code} twice", seen.evidence, origin.evidence)
        self._fail(
            None,
            step,
            f"{code} opened at two dealt positions; settled by the audit",
            seen.evidence,
            origin.evidence,
        )

    def _on_reveal(self, p: Reveal, ref: str) -> None:
        if self.phase is DeckPhase.COMMIT:
            self._fail(p.seat, "reveal", "revealed its seed before every seat had committed", ref)
        if p.seat in self._revealed:
            self._fail(p.seat, "reveal", "sent its reveal payload twice", ref)
        setup = self.setup
        if (
            commitment(p.seed, setup.table_id, setup.deal, p.seat)
            != self._commits[p.seat].commitment
        ):
            self._fail(
                p.seat,
                "reveal",
                "its seed does not match its commitment",
                ref,
                self.ref("commit", p.seat),
            )
        self._revealed[p.seat] = p.seed
