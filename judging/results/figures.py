"""A judge run's stored figures: its leaderboard (bootstrap intervals included), the rows the
API and export give, the dataset's cross-validation matrix, the judge's diagnostics, the
injection probe's report and a re-run's drift. `run_figures_task` computes them when the run
closes or is parsed again (queued by judging/dispatch.py, `run_figures_schedule`), when human votes on its dataset change, or when a page finds newer
judgments; the run page, the API and the leaderboard export read them (core/figures.py says
why)."""

from __future__ import annotations

from django.utils import timezone

from core.figures import json_safe, stored_figures_read, versioned_inputs
from judging.dispatch import run_figures_schedule
from judging.models import JudgeMode, JudgeRun, RunFigures
from judging.results.boards import dataset_cross_validation, leaderboard_flatten, run_leaderboard
from judging.results.human_votes import human_votes_marker
from judging.results.selectors import GROUPS, flagged_judgments, run_judgments
from judging.runs.manifest import run_manifest

INPUT_FIELDS = ("status", "total", "replied", "parse_failures", "call_failures", "cut_off")
# Failures and flagged answers listed on the run page (the export has them all).
LISTED = 50
# Rounds of the drift bootstraps shown on a re-run's page (`compare` takes any number).
DRIFT_PAGE_ROUNDS = 200


def run_figures_inputs(run: JudgeRun) -> dict:
    """What the figures are computed from: the run's row (its running counts), for the
    diagnostics a marker of the human votes on its dataset, and the version of the code that
    computes them (core/figures.py). Two cheap queries however many judgments and votes there are."""
    row = JudgeRun.objects.filter(pk=run.pk).values(*INPUT_FIELDS, "dataset_id").get()
    inputs = {key: row[key] for key in INPUT_FIELDS}
    inputs["human_votes"] = human_votes_marker(dataset=row["dataset_id"])
    return versioned_inputs(inputs)


def run_figures_refresh(*, run_id: int) -> RunFigures | None:
    """Compute and store the run's figures from its judgments now (None: the run is gone)."""
    # The diagnostics, the probe and the drift pull in scipy: loaded where figures are computed
    # (a worker, an export), not by every process that imports this module to read them.
    from judging.results.compare import runs_compare
    from judging.results.diagnostics import run_diagnostics
    from judging.results.probe_report import run_probe_report

    run = (
        JudgeRun.objects.select_related("dataset", "reference_model", "endpoint", "rerun_of").filter(pk=run_id).first()
    )
    if run is None:
        return None
    inputs = run_figures_inputs(run)  # read first: a judgment saved meanwhile makes them stale, not wrong
    board = run_leaderboard(run=run, by=GROUPS)
    drift = None
    if run.rerun_of is not None and run.rerun_of.mode == run.mode:
        drift = runs_compare(run_a=run.rerun_of, run_b=run, rounds=DRIFT_PAGE_ROUNDS)
    payload = {
        "board": json_safe(board),
        "rows": json_safe(leaderboard_flatten(run=run, board=board)),
        "cross": json_safe(dataset_cross_validation(dataset=run.dataset)) if run.mode == JudgeMode.POINTWISE else None,
        "diagnostics": json_safe(run_diagnostics(run=run)),
        "probe": json_safe(run_probe_report(run=run)),
        "drift": json_safe(drift),
        "manifest": json_safe(run_manifest(run=run)),
        "failures": [
            {
                "item": j.item.external_id,
                "model": j.model.name,
                "reason": j.call_error or j.parse_error,
                "raw_text": j.reply[:400],
            }
            # The reply is read only here: its cache row comes with the failures, not with every list.
            for j in run_judgments(run=run, failures_only=True).select_related("response")[:LISTED]
        ],
        "flagged": [
            {
                "item": j.item.external_id,
                "model": j.model.name,
                "flags": j.flags,
                "score": j.final_score if j.final_score is not None else (j.outcome or None),
            }
            for j in flagged_judgments(run=run)[:LISTED]
        ],
    }
    figures, _ = RunFigures.objects.update_or_create(
        run=run,
        defaults={"payload": payload, "inputs": inputs, "computed_at": timezone.now(), "refresh_queued_at": None},
    )
    return figures


def run_figures_read(*, run: JudgeRun, compute: str = "never") -> tuple[dict | None, dict]:
    """The run's stored figures and their freshness ({"computed_at", "stale", "missing"}),
    read the one way stored figures are read (core.figures.stored_figures_read, which says
    what `compute` asks for)."""
    return stored_figures_read(
        stored=RunFigures.objects.filter(run_id=run.pk).first(),
        current_inputs=run_figures_inputs(run),
        refresh=lambda: run_figures_refresh(run_id=run.pk),
        schedule=lambda _figures: run_figures_schedule(run=run),
        reload=lambda: RunFigures.objects.filter(run_id=run.pk).first(),
        compute=compute,
    )
