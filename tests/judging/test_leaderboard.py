"""Leaderboard numbers worked out by hand on small fixtures."""

import math

import numpy as np
import pytest

from judging.results.leaderboard import (
    ONE_SCORE_NOTE,
    SAME_SCORES_NOTE,
    CrossScore,
    PairOutcome,
    Score,
    alignbench_aggregates,
    bootstrap_interval,
    combine_orders,
    criteria_table,
    cross_validation,
    pairwise_table,
    pointwise_table,
)


def test_pointwise_means_counts_failures_and_best_three():
    scores = [
        Score("A", 8, {"intent": "qa"}),
        Score("A", 6, {"intent": "qa"}),
        Score("A", 9, {"intent": "advice"}),
        Score("B", 5, {"intent": "qa"}),
        Score("B", None, {"intent": "qa"}),
        Score("B", 7, {"intent": "advice"}),
        Score("C", 4, {"intent": "qa"}),
        Score("C", 4, {"intent": "advice"}),
        Score("D", 2, {"intent": "qa"}),
    ]
    table = pointwise_table(scores, by="intent")
    assert table["columns"] == ["advice", "qa"]
    rows = {row["model"]: row for row in table["rows"]}
    assert [row["model"] for row in table["rows"]] == ["A", "B", "C", "D"]
    assert rows["A"]["overall"].mean == pytest.approx(23 / 3)
    assert (rows["B"]["overall"].mean, rows["B"]["overall"].count, rows["B"]["overall"].failures) == (6.0, 2, 1)
    assert rows["B"]["cells"]["qa"].as_dict()["failures"] == 1
    assert rows["A"]["cells"]["qa"].mean == 7.0 and rows["A"]["cells"]["advice"].mean == 9.0
    assert [rows[m]["overall"].rank for m in "ABCD"] == [1, 2, 3, 4]
    assert [rows[m]["overall"].best for m in "ABCD"] == [1, 2, 3, None]
    assert rows["D"]["cells"]["advice"].mean is None and rows["D"]["cells"]["advice"].count == 0
    assert [rows[m]["cells"]["advice"].rank for m in "ABCD"] == [1, 2, 3, None]


def test_bootstrap_interval_brackets_the_mean_and_is_reproducible():
    values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    low, high = bootstrap_interval(values, seed=1)
    assert low < 5.5 < high
    assert (low, high) == bootstrap_interval(values, seed=1)
    assert bootstrap_interval([7]) == (7.0, 7.0)
    assert bootstrap_interval([5, 5, 5]) == (5.0, 5.0)
    assert all(math.isnan(v) for v in bootstrap_interval([]))
    # The interval width matches the normal approximation of the standard error of the mean.
    rng = np.random.default_rng(0)
    sample = rng.integers(1, 11, size=400)
    low, high = bootstrap_interval(sample, seed=3)
    se = sample.std(ddof=1) / math.sqrt(sample.size)
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_criteria_means():
    table = criteria_table(
        [Score("A", 7, criteria={"Factuality": 6, "Clarity": 8}), Score("A", 5, criteria={"Factuality": 4})]
    )
    assert table["criteria"] == ["Clarity", "Factuality"]
    assert table["rows"] == [
        {"model": "A", "means": {"Clarity": 8.0, "Factuality": 5.0}, "counts": {"Clarity": 1, "Factuality": 2}}
    ]


def test_alignbench_aggregates_follow_the_paper():
    means = {
        "数学计算": 6.0,
        "逻辑推理": 5.0,
        "基本任务": 7.0,
        "中文理解": 6.0,
        "综合问答": 8.0,
        "文本写作": 7.0,
        "角色扮演": 7.5,
        "专业能力": 6.5,
    }
    assert alignbench_aggregates(means) == {"中文推理": 5.5, "中文语言": 7.0, "总分": 6.25}
    assert alignbench_aggregates({"数学计算": 4.0})["总分"] is None


def test_combining_both_orders():
    assert combine_orders(["win", "win"]) == "win"
    assert combine_orders(["win", "lose"]) == "tie"
    assert combine_orders(["lose", "error"]) == "error"
    assert combine_orders(["lose"]) == "lose"


