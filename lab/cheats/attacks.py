"""Seats that cheat: real attacks run by a modified seat machine, for the cheat lab.

Each kind is a :class:`Cheater` — a :class:`~protocol.replication.machine.SeatMachine` that deviates
from the protocol in one way, the way a modified daemon would: it signs with its own key, sends what
it likes to whom it likes, and keeps whatever it can learn.  The honest seats run the unmodified
code and must stop the deal (or, for a renonce, score it with the penalty) and name it.
``tarot sim --cheat SEAT:KIND`` and ``tarotd --cheat KIND`` pick one by name (:data:`CHEATS`).

What a cheater tells its transport, beyond the messages :meth:`receive` and :meth:`act` return
(which go to every other seat):

* :meth:`Cheater.take_addressed` — frames for some seats only (an equivocation), raw bytes
  (junk), or old messages (a replay), to be delivered exactly as they are;
* :attr:`Cheater.attempted` — whether the attack was carried out in this deal (some need a
  chance: a card it may not play, the contract, its first card…);
* :attr:`Cheater.learned` — card by pack position, what it found out beyond its own view (a
  tracer, a lock tracer, a peek), for the test that it learns nothing it should not.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any, ClassVar

from protocol.deck.group import (
    GENERATOR,
    Point,
    Scalar,
    add,
    base_mul_each,
    card_of,
    from_int,
    invert,
    mul,
    mul_each,
    point_sum,
    scalar_from_digest,
    scalar_mul,
    scalar_product,
)
from protocol.deck.group import sub as point_sub
from protocol.deck.lock_proof import LockProof, prove_lock
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
    Shuffle,
)
from protocol.deck.public_deck import PublicDeck
from protocol.deck.seat_deck import SeatDeck
from protocol.deck.seeds import DECK_SIZE, SeatSecrets
from protocol.deck.shuffle_proof import prove_shuffle
from protocol.plugins import Addressed
from protocol.replication.identity import Identity
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Kind, Message, WireValue, encode, sign_message
from protocol.replication.payloads import (
    CallPayload,
    Opened,
    PlayPayload,
    PoigneePayload,
    decode_payload,
)
from protocol.replication.public import Stage
from protocol.rules.cards import DECK, Card, card
from protocol.rules.deal import Action, Bid, Call, Play, ShowPoignee
from protocol.rules.variants import Contract

#: Frames in one burst of the flood.
FLOOD_FRAMES = 60

#: The scalar 1: a lock tracer's plain copy.
ONE = from_int(1)


def _secret_scalar(seed: bytes, label: str) -> bytes:
    """A scalar only this cheater knows, drawn from its seed (deterministic, like the rest)."""
    return scalar_from_digest(hashlib.sha512(seed + label.encode()).digest())


# --- Cheating decks: the deviation is in one crypto step ---------------------------------


class CheatingDeck(SeatDeck):
    """A seat's secret deck that bends one step; ``deviated`` once it has."""

    deviated = False


class BadShuffleDeck(CheatingDeck):
    """Its shuffled deck holds one point twice and loses another: a card replaced by a copy
    of another (the first shuffler, which sees plain cards, duplicates a card it likes)."""

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        points = list(honest.points)
        points[1] = points[0]
        self.deviated = True
        return replace(honest, points=tuple(points))


#: The card the tracer follows.
TRACED = card("T21")


class TracerDeck(CheatingDeck):
    """The tracer of DESIGN §4: put ``t·a·M_target`` where another card belongs and make the
    sum right on a third — the shape that passed the first design's proof over sums — with
    the shuffle proof computed over these points from its true permutation and key, the best
    proof it can make.  The proof binds every point to a permuted input: the step is refused,
    before anything is dealt.  Accepted, it would pay once the last shuffle is out: the pair
    related by ``t`` shows where the target card lies (:meth:`trace`).  Only the first shuffler
    knows which card it marks; a later one marks a card blind (it learns a position, no card)."""

    tracer: bytes | None = None  #: its secret multiple t, once it has shuffled

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        s = self.secrets
        before = public.current_points()
        where = {index: p for p, index in enumerate(s.permutation)}  # output place of each input
        if self.seat == 0:  # the input is the plain pack, in card order
            target, victim, partner = TRACED.index, _other(TRACED, 0), _other(TRACED, 1)
        else:
            target, victim, partner = 0, 1, 2
        self.tracer = _secret_scalar(s.seed, "tracer")
        marked = mul(self.tracer, mul(s.blanket, before[target]))
        at_victim, at_partner = honest.points[where[victim]], honest.points[where[partner]]
        points = list(honest.points)
        points[where[victim]] = marked
        points[where[partner]] = add(at_partner, point_sub(at_victim, marked))
        self.deviated = True
        binding = self.setup.binding(self.seat, "shuffle")
        proof = prove_shuffle(
            binding, s.blanket, s.blanket_public, before, points, s.permutation, s.nonce_key
        )
        return Shuffle(self.seat, tuple(points), proof)

    def trace(self, final: Sequence[Point]) -> int | None:
        """The position of the marked card in the deck after every shuffle (the locks do not
        move points), found by the relation ``t·D[p] ∈ D``."""
        assert self.tracer is not None
        points = set(final)
        return next((p for p, point in enumerate(final) if mul(self.tracer, point) in points), None)


