"""Bradley-Terry: against an independent scipy fit, ties as half wins, disconnected graphs, bootstrap."""

import choix
import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from stats.bt_rounds import fit_rounds, multinomial_redraws
from stats.intervals import ZERO_WIDTH_NOTE
from stats.ranking import (
    bootstrap,
    bradley_terry,
    competition_ranks,
    components,
    estimate,
    fit,
    is_strongly_connected,
    ranks_by_overlap,
    require_strongly_connected,
)
from stats.tallies import pair_counts, pair_counts_of, win_matrix


def scipy_fit(matrix: np.ndarray, alpha: float) -> np.ndarray:
    """Maximise sum W_ij (t_i - log(e^t_i + e^t_j)) - alpha n^2 log(sum e^t_i) with sum t = 0, by L-BFGS.

    Written from the likelihood, not from choix: the last parameter is minus the sum of the others.
    """
    n = matrix.shape[0]

    def unpack(free):
        return np.append(free, -free.sum())

    def objective(free):
        t = unpack(free)
        diff = t[:, None] - t[None, :]
        # -log P(i beats j) = log(1 + e^(t_j - t_i))
        nll = np.sum(matrix * np.logaddexp(0, -diff)) + alpha * n * n * logsumexp(t)
        p_ij = 1 / (1 + np.exp(-diff))
        grad = -(matrix * (1 - p_ij)).sum(axis=1) + (matrix.T * p_ij).sum(axis=1)
        grad = grad + alpha * n * n * softmax(t)
        return nll, grad[:-1] - grad[-1]

    result = minimize(
        objective,
        np.zeros(n - 1),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 10000},
    )
    return unpack(result.x)


def random_votes(seed: int, models: int, votes: int):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    labels = [f"m{i}" for i in range(models)]
    outcomes = []
    for _ in range(votes):
        i, j = rng.choice(models, 2, replace=False)
        p = 1 / (1 + np.exp(strength[j] - strength[i]))
        u = rng.random()
        winner = "tie" if u < 0.15 else ("a" if rng.random() < p else "b")
        outcomes.append((labels[i], labels[j], winner))
    return labels, outcomes


