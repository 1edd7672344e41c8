"""Bradley-Terry scores from pairwise votes: pure functions, no Django.

Votes arrive already aggregated per unordered pair of models as counts of
(first wins, second wins, ties); cannot-determine votes never reach this module
(the caller counts and reports them). The fit is choix's iterative Luce
spectral ranking on a dense win matrix in which a tie is half a win each way,
because choix's list interface has no ties and adding a tie as two opposite
wins would weigh it double.

`alpha` regularises the fit: without it a model that never loses, or a comparison
graph in pieces, has no finite maximum-likelihood estimate and choix raises or
returns arbitrary numbers. The plain maximum-likelihood estimate (alpha 0) exists
exactly when the directed "beat or tied" graph is strongly connected (Zermelo's
and Ford's condition: every model both wins and loses against the rest along
directed paths). So `bradley_terry` by default (alpha=None) fits unregularised
where that holds, as FastChat and Chatbot Arena do (a fixed alpha 0.01 moved
scores by up to 3.3 Elo at 50,000 votes), and with DEFAULT_ALPHA = 0.01 only
where it does not; the result's `regularised` and `regularisation` say which,
and name the models that needed it. An explicit alpha overrides this: alpha=0
is accepted by `estimate` and `bradley_terry` only on a strongly connected graph
(otherwise a ValueError names the models whose score would be infinite); `fit`
itself keeps requiring alpha > 0. With `alpha`, the fixed point that choix
reaches is the maximiser of

    sum_ij W_ij * (t_i - log(exp t_i + exp t_j)) - alpha * n^2 * log(sum_i exp t_i)

subject to sum_i t_i = 0: the balance equations of the regularised LSR chain,
whose weights choix scales to sum to n, are exactly this problem's stationarity
conditions (tests/stats/test_ranking.py checks it against scipy).

Votes are counted per pair by stats/tallies.py. Bootstrap intervals resample the
aggregated (pair, outcome) cells with one multinomial draw per round instead of
resampling individual votes: the same distribution, at a cost independent of the
number of votes (stats/bt_rounds.py draws it from Poisson counts, exactly); the
rounds are fitted together (stats/bt_rounds.py). With alpha=0 a
round whose resample is not strongly connected has no finite estimate; it is
skipped and counted (`skipped_rounds`), so those intervals are conditional on
the resample being estimable. An interval of zero width carries a `note`: it
means every round gave the same value (a single outcome), not certainty.

Scores are natural-log strengths; `BTResult.on_elo_scale` gives Arena's Elo points (stats/elo.py).

Ranks: equal values share a rank and the next rank skips ("1, 1, 3",
competition ranking), because a reader of "1, 1, 2" would think only two models
are ahead of the third. With bootstrap intervals, rank = 1 + the number of
models whose interval lies wholly above; without, competition ranks of the
scores.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np

from stats.bt_rounds import fit_rounds, multinomial_redraws
from stats.elo import ELO_INITIAL, scores_on_elo_scale
from stats.intervals import NO_ROUNDS_NOTE, percentile_interval, zero_width_note
from stats.tallies import PairCounts, win_matrix

Array = np.ndarray  # short, so that the signatures of the maths stay on a line or two

DEFAULT_ALPHA = 0.01


def _choix() -> Any:
    """choix and scipy load in 0.8 s: only where a fit is made, not in every process that ranks
    a table (`competition_ranks`) or imports this module on its way to a command's first line."""
    # Loaded on the first fit, not with this module: choix brings scipy, 0.8 s of import.
    import choix

    return choix


def _graphs() -> tuple[Any, Any]:
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


def components(n: int, first: np.ndarray, second: np.ndarray) -> list[list[int]]:
    """Connected pieces of the comparison graph, largest first (ties by lowest index)."""
    csr_matrix, connected_components = _graphs()
    graph = csr_matrix((np.ones(len(first)), (first, second)), shape=(n, n))
    count, membership = connected_components(graph, directed=False)
    pieces = [sorted(np.flatnonzero(membership == c).tolist()) for c in range(count)]
    return sorted(pieces, key=lambda piece: (-len(piece), piece[0]))


