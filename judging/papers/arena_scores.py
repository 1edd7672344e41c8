"""Arena-Hard-Auto v0.1's leaderboard maths, as its `show_result.py` and `utils_math.py` (the
sklearn versions) compute it. Pure: numpy and scipy, no Django.

- Battles: every judgment is one battle between the baseline and a candidate (each order of a
  pair its own battle, never combined), the winner as the judge said; a significant win
  (`A>>B`) counts `MULTIPLIER` times, a tie is half a win each way, a verdict outside the five
  is no battle.
- Score: Bradley-Terry on the battles (Arena fits an unpenalised logistic regression on the
  battles written twice, a tie once each way), shown as the win rate against the baseline in
  percent. Every battle has the baseline on one side, so the fit's maximum is where each model's
  predicted win rate equals its observed one: the weighted share of its battles it won, ties
  counting half. That closed form is what is computed (`tests/judging/test_arena_hard.py`
  checks it against the general fit).
- 95 % interval: 100 bootstrap rounds over the battles (each copy of a weighted battle drawn
  on its own, as Arena's `battles.sample(frac=1, replace=True)`), the 2.5th and 97.5th
  percentiles taken on the logit (Elo) scale, as Arena takes them on Elo, then shown as win rates.
- Style control: the same battles with four style features of both answers (length, headers,
  list items, bold: stats/style_votes.py's `style_features`), each as (a - b) / (a + b + 1) and
  standardised, fitted with the models by Arena's `fit_bt` (sklearn's default L2 penalty, C = 1,
  on its design with log(10) per model column), shown as the win rate against the baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from stats.logistic import fit_logistic

MULTIPLIER = 3
ROUNDS = 100
FEATURES = ("length", "headers", "list_items", "bold")
_LOGIT_CLIP = 1e-12


@dataclass(frozen=True)
class Battle:
    """One judgment as Arena counts it: the baseline against `model`."""

    model: str
    winner: str  # "model", "baseline" or "tie"
    weight: int  # copies: MULTIPLIER for a significant win, else 1
    item: object = None  # whose answers the style features are of


def battle_of(*, model: str, outcome: str, strength: int, item: object = None) -> Battle | None:
    """A judgment's battle: `outcome` is the candidate's ("win", "lose", "tie"), `strength` 2 for
    a significant verdict. None for anything else (a parse failure is no battle)."""
    winner = {"win": "model", "lose": "baseline", "tie": "tie"}.get(outcome)
    if winner is None:
        return None
    weight = MULTIPLIER if strength >= 2 and winner != "tie" else 1
    return Battle(model=model, winner=winner, weight=weight, item=item)


def _expanded(battles: Iterable[Battle]) -> list[Battle]:
    return [battle for battle in battles for _copy in range(battle.weight)]


def _win_rate(rows: list[Battle]) -> float | None:
    if not rows:
        return None
    won = sum(1.0 if row.winner == "model" else 0.5 if row.winner == "tie" else 0.0 for row in rows)
    return won / len(rows)


def _logit(p: float) -> float:
    p = min(max(p, _LOGIT_CLIP), 1 - _LOGIT_CLIP)
    return math.log(p / (1 - p))


def _percentiles(shares: list[float]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of bootstrap win shares, taken on the logit scale."""
    logits = np.array([_logit(share) for share in shares])
    low, high = np.percentile(logits, [2.5, 97.5])
    return float(expit(low)), float(expit(high))


