"""Pairwise votes tallied per unordered pair of models: pure functions, no Django.

`pair_counts` and `pair_counts_of` count (model_a, model_b, winner) votes into a `PairCounts`
table, `weighted_pair_counts` with a weight per vote, and `win_matrix` turns the table into the
dense win matrix a Bradley-Terry fit reads (a tie is half a win each way). The fits themselves are
in stats/ranking.py and stats/style.py.

Votes are counted with numpy (labels to indices by one dict lookup or a binary search per vote,
then one np.bincount on (ordered pair, outcome) keys, the two orders of a pair added on that
small table): 1,000,000 votes in about 0.13 s of CPU, where a Python loop took over a second.
"""

import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

Column = Sequence[Any] | np.ndarray  # labels (a sequence or an array), or an integer array of positions
Array = np.ndarray  # short, so that the signatures of the maths stay on a line or two

_WINNERS = {"a": 0, "b": 1, "tie": 2}
# Up to this many (pair, outcome) cells a dense np.bincount table is cheaper than sorting the votes'
# pair keys (4 M cells = 32 MB, or 4 per vote when there are more votes).
DENSE_CELLS = 1 << 22


@dataclass(frozen=True)
class PairCounts:
    """Outcomes per unordered pair of models (indices into `labels`, first < second)."""

    labels: list[str]
    first: np.ndarray
    second: np.ndarray
    first_wins: np.ndarray
    second_wins: np.ndarray
    ties: np.ndarray

    @property
    def comparisons(self) -> int:
        return int(self.first_wins.sum() + self.second_wins.sum() + self.ties.sum())


