"""stats/reliability.py (Bradley-Terry with each annotator's reliability) and stats/separation.py."""

import math
from dataclasses import replace

import numpy as np
import pytest

from stats import ranking, tallies
from stats.reliability import (
    ADVERSARIAL,
    CARELESS,
    CONSISTENT,
    GOLD,
    AnnotatorVotes,
    annotator_flags,
    annotator_votes,
    reliability_fit,
    reliability_intervals,
    strength_intervals,
)
from stats.separation import bt_information, votes_to_separate
from tests.stats.simulated_votes import ADVERSARIAL as ADVERSE
from tests.stats.simulated_votes import CAREFUL, CARELESS, RANDOM, as_annotator_votes, simulate


def exact_votes(theta, etas, per_cell=1000, gold=None):
    """Votes whose shares are exactly the model's: per annotator and pair, `per_cell` votes of
    which round(q * per_cell) go to the first model (q of Crowd-BT), each on its own question."""
    rows = []
    question = 0
    n = len(theta)
    for k, eta in enumerate(etas):
        for i in range(n):
            for j in range(i + 1, n):
                p = 1 / (1 + math.exp(-(theta[i] - theta[j])))
                q = eta * p + (1 - eta) * (1 - p)
                wins = round(q * per_cell)
                for v in range(per_cell):
                    rows.append((f"m{i}", f"m{j}", "a" if v < wins else "b", f"a{k}", question))
                    question += 1
    gold_rows = []
    for k, (right, total) in enumerate(gold or []):
        gold_rows += [(f"a{k}", v < right) for v in range(total)]
    return annotator_votes([f"m{i}" for i in range(n)], [f"a{k}" for k in range(len(etas))], rows, gold_rows)


def test_exact_votes_of_careful_annotators_give_the_plain_maximum_likelihood():
    theta = np.array([1.0, 0.2, -0.4, -0.8])
    votes = exact_votes(theta, [1.0, 1.0, 1.0], per_cell=400)
    fit = reliability_fit(votes, rounds=0, ridge_sd=math.inf)
    counts = tallies.pair_counts_of(votes.labels, votes.first, votes.second, votes.outcome)
    plain = ranking.bradley_terry(counts, rounds=0, alpha=0)
    by = {s.label: s.score for s in plain.scores}
    assert np.allclose(fit.scores, [by[label] for label in votes.labels], atol=1e-6)
    assert np.allclose(fit.scores, theta - theta.mean(), atol=5e-3)
    assert np.allclose(fit.reliability, 1.0)
    assert fit.anchor["kind"] == CONSISTENT
    assert fit.anchor["annotators"] == ["a0", "a1"]


def test_gold_votes_pin_each_reliability_and_the_strengths_come_back():
    theta = np.array([1.2, 0.3, -0.5, -1.0])
    etas = [1.0, 1.0, 0.7, 0.2]
    # Gold accuracy in line with each eta: 100/100, 100/100, 70/100, 20/100.
    votes = exact_votes(theta, etas, per_cell=500, gold=[(100, 100), (100, 100), (70, 100), (20, 100)])
    fit = reliability_fit(votes, rounds=0, ridge_sd=math.inf)
    assert fit.anchor == {"kind": GOLD, "gold_votes": 400, "annotators": []}
    assert np.allclose(fit.weights, etas, atol=5e-3)
    assert np.allclose(fit.reliability, etas, atol=5e-3)
    assert np.allclose(fit.scores, theta - theta.mean(), atol=1e-2)


def test_the_mirror_image_is_ruled_out_by_the_majority():
    """Three careful annotators and one who always votes against: the fit keeps the careful
    orientation and puts the adversarial one at 0."""
    theta = np.array([1.0, 0.0, -1.0])
    votes = exact_votes(theta, [1.0, 1.0, 1.0, 0.0], per_cell=300)
    fit = reliability_fit(votes, rounds=0, ridge_sd=math.inf)
    assert fit.scores[0] > fit.scores[1] > fit.scores[2]
    assert fit.reliability[3] == 0.0
    assert np.allclose(fit.scores, theta - theta.mean(), atol=1e-2)