def fit(matrix: np.ndarray, *, alpha: float = DEFAULT_ALPHA, initial: np.ndarray | None = None) -> np.ndarray:
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
    reason = infinite_scores_reason(matrix, labels)
    if reason is not None:
        raise ValueError(
            "alpha=0 needs a strongly connected comparison graph (every model both wins and loses "
            f"against the rest along chains of votes), but {reason}: the maximum-likelihood scores "
            f"would be infinite. Use alpha > 0 (default {DEFAULT_ALPHA})."
        )


def infinite_scores_reason(matrix: np.ndarray, labels: list[str] | None = None) -> str | None:
    """None when the plain maximum-likelihood scores are finite; else which models make them
    infinite (see require_strongly_connected), e.g. "'a' never lost to or tied with any other model"."""
    n = matrix.shape[0]
    if n <= 1:
        return None
    count, piece = beat_pieces(matrix)
    if count == 1:
        return None
    names = labels if labels is not None else [str(i) for i in range(n)]
    beaten = np.asarray(matrix) > 0
    groups = [piece == c for c in range(count)]

    def described(inside: np.ndarray, verb: str) -> str:
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
    return described(groups[k], "lost to or tied with" if kind == 0 else "beat or tied with")


def estimate(
    matrix: Array, *, alpha: float = DEFAULT_ALPHA, initial: Array | None = None, labels: list[str] | None = None
) -> Array:
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
    row is NaN (the caller counts and skips it). The rounds are fitted together by Newton's
    method (stats/bt_rounds.py), to the same maximum as choix; a round that does not converge
    there is refitted with choix.
    """
    position = np.full(len(counts.labels), -1, dtype=np.int64)
    position[members] = np.arange(len(members))
    keep = position[counts.first] >= 0
    first = position[counts.first[keep]]
    second = position[counts.second[keep]]
    cells = np.concatenate([counts.first_wins[keep], counts.second_wins[keep], counts.ties[keep]]).astype(float)
    draws = multinomial_redraws(cells, rounds, np.random.default_rng(seed))
    k = len(first)
    n = len(members)
    wins_first = draws[:, :k] + 0.5 * draws[:, 2 * k :]
    wins_second = draws[:, k : 2 * k] + 0.5 * draws[:, 2 * k :]
    estimable = np.ones(rounds, dtype=bool)
    if alpha == 0:
        # A round that kept every direction of "beat or tied" of the full data is strongly connected
        # as the full data is; only the others (rare beyond a few hundred votes) need the graph check.
        full_first = (counts.first_wins[keep] + counts.ties[keep]) > 0
        full_second = (counts.second_wins[keep] + counts.ties[keep]) > 0
        same = np.all((wins_first > 0) >= full_first, axis=1) & np.all((wins_second > 0) >= full_second, axis=1)
        for r in np.flatnonzero(~same):
            estimable[r] = is_strongly_connected(win_matrix(n, first, second, wins_first[r], wins_second[r], 0))
    out = np.full((rounds, n), np.nan)
    if not estimable.any():
        return out
    # Starting from the full-data estimate saves most iterations; the maximum is the same.
    fitted, converged = fit_rounds(
        n, first, second, wins_first[estimable], wins_second[estimable], alpha=alpha, initial=estimate
    )
    out[estimable] = fitted
    for r in np.flatnonzero(estimable)[~converged]:
        matrix = win_matrix(n, first, second, wins_first[r], wins_second[r], 0)
        out[r] = _choix().ilsr_pairwise_dense(
            matrix, alpha=alpha, initial_params=estimate, max_iter=FIT_MAX_ITER, tol=FIT_TOL
        )
    return out


def ranks_by_overlap(lower: np.ndarray, upper: np.ndarray) -> list[int]:
    """Rank = 1 + number of models whose interval lies wholly above this one's.

    Models with equal (or overlapping) intervals therefore share a rank, and the next distinct
    rank counts every model above it, as in competition ranking.
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    return [1 + int(np.sum(lower > upper[i])) for i in range(len(lower))]


def competition_ranks(values: Iterable, *, higher_is_better: bool = True, tolerance: float = 0.0) -> list[int | None]:
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


