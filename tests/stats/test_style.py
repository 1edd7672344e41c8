"""Style-controlled Bradley-Terry: an independent Newton fit, simulated length-only winners, no-style data."""

import json

import numpy as np
import pytest

from stats.intervals import ZERO_WIDTH_NOTE
from stats.ranking import bradley_terry, estimate
from stats.style import (
    fit_design,
    newton_round,
    rms_scales,
    style_bradley_terry,
    style_design,
    style_ratios,
)
from stats.style_votes import STYLE_FEATURES, _style_votes_checked, style_features, style_votes
from stats.tallies import pair_counts, win_matrix


def newton_fit(a, b, y, z, models: int, l2: float) -> np.ndarray:
    """Maximise sum y log p + (1 - y) log(1 - p) - l2/2 sum theta^2, p = sigmoid(theta_a - theta_b + z beta).

    Written from the likelihood: all thetas free, plain Newton steps solved by least squares (the
    Hessian is singular along "add one to every theta" when l2 = 0), thetas centred at the end.
    With l2 > 0 the optimum is already centred: the likelihood only sees differences and the
    penalty is smallest at mean zero.
    """
    n, k = z.shape
    X = np.zeros((n, models + k))
    X[np.arange(n), a] += 1.0
    X[np.arange(n), b] -= 1.0
    X[:, models:] = z
    penalty = np.concatenate([np.full(models, l2), np.zeros(k)])
    c = np.zeros(models + k)
    for _ in range(100):
        p = 1 / (1 + np.exp(-X @ c))
        gradient = X.T @ (p - y) + penalty * c
        hessian = X.T @ (X * (p * (1 - p))[:, None]) + np.diag(penalty)
        step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        c -= step
        if np.max(np.abs(step)) < 1e-13:
            break
    c[:models] -= c[:models].mean()
    return c


def features_row(length, headers=0, list_items=0, bold=0):
    return {"length": length, "headers": headers, "list_items": list_items, "bold": bold}


def simulate(seed, strength, mean_length, *, beta_ratio=0.0, votes=3000, tie_rate=0.0, header_effect=0.0):
    """Votes whose log-odds are theta_a - theta_b + beta_ratio * (len_a - len_b) / (len_a + len_b)
    (+ header_effect * the header ratio); header counts are random and independent of the model."""
    rng = np.random.default_rng(seed)
    labels = list(strength)
    rows = []
    for _ in range(votes):
        i, j = rng.choice(len(labels), 2, replace=False)
        a, b = labels[i], labels[j]
        la = rng.lognormal(np.log(mean_length[a]), 0.35)
        lb = rng.lognormal(np.log(mean_length[b]), 0.35)
        ha, hb = rng.integers(0, 4, 2)
        header_ratio = (ha - hb) / (ha + hb) if ha + hb else 0.0
        logit = strength[a] - strength[b] + beta_ratio * (la - lb) / (la + lb) + header_effect * header_ratio
        if rng.random() < tie_rate:
            winner = "tie"
        else:
            winner = "a" if rng.random() < 1 / (1 + np.exp(-logit)) else "b"
        rows.append((a, b, winner, features_row(la, ha), features_row(lb, hb)))
    return labels, rows


def test_style_features_counts_markdown_outside_code():
    text = (
        "# Title\n"
        "Intro with **bold** and __also bold__ and ** not bold ** .\n"
        "## Section\n"
        "- item one\n"
        "* item two\n"
        "+ item three\n"
        "1. first\n"
        "2) second\n"
        "   - nested item\n"
        "```python\n"
        "# a comment, not a header\n"
        "- not a list item\n"
        "**not bold**\n"
        "```\n"
        "####### seven hashes is not a header\n"
        "#no space is not a header\n"
        "    #### four spaces of indent is code, not a header\n"
        "一些中文。"
    )
    assert style_features(text) == {"length": len(text), "headers": 2, "list_items": 6, "bold": 2}
    assert style_features("一些中文。")["length"] == 5
    assert style_features("two words", length=lambda t: len(t.split()))["length"] == 2
    assert style_features("") == {"length": 0, "headers": 0, "list_items": 0, "bold": 0}