def test_ties_leave_the_reliability_of_a_careful_annotator_alone():
    """An annotator who ties half of the time and otherwise votes as the model says keeps a
    reliability of 1; only their weight in the fit is lower (1 - 1/4 for ties at rate 1/2)."""
    theta = [0.8, 0.0, -0.8]
    rows = []
    question = 0
    for k in range(3):
        for i in range(3):
            for j in range(i + 1, 3):
                p = 1 / (1 + math.exp(-(theta[i] - theta[j])))
                for v in range(1000):
                    if k == 2 and v % 2 == 1:
                        winner = "tie"
                    else:
                        share = v // 2 if k == 2 else v
                        winner = "a" if share < round(p * (500 if k == 2 else 1000)) else "b"
                    rows.append((f"m{i}", f"m{j}", winner, f"a{k}", question))
                    question += 1
    votes = annotator_votes(["m0", "m1", "m2"], ["a0", "a1", "a2"], rows)
    fit = reliability_fit(votes, rounds=0, ridge_sd=math.inf)
    assert fit.reliability[2] == pytest.approx(1.0, abs=1e-3)
    assert fit.weights[2] == pytest.approx(0.75, abs=5e-3)
    assert annotator_flags(float(fit.reliability[2]), None) == []


def test_a_random_and_an_adversarial_annotator_fall_below_every_careful_one():
    theta = np.array([1.5, 0.9, 0.4, 0.0, -0.6, -1.2])
    kinds = (CAREFUL, RANDOM, CAREFUL, ADVERSE, CAREFUL)
    votes = simulate(theta, 1500, kinds=kinds, seed=3)
    fit = reliability_fit(as_annotator_votes(votes, 6, 5), rounds=100, seed=0)
    careful = fit.reliability[[0, 2, 4]]
    assert fit.reliability[1] < careful.min()
    assert fit.reliability[3] < careful.min()
    assert fit.reliability[3] < fit.reliability[1]
    lower, upper = reliability_intervals(fit)
    assert annotator_flags(float(fit.reliability[3]), float(upper[3])) == [ADVERSARIAL]
    assert annotator_flags(float(fit.reliability[1]), float(upper[1])) == [CARELESS]
    assert all(annotator_flags(float(fit.reliability[k]), float(upper[k])) == [] for k in (0, 2, 4))
    counts = tallies.pair_counts_of(fit.labels, votes["first"], votes["second"], votes["outcome"])
    plain = ranking.bradley_terry(counts, rounds=0)
    by = {s.label: s.score for s in plain.scores}
    plain_scores = np.array([by[label] for label in fit.labels])
    truth = theta - theta.mean()
    assert np.corrcoef(fit.scores, truth)[0, 1] >= np.corrcoef(plain_scores, truth)[0, 1]
    # Plain BT is pulled toward zero by the two; the reliability fit is not.
    assert np.std(plain_scores) < 0.8 * np.std(truth)
    assert abs(np.std(fit.scores) / np.std(truth) - 1) < 0.15
    low, high = strength_intervals(fit)
    assert np.all(low < fit.scores) and np.all(fit.scores < high)


def test_questions_are_resampled_whole():
    """Two votes on one question always come back together: with every vote on one of two
    questions, each round holds 0, 1 or 2 copies of each question's votes."""
    rows = [("m0", "m1", "a", "a0", "q1"), ("m0", "m1", "a", "a0", "q1"), ("m0", "m1", "b", "a0", "q2")]
    votes = annotator_votes(["m0", "m1"], ["a0"], rows)
    fit = reliability_fit(votes, rounds=50, seed=1)
    assert fit.score_draws.shape == (50, 2)
    # Gaps possible: q1 twice (2 wins, 0 losses; the ridge keeps it finite), q1 + q2 (2-1), q2 twice.
    distinct = np.unique(np.round(fit.score_draws[:, 0] - fit.score_draws[:, 1], 6))
    assert len(distinct) == 3


