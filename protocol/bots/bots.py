"""Bots: :class:`~protocol.bots.players.Policy` implementations that play from a seat's view only.

A bot is handed a :class:`~protocol.rules.view.SeatView` — its own hand and the public record of the
deal — and the choices the rules leave it, exactly like a human at the table.  It never sees
the referee's :class:`~protocol.rules.deal.Deal`, another hand, the chien before it is turned or the
écart of another seat.  Everything a bot "knows" about the other hands it infers, as a club
player does, from the cards already played (who failed to follow, who could not over-trump),
the turned chien, the trumps shown in poignées and in the écart.

Three levels are registered in :data:`BOTS`:

* ``random`` — :class:`~protocol.bots.players.RandomPolicy`, uniform over legal choices;
* ``basic`` — :class:`BasicPolicy`, the heuristics of a decent club player: the club point
  count to bid (:mod:`protocol.bots.bidding`, taking as often as people do), a call in a short
  suit, an écart that makes voids (or, for a taker short of trumps, banks its honours: see
  :class:`PlayStyle`), the bouts kept safe, the Petit hunted by a long taker and saved by its
  holder, points fed to tricks the own camp is sure to win and never thrown to the opponents,
  the 21 and the majors kept for tricks worth them;
* ``strong`` — :class:`protocol.bots.strong.StrongPolicy`, which samples the deals its view allows
  and plays every choice out in each of them (``strong:N`` for N samples a decision).

All are deterministic for a given :class:`random.Random`: :class:`BasicPolicy` is a pure
function of the view (it takes the generator only to fit the registry), the random bot draws
from the generator alone, and the strong bot seeds each decision from it and the view.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from protocol.bots.bidding import Bidding, choose_bid, hand_points, hand_strength
from protocol.bots.players import Policy, RandomPolicy
from protocol.rules import rules
from protocol.rules.cards import (
    COLOURS,
    DECK,
    EXCUSE,
    PETIT,
    ROI,
    VALET,
    VINGT_ET_UN,
    Card,
    Suit,
)
from protocol.rules.variants import Contract
from protocol.rules.view import SeatView

__all__ = [
    "BASELINES",
    "BOTS",
    "VOID_RISK",
    "CAUTIOUS_PLAY",
    "CLUB_PLAY",
    "BasicPolicy",
    "PlayStyle",
    "TableReading",
    "chelem_is_sure",
    "choose_bid",
    "choose_call",
    "choose_ecart",
    "hand_points",
    "hand_strength",
    "make_bot",
    "read_table",
    "seats_to_speak_after",
]


# --- Bidding (protocol.bots.bidding) ------------------------------------------------------

#: A five-player hand this strong (:func:`hand_strength`) calls one of its own kings and plays
#: alone, for four shares.
ALONE_THRESHOLD_5 = 64


def _suit_cards(hand: Iterable[Card], suit: Suit) -> list[Card]:
    return [c for c in hand if c.suit is suit]


def seats_to_speak_after(view: SeatView) -> int:
    """How many seats will bid after this one: each seat speaks once, the dealer last."""
    return view.players - 1 - len(view.bids)


# --- The call (five players) ----------------------------------------------------------


def choose_call(hand: Sequence[Card], options: Sequence[Card]) -> Card:
    """The king (or queen…) to call: in a suit where the taker is short or holds the next honour.

    A short suit means the taker will ruff it, so the partner's king cannot be caught by the
    defence, and the king brings the suit the taker lacks.  Holding the queen of the called king's
    suit, the queen is protected by the partner's king.  Calling one's own king means playing
    alone against four: only with a hand that can carry the contract by itself.
    """
    strength = hand_strength(hand)

    def merit(called: Card) -> tuple[int, int]:
        suit = _suit_cards(hand, called.suit)
        if called in hand:
            # Alone for four shares: worth it only with an overwhelming hand, in its longest suit.
            return (100 + len(suit) if strength >= ALONE_THRESHOLD_5 else -100, -called.index)
        score = -2 * len(suit)
        if len(suit) <= 1:
            score += 3
        if any(c.rank == called.rank - 1 for c in suit):
            score += 4  # the next honour is guarded by the partner's card
        score += sum(c.half_points for c in suit) // 2  # honours the partner's card will protect
        return (score, -called.index)

    return max(options, key=merit)


# --- The écart ------------------------------------------------------------------------


def choose_ecart(
    hand: Sequence[Card], candidates: Sequence[Card], trumps_needed: int, size: int
) -> list[Card]:
    """Discard to make voids, bank unprotected honours, keep guarded ones; low cards otherwise.

    A void lets the taker ruff the defence's kings, so short suits (without a king: a king may not
    go to the écart) are discarded whole, the shortest first.  Then an honour that cannot be
    guarded (a queen, cavalier or valet without its king in a short suit) goes: in the écart its
    points are safe for the taker, in the hand they would fall under a defender's king.  Guarded
    honours stay; otherwise the lowest cards of the shortest suits go.  When trumps must go
    (``trumps_needed``), every other candidate goes with the lowest trumps: those are shown.
    """
    colour = [c for c in candidates if not c.is_trump]
    if trumps_needed:
        trumps = sorted((c for c in candidates if c.is_trump), key=lambda c: c.rank)
        return colour + trumps[:trumps_needed]
    chosen: list[Card] = []
    suits = sorted(COLOURS, key=lambda s: (len(_suit_cards(hand, s)), s.value))
    for suit in suits:
        cards = _suit_cards(hand, suit)
        if cards and all(c in colour for c in cards) and len(cards) <= size - len(chosen):
            chosen.extend(cards)
    rest = [c for c in colour if c not in chosen]

    def keep_priority(c: Card) -> tuple[int, int, int]:
        suit = [x for x in _suit_cards(hand, c.suit) if x not in chosen]
        honour = c.rank >= VALET
        guarded = any(x.rank == ROI for x in suit) or len(suit) >= 4
        group = 0 if honour and not guarded else 2 if honour else 1
        return (group, len(suit), c.rank)

    rest.sort(key=keep_priority)
    return chosen + rest[: size - len(chosen)]


def _banking_ecart(hand: Sequence[Card], candidates: Sequence[Card], size: int) -> list[Card]:
    """The richest colour cards the écart may take, from the shortest suit on a tie: their
    points are the taker's whatever the tricks."""
    colour = [c for c in candidates if not c.is_trump]
    colour.sort(key=lambda c: (-c.half_points, len(_suit_cards(hand, c.suit)), c.rank))
    return colour[:size]