@dataclass(frozen=True)
class ArenaRow:
    model: str
    score: float  # win rate against the baseline, percent
    lower: float
    upper: float
    avg_length: float | None
    battles: int  # battles counted (weighted copies included)
    style_score: float | None = None
    style_lower: float | None = None
    style_upper: float | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def arena_scores(
    battles: list[Battle], *, baseline: str, rounds: int = ROUNDS, seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """{model: (score, lower, upper)} in percent, the baseline at 50."""
    rows = _expanded(battles)
    rng = np.random.default_rng(seed)
    by_model: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_model.setdefault(row.model, []).append(index)
    draws = [rng.integers(0, len(rows), len(rows)) for _round in range(rounds)] if rows else []
    result = {baseline: (50.0, 50.0, 50.0)}
    for model, indices in by_model.items():
        share = _win_rate([rows[i] for i in indices])
        assert share is not None
        members = set(indices)
        shares = []
        for draw in draws:
            picked = [rows[i] for i in draw if i in members]
            value = _win_rate(picked)
            if value is not None:
                shares.append(value)
        low, high = _percentiles(shares) if shares else (share, share)
        result[model] = (100 * share, 100 * low, 100 * high)
    return result


def _style_design(
    rows: list[Battle], features: Mapping[tuple[str, object], Mapping[str, float]], baseline: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    models = [baseline, *sorted({row.model for row in rows} - {baseline})]
    index = {model: position for position, model in enumerate(models)}
    n, p, k = len(rows), len(models), len(FEATURES)
    design = np.zeros((n, p + k))
    design[np.arange(n), index[baseline]] = math.log(10)
    design[np.arange(n), [index[row.model] for row in rows]] = -math.log(10)
    a = np.array([[features[(baseline, row.item)][name] for name in FEATURES] for row in rows], dtype=float)
    b = np.array([[features[(row.model, row.item)][name] for name in FEATURES] for row in rows], dtype=float)
    ratio = (a - b) / (a + b + 1.0)
    std = ratio.std(axis=0)
    design[:, p:] = (ratio - ratio.mean(axis=0)) / np.where(std > 0, std, 1.0)
    # Arena's Y is "model_a won" (the baseline); a tie is half of each.
    outcome = np.array([1.0 if row.winner == "baseline" else 0.5 if row.winner == "tie" else 0.0 for row in rows])
    return design, outcome, models


def style_controlled(
    battles: list[Battle],
    features: Mapping[tuple[str, object], Mapping[str, float]],
    *,
    baseline: str,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> dict[str, tuple[float, float, float]]:
    """{model: (score, lower, upper)} in percent with the style features controlled for."""
    rows = _expanded(battles)
    if not rows:
        return {}

    def fit(chosen: list[Battle]) -> dict[str, float]:
        design, outcome, models = _style_design(chosen, features, baseline)
        # Arena writes every battle twice (a tie once each way) and sklearn's default L2 penalty
        # (C = 1) is on every coefficient: weights of 2 and a unit penalty are the same objective.
        fitted = fit_logistic(design, outcome, weights=np.full(len(outcome), 2.0), penalty=np.ones(design.shape[1]))
        coef = fitted.coef[: len(models)] * math.log(10)
        return {model: float(expit(coef[i] - coef[0])) for i, model in enumerate(models)}

    point = fit(rows)
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {model: [] for model in point}
    for _round in range(rounds):
        drawn = [rows[i] for i in rng.integers(0, len(rows), len(rows))]
        for model, share in fit(drawn).items():
            if model in samples:
                samples[model].append(share)
    result = {}
    for model, share in point.items():
        low, high = _percentiles(samples[model]) if samples[model] else (share, share)
        result[model] = (100 * share, 100 * low, 100 * high)
    return result


def arena_leaderboard(
    battles: list[Battle],
    *,
    baseline: str,
    lengths: Mapping[str, float | None],
    features: Mapping[tuple[str, object], Mapping[str, float]] | None = None,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> list[ArenaRow]:
    """The leaderboard's rows, best score first: score, interval, average length, and the
    style-controlled score where `features` are given."""
    scores = arena_scores(battles, baseline=baseline, rounds=rounds, seed=seed)
    styled = style_controlled(battles, features, baseline=baseline, rounds=rounds, seed=seed) if features else {}
    counts: dict[str, int] = {}
    for battle in battles:
        counts[battle.model] = counts.get(battle.model, 0) + battle.weight
    rows = []
    for model, (score, lower, upper) in scores.items():
        style = styled.get(model)
        rows.append(
            ArenaRow(
                model=model,
                score=score,
                lower=lower,
                upper=upper,
                avg_length=lengths.get(model),
                battles=counts.get(model, 0),
                style_score=style[0] if style else None,
                style_lower=style[1] if style else None,
                style_upper=style[2] if style else None,
            )
        )
    rows.sort(key=lambda row: (-row.score, row.model))
    return rows


def average_length(texts: Iterable[str], length: Callable[[str], int]) -> float | None:
    values = [length(text) for text in texts]
    return sum(values) / len(values) if values else None
