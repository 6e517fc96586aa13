"""A beacon flood must not stop an invite-code table from forming (issue 36, item 1), between
real daemons on a simulated LAN.

The attack as at a club night: the opener starts ``--table club --seats 3 --invite CODE``
first; then a host of the LAN broadcasts signed beacons, each from a fresh key announcing a
dead peer port, from 40 addresses, at 20 or 1,000 a second; then, once the flood has had
time to fill what it can, two players start with the same code.  The table must form at all
three within 40 s — on the code before the fix (8ffff83) it did not under 1,000 a second in 3
runs of 3: fresh keys took every discovery entry and every link, and the players were never
linked; under 20 a second it took 13.5-15.5 s (and that case fails there only for want of the
``discovery_refused`` counts in ``status``).  ``named``:
every fake beacon also announces a table ``club``, as an attacker who read the opener's
beacons would.

The seconds from the players' start to the table at all three are printed (``-s``) and, with
``TAROT_DISCOVERY_FLOOD_FIGURES=FILE``, appended to FILE as one JSON line a run;
``TAROT_DISCOVERY_FLOOD_RUNS=N`` runs each case N times (docs/security.md quotes the median
of 3).  Root only (network namespaces), and slow: 20 to 60 s a run.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lan import NEEDS_ROOT, ROOT, Daemon, Fleet, fleet, lan_of

from lab.lansim import Lan
from tarotd.lobby import Invite

pytestmark = [pytest.mark.daemons, NEEDS_ROOT, pytest.mark.slow]

SUBNET = "198.18.40."  #: this module's LAN, apart from the other tests'
OPENER, PLAYERS, ATTACKER = 0, (1, 2), 3
SOURCES = 40  #: addresses the attacker sends from
FIRST_SOURCE = 100
LEAD = 12.0  #: seconds of flood before the players start: it fills discovery and the links
#: Seconds the table gets to form (the issue saw none in 30-40 s).  Not less, even at 20 beacons
#: a second (13.5-15.5 s before, 3.1-5.0 s now): on a machine shared with other work, the
#: same runs took twice as long (docs/security.md).
FORM_BUDGET = 40.0


def start_player(group: Fleet, host: int, name: str, code: str) -> Daemon:
    return group.start(
        host,
        name,
        *("--table", "club", "--seats", "3", "--invite", code),
        *("--deals", "20", "--timeout", "60", "--think", "0.25"),
    )


def start_flood(lan: Lan, rate: int, named: bool) -> subprocess.Popen[str]:
    sources = [f"{SUBNET}{FIRST_SOURCE + n}" for n in range(SOURCES)]
    for address in sources:
        lan.add_address(ATTACKER, address)
    argv = [sys.executable, "tests/flooder.py", "beacons", "--count", str(rate * 10)]
    argv += ["--rate", str(rate), "--sources", ",".join(sources), "--broadcast", f"{SUBNET}255"]
    if named:
        argv += ["--table", "club"]
    return lan.run(
        ATTACKER, argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def stop_flood(flooder: subprocess.Popen[str]) -> dict[str, Any]:
    flooder.terminate()
    out, err = flooder.communicate(timeout=60)
    assert flooder.returncode == 0, err
    report: dict[str, Any] = json.loads(out.splitlines()[-1])
    return report


def started(group: Fleet, daemon: Daemon) -> dict[str, Any]:
    while group.remaining() > 0:
        if daemon.process.poll() is not None:
            group.fail(f"{daemon.home.name} exited")
        status = group.status(daemon)
        if status is not None:
            return status
        time.sleep(0.2)
    group.fail(f"{daemon.home.name} never answered")
    raise AssertionError  # not reached


def seconds_to_form(
    group: Fleet, daemons: list[Daemon], began: float, budget: float
) -> float | None:
    """Seconds from ``began`` until every daemon plays a table, or None after ``budget``."""
    formed: set[str] = set()
    while time.monotonic() - began < budget:
        for daemon in daemons:
            if daemon.home.name in formed:
                continue
            if daemon.process.poll() is not None:
                group.fail(f"{daemon.home.name} exited")
            status = group.status(daemon)
            if status is not None and status["tables"]:
                formed.add(daemon.home.name)
        if len(formed) == len(daemons):
            return time.monotonic() - began
        time.sleep(0.2)
    return None


def one_run(tmp_path: Path, rate: int, named: bool, budget: float) -> dict[str, Any]:
    code = Invite.draw(secrets.token_bytes).code  # never a weak one, which tarotd refuses
    tmp_path.mkdir()
    budget = LEAD + 120
    with lan_of(ATTACKER + 1, "h4", SUBNET) as lan, fleet(lan, tmp_path, budget=budget) as group:
        opener = start_player(group, OPENER, "ouvreur", code)
        started(group, opener)
        flooder = start_flood(lan, rate, named) if rate else None
        try:
            time.sleep(LEAD if rate else 1.0)
            before = group.status(opener) or {}
            began = time.monotonic()
            players = [start_player(group, host, f"joueur{host}", code) for host in PLAYERS]
            seconds = seconds_to_form(group, [opener, *players], began, budget)
            after = group.status(opener) or {}
        finally:
            report = stop_flood(flooder) if flooder is not None else {}
        figures = {
            "rate": rate,
            "named": named,
            "seconds_to_form": None if seconds is None else round(seconds, 1),
            "opener_before_players": {
                "peers": len(before.get("peers", [])),
                "links": (before.get("connections") or {}).get("links"),
            },
            "discovery_refused": after.get("discovery_refused"),
            "refused": after.get("refused"),
            "flood": report,
        }
        print("discovery flood figures:", json.dumps(figures))
        if os.environ.get("TAROT_DISCOVERY_FLOOD_FIGURES"):
            with open(os.environ["TAROT_DISCOVERY_FLOOD_FIGURES"], "a") as out:
                out.write(json.dumps(figures) + "\n")
        if seconds is None:  # said once every run is done: each run is a figure
            figures["logs"] = group.logs()
        return figures


@pytest.mark.parametrize(
    ("rate", "named", "budget"),
    [
        pytest.param(0, False, FORM_BUDGET, id="no-flood"),
        pytest.param(20, False, FORM_BUDGET, id="20-a-second"),
        pytest.param(1000, False, FORM_BUDGET, id="1000-a-second"),
        pytest.param(1000, True, FORM_BUDGET, id="1000-a-second-named"),
    ],
)
def test_an_invite_table_forms_while_a_host_floods_the_lan_with_beacons_of_fresh_keys(
    tmp_path: Path, rate: int, named: bool, budget: float
) -> None:
    runs = int(os.environ.get("TAROT_DISCOVERY_FLOOD_RUNS", "1"))
    results = [one_run(tmp_path / f"run{n}", rate, named, budget) for n in range(runs)]
    seconds = [result["seconds_to_form"] for result in results]
    for result in results:
        if result["seconds_to_form"] is None:
            pytest.fail(
                f"no table within {budget:.0f} s of the players' start in "
                f"{seconds.count(None)} of {runs} runs under a flood of {rate} beacons a second "
                f"(seconds to form: {seconds}):\n{result.pop('logs')}\n{json.dumps(result)}",
                pytrace=False,
            )
    print(
        f"discovery flood at {rate}/s{' named' if named else ''}: {seconds} s, median "
        f"{statistics.median(seconds)} s"
    )
    if rate:
        refused = results[-1]["discovery_refused"] or {}
        assert sum(refused.values()) > 0, results[-1]  # the flood shows in status