# --- The chelem and poignées ----------------------------------------------------------


def chelem_is_sure(hand: Sequence[Card], out_of_play: Iterable[Card] = ()) -> bool:
    """An announced chelem only when the hand cannot lose a trick.

    The taker leads; it must be able to draw every outstanding trump with trumps no one can beat
    (a run from the 21 at least as long as the trumps the others hold, in the worst case all in
    one hand), and then every colour card must be a master: the top of its suit, counting cards
    already out of play (the écart) as gone.  That is rare, as an announced chelem should be:
    failing costs 200 points.
    """
    gone = set(out_of_play) | set(hand)
    trumps = {c.rank for c in hand if c.is_trump}
    outstanding = [c for c in DECK if c.is_trump and c not in gone]
    run = 0
    for rank in range(21, 0, -1):
        if rank not in trumps:
            break
        run += 1
    if run < len(outstanding):
        return False
    for c in hand:
        if c.suit.is_colour and any(
            o.suit is c.suit and o.rank > c.rank and o not in gone for o in DECK
        ):
            return False
    return True


# --- Reading the table ----------------------------------------------------------------

#: How likely a void must be before a master card is feared ruffed.  A club player cashes its
#: kings early, before the others have had the time to empty a suit.  Measured with the bots
#: (a forced Petite on hands of 38+ points at four): takers make 41% of them at this setting,
#: 35% when they fear a void likelier than 10%, 31% at 5%.
VOID_RISK = 0.3


