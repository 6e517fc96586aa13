"""A member gone for good: the others are told, and go on without it at a new table, in one
key (issue 26, item 10).  Before, they waited at the next deal's commitments for ever.

Four bots' daemons; one is killed after the first deal.  The others time it out, and between
deals — where the table can only wait for it — each goes on without it by itself (a player
presses ``w``): a new table of the same name, of three, which they play to its end."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tarotd.store import Store, TableState
from tests.daemons import answer, kill_all, logs, scores, start_daemons, wait_all

pytestmark = pytest.mark.daemons

DEALS = 3  #: a table's deals: the kill after the first leaves two, which nobody plays in a blink


def scored(home: Path) -> int:
    status = answer(home, "status")
    tables = status.get("tables") if isinstance(status, dict) else None
    return int(tables[0]["scored"]) if tables else 0


def test_the_members_left_go_on_without_one_gone_for_good(tmp_path: Path) -> None:
    processes, homes = start_daemons(tmp_path, 4, DEALS, timeout=2.0)
    try:
        deadline = time.monotonic() + 120
        while scored(homes[0]) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                pytest.fail(f"the first deal was never scored:\n{logs(tmp_path, 4)}")
            time.sleep(0.2)
        processes[3].kill()
        processes[3].wait()
        wait_all(processes[:3], tmp_path, timeout=240)
    finally:
        kill_all(processes)
    sheets = [scores(home) for home in homes[:3]]
    assert all(sheet["deals"] == sheets[0]["deals"] for sheet in sheets), (
        "the new table's sheets differ"
    )
    assert len(sheets[0]["seats"]) == 3 and "joueur3" not in sheets[0]["seats"], sheets[0]
    assert len(sheets[0]["deals"]) == DEALS and all(
        row["audit"] == "ok" for row in sheets[0]["deals"]
    ), sheets[0]
    for home in homes[:3]:
        store = Store(home / "tarot.db", established=True)
        try:
            states = sorted(record.state for record in store.tables())
        finally:
            store.close()
        assert states == sorted([TableState.FINISHED, TableState.REGROUPED]), states
    text = logs(tmp_path, 3, tail=1_000_000)
    assert "going on without joueur3, gone for good" in text, text