def test_ratios_are_antisymmetric_and_zero_when_both_are_zero():
    a = np.array([[300.0, 0.0], [100.0, 2.0]])
    b = np.array([[100.0, 0.0], [300.0, 0.0]])
    assert style_ratios(a, b).tolist() == [[0.5, 0.0], [-0.5, 1.0]]
    assert style_ratios(b, a).tolist() == [[-0.5, 0.0], [0.5, -1.0]]
    # RMS of (0.5, -0.5) is 0.5; of (0, 1) is sqrt(1/2).
    assert rms_scales(style_ratios(a, b)) == pytest.approx([0.5, np.sqrt(0.5)])


@pytest.mark.parametrize("l2", [0.01, 0.0])
def test_fit_matches_an_independent_newton_fit(l2):
    strength = {"m0": 0.5, "m1": 0.2, "m2": 0.0, "m3": -0.3, "m4": -0.4}
    length = {"m0": 600, "m1": 900, "m2": 1200, "m3": 700, "m4": 1500}
    labels, rows = simulate(4, strength, length, beta_ratio=1.2, votes=900, tie_rate=0.1, header_effect=0.4)
    votes = style_votes(labels, rows, features=("length", "headers"))
    result = style_bradley_terry(votes, l2=l2, rounds=0)
    ratios = style_ratios(votes.features_a, votes.features_b)
    scales = rms_scales(ratios)
    z = ratios[:, scales > 0] / scales[scales > 0]
    theirs = newton_fit(votes.model_a, votes.model_b, votes.outcome, z, 5, l2)
    ours = {s.label: s.score for s in result.scores}
    assert max(abs(ours[label] - theirs[k]) for k, label in enumerate(labels)) < 1e-6
    assert [c.feature for c in result.coefficients] == ["length", "headers"]
    assert max(abs(c.beta - theirs[5 + k]) for k, c in enumerate(result.coefficients)) < 1e-6
    assert abs(sum(ours.values())) < 1e-9


def test_a_model_that_wins_only_by_length_is_not_ranked_first_once_length_is_controlled():
    # "verbose" is no better than m3, the weakest, in substance, but its answers are about four times longer.
    strength = {"verbose": -0.2, "m1": 0.3, "m2": 0.1, "m3": -0.2}
    length = {"verbose": 3000, "m1": 800, "m2": 800, "m3": 800}
    beta_ratio = 2.0
    labels, rows = simulate(5, strength, length, beta_ratio=beta_ratio, votes=4000, tie_rate=0.1)
    plain = bradley_terry(pair_counts(labels, [row[:3] for row in rows]), rounds=200, seed=1)
    assert plain.scores[0].label == "verbose" and plain.scores[0].rank == 1
    assert [s.rank for s in plain.scores].count(1) == 1

    votes = style_votes(labels, rows)
    result = style_bradley_terry(votes, rounds=200, seed=1)
    scores = {s.label: s for s in result.scores}
    assert scores["verbose"].rank > 1
    assert scores["m1"].rank == 1 and result.scores[0].label == "m1"
    assert scores["verbose"].score < scores["m2"].score
    # No list items or bold anywhere: those features carry no information and are dropped.
    assert result.dropped_features == ["list_items", "bold"]
    coefficients = {c.feature: c for c in result.coefficients}
    length_coefficient = coefficients["length"]
    # On the fitted scale the true coefficient is beta_ratio times the RMS of the length ratios.
    truth = beta_ratio * length_coefficient.scale
    assert length_coefficient.lower < truth < length_coefficient.upper
    assert abs(length_coefficient.beta - truth) < 1.96 * length_coefficient.se
    assert length_coefficient.beta / length_coefficient.scale == pytest.approx(beta_ratio, abs=0.3)
    # Headers vary but have no effect: their estimate lies within three standard errors of zero (a 95 %
    # interval misses a true zero one time in twenty, so it is not the check for a null effect).
    assert abs(coefficients["headers"].beta) < 3 * coefficients["headers"].se
    # The true strengths (centred) lie in their intervals.
    centre = np.mean(list(strength.values()))
    for label, value in strength.items():
        assert scores[label].lower < value - centre < scores[label].upper
    json.dumps(result.as_dict())


