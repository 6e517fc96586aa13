"""Long runs of real daemons on 127.0.0.1: the soak and the crash storm of issue 8.

    scripts/soak [--deals 500] [--players 5] [--seed 1]
    scripts/crash-storm [--deals 50] [--players 5] [--seed 1]

Both start a table of bot daemons with static peers (``lab/loopback.py``, as the tests do),
watch it, check every score sheet at the end and print one JSON object of figures; the exit
status is 0 only if every check passed.  They are scripts rather than tests because they run
for tens of minutes; the default test suite covers the same paths in miniature.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client.api import DaemonRefused, DaemonUnavailable, ask
from lab.loopback import daemon_argv, free_ports, log_path, resident_kib, scores, spawn


@dataclass
class Table:
    """A table of bot daemons, one seat each, restartable with the same home and port."""

    directory: Path
    players: int
    deals: int
    extra: list[list[str]]
    timeout: float
    ports: list[int] = field(init=False)
    processes: list[subprocess.Popen[bytes]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.ports = free_ports(self.players)
        self.processes = [self._spawn(i) for i in range(self.players)]

    def home(self, i: int) -> Path:
        return self.directory / f"d{i}"

    def _spawn(self, i: int) -> subprocess.Popen[bytes]:
        peers = [(self.home(j), port) for j, port in enumerate(self.ports) if j != i]
        argv = daemon_argv(
            self.home(i),
            f"joueur{i}",
            self.ports[i],
            peers,
            seats=self.players,
            deals=self.deals,
            timeout=self.timeout,
            extra=self.extra[i],
        )
        return spawn(argv, log_path(self.directory, i))

    def kill_and_restart(self, i: int, pause: float) -> None:
        process = self.processes[i]
        if process.poll() is not None:
            return  # it has finished its deals
        process.send_signal(signal.SIGKILL)
        process.wait()
        time.sleep(pause)
        self.processes[i] = self._spawn(i)

    def scored(self) -> int | None:
        """Deals scored so far, as the first daemon still running tells (None: no answer)."""
        for i, process in enumerate(self.processes):
            if process.poll() is None:
                try:
                    status = asyncio.run(ask(self.home(i), "status", timeout=5))
                except (DaemonUnavailable, DaemonRefused, OSError):
                    continue
                tables = status.get("tables") or []
                return int(tables[0]["scored"]) if tables else 0
        return None

    def running(self) -> bool:
        return any(p.poll() is None for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    def check(self) -> dict[str, Any]:
        """The end: every daemon exited 0, every sheet identical, every row sums to zero."""
        codes = [p.returncode for p in self.processes]
        sheets = [scores(self.home(i)) for i in range(self.players)]
        deals = sheets[0]["deals"]
        assert isinstance(deals, list), "a score sheet's deals are a JSON list"
        audits = [d["audit"] if d["audit"] == "ok" else d.get("void", "abandoned") for d in deals]
        return {
            "exit_codes": codes,
            "sheets_identical": all(sheet == sheets[0] for sheet in sheets),
            "scores_identical": all(_scores(sheet) == _scores(sheets[0]) for sheet in sheets),
            "deals": len(deals),
            "audits_ok": audits.count("ok"),
            "abandoned": [a for a in audits if a != "ok"],
            "rows_sum_to_zero": all(sum(d["scores"]) == 0 for d in deals),
            "tracebacks": sum(
                "Traceback" in log_path(self.directory, i).read_text(errors="replace")
                for i in range(self.players)
            ),
        }


def _scores(sheet: dict[str, Any]) -> list[object]:
    """What a score sheet says of the game: each deal's contract, taker and row, the totals.
    (Who is named for an abandoned deal is each daemon's own account of who fell silent.)"""
    return [
        [(d["deal"], d["contract"], d["taker"], d["scores"]) for d in sheet["deals"]],
        sheet["totals"],
    ]


def soak(args: argparse.Namespace, directory: Path) -> tuple[dict[str, Any], bool]:
    faults = [
        ["--faults", f"drop=0.05,duplicate=0.05,reorder=0.05,delay=200,seed={args.seed * 100 + i}"]
        for i in range(args.players)
    ]
    table = Table(directory, args.players, args.deals, faults, timeout=60)
    started = time.monotonic()
    rss_at: dict[int, list[float]] = {}
    # progress on stderr as it goes
    marks = sorted({10, *range(25, args.deals, 25), args.deals - 1})
    try:
        while table.running():
            time.sleep(2)
            scored = table.scored()
            for mark in marks:
                if scored is not None and scored >= mark and mark not in rss_at:
                    rss_at[mark] = [round(resident_kib(p.pid) / 1024, 1) for p in table.processes]
                    print(
                        f"deal {scored}: RSS {rss_at[mark]} MiB, {time.monotonic() - started:.0f} "
                        "s",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        table.stop()
    wall = time.monotonic() - started
    result = table.check()
    result.update(
        {
            "wall_s": round(wall, 1),
            "s_per_deal": round(wall / max(1, result["deals"]), 2),
            "rss_mb_at_deal": {str(k): v for k, v in rss_at.items()},
            "faults": faults[0][1].rsplit(",", 1)[0],
        }
    )
    ok = (
        result["sheets_identical"]
        and result["deals"] == args.deals
        and result["audits_ok"] == args.deals
        and result["rows_sum_to_zero"]
        and not result["tracebacks"]
        and set(result["exit_codes"]) == {0}
    )
    return result, ok


def crash_storm(args: argparse.Namespace, directory: Path) -> tuple[dict[str, Any], bool]:
    rng = random.Random(args.seed)
    table = Table(
        directory, args.players, args.deals, [[] for _ in range(args.players)], timeout=60
    )
    started, kills = time.monotonic(), 0
    try:
        while all(p.poll() is None for p in table.processes):  # until the first one is done
            time.sleep(rng.uniform(2, 6))
            victim = rng.randrange(args.players)
            if table.processes[victim].poll() is None:
                table.kill_and_restart(victim, pause=rng.uniform(0, 2))
                kills += 1
                print(
                    f"kill -9 joueur{victim} (kill {kills}, deal {table.scored()}, "
                    f"{time.monotonic() - started:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
            if time.monotonic() - started > args.budget:
                print("budget exhausted", file=sys.stderr)
                break
            if any(p.returncode not in (None, 0) for p in table.processes):
                print("a daemon failed: stopping the storm", file=sys.stderr)
                break
        calm = time.monotonic() + 120  # the others finish, or they cannot
        while table.running() and time.monotonic() < calm:
            time.sleep(1)
    finally:
        table.stop()
    result = table.check()
    result.update({"kills": kills, "wall_s": round(time.monotonic() - started, 1)})
    ok = (
        result["scores_identical"]
        and result["deals"] == args.deals
        and result["rows_sum_to_zero"]
        and all(a.startswith("abandoned") for a in result["abandoned"])
        and set(result["exit_codes"]) == {0}
    )
    return result, ok


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", choices=("soak", "crash-storm"))
    parser.add_argument("--deals", type=int, default=None)
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--budget", type=float, default=4 * 3600, help="seconds before the crash storm gives up"
    )
    parser.add_argument("--keep", action="store_true", help="keep the daemons' homes and logs")
    args = parser.parse_args()
    args.deals = args.deals or (500 if args.run == "soak" else 50)
    directory = Path(tempfile.mkdtemp(prefix=f"tarot-{args.run}-"))
    run = soak if args.run == "soak" else crash_storm
    result, ok = run(args, directory)
    result.update(
        {
            "run": args.run,
            "players": args.players,
            "seed": args.seed,
            "ok": ok,
            "homes": str(directory),
        }
    )
    print(json.dumps(result, indent=1))
    if ok and not args.keep:
        subprocess.run(["rm", "-rf", str(directory)], check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
