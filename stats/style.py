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
votes never reach this module.

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

import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import cast

import numpy as np
from scipy import sparse

from stats.elo import ELO_INITIAL, scores_on_elo_scale
from stats.estimability import MAX_VIF, MIN_VOTES_PER_PARAMETER, variance_inflation
from stats.intervals import percentile_interval
from stats.logistic import CONVERGED_DECREMENT, MAX_CONDITION, SEPARATION_ETA, SeparationError, fit_logistic
from stats.ranking import (
    RANK_TOLERANCE,
    competition_ranks,
    components,
    interval_note,
    is_strongly_connected,
    ranks_by_overlap,
    require_strongly_connected,
)
from stats.tallies import _WINNERS, _positions

STYLE_FEATURES = ("length", "headers", "list_items", "bold")
DEFAULT_L2 = 0.01
_OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}

# Fenced code blocks are left out of the markdown counts: a "# comment" or "- x" inside code is not
# formatting the reader sees. Headers are ATX ("# Title", up to three spaces of indent; setext
# underlines are not counted); list items are "-", "*", "+" or "1." / "1)" followed by a space and
# text; bold spans are **text** or __text__ on one line.
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_HEADER = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)[^\n]*?(?<=\S)\*\*|__(?=\S)[^\n]*?(?<=\S)__")


def style_features(text: str, *, length: Callable[[str], int] = len) -> dict[str, int]:
    """Style features of one answer: {"length", "headers", "list_items", "bold"}.

    length: the whole text's length; characters by default (whitespace-split words would
    undercount Chinese); pass a tokenizer's counting function to measure tokens instead.
    The markdown counts skip fenced code blocks (see the patterns above).
    """
    prose = _FENCE.sub("", text)
    return {
        "length": int(length(text)),
        "headers": len(_HEADER.findall(prose)),
        "list_items": len(_LIST_ITEM.findall(prose)),
        "bold": len(_BOLD.findall(prose)),
    }


@dataclass(frozen=True)
class StyleVotes:
    """Votes with the style features of both answers (indices into `labels`)."""

    labels: list[str]
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    features_a: np.ndarray
    features_b: np.ndarray
    feature_names: tuple[str, ...]


def style_votes(labels: list[str], rows: Iterable[tuple], *, features: tuple[str, ...] = STYLE_FEATURES) -> StyleVotes:
    """Collect (label_a, label_b, winner, features_a, features_b) rows; winner is "a", "b" or "tie",
    features_a/b are mappings with a non-negative number for every name in `features`.

    Raises ValueError naming the row (counted from 1) and the field on bad input.
    """
    rows = rows if isinstance(rows, (list, tuple)) else list(rows)
    votes = _style_votes_fast(labels, rows, tuple(features))
    # Anything unusual (a bad row, numbers that are not plain int or float, mappings that are not
    # dicts) goes through the row-by-row check, which names the first bad row or accepts the rest.
    return votes if votes is not None else _style_votes_checked(labels, rows, tuple(features))


def _style_votes_fast(labels: list[str], rows, features: tuple[str, ...]) -> StyleVotes | None:
    """style_votes by columns for well-formed rows (about ten times the speed of the row-by-row
    check at 100,000 votes); None when any row needs that check."""
    k = len(features)
    if not k or not set(map(type, rows)) <= {tuple, list} or not set(map(len, rows)) <= {5}:
        return None
    columns = [list(map(operator.itemgetter(c), rows)) for c in range(5)]
    if not set(map(type, columns[3])) <= {dict} or not set(map(type, columns[4])) <= {dict}:
        return None
    getter = operator.itemgetter(*features) if k > 1 else (lambda mapping: (mapping[features[0]],))
    try:
        values = [list(map(getter, columns[side])) for side in (3, 4)]
    except KeyError:
        return None
    if not set(map(type, itertools.chain.from_iterable(values[0] + values[1]))) <= {int, float}:
        return None
    features_a = np.array(values[0], dtype=float).reshape(-1, k)
    features_b = np.array(values[1], dtype=float).reshape(-1, k)
    if not (np.all(features_a >= 0) and np.all(features_b >= 0)):
        return None
    if not (np.all(np.isfinite(features_a)) and np.all(np.isfinite(features_b))):
        return None
    index = {label: position for position, label in enumerate(labels)}
    model_a = _positions(columns[0], index)
    model_b = _positions(columns[1], index)
    outcome = _positions(columns[2], _WINNERS)
    if np.any(model_a < 0) or np.any(model_b < 0) or np.any(model_a == model_b) or np.any(outcome < 0):
        return None
    return StyleVotes(
        labels=list(labels),
        model_a=model_a,
        model_b=model_b,
        outcome=np.array([1.0, 0.0, 0.5])[outcome],
        features_a=features_a,
        features_b=features_b,
        feature_names=features,
    )


def _style_votes_checked(labels: list[str], rows, features: tuple[str, ...]) -> StyleVotes:
    """style_votes row by row, raising on the first bad row."""
    index = {label: position for position, label in enumerate(labels)}
    a, b, outcome, fa, fb = [], [], [], [], []
    for number, row in enumerate(rows, start=1):
        try:
            label_a, label_b, winner, features_a, features_b = row
        except (TypeError, ValueError):
            raise ValueError(f"Vote {number}: expected (model_a, model_b, winner, features_a, features_b).") from None
        for label in (label_a, label_b):
            if label not in index:
                raise ValueError(f"Vote {number}: unknown model {label!r}.")
        if label_a == label_b:
            raise ValueError(f"Vote {number}: compares {label_a!r} with itself.")
        if winner not in _OUTCOME:
            raise ValueError(f"Vote {number}: unknown winner {winner!r}: expected 'a', 'b' or 'tie'.")
        values = []
        for side, mapping in (("features_a", features_a), ("features_b", features_b)):
            if not isinstance(mapping, Mapping):
                raise ValueError(f"Vote {number}: {side} must map feature names to numbers.")
            row_values = []
            for name in features:
                if name not in mapping:
                    raise ValueError(f"Vote {number}: {side} lacks {name!r}.")
                value = mapping[name]
                if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= float(value) < math.inf:
                    raise ValueError(f"Vote {number}: {side}[{name!r}] must be a non-negative number, got {value!r}.")
                row_values.append(float(value))
            values.append(row_values)
        a.append(index[label_a])
        b.append(index[label_b])
        outcome.append(_OUTCOME[winner])
        fa.append(values[0])
        fb.append(values[1])
    k = len(features)
    return StyleVotes(
        labels=list(labels),
        model_a=np.array(a, dtype=np.int64),
        model_b=np.array(b, dtype=np.int64),
        outcome=np.array(outcome, dtype=float),
        features_a=np.array(fa, dtype=float).reshape(-1, k),
        features_b=np.array(fb, dtype=float).reshape(-1, k),
        feature_names=tuple(features),
    )


def style_ratios(features_a, features_b) -> np.ndarray:
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


def style_design(model_a, model_b, outcome, z, *, models: int, l2: float) -> StyleDesign:
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


def fit_design(design: StyleDesign, *, weights=None, initial=None):
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


def _win_matrix(models: int, model_a, model_b, outcome, weights=None) -> np.ndarray:
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
