"""A judge run's stored figures: its leaderboard (bootstrap intervals included), the rows the
API and export give, the dataset's cross-validation matrix, the judge's diagnostics, the
injection probe's report and a re-run's drift. `run_figures_task` computes them when the run
closes or is parsed again, when human votes on its dataset change, or when a page finds newer
judgments; the run page, the API and the leaderboard export read them (core/figures.py says
why)."""

from __future__ import annotations

from django.utils import timezone

from core.figures import enqueue_later, freshness, json_safe, refresh_claim
from judging.models import JudgeMode, JudgeRun, RunFigures
from judging.results.human_votes import human_votes_marker
from judging.results.selectors import (
    GROUPS,
    dataset_cross_validation,
    flagged_judgments,
    leaderboard_flatten,
    run_judgments,
    run_leaderboard,
)
from judging.runs.manifest import run_manifest

INPUT_FIELDS = ("status", "total", "replied", "parse_failures", "call_failures", "cut_off")
# Failures and flagged answers listed on the run page (the export has them all).
LISTED = 50
# Rounds of the drift bootstraps shown on a re-run's page (`compare` takes any number).
DRIFT_PAGE_ROUNDS = 200


def run_figures_inputs(run: JudgeRun) -> dict:
    """What the figures are computed from: the run's row (its running counts) and, for the
    diagnostics, a marker of the human votes on its dataset. Two cheap queries however many
    judgments and votes there are."""
    row = JudgeRun.objects.filter(pk=run.pk).values(*INPUT_FIELDS, "dataset_id").get()
    inputs = {key: row[key] for key in INPUT_FIELDS}
    inputs["human_votes"] = human_votes_marker(dataset=row["dataset_id"])
    return inputs


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
    if run.rerun_of_id is not None and run.rerun_of.mode == run.mode:
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
                "raw_text": j.raw_text[:400],
            }
            for j in run_judgments(run=run, failures_only=True)[:LISTED]
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


def run_figures_schedule(*, run: JudgeRun) -> bool:
    """Ask for the run's figures to be computed again soon (debounced; at once when they never
    were); True if a task was queued."""
    from judging.tasks import run_figures_task

    figures, _ = RunFigures.objects.get_or_create(run_id=run.pk)
    if refresh_claim(RunFigures.objects.filter(pk=figures.pk)):
        enqueue_later(run_figures_task, run.pk, at_once=figures.computed_at is None)
        return True
    return False


def run_figures_read(*, run: JudgeRun, compute: str = "never") -> tuple[dict | None, dict]:
    """The stored figures and their freshness ({"computed_at", "stale", "missing"}).

    Stale or missing figures are scheduled for a background refresh. `compute`: "never" (the
    page shows what is stored), "missing" (the API: figures never computed are computed now),
    "stale" (the exports: what is returned matches the judgments as they are now)."""
    figures = RunFigures.objects.filter(run_id=run.pk).first()
    current = run_figures_inputs(run)
    missing = figures is None or figures.computed_at is None
    if (compute == "missing" and missing) or (compute == "stale" and (missing or figures.inputs != current)):
        figures = run_figures_refresh(run_id=run.pk)
    state = freshness(
        stored_inputs=figures.inputs if figures and figures.computed_at else None,
        current_inputs=current,
        computed_at=figures.computed_at if figures else None,
    )
    if state["stale"] and run_figures_schedule(run=run):
        # A backend that runs a task as it is queued (tests, a demo without a worker) has just
        # computed them: show what it stored rather than what was there before.
        figures = RunFigures.objects.filter(run_id=run.pk).first()
        if figures is not None and figures.computed_at is not None:
            state = freshness(stored_inputs=figures.inputs, current_inputs=current, computed_at=figures.computed_at)
    return (figures.payload if figures and figures.computed_at else None), state
