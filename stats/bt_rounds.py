"""Bradley-Terry fits of many bootstrap rounds at once, and the multinomial redraws they fit: numpy,
with scipy's sparse matrices loaded only inside a fit (importing stats/ranking.py stays cheap), no
Django.

A bootstrap round of stats/ranking.py is the same comparison graph with other counts, started
from the full-data estimate, so its maximum is a few Newton steps away. Fitting the rounds one by
one with choix (a dense Markov chain and a linear solve per iteration, six or so iterations per
round, each a Python call) cost about 10 ms a round for 100 models; here every round takes its
Newton steps together: the gradients of all rounds are two sparse products with the pairs'
incidence matrix (the chord stage) or np.bincount over the pairs (Newton, with the Hessians), and
the steps are solved by one batched Cholesky factorisation (see cholesky_solve).

The maximised function is the one choix's regularised LSR reaches (see stats/ranking.py):

    L(t) = sum_ij W_ij * (t_i - log(exp t_i + exp t_j)) - alpha * n^2 * log(sum_i exp t_i)

subject to sum_i t_i = 0. Its negative Hessian H is a weighted graph Laplacian (weight
N p (1 - p) per pair, N its votes and p the fitted probability) plus alpha n^2 (diag(s) - s s')
with s = softmax(t): both vanish along "add one to every t", the direction the constraint
removes. Solving (H + 11'/n) step = g - mean(g) gives the constrained Newton step (the added
rank-one term only acts on that direction), and H + 11'/n is positive definite when the round's
graph is connected. A step is capped at MAX_STEP in any coordinate so a round far from the
start cannot overshoot; rounds that have not converged after MAX_ITER steps are reported, and
the caller refits them with choix.
"""

import numpy as np
from numpy.typing import ArrayLike

# Newton converges quadratically: after a step of size s the error left is of order s^2, so a step
# below 1e-7 leaves the estimate within about 1e-13 of the maximum (tests/stats check 1e-9 against
# choix), well inside the 1e-8 the single fits of stats/ranking.py promise.
STEP_TOL = 1e-7
MAX_ITER = 60
MAX_STEP = 2.0
# Rounds are solved in groups whose Hessians hold at most this many numbers (32 MB).
CHUNK_NUMBERS = 4_000_000
# The chord stage converges linearly: a step that is not below half the previous one hands the
# round to Newton, and with a rate below 1/2 the error left after a step of size s is below s, so
# its tolerance is the error wanted.
CHORD_RATE = 0.5
CHORD_STEP_TOL = 1e-10
CHORD_MAX_ITER = 60