def test_without_style_effects_the_thetas_are_plain_bradley_terry():
    strength = {"m0": 0.6, "m1": 0.2, "m2": -0.1, "m3": -0.7}
    length = {label: 1000 for label in strength}
    labels, rows = simulate(9, strength, length, votes=3000, tie_rate=0.15)
    counts = pair_counts(labels, [row[:3] for row in rows])
    matrix = win_matrix(4, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    plain = estimate(matrix, alpha=0)
    votes = style_votes(labels, rows, features=("length", "headers"))
    result = style_bradley_terry(votes, l2=0, rounds=200, seed=3)
    ours = {s.label: s.score for s in result.scores}
    # Style varies at random but does not matter: the thetas move by a small fraction of their spread.
    assert max(abs(ours[label] - plain[k]) for k, label in enumerate(labels)) < 0.02
    assert [s.label for s in result.scores] == ["m0", "m1", "m2", "m3"]
    for coefficient in result.coefficients:
        assert coefficient.lower < 0 < coefficient.upper
    # Identical style on both sides: every feature is dropped and the fit is exactly plain Bradley-Terry.
    same = [(a, b, w, fa, fa) for a, b, w, fa, _ in rows]
    flat = style_bradley_terry(style_votes(labels, same), l2=0, rounds=0)
    assert flat.coefficients == [] and flat.dropped_features == list(STYLE_FEATURES)
    assert max(abs(s.score - plain[labels.index(s.label)]) for s in flat.scores) < 1e-6


def test_bootstrap_is_seeded_and_identical_records_share_a_rank():
    strength = {"m0": 0.4, "m1": 0.0, "m2": -0.4}
    labels, rows = simulate(2, strength, {"m0": 500, "m1": 900, "m2": 700}, beta_ratio=1.0, votes=600)
    votes = style_votes(labels, rows)
    first = style_bradley_terry(votes, rounds=50, seed=7)
    assert first.as_dict() == style_bradley_terry(votes, rounds=50, seed=7).as_dict()
    assert first.as_dict() != style_bradley_terry(votes, rounds=50, seed=8).as_dict()
    assert first.votes == 600 and first.skipped_rounds == 0
    # A three-way cycle of one vote each with equal style: all thetas 0, one shared rank.
    cycle = [(a, b, "a", features_row(100), features_row(100)) for a, b in [("x", "y"), ("y", "z"), ("z", "x")]]
    tied = style_bradley_terry(style_votes(["x", "y", "z"], cycle), rounds=0)
    assert [s.rank for s in tied.scores] == [1, 1, 1]
    assert all(abs(s.score) < 1e-9 for s in tied.scores)
    # Two models, one outcome: every resample is the same, and the zero-width interval says why.
    single = [("x", "y", "a", features_row(100), features_row(100))] * 5
    one_way = style_bradley_terry(style_votes(["x", "y"], single), rounds=20, seed=0)
    assert all(s.note == ZERO_WIDTH_NOTE and s.lower == s.upper for s in one_way.scores)


def test_disconnected_models_and_bad_input():
    rows = [
        ("a", "b", "a", features_row(100), features_row(200)),
        ("b", "a", "tie", features_row(150), features_row(150)),
        ("a", "b", "b", features_row(120), features_row(90)),
        ("c", "d", "a", features_row(100), features_row(100)),
    ]
    # Between a and b, the shorter answer always won: the length coefficient runs to -infinity.
    # A singular fit is reported as not estimable, with the reason, rather than raised.
    singular = style_bradley_terry(style_votes(["a", "b", "c", "d", "e"], rows), rounds=0)
    assert singular.estimable is False and singular.scores == [] and singular.coefficients == []
    assert "outcomes that the covariates predict perfectly" in singular.reason
    assert singular.reason.startswith("not estimable: The information matrix is singular")
    rows += [
        ("a", "b", "a", features_row(200), features_row(100)),
        ("a", "b", "b", features_row(100), features_row(300)),
    ]
    result = style_bradley_terry(style_votes(["a", "b", "c", "d", "e"], rows), rounds=0)
    assert sorted(s.label for s in result.scores) == ["a", "b"]
    assert result.disconnected == ["c", "d", "e"] and result.votes == 6
    empty = style_bradley_terry(style_votes(["a", "b"], []), rounds=10)
    assert empty.scores == [] and empty.disconnected == ["a", "b"]
    with pytest.raises(ValueError, match=r"^Vote 2: unknown model 'z'\.$"):
        style_votes(["a", "b"], [rows[0], ("a", "z", "a", features_row(1), features_row(1))])
    with pytest.raises(ValueError, match=r"^Vote 1: unknown winner 'left': expected 'a', 'b' or 'tie'\.$"):
        style_votes(["a", "b"], [("a", "b", "left", features_row(1), features_row(1))])
    with pytest.raises(ValueError, match=r"^Vote 1: features_b lacks 'bold'\.$"):
        style_votes(["a", "b"], [("a", "b", "a", features_row(1), {"length": 1, "headers": 0, "list_items": 0})])
    with pytest.raises(ValueError, match=r"^Vote 1: features_a\['length'\] must be a non-negative number, got -3\.$"):
        style_votes(["a", "b"], [("a", "b", "a", features_row(-3), features_row(1))])
    with pytest.raises(ValueError, match=r"^Vote 1: compares 'a' with itself\.$"):
        style_votes(["a", "b"], [("a", "a", "a", features_row(1), features_row(1))])
    never_loses = [("a", "b", "a", features_row(100), features_row(100))] * 3 + [
        ("b", "c", "a", features_row(100), features_row(100)),
        ("c", "b", "a", features_row(100), features_row(100)),
    ]
    with pytest.raises(ValueError, match="but 'a' never lost to or tied with any other model"):
        style_bradley_terry(style_votes(["a", "b", "c"], never_loses), l2=0, rounds=0)
    # With the default penalty the same votes give finite scores, a ranked first.
    finite = style_bradley_terry(style_votes(["a", "b", "c"], never_loses), rounds=0)
    assert finite.scores[0].label == "a" and all(np.isfinite(s.score) for s in finite.scores)
    with pytest.raises(ValueError, match="l2 must be zero or positive"):
        style_bradley_terry(style_votes(["a", "b", "c"], never_loses), l2=-1)


def test_bootstrap_rounds_by_plain_newton_equal_the_full_fit_and_fast_collection_equals_the_checked_one():
    strength = {"m0": 0.5, "m1": 0.1, "m2": -0.2, "m3": -0.4}
    labels, rows = simulate(21, strength, {"m0": 900, "m1": 500, "m2": 700, "m3": 600}, beta_ratio=1.2, votes=800)
    votes = style_votes(labels, rows)
    checked = _style_votes_checked(labels, rows, STYLE_FEATURES)
    for name in ("model_a", "model_b", "outcome", "features_a", "features_b"):
        assert np.array_equal(getattr(votes, name), getattr(checked, name))
    # numpy numbers are not plain int or float: the checked path takes them, with the same result.
    numpy_rows = [(a, b, w, {k: np.float64(v) for k, v in fa.items()}, fb) for a, b, w, fa, fb in rows]
    assert np.array_equal(style_votes(labels, numpy_rows).features_a, votes.features_a)
    ratios = style_ratios(votes.features_a, votes.features_b)
    scales = rms_scales(ratios)
    z = ratios[:, scales > 0] / scales[scales > 0]
    for l2 in (0.01, 0.0):
        design = style_design(votes.model_a, votes.model_b, votes.outcome, z, models=4, l2=l2)
        _, _, fitted = fit_design(design)
        rng = np.random.default_rng(3)
        for _ in range(5):
            weights = rng.multinomial(800, np.full(800, 1 / 800)).astype(float)
            quick = newton_round(design, weights, fitted.free)
            full = np.concatenate(fit_design(design, weights=weights, initial=fitted.free)[:2])
            assert np.max(np.abs(quick - full)) < 1e-8
