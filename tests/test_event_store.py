"""The daemon's store keeps an event's record entry by entry, and its notes (tarotd/store.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tarotd.store import Store, StoreError

EVENT = bytes(range(16))


def test_entries_are_kept_in_order_across_a_reopening(tmp_path: Path) -> None:
    with Store(tmp_path / "tarot.db") as store:
        store.append_event_entries(EVENT, 0, [b"config", b"register"])
        store.append_event_entries(EVENT, 2, [b"round"])
        store.set_event_note(EVENT, "role", b"player")
        store.set_event_note(EVENT, "role", b"organiser")
    with Store(tmp_path / "tarot.db") as store:
        assert store.event_entries(EVENT) == [b"config", b"register", b"round"]
        assert store.event_notes(EVENT) == {"role": b"organiser"}
        assert store.events() == [EVENT]
        assert store.event_entries(bytes(16)) == []


def test_an_entry_written_again_must_be_the_same(tmp_path: Path) -> None:
    with Store(tmp_path / "tarot.db") as store:
        store.append_event_entries(EVENT, 0, [b"config", b"register"])
        store.append_event_entries(EVENT, 1, [b"register", b"round"])  # a restart writing it again
        with pytest.raises(StoreError, match="another entry 1 of event"):
            store.append_event_entries(EVENT, 1, [b"forged"])
        assert store.event_entries(EVENT) == [b"config", b"register", b"round"]
