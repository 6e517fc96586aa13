"""Seats that cheat: real attacks run by a modified seat machine, for the cheat lab.

Each kind is a :class:`Cheater` — a :class:`~protocol.machine.SeatMachine` that deviates from
the protocol in one way, the way a modified daemon would: it signs with its own key, sends what
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
  tracer, a peek), for the test that it learns nothing it should not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from nacl.bindings import crypto_core_ed25519_sub as point_sub

from protocol.cards import DECK, Card, card
from protocol.deal import Action, Bid, Call, Play, ShowPoignee
from protocol.deck import DealKeys, Ecart, Lock, Open, Opening, OpenRecommitted, PublicDeck, SeatDeck, Shuffle
from protocol.group import GENERATOR, Point, add, card_of, invert, mul, scalar_from_digest, scalar_product
from protocol.identity import Identity
from protocol.machine import SeatMachine
from protocol.messages import Kind, Message, encode, sign_message
from protocol.messages import Payload as WirePayload
from protocol.public import Stage
from protocol.variants import Contract

#: A frame for the transport: the seats to hand it to (None: every other seat) and its bytes.
Addressed = tuple[frozenset[int] | None, bytes]

#: Frames in one burst of the flood.
FLOOD_FRAMES = 60


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
    sum right on a third, so the sum proof holds; after the last shuffle, the pair related by
    ``t`` in the public deck shows where the target card lies.  Only the first shuffler knows
    which card it marks; a later one marks a card blind (it learns a position, no card)."""

    tracer: bytes | None = None  #: its secret multiple t, once it has shuffled

    def shuffle(self, public: PublicDeck) -> Shuffle:
        honest = super().shuffle(public)
        s = self.secrets
        where = {index: p for p, index in enumerate(s.permutation)}  # output place of each input
        if self.seat == 0:  # the input is the plain pack, in card order
            target, victim, partner = TRACED.index, _other(TRACED, 0), _other(TRACED, 1)
        else:
            target, victim, partner = 0, 1, 2
        self.tracer = _secret_scalar(s.seed, "tracer")
        marked = mul(self.tracer, mul(s.blanket, public.current_points()[target]))
        at_victim, at_partner = honest.points[where[victim]], honest.points[where[partner]]
        points = list(honest.points)
        points[where[victim]] = marked
        points[where[partner]] = add(at_partner, point_sub(at_victim, marked))
        self.deviated = True
        return replace(honest, points=tuple(points))

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
    """Two ``F`` not made with its committed key, on positions of the next seat's hand, with
    their sum right so that the proof over sums holds, and each ``E`` its lock key times the
    wrong ``F`` so that its keys check out: only a decryption or the audit shows it."""

    def lock(self, public: PublicDeck) -> Lock:
        honest = super().lock(public)
        victim = (self.seat + 1) % self.setup.players
        j, k = self.setup.layout.positions_of(victim)[:2]
        unlocked, locked = list(honest.unlocked), list(honest.locked)
        unlocked[j], unlocked[k] = add(unlocked[j], GENERATOR), point_sub(unlocked[k], GENERATOR)
        for position in (j, k):
            locked[position] = mul(self.secrets.lock_keys[position], unlocked[position])
        self.deviated = True
        return replace(honest, unlocked=tuple(unlocked), locked=tuple(locked))


class BadKeyDeck(CheatingDeck):
    """Publishes a wrong lock key for the first card of the next seat."""

    def deal_keys(self) -> DealKeys:
        honest = super().deal_keys()
        victim = self.setup.layout.positions_of((self.seat + 1) % self.setup.players)[0]
        keys = list(honest.keys)
        keys[self.setup.dealt_to_others(self.seat).index(victim)] = _secret_scalar(self.seed, "bad-key")
        self.deviated = True
        return replace(honest, keys=tuple(keys))


class BadEcartDeck(CheatingDeck):
    """The écart it re-commits holds a king (else the excuse, else any card but a trump) it
    never had, in place of one card it discards: the points of a card it does not own go to
    its tricks.  Never a trump: a trump in the écart is shown to everyone, and the forgery
    would stop the deal at once instead of waiting for the audit.  Its own view stays the
    honest écart, so it plays on as if nothing happened."""

    def ecart(self, public: PublicDeck, discard: Sequence[Card]) -> Ecart:
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

    def _signed(self, kind: Kind, payload: WirePayload, *, seat: int | None = None, deal: int | None = None, prev: bytes | None = None) -> Message:
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


class Tracer(Cheater):
    """Marks a card in its shuffle and, after the last shuffle, reads where it lies."""

    kind = "tracer"
    deck_class = TracerDeck

    traced = False

    def receive(self, message: Message) -> list[Message]:
        out = super().receive(message)
        deck = self.secret
        assert isinstance(deck, TracerDeck)
        shuffles = [p for p in self.public.deck.record.payloads if isinstance(p, Shuffle)]
        if not self.traced and deck.tracer is not None and len(shuffles) == self.table.players:
            self.traced = True
            found = deck.trace(shuffles[-1].points)
            if found is not None and self.seat == 0:  # only the first shuffler knows the card
                self.learned[found] = TRACED
        return out


