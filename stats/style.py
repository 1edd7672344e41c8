"""Style-controlled Bradley-Terry: pure functions, no Django.

As Chatbot Arena's style control (Li, Angelopoulos and Chiang, "Does style matter?", 2024):
style enters the Bradley-Terry regression as covariates, so a model's score is its strength
with the effect of length and markdown held fixed:

    P(A beats B) = sigmoid(theta_A - theta_B + sum_k beta_k z_k)

z_k is the difference between A's and B's value of feature k (length, markdown headers, list
items, bold spans), normalised in two steps:

1. ratio (a - b) / (a + b), 0 when both are 0: bounded in [-1, 1] and relative, so 2,000
   against 1,000 characters weighs as 200 against 100 and one very long answer cannot dominate
   the fit; it is antisymmetric, so swapping A and B flips its sign.
2. divided by its root mean square over the votes (not centred: centring would add a constant
   that depends on which answer happened to be called A, breaking P(A beats B) = 1 - P(B beats A)).
   beta_k is then the log-odds effect of one typical (RMS) difference, comparable across
   features; `scale` in the result gives the RMS, so beta_k / scale is the effect per unit of
   the ratio. A feature whose ratio is 0 in every vote carries no information: it is dropped
   and named in `dropped_features`.

Ties count as half a win each way (outcome 0.5), as in stats/ranking.py; cannot-determine
votes never reach this module. An answer's features and the votes' table are stats/style_votes.py's.

Identifiability: the thetas sum to zero (the last is minus the sum of the others), and an L2
penalty l2/2 * sum theta^2 (default DEFAULT_L2 = 0.01, a normal prior with standard deviation
10 on each theta: negligible against tens of votes) keeps the scores finite when a model never
loses. The betas are not penalised. l2=0 gives the plain maximum-likelihood fit and is accepted
only on a strongly connected "beat or tied" graph (stats.ranking.require_strongly_connected).
Only the largest connected piece of the comparison graph is fitted; other models are listed in
`disconnected`, as in ranking.py.

Small n (stats/estimability.py says why these thresholds): when a style feature is nearly
collinear with model identity (variance inflation above 30) or the fit is singular, the result is
"not estimable" with the reason (`estimable`, `reason`) instead of an error or wild numbers;
below 30 votes per fitted parameter, times the variance inflation, it is computed and flagged
`too_few`.

The fit is maximum likelihood by scipy's trust-region Newton method with analytic gradient and
Hessian (stats/logistic.py). Intervals: percentile bootstrap over votes (seeded; each round
refits with multinomial resample counts as weights, starting from the full-data estimate; the
feature scales stay those of the full data so the betas of different rounds are comparable).
"""

import math
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from stats.elo import ELO_INITIAL, scores_on_elo_scale
from stats.estimability import MAX_VIF, MIN_VOTES_PER_PARAMETER, variance_inflation
from stats.intervals import percentile_interval
from stats.logistic import (
    CONVERGED_DECREMENT,
    MAX_CONDITION,
    SEPARATION_ETA,
    LogisticFit,
    SeparationError,
    fit_logistic,
)
from stats.ranking import (
    RANK_TOLERANCE,
    competition_ranks,
    components,
    interval_note,
    is_strongly_connected,
    ranks_by_overlap,
    require_strongly_connected,
)
from stats.style_votes import StyleVotes

DEFAULT_L2 = 0.01


def style_ratios(features_a: ArrayLike, features_b: ArrayLike) -> np.ndarray:
    """(a - b) / (a + b) per vote and feature, 0 where both are 0."""
    a = np.asarray(features_a, dtype=float)
    b = np.asarray(features_b, dtype=float)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)


def rms_scales(ratios: np.ndarray) -> np.ndarray:
    """Root mean square of each column (0 for a column that is 0 in every vote)."""
    return np.sqrt(np.mean(np.asarray(ratios, dtype=float) ** 2, axis=0))


@dataclass
class StyleDesign:
    """The regression behind a style-controlled fit: X = [e_a - e_b | z], contrasts for theta."""

    X: sparse.csr_matrix
    y: np.ndarray
    basis: np.ndarray
    penalty: np.ndarray
    models: int
    model_a: np.ndarray
    model_b: np.ndarray
    z: np.ndarray