def interval_note(lower: np.ndarray | None, upper: np.ndarray | None, k: int, rounds: int) -> str | None:
    """Why model k's interval is missing or has no width, if it is; None otherwise."""
    if lower is None:
        return NO_ROUNDS_NOTE if rounds > 0 else None
    assert upper is not None  # the bounds are None together
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
    # Whether alpha > 0 was used, and why (UNREGULARISED, REGULARISED_BECAUSE + the models, or
    # EXPLICIT_ALPHA when the caller chose alpha).
    regularised: bool = True
    regularisation: str = ""
    # "log-strength" (natural log, mean zero) or "elo" (see on_elo_scale); anchor: the model that
    # reads exactly the anchor rating on the Elo scale, None for the mean.
    scale: str = "log-strength"
    anchor: str | None = None

    def as_dict(self, *, fit_details: bool = False) -> dict:
        """The result as plain values. fit_details adds "regularised", "regularisation", "scale"
        and "anchor" (opt-in, so that serializers built on the earlier keys stay as they are)."""
        out = {
            "scores": [vars(score) for score in self.scores],
            "disconnected": self.disconnected,
            "comparisons": self.comparisons,
            "alpha": self.alpha,
            "bootstrap_rounds": self.rounds,
            "skipped_rounds": self.skipped_rounds,
            "level": self.level,
        }
        if fit_details:
            out.update(regularised=self.regularised, regularisation=self.regularisation, scale=self.scale)
            out["anchor"] = self.anchor
        return out

    def on_elo_scale(self, *, anchor: str | None = None, rating: float = ELO_INITIAL) -> "BTResult":
        """A copy with scores and intervals in Arena's Elo points (stats/elo.py): 400 / ln 10 per
        unit, `anchor` (a ranked model's label) at `rating`, or the mean at `rating` without one."""
        if self.scale != "log-strength":
            raise ValueError(f"These scores are already on the {self.scale} scale.")
        return replace(
            self, scores=scores_on_elo_scale(self.scores, anchor=anchor, rating=rating), scale="elo", anchor=anchor
        )


UNREGULARISED = (
    "unregularised (alpha 0): the comparison graph is strongly connected, so the maximum-likelihood "
    "scores are finite (FastChat's fit)"
)
REGULARISED_BECAUSE = "regularised (alpha {alpha:g}) because {reason}: without it that score would be infinite"
EXPLICIT_ALPHA = "alpha {alpha:g}, as asked"


def bradley_terry(
    counts: PairCounts, *, alpha: float | None = None, rounds: int = 1000, seed: int = 0, level: float = 0.95
) -> BTResult:
    """Scores, percentile bootstrap intervals and overlap ranks for the largest connected piece.

    Models outside it are listed in `disconnected` and not ranked: their scores
    would only reflect the regulariser, not the votes. alpha None (the default) fits that piece
    unregularised when it is strongly connected, as FastChat does, and with DEFAULT_ALPHA only
    when it is not; `regularised` and `regularisation` in the result say which and why. An
    explicit alpha >= 0 is used as given; alpha == 0 raises a ValueError naming the models when
    the piece is not strongly connected (see module docstring). A score whose interval has zero
    width carries a `note`; with alpha == 0, bootstrap rounds without a finite estimate are
    skipped and counted in `skipped_rounds`.
    """
    n = len(counts.labels)
    result = BTResult(
        scores=[],
        comparisons=counts.comparisons,
        alpha=DEFAULT_ALPHA if alpha is None else alpha,
        rounds=rounds,
        level=level,
        regularised=alpha is None or alpha > 0,
        regularisation="" if alpha is None else EXPLICIT_ALPHA.format(alpha=alpha),
    )
    if alpha is None:
        result.regularisation = "no fit: fewer than two models compared"
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
    if alpha is None:
        reason = infinite_scores_reason(matrix, [counts.labels[m] for m in members])
        alpha = 0.0 if reason is None else DEFAULT_ALPHA
        result.alpha, result.regularised = alpha, reason is not None
        result.regularisation = (
            UNREGULARISED if reason is None else REGULARISED_BECAUSE.format(alpha=alpha, reason=reason)
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
    # Weighted cells (weighted_pair_counts) are floats: their records are read rounded.
    wins = np.zeros(n, dtype=counts.first_wins.dtype)
    losses = np.zeros(n, dtype=counts.first_wins.dtype)
    ties = np.zeros(n, dtype=counts.first_wins.dtype)
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
                wins=int(round(wins[model])),
                losses=int(round(losses[model])),
                ties=int(round(ties[model])),
                note=interval_note(lower, upper, k, rounds),
            )
        )
    result.scores.sort(key=lambda s: (-s.score, s.label))
    return result
