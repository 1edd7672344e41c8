"""The adaptive pairing design (stats/pairing.py): its fit, the expected information of a pair,
the allocation it optimises, and drawing a pair from it."""

import numpy as np
import pytest
from scipy.optimize import minimize

from stats.pairing import (
    GAP_WEIGHT,
    INFORMATION,
    PRIOR_SD,
    UNIFORM,
    _criterion_gain,
    _laplacian,
    adjacent_gap_sds,
    all_pairs,
    centred_sds,
    criterion_matrix,
    design_criterion,
    draw_pair,
    expected_information,
    known_order_neighbours,
    map_fit,
    neighbour_chances,
    pairing_design,
    ranking_contrasts,
)


def counts_of(n, table):
    """{(i, j): (i wins, j wins, ties)} as the column arrays the design takes."""
    keys = sorted(table)
    return (
        n,
        [i for i, _ in keys],
        [j for _, j in keys],
        [table[key][0] for key in keys],
        [table[key][1] for key in keys],
        [table[key][2] for key in keys],
    )


def test_all_pairs_lists_each_unordered_pair_once_in_a_fixed_order():
    assert all_pairs(4).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert all_pairs(2).tolist() == [[0, 1]]


def test_the_fit_is_the_posterior_mode_with_ties_as_half_wins():
    n, first, second, wins_first, wins_second, ties = counts_of(
        4, {(0, 1): (7, 2, 3), (1, 2): (5, 5, 2), (2, 3): (1, 6, 0), (0, 3): (9, 0, 1)}
    )
    theta, precision = map_fit(n, first, second, wins_first, wins_second, ties, prior_sd=1.2)

    def negative_log_posterior(t):
        total = 0.0
        for i, j, a, b, tied in zip(first, second, wins_first, wins_second, ties, strict=True):
            d = t[i] - t[j]
            total -= (a + 0.5 * tied) * -np.logaddexp(0, -d) + (b + 0.5 * tied) * -np.logaddexp(0, d)
        return total + 0.5 * (t @ t) / 1.2**2

    expected = minimize(negative_log_posterior, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    assert theta == pytest.approx(expected, abs=1e-6)
    # Model 0 never lost to model 3: the prior keeps it finite (unregularised BT would not).
    assert np.all(np.isfinite(theta)) and theta[0] == theta.max()
    # The precision is the Hessian of the negative log posterior there, by finite differences.
    step = 1e-5
    hessian = np.array(
        [
            [
                (
                    negative_log_posterior(theta + step * (np.eye(4)[a] + np.eye(4)[b]))
                    - negative_log_posterior(theta + step * (np.eye(4)[a] - np.eye(4)[b]))
                    - negative_log_posterior(theta - step * (np.eye(4)[a] - np.eye(4)[b]))
                    + negative_log_posterior(theta - step * (np.eye(4)[a] + np.eye(4)[b]))
                )
                / (4 * step**2)
                for b in range(4)
            ]
            for a in range(4)
        ]
    )
    assert precision == pytest.approx(hessian, abs=1e-3)


def test_without_votes_the_fit_is_the_prior():
    theta, precision = map_fit(3, [], [], [], [], [])
    assert theta.tolist() == [0, 0, 0]
    assert precision == pytest.approx(np.eye(3) / PRIOR_SD**2)


def test_expected_information_is_p_times_one_minus_p_when_certain_and_flatter_when_not():
    pairs = np.array([[0, 1], [0, 2]])
    theta = np.array([0.0, 0.0, 3.0])
    certain = expected_information(theta, np.zeros((3, 3)), pairs)
    p = 1 / (1 + np.exp(3.0))
    assert certain == pytest.approx([0.25, p * (1 - p)])
    unsure = expected_information(theta, np.eye(3) * 2.0, pairs)
    # Uncertainty lowers the weight of a pair that looks close and raises that of one that looks far.
    assert unsure[0] < certain[0] and unsure[1] > certain[1]
    # And it is close to the exact expectation over the posterior of the difference.
    rng = np.random.default_rng(0)
    differences = rng.normal(-3.0, 2.0, 400_000)
    exact = np.mean(np.exp(-differences) / (1 + np.exp(-differences)) ** 2)
    assert unsure[1] == pytest.approx(exact, rel=0.01)


def test_the_centred_sds_come_from_the_inverse_of_the_precision():
    precision = _laplacian(3, np.array([0, 1]), np.array([1, 2]), np.array([4.0, 1.0])) + np.eye(3) * 0.1
    centre = np.eye(3) - 1 / 3
    covariance = centre @ np.linalg.inv(precision) @ centre
    assert centred_sds(precision) == pytest.approx(np.sqrt(np.diag(covariance)))


def test_the_criterion_is_the_mean_gap_variance_plus_the_mean_model_variance():
    precision = _laplacian(4, np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3]), np.array([5.0, 2.0, 8.0, 1.0]))
    precision += np.eye(4) * 0.2
    covariance = np.linalg.inv(precision)
    order = np.array([2, 0, 3, 1])
    gaps = [covariance[a, a] + covariance[b, b] - 2 * covariance[a, b] for a, b in ((2, 0), (0, 3), (3, 1))]
    centre = np.eye(4) - 1 / 4
    models = np.diag(centre @ covariance @ centre)
    matrix = criterion_matrix(known_order_neighbours(order), 0.5)
    assert design_criterion(precision, matrix) == pytest.approx(0.5 * np.mean(gaps) + 0.5 * np.mean(models))
    assert design_criterion(precision, criterion_matrix(known_order_neighbours(order), 0.0)) == pytest.approx(
        np.mean(models)
    )
    # The matrix is the sum of the contrasts' outer products, each with its weight.
    rows, weights = ranking_contrasts(known_order_neighbours(order), 0.5)
    assert matrix == pytest.approx(rows.T @ (rows * weights[:, None]))
    assert weights.tolist() == [0.125] * 4 + [
        0.5 / 3 if pair in ([0, 2], [0, 3], [1, 3]) else 0.0 for pair in all_pairs(4).tolist()
    ]
    assert adjacent_gap_sds(precision, order) == pytest.approx(np.sqrt(gaps))


