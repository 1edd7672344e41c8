"""Leaderboard statistics from plain values. Pure: numpy only, no Django.

Pointwise (URS Table 4, AlignBench): means of final scores per model, overall and per group
(intent, language, country, category), per criterion, with counts, parse failures and
bootstrap 95 % intervals; the best three of every column are marked; known columns come in
the paper's order. URS folds API into Solve Problem (Table 4; `fold_api_intent`) and splits
intents by language (Tables 13-14; `intent_language_tables`). AlignBench's table
(`alignbench_table`): 中文推理 = mean(数学计算, 逻辑推理), 中文语言 = mean of the other six,
总分 = mean of the two; parse failures are left out, or averaged as -1 the way AlignBench's
show_result.py does. Pairwise (ChineseAlpacaEval): win, lose, tie and error rates with standard
errors and average answer length, ranked by win rate then lower lose rate, the reference
model at 50 %. Cross-validation (URS 4.4, D.4): evaluator x reference-source means and the
rating bias of Equation 1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats.intervals import zero_width_note
from stats.ranking import competition_ranks

BOOTSTRAP_ROUNDS = 1000
# The best three of a column are marked; equal means share a mark.
BEST_MARKED = 3
# Means of integer scores that differ by less than this are equal (float summation noise).
MEAN_TOLERANCE = 1e-9
ONE_SCORE_NOTE = "a single score: there is nothing to resample, so the interval has no width; that is not certainty"
SAME_SCORES_NOTE = (
    "every score is the same: the interval has no width; that is not certainty, only few or uniform scores"
)
REASONING_CATEGORIES = ("数学计算", "逻辑推理")
LANGUAGE_CATEGORIES = ("基本任务", "中文理解", "综合问答", "文本写作", "角色扮演", "专业能力")
REASONING, LANGUAGE, TOTAL = "中文推理", "中文语言", "总分"
# AlignBench's results table, left to right.
ALIGNBENCH_COLUMNS = (TOTAL, REASONING, *REASONING_CATEGORIES, LANGUAGE, *LANGUAGE_CATEGORIES)
FAILURES_EXCLUDED = "parse failures left out of the means"
FAILURES_AS_MINUS_ONE = "parse failures averaged as -1, as AlignBench's show_result.py does"

API, SOLVE_PROBLEM = "api", "solve_professional_problem"
# URS Table 4, left to right (API, when shown apart, after the paper's six, as the URS README has it).
URS_INTENT_ORDER = (
    SOLVE_PROBLEM,
    "factual_qa",
    "text_assistant",
    "ask_for_advice",
    "seek_creativity",
    "leisure",
    API,
    "other",
)
# The column heads of URS Table 4, the names the paper gives the intents.
URS_INTENT_LABELS = {
    SOLVE_PROBLEM: "Solve Problem",
    "factual_qa": "Factual QA",
    "text_assistant": "Text Assistant",
    "ask_for_advice": "Ask for Advice",
    "seek_creativity": "Seek Creativity",
    "leisure": "Leisure",
    API: "API",
}
# URS Tables 13 and 14: the objective intents, then the subjective ones, each split by language,
# each table with its own per-language means over its intents.
URS_BILINGUAL_PARTS = (
    ("objective", ("factual_qa", SOLVE_PROBLEM, "text_assistant", API)),
    ("subjective", ("ask_for_advice", "seek_creativity", "leisure")),
)
LANGUAGES = ("en", "zh")
_KNOWN_ORDER = {
    name: index
    for index, name in enumerate((*URS_INTENT_ORDER, *REASONING_CATEGORIES, *LANGUAGE_CATEGORIES, *LANGUAGES))
}


@dataclass(frozen=True)
class Score:
    """One pointwise judgment: the model, its groups, the final score (None = parse failure)."""

    model: str
    final: int | None
    groups: dict[str, str] = field(default_factory=dict)
    criteria: dict[str, int] = field(default_factory=dict)


@dataclass
class Cell:
    mean: float | None
    low: float | None
    high: float | None
    count: int
    failures: int
    rank: int | None = None  # competition rank in the column: equal means share one
    note: str | None = None  # why the interval has no width, when it has none

    @property
    def best(self) -> int | None:
        """1-3 for the best three of the column (ties share a mark), else None."""
        return self.rank if self.rank is not None and self.rank <= BEST_MARKED else None

    def as_dict(self) -> dict:
        return {
            "mean": self.mean,
            "low": self.low,
            "high": self.high,
            "count": self.count,
            "failures": self.failures,
            "rank": self.rank,
            "note": self.note,
        }


def bootstrap_interval(
    values: Sequence[float], *, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> tuple[float, float]:
    """Percentile 95 % interval of the mean by resampling the values with replacement."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    if data.size == 1:
        return (float(data[0]), float(data[0]))
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(rounds, data.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def _cell(values: list[int], failures: int, seed: int) -> Cell:
    if not values:
        return Cell(None, None, None, 0, failures)
    low, high = bootstrap_interval(values, seed=seed)
    note = zero_width_note(low, high, note=ONE_SCORE_NOTE if len(values) == 1 else SAME_SCORES_NOTE)
    return Cell(float(np.mean(values)), low, high, len(values), failures, note=note)


def _column_order(column: str) -> tuple:
    """The paper's order for the columns it prints; anything else after them, alphabetically."""
    return (0, _KNOWN_ORDER[column], "") if column in _KNOWN_ORDER else (1, 0, column)


def fold_api_intent(scores: Iterable[Score]) -> list[Score]:
    """API questions counted under Solve Professional Problem, as every URS table does."""
    return [
        Score(s.model, s.final, {**s.groups, "intent": SOLVE_PROBLEM}, s.criteria)
        if s.groups.get("intent") == API
        else s
        for s in scores
    ]


def _mark_best(columns: dict[str, dict[str, Cell]]) -> None:
    """Competition ranks per column: equal means share a rank, and the next one skips."""
    for cells in columns.values():
        models = list(cells)
        ranks = competition_ranks([cells[model].mean for model in models], tolerance=MEAN_TOLERANCE)
        for model, rank in zip(models, ranks, strict=True):
            cells[model].rank = rank


def pointwise_table(scores: Iterable[Score], *, by: str | None = None, seed: int = 0) -> dict:
    """Rows per model: the overall cell and one cell per value of group `by` (None: overall only).

    Returns {"columns": [...], "rows": [{"model", "overall", "cells": {column: Cell}}]},
    rows sorted by overall mean, best first."""
    by_model_all: dict[str, list[int]] = defaultdict(list)
    fails_all: dict[str, int] = defaultdict(int)
    by_group: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    fails_group: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for score in scores:
        group = score.groups.get(by, "") if by else ""
        if score.final is None:
            fails_all[score.model] += 1
            if by:
                fails_group[group][score.model] += 1
            continue
        by_model_all[score.model].append(score.final)
        if by:
            by_group[group][score.model].append(score.final)
    models = sorted(set(by_model_all) | set(fails_all))
    columns = sorted(set(by_group) | set(fails_group), key=_column_order) if by else []
    table: dict[str, dict[str, Cell]] = {"overall": {m: _cell(by_model_all[m], fails_all[m], seed) for m in models}}
    for column in columns:
        table[column] = {m: _cell(by_group[column][m], fails_group[column][m], seed) for m in models}
    _mark_best(table)
    rows: list[dict[str, Any]] = [
        {"model": m, "overall": table["overall"][m], "cells": {c: table[c][m] for c in columns}} for m in models
    ]
    rows.sort(key=lambda row: (-(row["overall"].mean if row["overall"].mean is not None else -1), row["model"]))
    return {"columns": columns, "rows": rows}


def criteria_table(scores: Iterable[Score]) -> dict:
    """Mean score per model and criterion, with counts: {"criteria": [...], "rows": [{model, means, counts}]}."""
    sums: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for score in scores:
        for name, value in score.criteria.items():
            sums[score.model][name].append(value)
    names = sorted({name for per in sums.values() for name in per})
    rows = [
        {
            "model": model,
            "means": {n: (float(np.mean(v)) if (v := per.get(n)) else None) for n in names},
            "counts": {n: len(per.get(n, [])) for n in names},
        }
        for model, per in sorted(sums.items())
    ]
    return {"criteria": names, "rows": rows}


def intent_language_tables(scores: Iterable[Score], *, seed: int = 0) -> list[dict]:
    """URS Tables 13-14: per model, each intent's mean in English and in Chinese, and the part's
    per-language means over all its questions; rows by the English mean, best first.

    Returns one dict per part: {"part", "intents", "languages", "rows": [{"model", "cells":
    {"<intent>/<language>": Cell}, "languages": {language: Cell}}]}. Intents without any
    judgment (API once folded) are left out; parse failures are counted, never averaged."""
    scores = list(scores)
    present = {s.groups.get("intent", "") for s in scores}
    models = sorted({s.model for s in scores})
    parts = []
    for part, part_intents in URS_BILINGUAL_PARTS:
        intents = [intent for intent in part_intents if intent in present]
        if not intents:
            continue
        values: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        failures: dict[tuple[str, str, str], int] = defaultdict(int)
        for s in scores:
            intent, language = s.groups.get("intent", ""), s.groups.get("language", "")
            if intent not in intents or language not in LANGUAGES:
                continue
            for key in ((s.model, intent, language), (s.model, "", language)):
                if s.final is None:
                    failures[key] += 1
                else:
                    values[key].append(s.final)
        rows = [
            {
                "model": model,
                "cells": {
                    f"{i}/{lang}": _cell(values[(model, i, lang)], failures[(model, i, lang)], seed)
                    for i in intents
                    for lang in LANGUAGES
                },
                "languages": {
                    lang: _cell(values[(model, "", lang)], failures[(model, "", lang)], seed) for lang in LANGUAGES
                },
            }
            for model in models
        ]
        english = lambda row: row["languages"]["en"].mean  # noqa: E731
        rows.sort(key=lambda row: (english(row) is None, -(english(row) or 0.0), row["model"]))
        parts.append({"part": part, "intents": intents, "languages": list(LANGUAGES), "rows": rows})
    return parts


def alignbench_aggregates(category_means: dict[str, float | None]) -> dict[str, float | None]:
    """AlignBench's reasoning, language and total scores from per-category means (SPEC 3.3)."""

    def mean_of(names: tuple[str, ...]) -> float | None:
        values = [mean for n in names if (mean := category_means.get(n)) is not None]
        return float(np.mean(values)) if values else None

    reasoning = mean_of(REASONING_CATEGORIES)
    language = mean_of(LANGUAGE_CATEGORIES)
    total = float(np.mean([reasoning, language])) if reasoning is not None and language is not None else None
    return {REASONING: reasoning, LANGUAGE: language, TOTAL: total}


def alignbench_table(scores: Iterable[Score], *, failures_as_minus_one: bool = False) -> dict:
    """AlignBench's results table: per model 总分, 中文推理 (数学计算, 逻辑推理), 中文语言 (six
    categories), best 总分 first.

    A parse failure is left out of the means, or, with `failures_as_minus_one`, averaged in as
    -1, which is what AlignBench's own tooling does (judge.py scores an unparsable reply -1 and
    show_result.py averages every score). The label says which."""
    values: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    failures: dict[str, int] = defaultdict(int)
    for s in scores:
        category = s.groups.get("category", "")
        if s.final is None:
            failures[s.model] += 1
            if not failures_as_minus_one:
                continue
        values[s.model][category].append(-1 if s.final is None else s.final)
    rows: list[dict[str, Any]] = []
    for model in sorted(set(values) | set(failures)):
        means = {
            c: (float(np.mean(v)) if (v := values[model].get(c)) else None)
            for c in (*REASONING_CATEGORIES, *LANGUAGE_CATEGORIES)
        }
        aggregates = alignbench_aggregates(means)
        rows.append(
            {
                "model": model,
                "values": {c: {**means, **aggregates}[c] for c in ALIGNBENCH_COLUMNS},
                "failures": failures[model],
            }
        )
    rows.sort(key=lambda row: (row["values"][TOTAL] is None, -(row["values"][TOTAL] or 0.0), row["model"]))
    return {
        "columns": list(ALIGNBENCH_COLUMNS),
        "failures_as_minus_one": failures_as_minus_one,
        "label": FAILURES_AS_MINUS_ONE if failures_as_minus_one else FAILURES_EXCLUDED,
        "rows": rows,
    }


@dataclass(frozen=True)
class PairOutcome:
    """One candidate's result on one item against the reference: win, lose, tie or error."""

    model: str
    outcome: str


def combine_orders(outcomes: Sequence[str]) -> str:
    """Both orders judged: an error in either is an error; disagreement is a tie."""
    if not outcomes:
        return "error"
    if "error" in outcomes:
        return "error"
    return outcomes[0] if len(set(outcomes)) == 1 else "tie"


def pairwise_table(outcomes: Iterable[PairOutcome], *, lengths: dict[str, float], reference: str | None) -> list[dict]:
    """Win/lose/tie/error rates with standard errors, ranked by win rate then lower lose rate.

    Ties count half a win (AlpacaEval's convention). The reference model is listed at 50 %.
    Rows with equal win and lose rates share a rank (competition ranking); `decisive` counts
    each candidate's wins and losses (None for the reference). A model whose every judgment is
    an error gets no rank: it is listed last."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"win": 0, "lose": 0, "tie": 0, "error": 0})
    for item in outcomes:
        counts[item.model][item.outcome] += 1
    rows: list[dict[str, Any]] = []
    for model, c in counts.items():
        n = sum(c.values())
        wins = (c["win"] + 0.5 * c["tie"]) / n
        per_item = [1.0] * c["win"] + [0.5] * c["tie"] + [0.0] * (c["lose"] + c["error"])
        se = float(np.std(per_item, ddof=1) / math.sqrt(n)) if n > 1 else None
        rows.append(
            {
                "model": model,
                "items": n,
                "decisive": c["win"] + c["lose"],
                "win_rate": wins,
                "lose_rate": c["lose"] / n,
                "tie_rate": c["tie"] / n,
                "error_rate": c["error"] / n,
                "win_rate_se": se,
                "length": lengths.get(model),
                "reference": False,
            }
        )
    if reference is not None:
        rows.append(
            {
                "model": reference,
                "items": None,
                "decisive": None,
                "win_rate": 0.5,
                "lose_rate": 0.5,
                "tie_rate": 0.0,
                "error_rate": 0.0,
                "win_rate_se": None,
                "length": lengths.get(reference),
                "reference": True,
            }
        )
    # A model without a single valid verdict (every judgment an error) is listed, last, unranked.
    unranked = {model for model, c in counts.items() if not (c["win"] + c["lose"] + c["tie"])}
    rows.sort(key=lambda r: (r["model"] in unranked, -r["win_rate"], r["lose_rate"], r["model"]))
    # Equal win and lose rates share a rank ("1, 1, 3"): three models tied at 50 % are all
    # first, never 1, 2 and 3 by the alphabet.
    previous: dict[str, Any] | None = None
    for place, row in enumerate(rows, 1):
        if row["model"] in unranked:
            row["rank"] = None
            continue
        same = previous is not None and (previous["win_rate"], previous["lose_rate"]) == (
            row["win_rate"],
            row["lose_rate"],
        )
        row["rank"] = previous["rank"] if previous is not None and same else place
        previous = row
    return rows


LC_FIELDS = ("lc_win_rate", "lc_low", "lc_high", "lc_note")
# One basis per row: the length-controlled fit counts a parse failure as a loss, as the win rate
# beside it does (ChineseAlpacaEval's rule), so that the two columns differ by length alone.
COMBINED_VALUE = {"win": 1.0, "tie": 0.5, "lose": 0.0, "error": 0.0}
# What both win rates of a pairwise row do with a parse failure (shown under the table).
FAILURES_BASIS = "loss"


def attach_length_control(rows: list[dict], controlled: Iterable[dict]) -> list[dict]:
    """Put each model's length-controlled win rate (stats.length_control) beside its win rate:
    lc_win_rate, lc_low, lc_high (delta-method 95 % interval) and lc_note (why it is missing).

    The table keeps its order: the LC win rate is shown, never used to rank. The reference model
    has 50 % by definition, without an interval."""
    by_model = {row["model"]: row for row in controlled}
    for row in rows:
        lc = by_model.get(row["model"], {})
        row["lc_win_rate"] = lc.get("lc")
        row["lc_low"] = lc.get("lc_low")
        row["lc_high"] = lc.get("lc_high")
        row["lc_note"] = lc.get("note")
        # Computed but below the items the rate needs (stats.estimability): shown greyed.
        row["lc_too_few"] = bool(lc.get("too_few")) and lc.get("lc") is not None
        row["failures_as"] = FAILURES_BASIS
    return rows


@dataclass(frozen=True)
class CrossScore:
    """A final score given by `evaluator` to `model` when `source` wrote the 8-point references."""

    evaluator: str
    source: str
    model: str
    final: int


def cross_validation(scores: Iterable[CrossScore]) -> dict:
    """The evaluator x reference-source matrix of mean scores, and each evaluator's rating bias.

    RatingBias(A) = mean over B of (mean score A gives B when B's own answer is the reference) - 8
    (URS Equation 1); only pairs where the candidate wrote the references count."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(list)
    own: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for s in scores:
        cells[(s.evaluator, s.source)].append(s.final)
        if s.model == s.source:
            own[s.evaluator][s.model].append(s.final)
    evaluators = sorted({e for e, _ in cells})
    sources = sorted({src for _, src in cells})
    matrix = {
        e: {src: (float(np.mean(cells[(e, src)])) if cells.get((e, src)) else None) for src in sources}
        for e in evaluators
    }
    bias = {
        e: (float(np.mean([np.mean(v) for v in own[e].values()])) - 8.0) if own.get(e) else None for e in evaluators
    }
    return {"evaluators": evaluators, "sources": sources, "matrix": matrix, "rating_bias": bias}
