"""Bradley-Terry scores from pairwise votes: pure functions, no Django.

Votes arrive already aggregated per unordered pair of models as counts of
(first wins, second wins, ties); cannot-determine votes never reach this module
(the caller counts and reports them). The fit is choix's iterative Luce
spectral ranking on a dense win matrix in which a tie is half a win each way,
because choix's list interface has no ties and adding a tie as two opposite
wins would weigh it double.

`alpha` (default DEFAULT_ALPHA = 0.01) regularises the fit: without it a model
that never loses, or a comparison graph in pieces, has no finite
maximum-likelihood estimate and choix raises or returns arbitrary numbers.
`alpha=0` (the plain maximum-likelihood estimate) is accepted by `estimate` and
`bradley_terry` only when the directed "beat or tied" graph is strongly
connected (Zermelo's and Ford's condition for a finite maximum: every model
both wins and loses against the rest along directed paths); otherwise they
raise a ValueError naming the models whose score would be infinite. `fit`
itself keeps requiring alpha > 0. With `alpha`, the fixed point that choix
reaches is the maximiser of

    sum_ij W_ij * (t_i - log(exp t_i + exp t_j)) - alpha * n^2 * log(sum_i exp t_i)

subject to sum_i t_i = 0: the balance equations of the regularised LSR chain,
whose weights choix scales to sum to n, are exactly this problem's stationarity
conditions (tests/stats/test_ranking.py checks it against scipy).

Bootstrap intervals resample the aggregated (pair, outcome) cells with one
multinomial draw per round instead of resampling individual votes: the same
distribution, at a cost independent of the number of votes. With alpha=0 a
round whose resample is not strongly connected has no finite estimate; it is
skipped and counted (`skipped_rounds`), so those intervals are conditional on
the resample being estimable. An interval of zero width carries a `note`: it
means every round gave the same value (a single outcome), not certainty.

Ranks: equal values share a rank and the next rank skips ("1, 1, 3",
competition ranking), because a reader of "1, 1, 2" would think only two models
are ahead of the third. With bootstrap intervals, rank = 1 + the number of
models whose interval lies wholly above; without, competition ranks of the
scores.
"""

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from stats.intervals import NO_ROUNDS_NOTE, percentile_interval, zero_width_note

DEFAULT_ALPHA = 0.01


def _choix():
    """choix and scipy load in 0.8 s: only where a fit is made, not in every process that ranks
    a table (`competition_ranks`) or imports this module on its way to a command's first line."""
    # Loaded on the first fit, not with this module: choix brings scipy, 0.8 s of import.
    import choix

    return choix


def _graphs():
    # scipy is as slow to import as choix: loaded only where a win matrix's graph is read.
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    return csr_matrix, connected_components


# choix's tolerance is on the L1 change between iterates; this keeps estimates within 1e-8.
FIT_TOL = 1e-10
FIT_MAX_ITER = 10_000
# Scores closer than this share a rank when there is no interval: the fit is only accurate to ~1e-8,
# so two models with identical records may differ in the tenth decimal.
RANK_TOLERANCE = 1e-6


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


def pair_counts(labels: list[str], outcomes) -> PairCounts:
    """Aggregate (label_a, label_b, winner) triples; winner is "a", "b" or "tie".

    Order within a triple does not matter: (x, y, "a") and (y, x, "b") count the same.
    """
    index = {label: position for position, label in enumerate(labels)}
    cells: dict[tuple[int, int], list[int]] = {}
    for label_a, label_b, winner in outcomes:
        i, j = index[label_a], index[label_b]
        if i == j:
            raise ValueError(f"A vote compares {label_a!r} with itself.")
        if winner not in ("a", "b", "tie"):
            raise ValueError(f"Unknown winner {winner!r}: expected 'a', 'b' or 'tie'.")
        if i > j:
            i, j = j, i
            winner = {"a": "b", "b": "a", "tie": "tie"}[winner]
        cell = cells.setdefault((i, j), [0, 0, 0])
        cell[{"a": 0, "b": 1, "tie": 2}[winner]] += 1
    keys = sorted(cells)
    counts = np.array([cells[key] for key in keys], dtype=np.int64).reshape(-1, 3)
    return PairCounts(
        labels=list(labels),
        first=np.array([key[0] for key in keys], dtype=np.int64),
        second=np.array([key[1] for key in keys], dtype=np.int64),
        first_wins=counts[:, 0],
        second_wins=counts[:, 1],
        ties=counts[:, 2],
    )