def style_design(
    model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, z: ArrayLike, *, models: int, l2: float
) -> StyleDesign:
    """Design of P(A beats B) = sigmoid(theta_a - theta_b + z . beta) with sum(theta) = 0.

    model_a/b: indices in range(models); z: (n, k) normalised style differences.
    Coefficients are [theta_0 .. theta_{models-1}, beta_0 .. beta_{k-1}]; the free parameters
    are all thetas but the last (minus the sum of the others) and the betas.
    """
    n = len(outcome)
    z = np.asarray(z, dtype=float).reshape(n, -1)
    k = z.shape[1]
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([model_a, model_b]).ravel()
    signs = np.tile([1.0, -1.0], n)
    theta_part = sparse.csr_matrix((signs, (rows, cols)), shape=(n, models))
    X = sparse.hstack([theta_part, sparse.csr_matrix(z)], format="csr")
    basis = np.zeros((models + k, models - 1 + k))
    basis[: models - 1, : models - 1] = np.eye(models - 1)
    basis[models - 1, : models - 1] = -1.0
    basis[models:, models - 1 :] = np.eye(k)
    penalty = np.concatenate([np.full(models, float(l2)), np.zeros(k)])
    return StyleDesign(
        X=X,
        y=np.asarray(outcome, dtype=float),
        basis=basis,
        penalty=penalty,
        models=models,
        model_a=np.asarray(model_a, dtype=np.int64),
        model_b=np.asarray(model_b, dtype=np.int64),
        z=z,
    )


def design_gram(design: StyleDesign, d: np.ndarray) -> np.ndarray:
    """X' diag(d) X of a StyleDesign without a sparse product: the thetas' block is the weighted
    Laplacian of the comparison graph (one np.bincount over the pairs), the cross block one
    np.bincount per feature, the features' block a small dense product. Five to ten times faster
    than scipy's sparse X' D X, which the bootstrap computes at every Newton step of every round."""
    m = design.models
    a, b, z = design.model_a, design.model_b, design.z
    k = z.shape[1]
    out = np.empty((m + k, m + k))
    pair = np.bincount(a * m + b, d, m * m).reshape(m, m)
    pair += pair.T
    out[:m, :m] = -pair
    out[np.arange(m), np.arange(m)] = pair.sum(axis=1)
    weighted = z * d[:, None]
    for c in range(k):
        column = np.bincount(a, weighted[:, c], m) - np.bincount(b, weighted[:, c], m)
        out[:m, m + c] = column
        out[m + c, :m] = column
    out[m:, m:] = z.T @ weighted
    return out


# A bootstrap round starts at the full-data maximum, a few Newton steps from its own: past this many
# it is not a plain case and goes to the full fit.
ROUND_NEWTON_STEPS = 12


