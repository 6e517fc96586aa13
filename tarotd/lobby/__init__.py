"""Forming tables on the LAN, sans IO: one idea per module.

* :mod:`~tarotd.lobby.core` — the :class:`Lobby`: offers, joins, the invite code's CPace runs,
  the signed manifest and the first dealer's coin (its docstring tells the whole protocol);
* :mod:`~tarotd.lobby.frames` — the lobby's frames, typed, and the one decoder of a peer's;
* :mod:`~tarotd.lobby.tables` — an offer, an event's slot, a table ready to play;
* :mod:`~tarotd.lobby.invite` — the invite code.

The names other modules use are here, so that ``from tarotd.lobby import Lobby`` is all they
need to know of the layout.
"""

from protocol.replication.manifest import MANIFEST_DOMAIN
from tarotd.lobby.core import BROADCAST, FrameOut, Lobby
from tarotd.lobby.frames import Member, OfferState
from tarotd.lobby.invite import INVITE_ALPHABET, Invite, invite_code, weakness
from tarotd.lobby.tables import EventSlot, Offer, ReadyTable, manifest_bytes, table_id_of

__all__ = [
    "BROADCAST",
    "INVITE_ALPHABET",
    "MANIFEST_DOMAIN",
    "EventSlot",
    "FrameOut",
    "Invite",
    "Lobby",
    "Member",
    "Offer",
    "OfferState",
    "ReadyTable",
    "invite_code",
    "manifest_bytes",
    "table_id_of",
    "weakness",
]