def win_matrix(n: int, first, second, first_wins, second_wins, ties) -> np.ndarray:
    """Dense matrix with W[i, j] = wins of i over j + half the ties between them."""
    matrix = np.zeros((n, n), dtype=float)
    matrix[first, second] = first_wins + 0.5 * ties
    matrix[second, first] = second_wins + 0.5 * ties
    return matrix


def components(n: int, first, second) -> list[list[int]]:
    """Connected pieces of the comparison graph, largest first (ties by lowest index)."""
    csr_matrix, connected_components = _graphs()
    graph = csr_matrix((np.ones(len(first)), (first, second)), shape=(n, n))
    count, membership = connected_components(graph, directed=False)
    pieces = [sorted(np.flatnonzero(membership == c).tolist()) for c in range(count)]
    return sorted(pieces, key=lambda piece: (-len(piece), piece[0]))


def fit(matrix: np.ndarray, *, alpha: float = DEFAULT_ALPHA, initial=None) -> np.ndarray:
    """Regularised Bradley-Terry log-strengths (mean zero) of a dense win matrix."""
    if alpha <= 0:
        raise ValueError(
            "alpha must be positive: without it the estimate may not exist "
            "(estimate() accepts alpha=0 on a strongly connected comparison graph)."
        )
    return _choix().ilsr_pairwise_dense(matrix, alpha=alpha, initial_params=initial, max_iter=FIT_MAX_ITER, tol=FIT_TOL)


def beat_pieces(matrix: np.ndarray) -> tuple[int, np.ndarray]:
    """Strongly connected pieces of the directed graph with an edge i -> j when i beat or tied j
    (W[i, j] > 0): (number of pieces, piece of each model)."""
    csr_matrix, connected_components = _graphs()
    graph = csr_matrix(np.asarray(matrix) > 0)
    return connected_components(graph, directed=True, connection="strong")


def is_strongly_connected(matrix: np.ndarray) -> bool:
    """True when the plain maximum-likelihood estimate is finite (see beat_pieces)."""
    return matrix.shape[0] <= 1 or beat_pieces(matrix)[0] == 1


def require_strongly_connected(matrix: np.ndarray, labels: list[str] | None = None) -> None:
    """Raise a ValueError naming why alpha=0 has no finite estimate, unless the graph is strongly connected.

    It names the smallest group of models that never lost to (nor tied with) anyone outside it,
    whose scores would run to +infinity, or that never beat (nor tied with) anyone outside it.
    """
    n = matrix.shape[0]
    if n <= 1:
        return
    count, piece = beat_pieces(matrix)
    if count == 1:
        return
    names = labels if labels is not None else [str(i) for i in range(n)]
    beaten = np.asarray(matrix) > 0
    groups = [piece == c for c in range(count)]

    def described(inside, verb: str) -> str:
        members = [repr(names[i]) for i in np.flatnonzero(inside)]
        if len(members) == 1:
            return f"{members[0]} never {verb} any other model"
        return f"{', '.join(members)} never {verb} any model outside that group"

    # The condensation of the graph always has a group nobody outside ever beat (scores run to
    # +infinity) and one that never beat anyone outside (-infinity): name the smaller, the first
    # kind when equal.
    sources = [
        (int(inside.sum()), 0, k) for k, inside in enumerate(groups) if not beaten[np.ix_(~inside, inside)].any()
    ]
    sinks = [(int(inside.sum()), 1, k) for k, inside in enumerate(groups) if not beaten[np.ix_(inside, ~inside)].any()]
    _, kind, k = min(sources + sinks)
    reason = described(groups[k], "lost to or tied with" if kind == 0 else "beat or tied with")
    raise ValueError(
        "alpha=0 needs a strongly connected comparison graph (every model both wins and loses "
        f"against the rest along chains of votes), but {reason}: the maximum-likelihood scores "
        f"would be infinite. Use alpha > 0 (default {DEFAULT_ALPHA})."
    )


