"""One deal of French Tarot as a state machine you push actions into.

Like a python-chess ``Board``: :meth:`Deal.legal_actions` lists what the seat to act may do,
:meth:`Deal.push` applies an action or raises :class:`~protocol.rules.rules.RuleError` and changes
nothing.  A deal goes through the phases bidding → call (five players) → écart (Petite and
Garde) → chelem announcement → play → done, or ends void (everybody passed, petit sec).

With every hand known this object is the referee: the audit replays a finished deal
through it, the simulator and tests drive it directly, and :func:`protocol.rules.view.seat_view`
cuts out what one seat may know.  A seat's replica of a live deal knows only its own hand
(:meth:`Deal.observed`): the same object then keeps the public course of the deal — turns,
bids, tricks, winners — and checks against a hand only where it has it; what it cannot check
yet, the audit checks once the seeds are revealed.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from protocol.rules import rules
from protocol.rules.cards import DECK, EXCUSE, PETIT, VALET, Card, Suit
from protocol.rules.layout import CHIEN, deal_layout
from protocol.rules.rules import Rule, RuleError
from protocol.rules.scoring import Camp, DealOutcome
from protocol.rules.variants import Contract, PoigneeSize, Variant


class Phase(enum.Enum):
    BIDDING = "bidding"
    CALL = "call"
    ECART = "ecart"
    CHELEM = "chelem"
    PLAYING = "playing"
    DONE = "done"
    VOID = "void"


# --- Actions --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bid:
    seat: int
    contract: Contract | None  #: None is a pass


@dataclass(frozen=True)
class Call:
    seat: int
    card: Card


@dataclass(frozen=True)
class Ecart:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class AnnounceChelem:
    seat: int
    announce: bool


@dataclass(frozen=True)
class ShowPoignee:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Play:
    seat: int
    card: Card


Action = Bid | Call | Ecart | AnnounceChelem | ShowPoignee | Play

#: What each phase accepts: the kinds of action it takes, each with the phase it leads to where
#: that is fixed — None where the action decides (the last bid ends the bidding, the call leads
#: to the écart or not, the last card ends the deal).  :meth:`Deal.check` looks every action up
#: here, and :meth:`Deal.push` moves on by it: a kind its phase does not list is refused
#: (:attr:`Rule.WRONG_PHASE`), and a deal over takes nothing (:attr:`Rule.DEAL_OVER`).
PHASES: Final[Mapping[Phase, Mapping[type[Action], Phase | None]]] = MappingProxyType(
    {
        Phase.BIDDING: {Bid: None},
        Phase.CALL: {Call: None},
        Phase.ECART: {Ecart: Phase.CHELEM},
        Phase.CHELEM: {AnnounceChelem: Phase.PLAYING},
        Phase.PLAYING: {ShowPoignee: Phase.PLAYING, Play: None},
        Phase.DONE: {},
        Phase.VOID: {},
    }
)

#: Each kind of action as a refusal out of phase names it.
_WHAT: Final[Mapping[type[Action], str]] = MappingProxyType(
    {
        Bid: "bidding",
        Call: "calling a card",
        Ecart: "the écart",
        AnnounceChelem: "announcing a chelem",
        ShowPoignee: "showing a poignée",
        Play: "playing a card",
    }
)


@dataclass(frozen=True)
class Trick:
    leader: int
    cards: tuple[Card, ...]  #: in the order played, the leader's first
    winner: int

    def seats(self, players: int) -> list[int]:
        return [(self.leader + i) % players for i in range(len(self.cards))]

    def played_by(self, seat: int, players: int) -> Card:
        return self.cards[(seat - self.leader) % players]


@dataclass(frozen=True)
class Poignee:
    seat: int
    cards: tuple[Card, ...]
    size: PoigneeSize


@dataclass
class Deal:
    """A deal from the moment the cards are dealt.  Build one with :meth:`from_seed` or
    :meth:`from_hands`."""

    variant: Variant
    dealer: int
    dealt: tuple[tuple[Card, ...] | None, ...]  #: each seat's hand as dealt; None if unseen
    chien: tuple[Card, ...] | None  #: None while face down for this observer
    hands: list[list[Card] | None] = field(init=False)
    phase: Phase = field(init=False, default=Phase.BIDDING)
    bids: list[Bid] = field(init=False, default_factory=list)
    taker: int | None = field(init=False, default=None)
    contract: Contract | None = field(init=False, default=None)
    called: Card | None = field(init=False, default=None)
    ecart: tuple[Card, ...] = field(init=False, default=())
    chelem_announced: bool = field(init=False, default=False)
    poignees: list[Poignee] = field(init=False, default_factory=list)
    tricks: list[Trick] = field(init=False, default_factory=list)
    current: list[Card] = field(init=False, default_factory=list)
    leader: int = field(init=False, default=0)
    void_reason: str | None = field(init=False, default=None)
    history: list[Action] = field(init=False, default_factory=list)  #: every action accepted

    def __post_init__(self) -> None:
        n = self.variant.players
        if len(self.dealt) != n or any(
            h is not None and len(h) != self.variant.hand_size for h in self.dealt
        ):
            raise ValueError(f"a {n}-player deal has {n} hands of {self.variant.hand_size} cards")
        if self.chien is not None and len(self.chien) != self.variant.chien_size:
            raise ValueError(f"the chien has {self.variant.chien_size} cards at {n} players")
        known = [c for h in self.dealt if h is not None for c in h] + list(self.chien or ())
        if len(set(known)) != len(known) or (self.fully_known and len(known) != len(DECK)):
            raise ValueError("a deal uses each of the 78 cards exactly once")
        self.hands = [list(h) if h is not None else None for h in self.dealt]
        sec = [s for s, h in enumerate(self.dealt) if h is not None and rules.has_petit_sec(h)]
        if sec:
            self.declare_void(f"petit sec (seat {sec[0]})")

    # --- Construction ---

    @classmethod
    def from_pack(cls, variant: Variant, dealer: int, pack: list[Card]) -> Deal:
        """Deal a pack (top card first) the way a dealer does, by :func:`deal_layout`."""
        layout = deal_layout(variant, dealer)
        hands: list[list[Card]] = [[] for _ in range(variant.players)]
        chien: list[Card] = []
        for card, owner in zip(pack, layout.owner):
            (chien if owner == CHIEN else hands[owner]).append(card)
        return cls(variant, dealer, tuple(tuple(h) for h in hands), tuple(chien))

    @classmethod
    def from_seed(cls, variant: Variant, dealer: int, seed: int | str | bytes) -> Deal:
        """A reproducible deal: the pack shuffled by a PRNG seeded with ``seed``.

        For tests and the full-information simulator only; real deals come from the
        mental-poker deck.

        >>> from protocol.rules.variants import Contract, variant
        >>> deal = Deal.from_seed(variant(4), 0, 1)
        >>> deal.phase, deal.to_act, len(deal.hand(1))
        (<Phase.BIDDING: 'bidding'>, 1, 18)
        >>> deal.push(Bid(1, Contract.GARDE))
        >>> deal.push(Bid(2, Contract.PETITE))
        Traceback (most recent call last):
        ...
        protocol.rules.rules.RuleError: a bid must be higher than Garde
        >>> deal.to_act, len(deal.bids)
        (2, 1)
        """
        pack = list(DECK)
        random.Random(seed).shuffle(pack)
        return cls.from_pack(variant, dealer, pack)

    @classmethod
    def observed(cls, variant: Variant, dealer: int, seat: int, hand: tuple[Card, ...]) -> Deal:
        """A seat's replica of a live deal: its own hand known, every other card face down."""
        dealt = tuple(hand if s == seat else None for s in range(variant.players))
        return cls(variant, dealer, dealt, None)

    @property
    def fully_known(self) -> bool:
        return self.chien is not None and all(h is not None for h in self.dealt)

    def hand(self, seat: int) -> list[Card]:
        """The current hand of a seat this deal can see (RuleError otherwise)."""
        hand = self.hands[seat]
        if hand is None:
            raise RuleError(f"seat {seat}'s hand is not visible here", Rule.HAND_HIDDEN, seat=seat)
        return hand

    def turn_chien(self, chien: tuple[Card, ...]) -> None:
        """The chien, once every seat has opened it (a replica learns it only then)."""
        if self.chien is not None and tuple(self.chien) != tuple(chien):
            raise RuleError("the chien is already known, with other cards", Rule.CHIEN_KNOWN)
        if len(chien) != self.variant.chien_size:
            size = self.variant.chien_size
            raise RuleError(f"the chien has {size} cards", Rule.CHIEN_SIZE, size=size)
        self.chien = tuple(chien)
        taker_hand = self.hands[self.taker] if self.taker is not None else None
        if (
            self.phase is Phase.ECART
            and taker_hand is not None
            and not set(chien) <= set(taker_hand)
        ):
            taker_hand.extend(chien)

    def declare_void(self, reason: str) -> None:
        """End the deal with no score: everybody passed, or a petit sec was shown."""
        if self.finished:
            raise RuleError("the deal is over", Rule.DEAL_OVER)
        self.phase = Phase.VOID
        self.void_reason = reason

    # --- Who acts ---

    @property
    def finished(self) -> bool:
        return self.phase in (Phase.DONE, Phase.VOID)

    @property
    def to_act(self) -> int | None:
        """The seat whose decision the deal waits for, or None when it is over."""
        n = self.variant.players
        if self.phase is Phase.BIDDING:
            return (self.dealer + 1 + len(self.bids)) % n
        if self.phase in (Phase.CALL, Phase.ECART, Phase.CHELEM):
            return self.taker
        if self.phase is Phase.PLAYING:
            return (self.leader + len(self.current)) % n
        return None

    @property
    def partner(self) -> int | None:
        """The holder of the called card, unless it is the taker or the card is in the chien.

        A replica knows it once the card is played (or if it holds the card itself).
        """
        if self.called is None:
            return None
        holder = next(
            (s for s, h in enumerate(self.dealt) if h is not None and self.called in h), None
        )
        if holder is None:
            holder = self._played_by(self.called)
        return holder if holder != self.taker else None

    def _played_by(self, card: Card) -> int | None:
        n = self.variant.players
        for trick in self.tricks:
            if card in trick.cards:
                return trick.seats(n)[trick.cards.index(card)]
        if card in self.current:
            return (self.leader + self.current.index(card)) % n
        return None

    def camp(self, seat: int) -> Camp:
        return Camp.ATTACK if seat in (self.taker, self.partner) else Camp.DEFENCE

    def legal_actions(self) -> list[Action]:
        """Every action the seat to act may take now, except showing a poignée (see
        :meth:`poignee_allowed`: the choice of trumps makes too many to list)."""
        seat = self.to_act
        if seat is None:
            return []
        if self.phase is Phase.BIDDING:
            options: list[Contract | None] = [None, *rules.higher_contracts(self._highest_bid())]
            return [Bid(seat, c) for c in options]
        if self.phase is Phase.CALL:
            return [Call(seat, c) for c in rules.callable_cards(self.hand(seat))]
        if self.phase is Phase.ECART:
            raise RuleError(
                "the écart is chosen among many combinations: see ecart_candidates()",
                Rule.ECART_NOT_LISTED,
            )
        if self.phase is Phase.CHELEM:
            return [AnnounceChelem(seat, False), AnnounceChelem(seat, True)]
        return [Play(seat, c) for c in self.legal_cards(seat)]

    def legal_cards(self, seat: int) -> list[Card]:
        hand = self.hands[seat]
        if self.phase is not Phase.PLAYING or seat != self.to_act or hand is None:
            return []
        forbidden, called = self._lead_restriction()
        return rules.legal_plays(hand, self.current, forbidden_lead_suit=forbidden, called=called)

    def ecart_candidates(self) -> tuple[list[Card], int]:
        """The cards the taker may put in the écart, and how many of them must be trumps."""
        if self.phase is not Phase.ECART or self.taker is None:
            return [], 0
        hand = self.hand(self.taker)
        size = self.variant.chien_size
        needed = rules.trumps_needed_in_ecart(hand, size)
        allowed = [c for c in hand if rules.may_discard(c) and (needed or not c.is_trump)]
        return allowed, needed

    def poignee_allowed(self, seat: int) -> bool:
        """A poignée is shown just before the player's first card, once."""
        hand = self.hands[seat]
        return (
            self.phase is Phase.PLAYING
            and seat == self.to_act
            and not self.tricks
            and all(p.seat != seat for p in self.poignees)
            and (
                hand is None
                or bool(rules.poignee_sizes_available(hand, self.variant, self.poignee_ecart(seat)))
            )
        )

    def poignee_ecart(self, seat: int) -> tuple[Card, ...]:
        """The écart whose trumps ``seat`` may show again in its poignée: the taker's (a
        replica knows only the trumps shown in it, which are all it needs); nothing for the
        others.  See :func:`rules.poignee_trumps`."""
        return self.ecart if seat == self.taker else ()

    # --- Applying actions ---

    def push(self, action: Action, *, strict: bool = True) -> None:
        """Apply ``action``; :class:`RuleError` (and no change) if the rules forbid it.

        ``strict=False`` lets a card that breaks the rules of play (a renonce) through, as
        long as the player holds it: the audit scores a deal with a renonce as it was played.
        """
        self.check(action, strict=strict)
        after = PHASES[self.phase][type(action)]
        if isinstance(action, Bid):
            self._bid(action)
        elif isinstance(action, Call):
            self.called = action.card
            self._after_call()
        elif isinstance(action, Ecart):
            self._ecart(action)
        elif isinstance(action, AnnounceChelem):
            self._announce(action)
        elif isinstance(action, ShowPoignee):
            self.poignees.append(
                Poignee(action.seat, tuple(action.cards), self._poignee_size(action))
            )
        else:
            self._play(action)
        self._go(after)
        self.history.append(action)

    def check(self, action: Action, *, strict: bool = True) -> None:
        """:class:`RuleError` if ``action`` may not be pushed now; changes nothing.  Its phase
        must take its kind (:data:`PHASES`):

        >>> from protocol.rules.variants import variant
        >>> deal = Deal.from_seed(variant(4), 0, 1)
        >>> [kind.__name__ for kind in PHASES[deal.phase]]
        ['Bid']
        >>> try:
        ...     deal.check(Play(1, deal.hand(1)[0]))
        ... except RuleError as error:
        ...     print(error)
        playing a card is not possible now: the deal is at the bidding phase
        """
        if self.finished:
            raise RuleError("the deal is over", Rule.DEAL_OVER)
        if action.seat != self.to_act:
            raise RuleError(
                f"it is not seat {action.seat}'s turn but seat {self.to_act}'s",
                Rule.NOT_YOUR_TURN,
                seat=action.seat,
                to_act=self.to_act,
            )
        if type(action) not in _WHAT:  # pragma: no cover - the Action union is closed
            raise RuleError(f"unknown action {action!r}")
        self._expect(type(action))
        if isinstance(action, Bid):
            highest = self._highest_bid()
            if action.contract is not None and action.contract not in rules.higher_contracts(
                highest
            ):
                raise RuleError(
                    f"a bid must be higher than {highest.french if highest else 'nothing'}",
                    Rule.BID_NOT_HIGHER,
                    highest=highest,
                )
        elif isinstance(action, Call):
            self._check_call(action)
        elif isinstance(action, Ecart):
            if self.chien is None:
                raise RuleError(
                    "the écart is made once the chien is turned", Rule.ECART_BEFORE_CHIEN
                )
            rules.check_ecart(self.hand(action.seat), action.cards, self.variant.chien_size)
        elif isinstance(action, ShowPoignee):
            if self.tricks or any(p.seat == action.seat for p in self.poignees):
                raise RuleError(
                    "a poignée is shown once, just before your first card", Rule.POIGNEE_LATE
                )
            self._poignee_size(action)
        elif isinstance(action, Play):
            self._check_play(action, strict)

    def _go(self, after: Phase | None) -> None:
        """On to the phase :data:`PHASES` leads to, if it names one (else the action moved it)."""
        if after is not None:
            self.phase = after

    def _expect(self, kind: type[Action]) -> None:
        """:class:`RuleError` unless this phase takes ``kind`` (:data:`PHASES`)."""
        if kind not in PHASES[self.phase]:
            expected = next(phase for phase, kinds in PHASES.items() if kind in kinds)
            raise RuleError(
                f"{_WHAT[kind]} is not possible now: the deal is at the {self.phase.value} phase",
                Rule.WRONG_PHASE,
                expected=expected,
                phase=self.phase,
            )

    def _highest_bid(self) -> Contract | None:
        return max((b.contract for b in self.bids if b.contract is not None), default=None)

    def _bid(self, bid: Bid) -> None:
        self.bids.append(bid)
        if len(self.bids) < self.variant.players:
            return
        best = self._highest_bid()
        if best is None:
            self.declare_void("everybody passed")
            return
        self.contract = best
        self.taker = next(b.seat for b in self.bids if b.contract is best)
        if self.variant.calls_a_card:
            self.phase = Phase.CALL
        else:
            self._after_call()

    def _check_call(self, call: Call) -> None:
        hand = self.hands[call.seat]
        if hand is not None:
            rules.check_call(hand, call.card)
        elif not (call.card.suit.is_colour and call.card.rank >= VALET):
            # A replica cannot see the four kings behind a lower call: the deck proves them.
            raise RuleError(
                f"{call.card.code} cannot be called: call a king, queen, cavalier or valet",
                Rule.CALL_NOT_A_FACE,
                card=call.card,
            )

    def _after_call(self) -> None:
        assert self.contract is not None and self.taker is not None
        if self.contract.chien_seen:
            hand = self.hands[self.taker]
            if hand is not None and self.chien is not None:
                hand.extend(self.chien)
            self.phase = Phase.ECART
        else:
            self.phase = Phase.CHELEM

    def _ecart(self, ecart: Ecart) -> None:
        hand = self.hand(ecart.seat)
        self.ecart = tuple(ecart.cards)
        self.hands[ecart.seat] = [c for c in hand if c not in ecart.cards]

    def hidden_ecart(self, shown_trumps: tuple[Card, ...]) -> None:
        """A replica's record of another seat's écart: it sees only the trumps shown in it."""
        self._expect(Ecart)
        after = PHASES[self.phase][Ecart]
        if self.taker is None or self.hands[self.taker] is not None:
            raise RuleError("the taker's own écart is pushed as an Ecart action", Rule.ECART_OWN)
        if any(not c.is_trump or c.is_bout for c in shown_trumps):
            raise RuleError(
                "only trumps other than bouts are shown from the écart", Rule.ECART_SHOWN_NOT_TRUMP
            )
        self.ecart = tuple(shown_trumps)
        self._go(after)

    def _announce(self, announcement: AnnounceChelem) -> None:
        assert self.taker is not None
        self.chelem_announced = announcement.announce
        # An announced chelem gives the taker the first lead, whoever deals.
        self.leader = self.taker if announcement.announce else self.variant.next_seat(self.dealer)

    def _poignee_size(self, poignee: ShowPoignee) -> PoigneeSize:
        hand = self.hands[poignee.seat]
        if hand is not None:
            return rules.check_poignee(
                hand, poignee.cards, self.variant, self.poignee_ecart(poignee.seat)
            )
        # A replica: the deck proves the cards are the player's, the audit checks the rest.
        size = self.variant.poignee_size(len(poignee.cards))
        if size is None or any(not (c.is_trump or c.is_excuse) for c in poignee.cards):
            counts = "/".join(str(t) for t in self.variant.poignee_thresholds)
            raise RuleError(
                "a poignée shows exactly a threshold count of trumps",
                Rule.POIGNEE_SIZE,
                counts=counts,
                players=self.variant.players,
            )
        return size

    def _lead_restriction(self) -> tuple[Suit | None, Card | None]:
        """At five, the first lead of the deal may not be in the called suit (but the called card).

        When the Excuse opens the deal, the card after it sets the suit: it is bound too."""
        called = rules.lead_restriction(self.called, len(self.tricks), self.current)
        return (called.suit, called) if called is not None else (None, None)

    def _check_play(self, play: Play, strict: bool) -> None:
        hand = self.hands[play.seat]
        if hand is not None:
            if strict or play.card not in hand:
                forbidden, called = self._lead_restriction()
                rules.check_play(
                    hand, self.current, play.card, forbidden_lead_suit=forbidden, called=called
                )
        elif self._played_by(play.card) is not None or self._seen_elsewhere(play.card, play.seat):
            raise RuleError(
                f"{play.card.code} cannot be in seat {play.seat}'s hand",
                Rule.CARD_ELSEWHERE,
                card=play.card,
                seat=play.seat,
            )

    def _play(self, play: Play) -> None:
        hand = self.hands[play.seat]
        if hand is not None:
            hand.remove(play.card)
        self.current.append(play.card)
        if len(self.current) == self.variant.players:
            self._close_trick()

    def _close_trick(self) -> None:
        cards = tuple(self.current)
        n = self.variant.players
        last = len(self.tricks) + 1 == self.variant.tricks
        index = rules.trick_winner(cards, excuse_wins=last and self._excuse_completes_chelem(cards))
        trick = Trick(self.leader, cards, (self.leader + index) % n)
        self.tricks.append(trick)
        self.current = []
        self.leader = trick.winner
        if len(self.tricks) == self.variant.tricks:
            self.phase = Phase.DONE

    def _excuse_completes_chelem(self, last_trick: tuple[Card, ...]) -> bool:
        """The Excuse played to the last trick takes it when its camp took every other trick."""
        if EXCUSE not in last_trick:
            return False
        seat = (self.leader + last_trick.index(EXCUSE)) % self.variant.players
        camp = self.camp(seat)
        return all(self.camp(t.winner) is camp for t in self.tricks)

    def _seen_elsewhere(self, card: Card, seat: int) -> bool:
        """A card this replica knows to be in another hand, the écart or the chien."""
        if any(h is not None and card in h for s, h in enumerate(self.hands) if s != seat):
            return True
        taken = seat == self.taker and self.contract is not None and self.contract.chien_seen
        return card in self.ecart or (card in (self.chien or ()) and not taken)

    # --- The end of the deal ---

    def piles(self) -> dict[Camp, list[Card]]:
        """The cards each camp counts at the end.

        The Excuse stays with its owner's camp (see :meth:`half_points` for the low card
        given in exchange) — except on the last trick outside a chelem, where it goes to the
        trick's winner.  The écart counts for the taker; the chien for the taker on a Garde
        Sans and for the defence on a Garde Contre.
        """
        if self.phase is not Phase.DONE:
            raise RuleError("the deal is not over", Rule.DEAL_NOT_OVER)
        piles: dict[Camp, list[Card]] = {Camp.ATTACK: [], Camp.DEFENCE: []}
        for trick in self.tricks:
            piles[self.camp(trick.winner)].extend(trick.cards)
        piles[Camp.ATTACK].extend(self.ecart)
        if not self.fully_known or self.chien is None:
            raise RuleError(
                "the piles are counted from the whole deal, after the reveal", Rule.PILES_UNKNOWN
            )
        if self.contract is Contract.GARDE_SANS:
            piles[Camp.ATTACK].extend(self.chien)
        elif self.contract is Contract.GARDE_CONTRE:
            piles[Camp.DEFENCE].extend(self.chien)
        exchange = self._excuse_exchange()
        if exchange is not None:
            owner, winner = exchange
            piles[winner].remove(EXCUSE)
            piles[owner].append(EXCUSE)
        return piles

    def half_points(self) -> dict[Camp, int]:
        """Each camp's card points, in half points, after the Excuse exchange: the camp that
        keeps the Excuse gives the trick's winner a low card, worth half a point."""
        points = {camp: sum(c.half_points for c in pile) for camp, pile in self.piles().items()}
        exchange = self._excuse_exchange()
        if exchange is not None:
            owner, winner = exchange
            points[owner] -= 1
            points[winner] += 1
        return points

    def _excuse_exchange(self) -> tuple[Camp, Camp] | None:
        """(owner's camp, winner's camp) when the Excuse went back to its owner's camp."""
        n = self.variant.players
        for number, trick in enumerate(self.tricks):
            if EXCUSE in trick.cards:
                owner = self.camp(trick.seats(n)[trick.cards.index(EXCUSE)])
                winner = self.camp(trick.winner)
                last = number == len(self.tricks) - 1
                return (owner, winner) if owner is not winner and not last else None
        return None

    def outcome(self) -> DealOutcome | None:
        """What the score of the deal depends on; None for a void deal."""
        if self.phase is Phase.VOID:
            return None
        assert self.contract is not None
        winners = {self.camp(t.winner) for t in self.tricks}
        return DealOutcome(
            players=self.variant.players,
            contract=self.contract,
            attack_half_points=self.half_points()[Camp.ATTACK],
            bouts=sum(1 for c in self.piles()[Camp.ATTACK] if c.is_bout),
            poignees=tuple((self.camp(p.seat), p.size) for p in self.poignees),
            petit_au_bout=self._petit_au_bout(),
            chelem_announced=self.chelem_announced,
            chelem=winners.pop() if len(winners) == 1 else None,
            alone=self.variant.calls_a_card and self.partner is None,
        )

    def _petit_au_bout(self) -> Camp | None:
        """The camp that takes the Petit in the last trick — « Le camp qui réalise la dernière
        levée, à condition que cette levée comprenne le Petit » — whoever played it, the
        Excuse that takes the last trick of a chelem included; and, when a chelem ends on the
        Excuse, the camp that takes it in the trick before (« le Petit sera considéré au Bout
        s'il est mené à l'avant dernier pli »)."""
        last = self.tricks[-1]
        if PETIT in last.cards:
            return self.camp(last.winner)
        before = self.tricks[-2]
        if last.played_by(last.winner, self.variant.players) is EXCUSE and PETIT in before.cards:
            return self.camp(before.winner)
        return None
