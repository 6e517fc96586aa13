"""The daemon's side of an event (issue 23, ``docs/event.md``): the record over the mesh.

The desk wires together the modules of one idea each and dispatches the frames of channel
:data:`CHANNEL`:

* :mod:`tarotd.event_book` — the events held here, their records and the store behind them;
* :mod:`tarotd.event_organiser` — the organiser's side: it keeps the record;
* :mod:`tarotd.event_member` — the player's side: it follows the record, sits, signs rows;
* :mod:`tarotd.event_rows` — a row's signatures gathered into the row whole;
* :mod:`tarotd.event_frames` — the frames, typed, and the one gate of their untrusted fields;
* :mod:`tarotd.event_documents` — what the local API shows.

A frame is decoded once (:func:`~tarotd.event_frames.decode`), then handed to the role this
daemon plays in its event through one table (:data:`_HANDLERS`).  Anything from the LAN that
does not hold — a frame of the wrong shape, a registration sent by another daemon than its
player's, a row signature by a non-member, entries that do not verify — is refused, said in
the log once per cause and sender, and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from protocol.event.event import EventError
from protocol.replication.identity import Identity, fingerprint
from tarotd import event_documents
from tarotd.event_book import EventBook, Heard, Held, Role
from tarotd.event_frames import (
    Announce,
    Entries,
    EventFrame,
    EventOut,
    FrameError,
    FrameRefused,
    Register,
    Row,
    RowSig,
    Table,
    Want,
    decode,
)
from tarotd.event_member import Member
from tarotd.event_organiser import Organiser
from tarotd.lobby import BROADCAST
from tarotd.store import Store

log = logging.getLogger(__name__)

CHANNEL: Final = "event"
MAX_REFUSALS_SAID: Final = 64  #: (cause, sender) pairs said in the log


class EventDesk:
    """Every event of one daemon (module docstring).  Sans sockets: it returns the frames to
    send, and the daemon moves them."""

    def __init__(self, identity: Identity, endpoint: Callable[[], str], store: Store) -> None:
        self.identity = identity
        self.endpoint = endpoint  #: where our daemon listens (its mesh), as it tells others
        self.book = EventBook(store)
        self.organiser = Organiser(identity, endpoint, self.book)
        self.member = Member(identity, endpoint, self.book, self.dispatch)
        self._said: set[tuple[str, bytes, str]] = set()
        # What the daemon asks of its events, answered by the part that knows.
        self.load = self.book.load
        self.find = self.book.find
        self.open = self.organiser.open
        self.start = self.organiser.start
        self.close_now = self.organiser.close_now
        self.withdraw = self.organiser.withdraw
        self.substitute = self.organiser.substitute
        self.seatings = self.member.seatings
        self.seating_of = self.member.seating_of
        self.deals_of = self.member.deals_of
        self.endpoints = self.member.endpoints
        self.fellows = self.member.fellows
        self.needs = self.member.needs
        self.table_ready = self.member.table_ready
        self.scored = self.member.scored
        self.abandon = self.member.abandon

    @property
    def key(self) -> bytes:
        return self.identity.public_key

    @property
    def held(self) -> dict[bytes, Held]:
        return self.book.held

    @property
    def heard(self) -> dict[bytes, Heard]:
        return self.book.heard

    def join(self, event_id: bytes, name: str) -> list[EventOut]:
        """Register our player: with an event heard on the LAN, or with our own."""
        organised = self.held.get(event_id)
        if organised is not None and organised.role is Role.ORGANISER:
            return self.organiser.join_own(organised, name)
        return self.member.join(event_id, name)

    # --- What the local API shows ------------------------------------------------------------

    def summary(self, held: Held) -> dict[str, Any]:
        seating = next((s for s in self.seatings() if s.event_id == held.event_id), None)
        return event_documents.summary(held, seating, self.key)

    def listing(self) -> list[dict[str, Any]]:
        return event_documents.listing(self.book)

    # --- The heartbeat and the LAN -----------------------------------------------------------

    def heartbeat(self, now: float) -> list[EventOut]:
        """Our events announced; what the records do not hold yet sent again."""
        outs: list[EventOut] = []
        for held in self.held.values():
            if held.role is Role.ORGANISER and held.report.closed < held.config.rounds:
                outs.append((BROADCAST, self.organiser.announce(held)))
            outs += self.member.resend(held, now)
        return outs

    def receive(self, sender: bytes, body: object) -> list[EventOut]:
        """A frame of :data:`CHANNEL`, as it came: whatever does not hold is refused and said."""
        try:
            frame = decode(body)
        except FrameError as why:
            self._refuse(why.kind, sender, str(why))
            return []
        return self.dispatch(sender, frame)

    def dispatch(self, sender: bytes, frame: EventFrame) -> list[EventOut]:
        """A frame, typed, to the role this daemon plays in its event; an announcement to the
        member's side, whether the event is held here or only heard."""
        try:
            if isinstance(frame, Announce):
                return self.member.on_event(sender, frame)
            held = self.held.get(frame.event)
            if held is None:
                raise FrameRefused("an event this daemon is not in")
            handler = _HANDLERS.get((type(frame), held.role))
            if handler is None:
                raise FrameRefused(f"a {frame.KIND} frame for the {held.role} of the event")
            side = self.organiser if held.role is Role.ORGANISER else self.member
            return handler(side, sender, held, frame)
        except (FrameRefused, EventError) as why:
            self._refuse(frame.KIND, sender, str(why))
        return []

    def _refuse(self, kind: str, sender: bytes, why: str) -> None:
        """Said once per kind of frame, sender and reason, and not past :data:`MAX_REFUSALS_SAID`:
        a stranger repeating a frame does not fill the log."""
        if (kind, sender, why) in self._said or len(self._said) >= MAX_REFUSALS_SAID:
            return
        self._said.add((kind, sender, why))
        log.warning(
            "event: refused a %s frame from %s, nothing changed: %s", kind, fingerprint(sender), why
        )


#: A handler: the side of the role (an :class:`Organiser` or a :class:`Member`), the sender,
#: the event as held here, the frame of its kind.
Handler = Callable[[Any, bytes, Held, Any], list[EventOut]]

#: Who handles each kind of frame, by the role this daemon plays in its event.
_HANDLERS: Final[dict[tuple[type[EventFrame], Role], Handler]] = {
    (Register, Role.ORGANISER): Organiser.on_register,
    (Want, Role.ORGANISER): Organiser.on_want,
    (Table, Role.ORGANISER): Organiser.on_table,
    (RowSig, Role.ORGANISER): Organiser.on_rowsig,
    (Row, Role.ORGANISER): Organiser.on_row,
    (Entries, Role.PLAYER): Member.on_entries,
    (RowSig, Role.PLAYER): Member.on_rowsig,
}
