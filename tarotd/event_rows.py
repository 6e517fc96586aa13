"""A row's signatures gathered into the row whole: by the organiser's daemon into its record,
and by each member's daemon into the copy it keeps (``docs/event.md``, "Rows")."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from protocol.event.event import Entry, EntryKind, EventRow, row_entry
from protocol.replication.identity import verify
from tarotd.event_book import Held
from tarotd.event_frames import FrameRefused

log = logging.getLogger(__name__)

#: different documents signed for one row kept at once (a member may sign only its own)
MAX_VERSIONS: Final = 8


def gather(
    held: Held, row: EventRow, document: bytes, seat: int, signature: bytes, keys: Sequence[bytes]
) -> Entry | None:
    """Take one member's signature of ``row``; the row with every signature it needs (all
    but the silent seats'), once they are in."""
    if not 0 <= seat < len(keys) or not verify(
        keys[seat], signature, EntryKind.ROW.domain + document
    ):
        raise FrameRefused(
            f"a signature of round {row.round}, table {row.table}, deal {row.deal} that is "
            "not the "
            f"member's of seat {seat}"
        )
    slot = (row.round, row.table, row.deal)
    versions = held.signatures.setdefault(slot, {})
    if document not in versions and len(versions) >= MAX_VERSIONS:
        raise FrameRefused(
            f"more than {MAX_VERSIONS} versions of the row of round {row.round}, table "
            f"{row.table}, "
            f"deal {row.deal}"
        )
    if document not in versions and versions:
        log.warning(
            "event %s: the members of table %d sign different rows for deal %d of round %d: "
            "the row waits "
            "until every member signs one of them",
            held.event_id.hex()[:8],
            row.table,
            row.deal,
            row.round,
        )
    signed = versions.setdefault(document, {})
    signed[seat] = signature
    if not all(s in signed for s in range(len(keys)) if s not in row.silent):
        return None
    del held.signatures[slot]
    return row_entry(held.event_id, row, [signed.get(s) for s in range(len(keys))])
