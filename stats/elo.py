"""Arena's Elo scale for Bradley-Terry log-strengths: pure functions, no Django.

stats/ranking.py and stats/style.py give natural-log strengths t (P(i beats j) = 1 / (1 + e^(t_j - t_i))).
Chatbot Arena's readers expect Elo points, FastChat's conventions (rating_systems.py: scale 400,
base 10, initial rating 1000): P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400)), so

    R = rating + 400 / ln 10 * (t - t_anchor)

with t_anchor the anchor model's strength (that model then reads exactly `rating`) or, without an
anchor, the mean strength (the mean model reads 1000, as FastChat's unanchored fit, whose mean
stays at its starting 0). One natural-log unit is 400 / ln 10 = 173.72 Elo points.

Intervals move with the same offset as their score: with an anchor model, its interval keeps its
width and reads as the uncertainty of its strength relative to the mean. (FastChat re-anchors
every bootstrap round at the baseline model instead, which gives that model a zero-width interval
and widens the others by its uncertainty; both are honest, they answer different questions.)
"""

import math
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike

ELO_SCALE = 400.0
ELO_BASE = 10.0
ELO_INITIAL = 1000.0
POINTS_PER_UNIT = ELO_SCALE / math.log(ELO_BASE)


def to_elo(
    strengths: ArrayLike, *, anchor: int | None = None, rating: float = ELO_INITIAL, reference: ArrayLike | None = None
) -> np.ndarray:
    """Elo points of natural-log strengths: rating + 400 / ln 10 * (t - t_anchor).

    strengths: log-strengths (any shape; intervals' bounds too). anchor: index of the model that
    reads exactly `rating` (None: the mean of `reference` reads `rating`). reference: the point
    estimates that fix the offset (default `strengths` itself), so that a lower or upper bound is
    moved by its score's offset, not by its own mean.
    """
    values = np.asarray(strengths, dtype=float)
    base = values if reference is None else np.asarray(reference, dtype=float)
    offset = float(np.mean(base)) if anchor is None else float(base[anchor])
    return rating + POINTS_PER_UNIT * (values - offset)


def scores_on_elo_scale(scores: list, *, anchor: str | None = None, rating: float = ELO_INITIAL) -> list:
    """Copies of ModelScore / StyleScore rows with score, lower and upper in Elo points.

    anchor: a model's label that reads exactly `rating` (None: the mean score reads `rating`).
    Raises ValueError for an anchor that is not among the scores.
    """
    if not scores:
        return []
    labels = [score.label for score in scores]
    points = np.array([score.score for score in scores])
    if anchor is not None and anchor not in labels:
        raise ValueError(f"Anchor {anchor!r} is not among the ranked models.")
    position = None if anchor is None else labels.index(anchor)

    def moved(value: float | None) -> float | None:
        if value is None:
            return None
        return float(to_elo(value, anchor=position, rating=rating, reference=points))

    return [replace(s, score=moved(s.score), lower=moved(s.lower), upper=moved(s.upper)) for s in scores]


def elo_beside(scores: list[dict], *, anchor: str | None = None, rating: float = ELO_INITIAL) -> list[dict]:
    """Copies of score rows (dicts with "label", "score", "lower", "upper" in log-strengths) with
    "elo", "elo_lower" and "elo_upper" added beside them: the same figures in Arena's Elo points,
    `anchor` (a row's label) reading exactly `rating`, or the mean score reading `rating`.

    Raises ValueError for an anchor that is not among the rows."""
    if not scores:
        return []
    labels = [row["label"] for row in scores]
    if anchor is not None and anchor not in labels:
        raise ValueError(f"Anchor {anchor!r} is not among the ranked models.")
    points = np.array([row["score"] for row in scores], dtype=float)
    position = None if anchor is None else labels.index(anchor)

    def moved(value: float | None) -> float | None:
        if value is None:
            return None
        return float(to_elo(value, anchor=position, rating=rating, reference=points))

    return [
        {**row, "elo": moved(row["score"]), "elo_lower": moved(row["lower"]), "elo_upper": moved(row["upper"])}
        for row in scores
    ]


def bt_on_elo(bt: dict, *, anchor: str | None = None, rating: float = ELO_INITIAL) -> dict:
    """A BT report or result dict ("scores" rows as in `elo_beside`) with Arena's Elo points
    beside each log-strength, plus "elo_anchor" (the model reading exactly `rating`, None for the
    mean), "elo_rating" and "elo_points_per_unit" (400 / ln 10). Cheap, so stored figures are
    re-anchored where they are read. Raises ValueError for an anchor that is not a ranked model."""
    return {
        **bt,
        "scores": elo_beside(bt["scores"], anchor=anchor, rating=rating),
        "elo_anchor": anchor,
        "elo_rating": rating,
        "elo_points_per_unit": POINTS_PER_UNIT,
    }
