"""``python -m lab.faultsim`` (``scripts/fault-sim``): simulated tables under faults, by seed.

The simulator's group is installed before anything loads the protocol (see
:mod:`lab.faultsim.fakegroup`), so this module imports the rest only once that is done.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from lab.faultsim.fakegroup import install


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fault-sim",
        description="Tables of simulated daemons under cuts, pauses, kills and partitions, "
        "one run a seed; every failing seed is printed with the command that replays it.",
    )
    parser.add_argument("--players", type=int, choices=(3, 4, 5), action="append")
    parser.add_argument("--seed", type=int, help="one seed (with --verbose: its timeline)")
    parser.add_argument("--seeds", type=int, default=100, help="how many seeds from --first")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--without-closings",
        action="store_true",
        help="members only time each other out (no closings asked, served or adopted): "
        "shows what the invariants catch",
    )
    parser.add_argument("--json", action="store_true", help="a summary as JSON on stdout")
    args = parser.parse_args(argv)
    install()
    from lab.faultsim.run import simulate

    seeds = [args.seed] if args.seed is not None else range(args.first, args.first + args.seeds)
    started, runs, failed = time.monotonic(), 0, []
    for players in args.players or [3, 4, 5]:
        for seed in seeds:
            outcome = simulate(
                players, seed, args.deals, args.timeout, closings=not args.without_closings
            )
            runs += 1
            if args.verbose:
                print("\n".join(outcome.log))
            if not outcome.ok:
                failed.append(outcome)
                print(f"FAIL {outcome.replay()}", file=sys.stderr)
                for failure in outcome.failures:
                    print(f"     {failure}", file=sys.stderr)
                for fault in outcome.faults:
                    print(f"     fault: {fault}", file=sys.stderr)
    seconds = time.monotonic() - started
    summary = {"runs": runs, "failed": len(failed), "seconds": round(seconds, 1)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{runs} runs, {len(failed)} failed, in {seconds:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
