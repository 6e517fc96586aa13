"""The ``strong`` bot: perfect-information Monte Carlo over deals consistent with its view.

For each decision the bot deals the cards it cannot see, many times, consistently with all its
view shows (:mod:`protocol.bots.sampler`); in each of these *worlds* it tries every choice it has
and plays the deal out to its end on the fast engine (:mod:`protocol.bots.fastgame`), every seat
playing the fast rules of :mod:`protocol.bots.rollout`, and the last tricks searched exactly
(alpha-beta). Each choice is scored by the FFT score of the deal for its own seat, averaged over the
same worlds; the best one is played.  At five, before the called card shows, each world deals it to
some seat, so the camps are weighed by how likely the view makes each of them.

The same goes for the decisions before the play: a bid is the contract whose expected score
over the worlds beats passing (zero), the call the card whose partner scores best, the écart
the best of a few candidates (the basic bot's, and one making each void it can), the chelem
announced when the worlds expect more from announcing, a poignée shown when its camp is likely
to win (the bonus goes to the deal's winner).

Thinking is measured in worlds (``worlds``, the knob behind the levels ``strong`` and
``strong:N``): the decision costs about ``worlds × choices`` rollouts.  Nothing here reads a
clock, and everything is deterministic: each decision draws its worlds from a generator seeded
by the bot's seed and a digest of the view, so the same view gives the same choice.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from protocol.bots.bidding import Bidding, choose_bid
from protocol.bots.bots import (
    CLUB_PLAY,
    BasicPolicy,
    PlayStyle,
    _camp_keeps,
    choose_call,
    choose_ecart,
    read_table,
    seats_to_speak_after,
)
from protocol.bots.fastgame import BOUT_MASK, FastDeal, bits, half_points, mask
from protocol.bots.rollout import choose, play_out
from protocol.bots.sampler import Sample, constraints, sample
from protocol.bots.worlds import counted_aside, opening, position
from protocol.rules import rules
from protocol.rules.cards import COLOURS, DECK, PETIT, Card
from protocol.rules.variants import Contract
from protocol.rules.view import SeatView

T = TypeVar("T")

__all__ = ["DEFAULT_WORLDS", "EXACT_TRICKS", "PROBE_BONUS", "StrongPolicy", "solve"]

#: Worlds sampled for a decision at the default level: with these a decision took 10 ms at the
#: median and under 0.1 s at the 95th percentile in the matches of docs/bots.md (a card early
#: in a deal costs most), far inside a player's patience; ``strong:N`` buys more.
DEFAULT_WORLDS = 12

#: The last tricks are searched exactly, from this many tricks left, by table size.
EXACT_TRICKS = {3: 2, 4: 2, 5: 2}

#: What leading the called suit is worth, in points a world, while the partner hides.  Every
#: world of the search knows the camps, so none sees what finding the partner brings (the
#: "strategy fusion" of perfect-information Monte Carlo); club players lead the called suit
#: for it (the basic bot always does), and so does this one unless the worlds find another lead
#: better by more than this.
PROBE_BONUS = 20

_INFINITY = 10**9


def solve(g: FastDeal, seat: int, alpha: int = -_INFINITY, beta: int = _INFINITY) -> int:
    """The score for ``seat`` of the deal played out perfectly by both camps (alpha-beta)."""
    if not g.tricks_left:
        return g.score(seat)
    ours = g.in_attack(g.to_act) == g.in_attack(seat)
    best = -_INFINITY if ours else _INFINITY
    for c in bits(g.legal()):
        h = g.copy()
        h.play(c)
        value = solve(h, seat, alpha, beta)
        if ours:
            best = max(best, value)
            alpha = max(alpha, value)
        else:
            best = min(best, value)
            beta = min(beta, value)
        if alpha >= beta:
            break
    return best


def _finish(g: FastDeal, seat: int) -> int:
    """The seat's score of ``g`` played to its end: rollout, then exact search at the end."""
    exact = EXACT_TRICKS[g.n]
    while g.tricks_left > exact:
        g.play(choose(g))
    return solve(g, seat)


def _rescored(
    g: FastDeal, seat: int, multiplier: int, extra_half: int = 0, extra_bouts: int = 0
) -> int:
    """The seat's score of the finished ``g`` under another contract (same play)."""
    h = g.copy()
    h.multiplier = multiplier
    h.att_half += extra_half
    h.att_bouts += extra_bouts
    return h.score(seat)


