"""Adaptive pairing: which pair of models a human campaign should compare next. Pure: numpy only.

The model is the one the campaign's figures are fitted with (stats/ranking.py): Bradley-Terry on
log-strengths theta, a tie counting as half a win each way. One comparison of models i and j
adds w = p (1 - p) d d' to the Fisher information of theta, with p = sigma(theta_i - theta_j) and
d = e_i - e_j; a tie changes the variance of a comparison, not which pairs are informative, so it
is left out here. The campaign reports each model's mean-zero log-strength with a 95 % interval,
so the design aims at what the researcher reads: the mean, over models, of the standard deviation
of the centred log-strengths, sqrt(diag(P C P)) with C the inverse of the information and
P = I - 11'/n. A close pair (p near 1/2) and a model measured little (a large sd) gain the most.

The design (`pairing_design`):

- fits theta by maximum a posteriori with a normal prior of sd PRIOR_SD on each log-strength
  (the design's own: the prior keeps the first comparisons, and a model that never lost, from
  looking certain; it never enters the reported figures);
- weighs each pair by its expected information under that fit, E[p (1 - p)] over the (normal,
  Laplace) posterior of theta_i - theta_j: while a difference is uncertain, a pair that only
  looks far apart keeps some weight;
- allocates the votes still to come: the share `uniform_share` of them uniformly over the model
  pairs that still have an unused question, and the rest in proportions pi chosen to minimise
  the mean sd at the end of the budget, given every comparison already made. pi is found by the
  multiplicative algorithm of optimal design (Silvey, Titterington and Torsney, 1978),
  pi_e <- pi_e (g_e / sum pi g)^(1/2) with g_e the reduction of the criterion per vote on pair e;
- so a pair is chosen with probability uniform_share * u_e + (1 - uniform_share) * pi_e, the
  probability every adaptive pair records (`probabilities`).

Sampling the next pair from the allocation of all remaining votes, rather than the single best
next pair, keeps the design sound while its fit is refreshed in the background: every pair drawn
before the next refresh follows the plan instead of all going to one pair. The uniform share
keeps every model pair compared, so that no pair is starved by an early misjudged fit.
"""

import math
from dataclasses import dataclass

import numpy as np