def _positions(values: Sequence[Any] | np.ndarray, table: dict) -> np.ndarray:
    """Position of each value in `table` (value -> position), -1 where it is missing.

    Vectorised where the input allows: integer arrays are positions already (out of range -> -1);
    fixed-width string arrays are found by binary search in the sorted keys; anything else (lists,
    tuples, object arrays) goes through the dict at C speed, one lookup per value.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        positions = values.astype(np.int64)
        return np.where((positions >= 0) & (positions < len(table)), positions, -1)
    if not table:
        return np.full(len(values), -1, dtype=np.int64)
    if isinstance(values, np.ndarray) and values.dtype.kind == "U" and all(isinstance(key, str) for key in table):
        keys = np.array(list(table), dtype=str)
        order = np.argsort(keys)
        sorted_keys = keys[order]
        found = np.minimum(np.searchsorted(sorted_keys, values), len(keys) - 1)
        targets = np.fromiter(table.values(), dtype=np.int64, count=len(table))[order]
        return np.where(sorted_keys[found] == values, targets[found], -1)
    # A list iterates faster than an object array, and a lookup without a default is faster than
    # one with: only when a value is missing is the count redone with -1 for it.
    items = values.tolist() if isinstance(values, np.ndarray) else values
    try:
        return np.fromiter(map(table.__getitem__, items), dtype=np.int64, count=len(items))
    except KeyError:
        return np.fromiter(map(table.get, items, itertools.repeat(-1)), dtype=np.int64, count=len(items))


def pair_counts(labels: list[str], outcomes: Iterable[Sequence[Any]] | np.ndarray) -> PairCounts:
    """Aggregate (label_a, label_b, winner) triples; winner is "a", "b" or "tie".

    Order within a triple does not matter: (x, y, "a") and (y, x, "b") count the same.
    `outcomes` is any iterable of triples, or a numpy array of shape (votes, 3); for columns
    already apart (numpy arrays of labels or of indices) use `pair_counts_of`.
    """
    if isinstance(outcomes, np.ndarray):
        if outcomes.size == 0:
            return pair_counts_of(labels, [], [], [])
        if outcomes.ndim != 2 or outcomes.shape[1] != 3:
            raise ValueError(f"Expected an array of (label_a, label_b, winner) rows, got shape {outcomes.shape}.")
        return pair_counts_of(labels, outcomes[:, 0], outcomes[:, 1], outcomes[:, 2])
    rows = outcomes if isinstance(outcomes, (list, tuple)) else list(outcomes)
    return pair_counts_of(
        labels,
        list(map(operator.itemgetter(0), rows)),
        list(map(operator.itemgetter(1), rows)),
        list(map(operator.itemgetter(2), rows)),
    )


def pair_counts_of(labels: list[str], model_a: Column, model_b: Column, winner: Column) -> PairCounts:
    """`pair_counts` on columns: model_a and model_b are sequences or numpy arrays of labels (or
    integer arrays of positions in `labels`), winner of "a", "b", "tie" (or integer codes 0, 1, 2).

    Errors are those of a vote-by-vote count, for the first bad vote: a KeyError for a label not
    in `labels`, a ValueError for a vote comparing a model with itself or an unknown winner.
    """
    if not len(model_a) == len(model_b) == len(winner):
        raise ValueError(
            f"Need one winner per pair of models: {len(model_a)}, {len(model_b)} and {len(winner)} values."
        )
    index = {label: position for position, label in enumerate(labels)}
    i = _positions(model_a, index)
    j = _positions(model_b, index)
    outcome = _positions(winner, _WINNERS)
    unknown = (i < 0) | (j < 0)
    itself = i == j
    bad = unknown | itself | (outcome < 0)
    if bad.any():
        # Report the first bad vote as a vote-by-vote loop would: its label, then itself, then the winner.
        k = int(np.argmax(bad))

        def plain(value: Any) -> Any:
            # np.str_("x") -> "x", so that the message reads as a vote-by-vote count's would.
            return value.item() if isinstance(value, np.generic) else value

        if unknown[k]:
            raise KeyError(plain(model_a[k] if i[k] < 0 else model_b[k]))
        if itself[k]:
            raise ValueError(f"A vote compares {plain(model_a[k])!r} with itself.")
        raise ValueError(f"Unknown winner {plain(winner[k])!r}: expected 'a', 'b' or 'tie'.")
    n = len(labels)
    if n * n * 3 <= max(DENSE_CELLS, 4 * len(i)):
        # One count per (ordered pair, outcome), then each unordered pair (lower index first) gathers
        # its two orders on the small table: a "b" of (j, i) is an "a" of (i, j), a tie stays a tie.
        ordered = np.bincount((i * n + j) * 3 + outcome, minlength=n * n * 3).reshape(n, n, 3)
        a_wins, b_wins, tied = ordered[:, :, 0], ordered[:, :, 1], ordered[:, :, 2]
        voted = ordered.any(axis=2)
        first, second = np.nonzero(np.triu(voted | voted.T, 1))
        cells = np.stack(
            [
                a_wins[first, second] + b_wins[second, first],
                b_wins[first, second] + a_wins[second, first],
                tied[first, second] + tied[second, first],
            ],
            axis=1,
        )
        keys = first * n + second
    else:
        # Each vote is stored as (lower index, higher index, outcome for the lower one): a win of
        # the higher-indexed model is a "b" for the pair, a tie stays a tie.
        flipped = i > j
        pair = np.minimum(i, j) * n + np.maximum(i, j)
        outcome = np.where(flipped & (outcome < 2), 1 - outcome, outcome)
        keys, inverse = np.unique(pair, return_inverse=True)
        cells = np.bincount(inverse * 3 + outcome, minlength=len(keys) * 3).reshape(len(keys), 3)
    return PairCounts(
        labels=list(labels),
        first=(keys // n).astype(np.int64),
        second=(keys % n).astype(np.int64),
        first_wins=cells[:, 0].astype(np.int64),
        second_wins=cells[:, 1].astype(np.int64),
        ties=cells[:, 2].astype(np.int64),
    )


def weighted_pair_counts(
    labels: list[str], model_a: Column, model_b: Column, winner: Column, weights: ArrayLike
) -> PairCounts:
    """`pair_counts_of` with a weight per vote (inverse-probability weights, say): each cell holds
    the sum of its votes' weights, floats. Weights are scaled to a mean of 1, so the cells still
    sum to the number of votes and the bootstrap redraws that many."""
    weights = np.asarray(weights, dtype=float)
    if len(weights) != len(winner) or (len(weights) and not np.all(np.isfinite(weights) & (weights > 0))):
        raise ValueError("Need one positive, finite weight per vote.")
    counts = pair_counts_of(labels, model_a, model_b, winner)
    if not len(weights):
        return counts
    weights = weights / weights.mean()
    n = len(labels)
    index = {label: position for position, label in enumerate(labels)}
    i, j, outcome = _positions(model_a, index), _positions(model_b, index), _positions(winner, _WINNERS)
    outcome = np.where((i > j) & (outcome < 2), 1 - outcome, outcome)
    key = (np.minimum(i, j) * n + np.maximum(i, j)) * 3 + outcome
    cells = np.bincount(key, weights, minlength=n * n * 3).reshape(n * n, 3)[counts.first * n + counts.second]
    return replace(counts, first_wins=cells[:, 0], second_wins=cells[:, 1], ties=cells[:, 2])


def win_matrix(n: int, first: Array, second: Array, first_wins: Array, second_wins: Array, ties: Array | int) -> Array:
    """Dense matrix with W[i, j] = wins of i over j + half the ties between them."""
    matrix = np.zeros((n, n), dtype=float)
    matrix[first, second] = first_wins + 0.5 * ties
    matrix[second, first] = second_wins + 0.5 * ties
    return matrix