def _other(card: Card, n: int) -> int:
    """The index of the n-th card other than ``card``: the tracer's victim and partner."""
    return [c.index for c in DECK if c != card][n]


class BadLockDeck(CheatingDeck):
    """Two locked points that are not its committed keys times the previous step, on the next
    seat's first two positions, their sum unchanged (``+G`` on one, ``−G`` on the other: the
    first design's proof over sums held), sent with its honest proof.  The proof binds each
    position on its own: the lock is refused at once."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        victim = (self.seat + 1) % self.setup.players
        j, k = self.setup.layout.positions_of(victim)[:2]
        locked = list(honest.locked)
        locked[j], locked[k] = add(locked[j], GENERATOR), point_sub(locked[k], GENERATOR)
        self.deviated = True
        return replace(honest, locked=tuple(locked))


class HalfFixLockTracerDeck(CheatingDeck):
    """The lock tracer against the tempting half-fix of issue 25 (the key applied before the
    blanket is removed, but no proof that each position's key step used its committed key):
    into K of its *own* positions *j* it puts ``(bⱼ·a⁻¹)·E'ₚ`` — the point of a target position
    *p* (every chien position, and the first card of each of the next ``beyond_chien`` seats)
    keyed with its own committed key ``bⱼ`` — and proves the step with every secret it has
    (:meth:`_proof`).  Accepted, its own positions would hold the targets' cards once the deal
    keys are in: the first locker reads the chien from its own hand before the first bid, and
    may even play it (every key checks out), caught only by the audit.  The proof binds every
    position to its input: refused at the lock, before any key is dealt."""

    #: Targets beside the chien: the first card of each of the next seats, this many of them.
    beyond_chien: ClassVar[int] = 2

    @property
    def multiple(self) -> Scalar:
        """``t`` in ``t·E'ₚ``: here a plain copy, so that its own hand decrypts to the cards
        it copied (its hand check, and every later check of its own keys, sees nothing)."""
        return ONE

    def targets(self) -> dict[int, int]:
        """Own position → the target position whose point it puts there, K of them:
        ``min(hand − 1, chien + beyond_chien)`` (one own position is left for the
        compensation of :class:`LockTracerDeck`)."""
        layout, n = self.setup.layout, self.setup.players
        others = [layout.positions_of((self.seat + k) % n)[0] for k in range(1, n)]
        wanted = [*layout.chien_positions, *others[: self.beyond_chien]]
        own = layout.positions_of(self.seat)
        return dict(zip(own[: len(own) - 1], wanted))

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        before = public.current_points()
        locked = list(honest.locked)
        for j, point in self._forged(before).items():
            locked[j] = point
        self.deviated = True
        return Lock(
            self.seat,
            honest.commitments,
            tuple(locked),
            self._proof(before, honest.commitments, tuple(locked)),
        )

    def _forged(self, before: Sequence[Point]) -> dict[int, Point]:
        """The forged locked points: ``(t·bⱼ·a⁻¹)·E'ₚ`` at each own position *j* of target *p*."""
        s, targets = self.secrets, self.targets()
        rekeys = [
            scalar_product([self.multiple, s.lock_keys[j], s.blanket_inverse]) for j in targets
        ]
        return dict(zip(targets, mul_each(rekeys, [before[p] for p in targets.values()])))

    def _proof(
        self, before: Sequence[Point], commitments: Sequence[Point], locked: Sequence[Point]
    ) -> LockProof:
        """The lock proof run on the forged step itself, with every secret the locker has
        (``a`` and its keys): the hash binds the very step it sends, and only the forged
        positions break the equation ``a·Eⱼ = bⱼ·E'ⱼ``.  The best proof it can make: a key
        for a forged position would be a discrete log between two positions' points."""
        s = self.secrets
        binding = self.setup.binding(self.seat, "lock")
        return prove_lock(
            binding,
            s.blanket,
            s.blanket_public,
            before,
            commitments,
            locked,
            s.lock_keys,
            s.nonce_key,
        )

    def read(self, public: PublicDeck) -> dict[int, Card]:
        """Target position → its card, from the own position it went to, once the other
        seats' deal keys are in.  Own position *j* then holds ``t·bⱼ·(Π_{m>i} b_{m,j})·
        (Π_{m<i} b_{m,p})·M``: the later lockers' keys of *j* and the earlier lockers' keys of
        *p* are all published unless *p* is the chien or an earlier locker's own card — so the
        first locker reads every target."""
        found: dict[int, Card] = {}
        for j, p in self.targets().items():
            mine, theirs = public.published_keys(j), public.published_keys(p)
            if any(m not in theirs for m in range(self.seat)):
                continue
            keys = [
                self.multiple,
                self.secrets.lock_keys[j],
                *(mine[m][0] for m in mine if m > self.seat),
            ]
            keys += [theirs[m][0] for m in range(self.seat)]
            index = card_of(mul(invert(scalar_product(keys)), public.final_point(j)))
            if index is not None:
                found[p] = DECK[index]
        return found


class LockTracerDeck(HalfFixLockTracerDeck):
    """The lock tracer in the shape that passed the first design's proof over sums: its
    unlocked points ``Fⱼ = a⁻¹·E'ⱼ`` (no longer published, but still what its locked points
    are made of, ``Eⱼ = bⱼ·Fⱼ``) take ``t·Fₚ`` at K of its own positions, for a secret ``t``
    (a copy would have repeated a published F), and one more own position takes the
    difference, so that ``ΣF = a⁻¹·ΣE'`` still holds — the statement the first design proved.
    Sent, like the half-fix's, with the proof run on the forged step: refused at the lock."""

    @property
    def multiple(self) -> Scalar:
        return _secret_scalar(self.seed, "lock-tracer")

    def _forged(self, before: Sequence[Point]) -> dict[int, Point]:
        s, targets = self.secrets, self.targets()
        forged = super()._forged(before)  # Eⱼ = bⱼ·(t·Fₚ)
        spare = self.setup.layout.positions_of(self.seat)[len(targets)]
        own = [spare, *targets]
        # their true F
        unlocked = mul_each([s.blanket_inverse] * len(own), [before[j] for j in own])
        moved = mul_each(
            [scalar_mul(self.multiple, s.blanket_inverse)] * len(targets),
            [before[p] for p in targets.values()],
        )
        forged[spare] = mul(s.lock_keys[spare], point_sub(point_sum(unlocked), point_sum(moved)))
        return forged


class BadKeyDeck(CheatingDeck):
    """Publishes a wrong lock key for the first card of the next seat."""

    def deal_keys(self) -> DealKeys:
        honest = super().deal_keys()
        victim = self.setup.layout.positions_of((self.seat + 1) % self.setup.players)[0]
        keys = list(honest.keys)
        keys[self.setup.dealt_to_others(self.seat).index(victim)] = _secret_scalar(
            self.seed, "bad-key"
        )
        self.deviated = True
        return replace(honest, keys=tuple(keys))


class BadEcartDeck(CheatingDeck):
    """The écart it re-commits holds a king (else the excuse, else any card but a trump) it
    never had, in place of one card it discards: the points of a card it does not own go to
    its tricks.  Never a trump: a trump in the écart is shown to everyone, and the forgery
    would stop the deal at once instead of waiting for the audit.  Its own view stays the
    honest écart, so it plays on as if nothing happened."""

    def ecart(self, public: PublicDeck, discard: Sequence[Card]) -> EcartCommitment:
        held = [*self.hand(public).values(), *(public.chien() or ())]
        hidden = [c for c in DECK if not c.is_trump]
        preference = [*(c for c in hidden if c.is_king), *(c for c in hidden if c.is_bout), *hidden]
        forged = next(c for c in preference if c not in held)
        dropped = next((c for c in discard if not c.is_trump), discard[0])
        self.deviated = True
        swap = {dropped: forged}
        return self._recommit([swap.get(c, c) for c in held], [swap.get(c, c) for c in discard])


# --- Cheating machines ---------------------------------------------------------------------


class Cheater(SeatMachine):
    """A seat machine that deviates in one way (see the module docstring)."""

    kind: ClassVar[str]
    #: A bid it makes when it can, to get the phase its attack needs (None: as its player says).
    contract: ClassVar[Contract | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As :class:`SeatMachine`, with its :attr:`deck_class`."""
        super().__init__(*args, **kwargs)
        self._attempted = False
        self.learned: dict[int, Card] = {}
        self.earlier: Sequence[Message] = ()  #: its own messages of an earlier deal (replay)
        self._addressed: list[Addressed] = []

    @property
    def attempted(self) -> bool:
        deck = self.secret
        return self._attempted or (isinstance(deck, CheatingDeck) and deck.deviated)

    def take_addressed(self) -> list[Addressed]:
        frames, self._addressed = self._addressed, []
        return frames

    def act(self, action: Action) -> list[Message]:
        if isinstance(action, Bid) and self.contract is not None:
            action = self._bid(action)
        return super().act(action)

    def _bid(self, action: Bid) -> Bid:
        """The bid its attack needs, when it is still higher than every bid so far."""
        assert self.contract is not None
        highest = self._highest()
        if highest is None or self.contract > highest:
            return Bid(self.seat, self.contract)
        return action

    def _highest(self) -> Contract | None:
        game = self.game
        assert game is not None
        return max((b.contract for b in game.bids if b.contract is not None), default=None)

    def _others(self) -> list[int]:
        return [s for s in range(self.table.players) if s != self.seat]

    def _signed(
        self,
        kind: Kind,
        payload: WireValue,
        *,
        seat: int | None = None,
        deal: int | None = None,
        prev: bytes | None = None,
    ) -> Message:
        """A message signed with this cheater's key, saying whatever it likes."""
        return sign_message(
            self.identity,
            self.table.table_id,
            self.public.deal_number if deal is None else deal,
            kind,
            self.seat if seat is None else seat,
            payload,
            self.transcript.head if prev is None else prev,
        )


class _Reader(Cheater):
    """A cheater that, at one moment of the deal, reads what its deviation (or what is
    public) would show it, once: :meth:`_read` when :meth:`_can_read` first holds."""

    has_read = False

    def receive(self, message: Message) -> list[Message]:
        out = super().receive(message)
        if not self.has_read and self._can_read():
            self.has_read = True
            self.learned.update(self._read())
        return out

    def _can_read(self) -> bool:
        raise NotImplementedError

    def _read(self) -> dict[int, Card]:
        """Card by pack position, beyond its own view."""
        raise NotImplementedError


class Tracer(_Reader):
    """Marks a card in its shuffle and, after the last shuffle, reads where it lies — which
    it never gets to: its shuffle is refused."""

    kind = "tracer"
    deck_class = TracerDeck

    def _shuffles(self) -> list[Shuffle]:
        return [p for p in self.public.deck.record.payloads if isinstance(p, Shuffle)]

    def _can_read(self) -> bool:
        return len(self._shuffles()) == self.table.players

    def _read(self) -> dict[int, Card]:
        deck = self.secret
        assert isinstance(deck, TracerDeck)
        found = deck.trace(self._shuffles()[-1].points)
        # only the first shuffler knows the card
        return {} if found is None or self.seat != 0 else {found: TRACED}


class HalfFixLockTracer(_Reader):
    """Puts plain copies of other positions' points — the chien's among them — into its own
    at the lock, keyed as its own, the attack the half-fix of issue 25 (the per-position key
    step left unproved) lets through, and reads them from its own hand once the deal keys are
    in — which it never gets to: its lock is refused."""

    kind = "lock-tracer-half-fix"
    deck_class = HalfFixLockTracerDeck

    def _can_read(self) -> bool:
        deck = self.public.deck
        return self.attempted and all(deck.has_deal_keys(s) for s in self._others())

    def _read(self) -> dict[int, Card]:
        deck = self.secret
        assert isinstance(deck, HalfFixLockTracerDeck)
        return deck.read(self.public.deck)


class LockTracer(HalfFixLockTracer):
    """The lock tracer in the shape the first design's proof over sums let through:
    multiples of the targets' points, the sum made right on one more own position."""

    kind = "lock-tracer"
    deck_class = LockTracerDeck


def _deck_cheat(
    kind: str, deck: type[CheatingDeck], contract: Contract | None = None
) -> type[Cheater]:
    """A cheater whose whole deviation is in its deck (and, maybe, the contract it needs)."""
    attributes = {"kind": kind, "deck_class": deck, "contract": contract, "__doc__": deck.__doc__}
    return type(deck.__name__.removesuffix("Deck"), (Cheater,), attributes)


BadShuffle = _deck_cheat("bad-shuffle", BadShuffleDeck)
BadLock = _deck_cheat("bad-lock", BadLockDeck)
BadKey = _deck_cheat("bad-key", BadKeyDeck)
BadEcart = _deck_cheat("bad-ecart", BadEcartDeck, Contract.GARDE)  # the chien is turned: an écart


class Revoke(Cheater):
    """Plays a card that breaks the rules of play (does not follow suit, trump or overtrump)
    the first time it can: nothing public shows it, the audit finds it."""

    kind = "revoke"
    contract = Contract.PETITE  # somebody takes: the cards are played

    def act(self, action: Action) -> list[Message]:
        game = self.game
        if (
            isinstance(action, Play)
            and not self._attempted
            and game is not None
            and self.decision() is not None
        ):
            hand = game.hand(self.seat)
            illegal = [c for c in hand if c not in game.legal_cards(self.seat)]
            if illegal:
                self._attempted = True
                return self._send_action(Play(self.seat, illegal[0]))
        return super().act(action)


class _FalseOpening(Cheater):
    """Shows cards it does not hold by opening its own places with its real keys while
    claiming other cards there: a play, a poignée or the kings behind a call."""

    def _opening(self, real: Sequence[Card], claimed: Sequence[Card]) -> Opened:
        """Open ``real`` (cards it holds), their places claimed to hold ``claimed``."""
        honest = self.secret.open(real)
        openings = tuple(Opening(o.where, o.key, c.index) for o, c in zip(honest.openings, claimed))
        self._attempted = True
        return replace(honest, openings=openings)

    def _hand(self) -> list[Card]:
        game = self.game
        assert game is not None
        return list(game.hand(self.seat))


class FalseCard(_FalseOpening):
    """Its first card is one that was not dealt to it (the best trump it lacks)."""

    kind = "false-card"
    contract = Contract.PETITE

    def act(self, action: Action) -> list[Message]:
        if isinstance(action, Play) and not self._attempted and self.decision() is not None:
            hand = self._hand()
            wanted = next(c for c in reversed(DECK) if c not in hand and c.is_trump)
            self._send(Kind.PLAY, PlayPayload(self._opening([action.card], [wanted])))
            return self._flush()
        return super().act(action)


class FalsePoignee(_FalseOpening):
    """Before its first card, shows a poignée of trumps it does not all hold: its own trumps
    and, claimed at the places of other cards, trumps it lacks — or, holding enough, one
    trump more than the threshold (in place of the true poignée its player would show)."""

    kind = "false-poignee"
    contract = Contract.PETITE

    def act(self, action: Action) -> list[Message]:
        game = self.game
        first = (
            game is not None
            and not game.tricks
            and not self._attempted
            and self.decision() is not None
        )
        if isinstance(action, (ShowPoignee, Play)) and first:
            hand = self._hand()
            threshold = self.table.variant.poignee_thresholds[0]
            trumps = [c for c in hand if c.is_trump]
            if len(trumps) >= threshold:
                shown = trumps[: threshold + 1] if len(trumps) > threshold else trumps[:-1]
                self._send(Kind.POIGNEE, PoigneePayload(self._opening(shown, shown)))
            else:
                lacking = [c for c in DECK if c.is_trump and c not in hand][
                    : threshold - len(trumps)
                ]
                fillers = [c for c in hand if not c.is_trump][: len(lacking)]
                self._send(
                    Kind.POIGNEE,
                    PoigneePayload(self._opening([*trumps, *fillers], [*trumps, *lacking])),
                )
            return self._flush()
        return super().act(action)


class FalseCall(_FalseOpening):
    """Takes, then calls a queen (or lower) showing, as its "four kings", the kings it holds
    and kings claimed at the places of other cards."""

    kind = "false-call"
    contract = Contract.GARDE_CONTRE

    def act(self, action: Action) -> list[Message]:
        if isinstance(action, Call) and self.decision() is not None:
            hand = self._hand()
            for rank in (13, 12, 11):  # queen, cavalier, valet: the first it may not call
                needed = [c for c in DECK if c.suit.is_colour and rank < c.rank <= 14]
                missing = [c for c in needed if c not in hand]
                if missing:
                    break
            called = next(c for c in DECK if c.suit.is_colour and c.rank == rank)
            held = [c for c in needed if c in hand]
            fillers = [c for c in hand if c not in needed][: len(missing)]
            self._send(
                Kind.CALL, CallPayload(called, self._opening([*held, *fillers], [*held, *missing]))
            )
            return self._flush()
        return super().act(action)


class Equivocate(Cheater):
    """At its first bid, signs two different bids for the one slot and sends one to half of
    the other seats, the other to the rest."""

    kind = "equivocate"

    def act(self, action: Action) -> list[Message]:
        if not isinstance(action, Bid) or self._attempted or self.decision() is None:
            return super().act(action)
        highest = self._highest()
        higher = [c for c in Contract if highest is None or c > highest]
        other = None if action.contract is not None else (higher[0] if higher else None)
        if action.contract is None and other is None:
            return super().act(action)
        head = self.transcript.head
        first, *after = super().act(action)  # its bid, and what its own machine sends next
        second = self._signed(
            Kind.BID, {"contract": None if other is None else other.code}, prev=head
        )
        others = self._others()
        half = len(others) // 2
        self._addressed += [
            (frozenset(others[:half]), encode(first)),
            (frozenset(others[half:]), encode(second)),
        ]
        self._attempted = True
        return after


class Replay(Cheater):
    """Answers each of its turns with one of its own messages from an earlier deal, never a
    fresh one: old signatures are valid, but of another deal."""

    kind = "replay"

    def act(self, action: Action) -> list[Message]:
        if not self.earlier:
            return super().act(action)
        self._attempted = True
        self._addressed += [(None, encode(m)) for m in self.earlier if m.kind is Kind.BID] or [
            (None, encode(self.earlier[-1]))
        ]
        return []


class Impersonate(Cheater):
    """When another seat is to bid, bids for it: a message claiming that seat, signed with its
    own key (the only one it has)."""

    kind = "impersonate"

    def receive(self, message: Message) -> list[Message]:
        out = super().receive(message)
        game = self.public.game
        if not self._attempted and self.public.stage is Stage.BIDDING and game is not None:
            victim = game.to_act
            if victim is not None and victim != self.seat:
                self._attempted = True
                forged = self._signed(
                    Kind.BID, {"contract": Contract.GARDE_CONTRE.code}, seat=victim
                )
                self._addressed.append((None, encode(forged)))
        return out


class _Withholding(Cheater):
    """Sends nothing more once ``stage`` comes (if it :meth:`_withholds` in this deal): the
    others must time out."""

    stage: ClassVar[Stage]

    def _automatic(self) -> None:
        if self.public.stage is self.stage and self._withholds():
            self._attempted = True
            self._look()
            return
        super()._automatic()

    def _withholds(self) -> bool:
        """Whether the attack is worth it in this deal, now that ``stage`` has come."""
        return True

    def _look(self) -> None:
        """What it does while the others wait."""


class WithholdReveal(_Withholding):
    """Plays the deal, then refuses to reveal its seed (say, to hide a cheat from the audit)."""

    kind = "withhold-reveal"
    stage = Stage.REVEAL


class _KeysWithholding(_Withholding):
    """Withholds its keys of a round that has no order (the deal keys, the chien keys), and
    opens its :meth:`_targets` with the other seats' keys as they come — held in the round,
    which enters the chain only whole — and its own: once it holds every other seat's, it has
    seen them, and may leave."""

    round_kind: ClassVar[Kind]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._their_keys: dict[int, dict[int, Scalar]] = {}  #: seat → position → its key

    def receive(self, message: Message) -> list[Message]:
        out = super().receive(message)
        if message.kind is self.round_kind and self.transcript.accepted(message):
            keys = decode_payload(message)
            assert isinstance(keys, DealKeys | ChienKeys)  # what the round accepted
            self._their_keys[message.seat] = dict(zip(self._keyed_by(message.seat), keys.keys))
            if self._attempted:
                self._look()
        return out

    def _keyed_by(self, seat: int) -> tuple[int, ...]:
        """The positions whose keys ``seat`` sends in the round, in its payload's order."""
        raise NotImplementedError

    def _targets(self) -> tuple[int, ...]:
        """The positions it reads once every other seat's keys are in."""
        raise NotImplementedError

    def _look(self) -> None:
        if self.learned or set(self._their_keys) != set(self._others()):
            return
        deck, own = self.public.deck, self.secret.secrets.lock_keys
        for j in self._targets():
            keys = [own[j], *(theirs[j] for theirs in self._their_keys.values())]
            index = card_of(mul(invert(scalar_product(keys)), deck.final_point(j)))
            if index is not None:
                self.learned[j] = DECK[index]


class WithholdKeys(_KeysWithholding):
    """Decrypts its own hand once the others' deal keys are in, and withholds its own: with a
    bad hand it would like the deal to be dealt again."""

    kind = "withhold-keys"
    stage = Stage.DEAL_KEYS
    round_kind = Kind.DEAL_KEYS

    def _keyed_by(self, seat: int) -> tuple[int, ...]:
        return self.public.deck.setup.dealt_to_others(seat)

    def _targets(self) -> tuple[int, ...]:
        return tuple(self.public.deck.setup.layout.positions_of(self.seat))


class WithholdChienKeys(_KeysWithholding):
    """Takes a Garde, reads the chien once the other seats' chien keys are in, and withholds
    its own: with a bad chien it would rather have the deal dealt again than lose it.  Only as
    the taker: another seat's garde is not its to escape."""

    kind = "withhold-chien-keys"
    stage = Stage.CHIEN
    round_kind = Kind.CHIEN_OPEN
    contract = Contract.GARDE  # the highest contract whose chien is turned

    def _withholds(self) -> bool:
        game = self.public.game
        return game is not None and game.taker == self.seat

    def _keyed_by(self, seat: int) -> tuple[int, ...]:
        return self._targets()

    def _targets(self) -> tuple[int, ...]:
        return tuple(self.public.deck.setup.layout.chien_positions)


class Peek(_Reader):
    """Reads what it may not with everything it has (:func:`try_every_key`), once the deal
    keys are out and before the first bid — a passive coalition's attack, here of one seat
    and its seed — and must find nothing; then asks every peer, in a signed request, for the
    keys it lacks.  The protocol has no message that answers such a request: the request is
    of a kind no deal uses."""

    kind = "peek"

    def _can_read(self) -> bool:
        return self.public.stage is Stage.BIDDING

    def _read(self) -> dict[int, Card]:
        self._attempted = True
        found = try_every_key(self.public.deck, self.secret.secrets, self.seat)
        wanted = [
            j for j, owner in enumerate(self.public.deck.setup.layout.owner) if owner != self.seat
        ]
        request = self._signed(
            Kind.ABANDON, {"request": "keys", "positions": list[WireValue](wanted)}
        )
        self._addressed.append((None, encode(request)))
        return found


def try_every_key(deck: PublicDeck, secrets: SeatSecrets, seat: int) -> dict[int, Card]:
    """Card by position, for every position not dealt to ``seat`` that some product of the
    keys it holds for that position opens, on some point published for it.

    The keys, among its secrets and every scalar published so far, are those whose image is
    a factor's commitment (:func:`keys_by_position`); a position's points are its locked
    points and commitments of every lock, and every shuffle's output and proof points at the
    places its own permutation ties to it (:func:`points_by_position`).  A key of another
    position is no factor of these (each position's keys are drawn apart), and every factor a
    point carries has a positive exponent: taking off a subset of factors is every product
    worth a multiplication.  At five seats, 24,000 to 30,000 multiplications before the first
    bid: about a second."""
    payloads, owner = deck.record.payloads, deck.setup.layout.owner
    keys = keys_by_position(payloads, secrets)
    tries: list[tuple[int, Scalar, Point]] = []
    for j, points in points_by_position(payloads, seat, secrets.permutation).items():
        if owner[j] == seat:
            continue
        held = sorted(keys.get(None, set()) | keys.get(j, set()))
        for size in range(1, len(held) + 1):
            for chosen in combinations(held, size):
                unkey = invert(scalar_product(chosen))
                tries += [(j, unkey, point) for point in points]
    opened = mul_each([unkey for _, unkey, _ in tries], [point for _, _, point in tries])
    found: dict[int, Card] = {}
    for (j, _, _), point in zip(tries, opened):
        index = card_of(point)
        if index is not None:
            found[j] = DECK[index]
    return found


def keys_by_position(
    payloads: Sequence[DeckPayload], secrets: SeatSecrets
) -> dict[int | None, set[Scalar]]:
    """Every scalar a seat knows — its own secrets, every key published, every proof's
    challenge and responses — that is a factor of the deck's points, by the position it keys
    (None: a blanket key, a factor of every point until its seat locks).  A scalar is such a
    factor exactly when its image is that factor's commitment, ``A = a·G`` or ``B = b·G``."""
    factors: dict[Point, int | None] = {}
    scalars: list[Scalar] = [secrets.blanket, *secrets.lock_keys]
    for p in payloads:
        match p:
            case Commit():
                factors[p.blanket_public] = None
            case Shuffle():
                scalars += [
                    p.proof.challenge,
                    *p.proof.summary,
                    *p.proof.chain_responses,
                    *p.proof.opening_responses,
                ]
            case Lock():
                factors.update((point, j) for j, point in enumerate(p.commitments))
                scalars += [p.proof.challenge, p.proof.blanket_response, *p.proof.key_responses]
            case DealKeys() | ChienKeys():
                scalars += p.keys
            case Open() | OpenRecommitted() | EcartCommitment():
                scalars += [o.key for o in p.openings]
    held: dict[int | None, set[Scalar]] = {}
    for scalar, image in zip(scalars, base_mul_each(scalars)):
        if image in factors:
            held.setdefault(factors[image], set()).add(scalar)
    return held


def points_by_position(
    payloads: Sequence[DeckPayload], seat: int, permutation: Sequence[int]
) -> dict[int, list[Point]]:
    """Every published point a seat can tie to a pack position: each lock's commitment and
    locked point there, and each shuffle's output point and proof points (``ĉ`` by output
    place, ``C`` by input place) at a place that leads there.  The last shuffle's output
    place *p* is position *p* (the locks move no point); an earlier shuffle's places lead
    somewhere only through later permutations it knows — its own."""
    found: dict[int, list[Point]] = defaultdict(list)
    places: list[int | None] = list(range(DECK_SIZE))  # the position of each output place
    for shuffle in reversed([p for p in payloads if isinstance(p, Shuffle)]):
        inputs: list[int | None] = [None] * DECK_SIZE  # the position of each input place
        if shuffle.seat == seat:
            for output, source in enumerate(permutation):
                inputs[source] = places[output]
        for points, where in (
            (shuffle.points, places),
            (shuffle.proof.chain, places),
            (shuffle.proof.commitments, inputs),
        ):
            for point, position in zip(points, where):
                if position is not None:
                    found[position].append(point)
        places = inputs
    for lock in (p for p in payloads if isinstance(p, Lock)):
        for j, points in enumerate(zip(lock.commitments, lock.locked)):
            found[j] += points
    return found


class Flood(Cheater):
    """When it first has to bid, sends a burst of junk before its bid: bytes that are no
    message, its bid cut short, messages signed by a key of no member, for another table or
    a later deal, copies of its own messages, and messages it signs for slots that are not
    open (a card during the bidding, a message on a head nobody reached).  Then it plays on
    honestly: the deal must end as it would have without the junk."""

    kind = "flood"

    def act(self, action: Action) -> list[Message]:
        out = super().act(action)
        if isinstance(action, Bid) and not self._attempted:
            self._attempted = True
            self._addressed += [(None, frame) for frame in self._junk(out[0])]
        return out

    def _junk(self, bid: Message) -> list[bytes]:
        outsider = Identity.from_private_bytes(hashlib.sha256(self.seed + b"outsider").digest())
        table = self.table
        frames: list[bytes] = []
        for n in range(FLOOD_FRAMES):
            noise = hashlib.sha256(self.seed + n.to_bytes(4, "big")).digest()
            match n % 6:
                case 0:
                    frames.append(noise * (1 + n % 5))
                case 1:
                    frames.append(encode(bid)[: 20 + n])
                case 2:
                    frames.append(
                        encode(
                            sign_message(
                                outsider,
                                table.table_id,
                                bid.deal,
                                Kind.BID,
                                self.seat,
                                {"contract": None},
                                bid.prev,
                            )
                        )
                    )
                case 3:
                    frames.append(
                        encode(self._signed(Kind.BID, {"contract": None}, deal=bid.deal + 1))
                    )
                case 4:
                    frames.append(encode(bid))
                case _:
                    frames.append(encode(self._signed(Kind.PLAY, {"n": n}, prev=noise)))
        return frames


CHEATS: dict[str, type[Cheater]] = {
    cls.kind: cls
    for cls in (
        BadShuffle,
        Tracer,
        BadLock,
        LockTracer,
        HalfFixLockTracer,
        BadKey,
        FalseCard,
        Revoke,
        BadEcart,
        FalsePoignee,
        FalseCall,
        Equivocate,
        Replay,
        Impersonate,
        WithholdReveal,
        WithholdKeys,
        WithholdChienKeys,
        Peek,
        Flood,
    )
}


def cheat_machine(kind: str) -> type[Cheater]:
    try:
        return CHEATS[kind]
    except KeyError:
        raise ValueError(
            f"unknown cheat {kind!r}: use one of {', '.join(sorted(CHEATS))}"
        ) from None


class _Lab:
    """The cheat lab as the programs find it (:class:`protocol.plugins.CheatLab`), through the
    entry point ``tarot.cheats: lab`` that pyproject.toml declares."""

    kinds: Sequence[str] = tuple(sorted(CHEATS))

    def machine(self, kind: str) -> type[SeatMachine]:
        return cheat_machine(kind)

    def cheater(self, machine: SeatMachine) -> Cheater | None:
        return machine if isinstance(machine, Cheater) else None


LAB = _Lab()
