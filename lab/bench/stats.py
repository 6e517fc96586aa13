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
