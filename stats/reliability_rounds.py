"""The numerical core of stats/reliability.py: Newton steps of many bootstrap rounds of the
Crowd-BT fit at once, and the reliabilities read from the decisive votes; numpy only, no Django.

Each round's parameters are the models' strengths t and the annotators' etas. A step's
information matrix has three blocks: strengths x strengths (a graph Laplacian of the pairs'
sums), etas x etas, which is diagonal (an eta meets only its own annotator's cells), and
strengths x etas. The etas are eliminated (a Schur complement), which leaves one
models x models system per round: with 8 models and 200 annotators a Cholesky factorisation of
8 x 8 per round where the whole 208 x 208 matrix was factorised (threaded OpenBLAS, whose threads
spin while waiting for a core on a busy machine). The step is the same Newton step.
"""

from dataclasses import dataclass

import numpy as np

from stats.bt_rounds import cholesky_solve

MAX_ITER = 200
# Rounds are stepped in blocks of at most this many (round, cell) numbers per array (see fit_rounds).
BLOCK_NUMBERS = 32_768
STEP_TOL = 1e-8
MAX_STEP = 2.0
EPS = 1e-12
# The decisive reliabilities' Newton iterations stop once no step exceeds DECISIVE_TOL.
DECISIVE_TOL = 1e-13
DECISIVE_MAX_ITER = 100


@dataclass
class Cells:
    """Votes summed per (annotator, unordered model pair) cell, per question for the bootstrap."""

    n_models: int
    n_annotators: int
    annotator: np.ndarray  # per cell
    first: np.ndarray
    second: np.ndarray
    # (question-cell rows): which cell, which question, and its sums
    row_cell: np.ndarray
    row_question: np.ndarray
    row_votes: np.ndarray
    row_score: np.ndarray  # first model's wins + half its ties
    row_decisive: np.ndarray
    row_first_wins: np.ndarray
    questions: int