@dataclass(frozen=True)
class TableReading:
    """What a seat can infer from its view: where cards may still be, who is void, who is with it.

    ``unseen`` holds the cards whose owner the seat cannot know: not in its hand, not played, not
    in its own écart nor among the écart trumps shown.  ``voids[s]`` are the suits (Suit.TRUMPS
    included) seat *s* has shown it lacks by not following; ``trump_ceiling[s]`` the highest trump
    *s* may still hold (it played under a trump it had to over-trump).  ``allies`` are the seats
    known to be in this seat's camp (itself included) and ``opponents`` those known to be against
    it; at five, before the called card shows, the others are neither.
    """

    seat: int
    players: int
    taker: int | None
    unseen: frozenset[Card]
    unseen_trumps: tuple[Card, ...]  #: ascending
    voids: tuple[frozenset[Suit], ...]
    trump_ceiling: tuple[int, ...]
    allies: frozenset[int]
    opponents: frozenset[int]
    taker_discarded: bool  #: the taker made an écart, so may have emptied any suit
    partner_hidden: bool  #: five players, and this seat does not know the attack yet
    cards_left: tuple[int, ...]  #: cards each seat still holds

    @property
    def attacking(self) -> bool:
        return self.taker is not None and self.taker in self.allies

    def unseen_in(self, suit: Suit) -> int:
        return sum(1 for c in self.unseen if c.suit is suit)

    def may_hold_trump_above(self, seat: int, rank: int) -> bool:
        """Whether ``seat`` may still hold a trump higher than ``rank``."""
        if Suit.TRUMPS in self.voids[seat]:
            return False
        ceiling = self.trump_ceiling[seat]
        return any(rank < t.rank <= ceiling for t in self.unseen_trumps)

    def may_be_void(self, seat: int, suit: Suit) -> bool:
        """Whether ``seat`` may lack ``suit``, for the question "will my master card be ruffed?".

        Yes when it has shown it, and for a taker who made an écart (voids are what an écart is
        for).  Otherwise the chance that its cards hold none of the suit's cards still unseen —
        about ``(1 − suit/unseen) ** cards_held`` — must pass :data:`VOID_RISK`.
        """
        if suit in self.voids[seat]:
            return True
        if seat == self.taker and self.taker_discarded:
            return True
        share = self.unseen_in(suit) / max(1, len(self.unseen))
        return (1 - share) ** self.cards_left[seat] > VOID_RISK

    def may_beat(self, seat: int, best: Card, led: Suit) -> bool:
        """Whether ``seat``, still to play, may take a trick that ``best`` is winning."""
        if best.is_trump:
            return self.may_hold_trump_above(seat, best.rank)
        if led not in self.voids[seat] and any(
            c.suit is led and c.rank > best.rank for c in self.unseen
        ):
            return True
        return self.may_be_void(seat, led) and self.may_hold_trump_above(seat, 0)


def read_table(view: SeatView) -> TableReading:
    """Everything the bot deduces from its view, rebuilt for each decision (it is cheap)."""
    n = view.players
    played = view.played
    known = set(view.hand) | played | set(view.ecart)
    unseen = frozenset(c for c in DECK if c not in known)
    voids: list[set[Suit]] = [set() for _ in range(n)]
    ceiling = [21] * n
    for leader, cards in [(t.leader, t.cards) for t in view.tricks] + [(view.leader, view.current)]:
        _infer_from_trick(leader, cards, n, voids, ceiling)
    allies, opponents = _camps(view)
    return TableReading(
        seat=view.seat,
        players=n,
        taker=view.taker,
        unseen=unseen,
        unseen_trumps=tuple(sorted((c for c in unseen if c.is_trump), key=lambda c: c.rank)),
        voids=tuple(frozenset(v) for v in voids),
        trump_ceiling=tuple(ceiling),
        allies=allies,
        opponents=opponents,
        taker_discarded=view.contract is not None and view.contract.chien_seen,
        partner_hidden=view.taker is not None and _known_attack(view) is None,
        cards_left=tuple(_cards_left(view, s) for s in range(n)),
    )


def _cards_left(view: SeatView, seat: int) -> int:
    played = len(view.tricks) + (1 if seat in _seats_played_current(view) else 0)
    return view.variant.hand_size - played


def _seats_played_current(view: SeatView) -> list[int]:
    return [(view.leader + i) % view.players for i in range(len(view.current))]