def test_pairwise_rates_ranking_and_reference_at_fifty():
    outcomes = (
        [PairOutcome("gpt4", "win")] * 6
        + [PairOutcome("gpt4", "lose")] * 3
        + [PairOutcome("gpt4", "error")]
        + [PairOutcome("turbo", "win")] * 6
        + [PairOutcome("turbo", "lose")] * 4
        + [PairOutcome("small", "win")] * 2
        + [PairOutcome("small", "tie")] * 2
        + [PairOutcome("small", "lose")] * 6
    )
    rows = pairwise_table(outcomes, lengths={"gpt4": 120.0, "turbo": 80.0, "davinci": 60.0}, reference="davinci")
    assert [(r["model"], r["rank"]) for r in rows] == [("gpt4", 1), ("turbo", 2), ("davinci", 3), ("small", 4)]
    gpt4 = rows[0]
    assert (gpt4["win_rate"], gpt4["lose_rate"], gpt4["error_rate"], gpt4["items"], gpt4["length"]) == (
        0.6,
        0.3,
        0.1,
        10,
        120.0,
    )
    # Standard error of the per-item win indicator: sd(6 ones, 4 zeros, ddof=1) / sqrt(10).
    assert gpt4["win_rate_se"] == pytest.approx(math.sqrt(0.6 * 0.4 * 10 / 9) / math.sqrt(10))
    assert rows[3]["win_rate"] == pytest.approx(0.3) and rows[3]["tie_rate"] == 0.2
    assert rows[2] == {
        "model": "davinci",
        "items": None,
        "win_rate": 0.5,
        "lose_rate": 0.5,
        "tie_rate": 0.0,
        "error_rate": 0.0,
        "win_rate_se": None,
        "length": 60.0,
        "reference": True,
        "rank": 3,
        "decisive": None,
    }
    assert [r["decisive"] for r in rows] == [9, 10, None, 8]


def test_cross_validation_matrix_and_rating_bias():
    scores = [
        CrossScore("gpt4", "gpt4", "gpt4", 8),
        CrossScore("gpt4", "gpt4", "qwen", 6),
        CrossScore("gpt4", "qwen", "qwen", 9),
        CrossScore("gpt4", "qwen", "gpt4", 9),
        CrossScore("qwen", "gpt4", "gpt4", 7),
        CrossScore("qwen", "qwen", "qwen", 8),
    ]
    result = cross_validation(scores)
    assert result["matrix"] == {"gpt4": {"gpt4": 7.0, "qwen": 9.0}, "qwen": {"gpt4": 7.0, "qwen": 8.0}}
    # gpt4: own-reference scores 8 (gpt4) and 9 (qwen): mean 8.5 - 8 = 0.5; qwen: (7 + 8) / 2 - 8 = -0.5.
    assert result["rating_bias"] == {"gpt4": 0.5, "qwen": -0.5}


def test_equal_means_share_a_rank_and_the_next_rank_skips():
    scores = [
        Score(model, final)
        for model, finals in {"A": [8, 6], "B": [7, 7], "C": [9, 5], "D": [4]}.items()
        for final in finals
    ]
    rows = {row["model"]: row["overall"] for row in pointwise_table(scores)["rows"]}
    # A, B and C all average 7: all first, and D fourth, not 1, 2, 3 by the alphabet.
    assert [rows[m].rank for m in "ABCD"] == [1, 1, 1, 4]
    assert [rows[m].best for m in "ABCD"] == [1, 1, 1, None]


def test_a_zero_width_interval_is_explained():
    rows = {
        row["model"]: row["overall"]
        for row in pointwise_table([Score("A", 7), Score("B", 8), Score("B", 8), Score("C", 6), Score("C", 9)])["rows"]
    }
    assert (rows["A"].low, rows["A"].high, rows["A"].note) == (7.0, 7.0, ONE_SCORE_NOTE)
    assert (rows["B"].low, rows["B"].high, rows["B"].note) == (8.0, 8.0, SAME_SCORES_NOTE)
    assert rows["C"].low < rows["C"].high and rows["C"].note is None
    assert rows["A"].as_dict()["note"] == ONE_SCORE_NOTE


def test_three_models_tied_at_fifty_percent_share_the_first_rank():
    """As reported: three tied 50 % models were ranked 1, 2 and 3."""
    outcomes = [PairOutcome(model, outcome) for model in ("x", "y", "z") for outcome in ("win", "lose")]
    outcomes += [PairOutcome("w", "lose")] * 2
    rows = pairwise_table(outcomes, lengths={}, reference="ref")
    assert [(r["model"], r["rank"]) for r in rows] == [("ref", 1), ("x", 1), ("y", 1), ("z", 1), ("w", 5)]
    # Equal win rates with different lose rates do not tie: a tie counts half a win.
    rows = pairwise_table(
        [PairOutcome("p", "tie"), PairOutcome("q", "win"), PairOutcome("q", "lose")], lengths={}, reference=None
    )
    assert [(r["model"], r["rank"]) for r in rows] == [("p", 1), ("q", 2)]
