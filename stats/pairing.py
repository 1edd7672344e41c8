"""Adaptive pairing: which pair of models a human campaign should compare next. Pure: numpy only.

The model is the one the campaign's figures are fitted with (stats/ranking.py): Bradley-Terry on
log-strengths theta, a tie counting as half a win each way. One comparison of models i and j
adds w = p (1 - p) d d' to the Fisher information of theta, with p = sigma(theta_i - theta_j) and
d = e_i - e_j; a tie changes the variance of a comparison, not which pairs are informative, so it
is left out here.

What the design aims at is what decides a ranking and what the campaign reports beside it: the
intervals of the gaps between neighbours in the ranking (theta_a - theta_b for models a and b
next to each other) and each model's mean-zero log-strength with its interval. Its criterion,
with C the inverse of the information (the posterior covariance) at the end of the budget, is

    gap_weight * mean over neighbours a, b of var(theta_a - theta_b)
      + (1 - gap_weight) * mean over models k of var(theta_k - mean(theta)),

a weighted A-optimal criterion sum_k omega_k a_k' C a_k (GAP_WEIGHT = 1/2: both weigh equally).
Which models are neighbours is itself uncertain, so every pair's gap enters weighted by the chance
that the two are neighbours under the current fit (`neighbour_chances`): the gaps of the fitted
order once it is clear, every pair alike while nothing is known. The gaps alone would starve the
models at the ends of the ranking and the pairs that tie the ranking together; the per-model part
keeps every model measured. A close pair (p near 1/2), two neighbours whose gap is still
uncertain and a model measured little gain the most.

The design (`pairing_design`):

- fits theta by maximum a posteriori with a normal prior of sd PRIOR_SD on each log-strength
  (the design's own: the prior keeps the first comparisons, and a model that never lost, from
  looking certain; it never enters the reported figures), and the chance of each two models
  being neighbours from that fit;
- weighs each pair by its expected information under that fit, E[p (1 - p)] over the (normal,
  Laplace) posterior of theta_i - theta_j: while a difference is uncertain, a pair that only
  looks far apart keeps some weight;
- allocates the votes still to come: the share `uniform_share` of them uniformly over the model
  pairs that still have an unused question, and the rest in proportions pi chosen to minimise
  the criterion at the end of the budget, given every comparison already made. pi is found by
  the multiplicative algorithm of optimal design (Silvey, Titterington and Torsney, 1978),
  pi_e <- pi_e (g_e / sum pi g)^(1/2) with g_e the reduction of the criterion per vote on pair e;
- so a pair is chosen with probability uniform_share * u_e + (1 - uniform_share) * pi_e, the
  probability every adaptive pair records (`probabilities`).

Sampling the next pair from the allocation of all remaining votes, rather than the single best
next pair, keeps the design sound while its fit is refreshed in the background: every pair drawn
before the next refresh follows the plan instead of all going to one pair. The uniform share
keeps every model pair compared, so that no pair is starved by an early misjudged fit (two
models taken for far apart, or neighbours in the wrong order).
"""

import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# The design's prior sd of each log-strength: a spread of about 1.5 is typical of published
# leaderboards (ChineseAlpacaEval's win rates against its reference, as log-odds, have sd 1.1-1.5).
PRIOR_SD = 1.5
ITERATIONS = 300
# The multiplicative algorithm stops once no pair's share moves by more than this (relative).
TOLERANCE = 1e-4
Z95 = 1.959963984540054
# The criterion's weight on the gaps between neighbours; the rest is on the per-model intervals.
GAP_WEIGHT = 0.5
UNIFORM, INFORMATION = "uniform", "information"


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _laplacian(n: int, first: np.ndarray, second: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Sum over pairs of weight * (e_i - e_j)(e_i - e_j)' (one np.bincount: the design computes
    thousands of these)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    weights = np.broadcast_to(np.asarray(weights, dtype=float), first.shape)
    cells = np.concatenate([first * n + first, second * n + second, first * n + second, second * n + first])
    values = np.concatenate([weights, weights, -weights, -weights])
    return np.bincount(cells, values, n * n).reshape(n, n)


