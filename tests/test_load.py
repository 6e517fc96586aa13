"""Load: ten tables of five daemons, fifty daemons in all, each in a network namespace of its
own on one simulated LAN, start together and play three deals each at once.

What a busy LAN party puts on the design: fifty daemons beaconing every second and each
connecting to every daemon it hears of (2,450 authenticated links, each pinged when idle),
ten tables converging by name among them, and thirty deals of mental-poker cryptography
sharing the machine's cores.  Discovery alone (no ``--peer``): one daemon's ``status`` must
see the 49 others and its lobby all ten tables; every daemon exits 0 within the budget; each
table's five score sheets are identical, with three deals audited ok.  The run prints the
wall time, the CPU time per deal (user + system of all fifty daemons, over thirty deals) and
the memory the daemons took.

Root only (network namespaces); skipped with the reason otherwise.  Slow: ``-m slow``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from daemons import resident_kib
from lan import NEEDS_ROOT, Daemon, Fleet, check_table, fleet, lan_of

from client.api import DaemonRefused, DaemonUnavailable, ask

TABLES = int(os.environ.get("LOAD_TABLES", "10"))  #: fewer for a machine with fewer cores
SEATS = 5
DEALS = 3
BUDGET = 15 * 60.0  #: seconds for the whole run, from the first daemon started to the last exit
POLL = 1.0  #: seconds between looks at the watched daemon and at the daemons' memory

pytestmark = [pytest.mark.daemons, pytest.mark.slow, NEEDS_ROOT]


@dataclass
class Watch:
    """What the test saw while the tables played."""

    peers: int = 0  #: most peers the watched daemon's mesh listed at once
    up: int = 0  #: most of them authenticated and heard from at once
    table_names: set[str] = field(default_factory=set)  #: table names its lobby heard of
    scored: dict[str, int] = field(default_factory=dict)  #: deals each table had scored, last seen
    rss_kib: int = 0  #: most resident memory of all the daemons together, in KiB

    def summary(self) -> str:
        return (
            f"the watched daemon saw {self.peers} peers ({self.up} up at once) and "
            f"{len(self.table_names)} table names; deals scored per table, last seen: "
            f"{self.scored}; "
            f"all daemons together at most {self.rss_kib / 1024:.0f} MiB resident"
        )


def table_names(daemon: Daemon) -> set[str]:
    """The names of the tables ``daemon``'s lobby knows of (its ``tables`` request)."""

    async def ask_briefly() -> list[dict[str, object]]:
        offers: list[dict[str, object]] = await asyncio.wait_for(
            ask(daemon.home, "tables"), timeout=5
        )
        return offers

    try:
        return {str(offer["name"]) for offer in asyncio.run(ask_briefly())}
    except (DaemonUnavailable, DaemonRefused, OSError, TimeoutError):
        return set()


def watch(group: Fleet, tables: dict[str, list[Daemon]]) -> Watch:
    """Poll until every daemon has exited (or the deadline): the first daemon's view of the
    LAN while it runs, how far each table has got (from its first daemon), and the memory
    of all the daemons — what a failure needs to tell a slow table from a stuck one."""
    seen = Watch()
    everyone = [daemon for table in tables.values() for daemon in table]
    watched = everyone[0]
    while group.remaining() > 0 and any(d.process.poll() is None for d in everyone):
        if watched.process.poll() is None:
            found = group.status(watched)
            if found is not None:
                seen.peers = max(seen.peers, len(found["peers"]))
                seen.up = max(seen.up, sum(p["state"] == "up" for p in found["peers"]))
            seen.table_names |= table_names(watched)
        for name, table in tables.items():
            found = group.status(table[0]) if table[0].process.poll() is None else None
            if found is not None and found["tables"]:
                seen.scored[name] = found["tables"][0]["scored"]
        seen.rss_kib = max(seen.rss_kib, sum(resident_kib(d.process.pid) for d in everyone))
        time.sleep(POLL)
    return seen


def test_ten_tables_of_five_play_three_deals_each_at_once_on_one_lan(tmp_path: Path) -> None:
    hosts = TABLES * SEATS
    names = [f"table{t}" for t in range(TABLES)]
    with lan_of(hosts) as lan, fleet(lan, tmp_path, budget=BUDGET) as group:
        # The daemons are this process's children (``ip netns exec`` execs them): their CPU
        # time lands in RUSAGE_CHILDREN when they are reaped, and only theirs meanwhile.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        tables = {
            name: [
                group.start(
                    t * SEATS + s,
                    f"{name}-{s}",
                    "--table",
                    name,
                    "--seats",
                    str(SEATS),
                    "--invite",
                    f"K{t:02d}Q-7M9X",  # letters and digits: tarotd refuses a weak code
                    "--deals",
                    str(DEALS),
                    "--timeout",
                    "60",
                )
                for s in range(SEATS)
            ]
            for t, name in enumerate(names)
        }
        seen = watch(group, tables)
        print(f"\nload: {seen.summary()}")
        group.wait([daemon for table in tables.values() for daemon in table])
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        for name, table in tables.items():
            assert check_table(group, table, deals=DEALS)["table"] == name
    deals = TABLES * DEALS
    print(
        f"load: {hosts} daemons, {TABLES} tables of {SEATS}, {deals} deals in {wall:.0f} s wall; "
        f"CPU {cpu:.0f} s in all, {cpu / deals:.1f} s per deal; largest daemon peak RSS "
        f"{after.ru_maxrss / 1024:.0f} MiB"
    )
    assert seen.peers >= hosts - 1, (
        f"discovery: the watched daemon saw only {seen.peers} of {hosts - 1} peers"
    )
    assert seen.table_names >= set(names), f"its lobby heard of {sorted(seen.table_names)} only"