def test_the_gain_is_the_derivative_of_the_criterion():
    rng = np.random.default_rng(1)
    n = 5
    pairs = all_pairs(n)
    weights = rng.uniform(0.05, 0.25, len(pairs))
    precision = _laplacian(n, pairs[:, 0], pairs[:, 1], rng.uniform(0, 20, len(pairs))) + np.eye(n) * 0.3
    neighbours = rng.uniform(0, 1, (n, n))
    matrix = criterion_matrix(neighbours + neighbours.T, 0.5)
    gains = _criterion_gain(precision, weights, pairs, matrix)
    for k in range(len(pairs)):
        bump = np.zeros(len(pairs))
        bump[k] = 1e-6
        after = precision + _laplacian(n, pairs[:, 0], pairs[:, 1], bump * weights)
        slope = (design_criterion(precision, matrix) - design_criterion(after, matrix)) / 1e-6
        assert gains[k] == pytest.approx(slope, rel=1e-3)


def test_neighbours_are_certain_once_the_order_is_and_alike_while_nothing_is_known():
    theta = np.array([2.0, -1.0, 1.0, -2.0])  # the order 0, 2, 1, 3
    certain = neighbour_chances(theta, np.eye(4) * 1e-8)
    assert certain == pytest.approx(known_order_neighbours(np.array([0, 2, 1, 3])))
    assert certain.tolist() == certain.T.tolist()
    unknown = neighbour_chances(np.zeros(4), np.eye(4))
    off_diagonal = unknown[~np.eye(4, dtype=bool)]
    assert off_diagonal == pytest.approx([off_diagonal[0]] * 12) and off_diagonal[0] > 0
    # In between: the close neighbours 2 and 1 (1 apart) are likelier neighbours than 0 and 1.
    unsure = neighbour_chances(theta, np.eye(4) * 0.5)
    assert 0 < unsure[0, 1] < unsure[2, 1] < 1


def test_with_no_votes_every_pair_is_alike():
    design = pairing_design(5, remaining=100, uniform_share=0.2)
    assert design.uniform == pytest.approx([0.1] * 10)
    assert design.information == pytest.approx([0.1] * 10)
    assert design.probabilities == pytest.approx([0.1] * 10)
    assert design.predicted_width == pytest.approx(design.predicted_width_uniform)


def test_close_models_are_compared_more_than_far_ones():
    # Four models well measured at strengths 2, 1, -1, -2 (many balanced votes in every pair).
    truth = np.array([2.0, 1.0, -1.0, -2.0])
    table = {}
    for i, j in all_pairs(4).tolist():
        p = 1 / (1 + np.exp(-(truth[i] - truth[j])))
        table[(i, j)] = (round(200 * p), round(200 * (1 - p)), 0)
    design = pairing_design(*counts_of(4, table), remaining=400, uniform_share=0.2)
    information = dict(zip(map(tuple, all_pairs(4).tolist()), design.information, strict=True))
    assert information[(0, 1)] > information[(0, 3)]
    assert information[(2, 3)] > information[(0, 3)]
    assert information[(1, 2)] > information[(0, 3)]
    assert design.predicted_width < design.predicted_width_uniform


