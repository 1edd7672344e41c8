"""Judge diagnostics: position bias, flip rate, length bias, self-preference, parse failures and
agreement with human majorities. Pure numpy and scipy values in, plain dicts out; no Django.

Conventions. A pairwise verdict names the position that won, as the judge saw it: "first" (the
answer shown first, "Assistant A"), "second", or "tie"; None is a parse failure. Every figure
comes with how many verdicts it rests on and a 95 % interval (Wilson for rates, Wald from the
observed information for logistic slopes, t for OLS slopes and differences of means); a
zero-width bootstrap interval carries a `note`.

Lengths in length bias are normalised so that the figures do not depend on the unit:
pairwise, the difference between the first and second answer as the ratio (a - b) / (a + b)
(bounded, antisymmetric, relative; as stats/style.py) or as tanh((a - b) / sd(a - b))
(AlpacaEval 2's choice); pointwise, the length standardised over the judged answers, so the
slope is score points per standard deviation of length.
"""

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from stats.agreement import cohen_kappa
from stats.correlation import position_bias
from stats.intervals import (
    normal_quantile,
    percentile_interval,
    proportion,
    zero_width_note,
)
from stats.logistic import SeparationError, fit_logistic

__all__ = [
    "FIRST",
    "SECOND",
    "TIE",
    "flip_rate",
    "judge_human_agreement",
    "length_bias_pairwise",
    "length_bias_pointwise",
    "normalised_difference",
    "parse_failure_rates",
    "position_bias",
    "position_bias_of_verdicts",
    "self_preference",
]

FIRST, SECOND, TIE = "first", "second", "tie"
VERDICTS = (FIRST, SECOND, TIE)
BOOTSTRAP_ROUNDS = 1000


def _check_verdict(verdict: str | None, where: str) -> None:
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"{where}: unknown verdict {verdict!r}: expected 'first', 'second', 'tie' or None.")


def position_bias_of_verdicts(verdicts: Iterable[str | None], *, level: float = 0.95) -> dict:
    """Position bias (stats.correlation.position_bias) counted from pairwise verdicts.

    Ties and parse failures (None) are not decisive: they are counted in "ties" and "failures"
    and left out of the rate.
    """
    counts: Counter = Counter()
    for number, verdict in enumerate(verdicts, start=1):
        _check_verdict(verdict, f"Verdict {number}")
        counts[verdict] += 1
    return {
        **position_bias(counts[FIRST], counts[SECOND], level=level),
        "ties": counts[TIE],
        "failures": counts[None],
    }


def flip_rate(pairs: Iterable[tuple[str | None, str | None]], *, level: float = 0.95) -> dict:
    """How often the judge's winner changes when the two answers swap places.

    pairs: (verdict with answer X shown first, verdict with answer Y shown first), each in
    position terms. In model terms the first order's "first" is X, the second order's "first"
    is Y. Only pairs judged (and parsed) in both orders count; the others are "incomplete".

    Returns {"pairs", "incomplete", "flips", "changes", "flips_to_first", "flips_to_second"}:
    "flips" is the rate of reversals (X wins one order, Y the other) with its Wilson interval;
    "changes" also counts a winner turning into a tie or back; a reversal "to first" means the
    judge picked whichever answer came first both times (position-driven), "to second" the other.
    """
    flips = changes = to_first = to_second = complete = incomplete = 0
    for number, (x_first, y_first) in enumerate(pairs, start=1):
        _check_verdict(x_first, f"Pair {number}, first order")
        _check_verdict(y_first, f"Pair {number}, second order")
        if x_first is None or y_first is None:
            incomplete += 1
            continue
        complete += 1
        winner_one = {FIRST: "x", SECOND: "y", TIE: TIE}[x_first]
        winner_two = {FIRST: "y", SECOND: "x", TIE: TIE}[y_first]
        if winner_one != winner_two:
            changes += 1
            if TIE not in (winner_one, winner_two):
                flips += 1
                if x_first == FIRST:
                    to_first += 1
                else:
                    to_second += 1
    return {
        "pairs": complete,
        "incomplete": incomplete,
        "flips": proportion(flips, complete, level=level),
        "changes": proportion(changes, complete, level=level),
        "flips_to_first": to_first,
        "flips_to_second": to_second,
    }


