"""A fast engine of the play of a deal, for the strong bot's search: bit masks over the 78 cards.

The referee (:class:`~protocol.rules.deal.Deal`) checks every action and keeps a record worth
auditing; a search plays hundreds of thousands of cards a decision, and needs only the rules
of play and the score.  Here a hand is an ``int`` whose bit *i* is the card of deck index *i*
(see :mod:`protocol.rules.cards`: the suits in rank order at 0..55, the trumps at 56..76, the Excuse
at 77), so that "the cards of the led suit in this hand" is one ``&``.  Within a suit a higher
index is a higher card, and every trump is above every suit card, which makes the winning card
of a trick the one with the highest index among the trumps and the led suit.

The engine is cross-checked against the referee (tests/test_fastgame.py): the same legal cards,
the same trick winners and the same deal score, seat by seat.
"""

from __future__ import annotations

from collections.abc import Iterator

from protocol.rules.cards import DECK, EXCUSE, PETIT, VINGT_ET_UN
from protocol.rules.scoring import (
    CHELEM_ANNOUNCED_FAILED,
    CHELEM_ANNOUNCED_MADE,
    CHELEM_BY_DEFENCE,
    CHELEM_UNANNOUNCED_MADE,
    CONTRACT_BONUS,
    PETIT_AU_BOUT_BONUS,
    points_to_make,
)

#: Suit numbers: the four colours 0..3 in deck order, then the trumps and the Excuse.
TRUMPS = 4
EXCUSE_SUIT = 5
NO_SUIT = -1

SUIT_MASKS: tuple[int, ...] = tuple(((1 << 14) - 1) << (14 * s) for s in range(4)) + (
    ((1 << 21) - 1) << 56,
    1 << 77,
)
TRUMP_MASK = SUIT_MASKS[TRUMPS]
EXCUSE_BIT = 1 << EXCUSE.index
PETIT_BIT = 1 << PETIT.index
BOUT_MASK = (1 << PETIT.index) | (1 << VINGT_ET_UN.index) | EXCUSE_BIT