def test_a_little_measured_model_is_compared_more():
    # Models 0-2 compared 60 times in each pair, model 3 barely: every equal in strength.
    table = {(0, 1): (25, 25, 10), (0, 2): (25, 25, 10), (1, 2): (25, 25, 10), (0, 3): (1, 1, 0)}
    design = pairing_design(*counts_of(4, table), remaining=60, uniform_share=0.2)
    with_three = design.information[[k for k, pair in enumerate(all_pairs(4).tolist()) if 3 in pair]]
    without = design.information[[k for k, pair in enumerate(all_pairs(4).tolist()) if 3 not in pair]]
    assert with_three.sum() > 0.8 and with_three.min() > without.max()


def test_the_allocation_is_optimal_among_its_neighbours():
    """At the optimum no move of weight from one pair to another lowers the criterion: the
    multiplicative algorithm's fixed point, checked by brute force on small moves."""
    truth = np.array([1.5, 0.7, 0.0, -0.4, -2.0])
    rng = np.random.default_rng(3)
    table = {}
    for i, j in all_pairs(5).tolist():
        p = 1 / (1 + np.exp(-(truth[i] - truth[j])))
        trials = int(rng.integers(3, 12))
        wins = int(rng.binomial(trials, p))
        table[(i, j)] = (wins, trials - wins, 0)
    n, *columns = counts_of(5, table)
    design = pairing_design(n, *columns, remaining=300, uniform_share=0.25, iterations=3000)
    theta, precision = map_fit(n, *columns)
    pairs = all_pairs(5)
    covariance = np.linalg.inv(precision)
    weights = expected_information(theta, covariance, pairs)
    matrix = criterion_matrix(neighbour_chances(theta, covariance), GAP_WEIGHT)

    def criterion(allocation):
        mixture = 0.25 * design.uniform + 0.75 * allocation
        after = precision + _laplacian(5, pairs[:, 0], pairs[:, 1], 300 * mixture * weights)
        return design_criterion(after, matrix)

    best = criterion(design.information)
    for source in range(len(pairs)):
        for target in range(len(pairs)):
            moved = design.information.copy()
            amount = min(0.01, moved[source])
            if source == target or amount <= 0:
                continue
            moved[source] -= amount
            moved[target] += amount
            assert criterion(moved) >= best - 1e-9


def well_measured(truth, votes=200):
    """Counts as if every pair of models had `votes` votes split at the true win probability."""
    table = {}
    for i, j in all_pairs(len(truth)).tolist():
        p = 1 / (1 + np.exp(-(truth[i] - truth[j])))
        table[(i, j)] = (round(votes * p), round(votes * (1 - p)), 0)
    return counts_of(len(truth), table)


def test_with_a_clear_ranking_the_close_neighbours_gain_most():
    # Five models in a clear order, 0 > 1 > 2 > 3 > 4, 40 votes on each pair; the neighbours 1 and 2
    # are close (0.2 apart), the others about 2 apart.
    truth = np.array([3.0, 1.1, 0.9, -1.0, -3.0])
    columns = well_measured(truth, votes=40)
    design = pairing_design(*columns, remaining=400, uniform_share=0.2)
    per_model = pairing_design(*columns, remaining=400, uniform_share=0.2, gap_weight=0.0)
    share = dict(zip(map(tuple, all_pairs(5).tolist()), design.information, strict=True))
    neighbours = [(0, 1), (1, 2), (2, 3), (3, 4)]
    others = dict(zip(map(tuple, all_pairs(5).tolist()), per_model.information, strict=True))
    # Against the design aimed at the per-model intervals alone, the close neighbours gain most
    # (their gap is the one a vote elsewhere hardly narrows), and the neighbours together get most
    # of the plan; models three or four places apart get nothing.
    assert share[(1, 2)] > 3 * others[(1, 2)]
    assert sum(share[pair] for pair in neighbours) > 0.8 > sum(others[pair] for pair in neighbours)
    assert max(share[pair] for pair in ((0, 3), (0, 4), (1, 4), (2, 4))) < 1e-3
    # What it buys: narrower gaps for slightly wider per-model intervals.
    assert design.predicted_gap_width < per_model.predicted_gap_width < design.predicted_gap_width_uniform
    assert per_model.predicted_width < design.predicted_width