def newton_round(design: StyleDesign, weights: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """Coefficients (thetas then betas) maximising the weighted (penalised) likelihood of a
    StyleDesign by plain Newton steps from `start` (free parameters), or None when they do not
    converge within ROUND_NEWTON_STEPS (the caller then uses fit_design).

    The same maximum as fit_design (the same objective and Newton-decrement test as
    stats/logistic.py) without scipy's trust-region machinery, its separation check and its
    covariance: a bootstrap round needs only the point, and this is four times faster per round.
    """
    X, y, B, penalty = design.X, design.y, design.basis, design.penalty
    free = np.array(start, dtype=float)
    for _ in range(ROUND_NEWTON_STEPS):
        coef = B @ free
        eta = X @ coef
        if np.max(np.abs(eta), initial=0.0) > SEPARATION_ETA:
            return None
        mu = 0.5 * (1.0 + np.tanh(0.5 * eta))
        gradient = B.T @ (X.T @ (weights * (mu - y)) + penalty * coef)
        information = design_gram(design, weights * mu * (1 - mu))
        information[np.diag_indices_from(information)] += penalty
        reduced = B.T @ information @ B
        try:
            step = np.linalg.solve(reduced, gradient)
        except np.linalg.LinAlgError:
            return None
        decrement = float(gradient @ step)
        free -= step
        if not np.isfinite(decrement):
            return None
        if decrement < CONVERGED_DECREMENT:
            # A nearly singular resample is fit_design's to refuse (the round is then skipped), as
            # every round was before this shortcut: solve() alone would still return a point.
            if np.linalg.cond(reduced) > MAX_CONDITION:
                return None
            return B @ free
    return None


def fit_design(
    design: StyleDesign, *, weights: ArrayLike | None = None, initial: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, LogisticFit]:
    """Maximum (penalised) likelihood fit of a StyleDesign: (thetas, betas, LogisticFit)."""
    penalty = design.penalty if np.any(design.penalty > 0) else None
    fitted = fit_logistic(
        design.X,
        design.y,
        weights=weights,
        penalty=penalty,
        basis=design.basis,
        initial=initial,
        gram=lambda d: design_gram(design, d),
    )
    return fitted.coef[: design.models], fitted.coef[design.models :], fitted


def _win_matrix(
    models: int, model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, weights: ArrayLike | None = None
) -> np.ndarray:
    """W[i, j] = (weighted) wins of i over j plus half the ties, for the strong-connectivity check."""
    w = np.ones(len(outcome)) if weights is None else np.asarray(weights, dtype=float)
    matrix = np.zeros((models, models))
    np.add.at(matrix, (model_a, model_b), w * outcome)
    np.add.at(matrix, (model_b, model_a), w * (1 - outcome))
    return matrix


@dataclass
class StyleScore:
    label: str
    score: float
    lower: float | None
    upper: float | None
    rank: int
    note: str | None = None


@dataclass
class StyleCoefficient:
    """beta per RMS of the normalised difference; `scale` is that RMS; `se` from the observed information."""

    feature: str
    beta: float
    se: float
    lower: float | None
    upper: float | None
    scale: float
    note: str | None = None


@dataclass
class StyleBTResult:
    scores: list[StyleScore]
    coefficients: list[StyleCoefficient]
    dropped_features: list[str] = field(default_factory=list)
    disconnected: list[str] = field(default_factory=list)
    votes: int = 0
    l2: float = DEFAULT_L2
    rounds: int = 0
    skipped_rounds: int = 0
    level: float = 0.95
    # Honest statistics at small n (stats/estimability.py): not estimable (no scores, `reason` says
    # why) or too few votes (scores computed, to be shown greyed, `reason` says how many needed).
    estimable: bool = True
    too_few: bool = False
    reason: str | None = None
    variance_inflation: dict[str, float | None] = field(default_factory=dict)
    scale: str = "log-strength"
    anchor: str | None = None

    def as_dict(self) -> dict:
        return {
            "scores": [vars(score) for score in self.scores],
            "coefficients": [vars(coefficient) for coefficient in self.coefficients],
            "dropped_features": self.dropped_features,
            "disconnected": self.disconnected,
            "votes": self.votes,
            "l2": self.l2,
            "bootstrap_rounds": self.rounds,
            "skipped_rounds": self.skipped_rounds,
            "level": self.level,
            "estimable": self.estimable,
            "too_few": self.too_few,
            "reason": self.reason,
            "variance_inflation": self.variance_inflation,
            "scale": self.scale,
            "anchor": self.anchor,
        }

    def on_elo_scale(self, *, anchor: str | None = None, rating: float = ELO_INITIAL) -> "StyleBTResult":
        """A copy with the model scores and intervals in Arena's Elo points (stats/elo.py); the
        style coefficients stay log-odds."""
        if self.scale != "log-strength":
            raise ValueError(f"These scores are already on the {self.scale} scale.")
        return replace(
            self, scores=scores_on_elo_scale(self.scores, anchor=anchor, rating=rating), scale="elo", anchor=anchor
        )


def not_estimable(result: StyleBTResult, reason: str) -> StyleBTResult:
    result.estimable, result.reason, result.scores, result.coefficients = False, reason, [], []
    return result


def style_bradley_terry(
    votes: StyleVotes, *, l2: float = DEFAULT_L2, rounds: int = 1000, seed: int = 0, level: float = 0.95
) -> StyleBTResult:
    """Style-controlled Bradley-Terry scores and style coefficients with bootstrap intervals.

    votes: from `style_votes`. l2 >= 0 (0 needs a strongly connected graph, else ValueError naming
    the models). rounds: bootstrap rounds (0 = point estimates only, ranked by competition ranks).
    Scores are sorted best first; ranks with intervals count the models whose interval lies wholly
    above (stats.ranking.ranks_by_overlap). Zero-width intervals carry a `note`. Bootstrap
    rounds with no finite estimate (l2 = 0 and a resample that is not strongly connected, or
    separated data) are skipped and counted.
    """
    if l2 < 0:
        raise ValueError(f"l2 must be zero or positive, got {l2!r}.")
    n_models = len(votes.labels)
    result = StyleBTResult(scores=[], coefficients=[], votes=len(votes.outcome), l2=l2, rounds=rounds, level=level)
    if len(votes.outcome) == 0:
        result.disconnected = list(votes.labels)
        return result
    pairs = np.unique(np.sort(np.column_stack([votes.model_a, votes.model_b]), axis=1), axis=0)
    pieces = components(n_models, pairs[:, 0], pairs[:, 1])
    members = pieces[0]
    result.disconnected = [votes.labels[m] for piece in pieces[1:] for m in piece]
    if len(members) < 2:
        result.disconnected = list(votes.labels)
        return result
    position = np.full(n_models, -1)
    position[members] = np.arange(len(members))
    keep = position[votes.model_a] >= 0
    model_a = position[votes.model_a[keep]]
    model_b = position[votes.model_b[keep]]
    outcome = votes.outcome[keep]
    labels = [votes.labels[m] for m in members]
    m = len(members)
    if l2 == 0:
        require_strongly_connected(_win_matrix(m, model_a, model_b, outcome), labels)

    ratios = style_ratios(votes.features_a[keep], votes.features_b[keep])
    scales = rms_scales(ratios)
    used = [k for k in range(len(votes.feature_names)) if scales[k] > 0]
    result.dropped_features = [votes.feature_names[k] for k in range(len(votes.feature_names)) if scales[k] == 0]
    z = ratios[:, used] / scales[used]
    design = style_design(model_a, model_b, outcome, z, models=m, l2=l2)
    parameters = m - 1 + len(used)
    inflation = variance_inflation(
        design.basis.T @ design_gram(design, np.ones(len(outcome))) @ design.basis,
        [m - 1 + j for j in range(len(used))],
    )
    # None for an infinite inflation (a singular design), so that the result stays plain JSON.
    result.variance_inflation = {
        votes.feature_names[k]: float(v) if np.isfinite(v) else None for k, v in zip(used, inflation)
    }
    worst = float(np.max(inflation, initial=1.0))
    collinear = [votes.feature_names[k] for k, v in zip(used, inflation) if not v <= MAX_VIF]
    if collinear:
        return not_estimable(
            result,
            f"not estimable: {', '.join(collinear)} nearly collinear with model identity (variance "
            f"inflation {'infinite' if worst == np.inf else f'{worst:.0f}'}, above {MAX_VIF:g}): on these "
            "votes a model's style and its strength cannot be told apart",
        )
    # Collinearity short of that costs votes: the needed number grows with the variance inflation.
    needed = math.ceil(MIN_VOTES_PER_PARAMETER * parameters * max(1.0, worst))
    if len(outcome) < needed:
        result.too_few = True
        result.reason = (
            f"too few votes: {len(outcome)} for {parameters} parameters ({m - 1} model strengths and "
            f"{len(used)} style coefficients); at least {needed} ({MIN_VOTES_PER_PARAMETER} per parameter, "
            f"times the style's variance inflation {max(1.0, worst):.1f}) for figures to rely on"
        )
    try:
        theta, beta, fitted = fit_design(design)
    except (SeparationError, ValueError, RuntimeError) as error:
        return not_estimable(result, f"not estimable: {error}")
    se_beta = fitted.se[m:]

    lower = upper = None
    if rounds > 0:
        rng = np.random.default_rng(seed)
        n = len(outcome)
        draws = np.full((rounds, m + len(used)), np.nan)
        for r in range(rounds):
            weights = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
            if l2 == 0 and not is_strongly_connected(_win_matrix(m, model_a, model_b, outcome, weights)):
                continue
            coef = newton_round(design, weights, fitted.free)
            if coef is None:
                # Not converged in a few plain Newton steps (a separated or nearly singular
                # resample): the full fit decides, with its checks, or the round is skipped.
                try:
                    coef = np.concatenate(fit_design(design, weights=weights, initial=fitted.free)[:2])
                except (SeparationError, ValueError, RuntimeError):
                    continue
            draws[r] = coef
        valid = ~np.isnan(draws).any(axis=1)
        result.skipped_rounds = int(rounds - valid.sum())
        if valid.any():
            lower, upper = percentile_interval(draws[valid], level=level)

    if lower is not None and upper is not None:
        ranks = ranks_by_overlap(lower[:m], upper[:m])
    else:
        # Fitted strengths are finite numbers, so every one has a rank (None is for NaN).
        ranks = cast(list[int], competition_ranks(theta, tolerance=RANK_TOLERANCE))
    for k in range(m):
        low = None if lower is None else float(lower[k])
        high = None if upper is None else float(upper[k])
        result.scores.append(
            StyleScore(
                label=labels[k],
                score=float(theta[k]),
                lower=low,
                upper=high,
                rank=ranks[k],
                note=interval_note(lower, upper, k, rounds),
            )
        )
    result.scores.sort(key=lambda s: (-s.score, s.label))
    for j, k in enumerate(used):
        low = None if lower is None else float(lower[m + j])
        high = None if upper is None else float(upper[m + j])
        result.coefficients.append(
            StyleCoefficient(
                feature=votes.feature_names[k],
                beta=float(beta[j]),
                se=float(se_beta[j]),
                lower=low,
                upper=high,
                scale=float(scales[k]),
                note=interval_note(lower, upper, m + j, rounds),
            )
        )
    return result
