"""How controlled estimates behave at small n: the simulation behind stats/estimability.py's thresholds.

Style-controlled Bradley-Terry: four models with true strengths 0.6, 0.2, -0.2, -0.6, each with
its own typical answer length (log-lengths 0.5 apart), and a per-answer spread `sigma` around it:
the smaller sigma, the more a model's length is its identity (the variance inflation, VIF, of the
length coefficient grows). Winners follow strength plus 1.0 x the length ratio. For each number
of votes and sigma, `--seeds` data sets are fitted (stats/style.py's design and fit, no
bootstrap) and sorted by their VIF; a fit is counted as
- reversed when the strongest model's estimate is not above the weakest's, and
- uninformative when the 95 % interval of (strongest - weakest) is wider than +/- 1.2, the whole
  true spread.
Length-controlled win rate: a candidate as good as the reference (theta 0) whose answers are
longer by 200 x shift characters, give or take 200 (the shift sets the VIF), length effect phi 1; a rate counts
as wild when it is more than 0.25 from the true 0.5 or its interval is wider than 0.5.

    .venv/bin/python bench/bench_small_n.py [--seeds 40]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stats.estimability import intercept_inflation, variance_inflation  # noqa: E402
from stats.length_control import length_features  # noqa: E402
from stats.logistic import SeparationError, fit_logistic  # noqa: E402
from stats.style import design_gram, fit_design, rms_scales, style_design, style_ratios  # noqa: E402

STRENGTH = np.array([0.6, 0.2, -0.2, -0.6])
VIF_BUCKETS = [(0, 2), (2, 5), (5, 10), (10, 30), (30, np.inf)]


def style_case(rng, votes: int, sigma: float):
    """(VIF of the length coefficient, reversed, uninformative) for one simulated data set; None
    when the fit has no finite estimate."""
    m = len(STRENGTH)
    a = rng.integers(0, m, votes)
    b = (a + rng.integers(1, m, votes)) % m
    typical = np.log(600) + 0.5 * (np.arange(m) - 1.5)
    length_a = np.exp(typical[a] + rng.normal(0, sigma, votes))
    length_b = np.exp(typical[b] + rng.normal(0, sigma, votes))
    ratio = (length_a - length_b) / (length_a + length_b)
    p = 1 / (1 + np.exp(-(STRENGTH[a] - STRENGTH[b] + 1.0 * ratio)))
    outcome = (rng.random(votes) < p).astype(float)
    ratios = style_ratios(length_a[:, None], length_b[:, None])
    z = ratios / rms_scales(ratios)
    design = style_design(a, b, outcome, z, models=m, l2=0.01)
    inflation = variance_inflation(design.basis.T @ design_gram(design, np.ones(votes)) @ design.basis, [m - 1])[0]
    try:
        theta, _, fitted = fit_design(design)
    except (SeparationError, ValueError, RuntimeError):
        return None
    c = fitted.covariance
    spread_se = np.sqrt(max(c[0, 0] + c[m - 1, m - 1] - 2 * c[0, m - 1], 0.0))
    return inflation, theta[0] <= theta[m - 1], 1.96 * spread_se > 1.2


def length_case(rng, items: int, shift: float):
    """(VIF, wild) for one candidate; None without a finite estimate."""
    reference = rng.lognormal(np.log(800), 0.2, items)
    candidate = np.clip(reference + 200 * rng.normal(shift, 1.0, items), 1, None)
    feature, _ = length_features(candidate, reference)
    p = 1 / (1 + np.exp(-feature))
    outcomes = (rng.random(items) < p).astype(float).tolist()
    inflation = intercept_inflation(feature)
    # The plain fit, even where stats/length_control.py now refuses it, to see what it would say.
    try:
        fitted = fit_logistic(np.column_stack([np.ones(items), feature]), np.asarray(outcomes))
    except (SeparationError, ValueError, RuntimeError):
        return None
    rate = expit(fitted.coef[0])
    low, high = expit(fitted.coef[0] - 1.96 * fitted.se[0]), expit(fitted.coef[0] + 1.96 * fitted.se[0])
    return inflation, abs(rate - 0.5) > 0.25 or high - low > 0.5


def table(title: str, sizes, cases: dict, columns: tuple[str, ...]) -> None:
    print(f"\n{title}")
    header = "VIF".ljust(10) + "".join(f"{f'n={n}':>22}" for n in sizes)
    print(header)
    for low, high in VIF_BUCKETS:
        cells = []
        for n in sizes:
            rows = [case for case in cases[n] if low <= case[0] < high]
            if not rows:
                cells.append(f"{'-':>22}")
                continue
            rates = " ".join(f"{100 * np.mean([row[1 + k] for row in rows]):3.0f}%" for k in range(len(columns)))
            cells.append(f"{rates} ({len(rows):3d})".rjust(22))
        print(f"{f'{low:g}-{high:g}':<10}" + "".join(cells))
    print("cells: " + ", ".join(columns) + " (number of data sets)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [30, 60, 120, 250, 500]
    style: dict[int, list[tuple]] = {n: [] for n in sizes}
    for n in sizes:
        for sigma in (0.02, 0.05, 0.1, 0.2, 0.5):
            for _ in range(args.seeds):
                case = style_case(rng, n, sigma)
                if case is not None:
                    style[n].append(case)
    table(
        "Style-controlled BT, 4 models (3 strengths + 1 coefficient = 4 parameters):",
        sizes,
        style,
        ("reversed", "uninformative"),
    )
    items = [10, 20, 30, 60, 120]
    length: dict[int, list[tuple]] = {n: [] for n in items}
    for n in items:
        for shift in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0):
            for _ in range(args.seeds):
                case = length_case(rng, n, shift)
                if case is not None:
                    length[n].append(case)
    table("Length-controlled win rate, one candidate against the reference:", items, length, ("wild",))


if __name__ == "__main__":
    main()