class StrongPolicy:
    """Samples ``worlds`` deals of the unseen cards for each decision and plays every choice out."""

    def __init__(
        self,
        rng: random.Random,
        worlds: int = DEFAULT_WORLDS,
        bidding: Bidding = Bidding.CLUB,
        style: PlayStyle = CLUB_PLAY,
    ) -> None:
        if worlds < 1:
            raise ValueError("the strong bot needs at least one world to think")
        self.seed = rng.getrandbits(64)
        self.worlds = worlds
        self.bidding = bidding
        self._basic = BasicPolicy(style=style)

    # -- the worlds --

    def _rng(self, view: SeatView, what: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}/{what}/{_view_key(view)}".encode()).digest()
        return random.Random(digest)

    def _samples(self, view: SeatView, what: str, count: int | None = None) -> list[Sample]:
        rng = self._rng(view, what)
        cons = constraints(view)
        own = [c.index for c in view.hand]
        return [sample(cons, own, rng) for _ in range(count or self.worlds)]

    def _best(
        self,
        view: SeatView,
        what: str,
        options: Sequence[object],
        prepare: Callable[[Sample], T],
        value: Callable[[T, int], int],
    ) -> int:
        """The index of the option with the best total of ``value(prepare(world), option index)``
        over the same worlds (the first option on a tie)."""
        totals = [0] * len(options)
        for world in self._samples(view, what):
            prepared = prepare(world)
            for i in range(len(options)):
                totals[i] += value(prepared, i)
        return max(range(len(options)), key=lambda i: (totals[i], -i))

    # -- the play --

    def play(self, view: SeatView, legal: list[Card]) -> Card:
        if len(legal) == 1:
            return legal[0]
        preferred = self._basic.play(view, legal)
        if preferred is PETIT or _sure_trick(view, legal):
            # The basic bot plays the Petit only where its camp surely takes it, and loads a
            # trick its camp surely takes with its richest card, as the view tells.  Every world
            # of the search sees the hands, so it always finds a later trick where the Petit or
            # the honour is safe, which no player can count on: the sure trick now is taken.
            return preferred
        options = [
            preferred,
            *(c for c in legal if c is not preferred),
        ]  # on a tie, the basic choice
        seat = view.seat
        probes = _probes(view, legal)

        def value(start: FastDeal, i: int) -> int:
            h = start.copy()
            h.play(options[i].index)
            return _finish(h, seat) + (PROBE_BONUS if options[i] in probes else 0)

        return options[
            self._best(view, "play", options, lambda world: position(view, world), value)
        ]

    # -- before the play --

    def bid(self, view: SeatView, options: list[Contract]) -> Contract | None:
        """The contract with the best expected score over the worlds, if it beats passing; and
        otherwise, with the club bidding, the one the club count asks for, if any.

        The worlds see every hand from the first card, and their rollouts play the basic rules:
        they find that a hand club players take at a Petite loses a little, and passed most
        deals at four players.  A club player takes them (a passed deal is a deal nobody plays),
        so the count's contract stands when the worlds find nothing better than passing.
        """
        totals = self._bid_totals(view, options)
        best = max(options, key=lambda c: (totals[c], -c.value), default=None)
        if best is not None and totals[best] > 0:
            return best
        if self.bidding is Bidding.CAUTIOUS:
            return None
        return choose_bid(view.hand, view.players, options, seats_to_speak_after(view))

    def _bid_totals(self, view: SeatView, options: list[Contract]) -> dict[Contract, int]:
        """Each contract's total score for this seat over the worlds, taken by it."""
        totals = {c: 0 for c in options}
        seat, v = view.seat, view.variant
        hand = [c.index for c in view.hand]
        call = choose_call(view.hand, rules.callable_cards(view.hand)) if v.calls_a_card else None
        leader = v.next_seat(view.dealer)
        for world in self._samples(view, "bid", 2 * self.worlds):
            hands = [world.hand_mask(s) for s in range(view.players)]
            chien = world.hand_mask(view.players)
            partner = _holder(world, call)
            if Contract.PETITE in totals or Contract.GARDE in totals:
                taken = [*view.hand, *(_card(i) for i in bits(chien))]
                candidates = [c for c in taken if rules.may_discard(c)]
                needed = rules.trumps_needed_in_ecart(taken, v.chien_size)
                ecart = mask(c.index for c in choose_ecart(taken, candidates, needed, v.chien_size))
                hands[seat] = (mask(hand) | chien) & ~ecart
                g = play_out(
                    opening(
                        v,
                        hands,
                        taker=seat,
                        partner=partner,
                        contract=Contract.PETITE,
                        leader=leader,
                        base_half=half_points(ecart),
                        called=call,
                    )
                )
                for contract in (Contract.PETITE, Contract.GARDE):
                    if contract in totals:
                        totals[contract] += _rescored(g, seat, contract.multiplier)
            if Contract.GARDE_SANS in totals or Contract.GARDE_CONTRE in totals:
                hands[seat] = mask(hand)
                g = play_out(
                    opening(
                        v,
                        hands,
                        taker=seat,
                        partner=partner,
                        contract=Contract.GARDE_CONTRE,
                        leader=leader,
                        called=call,
                    )
                )
                chien_bouts = bin(chien & BOUT_MASK).count("1")
                if Contract.GARDE_SANS in totals:
                    totals[Contract.GARDE_SANS] += _rescored(
                        g, seat, 4, half_points(chien), chien_bouts
                    )
                if Contract.GARDE_CONTRE in totals:
                    totals[Contract.GARDE_CONTRE] += _rescored(g, seat, 6)
        return totals

    def call(self, view: SeatView, options: list[Card]) -> Card:
        """The card whose holder, as a partner (or none: alone), makes the best deals."""
        assert view.contract is not None
        seat, v = view.seat, view.variant
        contract = view.contract
        leader = v.next_seat(view.dealer)

        def value(world: Sample, i: int) -> int:
            hands = [world.hand_mask(s) for s in range(view.players)]
            chien = world.hand_mask(view.players)
            base, bouts = 0, 0
            if contract.chien_seen:
                taken = [*view.hand, *(_card(c) for c in bits(chien))]
                candidates = [c for c in taken if rules.may_discard(c)]
                needed = rules.trumps_needed_in_ecart(taken, v.chien_size)
                ecart = mask(c.index for c in choose_ecart(taken, candidates, needed, v.chien_size))
                hands[seat] = (hands[seat] | chien) & ~ecart
                base = half_points(ecart)
            elif contract is Contract.GARDE_SANS:
                base, bouts = half_points(chien), bin(chien & BOUT_MASK).count("1")
            g = opening(
                v,
                hands,
                taker=seat,
                partner=_holder(world, options[i]),
                contract=contract,
                leader=leader,
                base_half=base,
                base_bouts=bouts,
                called=options[i],
            )
            return play_out(g).score(seat)

        preferred = choose_call(view.hand, options)
        if preferred in view.hand:
            return preferred  # alone, with a hand the basic count finds overwhelming
        # Calling its own card plays alone for four shares: the worlds, where everybody sees
        # the hands from the first card, overrate it (a fifth of the calls in a trial of 300
        # deals, against almost none by the count); the search chooses among the others.
        ordered = [preferred, *(c for c in options if c is not preferred and c not in view.hand)]
        return ordered[self._best(view, "call", ordered, _same, value)]

    def ecart(self, view: SeatView, candidates: list[Card], trumps_needed: int) -> list[Card]:
        """The best of a few écarts: the basic bot's (of this play style), and one emptying each
        suit it can."""
        size = view.variant.chien_size
        basic = self._basic.ecart(view, candidates, trumps_needed)
        if trumps_needed:
            return basic
        choices = [basic, *_void_ecarts(view.hand, candidates, size)]
        unique: list[list[Card]] = []
        for e in choices:
            if not any(set(e) == set(u) for u in unique):
                unique.append(e)
        if len(unique) == 1:
            return basic
        return unique[self._best(view, "ecart", unique, _same, self._ecart_value(view, unique))]

    def _ecart_value(
        self, view: SeatView, ecarts: list[list[Card]]
    ) -> Callable[[Sample, int], int]:
        assert view.contract is not None and view.taker is not None
        seat, v, contract = view.seat, view.variant, view.contract

        def value(world: Sample, i: int) -> int:
            hands = [world.hand_mask(s) for s in range(view.players)]
            ecart = mask(c.index for c in ecarts[i])
            hands[seat] &= ~ecart
            g = opening(
                v,
                hands,
                taker=seat,
                partner=_holder(world, view.called),
                contract=contract,
                leader=v.next_seat(view.dealer),
                base_half=half_points(ecart),
                called=view.called,
            )
            return play_out(g).score(seat)

        return value

    def announce_chelem(self, view: SeatView) -> bool:
        """Announce when the worlds score the announced chelem (taker's lead)
        above keeping quiet."""
        assert view.contract is not None and view.taker is not None
        seat, v, contract = view.seat, view.variant, view.contract
        if not _chelem_thinkable(view):
            return False

        def value(world: Sample, i: int) -> int:
            hands = [world.hand_mask(s) for s in range(view.players)]
            base, bouts = counted_aside(view, world)
            leader = seat if i else v.next_seat(view.dealer)
            g = opening(
                v,
                hands,
                taker=seat,
                partner=_holder(world, view.called),
                contract=contract,
                leader=leader,
                base_half=base,
                base_bouts=bouts,
                called=view.called,
                chelem_announced=bool(i),
            )
            return play_out(g).score(seat)

        return self._best(view, "chelem", [False, True], _same, value) == 1

    def poignee(self, view: SeatView) -> list[Card] | None:
        """Show the largest poignée when the worlds say this seat's camp wins the deal."""
        sizes = rules.poignee_sizes_available(view.hand, view.variant, view.poignee_ecart)
        if not sizes:
            return None
        wins = 0
        samples = self._samples(view, "poignee")
        for world in samples:
            g = play_out(position(view, world))
            wins += g.score(view.seat) > 0
        if 2 * wins <= len(samples):
            return None
        return rules.default_poignee(view.hand, view.variant, max(sizes), view.poignee_ecart)


