"""Length-controlled win rate of pairwise judge runs: pure numpy and scipy, no Django.

AlpacaEval 2's idea (Dubois, Galambosi, Liang and Hashimoto, "Length-Controlled AlpacaEval",
2024), fitted only on the run's own judgments: for each candidate against the reference model,

    logit P(candidate wins) = theta + phi * tanh((len_c - len_r) / sd(len_c - len_r))

by maximum likelihood, and the length-controlled win rate is the prediction at zero length
difference, sigmoid(theta): the answer to "how often would the candidate win if its answers
were as long as the reference's?". The tanh bounds the length term so that a few enormous
answers cannot dominate; sd is the sample standard deviation of that candidate's differences.
AlpacaEval's GLM also has an instruction-difficulty term fitted on its whole leaderboard; with
only this run's judgments there is nothing to fit it on, so it is left out, and no extra
regularisation of phi is applied (the fit is the plain maximum-likelihood estimate).

Outcomes: 1 the candidate won, 0 it lost, 0.5 a tie (half a win, as everywhere in Userbench);
None is a parse failure, counted and left out. Intervals: the delta method on the logit scale,
sigmoid(theta -/+ z se(theta)), which stays inside (0, 1); or, with rounds > 0, a percentile
bootstrap over judgments (seeded). The raw win rate's interval is mean +/- z standard errors,
AlpacaEval's standard error.

Small n (stats/estimability.py says why these thresholds): when the length differences barely
vary (variance inflation of the intercept against the length term above 30), the rate at equal
length would be an extrapolation and is "not estimable"; below 30 parsed judgments, times that
inflation, the rate is computed and flagged `too_few`.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from stats.estimability import MAX_VIF, MIN_ITEMS, intercept_inflation
from stats.intervals import normal_quantile, percentile_interval, zero_width_note
from stats.logistic import SeparationError, fit_logistic
from stats.ranking import competition_ranks


def length_features(candidate_lengths: ArrayLike, reference_lengths: ArrayLike) -> tuple[np.ndarray, float]:
    """tanh((len_c - len_r) / sd) per judgment and the sd (sample standard deviation; 0 when the
    differences do not vary, and then the feature is 0)."""
    diff = np.asarray(candidate_lengths, dtype=float) - np.asarray(reference_lengths, dtype=float)
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else 0.0
    return (np.tanh(diff / sd) if sd > 0 else np.zeros_like(diff)), sd


def length_controlled_win_rate(
    candidate_lengths: Sequence[float],
    reference_lengths: Sequence[float],
    outcomes: Sequence[float | None],
    *,
    level: float = 0.95,
    rounds: int = 0,
    seed: int = 0,
) -> dict:
    """Raw and length-controlled win rate of one candidate against the reference.

    Inputs are aligned per judgment; outcomes in {1, 0.5, 0} or None (parse failure).
    Returns {"n", "failures", "raw", "raw_low", "raw_high", "lc", "lc_low", "lc_high", "theta",
    "theta_se", "length_coef", "length_se", "length_low", "length_high", "length_sd",
    "interval" ("delta" or "bootstrap"), "skipped_rounds", "note", "estimable", "too_few",
    "variance_inflation"}. When the model has no finite estimate (the candidate won or lost
    everything), the length differences are all equal but not zero, or they vary so little that
    length and candidate cannot be told apart (variance inflation above
    stats.estimability.MAX_VIF), lc is None, `estimable` False and `note` says why. When every
    difference is zero, there is no length effect to remove and lc equals the raw rate. `too_few`
    is True below stats.estimability.MIN_ITEMS parsed judgments times the variance inflation (at
    least 1): the rate is computed, to be shown greyed.
    """
    if not len(candidate_lengths) == len(reference_lengths) == len(outcomes):
        raise ValueError(
            f"Need one pair of lengths per outcome: {len(candidate_lengths)}, {len(reference_lengths)} "
            f"and {len(outcomes)} values."
        )
    for number, outcome in enumerate(outcomes, start=1):
        if outcome is not None and outcome not in (0, 0.5, 1):
            raise ValueError(f"Judgment {number}: outcome {outcome!r} is not 1 (win), 0.5 (tie), 0 (loss) or None.")
    parsed = np.array([o is not None for o in outcomes], dtype=bool)
    y = np.array([o for o in outcomes if o is not None], dtype=float)
    cand = np.asarray(candidate_lengths, dtype=float)[parsed]
    ref = np.asarray(reference_lengths, dtype=float)[parsed]
    if np.any(cand < 0) or np.any(ref < 0):
        raise ValueError("Lengths must be non-negative.")
    n = int(y.size)
    z = normal_quantile(level)
    out: dict[str, Any] = {
        "n": n,
        "failures": int((~parsed).sum()),
        "raw": None,
        "raw_low": None,
        "raw_high": None,
        "lc": None,
        "lc_low": None,
        "lc_high": None,
        "theta": None,
        "theta_se": None,
        "length_coef": None,
        "length_se": None,
        "length_low": None,
        "length_high": None,
        "length_sd": None,
        "interval": "bootstrap" if rounds > 0 else "delta",
        "skipped_rounds": 0,
        "note": None,
        "estimable": True,
        "too_few": False,
        "variance_inflation": None,
    }
    if n == 0:
        out.update(note="No parsed judgments.", estimable=False, too_few=True)
        return out
    out["too_few"] = n < MIN_ITEMS
    raw = float(y.mean())
    raw_se = float(np.std(y, ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    out.update(raw=raw, raw_low=max(0.0, raw - z * raw_se), raw_high=min(1.0, raw + z * raw_se))
    feature, sd = length_features(cand, ref)
    out["length_sd"] = sd
    diff = cand - ref
    with_length = sd > 0
    if not with_length and np.any(diff != 0):
        out["note"] = "Every length difference is the same, and not zero: length and candidate cannot be told apart."
        out["estimable"] = False
        return out
    X = np.column_stack([np.ones(n), feature]) if with_length else np.ones((n, 1))
    try:
        fitted = fit_logistic(X, y)
    except (SeparationError, ValueError) as error:
        out.update(note=f"No finite estimate: {error}", estimable=False)
        return out
    if with_length:
        inflation = intercept_inflation(feature)
        out["variance_inflation"] = inflation if np.isfinite(inflation) else None
        if not inflation <= MAX_VIF:
            # The fit exists but extrapolates: the candidate's length differences barely vary, so
            # "the candidate" and "its length" are one column twice (stats/estimability.py).
            out.update(
                note=(
                    f"Not estimable: the length differences barely vary (variance inflation {inflation:.0f}, "
                    f"above {MAX_VIF:g}), so the candidate and its length cannot be told apart; a rate at "
                    "equal length would be an extrapolation."
                ),
                estimable=False,
            )
            return out
        # Collinearity short of that costs items: the needed number grows with the inflation.
        out["too_few"] = n < MIN_ITEMS * max(1.0, inflation)
    theta, theta_se = float(fitted.coef[0]), float(fitted.se[0])
    out.update(theta=theta, theta_se=theta_se, lc=float(expit(theta)))
    if with_length:
        coef, se = float(fitted.coef[1]), float(fitted.se[1])
        out.update(length_coef=coef, length_se=se, length_low=coef - z * se, length_high=coef + z * se)
    if rounds > 0:
        rng = np.random.default_rng(seed)
        draws = np.full(rounds, np.nan)
        for r in range(rounds):
            weights = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
            try:
                draws[r] = expit(fit_logistic(X, y, weights=weights, initial=fitted.free).coef[0])
            except (SeparationError, ValueError, RuntimeError):
                continue
        out["skipped_rounds"] = int(np.isnan(draws).sum())
        if out["skipped_rounds"] < rounds:
            low, high = percentile_interval(draws, level=level)
            out.update(lc_low=low, lc_high=high, note=zero_width_note(low, high))
    else:
        out.update(lc_low=float(expit(theta - z * theta_se)), lc_high=float(expit(theta + z * theta_se)))
    return out


def length_controlled_win_rates(
    rows: Iterable[tuple[str, float, float, float | None]],
    *,
    reference: str,
    level: float = 0.95,
    rounds: int = 0,
    seed: int = 0,
) -> list[dict]:
    """Per candidate: {"model", "reference", "rank", **length_controlled_win_rate(...)}.

    rows: (candidate, candidate_length, reference_length, outcome) per judgment. The reference
    model gets a row of its own at exactly 50 % (it ties with itself), as in ChineseAlpacaEval.
    Rows are sorted by length-controlled win rate (None last), ranked by competition ranks.
    """
    by_candidate: dict[str, list[tuple[float, float, float | None]]] = defaultdict(list)
    for number, row in enumerate(rows, start=1):
        try:
            candidate, candidate_length, reference_length, outcome = row
        except (TypeError, ValueError):
            raise ValueError(
                f"Row {number}: expected (candidate, candidate_length, reference_length, outcome)."
            ) from None
        if candidate == reference:
            raise ValueError(f"Row {number}: the reference {reference!r} is judged against itself.")
        by_candidate[candidate].append((candidate_length, reference_length, outcome))
    results: list[dict[str, Any]] = []
    for candidate in sorted(by_candidate):
        lengths_c, lengths_r, outcomes = zip(*by_candidate[candidate])
        results.append(
            {
                "model": candidate,
                "reference": False,
                **length_controlled_win_rate(lengths_c, lengths_r, outcomes, level=level, rounds=rounds, seed=seed),
            }
        )
    results.append(
        {
            "model": reference,
            "reference": True,
            "n": 0,
            "failures": 0,
            "raw": 0.5,
            "raw_low": None,
            "raw_high": None,
            "lc": 0.5,
            "lc_low": None,
            "lc_high": None,
            "theta": 0.0,
            "theta_se": None,
            "length_coef": None,
            "length_se": None,
            "length_low": None,
            "length_high": None,
            "length_sd": None,
            "interval": None,
            "skipped_rounds": 0,
            "note": "The reference model, at 50 % by definition.",
            "estimable": True,
            "too_few": False,
            "variance_inflation": None,
        }
    )
    ranks = competition_ranks([row["lc"] for row in results])
    for result, rank in zip(results, ranks):
        result["rank"] = rank
    results.sort(key=lambda row: (row["rank"] is None, row["rank"] or 0, row["model"]))
    return results
