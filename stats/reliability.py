"""Bradley-Terry with each annotator's reliability fitted alongside the strengths: pure numpy and
scipy, no Django.

The model is Crowd-BT's (Chen, Bennett, Collins-Thompson and Horvitz, 2013): annotator k votes
the way the Bradley-Terry model says with probability eta_k and against it with 1 - eta_k, so k
prefers model i to model j with probability

    q = eta_k p + (1 - eta_k) (1 - p) = 1/2 + (eta_k - 1/2) (2 p - 1),   p = sigma(t_i - t_j).

eta 1 is a careful annotator (plain Bradley-Terry), 1/2 one voting at random, 0 one voting against
the truth. A tie counts as half a win each way, as in the plain fit (stats/ranking.py), so the
strengths maximise

    sum over (annotator, pair) cells of  y log q + (n - y) log(1 - q)

(n votes of the cell, y the first model's wins plus half its ties), plus, for gold pairs, each
annotator's decisive gold votes as Bernoulli(eta_k) draws (a gold pair's answer is known: p = 1).
Ties as half wins keep the strengths consistent when a careful annotator ties close models (the
bench's annotators), when they tie anything at a fixed rate, and when a careless one ties at
random: in each case a vote's expected score is q for the eta that describes it.

Two reliabilities per annotator, then. The fit weighs each annotator's votes by `weight`, the eta
of all their votes, ties included: an annotator who ties at a fixed rate t says less about the
order and weighs 1 - t/2. What the output calls `reliability` is read from the decisive votes
only (given the fitted strengths, gold votes included): a careful annotator who often says "tie"
keeps a reliability near 1, and is not called careless.

Identification. The likelihood does not change when every strength changes sign and every eta
becomes 1 - eta, and a common eta below 1 looks much like a narrower spread of strengths. So eta
needs an anchor, which the result names (`anchor`):

- "gold": the campaign's gold votes (pairs whose answer the researcher fixed) pin every eta;
- "consistent": without gold votes, the most consistent annotators are taken as careful: a fit
  with every eta free (started from all careful, so the orientation is the one in which most
  votes follow the strengths) orders the annotators, and the most reliable of them, together
  casting at least half of the votes, have their weight fixed at 1.

Intervals come from a bootstrap that resamples questions, each with all of its votes (a question's
votes share the question: they are not independent of each other), and keeps the annotators, whose
reliabilities are parameters of the fit rather than noise; each annotator's gold votes are redrawn
among themselves. The rounds are fitted together: one L-BFGS-B run over all rounds' parameters,
started from the full-data fit. A weak normal prior (sd RIDGE_SD) on each centred strength keeps a
model that careful annotators never saw lose finite (with eta below 1 a loss to a careless vote
costs little, so the maximum could run off to infinity); at these spreads it moves nothing.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats.bt_rounds import cholesky_solve
from stats.intervals import percentile_interval

RIDGE_SD = 10.0
# Without gold votes, the most reliable annotators holding at least this share of the votes anchor the fit.
ANCHOR_SHARE = 0.5
GOLD, CONSISTENT = "gold", "consistent"
# Flags: an annotator whose interval lies wholly below CARELESS_BELOW votes at random part of the
# time (about 2 (1 - reliability) of it); one whose interval lies wholly below 1/2 votes against
# the truth more often than with it.
CARELESS_BELOW = 0.95
ADVERSARIAL_BELOW = 0.5
CARELESS, ADVERSARIAL = "careless", "adversarial"
MAX_ITER = 200
# Bootstrap rounds are fitted in groups of at most this many numbers per array (see reliability_fit).
CHUNK_NUMBERS = 4_000_000
STEP_TOL = 1e-8
MAX_STEP = 2.0
_EPS = 1e-12
# The decisive reliabilities' Newton iterations stop once no step exceeds DECISIVE_TOL.
DECISIVE_TOL = 1e-13
DECISIVE_MAX_ITER = 100


@dataclass(frozen=True)
class AnnotatorVotes:
    """Votes with who cast them and on which question: positions into `labels` (models),
    `annotators` and questions (any integers: votes sharing one are resampled together)."""

    labels: list[str]
    annotators: list[str]
    annotator: np.ndarray
    first: np.ndarray
    second: np.ndarray
    # 0: the first model won, 1: the second, 2: a tie.
    outcome: np.ndarray
    question: np.ndarray
    # Decisive gold votes: who cast each, and whether it picked the gold answer.
    gold_annotator: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    gold_correct: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


_OUTCOMES = {"a": 0, "b": 1, "tie": 2}


def annotator_votes(
    labels: Sequence[str],
    annotators: Sequence[str],
    rows: Iterable[Sequence[Any]],
    gold: Iterable[tuple[str, bool]] = (),
) -> AnnotatorVotes:
    """From (model_a, model_b, winner "a"/"b"/"tie", annotator, question) rows and optional gold
    rows (annotator, correct): labels and annotators are names, a question any hashable."""
    model = {label: k for k, label in enumerate(labels)}
    who = {name: k for k, name in enumerate(annotators)}
    questions: dict = {}
    columns = [
        (model[a], model[b], _OUTCOMES[w], who[k], questions.setdefault(q, len(questions))) for a, b, w, k, q in rows
    ]
    data = np.array(columns, dtype=np.int64).reshape(-1, 5)
    gold_rows = [(who[k], bool(correct)) for k, correct in gold]
    return AnnotatorVotes(
        labels=list(labels),
        annotators=list(annotators),
        annotator=data[:, 3],
        first=data[:, 0],
        second=data[:, 1],
        outcome=data[:, 2],
        question=data[:, 4],
        gold_annotator=np.array([k for k, _ in gold_rows], dtype=np.int64),
        gold_correct=np.array([c for _, c in gold_rows], dtype=bool),
    )


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


def cells_of(votes: AnnotatorVotes) -> Cells:
    n, k_count = len(votes.labels), len(votes.annotators)
    if np.any(votes.first == votes.second):
        raise ValueError("A vote compares a model with itself.")
    low = np.minimum(votes.first, votes.second)
    high = np.maximum(votes.first, votes.second)
    flipped = votes.first > votes.second
    outcome = np.where(flipped & (votes.outcome < 2), 1 - votes.outcome, votes.outcome)
    cell_key = (votes.annotator * n + low) * n + high
    cell_keys, cell_index = np.unique(cell_key, return_inverse=True)
    _, question = np.unique(votes.question, return_inverse=True)
    questions = int(question.max()) + 1 if len(question) else 0
    row_key = question.astype(np.int64) * len(cell_keys) + cell_index
    row_keys, row_index = np.unique(row_key, return_inverse=True)
    rows = len(row_keys)
    return Cells(
        n_models=n,
        n_annotators=k_count,
        annotator=cell_keys // (n * n),
        first=(cell_keys // n) % n,
        second=cell_keys % n,
        row_cell=row_keys % max(1, len(cell_keys)),
        row_question=row_keys // max(1, len(cell_keys)),
        row_votes=np.bincount(row_index, minlength=rows).astype(float),
        row_score=np.bincount(row_index, (outcome == 0) + 0.5 * (outcome == 2), minlength=rows),
        row_decisive=np.bincount(row_index, outcome < 2, minlength=rows).astype(float),
        row_first_wins=np.bincount(row_index, outcome == 0, minlength=rows).astype(float),
        questions=questions,
    )


def _sums(cells: Cells, multiplicity: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Per round (rows of `multiplicity`, times each question is drawn) the cells' sums:
    votes, score, decisive, first wins, each (rounds, cells). None: the data as they are."""
    count = len(cells.annotator)
    values = np.stack([cells.row_votes, cells.row_score, cells.row_decisive, cells.row_first_wins])
    if multiplicity is None:
        return tuple(np.bincount(cells.row_cell, v, minlength=count)[None, :] for v in values)
    weight = multiplicity[:, cells.row_question]  # (rounds, rows)
    rounds = weight.shape[0]
    index = (np.arange(rounds)[:, None] * count + cells.row_cell[None, :]).ravel()
    return tuple(
        np.bincount(index, (weight * v[None, :]).ravel(), minlength=rounds * count).reshape(rounds, count)
        for v in values
    )