# The design's prior sd of each log-strength: a spread of about 1.5 is typical of published
# leaderboards (ChineseAlpacaEval's win rates against its reference, as log-odds, have sd 1.1-1.5).
PRIOR_SD = 1.5
ITERATIONS = 300
# The multiplicative algorithm stops once no pair's share moves by more than this (relative).
TOLERANCE = 1e-4
Z95 = 1.959963984540054
UNIFORM, INFORMATION = "uniform", "information"


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _laplacian(n: int, first: np.ndarray, second: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Sum over pairs of weight * (e_i - e_j)(e_i - e_j)'."""
    matrix = np.zeros((n, n))
    np.add.at(matrix, (first, first), weights)
    np.add.at(matrix, (second, second), weights)
    np.add.at(matrix, (first, second), -weights)
    np.add.at(matrix, (second, first), -weights)
    return matrix


def all_pairs(n: int) -> np.ndarray:
    """Every unordered pair of n models, (i, j) with i < j, in a fixed order: shape (n(n-1)/2, 2)."""
    first, second = np.triu_indices(n, k=1)
    return np.column_stack([first, second]).astype(np.int64)


def map_fit(
    n: int, first, second, first_wins, second_wins, ties, *, prior_sd: float = PRIOR_SD
) -> tuple[np.ndarray, np.ndarray]:
    """(theta, precision): the maximum a posteriori log-strengths with a normal prior of sd
    `prior_sd` on each, ties as half a win each way, and the posterior precision there (Fisher
    information plus the prior's). Newton's method with step halving; the objective is strictly
    concave, so it converges from zero whatever the votes (a model that never lost included)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    trials = np.asarray(first_wins, float) + np.asarray(second_wins, float) + np.asarray(ties, float)
    scored = np.asarray(first_wins, float) + 0.5 * np.asarray(ties, float)
    shrink = 1.0 / prior_sd**2

    def objective(theta):
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
    # Predicted mean 95 % interval width of the centred log-strengths once the budget is spent:
    # with this design, and with the uniform design for the rest (a yardstick, not a promise).
    predicted_width: float
    predicted_width_uniform: float

    @property
    def probabilities(self) -> np.ndarray:
        """The probability that a new pair is each model pair."""
        return self.uniform_share * self.uniform + (1 - self.uniform_share) * self.information


def _criterion_gain(precision: np.ndarray, weights: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Per pair: how fast one more unit of weight on it lowers the sum of the centred sds,
    w_e * sum_k (P C d_e)_k^2 / (2 sd_k): from d(P C P) = -P C (w d d') C P."""
    n = precision.shape[0]
    centre = np.eye(n) - 1.0 / n
    spread = centre @ np.linalg.inv(precision)
    sds = np.sqrt(np.maximum(np.einsum("ij,ji->i", spread, centre), 1e-300))
    gram = spread.T @ (spread / (2 * sds)[:, None])
    i, j = pairs[:, 0], pairs[:, 1]
    return weights * np.maximum(gram[i, i] + gram[j, j] - 2 * gram[i, j], 0.0)


def pairing_design(
    n: int,
    first=(),
    second=(),
    first_wins=(),
    second_wins=(),
    ties=(),
    *,
    remaining: float,
    uniform_share: float,
    available=None,
    prior_sd: float = PRIOR_SD,
    iterations: int = ITERATIONS,
) -> PairingDesign:
    """The design for the rest of a campaign (module docstring).

    The votes so far are counts per pair of models (indices < n; cannot-determine left out);
    `remaining` is how many decisive votes are still to come; `available` a boolean per pair of
    `all_pairs(n)`, False where the pair has no unused question left (default: all True).
    Raises ValueError when fewer than two models or no available pair."""
    if n < 2:
        raise ValueError("A design needs at least two models.")
    if not 0 < uniform_share <= 1:
        raise ValueError(f"The uniform share must be in (0, 1], got {uniform_share!r}.")
    pairs = all_pairs(n)
    usable = np.ones(len(pairs), dtype=bool) if available is None else np.asarray(available, dtype=bool)
    if usable.shape != (len(pairs),):
        raise ValueError(f"`available` needs one flag per pair ({len(pairs)}), got {usable.shape}.")
    if not usable.any():
        raise ValueError("No pair of models has a question left.")
    theta, precision = map_fit(n, first, second, first_wins, second_wins, ties, prior_sd=prior_sd)
    weights = expected_information(theta, np.linalg.inv(precision), pairs) * usable
    uniform = usable / usable.sum()
    remaining = max(float(remaining), 0.0)

    def precision_after(allocation):
        return precision + _laplacian(n, pairs[:, 0], pairs[:, 1], remaining * allocation * weights)

    def mixture(allocation):
        return uniform_share * uniform + (1 - uniform_share) * allocation

    allocation = uniform.copy()
    if remaining > 0 and uniform_share < 1:
        for _ in range(iterations):
            gain = _criterion_gain(precision_after(mixture(allocation)), weights, pairs)
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
    width = 2 * Z95 * float(centred_sds(precision_after(mixture(allocation))).mean())
    width_uniform = 2 * Z95 * float(centred_sds(precision_after(uniform)).mean())
    return PairingDesign(
        pairs=pairs,
        uniform=uniform,
        information=allocation,
        uniform_share=float(uniform_share),
        theta=theta - theta.mean(),
        predicted_width=width,
        predicted_width_uniform=width_uniform,
    )


@dataclass(frozen=True)
class Draw:
    """One pair chosen: its index, which part of the design chose it, and the probability with
    which that pair was the one chosen (over both parts, given the pairs left out)."""

    pair: int
    chosen_by: str
    probability: float


def draw_pair(
    uniform, information, uniform_share: float, *, branch_random: float, pick_random: float, excluded=()
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