def estimate(matrix: np.ndarray, *, alpha: float = DEFAULT_ALPHA, initial=None, labels=None) -> np.ndarray:
    """Bradley-Terry log-strengths (mean zero): regularised for alpha > 0 (see `fit`), the plain
    maximum-likelihood estimate for alpha == 0 after checking that it exists."""
    if alpha < 0:
        raise ValueError(f"alpha must be zero or positive, got {alpha!r}.")
    if alpha > 0:
        return fit(matrix, alpha=alpha, initial=initial)
    require_strongly_connected(matrix, labels)
    # Strong connectivity makes the unregularised LSR chain irreducible, so its fixed point is the MLE.
    return _choix().ilsr_pairwise_dense(matrix, alpha=0.0, initial_params=initial, max_iter=FIT_MAX_ITER, tol=FIT_TOL)


def bootstrap(
    counts: PairCounts, members: list[int], estimate: np.ndarray, *, rounds: int, alpha: float, seed: int
) -> np.ndarray:
    """`rounds` refits on multinomial redraws of the aggregated cells; shape (rounds, len(members)).

    With alpha == 0, a round whose redraw is not strongly connected has no finite estimate: its
    row is NaN (the caller counts and skips it).
    """
    position = {model: k for k, model in enumerate(members)}
    keep = np.isin(counts.first, members)
    first = np.array([position[m] for m in counts.first[keep]], dtype=np.int64)
    second = np.array([position[m] for m in counts.second[keep]], dtype=np.int64)
    cells = np.concatenate([counts.first_wins[keep], counts.second_wins[keep], counts.ties[keep]]).astype(float)
    total = int(cells.sum())
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(total, cells / total, size=rounds)
    k = len(first)
    n = len(members)
    out = np.empty((rounds, n))
    for r in range(rounds):
        draw = draws[r]
        matrix = win_matrix(n, first, second, draw[:k], draw[k : 2 * k], draw[2 * k :])
        # Starting from the full-data estimate saves most iterations; the fixed point is the same.
        if alpha > 0:
            out[r] = fit(matrix, alpha=alpha, initial=estimate)
        elif is_strongly_connected(matrix):
            out[r] = _choix().ilsr_pairwise_dense(
                matrix, alpha=0.0, initial_params=estimate, max_iter=FIT_MAX_ITER, tol=FIT_TOL
            )
        else:
            out[r] = np.nan
    return out


def ranks_by_overlap(lower: np.ndarray, upper: np.ndarray) -> list[int]:
    """Rank = 1 + number of models whose interval lies wholly above this one's.

    Models with equal (or overlapping) intervals therefore share a rank, and the next distinct
    rank counts every model above it, as in competition ranking.
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    return [1 + int(np.sum(lower > upper[i])) for i in range(len(lower))]


def competition_ranks(values, *, higher_is_better: bool = True, tolerance: float = 0.0) -> list[int | None]:
    """Competition ranks ("1, 1, 3"): equal values share the best rank of their group and the
    next value's rank counts every value before it.

    values: numbers (None or NaN allowed: they get rank None and take no place).
    tolerance: values within `tolerance` of the first value of a run of sorted values count as
    equal (0 = exact equality); use it for fitted estimates that carry rounding noise.
    Returns one rank per value, in the input order.
    """
    numbers = [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]
    present = {k: v for k, v in enumerate(numbers) if v is not None}
    order = sorted(present, key=lambda k: -present[k] if higher_is_better else present[k])
    ranks: list[int | None] = [None] * len(numbers)
    group_value = None
    group_rank = 0
    for place, k in enumerate(order, start=1):
        if group_value is None or abs(present[k] - group_value) > tolerance:
            group_value, group_rank = present[k], place
        ranks[k] = group_rank
    return ranks


def interval_note(lower, upper, k: int, rounds: int) -> str | None:
    """Why model k's interval is missing or has no width, if it is; None otherwise."""
    if lower is None:
        return NO_ROUNDS_NOTE if rounds > 0 else None
    return zero_width_note(float(lower[k]), float(upper[k]))