def all_pairs(n: int) -> np.ndarray:
    """Every unordered pair of n models, (i, j) with i < j, in a fixed order: shape (n(n-1)/2, 2)."""
    first, second = np.triu_indices(n, k=1)
    return np.column_stack([first, second]).astype(np.int64)


def map_fit(
    n: int,
    first: ArrayLike,
    second: ArrayLike,
    first_wins: ArrayLike,
    second_wins: ArrayLike,
    ties: ArrayLike,
    *,
    prior_sd: float = PRIOR_SD,
) -> tuple[np.ndarray, np.ndarray]:
    """(theta, precision): the maximum a posteriori log-strengths with a normal prior of sd
    `prior_sd` on each, ties as half a win each way, and the posterior precision there (Fisher
    information plus the prior's). Newton's method with step halving; the objective is strictly
    concave, so it converges from zero whatever the votes (a model that never lost included)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    trials = np.asarray(first_wins, float) + np.asarray(second_wins, float) + np.asarray(ties, float)
    scored = np.asarray(first_wins, float) + 0.5 * np.asarray(ties, float)
    shrink = 1.0 / prior_sd**2

    def objective(theta: np.ndarray) -> float:
        diff = theta[first] - theta[second]
        # log sigma(x) = -log(1 + e^-x), computed stably.
        return float(
            np.sum(scored * -np.logaddexp(0, -diff) + (trials - scored) * -np.logaddexp(0, diff))
            - 0.5 * shrink * theta @ theta
        )

    theta = np.zeros(n)
    current = objective(theta)
    for _ in range(100):
        p = _sigmoid(theta[first] - theta[second])
        residual = scored - trials * p
        gradient = np.bincount(first, residual, n) - np.bincount(second, residual, n) - shrink * theta
        precision = _laplacian(n, first, second, trials * p * (1 - p)) + shrink * np.eye(n)
        step = np.linalg.solve(precision, gradient)
        scale = 1.0
        while scale > 1e-6:
            candidate = theta + scale * step
            value = objective(candidate)
            if value >= current - 1e-12:
                break
            scale /= 2
        theta, current = candidate, value
        if np.max(np.abs(scale * step)) < 1e-10:
            break
    p = _sigmoid(theta[first] - theta[second])
    precision = _laplacian(n, first, second, trials * p * (1 - p)) + shrink * np.eye(n)
    return theta, precision


# Gauss-Hermite nodes and weights for expectations over a normal difference (exact to ~1e-6 here).
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(24)


def expected_information(theta: np.ndarray, covariance: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """E[p (1 - p)] per pair over the posterior theta ~ N(theta, covariance), by Gauss-Hermite
    quadrature over the difference theta_i - theta_j: while a difference is uncertain, a pair that
    looks close weighs a little less and one that looks far a little more (module docstring)."""
    i, j = pairs[:, 0], pairs[:, 1]
    sd = np.sqrt(np.maximum(covariance[i, i] + covariance[j, j] - 2 * covariance[i, j], 0.0))
    differences = (theta[i] - theta[j])[:, None] + math.sqrt(2) * sd[:, None] * _NODES[None, :]
    p = _sigmoid(differences)
    return (p * (1 - p)) @ _WEIGHTS / math.sqrt(math.pi)


def centred_sds(precision: np.ndarray) -> np.ndarray:
    """Standard deviation of each centred log-strength theta_k - mean(theta)."""
    n = precision.shape[0]
    centre = np.eye(n) - 1.0 / n
    return np.sqrt(np.maximum(np.diag(centre @ np.linalg.inv(precision) @ centre), 0.0))


def ranking_order(theta: np.ndarray) -> np.ndarray:
    """The models from the strongest down (equal strengths in index order)."""
    return np.argsort(-np.asarray(theta, dtype=float), kind="stable")


def adjacent_gap_sds(precision: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Standard deviation of each gap theta_order[k] - theta_order[k+1] between neighbours."""
    covariance = np.linalg.inv(precision)
    above, below = np.asarray(order[:-1]), np.asarray(order[1:])
    variance = covariance[above, above] + covariance[below, below] - 2 * covariance[above, below]
    return np.sqrt(np.maximum(variance, 0.0))


