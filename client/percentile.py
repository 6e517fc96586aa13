"""The nearest-rank percentile, shared by ``tarot match`` (the bots' think times) and the lab's
benchmark (``lab/bench/stats.py``), which may import the product but not the other way round."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest sample with at least ``fraction`` of the
    samples at or below it.  Never an interpolation between two samples, so a p99 is always
    a time that really happened; with fewer than 100 samples the p99 is the largest one."""
    if not values:
        raise ValueError("no samples")
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
