"""Correlations with Fisher-z intervals, and position bias."""

import math

import pytest
from scipy import stats

from annotation.correlation import correlations, fisher_interval, position_bias


def test_fisher_interval_by_hand():
    # z = atanh(0.5) = 0.549306; se = 1/sqrt(25) = 0.2; half width 1.959964 * 0.2 = 0.391993.
    low, high = fisher_interval(0.5, 28)
    assert low == pytest.approx(math.tanh(0.549306 - 0.391993), abs=1e-6)
    assert high == pytest.approx(math.tanh(0.549306 + 0.391993), abs=1e-6)
    assert round(low, 4) == 0.156 and round(high, 4) == 0.7358
    assert fisher_interval(0.5, 3) is None
    assert fisher_interval(0.5, 4, kind="kendall") is None


def test_correlations_carry_scipy_p_values():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = [1.2, 1.9, 3.5, 3.9, 5.2, 5.8]
    out = correlations(x, y)
    assert out["n"] == 6
    assert out["pearson"]["r"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert out["pearson"]["p"] == pytest.approx(stats.pearsonr(x, y).pvalue)
    assert out["spearman"]["r"] == pytest.approx(1.0)
    assert out["kendall"]["r"] == pytest.approx(1.0)
    assert out["pearson"]["low"] < out["pearson"]["r"] < out["pearson"]["high"]


def test_too_few_or_constant_values_give_no_coefficient():
    assert correlations([1, 2], [2, 1])["pearson"]["r"] is None
    assert correlations([1, 2, 3], [5, 5, 5])["kendall"] == {"r": None, "p": None, "low": None, "high": None}


def test_position_bias():
    out = position_bias(30, 10)
    assert out["left_rate"] == 0.75
    assert out["p"] == pytest.approx(stats.binomtest(30, 40, 0.5).pvalue)
    assert out["low"] < 0.75 < out["high"]
    assert position_bias(0, 0)["left_rate"] is None
