"""Bradley-Terry scores from pairwise votes: pure functions, no Django.

Votes arrive already aggregated per unordered pair of models as counts of
(first wins, second wins, ties); cannot-determine votes never reach this module
(the caller counts and reports them). The fit is choix's iterative Luce
spectral ranking on a dense win matrix in which a tie is half a win each way,
because choix's list interface has no ties and adding a tie as two opposite
wins would weigh it double.

`alpha` > 0 is needed: without it a model that never loses, or a comparison
graph in pieces, has no finite maximum-likelihood estimate and choix raises or
returns arbitrary numbers. With `alpha`, the fixed point that choix reaches is
the maximiser of

    sum_ij W_ij * (t_i - log(exp t_i + exp t_j)) - alpha * n^2 * log(sum_i exp t_i)

subject to sum_i t_i = 0: the balance equations of the regularised LSR chain,
whose weights choix scales to sum to n, are exactly this problem's stationarity
conditions (tests/annotation/test_ranking.py checks it against scipy).

Bootstrap intervals resample the aggregated (pair, outcome) cells with one
multinomial draw per round instead of resampling individual votes: the same
distribution, at a cost independent of the number of votes.
"""

from dataclasses import dataclass, field

import choix
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

DEFAULT_ALPHA = 0.01
# choix's tolerance is on the L1 change between iterates; this keeps estimates within 1e-8.
FIT_TOL = 1e-10
FIT_MAX_ITER = 10_000


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
    graph = csr_matrix((np.ones(len(first)), (first, second)), shape=(n, n))
    count, membership = connected_components(graph, directed=False)
    pieces = [sorted(np.flatnonzero(membership == c).tolist()) for c in range(count)]
    return sorted(pieces, key=lambda piece: (-len(piece), piece[0]))


def fit(matrix: np.ndarray, *, alpha: float = DEFAULT_ALPHA, initial=None) -> np.ndarray:
    """Regularised Bradley-Terry log-strengths (mean zero) of a dense win matrix."""
    if alpha <= 0:
        raise ValueError("alpha must be positive: without it the estimate may not exist.")
    return choix.ilsr_pairwise_dense(matrix, alpha=alpha, initial_params=initial, max_iter=FIT_MAX_ITER, tol=FIT_TOL)


def bootstrap(
    counts: PairCounts, members: list[int], estimate: np.ndarray, *, rounds: int, alpha: float, seed: int
) -> np.ndarray:
    """`rounds` refits on multinomial redraws of the aggregated cells; shape (rounds, len(members))."""
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
        out[r] = fit(matrix, alpha=alpha, initial=estimate)
    return out


def ranks_by_overlap(lower: np.ndarray, upper: np.ndarray) -> list[int]:
    """Rank = 1 + number of models whose interval lies wholly above this one's."""
    return [1 + int(np.sum(lower > upper[i])) for i in range(len(lower))]


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


@dataclass
class BTResult:
    scores: list[ModelScore]
    disconnected: list[str] = field(default_factory=list)
    comparisons: int = 0
    alpha: float = DEFAULT_ALPHA
    rounds: int = 0
    level: float = 0.95

    def as_dict(self) -> dict:
        return {
            "scores": [vars(score) for score in self.scores],
            "disconnected": self.disconnected,
            "comparisons": self.comparisons,
            "alpha": self.alpha,
            "bootstrap_rounds": self.rounds,
            "level": self.level,
        }


def bradley_terry(
    counts: PairCounts, *, alpha: float = DEFAULT_ALPHA, rounds: int = 1000, seed: int = 0, level: float = 0.95
) -> BTResult:
    """Scores, percentile bootstrap intervals and overlap ranks for the largest connected piece.

    Models outside it are listed in `disconnected` and not ranked: their scores
    would only reflect the regulariser, not the votes.
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
    estimate = fit(matrix, alpha=alpha)
    if rounds > 0:
        draws = bootstrap(counts, members, estimate, rounds=rounds, alpha=alpha, seed=seed)
        tail = (1 - level) / 2 * 100
        lower, upper = np.percentile(draws, [tail, 100 - tail], axis=0)
        ranks = ranks_by_overlap(lower, upper)
    else:
        lower = upper = None
        order = np.argsort(-estimate)
        ranks = [0] * len(members)
        for place, k in enumerate(order):
            ranks[k] = place + 1
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
                score=float(estimate[k]),
                lower=None if lower is None else float(lower[k]),
                upper=None if upper is None else float(upper[k]),
                rank=ranks[k],
                wins=int(wins[model]),
                losses=int(losses[model]),
                ties=int(ties[model]),
            )
        )
    result.scores.sort(key=lambda s: (-s.score, s.label))
    return result