def _deck_cheat(kind: str, deck: type[CheatingDeck], contract: Contract | None = None) -> type[Cheater]:
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
        if isinstance(action, Play) and not self._attempted and game is not None and self.decision() is not None:
            hand = game.hand(self.seat)
            illegal = [c for c in hand if c not in game.legal_cards(self.seat)]
            if illegal:
                self._attempted = True
                return self._send_action(Play(self.seat, illegal[0]))
        return super().act(action)


class _FalseOpening(Cheater):
    """Shows cards it does not hold by opening its own places with its real keys while
    claiming other cards there: a play, a poignée or the kings behind a call."""

    def _opening(self, real: Sequence[Card], claimed: Sequence[Card]) -> dict[str, WirePayload]:
        """Open ``real`` (cards it holds), their places claimed to hold ``claimed``."""
        honest = self.secret.open(real)
        openings = tuple(Opening(o.where, o.key, c.index) for o, c in zip(honest.openings, claimed))
        forged: Open | OpenRecommitted = replace(honest, openings=openings)
        self._attempted = True
        return {"open": forged.to_wire()}  # type: ignore[dict-item]

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
            self._send(Kind.PLAY, self._opening([action.card], [wanted]))
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
        first = game is not None and not game.tricks and not self._attempted and self.decision() is not None
        if isinstance(action, (ShowPoignee, Play)) and first:
            hand = self._hand()
            threshold = self.table.variant.poignee_thresholds[0]
            trumps = [c for c in hand if c.is_trump]
            if len(trumps) >= threshold:
                shown = trumps[: threshold + 1] if len(trumps) > threshold else trumps[:-1]
                self._send(Kind.POIGNEE, self._opening(shown, shown))
            else:
                lacking = [c for c in DECK if c.is_trump and c not in hand][: threshold - len(trumps)]
                fillers = [c for c in hand if not c.is_trump][: len(lacking)]
                self._send(Kind.POIGNEE, self._opening([*trumps, *fillers], [*trumps, *lacking]))
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
            payload = self._opening([*held, *fillers], [*held, *missing])
            payload["card"] = called.code
            self._send(Kind.CALL, payload)
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
        second = self._signed(Kind.BID, {"contract": None if other is None else other.code}, prev=head)
        others = self._others()
        half = len(others) // 2
        self._addressed += [(frozenset(others[:half]), encode(first)), (frozenset(others[half:]), encode(second))]
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
        self._addressed += [(None, encode(m)) for m in self.earlier if m.kind is Kind.BID] or [(None, encode(self.earlier[-1]))]
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
                forged = self._signed(Kind.BID, {"contract": Contract.GARDE_CONTRE.code}, seat=victim)
                self._addressed.append((None, encode(forged)))
        return out


class _Withholding(Cheater):
    """Sends nothing more once ``stage`` comes: the others must time out."""

    stage: ClassVar[Stage]

    def _automatic(self) -> None:
        if self.public.stage is self.stage:
            self._attempted = True
            self._look()
            return
        super()._automatic()

    def _look(self) -> None:
        """What it does while the others wait."""


class WithholdReveal(_Withholding):
    """Plays the deal, then refuses to reveal its seed (say, to hide a cheat from the audit)."""

    kind = "withhold-reveal"
    stage = Stage.REVEAL


class WithholdKeys(_Withholding):
    """Decrypts its own hand once the others' deal keys are in, and withholds its own: with a
    bad hand it would like the deal to be dealt again."""

    kind = "withhold-keys"
    stage = Stage.DEAL_KEYS

    def _look(self) -> None:
        deck = self.public.deck
        if all(deck.has_deal_keys(s) for s in self._others()) and not self.learned:
            self.learned.update(self.secret.hand(deck))


class Peek(Cheater):
    """Tries to see what it may not: once the deal keys are out it tries to open every place
    of the others and of the chien with every key it has seen (and its own), and asks every
    peer, in a signed request, for the keys it lacks.  The protocol has no message that
    answers such a request: the request is of a kind no deal uses."""

    kind = "peek"

    def receive(self, message: Message) -> list[Message]:
        out = super().receive(message)
        if not self._attempted and self.public.stage is Stage.BIDDING:
            self._attempted = True
            self._try_every_key()
            wanted = [j for j in range(78) if self.public.deck.setup.layout.owner[j] != self.seat]
            request = self._signed(Kind.ABANDON, {"request": "keys", "positions": wanted})  # type: ignore[dict-item]
            self._addressed.append((None, encode(request)))
        return out

    def _try_every_key(self) -> None:
        deck, layout = self.public.deck, self.public.deck.setup.layout
        own = self.secret.secrets.lock_keys
        for j, owner in enumerate(layout.owner):
            if owner == self.seat:
                continue
            keys = [key for key, _ in deck.published_keys(j).values()]
            keys.append(own[j])
            index = card_of(mul(invert(scalar_product(keys)), deck.final_point(j)))
            if index is not None:
                self.learned[j] = DECK[index]


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
                    frames.append(encode(sign_message(outsider, table.table_id, bid.deal, Kind.BID, self.seat, {"contract": None}, bid.prev)))
                case 3:
                    frames.append(encode(self._signed(Kind.BID, {"contract": None}, deal=bid.deal + 1)))
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
        Peek,
        Flood,
    )
}


def cheat_machine(kind: str) -> type[Cheater]:
    try:
        return CHEATS[kind]
    except KeyError:
        raise ValueError(f"unknown cheat {kind!r}: use one of {', '.join(sorted(CHEATS))}") from None