def _infer_from_trick(
    leader: int, cards: Sequence[Card], n: int, voids: list[set[Suit]], ceiling: list[int]
) -> None:
    """Not following proves a void; playing under a trump proves having no higher one."""
    led: Suit | None = None
    best_trump = 0
    for i, c in enumerate(cards):
        seat = (leader + i) % n
        if c.is_excuse:
            continue  # always legal: it tells nothing
        if led is None:
            led = c.suit
        elif c.suit is not led:
            voids[seat].add(led)
            if not c.is_trump:
                voids[seat].add(Suit.TRUMPS)
        if c.is_trump:
            if c.rank < best_trump:
                ceiling[seat] = min(ceiling[seat], best_trump - 1)
            best_trump = max(best_trump, c.rank)


def _known_attack(view: SeatView) -> frozenset[int] | None:
    """The attack as this seat knows it; None at five while the partner is hidden from it."""
    taker = view.taker
    if taker is None:
        return None
    if not view.variant.calls_a_card:
        return frozenset({taker})
    if view.partner is not None:
        return frozenset({taker, view.partner})
    called = view.called
    if called is None:
        return None
    # Played without a partner showing: the taker played it.  In the turned chien, or in the
    # taker's own hand or écart: the taker is alone.
    if called in view.played or called in view.chien:
        return frozenset({taker})
    if view.seat == taker and (called in view.hand or called in view.ecart):
        return frozenset({taker})
    return None


def _camps(view: SeatView) -> tuple[frozenset[int], frozenset[int]]:
    me = view.seat
    everyone = frozenset(range(view.players))
    attack = _known_attack(view)
    if attack is None:
        if view.taker is None or view.taker == me:
            return frozenset({me}), frozenset()
        return frozenset({me}), frozenset({view.taker})
    if me in attack:
        return attack, everyone - attack
    return everyone - attack, attack


# --- Tricks ---------------------------------------------------------------------------


def _winner_index(trick: Sequence[Card]) -> int | None:
    if all(c.is_excuse for c in trick):
        return None
    return rules.trick_winner(trick)


def _later_seats(view: SeatView) -> list[int]:
    """Seats that will play to the current trick after this one."""
    n = view.players
    first = view.leader + len(view.current) + 1
    return [(first + i) % n for i in range(n - len(view.current) - 1)]


def _camp_keeps(reading: TableReading, view: SeatView, card: Card) -> bool:
    """Whether, after this seat plays ``card``, its camp is sure to take the trick.

    The winner must be an ally, and nobody still to play who is not known to be an ally may be
    able to beat the winning card — as far as the cards seen allow to tell.
    """
    trick = (*view.current, card)
    index = _winner_index(trick)
    if index is None:
        return False
    winner = (view.leader + index) % view.players
    if winner not in reading.allies:
        return False
    best = trick[index]
    led = rules.led_suit(trick)
    assert led is not None
    return all(
        s in reading.allies or not reading.may_beat(s, best, led) for s in _later_seats(view)
    )


def _trick_points(view: SeatView) -> int:
    """Half points on the table now (the Excuse stays with its owner: it does not count)."""
    return sum(c.half_points for c in view.current if not c.is_excuse)


def _lowest(cards: Iterable[Card], hand: Sequence[Card]) -> Card:
    """The cheapest card to give away: fewest points, then from the shortest suit (towards a
    void), then the lowest rank."""
    return min(
        cards, key=lambda c: (c.half_points, len(_suit_cards(hand, c.suit)), c.rank, c.index)
    )


def _richest(cards: Iterable[Card]) -> Card:
    """The card worth most to a trick the own camp takes (lowest rank on a tie: keep the tall)."""
    return max(cards, key=lambda c: (c.half_points, -c.rank, -c.index))


# --- The policy -----------------------------------------------------------------------