#: Per deck index: the suit number and the card's half points.
SUIT_OF: tuple[int, ...] = tuple(min(i // 14, TRUMPS) if i < 77 else EXCUSE_SUIT for i in range(78))
HALF: tuple[int, ...] = tuple(c.half_points for c in DECK)


def mask(indices: Iterator[int] | list[int] | tuple[int, ...]) -> int:
    out = 0
    for i in indices:
        out |= 1 << i
    return out


def bits(m: int) -> Iterator[int]:
    """The deck indices of a mask, lowest first."""
    while m:
        low = m & -m
        yield low.bit_length() - 1
        m ^= low


def half_points(m: int) -> int:
    return sum(HALF[i] for i in bits(m))


def lowest(m: int) -> int:
    return (m & -m).bit_length() - 1


def highest(m: int) -> int:
    return m.bit_length() - 1


class FastDeal:
    """The play of one deal from any point, every hand known (one sampled world of the search).

    ``attack`` is the set of seats of the attack as a bit mask of seats; ``base_half`` and
    ``base_bouts`` what the attack counts outside the tricks (the écart, or the chien at Garde
    Sans); ``poignee_points`` the poignées shown (won by the deal's winner).  The tricks taken
    so far are summed into the attack's points as they close, by the referee's rules for the
    Excuse: it stays with its owner's camp, which gives a low card (half a point) in exchange,
    except on the last trick, where it goes to the winner — or wins it, ending a chelem.
    """

    __slots__ = (
        "n",
        "hands",
        "attack",
        "taker",
        "leader",
        "trick",
        "led",
        "best",
        "best_pos",
        "best_trump",
        "tricks_left",
        "tricks_played",
        "att_half",
        "att_bouts",
        "att_tricks",
        "def_tricks",
        "multiplier",
        "chelem_announced",
        "poignee_points",
        "forbidden_suit",
        "called",
        "petit_trick_attack",
        "last_petit_attack",
        "excuse_won_last",
    )

    def __init__(
        self,
        hands: list[int],
        *,
        attack: int,
        taker: int,
        leader: int,
        multiplier: int,
        tricks_left: int,
        base_half: int = 0,
        base_bouts: int = 0,
        chelem_announced: bool = False,
        poignee_points: int = 0,
        forbidden_suit: int = NO_SUIT,
        called: int = -1,
    ) -> None:
        self.n = len(hands)
        self.hands = hands
        self.attack = attack
        self.taker = taker
        self.leader = leader
        self.trick: list[int] = []
        self.led = NO_SUIT
        self.best = -1  #: deck index of the card winning the trick so far
        self.best_pos = -1
        self.best_trump = -1
        self.tricks_left = tricks_left
        self.tricks_played = 0
        self.att_half = base_half
        self.att_bouts = base_bouts
        self.att_tricks = 0
        self.def_tricks = 0
        self.multiplier = multiplier
        self.chelem_announced = chelem_announced
        self.poignee_points = poignee_points
        self.forbidden_suit = forbidden_suit  #: the called suit, barred from the deal's first lead
        self.called = called
        #: camp that took the Petit, in the trick it fell
        self.petit_trick_attack: bool | None = None
        self.last_petit_attack: bool | None = None  #: same, for the trick before the last one
        self.excuse_won_last = False

    def copy(self) -> FastDeal:
        """An independent copy (the search tries each card on its own copy), field by field:
        a loop over the slots costs the search a third of its time."""
        o = FastDeal.__new__(FastDeal)
        o.n, o.hands, o.attack, o.taker, o.leader = (
            self.n,
            list(self.hands),
            self.attack,
            self.taker,
            self.leader,
        )
        o.trick, o.led, o.best, o.best_pos, o.best_trump = (
            list(self.trick),
            self.led,
            self.best,
            self.best_pos,
            self.best_trump,
        )
        o.tricks_left, o.tricks_played, o.att_half, o.att_bouts = (
            self.tricks_left,
            self.tricks_played,
            self.att_half,
            self.att_bouts,
        )
        o.att_tricks, o.def_tricks, o.multiplier = self.att_tricks, self.def_tricks, self.multiplier
        o.chelem_announced, o.poignee_points = self.chelem_announced, self.poignee_points
        o.forbidden_suit, o.called = self.forbidden_suit, self.called
        o.petit_trick_attack, o.last_petit_attack, o.excuse_won_last = (
            self.petit_trick_attack,
            self.last_petit_attack,
            self.excuse_won_last,
        )
        return o

    # --- Whose turn, what may be played ---

    @property
    def to_act(self) -> int:
        return (self.leader + len(self.trick)) % self.n

    @property
    def finished(self) -> bool:
        return self.tricks_left == 0

    def in_attack(self, seat: int) -> bool:
        return bool(self.attack >> seat & 1)

    def legal(self) -> int:
        """The cards the seat to act may play, as a mask (the rules of
        :func:`rules.legal_plays`)."""
        hand = self.hands[self.to_act]
        led = self.led
        if led == NO_SUIT:
            if self.forbidden_suit != NO_SUIT:
                allowed = hand & ~(SUIT_MASKS[self.forbidden_suit] & ~(1 << self.called))
                return allowed or hand
            return hand
        excuse = hand & EXCUSE_BIT
        if led != TRUMPS:
            follow = hand & SUIT_MASKS[led]
            if follow:
                return follow | excuse
        trumps = hand & TRUMP_MASK
        if not trumps:
            return hand
        higher = (
            trumps >> (self.best_trump + 1) << (self.best_trump + 1)
            if self.best_trump >= 0
            else trumps
        )
        return (higher or trumps) | excuse

    # --- Playing ---

    def play(self, card: int) -> None:
        seat = self.to_act
        self.hands[seat] &= ~(1 << card)
        suit = SUIT_OF[card]
        pos = len(self.trick)
        self.trick.append(card)
        if suit != EXCUSE_SUIT:
            if self.led == NO_SUIT:
                self.led = suit
                self.best, self.best_pos = card, pos
            elif (suit == TRUMPS or suit == self.led) and card > self.best:
                self.best, self.best_pos = card, pos
            if suit == TRUMPS and card > self.best_trump:
                self.best_trump = card
        if pos + 1 == self.n:
            self._close()

    def _close(self) -> None:
        trick, n = self.trick, self.n
        last = self.tricks_left == 1
        excuse_pos = trick.index(EXCUSE.index) if EXCUSE.index in trick else -1
        winner_pos = self.best_pos
        if last and excuse_pos >= 0:
            owner_attack = self.in_attack((self.leader + excuse_pos) % n)
            if (self.def_tricks == 0) if owner_attack else (self.att_tricks == 0):
                winner_pos = excuse_pos  # the Excuse ends a chelem by taking the last trick
                self.excuse_won_last = True
        winner = (self.leader + winner_pos) % n
        attack_wins = self.in_attack(winner)
        points = sum(HALF[c] for c in trick)
        bouts = sum(1 for c in trick if (BOUT_MASK >> c) & 1)
        if excuse_pos >= 0 and not last:
            owner_attack = self.in_attack((self.leader + excuse_pos) % n)
            if owner_attack != attack_wins:
                # the Excuse goes back to its owner's camp, for a low card (half a point)
                moved = HALF[EXCUSE.index] - 1
                points -= moved
                bouts -= 1
                if owner_attack:
                    self.att_half += moved
                    self.att_bouts += 1
        if attack_wins:
            self.att_half += points
            self.att_bouts += bouts
            self.att_tricks += 1
        else:
            self.def_tricks += 1
        self.last_petit_attack = self.petit_trick_attack if last else None
        self.petit_trick_attack = attack_wins if PETIT.index in trick else None
        self.tricks_played += 1
        self.tricks_left -= 1
        self.leader = winner
        self.trick = []
        self.led = NO_SUIT
        self.best = self.best_pos = self.best_trump = -1
        self.forbidden_suit = NO_SUIT

    # --- The score ---

    def petit_au_bout(self) -> bool | None:
        """True / False as the attack / the defence took the Petit in the last trick (or in the
        one before, when the Excuse took the last one in a chelem); None otherwise."""
        if self.petit_trick_attack is not None:
            return self.petit_trick_attack
        return self.last_petit_attack if self.excuse_won_last else None

    def unit(self) -> int:
        """The FFT score ``u`` of the finished deal, from the attack's side
        (see :mod:`protocol.rules.scoring`)."""
        need = 2 * points_to_make(self.att_bouts)
        won = self.att_half >= need
        s = 1 if won else -1
        m = self.multiplier
        difference = (abs(self.att_half - need) + 1) // 2
        petit = self.petit_au_bout()
        p = 0 if petit is None else 1 if petit else -1
        unit = (
            s * (CONTRACT_BONUS + difference) * m
            + p * PETIT_AU_BOUT_BONUS * m
            + s * self.poignee_points
        )
        if self.def_tricks == 0:
            unit += CHELEM_ANNOUNCED_MADE if self.chelem_announced else CHELEM_UNANNOUNCED_MADE
        else:
            if self.chelem_announced:
                unit += CHELEM_ANNOUNCED_FAILED
            if self.att_tricks == 0:
                unit += CHELEM_BY_DEFENCE
        return unit

    def score(self, seat: int) -> int:
        """The seat's line on the score sheet for the finished deal (:func:`scoring.score_row`)."""
        unit = self.unit()
        if not self.in_attack(seat):
            return -unit
        attackers = bin(self.attack).count("1")
        if attackers == 2:
            return 2 * unit if seat == self.taker else unit
        return (self.n - 1) * unit
