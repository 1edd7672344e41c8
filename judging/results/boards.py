"""A run's leaderboard from its judgments, in the papers' layouts: pointwise tables with
bootstrap intervals, pairwise win rates with the length-controlled ones, and the dataset's
cross-validation matrix. Loads the statistics (numpy; scipy for the length-controlled fit, on
first use): the cheap reads of runs are judging/results/selectors.py."""

from __future__ import annotations

from typing import Any

from curation.models import Dataset
from judging.benchmarks.registry import benchmark_for_source, benchmark_of_template_set, benchmarks
from judging.models import JudgeMode, JudgeRun, Judgment
from judging.results.leaderboard import (
    CrossScore,
    PairOutcome,
    Score,
    attach_length_control,
    combine_orders,
    criteria_table,
    cross_validation,
    fold_api_intent,
    intent_language_tables,
    pairwise_table,
    pointwise_table,
)
from judging.results.selectors import GROUPS, answer_lengths, judgment_rows
from stats import sample_size


def run_pointwise_scores(*, run: JudgeRun) -> list[Score]:
    """Every replied judgment of a pointwise run as a Score with its groups and criteria."""
    return [
        Score(
            model=row["model__name"],
            final=row["final_score"],
            groups={
                "intent": row["item__intent"],
                "language": row["item__language"],
                "category": row["item__category"],
                "country": row["item__country"] or row["item__source_case__submission__country"] or "",
            },
            criteria={k: v for k, v in (row["scores"] or {}).items() if isinstance(v, int)},
        )
        for row in judgment_rows(run=run)
    ]


def run_pair_outcomes(*, run: JudgeRun) -> list[PairOutcome]:
    """One outcome per candidate and item; with both orders judged, disagreement is a tie."""
    grouped: dict[tuple[str, int], list[str]] = {}
    for row in judgment_rows(run=run):
        grouped.setdefault((row["model__name"], row["item_id"]), []).append(row["outcome"] or "error")
    return [PairOutcome(model, combine_orders(outcomes)) for (model, _item), outcomes in grouped.items()]


def run_leaderboard(
    *, run: JudgeRun, by: tuple[str, ...] = GROUPS, fold_api: bool = True, failures_as_minus_one: bool = False
) -> dict:
    """Everything the leaderboard page, command, API and export show for one run, in the papers' layouts.

    `fold_api`: count API questions under Solve Professional Problem, as the URS tables do
    (False shows API as its own intent). `failures_as_minus_one`: AlignBench's table averages
    parse failures as -1, as its own tooling does (off: they are left out); the table says which."""
    if run.mode == JudgeMode.PAIRWISE:
        rows = pairwise_table(
            run_pair_outcomes(run=run),
            lengths=answer_lengths(run=run),
            reference=run.reference_model.name if run.reference_model is not None else None,
        )
        # Each candidate's wins and losses against the reference: below MIN_DECISIVE no win rate
        # can be told from 50 %, so ranks over them are marked not meaningful.
        verdict = sample_size.ranks_verdict({row["model"]: row["decisive"] for row in rows if not row["reference"]})
        for row in rows:
            row["rank_meaningful"] = verdict["meaningful"]
        # The fit pulls in scipy (~0.5 s): loaded for a pairwise leaderboard only, not by every
        # page, export or worker that reads a pointwise one.
        from judging.results.length_controlled import run_length_controlled

        rows = attach_length_control(rows, run_length_controlled(run=run))
        board: dict[str, Any] = {"mode": run.mode, "pairwise": rows, "ranks": verdict}
        # A benchmark that counts its own way (Arena-Hard: each order a battle) adds its table.
        for name in {template.name.split("/", 1)[0] for template in run.templates.all()}:
            benchmark = benchmark_of_template_set(name)
            if benchmark is not None and benchmark.pairwise_board is not None:
                board[f"{benchmark.name}_table"] = benchmark.pairwise_board(run)
        return board
    scores = run_pointwise_scores(run=run)
    if fold_api:
        scores = fold_api_intent(scores)
    tables = {"overall": pointwise_table(scores, by=None, seed=run.seed)}
    for group in by:
        if any(s.groups.get(group) for s in scores):
            tables[group] = pointwise_table(scores, by=group, seed=run.seed)
    result: dict[str, Any] = {"mode": run.mode, "tables": tables, "criteria": criteria_table(scores)}
    if "intent" in tables and "language" in tables:
        result["intent_language"] = intent_language_tables(scores, seed=run.seed)
    benchmark = benchmark_for_source(run.dataset.source)
    if benchmark is not None and benchmark.summary is not None and benchmark.summary.group in tables:
        # The benchmark's own table (AlignBench's 总分...), kept whole and per model under its name.
        table = benchmark.summary.compute(scores, failures_as_minus_one=failures_as_minus_one)
        result[f"{benchmark.name}_table"] = table
        result[benchmark.name] = {
            row["model"]: {key: row["values"][key] for key in benchmark.summary.columns} for row in table["rows"]
        }
    return result


