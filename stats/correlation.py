"""Correlations with p-values and Fisher-z intervals, and position bias: pure functions, no Django.

Below MIN_POINTS pairs a correlation is shown but not tested: `correlations` keeps the
coefficient (callers grey it out) and returns `meaningful: False`, a `reason`, and no p-value
or interval. Why five: with four points the smallest two-sided exact permutation p-value of
Spearman's rho or Kendall's tau is 2/4! = 0.083, so no ordering of four models can be
significant at 5 %, while the asymptotic formulas still print p = 0.0000 for a perfect
order of three. At five the exact minimum is 2/5! = 0.017.

Spearman's p-value is exact (every permutation of the ranks) up to EXACT_SPEARMAN_MAX points:
scipy's t approximation gives p ~ 1e-24 for a perfect order of five. Kendall's is scipy's
exact test for small samples without ties; Pearson's the usual t test (exact under normality).
"""

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from stats.intervals import proportion

MIN_POINTS = 5
EXACT_SPEARMAN_MAX = 8
PERFECT_NOTE = (
    "a perfect correlation: Fisher's z is infinite, so the interval has no width; "
    "that is not certainty, the p-value says how surprising it is"
)

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


def spearman_exact_p(x: ArrayLike, y: ArrayLike) -> float:
    """Two-sided permutation p-value of Spearman's rho over all n! orders of y against x.

    Ties get average ranks, and the permutation distribution is that of those ranks, so the
    test stays exact with ties. For n <= EXACT_SPEARMAN_MAX (40,320 orders at 8).
    """
    rank_x = stats.rankdata(x)
    rank_y = stats.rankdata(y)
    n = len(rank_x)
    if n > EXACT_SPEARMAN_MAX:
        raise ValueError(f"The exact Spearman test enumerates n! orders; n = {n} is above {EXACT_SPEARMAN_MAX}.")
    cx = rank_x - rank_x.mean()
    cy = rank_y - rank_y.mean()
    scale = math.sqrt(float(cx @ cx) * float(cy @ cy))
    observed = float(cx @ cy) / scale
    orders = np.array(list(itertools.permutations(range(n))))
    rhos = (cy[orders] @ cx) / scale
    # The tolerance counts permutations that tie with the observed value despite rounding.
    return float(np.mean(np.abs(rhos) >= abs(observed) - 1e-12))


def correlations(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> dict:
    """Pearson, Spearman and Kendall between paired values, each with p-value and interval.

    Returns {"n", "meaningful", "reason", "notes", "pearson": {"r", "p", "low", "high"},
    "spearman": ..., "kendall": ...}. Fewer than three pairs, or a constant series, give None
    coefficients; fewer than MIN_POINTS give the coefficients with p, low and high None (see
    module docstring). `meaningful` is True only when p-values are reported. `notes` maps a
    coefficient whose interval has zero width (|r| = 1) to why.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    if len(y) != n:
        raise ValueError(f"Correlations need paired values: {n} x values but {len(y)} y values.")
    out: dict[str, Any] = {"n": n, "meaningful": True, "reason": None, "notes": {}}
    constant = n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0
    if n < 3:
        out.update(meaningful=False, reason=f"{n} points: a correlation needs at least 3.")
    elif constant:
        out.update(meaningful=False, reason="One of the two series is constant: no correlation is defined.")
    elif n < MIN_POINTS:
        out.update(
            meaningful=False,
            reason=f"Only {n} points: below {MIN_POINTS} no p-value or interval is reported, "
            "because no ordering of so few points can be told apart from chance.",
        )
    for kind, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        if constant:
            out[kind] = {"r": None, "p": None, "low": None, "high": None}
            continue
        result = function(x, y)
        r = float(result.statistic)
        if abs(r) > 1 - 1e-12:  # a perfect order computes as 0.9999999999999999
            r = math.copysign(1.0, r)
        if not out["meaningful"]:
            out[kind] = {"r": r, "p": None, "low": None, "high": None}
            continue
        p = spearman_exact_p(x, y) if kind == "spearman" and n <= EXACT_SPEARMAN_MAX else float(result.pvalue)
        interval = fisher_interval(r, n, kind=kind, level=level)
        if interval is not None and interval[0] == interval[1]:
            out["notes"][kind] = PERFECT_NOTE
        out[kind] = {
            "r": r,
            "p": p,
            "low": None if interval is None else interval[0],
            "high": None if interval is None else interval[1],
        }
    return out


def position_bias(first_wins: int, second_wins: int, *, level: float = 0.95) -> dict:
    """How often the answer shown first (on the left, or as "Assistant A") wins among decisive
    verdicts, with a Wilson interval and an exact two-sided binomial p-value against one half.

    Serves human votes (left / right) and judge verdicts (first / second position) alike:
    returns {"first_wins", "second_wins", "decisive", "first_rate", "p", "low", "high"} and,
    under the names the human-vote pages use, the same numbers as "left_wins", "right_wins"
    and "left_rate". Without decisive verdicts the rate, p and interval are None.
    """
    if first_wins < 0 or second_wins < 0:
        raise ValueError(f"Win counts cannot be negative, got {first_wins} and {second_wins}.")
    decisive = first_wins + second_wins
    rate = proportion(first_wins, decisive, level=level)
    p = float(stats.binomtest(first_wins, decisive, 0.5).pvalue) if decisive else None
    return {
        "first_wins": first_wins,
        "second_wins": second_wins,
        "decisive": decisive,
        "first_rate": rate["rate"],
        "left_wins": first_wins,
        "right_wins": second_wins,
        "left_rate": rate["rate"],
        "p": p,
        "low": rate["low"],
        "high": rate["high"],
    }