def test_the_uniform_share_holds_whatever_the_plan():
    truth = np.array([3.0, 1.1, 0.9, -1.0, -3.0])
    available = np.array([True] * 9 + [False])
    design = pairing_design(*well_measured(truth), remaining=300, uniform_share=0.25, available=available)
    assert design.probabilities == pytest.approx(0.25 * design.uniform + 0.75 * design.information)
    # Every pair with a question left keeps at least the uniform share's part of it, and sums to 1.
    assert np.all(design.probabilities[available] >= 0.25 / 9 - 1e-12)
    assert design.probabilities[~available].tolist() == [0.0]
    assert design.probabilities.sum() == pytest.approx(1)


def test_the_design_is_deterministic():
    truth = np.array([1.5, 0.7, 0.0, -0.4, -2.0])
    columns = well_measured(truth, votes=12)
    first = pairing_design(*columns, remaining=100, uniform_share=0.2)
    second = pairing_design(*columns, remaining=100, uniform_share=0.2)
    assert first.information.tolist() == second.information.tolist()
    assert (first.predicted_gap_width, first.predicted_width) == (second.predicted_gap_width, second.predicted_width)
    draws = [draw_pair(first.uniform, first.information, 0.2, branch_random=0.5, pick_random=0.37) for _ in range(2)]
    assert draws[0] == draws[1]


def test_pairs_without_questions_get_nothing():
    available = np.array([True, False, True, True, False, True])
    design = pairing_design(4, remaining=50, uniform_share=0.3, available=available)
    assert design.uniform == pytest.approx([0.25, 0, 0.25, 0.25, 0, 0.25])
    assert design.information[~available].tolist() == [0, 0]
    assert design.probabilities.sum() == pytest.approx(1)


def test_with_a_uniform_share_of_one_the_design_is_uniform():
    table = {(0, 1): (10, 0, 0), (1, 2): (3, 3, 4)}
    design = pairing_design(*counts_of(3, table), remaining=30, uniform_share=1.0)
    assert design.probabilities == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n": 1}, "at least two models"),
        ({"uniform_share": 0}, "uniform share must be in"),
        ({"uniform_share": 1.2}, "uniform share must be in"),
        ({"available": [True, False]}, "one flag per pair"),
        ({"available": [False, False, False]}, "No pair of models has a question left"),
        ({"gap_weight": 1.5}, "gaps' weight must be in"),
    ],
)
def test_impossible_designs_are_refused(arguments, message):
    options = {"n": 3, "remaining": 10, "uniform_share": 0.2, **arguments}
    n = options.pop("n")
    with pytest.raises(ValueError, match=message):
        pairing_design(n, **options)


def test_draws_follow_the_design_and_record_their_probability():
    uniform = np.array([0.25, 0.25, 0.25, 0.25])
    information = np.array([0.7, 0.0, 0.2, 0.1])
    rng = np.random.default_rng(5)
    draws = [
        draw_pair(uniform, information, 0.4, branch_random=rng.random(), pick_random=rng.random())
        for _ in range(20_000)
    ]
    mixture = 0.4 * uniform + 0.6 * information
    frequency = np.bincount([draw.pair for draw in draws], minlength=4) / len(draws)
    # Within 4 binomial sds of the mixture.
    assert np.all(np.abs(frequency - mixture) < 4 * np.sqrt(mixture * (1 - mixture) / len(draws)))
    assert [draw.probability for draw in draws if draw.pair == 0] == pytest.approx(
        [mixture[0]] * int(frequency[0] * len(draws))
    )
    uniform_share = np.mean([draw.chosen_by == UNIFORM for draw in draws])
    assert abs(uniform_share - 0.4) < 4 * np.sqrt(0.24 / len(draws))
    assert {draw.chosen_by for draw in draws if draw.pair == 1} == {UNIFORM}


def test_a_draw_leaves_out_the_pairs_found_empty_and_renormalises():
    uniform = np.array([0.25, 0.25, 0.25, 0.25])
    information = np.array([0.7, 0.0, 0.2, 0.1])
    draw = draw_pair(uniform, information, 0.4, branch_random=0.9, pick_random=0.0, excluded=[0])
    # The information part without pair 0: 0.2 / 0.3 on pair 2, 0.1 / 0.3 on pair 3.
    assert (draw.pair, draw.chosen_by) == (2, INFORMATION)
    assert draw.probability == pytest.approx(0.4 / 3 + 0.6 * 2 / 3)
    # With nothing left in the information part, the draw is uniform over what is left.
    draw = draw_pair(uniform, information, 0.4, branch_random=0.9, pick_random=0.99, excluded=[0, 2, 3])
    assert (draw.pair, draw.chosen_by, draw.probability) == (1, UNIFORM, 1.0)
    with pytest.raises(ValueError, match="Every pair is excluded"):
        draw_pair(uniform, information, 0.4, branch_random=0.1, pick_random=0.5, excluded=[0, 1, 2, 3])