def _sure_trick(view: SeatView, legal: Sequence[Card]) -> bool:
    """The own camp takes the trick in progress whatever this seat plays,
    as far as the view tells."""
    if not view.current:
        return False
    reading = read_table(view)
    return all(_camp_keeps(reading, view, c) for c in legal if not c.is_excuse)


def _probes(view: SeatView, legal: Sequence[Card]) -> list[Card]:
    """The leads that show the partner: the called suit, below the called card, at five while
    this seat does not know the camps."""
    called = view.called
    if (
        called is None
        or view.current
        or view.partner is not None
        or called in view.played
        or called in view.hand
    ):
        return []
    return [c for c in legal if c.suit is called.suit and c.rank < called.rank]


def _chelem_thinkable(view: SeatView) -> bool:
    """A chelem needs most of the trumps: not worth sampling for without half of them."""
    return sum(1 for c in view.hand if c.is_trump) * 2 >= 21


def _same(world: Sample) -> Sample:
    return world


def _void_ecarts(hand: Sequence[Card], candidates: list[Card], size: int) -> list[list[Card]]:
    """For each suit the écart can empty, that suit and then the basic bot's choice of the rest."""
    out: list[list[Card]] = []
    for suit in COLOURS:
        cards = [c for c in hand if c.suit is suit]
        if not cards or len(cards) > size or any(c not in candidates for c in cards):
            continue
        rest = [c for c in candidates if c not in cards and not c.is_trump]
        fill = choose_ecart([c for c in hand if c not in cards], rest, 0, size - len(cards))
        out.append([*cards, *fill])
    return out


def _holder(world: Sample, called: Card | None) -> int | None:
    if called is None:
        return None
    return next((s for s in range(world.players) if called.index in world.hands[s]), None)


def _card(index: int) -> Card:
    return DECK[index]


def _view_key(view: SeatView) -> str:
    """Everything the view shows, as text: the seed of the decision's worlds."""
    parts = [
        str(view.seat),
        view.phase.value,
        " ".join(c.code for c in view.hand),
        " ".join(f"{b.seat}:{b.contract}" for b in view.bids),
        str(view.taker),
        str(view.contract),
        str(view.called),
        str(view.partner),
        " ".join(c.code for c in view.chien),
        " ".join(c.code for c in view.ecart),
        str(view.chelem_announced),
        " ".join(f"{p.seat}:{' '.join(c.code for c in p.cards)}" for p in view.poignees),
        " ".join(f"{t.leader}:{' '.join(c.code for c in t.cards)}" for t in view.tricks),
        f"{view.leader}:{' '.join(c.code for c in view.current)}",
    ]
    return "|".join(parts)
