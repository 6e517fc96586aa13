"""The documents of the local API, as both its ends read them: the daemon (``tarotd/api.py``)
and the client (``client/api.py``).

Declarations only — no socket, no JSON — so that the two ends name each field once.  They live
in ``protocol`` because it is the one package both ends import already: the client never
imports the daemon, and a package of its own for a page of types would be one more to ship.
The wire form is unchanged: one JSON object per line, as ``tarotd/api.py`` describes it.

A request is not among them: the daemon reads it as the untrusted JSON it is and checks each
field it takes, and the client writes its arguments as the command line gives them.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class Reply(TypedDict, total=False):
    """The answer to a request, with its ``id``: ``ok`` and the ``result``, or why not — the
    ``code`` of a :class:`~protocol.refusal.Refusal` and its ``params``, which a client
    translates, beside the ``error`` in English, which older clients and scripts show.  A
    connection turned away gets one reply with no ``id``."""

    id: Any  #: the request's own id, whatever it was
    ok: bool
    result: Any
    error: str
    code: str  #: a Refusal value
    params: dict[str, Any]


#: What the daemon streams to every client between replies (``trick``, ``verdict``,
#: ``disconnected`` when the client lost the daemon…): ``event`` names it, and its other
#: fields are the details of the protocol's own event (:class:`protocol.replication.machine.Event`),
#: which vary by kind — a map, not a TypedDict.
ApiEvent = dict[str, Any]


class PauseDocument(TypedDict):
    """A table paused by a fault of this machine (the disk full), and for how long."""

    fault: str
    seconds: float


class PeerDocument(TypedDict):
    name: str
    fingerprint: str
    state: str


class TableStatus(TypedDict):
    """A table this daemon plays, as ``status`` lists it."""

    table: str  #: the table id, hexadecimal
    seats: list[str]  #: the players' names, by seat
    deal: int
    stage: str  #: "bidding", "play, trick 3"… ("done" between deals)
    scored: int
    waiting_for: list[int]
    #: The deal is over here but its record waits for the other members' closing: this
    #: daemon timed out as many members as answered (docs/agreement.md).
    unsettled: bool
    #: At a finished table, the members not yet known to hold its last row: the daemon
    #: stays (within a bound) and serves it to them.
    rows_awaited: list[str]
    paused: PauseDocument | None


class Status(TypedDict):
    """The answer to ``status``: who this daemon is, whom it reaches, what it plays."""

    name: str
    fingerprint: str
    key: str
    curve: bool
    endpoint: str
    peers: list[PeerDocument]
    connections: dict[str, int]
    refused: dict[str, int]  #: what the mesh and discovery turned away, by cause
    mesh: dict[str, int]  #: the mesh's counters that are not zero, by name
    unreachable: list[str]
    discovery: dict[str, Any] | None
    #: of ``refused``, what discovery and its links turned away (a flood of beacons), by cause
    discovery_refused: dict[str, int]
    #: wrong proofs of our invite codes: counts, and the keys and hosts locked out
    #: (:mod:`tarotd.guesses`; ``tarot unlock`` lifts them)
    guesses: dict[str, Any]
    tables: list[TableStatus]
    #: the bot seats this daemon hosts (``tarotd --bots N``, the lobby's ``b``), by name: their
    #: level — what the client shows beside their name
    bots: dict[str, str]


class TableOffer(TypedDict):
    """A table of the lobby, as ``tables`` lists it."""

    table: str  #: the table id, hexadecimal
    name: str
    seats: int
    members: list[str]
    bots: list[str]  #: each member's bot level as its daemon said it, "" for a person
    state: Literal["open", "full", "ready", "withdrawn"]
    invite: str | None
    silence: str  #: the table's signed rule for silence: a ``SilenceCost`` value, said in the lobby
    #: False for an offer of a daemon we have no trust in: none of our --peer, and it proved no
    #: invite code of ours — listed apart, joined only with its code
    verified: bool
    #: why its opener refused the code we gave it, if it did: "code", "wait" or "locked"
    refused: str | None


class AwaySeat(TypedDict):
    """A seat whose member's daemon is unreachable, and since how long it was last heard."""

    seat: int
    seconds: float


class SeatDocument(TypedDict):
    """A table as the client of one seat draws it (``tarotd/views.py``: nothing the seat
    may not know)."""

    table: str  #: the table id, hexadecimal
    name: str  #: the table's name ("" if it has none)
    seats: list[str]  #: the players' names, by seat
    fingerprints: list[str]  #: of each seat's key, by seat
    bots: list[str]  #: each seat's bot level, signed in the manifest; "" for a person
    seat: int | None  #: ours; None if the daemon has no seat of its own there
    deal: int
    dealer: int
    view: dict[str, Any] | None  #: the deal as our seat sees it (its hand, the tricks…)
    last_view: dict[str, Any] | None  #: between deals: how the last one ended
    waiting_for: list[int]  #: the seats the table waits for
    away: list[AwaySeat]
    decision: str | None  #: what our seat must decide now (a ``Phase`` value), if anything
    options: dict[str, Any] | None  #: the legal choices of that decision
    between_deals: bool
    finished: bool
    scores: list[int]  #: each player's balance so far, by seat
    results: list[dict[str, object]]  #: one per scored deal


class SeatState(SeatDocument):
    """The answer to ``state`` at a table: the seat's view, and what the daemon adds."""

    paused: PauseDocument | None
    #: The deal is over here but its record waits for the other members' closing.
    unsettled: bool
    #: At a finished table, the members not yet known to hold its last row.
    rows_awaited: list[str]
    #: The seat's view of the finished table played just before this one (an event's round
    #: just over), for a client that did not see it end; None if there is none.
    earlier: SeatDocument | None


class NoTable(TypedDict):
    """The answer to ``state`` before any table."""

    table: None


#: The answer to ``state``: the client tells the two apart by ``table``.
StateDocument = SeatState | NoTable