@dataclass(frozen=True)
class PlayStyle:
    """The refinements of the card play a basic bot uses, each a named switch.

    Taking like people means playing weak Petites, and these make more of them.
    :data:`CLUB_PLAY` is the play of ``basic`` (and of ``strong``'s preferred card and écart);
    :data:`CAUTIOUS_PLAY`, every switch off, the play of before issue 37, kept by the baselines
    ``basic-cautious`` and ``strong-cautious``.
    """

    bank_when_short: int = 0
    """With fewer trumps than this after the chien, the écart banks the richest cards it may
    (queens, cavaliers) instead of making voids the hand has too few trumps to ruff with: the
    defence leads the voids and shortens the taker's trumps.  0 is off."""

    spare_high_trumps: int = 0
    """Ruffing or over-trumping a trick worth fewer half points than this (the play of before: 5,
    for the 21 alone), neither the 21 nor a major (16 to 20) that would keep it is spent: the
    lowest trump goes.  A high trump spent on a few low cards is missing later to draw the
    defence's trumps, catch a king or save the Petit; the low trump risks only the few points on
    the trick.  0 is off."""


#: The play of the bots before issue 37: every refinement off.
CAUTIOUS_PLAY = PlayStyle()
#: The play of ``basic`` and ``strong`` now.
CLUB_PLAY = PlayStyle(bank_when_short=6, spare_high_trumps=12)


