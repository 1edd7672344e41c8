"""Judge drift between two runs of the same judging: pure numpy and scipy values, no Django.

The two runs judged the same units (a question, a candidate and, pairwise, an order), matched
by the caller. Each unit carries a value in either run: a final score (pointwise) or an outcome
(pairwise: 1 win, 0.5 tie, 0 loss); and a verdict label (the score as a label, or "win", "tie",
"lose"). Four questions, each with an interval:

- do the runs order the units alike? Pearson, Spearman and Kendall over the paired values, with
  Fisher-z intervals (stats.correlation.correlations);
- did the level move? the mean of b - a, with a percentile bootstrap interval over units;
- do the verdicts agree? raw agreement (Wilson interval) and Cohen's kappa (percentile bootstrap
  over units), plus the confusion table;
- did the ranking change? each model's mean in either run, its shift with a bootstrap interval
  over that model's units, its rank in either run (competition ranks) and the places it moved,
  and the rank correlation of the model means.

Bootstrap rounds are seeded; a zero-width interval carries a note (stats.intervals).
"""

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from stats.agreement import cohen_kappa
from stats.correlation import correlations
from stats.intervals import percentile_interval, proportion, zero_width_note
from stats.ranking import competition_ranks

BOOTSTRAP_ROUNDS = 1000


def _check_paired(a: Sequence, b: Sequence, what: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"Drift needs paired {what}: {len(a)} in the first run, {len(b)} in the second.")


def mean_shift(
    a: Sequence[float], b: Sequence[float], *, level: float = 0.95, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> dict:
    """Mean of b - a over paired units with a percentile bootstrap interval over units.

    Returns {"n", "mean_a", "mean_b", "shift", "low", "high", "note"}; without units everything is None."""
    _check_paired(a, b, "values")
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = int(x.size)
    out: dict[str, Any] = {
        "n": n,
        "mean_a": None,
        "mean_b": None,
        "shift": None,
        "low": None,
        "high": None,
        "note": None,
    }
    if n == 0:
        return out
    difference = y - x
    out.update(mean_a=float(x.mean()), mean_b=float(y.mean()), shift=float(difference.mean()))
    if rounds > 0:
        rng = np.random.default_rng(seed)
        means = difference[rng.integers(0, n, size=(rounds, n))].mean(axis=1)
        low, high = percentile_interval(means, level=level)
        out.update(low=low, high=high, note=zero_width_note(low, high))
    return out


def verdict_agreement(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    level: float = 0.95,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> dict:
    """How often paired verdicts agree, and Cohen's kappa with a bootstrap interval over units.

    Returns {"n", "agreement" (a proportion with Wilson interval), "kappa", "kappa_low",
    "kappa_high", "kappa_note", "table": {label_a: {label_b: count}}}. Kappa is None when chance
    agreement is total (both runs gave one and the same verdict throughout)."""
    _check_paired(a, b, "verdicts")
    first, second = [str(v) for v in a], [str(v) for v in b]
    n = len(first)
    table: dict[str, Counter] = defaultdict(Counter)
    for x, y in zip(first, second):
        table[x][y] += 1
    kappa = cohen_kappa(first, second) if n else None
    low = high = note = None
    if kappa is not None and rounds > 0:
        rng = np.random.default_rng(seed)
        x_array, y_array = np.array(first), np.array(second)
        draws = np.full(rounds, np.nan)
        for r in range(rounds):
            pick = rng.integers(0, n, n)
            value = cohen_kappa(x_array[pick].tolist(), y_array[pick].tolist())
            if value is not None:
                draws[r] = value
        if not np.all(np.isnan(draws)):
            low, high = percentile_interval(draws, level=level)
            note = zero_width_note(low, high)
    return {
        "n": n,
        "agreement": proportion(sum(x == y for x, y in zip(first, second)), n, level=level),
        "kappa": kappa,
        "kappa_low": low,
        "kappa_high": high,
        "kappa_note": note,
        "table": {label: dict(sorted(counts.items())) for label, counts in sorted(table.items())},
    }


def _places_moved(rank_a: int | None, rank_b: int | None) -> int | None:
    return None if rank_a is None or rank_b is None else rank_a - rank_b


def model_drift(
    rows: Iterable[tuple[str, float, float]], *, level: float = 0.95, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> dict:
    """Per model: mean value in either run, the shift (b - a) with its bootstrap interval over the
    model's units, the rank in either run (competition ranks of the means, best first) and the
    places moved (positive: up in the second run); and the rank correlation of the means.

    rows: (model, value in the first run, value in the second) per unit.
    Returns {"models": [...sorted by rank in the second run], "rank_correlation": correlations(...)}."""
    by_model: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for number, row in enumerate(rows, start=1):
        try:
            model, value_a, value_b = row
        except (TypeError, ValueError):
            raise ValueError(f"Row {number}: expected (model, value_a, value_b).") from None
        by_model[model][0].append(float(value_a))
        by_model[model][1].append(float(value_b))
    names = sorted(by_model)
    shifts = {
        name: mean_shift(by_model[name][0], by_model[name][1], level=level, rounds=rounds, seed=seed) for name in names
    }
    ranks_a = dict(zip(names, competition_ranks([shifts[name]["mean_a"] for name in names])))
    ranks_b = dict(zip(names, competition_ranks([shifts[name]["mean_b"] for name in names])))
    models = [
        {
            "model": name,
            **shifts[name],
            "rank_a": ranks_a[name],
            "rank_b": ranks_b[name],
            "moved": _places_moved(ranks_a[name], ranks_b[name]),
        }
        for name in names
    ]
    models.sort(key=lambda row: (row["rank_b"], row["model"]))
    return {
        "models": models,
        "rank_correlation": correlations(
            [shifts[name]["mean_a"] for name in names], [shifts[name]["mean_b"] for name in names], level=level
        ),
    }


def drift(
    units: Iterable[tuple[str, float, float, Hashable, Hashable]],
    *,
    level: float = 0.95,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> dict:
    """Everything above from one list of matched units: (model, value_a, value_b, verdict_a, verdict_b).

    Returns {"units", "correlation", "shift", "verdicts", "models"}; see the module docstring."""
    units = list(units)
    for number, unit in enumerate(units, start=1):
        if len(unit) != 5:
            raise ValueError(f"Unit {number}: expected (model, value_a, value_b, verdict_a, verdict_b).")
    values_a = [float(unit[1]) for unit in units]
    values_b = [float(unit[2]) for unit in units]
    return {
        "units": len(units),
        "correlation": correlations(values_a, values_b, level=level),
        "shift": mean_shift(values_a, values_b, level=level, rounds=rounds, seed=seed),
        "verdicts": verdict_agreement(
            [unit[3] for unit in units], [unit[4] for unit in units], level=level, rounds=rounds, seed=seed
        ),
        "models": model_drift(((unit[0], unit[1], unit[2]) for unit in units), level=level, rounds=rounds, seed=seed),
    }