def neighbour_chances(theta: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """How likely each two models are neighbours in the ranking under the fit theta ~ N(theta,
    covariance): a symmetric matrix, zero on the diagonal. With q_ij = P(theta_i > theta_j) =
    Phi((theta_i - theta_j) / sd), a above b with nobody between has chance
    q_ab * prod_k (1 - q_ak q_kb), each k taken on its own: exact once the order is certain
    (1 for neighbours, 0 otherwise) and the same for every pair while nothing is known, so the
    design never favours an order it has no evidence for."""
    theta = np.asarray(theta, dtype=float)
    n = len(theta)
    variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    sd = np.sqrt(np.maximum(variance, 1e-24))
    ahead = np.vectorize(_normal_cdf)((theta[:, None] - theta[None, :]) / sd)
    np.fill_diagonal(ahead, 0.0)
    # between[a, b, k] = q_ak q_kb: the chance that k sits between a (above) and b (below).
    between = ahead[:, None, :] * ahead.T[None, :, :]
    between[np.arange(n), :, np.arange(n)] = 0.0
    between[:, np.arange(n), np.arange(n)] = 0.0
    above = ahead * np.prod(1.0 - between, axis=2)
    np.fill_diagonal(above, 0.0)
    return above + above.T


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def ranking_contrasts(neighbours: np.ndarray, gap_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, weights): the contrasts of the criterion (module docstring) as the rows of a matrix
    A, each with its weight omega, so that the criterion is sum_k omega_k a_k' C a_k. The first n
    rows centre each model (weight (1 - gap_weight) / n); then one row e_i - e_j per pair of
    all_pairs(n), weighted by `neighbours`[i, j] (how likely the two are neighbours in the ranking:
    `neighbour_chances`, or 1 and 0 for a known order) scaled so that the gaps weigh gap_weight."""
    n = neighbours.shape[0]
    pairs = all_pairs(n)
    gaps = np.zeros((len(pairs), n))
    gaps[np.arange(len(pairs)), pairs[:, 0]] = 1.0
    gaps[np.arange(len(pairs)), pairs[:, 1]] = -1.0
    rows = np.vstack([np.eye(n) - 1.0 / n, gaps])
    return rows, np.concatenate([np.full(n, (1 - gap_weight) / n), _gap_weights(neighbours, gap_weight)])


def _gap_weights(neighbours: np.ndarray, gap_weight: float) -> np.ndarray:
    """Per pair of all_pairs(n): its chance of being neighbours, scaled to sum to gap_weight."""
    pairs = all_pairs(neighbours.shape[0])
    chance = np.asarray(neighbours, dtype=float)[pairs[:, 0], pairs[:, 1]]
    total = chance.sum()
    return gap_weight * chance / total if total > 0 else np.full(len(pairs), gap_weight / len(pairs))


def known_order_neighbours(order: np.ndarray) -> np.ndarray:
    """The `neighbours` matrix of a known order: 1 for models next to each other in it, else 0."""
    order = np.asarray(order)
    neighbours = np.zeros((len(order), len(order)))
    neighbours[order[:-1], order[1:]] = neighbours[order[1:], order[:-1]] = 1.0
    return neighbours


def criterion_matrix(neighbours: np.ndarray, gap_weight: float) -> np.ndarray:
    """W = sum_k omega_k a_k a_k' over the contrasts of `ranking_contrasts`, so that the criterion is
    tr(W C): (1 - gap_weight) / n times the centring matrix (which is its own square) plus the
    graph Laplacian of the gaps' weights. An n x n matrix whatever the number of pairs, so that a
    step of the design costs O(n^3), not O(n^4)."""
    n = neighbours.shape[0]
    pairs = all_pairs(n)
    centre = np.eye(n) - 1.0 / n
    return (1 - gap_weight) / n * centre + _laplacian(n, pairs[:, 0], pairs[:, 1], _gap_weights(neighbours, gap_weight))


def design_criterion(precision: np.ndarray, matrix: np.ndarray) -> float:
    """tr(W C) = sum_k omega_k a_k' C a_k with C the inverse of `precision`, W `criterion_matrix`."""
    return float(np.sum(matrix * np.linalg.inv(precision)))


@dataclass(frozen=True)
class PairingDesign:
    """How the rest of a campaign's budget is to be spent over the model pairs (indices into
    `pairs`): `uniform` and `information` are probabilities over the pairs, each summing to 1
    over the pairs that can still be asked (0 elsewhere)."""

    pairs: np.ndarray
    uniform: np.ndarray
    information: np.ndarray
    uniform_share: float
    theta: np.ndarray
    gap_weight: float
    # Predicted mean 95 % interval width once the budget is spent, of the centred log-strengths
    # and of the gaps between neighbours in the current fit's order: with this design, and with
    # the uniform design for the rest (a yardstick, not a promise).
    predicted_width: float
    predicted_width_uniform: float
    predicted_gap_width: float
    predicted_gap_width_uniform: float

    @property
    def probabilities(self) -> np.ndarray:
        """The probability that a new pair is each model pair."""
        return self.uniform_share * self.uniform + (1 - self.uniform_share) * self.information


def _criterion_gain(precision: np.ndarray, weights: np.ndarray, pairs: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Per pair: how fast one more unit of weight on it lowers the criterion tr(W C),
    w_e * d_e' C W C d_e: from dC = -C (w d d') C."""
    covariance = np.linalg.inv(precision)
    gram = covariance @ matrix @ covariance
    i, j = pairs[:, 0], pairs[:, 1]
    return weights * np.maximum(gram[i, i] + gram[j, j] - 2 * gram[i, j], 0.0)


def pairing_design(
    n: int,
    first: ArrayLike = (),
    second: ArrayLike = (),
    first_wins: ArrayLike = (),
    second_wins: ArrayLike = (),
    ties: ArrayLike = (),
    *,
    remaining: float,
    uniform_share: float,
    available: ArrayLike | None = None,
    gap_weight: float = GAP_WEIGHT,
    prior_sd: float = PRIOR_SD,
    iterations: int = ITERATIONS,
) -> PairingDesign:
    """The design for the rest of a campaign (module docstring).

    The votes so far are counts per pair of models (indices < n; cannot-determine left out);
    `remaining` is how many decisive votes are still to come; `available` a boolean per pair of
    `all_pairs(n)`, False where the pair has no unused question left (default: all True);
    `gap_weight` the criterion's weight on the gaps between neighbours (0: the per-model
    intervals alone). Deterministic: the same votes give the same design.
    Raises ValueError when fewer than two models or no available pair."""
    if n < 2:
        raise ValueError("A design needs at least two models.")
    if not 0 < uniform_share <= 1:
        raise ValueError(f"The uniform share must be in (0, 1], got {uniform_share!r}.")
    if not 0 <= gap_weight <= 1:
        raise ValueError(f"The gaps' weight must be in [0, 1], got {gap_weight!r}.")
    pairs = all_pairs(n)
    usable = np.ones(len(pairs), dtype=bool) if available is None else np.asarray(available, dtype=bool)
    if usable.shape != (len(pairs),):
        raise ValueError(f"`available` needs one flag per pair ({len(pairs)}), got {usable.shape}.")
    if not usable.any():
        raise ValueError("No pair of models has a question left.")
    theta, precision = map_fit(n, first, second, first_wins, second_wins, ties, prior_sd=prior_sd)
    covariance = np.linalg.inv(precision)
    weights = expected_information(theta, covariance, pairs) * usable
    order = ranking_order(theta)
    matrix = criterion_matrix(neighbour_chances(theta, covariance), gap_weight)
    uniform = usable / usable.sum()
    remaining = max(float(remaining), 0.0)

    def precision_after(allocation: np.ndarray) -> np.ndarray:
        return precision + _laplacian(n, pairs[:, 0], pairs[:, 1], remaining * allocation * weights)

    def mixture(allocation: np.ndarray) -> np.ndarray:
        return uniform_share * uniform + (1 - uniform_share) * allocation

    allocation = uniform.copy()
    if remaining > 0 and uniform_share < 1:
        for _ in range(iterations):
            gain = _criterion_gain(precision_after(mixture(allocation)), weights, pairs, matrix)
            average = float(allocation @ gain)
            if average <= 0:
                break
            updated = allocation * np.sqrt(gain / average)
            updated /= updated.sum()
            moved = np.max(np.abs(updated - allocation) / np.maximum(allocation, 1e-12))
            allocation = updated
            if moved < TOLERANCE:
                break
    # The multiplicative steps leave tiny shares on pairs the plan drops: none below 1e-6 of the
    # largest, so that a pair's recorded probability is never a rounding artefact.
    allocation = np.where(allocation >= 1e-6 * allocation.max(), allocation, 0.0) * usable
    allocation /= allocation.sum()
    planned, uniformly = precision_after(mixture(allocation)), precision_after(uniform)
    return PairingDesign(
        pairs=pairs,
        uniform=uniform,
        information=allocation,
        uniform_share=float(uniform_share),
        theta=theta - theta.mean(),
        gap_weight=float(gap_weight),
        predicted_width=2 * Z95 * float(centred_sds(planned).mean()),
        predicted_width_uniform=2 * Z95 * float(centred_sds(uniformly).mean()),
        predicted_gap_width=2 * Z95 * float(adjacent_gap_sds(planned, order).mean()),
        predicted_gap_width_uniform=2 * Z95 * float(adjacent_gap_sds(uniformly, order).mean()),
    )


@dataclass(frozen=True)
class Draw:
    """One pair chosen: its index, which part of the design chose it, and the probability with
    which that pair was the one chosen (over both parts, given the pairs left out)."""

    pair: int
    chosen_by: str
    probability: float


def draw_pair(
    uniform: ArrayLike,
    information: ArrayLike,
    uniform_share: float,
    *,
    branch_random: float,
    pick_random: float,
    excluded: Collection[int] = (),
) -> Draw:
    """A pair drawn from the design: with probability `uniform_share` from `uniform`, otherwise
    from `information` (uniform again when nothing is left there), both renormalised without the
    `excluded` pairs (pairs found to have no question left since the design was computed).
    `branch_random` and `pick_random` are uniform numbers in [0, 1) from the caller's generator.
    Raises ValueError when every pair is excluded."""
    uniform = np.array(uniform, dtype=float)
    information = np.array(information, dtype=float)
    if len(excluded):
        uniform[list(excluded)] = 0.0
        information[list(excluded)] = 0.0
    if uniform.sum() <= 0:
        raise ValueError("Every pair is excluded.")
    uniform /= uniform.sum()
    share = uniform_share if information.sum() > 0 else 1.0
    information = information / information.sum() if information.sum() > 0 else uniform
    chosen_by = UNIFORM if branch_random < share else INFORMATION
    weights = uniform if chosen_by == UNIFORM else information
    cumulative = np.cumsum(weights)
    pair = int(min(np.searchsorted(cumulative, pick_random * cumulative[-1], side="right"), len(weights) - 1))
    # Rounding can leave the search on a pair of weight zero at the end: step back to a real one.
    while weights[pair] <= 0:
        pair -= 1
    probability = share * uniform[pair] + (1 - share) * information[pair]
    return Draw(pair=pair, chosen_by=chosen_by, probability=float(probability))