def _gaps(t: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """2 p - 1 = tanh((t_first - t_second) / 2) of every round and cell: computed once per model
    pair and round, then read per cell (tanh costs about ten multiplications, and cells repeat
    the pairs)."""
    n = t.shape[1]
    per_pair = np.tanh(0.5 * (t[:, :, None] - t[:, None, :])).reshape(len(t), n * n)
    return per_pair[:, first * n + second]


def probabilities(t: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _gaps(t, first, second))


def fit_rounds(
    cells: Cells,
    votes: np.ndarray,
    score: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    fixed: np.ndarray,
    t0: np.ndarray,
    eta0: np.ndarray,
    shrink: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strengths and weights (eta over all votes) of every round, fitted together by Fisher
    scoring (Newton's method with the expected information, which is never indefinite), eta kept
    in [0, 1] by holding an eta on its bound while the gradient pushes it out. A round stops
    moving once its step is below STEP_TOL; only the others are computed on.

    votes, score: (rounds, cells); gold_right, gold_all: (rounds, annotators); fixed: annotators
    whose eta is held at 1 (bool, annotators); t0, eta0: starting values (rounds, ...).
    Returns (strengths centred, eta, converged per round).

    The rounds are computed on in blocks of about BLOCK_NUMBERS (round, cell) numbers: a step
    makes some forty passes over such arrays, and a block's stay in the processor's cache (with
    200 annotators, 92 rounds at once took about a third more CPU than 7 at a time). Each
    round's steps depend on its own numbers only, but for one choice: a block whose observed
    information is not positive definite in some round takes Fisher scoring's step in all of
    its rounds."""
    block = max(1, BLOCK_NUMBERS // max(1, len(cells.annotator)))
    parts = [
        _fit_block(
            cells,
            votes[start : start + block],
            score[start : start + block],
            gold_right[start : start + block],
            gold_all[start : start + block],
            fixed,
            t0[start : start + block],
            eta0[start : start + block],
            shrink,
        )
        for start in range(0, votes.shape[0], block)
    ]
    t, eta, converged = (np.concatenate([part[k] for part in parts]) for k in range(3))
    return t, eta, converged


def _fit_block(
    cells: Cells,
    votes: np.ndarray,
    score: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    fixed: np.ndarray,
    t0: np.ndarray,
    eta0: np.ndarray,
    shrink: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rounds = votes.shape[0]
    t = np.array(t0, dtype=float)
    eta = np.where(fixed[None, :], 1.0, np.array(eta0, dtype=float))
    converged = np.zeros(rounds, dtype=bool)
    active = np.arange(rounds)
    layout = _Layout(cells, rounds)
    for _ in range(MAX_ITER):
        step = _scoring_step(
            cells,
            layout,
            votes[active],
            score[active],
            gold_right[active],
            gold_all[active],
            fixed,
            t[active],
            eta[active],
            shrink,
        )
        if step is None:
            # A round with no information on some strength (its votes in pieces): left unconverged.
            break
        largest = np.max(np.abs(step), axis=1)
        step *= np.minimum(1.0, MAX_STEP / np.maximum(largest, 1e-300))[:, None]
        t[active] += step[:, : cells.n_models]
        eta[active] = np.clip(eta[active] + step[:, cells.n_models :], 0.0, 1.0)
        done = largest < STEP_TOL
        converged[active[done]] = True
        active = active[~done]
        if not len(active):
            break
    t = t - t.mean(axis=1, keepdims=True)
    return t, eta, converged & np.all(np.isfinite(t), axis=1)


class _Layout:
    """Where each (round, cell) number goes in the per-round sums of a Newton step, for the first
    `rounds` rounds (a step on m rounds uses the first m * cells entries of each)."""

    def __init__(self, cells: Cells, rounds: int) -> None:
        n, k_count, count = cells.n_models, cells.n_annotators, len(cells.annotator)
        row = np.arange(rounds)[:, None]
        self.count = count
        # cells are (annotator, low, high): one pair per cell, first < second
        self.pair = (row * n * n + cells.first * n + cells.second).ravel()
        self.annotator = (row * k_count + cells.annotator).ravel()
        self.first_eta = (row * n * k_count + cells.first * k_count + cells.annotator).ravel()
        self.second_eta = (row * n * k_count + cells.second * k_count + cells.annotator).ravel()


def _scoring_step(
    cells: Cells,
    layout: _Layout,
    votes: np.ndarray,
    score: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    fixed: np.ndarray,
    t: np.ndarray,
    eta: np.ndarray,
    shrink: float,
) -> np.ndarray | None:
    """One Newton (or Fisher-scoring) step of every round given: (rounds, models + annotators),
    or None when a round's information is singular.

    Per cell, with b = 2 p - 1 = tanh((t_i - t_j) / 2), c = 2 eta - 1 and s = p (1 - p) = (1 - b^2) / 4:
    q = (1 + c b) / 2, dq/dt_i = -dq/dt_j = a = c s and dq/deta = b."""
    rounds, n, k_count = votes.shape[0], cells.n_models, cells.n_annotators
    used = rounds * layout.count
    pair, annotator = layout.pair[:used], layout.annotator[:used]
    b = _gaps(t, cells.first, cells.second)
    c = (2 * eta - 1)[:, cells.annotator]
    q = np.clip(0.5 + 0.5 * c * b, EPS, 1 - EPS)
    won, lost = score / q, (votes - score) / (1 - q)
    residual = won - lost
    s = 0.25 * (1 - b * b)
    a = c * s
    ra = residual * a

    def per_pair(values: np.ndarray) -> np.ndarray:
        return np.bincount(pair, values.ravel(), rounds * n * n).reshape(rounds, n, n)

    def per_annotator(values: np.ndarray) -> np.ndarray:
        return np.bincount(annotator, values.ravel(), rounds * k_count).reshape(rounds, k_count)

    to_first = per_pair(ra)
    grad_t = to_first.sum(axis=2) - to_first.sum(axis=1) - shrink * (t - t.mean(axis=1, keepdims=True))
    grad_e = per_annotator(residual * b)

    # Newton's step with the observed information where it is positive definite (quadratic
    # convergence near the maximum), else Fisher scoring's with the expected one (always positive
    # semi-definite). The information has three blocks: strengths x strengths (a graph Laplacian
    # of the pairs' sums), etas x etas (diagonal: an eta meets only its own annotator's cells) and
    # strengths x etas (n x annotators), each gathered by np.bincount over the cells.
    def gathered(tt: np.ndarray, ee: np.ndarray, te: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        between = per_pair(tt)
        between = between + between.transpose(0, 2, 1)
        laplacian = -between
        index = np.arange(n)
        laplacian[:, index, index] += between.sum(axis=2)
        te = te.ravel()
        size = rounds * n * k_count
        mixed = np.bincount(layout.first_eta[:used], te, size) - np.bincount(layout.second_eta[:used], te, size)
        return laplacian, per_annotator(ee), mixed.reshape(rounds, n, k_count)

    curvature = won / q + lost / (1 - q)
    observed = (curvature * a * a + ra * b, curvature * b * b, curvature * a * b - 2 * residual * s)
    step = _solved(*gathered(*observed), grad_t, grad_e, gold_right, gold_all, fixed, eta, shrink)
    if step is None:
        weight = votes / (q * (1 - q))
        expected = gathered(weight * a * a, weight * b * b, weight * a * b)
        step = _solved(*expected, grad_t, grad_e, gold_right, gold_all, fixed, eta, shrink)
    return step


def _solved(
    tt: np.ndarray,
    ee: np.ndarray,
    te: np.ndarray,
    grad_t: np.ndarray,
    grad_e: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    fixed: np.ndarray,
    eta: np.ndarray,
    shrink: float,
) -> np.ndarray | None:
    """The step info^-1 gradient, with gold votes, the ridge and the etas held on their bounds
    added; None when info is not positive definite. info = [[tt, te], [te', diag(ee)]]: the etas
    are eliminated (info is positive definite when every ee is positive and the Schur complement
    tt - te diag(ee)^-1 te' is), which leaves an n x n system per round where the whole matrix
    was (n + annotators) squared: with 200 annotators, a factorisation of 8 x 8 against 208 x 208."""
    n = tt.shape[1]
    if gold_all.any():
        g = np.clip(eta, 1e-6, 1 - 1e-6)
        grad_e = grad_e + gold_right / g - (gold_all - gold_right) / (1 - g)
        ee = ee + gold_all / (g * (1 - g))
    # The ridge, and the direction "add one to every strength" (the ridge is flat along it).
    tt = tt + (shrink * (np.eye(n) - 1.0 / n) + 1.0 / n)
    held = fixed[None, :] | ((eta >= 1) & (grad_e >= 0)) | ((eta <= 0) & (grad_e <= 0))
    grad_e = np.where(held, 0.0, grad_e)
    te = te * ~held[:, None, :]
    ee = np.where(held, 1.0, ee + 1e-9)
    if not np.all(ee > 0):
        return None
    scaled = te / ee[:, None, :]
    try:
        lower = np.linalg.cholesky(tt - np.einsum("rik,rjk->rij", scaled, te))
    except np.linalg.LinAlgError:
        return None
    step_t = cholesky_solve(lower, grad_t - np.einsum("rik,rk->ri", scaled, grad_e))
    step_e = grad_e / ee - np.einsum("rik,ri->rk", scaled, step_t)
    return np.concatenate([step_t, step_e], axis=1)


def _eta_derivatives(
    eta: np.ndarray,
    slope: np.ndarray,
    wins: np.ndarray,
    losses: np.ndarray,
    slot: np.ndarray,
    right: np.ndarray,
    wrong: np.ndarray,
    second: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """First (and second, negated) derivatives in eta of the decisive votes' log-likelihood, for
    unknowns `eta` (flat) whose entries (slope = 2 p - 1, wins, losses) sit in `slot`."""
    q = np.clip(0.5 + (eta[slot] - 0.5) * slope, EPS, 1 - EPS)
    wins_q, losses_q = wins / q, losses / (1 - q)
    g = np.clip(eta, EPS, 1 - EPS)
    first = np.bincount(slot, slope * (wins_q - losses_q), len(eta)) + right / g - wrong / (1 - g)
    if not second:
        return first, None
    curvature = np.bincount(slot, slope * slope * (wins_q / q + losses_q / (1 - q)), len(eta))
    return first, curvature + right / g**2 + wrong / (1 - g) ** 2


def decisive_reliability(
    cells: Cells,
    t: np.ndarray,
    decisive: np.ndarray,
    first_wins: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Each annotator's eta from its decisive votes (and gold votes) at strengths t: the maximum
    of a concave function of one variable on [0, 1], every round and annotator at once.
    (rounds, annotators).

    On the boundary where the derivative does not change sign there; inside, Newton's method on
    the derivative within a bracket that each step narrows (a step leaving the bracket bisects
    it instead), until the step is below DECISIVE_TOL (a dozen steps where 60 bisections were
    taken), on the cells of those annotators only (most careful annotators' lie on the boundary),
    from `start` (annotators: the full data's, for bootstrap rounds) where it is inside."""
    rounds, k_count = t.shape[0], cells.n_annotators
    shape = (rounds, k_count)
    slope = _gaps(t, cells.first, cells.second).ravel()
    wins = np.broadcast_to(first_wins, (rounds, len(cells.annotator))).ravel()
    losses = np.broadcast_to(decisive, (rounds, len(cells.annotator))).ravel() - wins
    slot = (np.arange(rounds)[:, None] * k_count + cells.annotator).ravel()
    right = np.broadcast_to(gold_right, shape).ravel()
    wrong = np.broadcast_to(gold_all, shape).ravel() - right
    every = (slope, wins, losses, slot, right, wrong)
    at_one = _eta_derivatives(np.ones(rounds * k_count), *every, second=False)[0] >= 0
    at_zero = _eta_derivatives(np.zeros(rounds * k_count), *every, second=False)[0] <= 0
    eta = np.where(at_zero, 0.0, 1.0)  # both: no decisive vote, read as 0 as before
    unknown = np.flatnonzero(~(at_one | at_zero))
    place = np.full(rounds * k_count, -1)
    place[unknown] = np.arange(len(unknown))
    kept = np.flatnonzero(place[slot] >= 0)
    part = (slope[kept], wins[kept], losses[kept], place[slot[kept]], right[unknown], wrong[unknown])
    low, high = np.zeros(len(unknown)), np.ones(len(unknown))
    now = np.full(len(unknown), 0.5)
    if start is not None:
        begin = np.broadcast_to(start, shape).ravel()[unknown]
        now = np.where((begin > 0) & (begin < 1), begin, now)
    for _ in range(DECISIVE_MAX_ITER if len(unknown) else 0):
        rate, curvature = _eta_derivatives(now, *part)
        rising = rate > 0
        low = np.where(rising, now, low)
        high = np.where(rising, high, now)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = now + rate / curvature
        ahead = np.where((newton >= low) & (newton <= high), newton, 0.5 * (low + high))
        moved = np.abs(ahead - now)
        now = ahead
        if not np.any(moved > DECISIVE_TOL):
            break
    eta[unknown] = now
    eta = eta.reshape(shape)
    # An annotator with no decisive vote nor gold vote says nothing: no reliability.
    said = np.bincount(cells.annotator, minlength=k_count) > 0
    return np.where(said[None, :] | (gold_all > 0), eta, np.nan)