# Computed by the fit as it was before the etas were eliminated from each Newton step (a full
# (models + annotators)-square system per round) and the decisive reliabilities were found by 60
# bisections: the same maxima, within the optimiser's tolerance.
KNOWN = {
    "consistent": {
        "scores": [1.4345886644346115, 0.650113499152641, 0.18361019277199464, -0.700468306713808, -1.5678440496454393],
        "reliability": [0.7055783167621856, 1.0, 1.0, 0.3138413739635668, 1.0, 1.0],
        "weights": [0.6494387394881255, 1.0, 1.0, 0.3652309301522526, 0.8813247240281192, 1.0],
        "lower": [0.9603692402725019, 0.42028612759571415, -0.18669885861146596, -1.0162098066309726, -2.0812389065306136],
        "r_lower": [0.5269902711854456, 1.0, 1.0, 0.07046411335886864, 0.9051886489174771, 0.998546360657881],
    },
    "gold": {
        "scores": [1.421775330260705, 0.6505239369269615, 0.1777674471730764, -0.6931119205614239, -1.5569547937993191],
        "reliability": [0.7179345416289322, 1.0, 1.0, 0.2982895845662301, 1.0, 1.0],
        "weights": [0.6688282231628051, 1.0, 1.0, 0.3448979917908007, 0.8828777925227186, 1.0],
        "lower": [0.2720871491028105, 0.1282472510597057, -0.4501060569623727, -1.056486768388842, -1.83482072714605],
        "r_lower": [0.6011061356843697, 0.9971345109546321, 1.0, 0.08876756970811038, 0.8311212674152071, 0.9353783825532566],
    },
}  # fmt: skip


def test_fits_and_rounds_match_known_values_with_and_without_gold():
    theta = np.array([1.2, 0.5, 0.0, -0.6, -1.4])
    kinds = (CARELESS, CAREFUL, CAREFUL, RANDOM, CAREFUL, CAREFUL)
    votes = as_annotator_votes(simulate(theta, 360, kinds=kinds, seed=3, questions=60), 5, len(kinds))
    gold = replace(
        votes,
        gold_annotator=np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 3]),
        gold_correct=np.array([1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0], dtype=bool),
    )
    for kind, case in ((CONSISTENT, votes), (GOLD, gold)):
        fit = reliability_fit(case, rounds=30, seed=1)
        known = KNOWN[kind]
        assert fit.anchor["kind"] == kind
        assert fit.skipped_rounds == 0
        assert np.allclose(fit.scores, known["scores"], rtol=0, atol=1e-8)
        assert np.allclose(fit.reliability, known["reliability"], rtol=0, atol=1e-8)
        assert np.allclose(fit.weights, known["weights"], rtol=0, atol=1e-8)
        assert np.allclose(strength_intervals(fit)[0], known["lower"], rtol=0, atol=1e-8)
        assert np.allclose(reliability_intervals(fit)[0], known["r_lower"], rtol=0, atol=1e-8)


def test_no_votes_is_an_error():
    empty = AnnotatorVotes(
        labels=["m0", "m1"],
        annotators=[],
        annotator=np.zeros(0, np.int64),
        first=np.zeros(0, np.int64),
        second=np.zeros(0, np.int64),
        outcome=np.zeros(0, np.int64),
        question=np.zeros(0, np.int64),
    )
    with pytest.raises(ValueError, match="No votes"):
        reliability_fit(empty)


def test_votes_to_separate_on_exact_information():
    """Two models 0.2 apart with 100 votes between them: se = 1 / sqrt(100 p (1 - p)); the votes
    to separate follow from it by hand."""
    scores = np.array([0.1, -0.1])
    information = bt_information(2, [0], [1], [100], scores)
    rows = votes_to_separate(["a", "b"], scores, information, votes=100)
    p = 1 / (1 + math.exp(-0.2))
    se = 1 / math.sqrt(100 * p * (1 - p))
    z = 1.959963984540054
    assert rows[0]["se"] == pytest.approx(se)
    assert rows[0]["separated"] is False
    assert rows[0]["more_votes"] == math.ceil(100 * ((z * se / 0.2) ** 2 - 1))
    # On one pair the two answers agree (every vote is on that pair).
    assert abs(rows[0]["more_votes_on_pair"] - rows[0]["more_votes"]) <= 1
    far = votes_to_separate(
        ["a", "b"], np.array([1.0, -1.0]), bt_information(2, [0], [1], [100], [1.0, -1.0]), votes=100
    )
    assert far[0]["separated"] is True and far[0]["more_votes"] == 0
    equal = votes_to_separate(["a", "b"], np.array([0.0, 0.0]), information, votes=100)
    assert equal[0]["more_votes"] is None


def test_votes_to_separate_orders_by_score():
    scores = np.array([-0.5, 0.5, 0.0])
    information = bt_information(3, [0, 0, 1], [1, 2, 2], [50, 50, 50], scores)
    rows = votes_to_separate(["x", "y", "z"], scores, information, votes=150)
    assert [(row["higher"], row["lower"]) for row in rows] == [("y", "z"), ("z", "x")]
