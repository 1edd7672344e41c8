"""Small interval helpers shared by the statistics modules: pure Python and numpy, no Django.

Kept free of scipy.stats on purpose: stats/ranking.py imports this module and is loaded
with the app, where scipy.stats would add about half a second (see annotation/exports.py).
"""

import math
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

ZERO_WIDTH_NOTE = "all bootstrap rounds gave the same value: too few votes or a single outcome"
NO_ROUNDS_NOTE = "no bootstrap round had a finite estimate (alpha or l2 = 0 on sparse votes): no interval"


def normal_quantile(level: float) -> float:
    """The two-sided standard normal quantile of a confidence level (0.95 -> 1.959964)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}.")
    return NormalDist().inv_cdf(0.5 + level / 2)


def zero_width_note(low: float | None, high: float | None, *, note: str = ZERO_WIDTH_NOTE) -> str | None:
    """`note` when an interval has no width (low == high), else None.

    A zero-width interval is not certainty: it is what a resampling method returns when the data
    hold a single outcome (every vote the same way, or only ties), so it must be explained.
    """
    if low is None or high is None:
        return None
    return note if low == high else None


def percentile_interval(draws: ArrayLike, *, level: float = 0.95, axis: int = 0) -> tuple[Any, Any]:
    """Percentile bootstrap interval of draws along `axis`, ignoring NaN rounds (rounds that had
    no estimate); returns (lower, upper) arrays, or floats for one-dimensional draws."""
    tail = (1 - level) / 2 * 100
    values = np.asarray(draws, dtype=float)
    # np.nanpercentile sorts column by column in Python: ten times np.percentile's time on 100 models.
    percentile = np.nanpercentile if np.isnan(values).any() else np.percentile
    lower, upper = percentile(values, [tail, 100 - tail], axis=axis)
    if np.ndim(lower) == 0:
        return float(lower), float(upper)
    return lower, upper


def wilson_interval(successes: int, trials: int, *, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a binomial proportion (None without trials).

    centre = (k + z^2/2) / (n + z^2), half width = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4).
    Unlike the Wald interval it never collapses to a point at 0 % or 100 %, and it stays inside [0, 1].
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"Need 0 <= successes <= trials, got {successes} of {trials}.")
    if trials == 0:
        return None
    z = normal_quantile(level)
    denominator = trials + z * z
    centre = (successes + z * z / 2) / denominator
    half = z / denominator * math.sqrt(successes * (trials - successes) / trials + z * z / 4)
    return max(0.0, centre - half), min(1.0, centre + half)


def proportion(successes: int, trials: int, *, level: float = 0.95) -> dict:
    """A rate with its Wilson interval: {"successes", "trials", "rate", "low", "high"}.

    Without trials the rate and interval are None.
    """
    interval = wilson_interval(successes, trials, level=level)
    return {
        "successes": int(successes),
        "trials": int(trials),
        "rate": successes / trials if trials else None,
        "low": None if interval is None else interval[0],
        "high": None if interval is None else interval[1],
    }
