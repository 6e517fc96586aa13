"""Why the daemon refuses a request of its client: a :class:`Refusal` code and its parameters,
which the local API's reply carries beside its English ``error`` text.

A client translates the code (``client/tui/i18n.py``) instead of reading the English words,
which are free to change; an older client, or a script, still shows the text.  A refusal by
the rules of play carries :attr:`Refusal.RULE` and the rules engine's own code and parameters
(:func:`rule_params`), which the client turns back into the :class:`RuleError` it translates
already (:func:`rule_error`).  Sans-IO: declarations and pure functions, for both ends.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from protocol.rules.cards import Card, Suit, card
from protocol.rules.deal import Phase
from protocol.rules.rules import Rule, RuleError
from protocol.rules.variants import Contract, PoigneeSize

#: A parameter as JSON carries it.
Param: TypeAlias = "str | int | float | bool | None"


class Refusal(enum.Enum):
    """Every refusal the daemon sends its client: the reply's ``code``, then the names of the
    ``params`` it carries — each of them, always (a client's words for it may use them all).

    >>> Refusal("too-few-left").params
    ('without', 'left')
    """

    params: tuple[str, ...]

    def __new__(cls, code: str, *params: str) -> Refusal:
        member = object.__new__(cls)
        member._value_ = code
        member.params = params
        return member

    # The connection and the request itself (tarotd/api.py, tarotd/answers.py).
    TOO_MANY_CLIENTS = "too-many-clients", "limit"
    LINE_TOO_LONG = "line-too-long", "limit"  #: in bytes
    NOT_JSON = "not-json"
    NOT_A_REQUEST = "not-a-request"  #: a JSON object without a string "op"
    UNKNOWN_REQUEST = "unknown-request", "op"
    MALFORMED = "malformed", "field"  #: the request's field(s), as the English names them
    INTERNAL = "internal"  #: a bug of the daemon's: its log says more
    # At the table (tarotd/answers.py, tarotd/runner.py, tarotd/hosting.py).
    NOT_AT_TABLE = "not-at-table"
    NO_OWN_SEAT = "no-own-seat"
    SEAT_IS_A_BOT = "seat-is-a-bot"  #: tarotd --bot plays the daemon's seat
    NOT_PLAYED_HERE = "not-played-here", "seat"
    #: A rule of play: the Rule's value, then that rule's own parameters (:func:`rule_params`).
    RULE = "rule", "rule"
    DEAL_SCORED = "deal-scored"  #: a move once the deal is scored: ask for the next one
    DEAL_NOT_SCORED = "deal-not-scored"  #: the next deal asked before this one is scored
    TABLE_FINISHED = "table-finished"
    PAUSED = "paused"  #: a fault of this machine's (the disk full) pauses the table
    MAX_TABLES = "max-tables", "playing"  #: tarotd --max-tables
    NOBODY_GONE = "nobody-gone", "seconds"  #: regroup: nobody silent for --timeout
    TOO_FEW_LEFT = "too-few-left", "without", "left"  #: regroup: fewer than three would be left
    # The lobby (tarotd/lobby.py, tarotd/answers.py).
    SEATS = "seats"  #: a table has 3, 4 or 5 seats
    NO_OPEN_TABLE = "no-open-table"
    NOT_AN_INVITE_CODE = "not-an-invite-code", "invite", "length", "example"  #: invite as typed
    INVITE_TOO_EASY = "invite-too-easy", "invite", "example"  #: invite as typed
    OPENER_UNKNOWN = "opener-unknown", "table"  #: joined without its invite code
    INVITE_REFUSED = "invite-refused", "table"  #: its opener refused the code
    INVITE_WAIT = "invite-wait", "table"  #: too many wrong codes from here: wait
    INVITE_LOCKED = "invite-locked", "table"  #: locked out: its player runs tarot unlock
    NO_TABLE_TO_FILL = "no-table-to-fill"  #: a bot asked for with no table joined
    TABLE_FULL = "table-full"
    TABLE_STARTED = "table-started"  #: a table left once it started
    # Events (tarotd/event_desk.py, tarotd/event_glue.py, tarotd/event_bots.py, protocol/event).
    EVENT_NOT_HEARD = "event-not-heard"
    EVENT_NO_SUCH_ID = "event-no-such-id"
    EVENT_AMBIGUOUS_ID = "event-ambiguous-id", "events"  #: their ids and names
    EVENT_NOT_ORGANISED_HERE = "event-not-organised-here"
    EVENT_NOT_IN = "event-not-in"
    EVENT_IN_ALREADY = "event-in-already"
    EVENT_REGISTERED_ALREADY = "event-registered-already"
    EVENT_STARTED = "event-started"
    EVENT_NO_ROUND_OPEN = "event-no-round-open"
    EVENT_PLAYER_UNKNOWN = "event-player-unknown", "player"
    EVENT_PLAYER_AMBIGUOUS = "event-player-ambiguous", "player"
    EVENT_PLACE_HELD = "event-place-held", "player"
    EVENT_NAME = "event-name", "most"  #: characters
    EVENT_ROUNDS = "event-rounds", "most"
    EVENT_DEALS = "event-deals", "most"
    EVENT_TABLE_SIZE = "event-table-size"
    EVENT_TOO_FEW_PLAYERS = "event-too-few-players", "players"
    EVENT_TOO_MANY_PLAYERS = "event-too-many-players", "players", "tables"
    EVENT_BOT_LEVEL = "event-bot-level", "levels"
    EVENT_BOTS_COUNT = "event-bots-count", "most"
    EVENT_BOTS_FULL = "event-bots-full", "hosted", "free", "most"
    #: A refusal with no code of its own (a record that does not verify…): only its text.
    OTHER = "other"


class Refused(ValueError):
    """A request refused: its :class:`Refusal`, its parameters and an English text.

    A ``ValueError``, so that code that raised one before, and its callers, are unchanged.

    >>> error = Refused("you are not at a table yet", Refusal.NOT_AT_TABLE)
    >>> error.code, dict(error.params), str(error)
    (<Refusal.NOT_AT_TABLE: 'not-at-table'>, {}, 'you are not at a table yet')
    """

    def __init__(self, message: str, code: Refusal = Refusal.OTHER, /, **params: Param) -> None:
        super().__init__(message)
        self.code = code
        self.params: Mapping[str, Param] = params


def rule_params(error: RuleError) -> dict[str, Param]:
    """The parameters of :attr:`Refusal.RULE` for ``error``: its code, then each of its
    parameters as JSON says it (a card by its code, a suit, a phase by their values…).

    >>> from protocol.rules.cards import card
    >>> rule_params(RuleError("KH is not in your hand", Rule.NOT_IN_HAND, card=card("KH")))
    {'rule': 'not-in-hand', 'card': 'KH'}
    """
    return {"rule": error.code.value, **{name: _said(v) for name, v in error.params.items()}}


def _said(value: object) -> Param:
    if isinstance(value, Card | Contract | PoigneeSize):
        return value.code
    if isinstance(value, Suit | Phase):
        return str(value.value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


#: How a rule's parameter is read back, by its name (the others, and None, as JSON gave them).
_READ: Final[Mapping[str, Callable[[Any], object]]] = {
    "card": card,
    "suit": Suit,
    "highest": Contract.from_code,
    "expected": Phase,
    "phase": Phase,
}


def rule_error(message: str, params: Mapping[str, object]) -> RuleError | None:
    """The :class:`RuleError` that :func:`rule_params` said, with ``message`` as its text;
    None if ``params`` name no rule this side knows (a newer daemon) or a parameter does not
    read (the client then shows ``message``).

    >>> error = rule_error("you must follow suit (H)", {"rule": "follow-suit", "suit": "H"})
    >>> error.code, error.params
    (<Rule.FOLLOW_SUIT: 'follow-suit'>, {'suit': <Suit.HEARTS: 'H'>})
    """
    fields = dict(params)
    try:
        rule = Rule(fields.pop("rule", None))
        read = {
            name: None if value is None else _READ.get(name, _as_is)(value)
            for name, value in fields.items()
        }
        if rule is Rule.POIGNEE_TOO_FEW and isinstance(read.get("size"), str):
            read["size"] = PoigneeSize[str(read["size"]).upper()]
    except (ValueError, KeyError, TypeError):
        return None
    return RuleError(message, rule, **read)


def _as_is(value: object) -> object:
    return value
