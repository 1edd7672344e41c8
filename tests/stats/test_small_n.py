"""Honest statistics at small n: the cases that once gave wild numbers say "not estimable" or "too few"."""

import json

import numpy as np
from scipy.special import expit

from stats.estimability import MAX_VIF, MIN_ITEMS, MIN_VOTES_PER_PARAMETER
from stats.length_control import length_controlled_win_rate, length_controlled_win_rates, length_features
from stats.logistic import fit_logistic
from stats.style import style_bradley_terry
from stats.style_votes import style_votes


def features_row(length, headers=0):
    return {"length": length, "headers": headers, "list_items": 0, "bold": 0}


def test_59_votes_where_length_is_model_identity_are_not_estimable_under_style_control():
    # Each model always answers at its own length (within 1 %): length and model are one column twice.
    rng = np.random.default_rng(3)
    labels = ["m0", "m1", "m2", "m3"]
    typical = {"m0": 400, "m1": 700, "m2": 1100, "m3": 1600}
    strength = {"m0": 0.9, "m1": 0.3, "m2": -0.3, "m3": -0.9}
    rows = []
    for _ in range(59):
        a, b = rng.choice(labels, 2, replace=False)
        p = expit(strength[a] - strength[b])
        winner = "a" if rng.random() < p else "b"
        rows.append((a, b, winner, features_row(typical[a] * rng.uniform(0.99, 1.01)), features_row(typical[b])))
    result = style_bradley_terry(style_votes(labels, rows), rounds=50, seed=0)
    assert result.estimable is False and result.scores == [] and result.coefficients == []
    assert result.reason.startswith("not estimable: length nearly collinear with model identity (variance inflation ")
    assert f"above {MAX_VIF:g}): on these votes a model's style and its strength cannot be told apart" in result.reason
    assert result.variance_inflation["length"] > MAX_VIF
    # 59 votes for 4 parameters would be too few anyway; not estimable says the stronger thing.
    assert 59 < MIN_VOTES_PER_PARAMETER * 4 and result.variance_inflation["length"] > 100
    json.dumps(result.as_dict(), allow_nan=False)


def test_a_style_fit_with_independent_style_but_few_votes_is_computed_and_flagged():
    rng = np.random.default_rng(5)
    labels = ["x", "y", "z"]
    rows = []
    for _ in range(40):
        a, b = rng.choice(labels, 2, replace=False)
        rows.append((a, b, ["a", "b"][rng.integers(0, 2)], features_row(rng.integers(100, 900)), features_row(500)))
    result = style_bradley_terry(style_votes(labels, rows, features=("length",)), rounds=0)
    assert result.estimable is True and len(result.scores) == 3
    assert result.too_few is True
    assert result.reason.startswith(
        "too few votes: 40 for 3 parameters (2 model strengths and 1 style coefficients); at least "
    )
    assert "(30 per parameter, times the style's variance inflation " in result.reason
    assert result.variance_inflation["length"] < 2


def test_a_singular_style_fit_is_not_estimable_rather_than_an_error():
    # Two models, three votes, the shorter answer always won: no finite maximum.
    rows = [
        ("a", "b", "a", features_row(100), features_row(200)),
        ("b", "a", "tie", features_row(150), features_row(150)),
        ("a", "b", "b", features_row(120), features_row(90)),
    ]
    result = style_bradley_terry(style_votes(["a", "b"], rows), rounds=20)
    assert result.estimable is False and result.scores == []
    assert result.reason.startswith("not estimable: ")
    json.dumps(result.as_dict(), allow_nan=False)


def test_a_candidate_at_half_whose_length_never_varies_has_no_length_controlled_rate():
    # Twenty items, the candidate always about 1,500 characters longer, half of them won.
    rng = np.random.default_rng(9)
    reference = np.round(rng.normal(600, 60, 20))
    candidate = np.round(reference + 1500 + rng.normal(0, 500, 20))
    outcomes = np.array([1, 0] * 10, dtype=float)
    rng.shuffle(outcomes)
    # The plain fit extrapolates to equal length: about 5 % [0.0, 100.0] for a candidate that won half.
    feature, _ = length_features(candidate, reference)
    plain = fit_logistic(np.column_stack([np.ones(20), feature]), outcomes)
    assert expit(plain.coef[0]) < 0.06 and expit(plain.coef[0] + 1.96 * plain.se[0]) > 0.85
    out = length_controlled_win_rate(candidate, reference, outcomes.tolist())
    assert out["raw"] == 0.5
    assert out["lc"] is None and out["lc_low"] is None and out["estimable"] is False
    assert out["variance_inflation"] > MAX_VIF
    assert out["note"].startswith("Not estimable: the length differences barely vary (variance inflation ")
    assert out["too_few"] is True and 20 < MIN_ITEMS
    # In the per-candidate table it sorts last, unranked, with the reason.
    table = length_controlled_win_rates(
        [("long", c, r, o) for c, r, o in zip(candidate, reference, outcomes.tolist())], reference="ref"
    )
    assert [(row["model"], row["rank"]) for row in table] == [("ref", 1), ("long", None)]
    json.dumps(table, allow_nan=False)


def test_enough_items_with_varying_lengths_are_neither_flagged_nor_refused():
    rng = np.random.default_rng(2)
    reference = rng.lognormal(np.log(800), 0.3, 200)
    candidate = np.clip(reference + rng.normal(100, 300, 200), 1, None)
    outcomes = (rng.random(200) < 0.6).astype(float).tolist()
    out = length_controlled_win_rate(candidate, reference, outcomes)
    assert out["estimable"] is True and out["too_few"] is False and out["lc"] is not None
    assert out["variance_inflation"] < MAX_VIF