class BasicPolicy:
    """A decent club player, deciding from its :class:`~protocol.rules.view.SeatView` alone.

    Every method answers from the view and the options given, and only ever returns one of those
    options.  It is a pure function of its arguments: ``rng`` is accepted for the registry.
    ``bidding`` chooses how it bids (:class:`~protocol.bots.bidding.Bidding`: like club players, or
    the cautious bidding of before, kept as a baseline), ``style`` how it plays its cards.
    """

    def __init__(
        self,
        rng: random.Random | None = None,
        bidding: Bidding = Bidding.CLUB,
        style: PlayStyle = CLUB_PLAY,
    ) -> None:
        self.rng = rng
        self.bidding = bidding
        self.style = style

    # -- before the play --

    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None:
        return choose_bid(
            view.hand, view.players, options, seats_to_speak_after(view), self.bidding
        )

    def call(self, view: SeatView, options: list[Card]) -> Card:
        return choose_call(view.hand, options)

    def ecart(self, view: SeatView, candidates: list[Card], trumps_needed: int) -> list[Card]:
        size = view.variant.chien_size
        trumps = sum(1 for c in view.hand if c.is_trump)
        if not trumps_needed and trumps < self.style.bank_when_short:
            return _banking_ecart(view.hand, candidates, size)
        return choose_ecart(view.hand, candidates, trumps_needed, size)

    def announce_chelem(self, view: SeatView) -> bool:
        return chelem_is_sure(view.hand, view.ecart)

    def poignee(self, view: SeatView) -> list[Card] | None:
        """Show the largest poignée when this camp is likely to win the deal.

        The bonus goes to the deal's winner whoever shows it, so a poignée is shown by the taker
        (and a partner who knows itself), whose side is expected to win; a defender shows only
        a double or more: that many trumps in defence means the taker is short of them.
        """
        sizes = rules.poignee_sizes_available(view.hand, view.variant, view.poignee_ecart)
        if not sizes:
            return None
        attacking = view.taker == view.seat or view.partner == view.seat
        if not attacking and len(sizes) < 2:
            return None
        return rules.default_poignee(view.hand, view.variant, max(sizes), view.poignee_ecart)

    # -- the play --

    def play(self, view: SeatView, legal: list[Card]) -> Card:
        if len(legal) == 1:
            return legal[0]
        reading = read_table(view)
        if _winner_index(view.current) is None:
            return self._lead(view, reading, legal)
        return self._follow(view, reading, legal)

    def _chelem_on(self, view: SeatView, reading: TableReading) -> bool:
        """The own camp announced a chelem and has taken every trick so far: the Excuse must then
        be kept for the last trick, where it wins."""
        return (
            view.chelem_announced
            and reading.attacking
            and all(t.winner in reading.allies for t in view.tricks)
        )

    def _petit_master(self, reading: TableReading) -> bool:
        """No other trump left anywhere: the Petit will win whenever it is played."""
        return not reading.unseen_trumps

    def _keep_for_last(self, view: SeatView, reading: TableReading, card: Card) -> bool:
        """A card to hold back: the Petit once it is master (it goes to the last trick, "au bout",
        for 10 points times the contract), the Excuse in a chelem."""
        if len(view.hand) <= 1:
            return False
        if card is PETIT:
            return self._petit_master(reading)
        return card is EXCUSE and self._chelem_on(view, reading)

    # -- following --

    def _follow(self, view: SeatView, reading: TableReading, legal: list[Card]) -> Card:
        hand = view.hand
        if PETIT in legal and self._save_petit(view, reading):
            return PETIT
        cards = [c for c in legal if c is not EXCUSE]
        safe = [c for c in cards if c is not PETIT] or cards
        keeping = [c for c in safe if _camp_keeps(reading, view, c)]
        if EXCUSE in legal and self._excuse_now(view, reading, safe, bool(keeping)):
            return EXCUSE
        if not safe:
            return legal[0]
        if keeping:
            return self._give_to_own_trick(view, keeping, safe)
        return _lowest(safe, hand)

    def _save_petit(self, view: SeatView, reading: TableReading) -> bool:
        """Play the Petit when the own camp is sure to take this trick.

        That is the only way to save it: it wins itself when nobody behind can still over-trump
        (the others are out of trumps, or the ones behind are partners), or it goes under a
        partner's trump that nobody can beat.  Once it is the last trump alive, it waits for
        the last trick instead.  It goes before the Excuse: with both as the last two cards, the
        sure Petit is taken now and the Excuse risked on the last trick (where it stays in the
        camp if the camp takes that trick).
        """
        if self._keep_for_last(view, reading, PETIT):
            return False
        return _camp_keeps(reading, view, PETIT)

    def _excuse_now(
        self, view: SeatView, reading: TableReading, others: list[Card], winnable: bool
    ) -> bool:
        """Play the Excuse to a trick the own camp loses, before the end.

        It stays with its owner whatever the trick, so it is worth most where any other card
        would give something away: when the cheapest alternative is an honour, the Petit, or a
        high trump.  It must be gone before the last trick, where it would change camp — except
        in a chelem, where it takes the last trick.
        """
        if self._chelem_on(view, reading):
            return len(view.hand) <= 1
        if len(view.hand) <= 2:
            return True
        if winnable:
            return False
        if not others:
            return True
        cheapest = _lowest(others, view.hand)
        honour_or_bout = cheapest.half_points >= 5 or cheapest is PETIT
        high_trump = cheapest.is_trump and cheapest.rank >= 16
        return honour_or_bout or high_trump or len(view.hand) <= 4

    def _give_to_own_trick(self, view: SeatView, keeping: list[Card], choices: list[Card]) -> Card:
        """The own camp takes this trick: load it with points, spend as little trump as possible.

        Following suit or discarding, the richest card goes ("charger" a partner's trick, or cash
        an honour that wins).  Trumping, the lowest trump that keeps the trick: the 21 only on a
        trick worth it, since it can always wait for one — it can never be caught — and with
        :attr:`PlayStyle.spare_high_trumps` a major (16 to 20) neither: the lowest trump goes.
        """
        if not all(c.is_trump for c in keeping):
            return _richest(c for c in keeping if not c.is_trump)
        lowest = min(keeping, key=lambda c: c.rank)
        if PETIT in view.current or len(view.hand) <= 2:
            return lowest
        points = _trick_points(view)
        if lowest is VINGT_ET_UN and points < max(5, self.style.spare_high_trumps):
            spared = 21  # it can never be caught: it waits for a trick worth it
        elif 16 <= lowest.rank <= 20 and points < self.style.spare_high_trumps:
            spared = 16
        else:
            return lowest
        cheaper = [c for c in choices if c.is_trump and c.rank < spared and c is not PETIT]
        return min(cheaper, key=lambda c: c.rank) if cheaper else lowest

    # -- leading --

    def _lead(self, view: SeatView, reading: TableReading, legal: list[Card]) -> Card:
        hand = view.hand
        if EXCUSE in legal and len(hand) <= 2 and not self._chelem_on(view, reading):
            return EXCUSE
        cards = [c for c in legal if c is not EXCUSE and not self._keep_for_last(view, reading, c)]
        if PETIT in cards and not _camp_keeps(reading, view, PETIT) and len(cards) > 1:
            cards.remove(PETIT)  # led, the Petit is caught by the first higher trump
        if PETIT in cards and _camp_keeps(reading, view, PETIT):
            return PETIT  # nobody against can over-trump it any more: bring it home now
        if not cards:
            return next((c for c in legal if c is not EXCUSE), legal[0])
        if reading.attacking:
            return self._attack_lead(view, reading, cards)
        return self._defence_lead(view, reading, cards)

    def _opponents_out_of_trumps(self, reading: TableReading) -> bool:
        others = [s for s in range(reading.players) if s not in reading.allies]
        return all(not reading.may_hold_trump_above(s, 0) for s in others)

    def _attack_lead(self, view: SeatView, reading: TableReading, cards: list[Card]) -> Card:
        """The attack draws trumps when long, hunting the Petit, then cashes what surely wins.

        Drawing trumps takes away the defence's means to ruff the attack's kings and, round after
        round, leaves the Petit alone in its holder's hand, where it falls.  A card the defence
        cannot beat (a master whose suit everyone still follows, or any master once the defence
        is out of trumps) is cashed.  At five, while the partner hides, the taker leads the
        called suit low for the partner's king to take it.  Otherwise a low card of its longest
        suit: the one that will make tricks once its high cards have fallen (measured with the
        bots, better than opening short suits: 37% of forced Petites made instead of 34%).
        """
        trumps = [c for c in cards if c.is_trump]
        if self._should_draw_trumps(view, reading, trumps):
            return self._trump_to_draw(reading, trumps)
        sure = [c for c in cards if c.suit.is_colour and _camp_keeps(reading, view, c)]
        if sure:
            return _richest(sure)
        called = view.called
        if called is not None and reading.partner_hidden and view.seat == view.taker:
            in_called = [c for c in cards if c.suit is called.suit]
            if in_called:
                return min(in_called, key=lambda c: c.rank)
        colours = [c for c in cards if c.suit.is_colour]
        if colours:
            return _low_card_of_longest_suit(view.hand, colours)
        return self._trump_to_draw(reading, trumps) if trumps else cards[0]

    def _should_draw_trumps(
        self, view: SeatView, reading: TableReading, trumps: list[Card]
    ) -> bool:
        """Lead trumps as the attack while it keeps control of them.

        A master trump costs nothing: it wins the round and takes a trump from every defender
        who still has one, so the taker leads those while the Petit is out in the defence (each
        round leaves it more alone in its holder's hand).  A trump that can be beaten is led only
        by a taker clearly longer than all the trumps out, and only while every defender must
        still answer with a trump: a defender who is out of them would load the trick with its
        kings for the partner who takes it.
        """
        out = reading.unseen_trumps
        if not out or not trumps or self._opponents_out_of_trumps(reading):
            return False
        top_out = out[-1].rank
        if PETIT in reading.unseen and any(
            t.rank > top_out and t is not VINGT_ET_UN for t in trumps
        ):
            return True
        if view.seat != view.taker:
            return False
        everyone_answers = all(Suit.TRUMPS not in reading.voids[s] for s in reading.opponents)
        return everyone_answers and len(trumps) > len(out)

    def _trump_to_draw(self, reading: TableReading, trumps: list[Card]) -> Card:
        """A master trump (the 21 last) wins the round and keeps the lead; without one, the lowest
        trump, so that the defence must over-trump with its good ones."""
        top_out = reading.unseen_trumps[-1].rank if reading.unseen_trumps else 0
        masters = [t for t in trumps if t.rank > top_out and t is not VINGT_ET_UN]
        if masters:
            return min(masters, key=lambda c: c.rank)
        plain = [t for t in trumps if t is not VINGT_ET_UN and t is not PETIT]
        if plain:
            return min(plain, key=lambda c: c.rank)
        return min(trumps, key=lambda c: c.rank)

    def _defence_lead(self, view: SeatView, reading: TableReading, cards: list[Card]) -> Card:
        """The defence plays into the taker's weakness and never leads trumps.

        At five, while the partner hides, the called suit: its king falls and shows the partner.
        A suit the taker lacks makes it ruff, shortening its trumps, which protects a defender's
        Petit.  A card nobody against can beat (a master when the taker cannot ruff) is cashed.
        Otherwise a low card of the longest suit, keeping honours for when the taker's high cards
        have gone.
        """
        taker = view.taker
        colours = [c for c in cards if c.suit.is_colour]
        if not colours:
            plain = [c for c in cards if c is not VINGT_ET_UN and c is not PETIT] or cards
            return min(plain, key=lambda c: c.rank)
        called = view.called
        if called is not None and reading.partner_hidden:
            in_called = [c for c in colours if c.suit is called.suit]
            if in_called:
                return min(in_called, key=lambda c: c.rank)
        sure = [c for c in colours if _camp_keeps(reading, view, c)]
        if sure:
            return _richest(sure)
        if taker is not None:
            ruffs = [c for c in colours if c.suit in reading.voids[taker]]
            if ruffs and reading.may_hold_trump_above(taker, 0):
                return _lowest(ruffs, view.hand)
        return _low_card_of_longest_suit(view.hand, colours)


