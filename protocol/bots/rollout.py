"""The fast policy that plays a sampled deal out, every hand open, for the strong bot's search.

A rollout must be quick (tens of microseconds a card) and sensible: a deal played out by
careless cards scores nothing like the deal a good player would make of it.  These are the
basic bot's rules of play (:class:`protocol.bots.bots.BasicPolicy`) on the bit masks of
:mod:`protocol.bots.fastgame`, made simpler by the open hands: "can anybody behind still beat this
card?" is read from their hands instead of guessed.  Points go to a trick the own camp is sure
to take; a losing seat gives its cheapest card (the Excuse rather than an honour); the Petit is
never led while other trumps are out, and goes home when it is safe; the 21 is kept for a trick
worth it; the attack draws trumps with its masters.
"""

from __future__ import annotations

from protocol.bots.fastgame import (
    EXCUSE_BIT,
    HALF,
    NO_SUIT,
    PETIT_BIT,
    SUIT_MASKS,
    SUIT_OF,
    TRUMP_MASK,
    TRUMPS,
    FastDeal,
    bits,
    highest,
    lowest,
)

__all__ = ["choose", "play_out"]

_TWENTY_ONE_BIT = 1 << 76
_PETIT = 56
_COLOURS = range(4)


def play_out(g: FastDeal) -> FastDeal:
    """Play ``g`` to its end with :func:`choose` at every seat (in place; returned for chaining)."""
    while g.tricks_left:
        g.play(choose(g))
    return g


def choose(g: FastDeal) -> int:
    legal = g.legal()
    if legal & (legal - 1) == 0:
        return lowest(legal)
    if g.led == NO_SUIT:
        return _lead(g, legal)
    return _follow(g, legal)


def _others(g: FastDeal, seat: int, allies: bool) -> list[int]:
    mine = g.in_attack(seat)
    return [s for s in range(g.n) if s != seat and (g.in_attack(s) == mine) == allies]


def _later_opponents(g: FastDeal) -> list[int]:
    seat = g.to_act
    mine = g.in_attack(seat)
    later = [(seat + k) % g.n for k in range(1, g.n - len(g.trick))]
    return [s for s in later if g.in_attack(s) != mine]


def _beats(hand: int, best: int, led: int) -> bool:
    """Whether a hand still to play can take a trick that card ``best`` is winning."""
    if led != TRUMPS:
        follow = hand & SUIT_MASKS[led]
        if follow:
            return SUIT_OF[best] != TRUMPS and highest(follow) > best
    trumps = hand & TRUMP_MASK
    if not trumps:
        return False
    return SUIT_OF[best] != TRUMPS or highest(trumps) > best


def _safe(g: FastDeal, best: int, led: int) -> bool:
    return not any(_beats(g.hands[s], best, led) for s in _later_opponents(g))


def _trick_half(g: FastDeal) -> int:
    return sum(HALF[c] for c in g.trick if c != 77)


def _cheapest(g: FastDeal, cards: int) -> int:
    """The card to give away: fewest points, never the Petit nor the 21 when another will do,
    from the shortest suit (towards a void), the lowest."""
    hand = g.hands[g.to_act]

    def cost(c: int) -> tuple[int, int, int]:
        suit = SUIT_OF[c]
        special = 1 if c == _PETIT or c == 76 else 0
        length = bin(hand & SUIT_MASKS[suit]).count("1") if suit <= TRUMPS else 0
        return (special, HALF[c], length * 100 + c)

    return min(bits(cards), key=cost)


def _discard(g: FastDeal, legal: int) -> int:
    """A trick this seat loses: the Excuse when anything else would give points away."""
    others = legal & ~EXCUSE_BIT
    if not others:
        return 77
    cheap = _cheapest(g, others)
    if (
        legal & EXCUSE_BIT
        and g.tricks_left > 1
        and (HALF[cheap] >= 5 or cheap == _PETIT or g.tricks_left == 2)
    ):
        return 77
    return cheap