def leaderboard_rows(
    *, run: JudgeRun, by: tuple[str, ...] = GROUPS, fold_api: bool = True, failures_as_minus_one: bool = False
) -> list[dict]:
    """The leaderboard flattened to one dict per model and column, for CSV, JSON and exports.

    Intent x language cells (URS Tables 13-14) come as group "intent_language", columns
    "<intent>/<language>" and "<part>/<language>" (objective or subjective intents)."""
    board = run_leaderboard(run=run, by=by, fold_api=fold_api, failures_as_minus_one=failures_as_minus_one)
    return leaderboard_flatten(run=run, board=board, failures_as_minus_one=failures_as_minus_one)


def leaderboard_flatten(*, run: JudgeRun, board: dict, failures_as_minus_one: bool = False) -> list[dict]:
    """`run_leaderboard`'s result as one dict per model and column (the stored figures keep
    the board and flatten it when asked)."""
    if board["mode"] == JudgeMode.PAIRWISE:
        flat = [{"run": run.pk, **row} for row in board["pairwise"]]
        for name in benchmarks():
            flat += _benchmark_rows(run, name, board.get(f"{name}_table"))
        return flat
    rows = []
    for group, table in board["tables"].items():
        for row in table["rows"]:
            cells = {"overall": row["overall"]} if group == "overall" else row["cells"]
            for column, cell in cells.items():
                rows.append({"run": run.pk, "group": group, "column": column, "model": row["model"], **cell.as_dict()})
    for part in board.get("intent_language", []):
        for row in part["rows"]:
            cells = {**row["cells"], **{f"{part['part']}/{lang}": cell for lang, cell in row["languages"].items()}}
            for column, cell in cells.items():
                rows.append(
                    {
                        "run": run.pk,
                        "group": "intent_language",
                        "column": column,
                        "model": row["model"],
                        **cell.as_dict(),
                    }
                )
    for name, benchmark in benchmarks().items():
        if benchmark.summary is None:
            continue
        # The group names how parse failures were counted, so a CSV never hides it.
        summary_group = f"{name} (failures as -1)" if failures_as_minus_one else name
        for model, aggregates in board.get(name, {}).items():
            for column, mean in aggregates.items():
                rows.append(
                    {
                        "run": run.pk,
                        "group": summary_group,
                        "column": column,
                        "model": model,
                        "mean": mean,
                        "low": None,
                        "high": None,
                        "count": None,
                        "failures": None,
                        "rank": None,
                    }
                )
    return rows


def _benchmark_rows(run: JudgeRun, name: str, table: dict | None) -> list[dict]:
    """A benchmark's own pairwise table (Arena-Hard's) as leaderboard rows: group = the benchmark,
    column "score" or "style control", mean and interval in percent, count = battles."""
    if not table:
        return []
    rows = []
    for row in table["rows"]:
        for column, prefix in (("score", ""), ("style control", "style_")):
            if row.get(f"{prefix}score") is None:
                continue
            rows.append(
                {
                    "run": run.pk,
                    "group": name,
                    "column": column,
                    "model": row["model"],
                    "mean": row[f"{prefix}score"],
                    "low": row[f"{prefix}lower"],
                    "high": row[f"{prefix}upper"],
                    "count": row["battles"],
                    "length": row["avg_length"],
                    "reference": row["model"] == table.get("baseline"),
                    "note": f"length in {table.get('length_unit', 'characters')}",
                }
            )
    return rows


def dataset_cross_validation(*, dataset: Dataset) -> dict:
    """Evaluator x reference-source matrix and rating bias over the dataset's pointwise runs."""
    rows = (
        Judgment.objects.replied()
        .filter(run__dataset=dataset, run__mode=JudgeMode.POINTWISE, final_score__isnull=False, model__is_probe=False)
        .values_list("run__judge_model", "run__reference_model__name", "model__name", "final_score")
    )
    return cross_validation(
        CrossScore(evaluator=judge, source=source or "dataset reference", model=model, final=score)
        for judge, source, model, score in rows
    )
