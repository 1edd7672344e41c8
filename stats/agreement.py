"""Agreement between annotators, and between annotators and a judge: pure functions, no Django.

A *unit* is one thing several raters labelled (here: one question and one
unordered pair of models); a rating is (rater, label). Labels are plain strings
("first", "second", "tie" once oriented consistently by the caller).
"""

from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

type Units[K] = dict[K, list[tuple[object, str]]]

TIE = "tie"


def raw_agreement(units: Units, *, include_ties: bool = True) -> tuple[float | None, int]:
    """Share of agreeing rating pairs within units, and how many pairs were compared.

    Without ties, tie ratings are dropped first, so the figure is agreement on
    which answer is better among raters who picked one (as the URS paper reports).
    """
    agree = total = 0
    for ratings in units.values():
        labels = [label for _, label in ratings if include_ties or label != TIE]
        for x, y in combinations(labels, 2):
            total += 1
            agree += x == y
    return (agree / total if total else None), total


def cohen_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa of two aligned label lists; None when chance agreement is total."""
    if len(first) != len(second):
        raise ValueError("Cohen's kappa needs two label lists of the same length.")
    n = len(first)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(first, second)) / n
    count_first, count_second = Counter(first), Counter(second)
    expected = sum(count_first[label] * count_second[label] for label in count_first) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def cohen_kappa_by_pair(units: Units) -> list[dict]:
    """Cohen's kappa for every pair of raters over the units both labelled."""
    by_rater: dict[object, dict[object, str]] = defaultdict(dict)
    for unit, ratings in units.items():
        for rater, label in ratings:
            by_rater[rater][unit] = label
    rows = []
    for rater_a, rater_b in combinations(sorted(by_rater, key=str), 2):
        shared = sorted(set(by_rater[rater_a]) & set(by_rater[rater_b]), key=str)
        if not shared:
            continue
        first = [by_rater[rater_a][unit] for unit in shared]
        second = [by_rater[rater_b][unit] for unit in shared]
        rows.append(
            {
                "rater_a": rater_a,
                "rater_b": rater_b,
                "units": len(shared),
                "agreement": sum(x == y for x, y in zip(first, second)) / len(shared),
                "kappa": cohen_kappa(first, second),
            }
        )
    return rows


def fleiss_kappa(units: Units) -> float | None:
    """Fleiss' kappa; units may have different numbers of raters (those with fewer than 2 are skipped).

    P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1)), P-bar their mean, p_j the share
    of all ratings in category j, P_e = sum_j p_j^2.
    """
    agreements = []
    category_totals: Counter = Counter()
    for ratings in units.values():
        labels = [label for _, label in ratings]
        m = len(labels)
        if m < 2:
            continue
        counts = Counter(labels)
        agreements.append(sum(c * (c - 1) for c in counts.values()) / (m * (m - 1)))
        category_totals.update(counts)
    if not agreements:
        return None
    observed = sum(agreements) / len(agreements)
    total = sum(category_totals.values())
    expected = sum((c / total) ** 2 for c in category_totals.values())
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha_nominal(units: Units) -> float | None:
    """Krippendorff's alpha for nominal labels, any number of raters per unit, missing allowed.

    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k, with the
    coincidence matrix o_ck built from units that have at least two ratings.
    """
    coincidences: dict[tuple[Any, Any], float] = defaultdict(float)
    for ratings in units.values():
        labels = [label for _, label in ratings]
        m = len(labels)
        if m < 2:
            continue
        for x_index, x in enumerate(labels):
            for y_index, y in enumerate(labels):
                if x_index != y_index:
                    coincidences[(x, y)] += 1 / (m - 1)
    if not coincidences:
        return None
    marginals: dict[Any, float] = defaultdict(float)
    for (x, _), value in coincidences.items():
        marginals[x] += value
    n = sum(marginals.values())
    disagreement = sum(value for (x, y), value in coincidences.items() if x != y)
    expected = sum(marginals[x] * marginals[y] for x in marginals for y in marginals if x != y)
    if expected == 0:
        return None
    return 1 - (n - 1) * disagreement / expected


def against_reference[K](units: Units[K], reference: dict[K, str]) -> list[dict]:
    """Each rater against a reference labeller (the judge): units, agreement, Cohen's kappa."""
    by_rater: dict[object, list[tuple[str, str]]] = defaultdict(list)
    for unit, ratings in units.items():
        if unit not in reference:
            continue
        for rater, label in ratings:
            by_rater[rater].append((label, reference[unit]))
    rows = []
    for rater in sorted(by_rater, key=str):
        pairs = by_rater[rater]
        rows.append(
            {
                "rater": rater,
                "units": len(pairs),
                "agreement": sum(x == y for x, y in pairs) / len(pairs),
                "kappa": cohen_kappa([x for x, _ in pairs], [y for _, y in pairs]),
            }
        )
    return rows
