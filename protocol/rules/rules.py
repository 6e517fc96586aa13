"""The FFT rules of play as pure functions over cards.

Each function answers one question a referee would ask — may this card be played, who
wins this trick, is this écart allowed, is this poignée valid — with no notion of turns or
state; :mod:`protocol.rules.deal` strings them together into a deal.  A refusal is a
:class:`RuleError`: its :class:`Rule` code and parameters say which rule refuses, for a screen
to say it in the player's language; its text says it in English, for logs.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping, Sequence

from protocol.rules.cards import (
    CAVALIER,
    DAME,
    DECK,
    EXCUSE,
    PETIT,
    ROI,
    VALET,
    Card,
    Suit,
)
from protocol.rules.variants import Contract, PoigneeSize, Variant


class Rule(enum.Enum):
    """Every rule the engine refuses an action by: the code a :class:`RuleError` carries.

    A screen translates the code and its parameters (named after each member) instead of
    re-deriving the rule from the position.
    """

    # Playing a card.
    NOT_IN_HAND = "not-in-hand"  #: card
    CALLED_SUIT_LEAD = "called-suit-lead"  #: suit — at five, the first lead
    FOLLOW_SUIT = "follow-suit"  #: suit
    FOLLOW_TRUMP = "follow-trump"  #: trumps were led
    TRUMP = "trump"  #: suit — void in the led suit
    OVERTRUMP = "overtrump"  #: rank — the trump to beat
    CARD_ELSEWHERE = "card-elsewhere"  #: card, seat — a replica's check of a hidden hand
    TRICK_WITHOUT_WINNER = "trick-without-winner"
    # Bidding and the call.
    BID_NOT_HIGHER = "bid-not-higher"  #: highest (a Contract, or None)
    CALL_HIGHER_RANK = "call-higher-rank"  #: card — a queen, cavalier or valet
    CALL_NOT_A_KING = "call-not-a-king"  #: card
    CALL_NOT_A_FACE = "call-not-a-face"  #: card — a replica cannot see the four kings
    # The chien and the écart.
    CHIEN_KNOWN = "chien-known"
    CHIEN_SIZE = "chien-size"  #: size
    ECART_BEFORE_CHIEN = "ecart-before-chien"
    ECART_SIZE = "ecart-size"  #: size
    ECART_KING_OR_BOUT = "ecart-king-or-bout"  #: card
    ECART_TRUMP = "ecart-trump"
    ECART_NOT_LISTED = "ecart-not-listed"  #: too many écarts to list as options
    ECART_OWN = "ecart-own"  #: the taker's own écart is pushed whole
    ECART_SHOWN_NOT_TRUMP = "ecart-shown-not-trump"
    # Poignées.
    POIGNEE_REPEATED = "poignee-repeated"
    POIGNEE_NOT_HELD = "poignee-not-held"  #: card — neither in the hand nor the écart
    POIGNEE_NOT_TRUMP = "poignee-not-trump"  #: card
    POIGNEE_SIZE = "poignee-size"  #: counts (e.g. "8/10/13"), players
    POIGNEE_EXCUSE = "poignee-excuse"
    POIGNEE_TOO_FEW = "poignee-too-few"  #: size (a PoigneeSize)
    POIGNEE_LATE = "poignee-late"
    # The deal's course.
    NOT_YOUR_TURN = "not-your-turn"  #: seat, to_act
    WRONG_PHASE = "wrong-phase"  #: expected, phase (each a deal Phase)
    HAND_HIDDEN = "hand-hidden"  #: seat
    DEAL_OVER = "deal-over"
    DEAL_NOT_OVER = "deal-not-over"
    PILES_UNKNOWN = "piles-unknown"  #: the piles need every hand, after the reveal
    # A seat's own machine (protocol/replication/machine.py).
    NOT_TO_DECIDE = "not-to-decide"  #: the seat has no decision to make now
    VOTED_VOID = "voted-void"  #: the seat voted to void the deal: it plays no more in it
    OTHER_SEAT = "other-seat"  #: plays, seat — a machine asked to act for another seat
    #: A refusal outside the rules of play (a seat's own machine, the daemon): only its text.
    OTHER = "other"


class RuleError(ValueError):
    """An action the rules forbid: which :class:`Rule`, its parameters, and an English text.

    >>> error = RuleError("you must follow suit (H)", Rule.FOLLOW_SUIT, suit=Suit.HEARTS)
    >>> error.code, error.params["suit"], str(error)
    (<Rule.FOLLOW_SUIT: 'follow-suit'>, <Suit.HEARTS: 'H'>, 'you must follow suit (H)')
    """

    def __init__(self, message: str, code: Rule = Rule.OTHER, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params: Mapping[str, object] = params


# --- Before the bidding ---------------------------------------------------------------


def has_petit_sec(hand: Iterable[Card]) -> bool:
    """The Petit as the only trump, without the Excuse: the holder must show it
    and the deal is void.

    >>> from protocol.rules.cards import cards
    >>> has_petit_sec(cards("T1 KS 5H")), has_petit_sec(cards("T1 EX KS"))
    (True, False)
    """
    hand = list(hand)
    return PETIT in hand and EXCUSE not in hand and sum(1 for c in hand if c.is_trump) == 1


# --- Bidding ----------------------------------------------------------------------------


def higher_contracts(highest: Contract | None) -> list[Contract]:
    """The bids still open: each player speaks once and may only bid higher (or pass).

    >>> [c.french for c in higher_contracts(Contract.GARDE)]
    ['Garde Sans', 'Garde Contre']
    """
    return [c for c in Contract if highest is None or c > highest]


# --- The call (five players) ----------------------------------------------------------


def callable_cards(hand: Collection[Card]) -> list[Card]:
    """Cards the taker may call: any king (its own one included: it then plays alone).

    With the four kings it may call a queen; with the four kings and queens a cavalier; with
    those and the four cavaliers a valet ("quatre grands mariages").

    >>> from protocol.rules.cards import cards, codes
    >>> codes(callable_cards(cards("KS 5H")))
    ['KS', 'KH', 'KD', 'KC']
    >>> codes(callable_cards(cards("KS KH KD KC")))[4:]
    ['QS', 'QH', 'QD', 'QC']
    """
    allowed: list[Card] = []
    for rank in (ROI, DAME, CAVALIER, VALET):
        allowed.extend(c for c in DECK if c.suit.is_colour and c.rank == rank)
        if sum(1 for c in hand if c.suit.is_colour and c.rank == rank) < 4:
            break
    return allowed


def check_call(hand: Collection[Card], called: Card) -> None:
    if called not in callable_cards(hand):
        if called.suit.is_colour and called.rank in (DAME, CAVALIER, VALET):
            raise RuleError(
                f"you may call {called.name('en')} only holding all four cards of each higher rank",
                Rule.CALL_HIGHER_RANK,
                card=called,
            )
        raise RuleError(
            f"{called.code} cannot be called: call a king (or a queen holding the four kings)",
            Rule.CALL_NOT_A_KING,
            card=called,
        )


# --- The écart ------------------------------------------------------------------------


def may_discard(card: Card) -> bool:
    """Never a king nor a bout in the écart."""
    return not (card.is_king or card.is_bout)


def trumps_needed_in_ecart(hand: Collection[Card], size: int) -> int:
    """How many trumps the écart must hold: only as many as there are not enough other cards.

    >>> from protocol.rules.cards import cards
    >>> trumps_needed_in_ecart(cards("KS KH T1 T2 T3 T4 5S 6S"), 3)
    1
    """
    colour_cards = sum(1 for c in hand if may_discard(c) and not c.is_trump)
    return max(0, size - colour_cards)


def check_ecart(hand: Collection[Card], ecart: Collection[Card], size: int) -> None:
    """The taker's hand *with* the chien, and the cards it sets aside.

    Raises :class:`RuleError` unless the écart is exactly ``size`` cards of the hand, with no
    king and no bout, and trumps only when the taker has too few other cards (those trumps
    are then shown to the table).

    >>> from protocol.rules.cards import cards
    >>> hand = cards("KS 5S 6S 7S T2 T21")
    >>> check_ecart(hand, cards("5S 6S 7S"), 3)
    >>> check_ecart(hand, cards("KS 5S 6S"), 3)
    Traceback (most recent call last):
    ...
    protocol.rules.rules.RuleError: KS: neither a king nor a bout may go to the écart
    """
    ecart = list(ecart)
    if len(ecart) != size or len(set(ecart)) != size:
        raise RuleError(
            f"the écart must be exactly {size} different cards", Rule.ECART_SIZE, size=size
        )
    for c in ecart:
        if c not in hand:
            raise RuleError(f"{c.code} is not in your hand", Rule.NOT_IN_HAND, card=c)
        if not may_discard(c):
            raise RuleError(
                f"{c.code}: neither a king nor a bout may go to the écart",
                Rule.ECART_KING_OR_BOUT,
                card=c,
            )
    trumps = sum(1 for c in ecart if c.is_trump)
    if trumps > trumps_needed_in_ecart(hand, size):
        raise RuleError(
            "a trump may go to the écart only when you have no other card to put there",
            Rule.ECART_TRUMP,
        )


# --- Poignées -------------------------------------------------------------------------


def poignee_trumps(hand: Iterable[Card], ecart: Iterable[Card] = ()) -> list[Card]:
    """The trumps (and the Excuse) a player may show in a poignée: those of its hand and, for
    the taker, those of its écart.

    The écart's trumps were shown to the table when they were discarded, and the FFT counts
    them in the taker's poignée: « Lorsque le preneur possède 4 Rois et 15 atouts, l'atout
    écarté doit être remontré avec la triple Poignée qui est alors comptabilisée. »  They are
    the taker's trumps as much as those in its hand, for the thresholds and for the Excuse.
    """
    return [*(c for c in hand if c.is_trump or c.is_excuse), *(c for c in ecart if c.is_trump)]


def check_poignee(
    hand: Collection[Card], shown: Collection[Card], variant: Variant, ecart: Collection[Card] = ()
) -> PoigneeSize:
    """The size of a valid poignée, or :class:`RuleError`.

    Exactly a threshold count of trumps from the hand, or from the écart when the player is
    the taker (see :func:`poignee_trumps`); the Excuse may stand in for a trump only when the
    player has no other trump (it then shows every trump it holds).

    >>> from protocol.rules.cards import cards
    >>> from protocol.rules.variants import variant
    >>> trumps = cards("T1 T2 T3 T4 T5 T6 T7 T8 T9 T10")
    >>> check_poignee([*trumps, *cards("KS 5H")], trumps, variant(4))
    <PoigneeSize.SIMPLE: 20>
    >>> check_poignee(trumps, trumps[:9], variant(4))
    Traceback (most recent call last):
    ...
    protocol.rules.rules.RuleError: a poignée shows exactly 10/13/15 trumps at 4 players
    """
    shown = list(shown)
    held = poignee_trumps(hand, ecart)
    if len(set(shown)) != len(shown):
        raise RuleError("a poignée shows each trump once", Rule.POIGNEE_REPEATED)
    for c in shown:
        if c not in hand and c not in held:
            if ecart:
                raise RuleError(
                    f"{c.code} is not in your hand nor among the trumps of your écart",
                    Rule.POIGNEE_NOT_HELD,
                    card=c,
                )
            raise RuleError(f"{c.code} is not in your hand", Rule.NOT_IN_HAND, card=c)
        if not (c.is_trump or c.is_excuse):
            raise RuleError(
                f"{c.code} is not a trump: a poignée shows only trumps (and maybe the Excuse)",
                Rule.POIGNEE_NOT_TRUMP,
                card=c,
            )
    size = variant.poignee_size(len(shown))
    if size is None:
        counts = "/".join(str(t) for t in variant.poignee_thresholds)
        raise RuleError(
            f"a poignée shows exactly {counts} trumps at {variant.players} players",
            Rule.POIGNEE_SIZE,
            counts=counts,
            players=variant.players,
        )
    if EXCUSE in shown and any(c.is_trump and c not in shown for c in held):
        raise RuleError(
            "the Excuse may be shown in a poignée only when you hold no other trump",
            Rule.POIGNEE_EXCUSE,
        )
    return size


def poignee_sizes_available(
    hand: Collection[Card], variant: Variant, ecart: Collection[Card] = ()
) -> list[PoigneeSize]:
    """The poignées this hand (and the taker's écart) could show; the Excuse counts when it
    completes all trumps."""
    count = len(poignee_trumps(hand, ecart))
    return [size for size, t in zip(PoigneeSize, variant.poignee_thresholds) if count >= t]


def default_poignee(
    hand: Collection[Card], variant: Variant, size: PoigneeSize, ecart: Collection[Card] = ()
) -> list[Card]:
    """The trumps a player usually shows for ``size``: the écart's first, which the table has
    seen already, then the lowest of the hand, hiding the higher rest.

    The Excuse is used only when the trumps alone are not enough (and then all are shown).
    """
    needed = variant.threshold(size)
    trumps = sorted(
        (c for c in poignee_trumps(hand, ecart) if c.is_trump),
        key=lambda c: (c not in ecart, c.rank),
    )
    if len(trumps) >= needed:
        return trumps[:needed]
    if EXCUSE in hand and len(trumps) + 1 == needed:
        return [*trumps, EXCUSE]
    raise RuleError(
        f"this hand has too few trumps for a {size.code} poignée", Rule.POIGNEE_TOO_FEW, size=size
    )


# --- Tricks ---------------------------------------------------------------------------


def led_suit(trick: Sequence[Card]) -> Suit | None:
    """The suit to follow: that of the first card that is not the Excuse.

    >>> from protocol.rules.cards import cards
    >>> led_suit(cards("EX 7H T2")), led_suit(cards("EX"))
    (<Suit.HEARTS: 'H'>, None)
    """
    for c in trick:
        if not c.is_excuse:
            return c.suit
    return None


def legal_plays(
    hand: Collection[Card],
    trick: Sequence[Card],
    *,
    forbidden_lead_suit: Suit | None = None,
    called: Card | None = None,
) -> list[Card]:
    """The cards of ``hand`` that may go on ``trick`` (the cards already played to it).

    Follow suit; if void, trump; when a trump is already in the trick (trump leads included)
    go higher than it if you can, otherwise play a lower one ("pisser"); with neither suit
    nor trump, discard anything.  The Excuse may be played at any time.
    ``forbidden_lead_suit`` is the called suit on the first lead at five: it may not be led
    unless with the called card itself.

    >>> from protocol.rules.cards import cards, codes
    >>> hand = cards("KH 3H T2 T15 EX 5S")
    >>> codes(legal_plays(hand, cards("7H")))  # follow suit
    ['KH', '3H', 'EX']
    >>> codes(legal_plays(hand, cards("7D T12")))  # void: trump, over the 12 if you can
    ['T15', 'EX']
    >>> codes(legal_plays(cards("5S T2"), cards("7D T12")))  # cannot overtrump: « pisser »
    ['T2']
    """
    hand = list(hand)
    suit = led_suit(trick)
    if suit is None:
        if forbidden_lead_suit is None:
            return hand
        allowed = [c for c in hand if c.suit is not forbidden_lead_suit or c is called]
        return allowed or hand
    excuse = [c for c in hand if c.is_excuse]
    if suit.is_colour:
        following = [c for c in hand if c.suit is suit]
        if following:
            return following + excuse
    trumps = [c for c in hand if c.is_trump]
    if not trumps:
        return hand
    best = max((c.rank for c in trick if c.is_trump), default=0)
    higher = [c for c in trumps if c.rank > best]
    return (higher or trumps) + excuse


def check_play(
    hand: Collection[Card],
    trick: Sequence[Card],
    card: Card,
    *,
    forbidden_lead_suit: Suit | None = None,
    called: Card | None = None,
) -> None:
    """:class:`RuleError` unless ``card`` may go on ``trick`` (see :func:`play_refusal`)."""
    refusal = play_refusal(
        hand, trick, card, forbidden_lead_suit=forbidden_lead_suit, called=called
    )
    if refusal is not None:
        raise refusal


def play_refusal(
    hand: Collection[Card],
    trick: Sequence[Card],
    card: Card,
    *,
    forbidden_lead_suit: Suit | None = None,
    called: Card | None = None,
) -> RuleError | None:
    """The rule that refuses ``card`` on ``trick``, or None if it may be played — the one
    answer the engine and a screen give (the rules in the order of :func:`legal_plays`).

    >>> from protocol.rules.cards import card, cards
    >>> play_refusal(cards("5S 3H T4"), cards("7H"), card("5S")).code
    <Rule.FOLLOW_SUIT: 'follow-suit'>
    >>> play_refusal(cards("5S T2 T15"), cards("7D T14"), card("T2")).params
    {'rank': 14}
    >>> play_refusal(cards("5S T2 T15"), cards("7D T14"), card("T15")) is None
    True
    """
    if card not in hand:
        return RuleError(f"{card.code} is not in your hand", Rule.NOT_IN_HAND, card=card)
    if card in legal_plays(hand, trick, forbidden_lead_suit=forbidden_lead_suit, called=called):
        return None
    suit = led_suit(trick)
    if suit is None:
        return RuleError(
            "the first lead may not be in the called suit, except with the called card itself",
            Rule.CALLED_SUIT_LEAD,
            suit=forbidden_lead_suit,
        )
    if suit.is_colour and any(c.suit is suit for c in hand):
        return RuleError(f"you must follow suit ({suit.value})", Rule.FOLLOW_SUIT, suit=suit)
    best = max((c.rank for c in trick if c.is_trump), default=0)
    if card.is_trump and any(c.is_trump and c.rank > best for c in hand):
        return RuleError(f"you must play a trump higher than {best}", Rule.OVERTRUMP, rank=best)
    if suit.is_colour:
        return RuleError("you must play a trump", Rule.TRUMP, suit=suit)
    return RuleError("you must play a trump: trumps were led", Rule.FOLLOW_TRUMP)


def lead_restriction(called: Card | None, tricks_played: int, trick: Sequence[Card]) -> Card | None:
    """The called card when its suit may not be led now, else None.

    At five, the first lead of the deal may not be in the called suit, but with the called
    card itself; when the Excuse opens the deal, the card after it sets the suit: it is bound
    too.

    >>> from protocol.rules.cards import card, cards
    >>> lead_restriction(card("KS"), 0, cards("EX"))
    Card(KS)
    >>> lead_restriction(card("KS"), 1, []) is None
    True
    """
    if called is not None and tricks_played == 0 and led_suit(trick) is None:
        return called
    return None


def trick_winner(trick: Sequence[Card], *, excuse_wins: bool = False) -> int:
    """Index in ``trick`` of the card that takes it.

    The highest trump, else the highest card of the led suit.  The Excuse never takes a
    trick, except as the last card of a chelem (``excuse_wins``).

    >>> from protocol.rules.cards import cards
    >>> trick_winner(cards("7H KH 1S")), trick_winner(cards("7H KH T1"))
    (1, 2)
    >>> trick_winner(cards("EX 3S")), trick_winner(cards("EX 3S"), excuse_wins=True)
    (1, 0)
    """
    if excuse_wins and EXCUSE in trick:
        return list(trick).index(EXCUSE)
    suit = led_suit(trick)
    best = -1
    best_key = -1
    for i, c in enumerate(trick):
        if c.is_trump:
            key = 100 + c.rank
        elif c.suit is suit:
            key = c.rank
        else:
            continue
        if key > best_key:
            best, best_key = i, key
    if best < 0:  # only possible for a trick made of the Excuse alone
        raise RuleError(
            "a trick needs a card other than the Excuse to have a winner", Rule.TRICK_WITHOUT_WINNER
        )
    return best