def fit_rounds(
    n: int,
    first: np.ndarray,
    second: np.ndarray,
    wins_first: np.ndarray,
    wins_second: np.ndarray,
    *,
    alpha: float,
    initial: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-strengths (mean zero) of each round: (estimates of shape (rounds, n), converged per round).

    first, second: model indices of the k pairs (each pair once); wins_first, wins_second:
    (rounds, k) wins of the first and of the second model of each pair, ties already counted as
    half a win each way; alpha >= 0 as in stats/ranking.py (alpha == 0 needs every round's graph
    strongly connected: the caller checks); initial: the starting log-strengths (n,), normally
    the full-data estimate.

    Two stages. First the chord method: Newton steps that all use one Hessian, the full data's at
    `initial` (one factorisation for every round and step, so a step is a gradient and a product
    with its inverse). A round's Hessian differs from it by the resampling noise of the counts, so
    the error shrinks by about that relative noise per step (a few per cent with hundreds of votes
    per pair). Rounds it leaves unconverged (sparse votes, where the noise is large) take full
    Newton steps with their own Hessians.
    """
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    wins_first = np.atleast_2d(np.asarray(wins_first, dtype=float))
    wins_second = np.atleast_2d(np.asarray(wins_second, dtype=float))
    initial = np.asarray(initial, dtype=float)
    estimates, converged = _chord(n, first, second, wins_first, wins_second, alpha, initial)
    chunk = max(1, CHUNK_NUMBERS // max(1, n * n))
    left = np.flatnonzero(~converged)
    for start in range(0, len(left), chunk):
        part = left[start : start + chunk]
        estimates[part], converged[part] = _newton(
            n, first, second, wins_first[part], wins_second[part], alpha, initial
        )
    return estimates, converged


def multinomial_redraws(counts: ArrayLike, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """`rounds` draws of Multinomial(N, counts / N) with N = sum(counts): (rounds, len(counts)) integers.

    The bootstrap of aggregated cells (stats/ranking.py; FastChat's compute_bootstrap_bt draws the
    same distribution with rng.multinomial). numpy's multinomial draws one binomial per cell in
    turn (about 0.35 s for 100 rounds of 15,000 cells); independent Poisson counts with means
    `counts` cost half of that, and are made into the multinomial exactly:

    - given their sum S, Poisson counts are Multinomial(S, counts / N), the histogram of S
      independent draws of a cell;
    - so when S < N, N - S more independent draws of a cell complete N of them, and when S > N,
      keeping a uniformly random N of the S draws (removing S - N chosen without replacement,
      whatever their cells) leaves N independent draws.

    Either way each round is Multinomial(N, counts / N); S - N is of the order of sqrt(N), so the
    correction is a small part of the work.
    """
    counts = np.asarray(counts, dtype=float)
    total = int(round(counts.sum()))
    cells = len(counts)
    draws = rng.poisson(counts, size=(rounds, cells))
    if total == 0:
        return draws
    missing = total - draws.sum(axis=1)
    short = np.flatnonzero(missing > 0)
    if len(short):
        # Each further draw lands in the cell whose stretch of [0, N) holds a uniform point.
        points = rng.random(int(missing[short].sum())) * total
        landed = np.searchsorted(np.cumsum(counts), points, side="right")
        round_of = np.repeat(short, missing[short])
        draws += np.bincount(round_of * cells + landed, minlength=rounds * cells).reshape(rounds, cells)
    for r in np.flatnonzero(missing < 0):
        # The S draws of round r in cell order; removing those at S - N distinct random places.
        drawn = int(draws[r].sum())
        places = rng.choice(drawn, size=drawn - total, replace=False)
        draws[r] -= np.bincount(np.searchsorted(np.cumsum(draws[r]), places, side="right"), minlength=cells)
    return draws


def _gradient(
    n: int,
    first: np.ndarray,
    second: np.ndarray,
    wins_first: np.ndarray,
    votes: np.ndarray,
    t: np.ndarray,
    penalty: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of L (see the module docstring) for every round, projected to sum zero."""
    rounds = t.shape[0]
    row = np.arange(rounds)[:, None]
    # The logistic function as 0.5 (1 + tanh(x / 2)): no overflow for large differences.
    p = 0.5 * (1.0 + np.tanh(0.5 * (t[:, first] - t[:, second])))
    residual = (wins_first - votes * p).ravel()
    gradient = np.bincount((row * n + first).ravel(), residual, rounds * n)
    gradient -= np.bincount((row * n + second).ravel(), residual, rounds * n)
    gradient = gradient.reshape(rounds, n)
    if penalty > 0:
        share = np.exp(t - t.max(axis=1, keepdims=True))
        gradient -= penalty * share / share.sum(axis=1, keepdims=True)
    return gradient - gradient.mean(axis=1, keepdims=True), p


def _hessians(
    n: int, first: np.ndarray, second: np.ndarray, votes: np.ndarray, p: np.ndarray, t: np.ndarray, penalty: float
) -> np.ndarray:
    """H + 11'/n (see the module docstring) for every round: (rounds, n, n)."""
    rounds = votes.shape[0]
    row = np.arange(rounds)[:, None]
    weight = (votes * p * (1 - p)).ravel()
    hessian = np.zeros(rounds * n * n)
    hessian[(row * n * n + first * n + second).ravel()] = -weight
    hessian[(row * n * n + second * n + first).ravel()] = -weight
    hessian = hessian.reshape(rounds, n, n)
    degree = np.bincount((row * n + first).ravel(), weight, rounds * n)
    degree += np.bincount((row * n + second).ravel(), weight, rounds * n)
    diagonal = np.arange(n) * (n + 1)
    hessian.reshape(rounds, n * n)[:, diagonal] = degree.reshape(rounds, n)
    if penalty > 0:
        share = np.exp(t - t.max(axis=1, keepdims=True))
        share /= share.sum(axis=1, keepdims=True)
        hessian -= penalty * share[:, :, None] * share[:, None, :]
        hessian.reshape(rounds, n * n)[:, diagonal] += penalty * share
    return hessian + 1.0 / n


def _chord(
    n: int,
    first: np.ndarray,
    second: np.ndarray,
    wins_first: np.ndarray,
    wins_second: np.ndarray,
    alpha: float,
    initial: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    rounds = wins_first.shape[0]
    votes = wins_first + wins_second
    penalty = alpha * n * n
    start = initial - initial.mean()
    converged = np.zeros(rounds, dtype=bool)
    mean_votes = votes.mean(axis=0, keepdims=True)
    _, p = _gradient(n, first, second, wins_first[:1], mean_votes, start[None], penalty)
    try:
        lower = np.linalg.cholesky(_hessians(n, first, second, mean_votes, p, start[None], penalty)[0])
    except np.linalg.LinAlgError:
        return np.tile(start, (rounds, 1)), converged
    # The inverse, column by column, so each step is one matrix product for all rounds.
    inverse = cholesky_solve(np.broadcast_to(lower, (n, n, n)), np.eye(n))
    # One column per round from here on, and the pairs as a sparse incidence matrix (+1 for the
    # first model, -1 for the second): each pair's difference of strengths and each model's sum
    # of residuals are then two sparse products for all rounds, ten times faster than gathering
    # the pairs' strengths and np.bincount. scipy is loaded by the full fit before any bootstrap.
    from scipy.sparse import csr_array

    pairs = np.arange(len(first))
    incidence = csr_array(
        (np.repeat([1.0, -1.0], len(first)), (np.tile(pairs, 2), np.concatenate([first, second]))),
        shape=(len(first), n),
    )
    spread = incidence.T.tocsr()
    wins_by_pair = np.ascontiguousarray(wins_first.T)
    votes_by_pair = np.ascontiguousarray(votes.T)
    strengths = np.tile(start[:, None], (1, rounds))
    active = np.ones(rounds, dtype=bool)
    previous = np.full(rounds, np.inf)
    for _ in range(CHORD_MAX_ITER):
        # The logistic function as 0.5 (1 + tanh(x / 2)): no overflow for large differences.
        p = 0.5 * (1.0 + np.tanh(0.5 * (incidence @ strengths)))
        gradient = spread @ (wins_by_pair - votes_by_pair * p)
        if penalty > 0:
            share = np.exp(strengths - strengths.max(axis=0))
            gradient -= penalty * share / share.sum(axis=0)
        step = inverse @ (gradient - gradient.mean(axis=0))
        size = np.max(np.abs(step), axis=0)
        # A step that grows means the shared Hessian is too far from this round's: Newton's turn.
        growing = size > CHORD_RATE * previous
        strengths += step * (active & ~growing)
        done = size < CHORD_STEP_TOL
        converged |= active & done
        previous = np.where(active, size, previous)
        # Rounds that stopped are computed along with the others (cheaper than taking columns out)
        # but never moved again.
        active &= ~done & ~growing
        if not active.any():
            break
    t = strengths.T - strengths.mean(axis=0)[:, None]
    return t, converged & np.all(np.isfinite(t), axis=1)


def cholesky_solve(lower: np.ndarray, right: np.ndarray) -> np.ndarray:
    """x with (L L') x = b for stacks of lower-triangular L (rounds, n, n) and b (rounds, n).

    By forward then backward substitution, one vectorised row at a time across the stack. Not
    np.linalg.solve: its batched LU calls threaded OpenBLAS once per matrix, and on a busy machine
    the threads' hand-offs made 100 solves of 100 x 100 take 0.2-0.8 s, against 0.04 s for the
    batched Cholesky factorisation plus these loops.
    """
    n = right.shape[1]
    y = np.empty_like(right)
    for i in range(n):
        y[:, i] = (right[:, i] - np.einsum("rj,rj->r", lower[:, i, :i], y[:, :i])) / lower[:, i, i]
    x = np.empty_like(right)
    for i in range(n - 1, -1, -1):
        x[:, i] = (y[:, i] - np.einsum("rj,rj->r", lower[:, i + 1 :, i], x[:, i + 1 :])) / lower[:, i, i]
    return x


def _newton(
    n: int,
    first: np.ndarray,
    second: np.ndarray,
    wins_first: np.ndarray,
    wins_second: np.ndarray,
    alpha: float,
    initial: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    rounds = wins_first.shape[0]
    votes = wins_first + wins_second
    penalty = alpha * n * n
    t = np.tile(initial - initial.mean(), (rounds, 1))
    step_size = np.full(rounds, np.inf)
    for _ in range(MAX_ITER):
        gradient, p = _gradient(n, first, second, wins_first, votes, t, penalty)
        try:
            step = cholesky_solve(np.linalg.cholesky(_hessians(n, first, second, votes, p, t, penalty)), gradient)
        except np.linalg.LinAlgError:
            # A singular round (a graph in pieces): leave every round unconverged for the caller.
            return t, np.zeros(rounds, dtype=bool)
        step_size = np.max(np.abs(step), axis=1)
        step *= np.minimum(1.0, MAX_STEP / np.maximum(step_size, 1e-300))[:, None]
        t += step
        t -= t.mean(axis=1, keepdims=True)
        if not np.any(step_size >= STEP_TOL):
            break
    return t, (step_size < STEP_TOL) & np.all(np.isfinite(t), axis=1)