@dataclass
class ModelScore:
    label: str
    score: float
    lower: float | None
    upper: float | None
    rank: int
    wins: int
    losses: int
    ties: int
    note: str | None = None


@dataclass
class BTResult:
    scores: list[ModelScore]
    disconnected: list[str] = field(default_factory=list)
    comparisons: int = 0
    alpha: float = DEFAULT_ALPHA
    rounds: int = 0
    level: float = 0.95
    skipped_rounds: int = 0

    def as_dict(self) -> dict:
        return {
            "scores": [vars(score) for score in self.scores],
            "disconnected": self.disconnected,
            "comparisons": self.comparisons,
            "alpha": self.alpha,
            "bootstrap_rounds": self.rounds,
            "skipped_rounds": self.skipped_rounds,
            "level": self.level,
        }


def bradley_terry(
    counts: PairCounts, *, alpha: float = DEFAULT_ALPHA, rounds: int = 1000, seed: int = 0, level: float = 0.95
) -> BTResult:
    """Scores, percentile bootstrap intervals and overlap ranks for the largest connected piece.

    Models outside it are listed in `disconnected` and not ranked: their scores
    would only reflect the regulariser, not the votes. alpha >= 0; alpha == 0 raises a
    ValueError naming the models when that piece is not strongly connected (see module
    docstring). A score whose interval has zero width carries a `note`; with alpha == 0,
    bootstrap rounds without a finite estimate are skipped and counted in `skipped_rounds`.
    """
    n = len(counts.labels)
    result = BTResult(scores=[], comparisons=counts.comparisons, alpha=alpha, rounds=rounds, level=level)
    if counts.comparisons == 0:
        result.disconnected = list(counts.labels)
        return result
    pieces = components(n, counts.first, counts.second)
    members = pieces[0]
    result.disconnected = [counts.labels[m] for piece in pieces[1:] for m in piece]
    if len(members) < 2:
        result.disconnected = list(counts.labels)
        return result
    position = {model: k for k, model in enumerate(members)}
    keep = np.isin(counts.first, members)
    matrix = win_matrix(
        len(members),
        np.array([position[m] for m in counts.first[keep]], dtype=np.int64),
        np.array([position[m] for m in counts.second[keep]], dtype=np.int64),
        counts.first_wins[keep],
        counts.second_wins[keep],
        counts.ties[keep],
    )
    scores = estimate(matrix, alpha=alpha, labels=[counts.labels[m] for m in members])
    lower = upper = None
    if rounds > 0:
        draws = bootstrap(counts, members, scores, rounds=rounds, alpha=alpha, seed=seed)
        valid = ~np.isnan(draws).any(axis=1)
        result.skipped_rounds = int(rounds - valid.sum())
        if valid.any():
            lower, upper = percentile_interval(draws[valid], level=level)
    if lower is not None and upper is not None:
        ranks = ranks_by_overlap(lower, upper)
    else:
        # Fitted strengths are finite numbers, so every one has a rank (None is for NaN).
        ranks = cast(list[int], competition_ranks(scores, tolerance=RANK_TOLERANCE))
    wins = np.zeros(n, dtype=np.int64)
    losses = np.zeros(n, dtype=np.int64)
    ties = np.zeros(n, dtype=np.int64)
    np.add.at(wins, counts.first, counts.first_wins)
    np.add.at(wins, counts.second, counts.second_wins)
    np.add.at(losses, counts.first, counts.second_wins)
    np.add.at(losses, counts.second, counts.first_wins)
    np.add.at(ties, counts.first, counts.ties)
    np.add.at(ties, counts.second, counts.ties)
    for k, model in enumerate(members):
        result.scores.append(
            ModelScore(
                label=counts.labels[model],
                score=float(scores[k]),
                lower=None if lower is None else float(lower[k]),
                upper=None if upper is None else float(upper[k]),
                rank=ranks[k],
                wins=int(wins[model]),
                losses=int(losses[model]),
                ties=int(ties[model]),
                note=interval_note(lower, upper, k, rounds),
            )
        )
    result.scores.sort(key=lambda s: (-s.score, s.label))
    return result