def _low_card_of_longest_suit(hand: Sequence[Card], colours: list[Card]) -> Card:
    """The lowest card of the suit this seat holds most of (on a tie, the one with fewer honours
    to expose)."""

    def length(suit: Suit) -> tuple[int, int, str]:
        cards = _suit_cards(hand, suit)
        return (len(cards), -sum(1 for c in cards if c.rank >= VALET), suit.value)

    longest = max({c.suit for c in colours}, key=length)
    return min(_suit_cards(colours, longest), key=lambda c: c.rank)


# --- The registry ---------------------------------------------------------------------


def _strong(
    rng: random.Random, worlds: int | None = None, bidding: Bidding = Bidding.CLUB
) -> Policy:
    from protocol.bots.strong import DEFAULT_WORLDS, StrongPolicy  # it builds on this module

    style = CAUTIOUS_PLAY if bidding is Bidding.CAUTIOUS else CLUB_PLAY
    return StrongPolicy(rng, worlds or DEFAULT_WORLDS, bidding, style)


BOTS: dict[str, Callable[[random.Random], Policy]] = {
    "random": lambda rng: RandomPolicy(rng),
    "basic": lambda rng: BasicPolicy(rng),
    "strong": _strong,
}

#: The bots as they were before issue 37 (:attr:`~protocol.bots.bidding.Bidding.CAUTIOUS` and
#: :data:`CAUTIOUS_PLAY`): the baselines ``tarot match`` measures the new bots against.  Not
#: offered at a table: a level for measuring, not for playing.
BASELINES: dict[str, Callable[[random.Random], Policy]] = {
    "basic-cautious": lambda rng: BasicPolicy(rng, Bidding.CAUTIOUS, CAUTIOUS_PLAY),
    "strong-cautious": lambda rng: _strong(rng, None, Bidding.CAUTIOUS),
}


def make_bot(level: str, rng: random.Random) -> Policy:
    """A bot of the given level ("random", "basic", "strong", or a baseline of
    :data:`BASELINES`); ValueError naming the levels otherwise.  ``strong:N`` is the strong bot
    thinking over N sampled deals a decision (more is stronger and slower; see
    :mod:`protocol.bots.strong`), ``strong-cautious:N`` the same with the cautious bidding."""
    name, colon, worlds = level.partition(":")
    if name in ("strong", "strong-cautious") and colon:
        if not worlds.isdigit() or int(worlds) < 1:
            raise ValueError(
                f"bot level {level!r}: {name}:N thinks over N sampled deals, N a whole number "
                "from 1"
            )
        bidding = Bidding.CAUTIOUS if name == "strong-cautious" else Bidding.CLUB
        return _strong(rng, int(worlds), bidding)
    factory = BOTS.get(level) or BASELINES.get(level)
    if factory is None:
        raise ValueError(
            f"unknown bot level {level!r}: use one of {', '.join(BOTS)} (or strong:N; "
            f"{', '.join(BASELINES)} bid as before issue 37, for tarot match)"
        )
    return factory(rng)