@pytest.mark.parametrize("alpha", [0.01, 0.5])
def test_choix_fit_matches_an_independent_scipy_maximum_likelihood_fit(alpha):
    labels, outcomes = random_votes(seed=7, models=6, votes=400)
    counts = pair_counts(labels, outcomes)
    matrix = win_matrix(6, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    ours = fit(matrix, alpha=alpha)
    theirs = scipy_fit(matrix, alpha)
    assert np.max(np.abs(ours - theirs)) < 1e-6
    assert abs(ours.sum()) < 1e-9


def test_a_model_that_never_loses_gets_a_finite_score():
    counts = pair_counts(["a", "b", "c"], [("a", "b", "a")] * 5 + [("a", "c", "a")] * 3 + [("b", "c", "tie")])
    matrix = win_matrix(3, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    ours = fit(matrix, alpha=0.01)
    assert np.all(np.isfinite(ours))
    assert np.max(np.abs(ours - scipy_fit(matrix, 0.01))) < 1e-6


def test_alpha_must_be_positive():
    with pytest.raises(ValueError, match="alpha must be positive"):
        fit(np.ones((2, 2)), alpha=0)


def test_ties_count_as_half_a_win_each_way():
    counts = pair_counts(["x", "y"], [("x", "y", "a"), ("x", "y", "a"), ("y", "x", "tie"), ("x", "y", "tie")])
    assert counts.first_wins.tolist() == [2] and counts.second_wins.tolist() == [0] and counts.ties.tolist() == [2]
    matrix = win_matrix(2, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    assert matrix.tolist() == [[0.0, 3.0], [1.0, 0.0]]
    # Two ties weigh exactly as one win each way, not as two.
    as_wins = pair_counts(["x", "y"], [("x", "y", "a")] * 3 + [("x", "y", "b")])
    plain = win_matrix(2, as_wins.first, as_wins.second, as_wins.first_wins, as_wins.second_wins, as_wins.ties)
    assert np.allclose(fit(matrix), fit(plain), atol=1e-12)
    only_ties = pair_counts(["x", "y"], [("x", "y", "tie")] * 4)
    result = bradley_terry(only_ties, rounds=0)
    assert [round(s.score, 12) for s in result.scores] == [0.0, 0.0]
    assert [(s.wins, s.losses, s.ties) for s in result.scores] == [(0, 0, 4), (0, 0, 4)]


def test_orientation_of_a_vote_does_not_matter():
    one = pair_counts(["x", "y"], [("x", "y", "a"), ("y", "x", "b")])
    assert one.first_wins.tolist() == [2] and one.second_wins.tolist() == [0]


def test_bad_votes_are_refused():
    with pytest.raises(ValueError, match="compares 'x' with itself"):
        pair_counts(["x"], [("x", "x", "a")])
    with pytest.raises(ValueError, match="Unknown winner 'left'"):
        pair_counts(["x", "y"], [("x", "y", "left")])


def test_a_disconnected_graph_is_reported_not_ranked():
    labels = ["a", "b", "c", "d", "e"]
    outcomes = [("a", "b", "a"), ("b", "a", "tie"), ("c", "d", "a"), ("d", "c", "a")]
    counts = pair_counts(labels, outcomes)
    assert components(5, counts.first, counts.second) == [[0, 1], [2, 3], [4]]
    result = bradley_terry(counts, rounds=50, seed=1)
    assert [s.label for s in result.scores] == ["a", "b"]
    assert result.disconnected == ["c", "d", "e"]
    assert result.comparisons == 4


def test_no_votes_ranks_nobody():
    result = bradley_terry(pair_counts(["a", "b"], []), rounds=10)
    assert result.scores == [] and result.disconnected == ["a", "b"]


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    labels, outcomes = random_votes(seed=3, models=4, votes=300)
    counts = pair_counts(labels, outcomes)
    first = bradley_terry(counts, rounds=200, seed=42)
    again = bradley_terry(counts, rounds=200, seed=42)
    assert first.as_dict() == again.as_dict()
    for score in first.scores:
        assert score.lower < score.score < score.upper
    assert sum(s.wins for s in first.scores) == sum(s.losses for s in first.scores)
    assert sum(s.wins + s.losses for s in first.scores) + sum(s.ties for s in first.scores) == 2 * 300


def test_ranks_by_interval_overlap():
    lower = np.array([1.0, 0.5, -1.0, -1.2])
    upper = np.array([2.0, 1.5, 0.4, 0.0])
    # a and b overlap, both lie above c and d, which overlap each other.
    assert ranks_by_overlap(lower, upper) == [1, 1, 3, 3]


def test_competition_ranks_share_equal_values_and_skip_after_them():
    assert competition_ranks([0.5, 0.5, 0.5, 0.2]) == [1, 1, 1, 4]
    assert competition_ranks([0.2, 0.5, 0.9, 0.5]) == [4, 2, 1, 2]
    assert competition_ranks([3, 1, 2, 1], higher_is_better=False) == [4, 1, 3, 1]
    # Missing values take no place.
    assert competition_ranks([None, 0.7, float("nan"), 0.7, 0.1]) == [None, 1, None, 1, 3]
    # Values within the tolerance of the first of their run share its rank.
    assert competition_ranks([1.0, 1.0 + 1e-9, 0.5], tolerance=1e-6) == [1, 1, 3]
    assert competition_ranks([1.0, 1.0 + 1e-9, 0.5]) == [2, 1, 3]
    assert competition_ranks([]) == []


def test_models_with_identical_records_share_a_rank_without_bootstrap():
    # A rock-paper-scissors cycle: every model wins once and loses once, so all score exactly 0.
    counts = pair_counts(["a", "b", "c", "d"], [("a", "b", "a"), ("b", "c", "a"), ("c", "a", "a"), ("d", "a", "b")])
    result = bradley_terry(counts, rounds=0)
    ranks = {s.label: s.rank for s in result.scores}
    assert ranks["d"] == 4
    assert ranks["b"] == ranks["c"] and ranks["b"] in (1, 2)
    # The cycle's three models only differ through d's loss to a: a ranks first alone.
    assert ranks["a"] == 1 and ranks["b"] == 2
    only_cycle = bradley_terry(
        pair_counts(["a", "b", "c"], [("a", "b", "a"), ("b", "c", "a"), ("c", "a", "a")]), rounds=0
    )
    assert [s.rank for s in only_cycle.scores] == [1, 1, 1]


def test_ranks_by_overlap_give_identical_intervals_one_rank():
    lower = np.array([0.1, 0.1, 0.1, -2.0])
    upper = np.array([0.4, 0.4, 0.4, -1.0])
    assert ranks_by_overlap(lower, upper) == [1, 1, 1, 4]
    # Zero-width intervals at the same value also share.
    assert ranks_by_overlap(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0])) == [2, 2, 1]


def test_a_zero_width_interval_is_explained():
    # One outcome only: every multinomial redraw is the same table, so every round gives the same fit.
    result = bradley_terry(pair_counts(["x", "y"], [("x", "y", "a")] * 6), rounds=50, seed=3)
    for score in result.scores:
        assert score.lower == score.upper == pytest.approx(score.score)
        assert score.note == ZERO_WIDTH_NOTE
    assert (
        result.as_dict()["scores"][0]["note"]
        == "all bootstrap rounds gave the same value: too few votes or a single outcome"
    )
    labels, outcomes = random_votes(seed=3, models=4, votes=300)
    assert all(s.note is None for s in bradley_terry(pair_counts(labels, outcomes), rounds=100).scores)


def test_alpha_zero_is_the_plain_maximum_likelihood_fit_on_a_strongly_connected_graph():
    labels, outcomes = random_votes(seed=11, models=5, votes=600)
    counts = pair_counts(labels, outcomes)
    matrix = win_matrix(5, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
    assert is_strongly_connected(matrix)
    ours = estimate(matrix, alpha=0)
    assert np.max(np.abs(ours - scipy_fit(matrix, 0.0))) < 1e-6
    # The regularised fit differs, and shrinks towards zero.
    assert np.max(np.abs(ours - estimate(matrix, alpha=0.5))) > 1e-3
    assert np.sum(np.abs(estimate(matrix, alpha=0.5))) < np.sum(np.abs(ours))
    result = bradley_terry(counts, alpha=0, rounds=100, seed=2)
    assert result.alpha == 0 and result.skipped_rounds == 0
    by_label = {s.label: s.score for s in result.scores}
    assert max(abs(by_label[label] - ours[k]) for k, label in enumerate(labels)) < 1e-9
    assert all(s.lower < s.score < s.upper for s in result.scores)


def test_alpha_zero_without_a_finite_estimate_names_the_models():
    # a never loses: its maximum-likelihood score is +infinity.
    counts = pair_counts(["a", "b", "c"], [("a", "b", "a")] * 3 + [("b", "c", "a"), ("c", "b", "a"), ("a", "c", "a")])
    with pytest.raises(ValueError) as error:
        bradley_terry(counts, alpha=0, rounds=0)
    assert str(error.value) == (
        "alpha=0 needs a strongly connected comparison graph (every model both wins and loses against the rest "
        "along chains of votes), but 'a' never lost to or tied with any other model: the maximum-likelihood "
        "scores would be infinite. Use alpha > 0 (default 0.01)."
    )
    # c never wins nor ties: c is named rather than {a, b}, who never lost to anyone outside their pair.
    matrix = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=float)
    with pytest.raises(ValueError, match="but 'c' never beat or tied with any other model:"):
        require_strongly_connected(matrix, ["a", "b", "c"])
    # Two pairs that each play only among themselves and one beats the other: a group is named.
    pairs = np.array([[0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=float)
    with pytest.raises(ValueError, match="but 'a', 'b' never lost to or tied with any model outside that group:"):
        require_strongly_connected(pairs, ["a", "b", "c", "d"])
    # A tie links both ways: the same table with c tying a is strongly connected.
    matrix[2, 0] = matrix[0, 2] = 0.5
    require_strongly_connected(matrix, ["a", "b", "c"])
    with pytest.raises(ValueError, match="alpha must be zero or positive, got -0.1"):
        estimate(matrix, alpha=-0.1)


def test_alpha_zero_bootstrap_skips_and_counts_rounds_without_an_estimate():
    # Each pair has one win each way, so many redraws lose a direction and have no finite estimate.
    outcomes = [("a", "b", "a"), ("a", "b", "b"), ("b", "c", "a"), ("b", "c", "b"), ("a", "c", "a"), ("a", "c", "b")]
    result = bradley_terry(pair_counts(["a", "b", "c"], outcomes), alpha=0, rounds=200, seed=0)
    assert [round(s.score, 9) for s in result.scores] == [0.0, 0.0, 0.0]
    assert 0 < result.skipped_rounds < 200
    assert result.as_dict()["skipped_rounds"] == result.skipped_rounds
    assert all(s.lower <= s.score <= s.upper for s in result.scores)


def test_an_interval_missing_because_no_round_had_an_estimate_says_so():
    # One win each way between two models: a redraw of the two votes keeps both directions half the time.
    counts = pair_counts(["x", "y"], [("x", "y", "a"), ("x", "y", "b")])
    # Seed 19 loses a direction in each of its three rounds.
    result = bradley_terry(counts, alpha=0, rounds=3, seed=19)
    assert result.skipped_rounds == 3
    assert [(s.lower, s.upper, s.rank) for s in result.scores] == [(None, None, 1), (None, None, 1)]
    assert (
        result.scores[0].note
        == "no bootstrap round had a finite estimate (alpha or l2 = 0 on sparse votes): no interval"
    )
    # Seed 0 keeps one round of three: its interval has no width and says why.
    kept = bradley_terry(counts, alpha=0, rounds=3, seed=0)
    assert kept.skipped_rounds == 2 and kept.scores[0].note == ZERO_WIDTH_NOTE


def test_pair_counts_of_arrays_equals_the_vote_by_vote_count():
    labels, outcomes = random_votes(seed=5, models=7, votes=2000)
    expected = {}
    for label_a, label_b, winner in outcomes:
        i, j = labels.index(label_a), labels.index(label_b)
        if i > j:
            i, j, winner = j, i, {"a": "b", "b": "a", "tie": "tie"}[winner]
        cell = expected.setdefault((i, j), [0, 0, 0])
        cell[["a", "b", "tie"].index(winner)] += 1
    columns = list(zip(*outcomes))
    positions = {label: k for k, label in enumerate(labels)}
    for counts in (
        pair_counts(labels, outcomes),
        pair_counts(labels, iter(outcomes)),
        pair_counts(labels, np.array(outcomes, dtype=object)),
        pair_counts(labels, np.array(outcomes)),
        pair_counts_of(labels, *(np.array(column) for column in columns)),
        pair_counts_of(labels, *(np.array(column, dtype=object) for column in columns)),
        pair_counts_of(
            labels,
            np.array([positions[x] for x in columns[0]]),
            np.array([positions[x] for x in columns[1]]),
            np.array([["a", "b", "tie"].index(w) for w in columns[2]]),
        ),
    ):
        got = {
            (int(i), int(j)): [int(a), int(b), int(t)]
            for i, j, a, b, t in zip(counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
        }
        assert got == expected
        assert list(zip(counts.first.tolist(), counts.second.tolist())) == sorted(expected)
    # Many models, few votes: the cells are found by sorting instead of a dense table, same counts.
    many = [f"m{k}" for k in range(3000)]
    sparse = pair_counts(many, [("m2999", "m0", "a"), ("m0", "m2999", "tie"), ("m5", "m7", "b")])
    assert sparse.first.tolist() == [0, 5] and sparse.second.tolist() == [2999, 7]
    assert sparse.first_wins.tolist() == [0, 0] and sparse.second_wins.tolist() == [1, 1]
    assert sparse.ties.tolist() == [1, 0]


def test_the_first_bad_vote_is_reported_as_a_vote_by_vote_count_would():
    good = ("x", "y", "a")
    with pytest.raises(ValueError, match="Unknown winner 'left'"):
        pair_counts(["x", "y"], [good, ("x", "y", "left"), ("x", "x", "a")])
    with pytest.raises(ValueError, match="compares 'x' with itself"):
        pair_counts(["x", "y"], [good, ("x", "x", "left")])
    with pytest.raises(KeyError, match="'z'"):
        pair_counts(["x", "y"], [good, ("x", "z", "a"), ("x", "x", "a")])
    with pytest.raises(ValueError, match="compares 'x' with itself"):
        pair_counts_of(["x", "y"], np.array(["y", "x"]), np.array(["x", "x"]), np.array(["a", "a"]))
    with pytest.raises(KeyError, match="'q'"):
        pair_counts_of(["x", "y"], np.array(["y", "q"]), np.array(["x", "x"]), np.array(["a", "a"]))
    with pytest.raises(ValueError, match="Need one winner per pair of models: 2, 2 and 1 values."):
        pair_counts_of(["x", "y"], ["x", "y"], ["y", "x"], ["a"])


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.5])
def test_bootstrap_rounds_fitted_together_equal_choix_fits_one_by_one(alpha):
    for seed, models, votes in ((1, 6, 300), (2, 12, 5000), (3, 4, 40)):
        labels, outcomes = random_votes(seed=seed, models=models, votes=votes)
        counts = pair_counts(labels, outcomes)
        matrix = win_matrix(models, counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties)
        if alpha == 0 and not is_strongly_connected(matrix):
            continue
        start = estimate(matrix, alpha=alpha)
        draws = bootstrap(counts, list(range(models)), start, rounds=30, alpha=alpha, seed=seed)
        cells = np.concatenate([counts.first_wins, counts.second_wins, counts.ties]).astype(float)
        redraws = multinomial_redraws(cells, 30, np.random.default_rng(seed))
        k = len(counts.first)
        for r, redraw in enumerate(redraws):
            round_matrix = win_matrix(
                models, counts.first, counts.second, redraw[:k], redraw[k : 2 * k], redraw[2 * k :]
            )
            if alpha == 0 and not is_strongly_connected(round_matrix):
                assert np.isnan(draws[r]).all()
                continue
            one = choix.ilsr_pairwise_dense(round_matrix, alpha=alpha, initial_params=start, max_iter=10_000, tol=1e-12)
            assert np.max(np.abs(draws[r] - one)) < 1e-9


def test_fit_rounds_reports_rounds_it_could_not_fit():
    # Two pairs with no link between them: the Hessian is singular and no round converges.
    estimates, converged = fit_rounds(4, [0, 2], [1, 3], [[3.0, 2.0]], [[1.0, 1.0]], alpha=0.0, initial=np.zeros(4))
    assert not converged.any()


def test_redraws_follow_the_multinomial_distribution_exactly():
    # Six votes in three cells (and an empty one): every table a redraw can give, against the
    # multinomial's probability of it. Poisson sums of six are often above and below six, so both
    # corrections (draws added, draws removed) are exercised in most rounds.
    counts = np.array([3.0, 2.0, 0.0, 1.0])
    rounds = 40_000
    draws = multinomial_redraws(counts, rounds, np.random.default_rng(4))
    assert draws.shape == (rounds, 4) and (draws.sum(axis=1) == 6).all() and (draws[:, 2] == 0).all()
    tables, seen = np.unique(draws, axis=0, return_counts=True)
    expected = rounds * stats.multinomial.pmf(tables, 6, counts / 6)
    assert len(tables) == 28  # every way of putting six votes in three cells
    chi_square = float(np.sum((seen - expected) ** 2 / expected))
    assert stats.chi2.sf(chi_square, df=len(tables) - 1) > 1e-3
    # Larger counts: each cell's variance N p (1 - p) and the covariances -N p_i p_j (a Poisson count
    # alone would have variance N p and no covariance).
    counts = np.array([500.0, 300.0, 200.0])
    draws = multinomial_redraws(counts, 20_000, np.random.default_rng(5))
    assert (draws.sum(axis=1) == 1000).all()
    p = counts / 1000
    covariance = 1000 * (np.diag(p) - np.outer(p, p))
    assert np.allclose(draws.mean(axis=0), counts, atol=0.5)
    assert np.allclose(np.cov(draws.T), covariance, rtol=0.05)
    # Seeded: the same seed redraws the same tables.
    again = [multinomial_redraws(counts, 50, np.random.default_rng(6)) for _ in range(2)]
    assert (again[0] == again[1]).all()
