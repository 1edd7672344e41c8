"""Arena's Elo scale and the fit that chooses its regularisation as the anchors do."""

import math

import numpy as np
import pytest

from stats.elo import POINTS_PER_UNIT, scores_on_elo_scale, to_elo
from stats.ranking import (
    DEFAULT_ALPHA,
    UNREGULARISED,
    bradley_terry,
    estimate,
)
from stats.tallies import pair_counts, win_matrix


def test_elo_points_follow_fastchats_conventions_on_a_hand_computed_example():
    # x beat y three times in four: the plain maximum-likelihood log-strengths differ by ln 3, so
    # mean-centred x = ln(3) / 2 and y = -ln(3) / 2.
    result = bradley_terry(pair_counts(["x", "y"], [("x", "y", "a")] * 3 + [("y", "x", "a")]), rounds=0)
    assert result.alpha == 0 and result.regularised is False
    scores = {s.label: s.score for s in result.scores}
    assert scores["x"] == pytest.approx(math.log(3) / 2, abs=1e-9)
    # FastChat (scale 400, base 10, initial rating 1000): R = 1000 + 400 * log10-strength, so
    # x = 1000 + 200 * log10(3) = 1095.42 and y = 904.58 ...
    elo = result.on_elo_scale()
    by_label = {s.label: s.score for s in elo.scores}
    assert by_label["x"] == pytest.approx(1000 + 200 * math.log10(3), abs=1e-6)
    assert by_label["x"] == pytest.approx(1095.424, abs=1e-3) and by_label["y"] == pytest.approx(904.576, abs=1e-3)
    # ... whose Elo expectation 1 / (1 + 10^((R_y - R_x) / 400)) gives back the observed 3 in 4.
    assert 1 / (1 + 10 ** ((by_label["y"] - by_label["x"]) / 400)) == pytest.approx(0.75, abs=1e-9)
    assert POINTS_PER_UNIT == pytest.approx(400 / math.log(10)) and POINTS_PER_UNIT == pytest.approx(173.7178, abs=1e-4)
    # Anchored at a stated model, as Arena anchors a baseline: y reads 1114, x 400 log10(3) above.
    anchored = {s.label: s.score for s in result.on_elo_scale(anchor="y", rating=1114).scores}
    assert anchored == pytest.approx({"y": 1114.0, "x": 1114 + 400 * math.log10(3)}, abs=1e-6)
    assert result.on_elo_scale(anchor="y").as_dict(fit_details=True)["scale"] == "elo"
    with pytest.raises(ValueError, match="Anchor 'z' is not among the ranked models."):
        result.on_elo_scale(anchor="z")
    with pytest.raises(ValueError, match="already on the elo scale"):
        elo.on_elo_scale()


def test_intervals_move_with_their_scores_offset():
    rng = np.random.default_rng(4)
    labels = ["a", "b", "c"]
    outcomes = [(labels[i], labels[(i + 1) % 3], "a" if rng.random() < 0.6 else "b") for i in rng.integers(0, 3, 300)]
    result = bradley_terry(pair_counts(labels, outcomes), rounds=100, seed=1)
    mean = np.mean([s.score for s in result.scores])
    for plain, elo in zip(result.scores, result.on_elo_scale().scores):
        assert elo.score == pytest.approx(1000 + POINTS_PER_UNIT * (plain.score - mean))
        assert elo.lower == pytest.approx(1000 + POINTS_PER_UNIT * (plain.lower - mean))
        assert elo.upper == pytest.approx(1000 + POINTS_PER_UNIT * (plain.upper - mean))
        assert (elo.label, elo.rank, elo.wins) == (plain.label, plain.rank, plain.wins)
    assert to_elo([0.0, 1.0], anchor=1, rating=1200).tolist() == pytest.approx([1200 - POINTS_PER_UNIT, 1200])
    assert scores_on_elo_scale([]) == []


def test_the_default_fit_is_unregularised_where_the_graph_allows_and_says_so():
    rng = np.random.default_rng(11)
    labels = [f"m{k}" for k in range(5)]
    outcomes = []
    for _ in range(600):
        i, j = rng.choice(5, 2, replace=False)
        outcomes.append((labels[i], labels[j], ["a", "b", "tie"][rng.integers(0, 3)]))
    counts = pair_counts(labels, outcomes)
    matrix = win_matrix(5, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    result = bradley_terry(counts, rounds=0)
    assert result.alpha == 0 and result.regularised is False and result.regularisation == UNREGULARISED
    plain = estimate(matrix, alpha=0)
    assert max(abs(s.score - plain[labels.index(s.label)]) for s in result.scores) < 1e-9
    assert result.as_dict(fit_details=True)["regularised"] is False
    # An explicit alpha is kept, and reported as chosen.
    chosen = bradley_terry(counts, alpha=DEFAULT_ALPHA, rounds=0)
    assert chosen.alpha == DEFAULT_ALPHA and chosen.regularised and chosen.regularisation == "alpha 0.01, as asked"
    # a never loses: regularisation is needed there only, and the reason names the model.
    never_loses = pair_counts(["a", "b", "c"], [("a", "b", "a")] * 3 + [("b", "c", "a"), ("c", "b", "a")])
    needed = bradley_terry(never_loses, rounds=50)
    assert needed.alpha == DEFAULT_ALPHA and needed.regularised is True
    assert needed.regularisation == (
        "regularised (alpha 0.01) because 'a' never lost to or tied with any other model: "
        "without it that score would be infinite"
    )
    assert needed.scores[0].label == "a" and all(np.isfinite(s.score) for s in needed.scores)
