"""What every measurement of ``tarot bench`` shares: the summary of its repetitions.

A single timing on a shared laptop says little (another process, the garbage collector, a
page fault); a median over repetitions says what a player usually waits, and the 99th
percentile what they wait on a bad moment.  Both come from the same samples, so a figure and
its spread are never measured in two different runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from client.percentile import percentile


class BenchError(Exception):
    """A measurement that could not be taken (a daemon that did not start, a deal that did not
    end, an audit that failed); the message says what happened and where to look."""


@dataclass(frozen=True)
class Spread:
    """The median and the 99th percentile of ``count`` repetitions of one measurement."""

    p50: float
    p99: float
    count: int


def spread(values: Sequence[float]) -> Spread:
    """Median and p99 of the samples (at least one)."""
    if not values:
        raise ValueError("no samples")
    return Spread(statistics.median(values), percentile(values, 0.99), len(values))


#: The floor's samples may differ by this much (largest less smallest, over the median) and
#: still be one machine's speed: a quiet run's differ by a few per cent.
MAX_FLOOR_SPREAD = 0.10
#: The floor runs on one thread: the share of its wall time that thread was on a core.  Below
#: this, the neighbours took the core from it during the sample.
MIN_CPU_SHARE = 0.90
#: The load average a core may carry, before or after the run, for its figures to compare.
MAX_LOAD_PER_CORE = 0.5


@dataclass(frozen=True)
class FloorCheck:
    """Whether this run's figures may be compared with another run's, as multiples of its
    floor: only if the floor was measured on a machine that gave the benchmark its cores.

    A floor multiple holds between days only if the floor sample and the figure saw the same
    share of the CPU.  On a loaded machine they do not — the floor, a short single-threaded
    sample, and the daemons' figures, five processes for minutes, are squeezed differently —
    and at a load of 10 on two cores every multiple came out 1.3–2.2× the quiet ones.  So the
    benchmark says when the floor was disturbed, and then gives no multiples at all."""

    comparable: bool
    reasons: tuple[str, ...]  #: why not, each said plainly
    spread: float  #: (largest − smallest) / median of the floor's samples
    cpu_share: float  #: the smallest share of a floor sample's wall time spent on a core
    load: tuple[float, float]  #: the one-minute load average before and after the run

    def to_json(self) -> dict[str, object]:
        return {
            "comparable": self.comparable,
            "reasons": list(self.reasons),
            "floor_spread": round(self.spread, 3),
            "floor_cpu_share": round(self.cpu_share, 3),
            "load": [round(x, 2) for x in self.load],
        }


def judge_floor(
    samples_us: Sequence[float],
    cpu_shares: Sequence[float],
    load: tuple[float, float],
    cores: int,
) -> FloorCheck:
    """Judge the floor's samples (microseconds a multiplication, and the share of each
    sample's wall time its thread ran), and the load average before and after the run on a
    machine of ``cores`` cores.  Only the load before counts: the one after is mostly the
    bench's own five daemons, and work that starts during the run shows in the floor's spread
    and core share."""
    if not samples_us or len(samples_us) != len(cpu_shares):
        raise ValueError("one CPU share for each of at least one floor sample")
    median = statistics.median(samples_us)
    spread = (max(samples_us) - min(samples_us)) / median
    share = min(cpu_shares)
    reasons = []
    if spread > MAX_FLOOR_SPREAD:
        reasons.append(
            f"the floor's samples differ by {spread:.0%} of their median (at most "
            f"{MAX_FLOOR_SPREAD:.0%} on a quiet machine)"
        )
    if share < MIN_CPU_SHARE:
        reasons.append(
            f"a floor sample's thread was on a core for {share:.0%} of its wall time (at least "
            f"{MIN_CPU_SHARE:.0%}): other work took the core"
        )
    if load[0] > MAX_LOAD_PER_CORE * cores:
        reasons.append(
            f"the load average was {load[0]:.2f} on {cores} cores before the run (at most "
            f"{MAX_LOAD_PER_CORE * cores:.2f})"
        )
    return FloorCheck(not reasons, tuple(reasons), spread, share, load)
