"""How many more votes would tell neighbours in a ranking apart: pure numpy, no Django.

From the current fit: the gap g between two neighbours (higher score minus lower) and its standard
error se, read from the Fisher information of the strengths at the fit (the information is a
graph Laplacian, so the gap's variance is d' I^+ d with d = e_i - e_j; stats/reliability.py gives
the information of its fit, `bt_information` that of plain Bradley-Terry). The pair is separated
at the chosen level when g > z se. Otherwise, assuming the strengths stay where they are:

- `more_votes`: more votes in the campaign as it has gone so far (the same mix of pairs and
  annotators), for which se shrinks as 1 / sqrt(votes): N ((z se / g)^2 - 1);
- `more_votes_on_pair`: more careful votes on that pair alone, each adding p (1 - p) to the
  information of the gap (p = sigma(g)): (z^2 / g^2 - 1 / se^2) / (p (1 - p)).

Both are rounded up; None when the two scores are equal (no number of votes separates them on
the current estimates). These are planning figures, not promises: the gap itself moves as votes
come in.
"""

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from stats.intervals import normal_quantile

if TYPE_CHECKING:
    from stats.tallies import PairCounts


def bt_information(n: int, first: ArrayLike, second: ArrayLike, votes: ArrayLike, scores: ArrayLike) -> np.ndarray:
    """Plain Bradley-Terry's Fisher information at `scores`: sum over pairs of N p (1 - p) (e_i - e_j)(e_i - e_j)'."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    scores = np.asarray(scores, dtype=float)
    p = 1.0 / (1.0 + np.exp(-(scores[first] - scores[second])))
    weight = np.asarray(votes, dtype=float) * p * (1 - p)
    matrix = np.zeros((n, n))
    np.add.at(matrix, (first, first), weight)
    np.add.at(matrix, (second, second), weight)
    np.add.at(matrix, (first, second), -weight)
    np.add.at(matrix, (second, first), -weight)
    return matrix


def votes_to_separate(
    labels: Sequence[str], scores: ArrayLike, information: np.ndarray, *, votes: int, level: float = 0.95
) -> list[dict]:
    """One row per pair of neighbours in the order of the scores (highest first): "higher",
    "lower", "gap", "se", "separated", "more_votes", "more_votes_on_pair". The first row is the
    top model against the second."""
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    if n < 2:
        return []
    z = normal_quantile(level)
    # The information is singular along "add one to every strength"; a gap does not see that direction.
    covariance = np.linalg.pinv(np.asarray(information, dtype=float) + 1.0 / n)
    order = sorted(range(n), key=lambda k: (-scores[k], labels[k]))
    rows = []
    for high, low in zip(order, order[1:], strict=False):
        gap = float(scores[high] - scores[low])
        variance = float(covariance[high, high] + covariance[low, low] - 2 * covariance[high, low])
        se = math.sqrt(max(variance, 0.0))
        separated = gap > z * se
        more = on_pair = None
        if separated:
            more = on_pair = 0
        elif gap > 0 and se > 0:
            more = math.ceil(votes * ((z * se / gap) ** 2 - 1))
            p = 1.0 / (1.0 + math.exp(-gap))
            on_pair = math.ceil((z * z / (gap * gap) - 1.0 / variance) / (p * (1 - p)))
        rows.append(
            {
                "higher": labels[high],
                "lower": labels[low],
                "gap": gap,
                "se": se,
                "separated": bool(separated),
                "more_votes": more,
                "more_votes_on_pair": on_pair,
            }
        )
    return rows


def separation_of_counts(counts: "PairCounts", scores: dict, *, level: float = 0.95) -> list[dict]:
    """votes_to_separate for plain Bradley-Terry: `counts` a stats.tallies.PairCounts, `scores`
    label -> fitted log-strength of the ranked models (pairs with an unranked model left out)."""
    labels = sorted(scores)
    position = {label: k for k, label in enumerate(labels)}
    index = np.array([position.get(label, -1) for label in counts.labels], dtype=np.int64)
    first, second = index[counts.first], index[counts.second]
    keep = (first >= 0) & (second >= 0)
    votes = (counts.first_wins + counts.second_wins + counts.ties)[keep]
    values = np.array([scores[label] for label in labels], dtype=float)
    information = bt_information(len(labels), first[keep], second[keep], votes, values)
    return votes_to_separate(labels, values, information, votes=int(votes.sum()), level=level)
