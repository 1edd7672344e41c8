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
among themselves. The rounds are fitted together, started from the full-data fit: Newton steps of
every round at once, each solved with the etas eliminated (an eta meets only its own annotator's
cells, so their block of the information is diagonal and what is left is one models x models
system per round, whatever the number of annotators: stats/reliability_rounds.py). A weak normal
prior (sd RIDGE_SD) on each centred strength keeps a model that careful annotators never saw lose
finite (with eta below 1 a loss to a careless vote costs little, so the maximum could run off to
infinity); at these spreads it moves nothing.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats.intervals import percentile_interval
from stats.reliability_rounds import EPS, Cells, decisive_reliability, fit_rounds, probabilities

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
# Bootstrap rounds are fitted in groups of at most this many numbers per array (see reliability_fit).
CHUNK_NUMBERS = 4_000_000


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
    _t, eta, _converged = fit_rounds(
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
    p = probabilities(t[None], cells.first, cells.second)[0]
    e = eta[cells.annotator]
    q = np.clip(0.5 + (e - 0.5) * (2 * p - 1), EPS, 1 - EPS)
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
    t, eta, converged = fit_rounds(
        cells, sums[0], sums[1], gold_right[None], gold_all[None], fixed,
        np.zeros((1, cells.n_models)), np.ones((1, k_count)), shrink,
    )  # fmt: skip
    reliability = decisive_reliability(cells, t, sums[2], sums[3], gold_right[None], gold_all[None])[0]
    if not converged[0]:
        raise ValueError("The reliability fit did not converge on these votes.")
    score_draws = reliability_draws = None
    skipped = 0
    if rounds > 0:
        rng = np.random.default_rng(seed)
        # Rounds in groups whose per-question weights hold at most CHUNK_NUMBERS numbers each
        # (32 MB), drawn group after group from one generator. The groups are as wide as when each
        # round's whole (models + annotators)-square information was formed (size * size): the
        # random draws, hence the rounds a seed gives, stay what they were.
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
            fitted, _eta_draws, converged_part = fit_rounds(
                cells, boot[0], boot[1], right, total, fixed, np.repeat(t, count, 0), np.repeat(eta, count, 0), shrink
            )
            decisive = decisive_reliability(cells, fitted, boot[2], boot[3], right, total, reliability)
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
