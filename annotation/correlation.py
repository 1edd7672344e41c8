"""Correlations with p-values and Fisher-z intervals, and position bias: pure functions, no Django."""

import math

import numpy as np
from scipy import stats

# Standard-error factors of the Fisher z of each coefficient: Pearson 1/(n-3);
# Spearman 1.06/(n-3) and Kendall 0.437/(n-4) (Fieller, Hartley and Pearson 1957).
_Z_VARIANCE = {
    "pearson": (1.0, 3),
    "spearman": (1.06, 3),
    "kendall": (0.437, 4),
}


def fisher_interval(r: float, n: int, *, kind: str = "pearson", level: float = 0.95) -> tuple[float, float] | None:
    """Confidence interval of a correlation coefficient through Fisher's z; None when n is too small."""
    factor, offset = _Z_VARIANCE[kind]
    if n <= offset or r is None or math.isnan(r):
        return None
    if abs(r) >= 1:
        return (r, r)
    z = math.atanh(r)
    half = stats.norm.ppf(0.5 + level / 2) * math.sqrt(factor / (n - offset))
    return (math.tanh(z - half), math.tanh(z + half))


def correlations(x, y, *, level: float = 0.95) -> dict:
    """Pearson, Spearman and Kendall between paired values, each with p-value and interval.

    Fewer than three pairs, or a constant series, gives None coefficients rather than an error.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    out = {"n": n}
    constant = n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0
    for kind, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        if constant:
            out[kind] = {"r": None, "p": None, "low": None, "high": None}
            continue
        result = function(x, y)
        r, p = float(result.statistic), float(result.pvalue)
        interval = fisher_interval(r, n, kind=kind, level=level)
        out[kind] = {
            "r": r,
            "p": p,
            "low": None if interval is None else interval[0],
            "high": None if interval is None else interval[1],
        }
    return out


def position_bias(left_wins: int, right_wins: int, *, level: float = 0.95) -> dict:
    """How often the answer shown on the left wins among decisive votes, tested against one half."""
    decisive = left_wins + right_wins
    if decisive == 0:
        return {"left_wins": 0, "right_wins": 0, "left_rate": None, "p": None, "low": None, "high": None}
    test = stats.binomtest(left_wins, decisive, 0.5)
    interval = test.proportion_ci(confidence_level=level, method="wilson")
    return {
        "left_wins": left_wins,
        "right_wins": right_wins,
        "left_rate": left_wins / decisive,
        "p": float(test.pvalue),
        "low": float(interval.low),
        "high": float(interval.high),
    }