def normalised_difference(a: ArrayLike, b: ArrayLike, *, method: str = "ratio") -> np.ndarray:
    """Normalised differences of paired non-negative values (lengths).

    "ratio": (a - b) / (a + b), 0 where both are 0. "tanh": tanh((a - b) / sd(a - b)) with the
    sample standard deviation of the differences (0 when they do not vary).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"Need one length per side: {a.shape[0]} and {b.shape[0]} values.")
    if np.any(a < 0) or np.any(b < 0) or np.any(np.isnan(a)) or np.any(np.isnan(b)):
        raise ValueError("Lengths must be non-negative numbers.")
    if method == "ratio":
        total = a + b
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)
    if method == "tanh":
        diff = a - b
        sd = float(np.std(diff, ddof=1)) if diff.size > 1 else 0.0
        return np.tanh(diff / sd) if sd > 0 else np.zeros_like(diff)
    raise ValueError(f"Unknown normalisation {method!r}: expected 'ratio' or 'tanh'.")


def _wald(estimate: float, se: float, level: float) -> tuple[float, float, float]:
    """(low, high, two-sided p against 0) of a normal-approximation estimate."""
    z = normal_quantile(level)
    p = float(2 * stats.norm.sf(abs(estimate) / se)) if se > 0 else (0.0 if estimate != 0 else 1.0)
    return estimate - z * se, estimate + z * se, p


def length_bias_pairwise(
    first_lengths: Sequence[float],
    second_lengths: Sequence[float],
    verdicts: Sequence[str | None],
    *,
    method: str = "ratio",
    level: float = 0.95,
) -> dict:
    """Logistic regression of "the first-shown answer wins" on the normalised length difference
    (first minus second), among decisive verdicts (ties and parse failures left out, as in
    position bias): logit P(first wins) = intercept + slope * z.

    Returns {"n", "method", "slope", "se", "low", "high", "p", "intercept", "intercept_se",
    "first_rate_at_equal_length", "first_rate_low", "first_rate_high", "reason"}. slope > 0
    means the longer answer is favoured; the intercept is the position effect at equal lengths.
    Interval and p are Wald, from the observed information at the maximum-likelihood estimate.
    When the outcome is perfectly predicted, or the lengths never differ, the estimates are None
    and `reason` says why.
    """
    if not len(first_lengths) == len(second_lengths) == len(verdicts):
        raise ValueError(
            f"Need one pair of lengths per verdict: {len(first_lengths)}, {len(second_lengths)} "
            f"and {len(verdicts)} values."
        )
    for number, verdict in enumerate(verdicts, start=1):
        _check_verdict(verdict, f"Verdict {number}")
    z = normalised_difference(first_lengths, second_lengths, method=method)
    decisive = np.array([v in (FIRST, SECOND) for v in verdicts], dtype=bool)
    y = np.array([v == FIRST for v in verdicts], dtype=float)[decisive]
    z = z[decisive]
    out: dict[str, Any] = {
        "n": int(decisive.sum()),
        "method": method,
        "slope": None,
        "se": None,
        "low": None,
        "high": None,
        "p": None,
        "intercept": None,
        "intercept_se": None,
        "first_rate_at_equal_length": None,
        "first_rate_low": None,
        "first_rate_high": None,
        "reason": None,
    }
    if out["n"] < 3 or np.ptp(z) == 0:
        out["reason"] = "Too few decisive verdicts, or the lengths never differ: no slope can be fitted."
        return out
    try:
        fitted = fit_logistic(np.column_stack([np.ones_like(z), z]), y)
    except (SeparationError, ValueError) as error:
        out["reason"] = str(error)
        return out
    intercept, slope = (float(v) for v in fitted.coef)
    intercept_se, slope_se = (float(v) for v in fitted.se)
    low, high, p = _wald(slope, slope_se, level)
    rate_low, rate_high, _ = _wald(intercept, intercept_se, level)
    out.update(
        slope=slope,
        se=slope_se,
        low=low,
        high=high,
        p=p,
        intercept=intercept,
        intercept_se=intercept_se,
        first_rate_at_equal_length=float(stats.logistic.cdf(intercept)),
        first_rate_low=float(stats.logistic.cdf(rate_low)),
        first_rate_high=float(stats.logistic.cdf(rate_high)),
    )
    return out


def length_bias_pointwise(
    lengths: Sequence[float],
    scores: Sequence[float],
    *,
    groups: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> dict:
    """OLS slope of score on standardised answer length: score points per standard deviation of
    length, with its t interval and p-value.

    groups: optional question (or item) per score; then scores and lengths are centred within
    each group first (question fixed effects), so the slope compares answers to the same question
    and is not confounded by hard questions getting long answers. The residual degrees of
    freedom are then n - groups - 1.

    Returns {"n", "groups", "slope", "se", "low", "high", "p", "length_sd", "reason"}.
    """
    x = np.asarray(lengths, dtype=float)
    y = np.asarray(scores, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"Need one length per score: {x.shape[0]} lengths and {y.shape[0]} scores.")
    n = x.size
    out: dict[str, Any] = {
        "n": n,
        "groups": None,
        "slope": None,
        "se": None,
        "low": None,
        "high": None,
        "p": None,
        "length_sd": None,
        "reason": None,
    }
    sd = float(np.std(x, ddof=1)) if n > 1 else 0.0
    if n < 3 or sd == 0:
        out["reason"] = "Too few scores, or every answer has the same length: no slope can be fitted."
        return out
    x = (x - x.mean()) / sd
    out["length_sd"] = sd
    if groups is None:
        absorbed = 1
        xc, yc = x - x.mean(), y - y.mean()
    else:
        if len(groups) != n:
            raise ValueError(f"Need one group per score: {len(groups)} groups and {n} scores.")
        keys = {key: k for k, key in enumerate(dict.fromkeys(groups))}
        index = np.array([keys[g] for g in groups])
        counts = np.bincount(index)
        xc = x - (np.bincount(index, weights=x) / counts)[index]
        yc = y - (np.bincount(index, weights=y) / counts)[index]
        absorbed = len(keys)
        out["groups"] = absorbed
    df = n - absorbed - 1
    sxx = float(xc @ xc)
    if df < 1 or sxx == 0:
        out["reason"] = "Lengths do not vary within groups, or too few scores per group: no slope can be fitted."
        return out
    slope = float(xc @ yc) / sxx
    residual = yc - slope * xc
    se = float(np.sqrt(residual @ residual / df / sxx))
    t = stats.t.ppf(0.5 + level / 2, df)
    p = float(2 * stats.t.sf(abs(slope) / se, df)) if se > 0 else (0.0 if slope != 0 else 1.0)
    out.update(slope=slope, se=se, low=slope - t * se, high=slope + t * se, p=p)
    return out


def self_preference(records: Iterable[tuple[str, bool, float]], *, level: float = 0.95) -> dict:
    """Advantage of candidates from the judge's own family over the others.

    records: (candidate, shares_family_with_judge, value) per judgment, value a score or a win
    (1 win, 0 loss, 0.5 tie). Returns {"same": {"n", "mean"}, "other": {"n", "mean"},
    "advantage" (mean same - mean other), "low", "high", "p" (Welch's t), "by_candidate":
    [{"candidate", "same_family", "n", "mean"}], "reason"}.

    The difference mixes self-preference with any real quality gap between the two groups; read
    it against another judge's view of the same answers (or the human ranking) before calling it
    bias. A candidate listed both as same-family and not is refused: the flag is per candidate.
    """
    values: dict[bool, list[float]] = {True: [], False: []}
    by_candidate: dict[str, list[float]] = defaultdict(list)
    family: dict[str, bool] = {}
    for number, (candidate, same, value) in enumerate(records, start=1):
        if not isinstance(same, bool):
            raise ValueError(f"Record {number}: shares_family_with_judge must be True or False, got {same!r}.")
        if candidate in family and family[candidate] != same:
            raise ValueError(f"Record {number}: {candidate!r} is marked both as the judge's family and not.")
        family[candidate] = same
        value = float(value)
        if np.isnan(value):
            raise ValueError(f"Record {number}: the value is not a number.")
        values[same].append(value)
        by_candidate[candidate].append(value)
    same_values, other_values = np.array(values[True]), np.array(values[False])
    out: dict[str, Any] = {
        "same": {"n": same_values.size, "mean": float(same_values.mean()) if same_values.size else None},
        "other": {"n": other_values.size, "mean": float(other_values.mean()) if other_values.size else None},
        "advantage": None,
        "low": None,
        "high": None,
        "p": None,
        "by_candidate": [
            {"candidate": c, "same_family": family[c], "n": len(v), "mean": float(np.mean(v))}
            for c, v in sorted(by_candidate.items())
        ],
        "reason": None,
    }
    if same_values.size < 2 or other_values.size < 2:
        out["reason"] = "Need at least two judgments in each group (same family and other)."
        return out
    out["advantage"] = float(same_values.mean() - other_values.mean())
    if np.var(same_values) == 0 and np.var(other_values) == 0:
        out["reason"] = "Every value within each group is the same: no interval can be given."
        return out
    test = stats.ttest_ind(same_values, other_values, equal_var=False)
    interval = test.confidence_interval(confidence_level=level)
    out.update(low=float(interval.low), high=float(interval.high), p=float(test.pvalue))
    return out


def parse_failure_rates(
    records: Iterable[Mapping], *, by: Sequence[str] = ("template", "language"), level: float = 0.95
) -> dict:
    """Parse-failure rate overall and per combination of the `by` fields, with Wilson intervals.

    records: mappings with every field in `by` and "failed" (True for a judgment that yielded no
    score). Returns {"by", "overall": {"successes" (= failures), "trials", "rate", "low", "high"},
    "groups": [{"group": {field: value}, "failures", "total", "rate", "low", "high"}]} with groups
    sorted by their values.
    """
    by = tuple(by)
    totals: Counter = Counter()
    failures: Counter = Counter()
    for number, record in enumerate(records, start=1):
        missing = [name for name in (*by, "failed") if name not in record]
        if missing:
            raise ValueError(f"Record {number} lacks {', '.join(repr(m) for m in missing)}.")
        if not isinstance(record["failed"], bool):
            raise ValueError(f"Record {number}: 'failed' must be True or False, got {record['failed']!r}.")
        key = tuple(record[name] for name in by)
        totals[key] += 1
        failures[key] += record["failed"]
    groups = []
    for key in sorted(totals, key=lambda k: tuple(str(v) for v in k)):
        rate = proportion(failures[key], totals[key], level=level)
        groups.append(
            {
                "group": dict(zip(by, key)),
                "failures": failures[key],
                "total": totals[key],
                "rate": rate["rate"],
                "low": rate["low"],
                "high": rate["high"],
            }
        )
    return {
        "by": list(by),
        "overall": proportion(sum(failures.values()), sum(totals.values()), level=level),
        "groups": groups,
    }


def _majority(votes: list[str]) -> str | None:
    """The label with strictly the most votes; None when the top count is shared."""
    ranked = Counter(votes).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def judge_human_agreement(
    judge: Mapping[Hashable, str],
    humans: Mapping[Hashable, Sequence[str]],
    *,
    level: float = 0.95,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> dict:
    """Item-level agreement between the judge's verdict and the human majority on shared items.

    judge: item -> "first", "second" or "tie"; humans: item -> the human votes on it, in the
    same orientation (for example report._units' "first"/"second" of the sorted model pair).
    Items in both with at least one vote are shared. The majority is the label with strictly
    the most votes; an item whose top count is shared has no majority ("no_majority"): it is left
    out of kappa and raw agreement but still ranked among the disagreements.

    Returns {"shared", "no_majority", "kappa", "kappa_low", "kappa_high", "kappa_note",
    "agreement" (rate with Wilson interval, ties included), "agreement_without_ties" (items where
    neither the judge nor the majority says tie), "disagreements"}. Kappa is Cohen's, over the
    three labels, with a percentile bootstrap interval over items (seeded). Disagreements: every
    shared item where the judge differs from the majority (or there is none), ranked by strength
    |j - h|, where j is the judge's verdict as +1 (first), 0 (tie), -1 (second) and h the human
    mean on that scale, (first votes - second votes) / votes: 2 is a unanimous reversal, 1 a
    judge tie against unanimous humans; ties in strength go to more votes, then by item.
    """
    for item, verdict in judge.items():
        if verdict not in VERDICTS:
            raise ValueError(f"Item {item!r}: unknown judge verdict {verdict!r}: expected 'first', 'second' or 'tie'.")
    shared = []
    for item, votes in humans.items():
        for vote in votes:
            if vote not in VERDICTS:
                raise ValueError(f"Item {item!r}: unknown human vote {vote!r}: expected 'first', 'second' or 'tie'.")
        if item in judge and votes:
            shared.append(item)
    shared.sort(key=str)
    scale = {FIRST: 1.0, TIE: 0.0, SECOND: -1.0}
    rows: list[dict[str, Any]] = []
    judged, majorities = [], []
    for item in shared:
        votes = list(humans[item])
        majority = _majority(votes)
        verdict = judge[item]
        count = Counter(votes)
        human_mean = (count[FIRST] - count[SECOND]) / len(votes)
        if majority is not None:
            judged.append(verdict)
            majorities.append(majority)
        if majority == verdict:
            continue
        if majority is None:
            kind = "no majority"
        elif verdict == TIE:
            kind = "judge tie"
        elif majority == TIE:
            kind = "human tie"
        else:
            kind = "reversal"
        rows.append(
            {
                "item": item,
                "judge": verdict,
                "majority": majority,
                "votes": dict(sorted(count.items())),
                "kind": kind,
                "strength": abs(scale[verdict] - human_mean),
            }
        )
    rows.sort(key=lambda row: (-row["strength"], -sum(row["votes"].values()), str(row["item"])))
    agree = sum(j == m for j, m in zip(judged, majorities))
    decisive = [(j, m) for j, m in zip(judged, majorities) if TIE not in (j, m)]
    kappa = cohen_kappa(judged, majorities) if judged else None
    low = high = note = None
    if kappa is not None and rounds > 0:
        rng = np.random.default_rng(seed)
        judged_array, majority_array = np.array(judged), np.array(majorities)
        draws = np.full(rounds, np.nan)
        for r in range(rounds):
            pick = rng.integers(0, len(judged), len(judged))
            value = cohen_kappa(judged_array[pick].tolist(), majority_array[pick].tolist())
            if value is not None:
                draws[r] = value
        if not np.all(np.isnan(draws)):
            low, high = percentile_interval(draws, level=level)
            note = zero_width_note(low, high)
    return {
        "shared": len(shared),
        "no_majority": len(shared) - len(judged),
        "kappa": kappa,
        "kappa_low": low,
        "kappa_high": high,
        "kappa_note": note,
        "agreement": proportion(agree, len(judged), level=level),
        "agreement_without_ties": proportion(sum(j == m for j, m in decisive), len(decisive), level=level),
        "disagreements": rows,
    }