def _follow(g: FastDeal, legal: int) -> int:
    seat = g.to_act
    led = g.led
    best = g.best
    winner = (g.leader + g.best_pos) % g.n
    cards = legal & ~EXCUSE_BIT
    if g.in_attack(winner) == g.in_attack(seat) and _safe(g, best, led):
        return _charge(g, legal)
    if not cards:
        return 77
    winners = [c for c in bits(cards) if (SUIT_OF[c] == TRUMPS or SUIT_OF[c] == led) and c > best]
    safe = [c for c in winners if _safe(g, c, led)]
    if safe:
        if legal & PETIT_BIT and _PETIT in safe:
            return _PETIT
        colours = [c for c in safe if SUIT_OF[c] != TRUMPS]
        if colours:
            return max(colours, key=lambda c: (HALF[c], c))
        cheap = [c for c in safe if c != 76]
        if cheap:
            return min(cheap)
        if _trick_half(g) >= 6 or g.tricks_left <= 3:
            return 76
    return _discard(g, legal)


def _charge(g: FastDeal, legal: int) -> int:
    """The own camp takes the trick: give it the richest card, spend the least trump."""
    cards = legal & ~EXCUSE_BIT
    if not cards:
        return 77
    if legal & PETIT_BIT:
        return _PETIT
    colours = [c for c in bits(cards) if SUIT_OF[c] != TRUMPS]
    if colours:
        return max(colours, key=lambda c: (HALF[c], -c))
    plain = cards & ~_TWENTY_ONE_BIT
    return lowest(plain) if plain else 76


def _lead(g: FastDeal, legal: int) -> int:
    seat = g.to_act
    hand = g.hands[seat]
    if legal & EXCUSE_BIT and g.tricks_left == 2:
        return 77
    opponents = _others(g, seat, allies=False)
    theirs = 0
    for s in opponents:
        theirs |= g.hands[s]
    others_all = 0
    for s in range(g.n):
        if s != seat:
            others_all |= g.hands[s]
    their_trumps = theirs & TRUMP_MASK
    other_trumps = others_all & TRUMP_MASK
    cards = legal & ~EXCUSE_BIT
    if cards & PETIT_BIT and (other_trumps or g.tricks_left > 1) and cards & ~PETIT_BIT:
        # led, the Petit falls to the first higher trump; master, it waits au bout
        cards &= ~PETIT_BIT
    if not cards:
        return lowest(legal)
    trumps = cards & TRUMP_MASK
    if g.in_attack(seat) and trumps and their_trumps:
        top = highest(trumps)
        if top > highest(their_trumps) and top != 76:
            return top
        if (
            bin(hand & TRUMP_MASK).count("1") > bin(their_trumps).count("1")
            and trumps & ~PETIT_BIT & ~_TWENTY_ONE_BIT
        ):
            return lowest(trumps & ~PETIT_BIT & ~_TWENTY_ONE_BIT)
    masters: list[int] = []
    for suit in _COLOURS:
        mine = cards & SUIT_MASKS[suit]
        if not mine:
            continue
        top = highest(mine)
        if others_all & SUIT_MASKS[suit] and highest(others_all & SUIT_MASKS[suit]) > top:
            continue
        ruffed = any(
            not (g.hands[s] & SUIT_MASKS[suit]) and g.hands[s] & TRUMP_MASK for s in opponents
        )
        if not ruffed:
            masters.append(top)
    if masters:
        return max(masters, key=lambda c: (HALF[c], c))
    colours = cards & ~TRUMP_MASK
    if colours:
        if not g.in_attack(seat):
            taker = g.hands[g.taker]
            ruffs = [
                s
                for s in _COLOURS
                if colours & SUIT_MASKS[s] and not taker & SUIT_MASKS[s] and taker & TRUMP_MASK
            ]
            if ruffs:
                return min((lowest(colours & SUIT_MASKS[s]) for s in ruffs), key=lambda c: HALF[c])
        longest = max(
            (s for s in _COLOURS if colours & SUIT_MASKS[s]),
            key=lambda s: (bin(hand & SUIT_MASKS[s]).count("1"), -s),
        )
        return lowest(colours & SUIT_MASKS[longest])
    plain = cards & ~PETIT_BIT & ~_TWENTY_ONE_BIT
    return lowest(plain) if plain else highest(cards)