def _gaps(t: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """2 p - 1 = tanh((t_first - t_second) / 2) of every round and cell: computed once per model
    pair and round, then read per cell (tanh costs about ten multiplications, and cells repeat
    the pairs)."""
    n = t.shape[1]
    per_pair = np.tanh(0.5 * (t[:, :, None] - t[:, None, :])).reshape(len(t), n * n)
    return per_pair[:, first * n + second]


def _probabilities(t: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _gaps(t, first, second))


def _fit(
    cells: Cells,
    votes: np.ndarray,
    score: np.ndarray,
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    fixed: np.ndarray,
    t0: np.ndarray,
    eta0: np.ndarray,
    shrink: float = 1.0 / RIDGE_SD**2,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strengths and weights (eta over all votes) of every round, fitted together by Fisher
    scoring (Newton's method with the expected information, which is never indefinite), eta kept
    in [0, 1] by holding an eta on its bound while the gradient pushes it out. A round stops
    moving once its step is below STEP_TOL; only the others are computed on.

    votes, score: (rounds, cells); gold_right, gold_all: (rounds, annotators); fixed: annotators
    whose eta is held at 1 (bool, annotators); t0, eta0: starting values (rounds, ...).
    Returns (strengths centred, eta, converged per round)."""
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
    q = np.clip(0.5 + 0.5 * c * b, _EPS, 1 - _EPS)
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
    q = np.clip(0.5 + (eta[slot] - 0.5) * slope, _EPS, 1 - _EPS)
    wins_q, losses_q = wins / q, losses / (1 - q)
    g = np.clip(eta, _EPS, 1 - _EPS)
    first = np.bincount(slot, slope * (wins_q - losses_q), len(eta)) + right / g - wrong / (1 - g)
    if not second:
        return first, None
    curvature = np.bincount(slot, slope * slope * (wins_q / q + losses_q / (1 - q)), len(eta))
    return first, curvature + right / g**2 + wrong / (1 - g) ** 2


def _decisive_reliability(
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


@dataclass
class ReliabilityFit:
    labels: list[str]
    annotators: list[str]
    scores: np.ndarray  # centred log-strengths
    weights: np.ndarray  # eta over all votes (the fit's)
    reliability: np.ndarray  # eta over decisive votes
    score_draws: np.ndarray | None  # (rounds, models)
    reliability_draws: np.ndarray | None  # (rounds, annotators)
    anchor: dict
    votes: np.ndarray  # per annotator
    decisive: np.ndarray
    information: np.ndarray  # (models, models): Fisher information of the strengths at the fit
    skipped_rounds: int = 0


def _gold_counts(votes: AnnotatorVotes) -> tuple[np.ndarray, np.ndarray]:
    k_count = len(votes.annotators)
    right = np.bincount(votes.gold_annotator, votes.gold_correct, minlength=k_count).astype(float)
    total = np.bincount(votes.gold_annotator, minlength=k_count).astype(float)
    return right, total


def _anchor(
    cells: Cells,
    sums: tuple[np.ndarray, ...],
    gold_right: np.ndarray,
    gold_all: np.ndarray,
    votes_per_annotator: np.ndarray,
    shrink: float,
) -> tuple[np.ndarray, dict]:
    k_count = cells.n_annotators
    if gold_all.sum() > 0:
        return np.zeros(k_count, dtype=bool), {"kind": GOLD, "gold_votes": int(gold_all.sum()), "annotators": []}
    t0 = np.zeros((1, cells.n_models))
    free = np.zeros(k_count, dtype=bool)
    _t, eta, _converged = _fit(
        cells, sums[0], sums[1], gold_right[None], gold_all[None], free, t0, np.ones((1, k_count)), shrink
    )
    eta = eta[0]
    if votes_per_annotator @ eta < 0.5 * votes_per_annotator.sum():
        # The mirror image fits as well: take the orientation in which most votes follow the strengths.
        eta = 1 - eta
    order = sorted(range(k_count), key=lambda k: (-round(float(eta[k]), 6), -votes_per_annotator[k], k))
    fixed = np.zeros(k_count, dtype=bool)
    held = 0.0
    for k in order:
        if held >= ANCHOR_SHARE * votes_per_annotator.sum():
            break
        fixed[k] = True
        held += votes_per_annotator[k]
    return fixed, {"kind": CONSISTENT, "gold_votes": 0, "annotators": sorted(np.flatnonzero(fixed).tolist())}


def information_matrix(cells: Cells, t: np.ndarray, eta: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """Fisher information of the strengths at the fit (per vote of annotator k on pair ij:
    ((2 eta_k - 1) p (1 - p))^2 / (q (1 - q)); eta 1 gives Bradley-Terry's p (1 - p))."""
    n = cells.n_models
    p = _probabilities(t[None], cells.first, cells.second)[0]
    e = eta[cells.annotator]
    q = np.clip(0.5 + (e - 0.5) * (2 * p - 1), _EPS, 1 - _EPS)
    weight = votes * ((2 * e - 1) * p * (1 - p)) ** 2 / (q * (1 - q))
    matrix = np.zeros((n, n))
    np.add.at(matrix, (cells.first, cells.first), weight)
    np.add.at(matrix, (cells.second, cells.second), weight)
    np.add.at(matrix, (cells.first, cells.second), -weight)
    np.add.at(matrix, (cells.second, cells.first), -weight)
    return matrix


def reliability_fit(
    votes: AnnotatorVotes, *, rounds: int = 200, seed: int = 0, ridge_sd: float = RIDGE_SD
) -> ReliabilityFit:
    """The joint fit of strengths and reliabilities, with bootstrap draws (see the module docstring).
    ridge_sd: the prior sd of each centred strength (math.inf: none, the plain maximum likelihood)."""
    shrink = 1.0 / ridge_sd**2
    if len(votes.annotator) == 0:
        raise ValueError("No votes to fit.")
    cells = cells_of(votes)
    k_count = cells.n_annotators
    gold_right, gold_all = _gold_counts(votes)
    sums = _sums(cells, None)
    per_annotator = np.bincount(votes.annotator, minlength=k_count).astype(float)
    decisive_per = np.bincount(votes.annotator, votes.outcome < 2, minlength=k_count).astype(float)
    fixed, anchor = _anchor(cells, sums, gold_right, gold_all, per_annotator, shrink)
    anchor["annotators"] = [votes.annotators[k] for k in anchor["annotators"]]
    t, eta, converged = _fit(
        cells, sums[0], sums[1], gold_right[None], gold_all[None], fixed,
        np.zeros((1, cells.n_models)), np.ones((1, k_count)), shrink,
    )  # fmt: skip
    reliability = _decisive_reliability(cells, t, sums[2], sums[3], gold_right[None], gold_all[None])[0]
    if not converged[0]:
        raise ValueError("The reliability fit did not converge on these votes.")
    score_draws = reliability_draws = None
    skipped = 0
    if rounds > 0:
        rng = np.random.default_rng(seed)
        # Rounds in groups whose per-question weights and information matrices hold at most
        # CHUNK_NUMBERS numbers each (32 MB), drawn group after group from one generator.
        size = cells.n_models + k_count
        chunk = max(1, CHUNK_NUMBERS // max(1, len(cells.row_cell), cells.questions, size * size))
        parts = []
        for start in range(0, rounds, chunk):
            count = min(chunk, rounds - start)
            multiplicity = rng.multinomial(cells.questions, np.full(cells.questions, 1 / cells.questions), size=count)
            boot = _sums(cells, multiplicity.astype(float))
            # Gold votes redrawn within each annotator.
            right = rng.binomial(
                gold_all.astype(np.int64), np.divide(gold_right, np.maximum(gold_all, 1)), (count, k_count)
            ).astype(float)
            total = np.broadcast_to(gold_all, (count, k_count))
            fitted, _eta_draws, converged_part = _fit(
                cells, boot[0], boot[1], right, total, fixed, np.repeat(t, count, 0), np.repeat(eta, count, 0), shrink
            )
            decisive = _decisive_reliability(cells, fitted, boot[2], boot[3], right, total, reliability)
            parts.append((fitted, decisive, converged_part))
        score_draws = np.concatenate([part[0] for part in parts])
        reliability_draws = np.concatenate([part[1] for part in parts])
        done = np.concatenate([part[2] for part in parts])
        score_draws[~done] = np.nan
        reliability_draws[~done] = np.nan
        skipped = int((~done).sum())
    return ReliabilityFit(
        labels=list(votes.labels),
        annotators=list(votes.annotators),
        scores=t[0],
        weights=eta[0],
        reliability=reliability,
        score_draws=score_draws,
        reliability_draws=reliability_draws,
        anchor=anchor,
        votes=per_annotator,
        decisive=decisive_per,
        information=information_matrix(cells, t[0], eta[0], sums[0][0]),
        skipped_rounds=skipped,
    )


def annotator_flags(reliability: float | None, upper: float | None) -> list[str]:
    """ADVERSARIAL when the interval lies wholly below 1/2, CARELESS when it lies wholly below
    CARELESS_BELOW (without an interval, the point estimate stands for it)."""
    if reliability is None:
        return []
    top = reliability if upper is None else upper
    if top < ADVERSARIAL_BELOW:
        return [ADVERSARIAL]
    if top < CARELESS_BELOW:
        return [CARELESS]
    return []


def strength_intervals(
    fit: ReliabilityFit, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """(lower, upper) of each strength: basic bootstrap intervals, 2 x estimate minus the rounds'
    percentiles. The percentile interval repeats the pull a few votes give a far model (its
    rounds scatter around the estimate, which already overshoots); reflecting them about the
    estimate corrects it, to first order. None, None without rounds."""
    if fit.score_draws is None or np.isnan(fit.score_draws).all():
        return None, None
    low, high = percentile_interval(fit.score_draws, level=level)
    return 2 * fit.scores - high, 2 * fit.scores - low


def reliability_intervals(
    fit: ReliabilityFit, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """(lower, upper) of each annotator's reliability: percentile intervals, which stay in [0, 1].
    NaN for an annotator without decisive votes; None, None without rounds."""
    if fit.reliability_draws is None:
        return None, None
    draws = fit.reliability_draws
    lower = np.full(draws.shape[1], np.nan)
    upper = np.full(draws.shape[1], np.nan)
    for k in range(draws.shape[1]):
        column = draws[:, k][np.isfinite(draws[:, k])]
        if len(column):
            lower[k], upper[k] = percentile_interval(column, level=level)
    return lower, upper
