"""Stored figures of the human votes (core/figures.py says why): a campaign's results (BT with
bootstrap intervals, alignment with a judge run and agreement, annotator quality), its
style-controlled BT, its reliability-aware BT (annotation/reliability_report.py), an adaptive
campaign's pairing design (annotation/adaptive.py), and a
dataset's BT and agreement tables for the exports. `figures_task`
computes them; the results page, the API and the exports read them, and a read that finds
newer votes asks for them to be computed again (debounced)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import cast

from django.db import connection
from django.db.models import Count, Max
from django.utils import timezone

from annotation.design import design_compute
from annotation.models import Campaign, StoredFigures, Vote
from core.figures import (
    debounce,
    enqueue_later,
    json_safe,
    refresh_claim,
    refresh_delay,
    refresh_due_note,
    stored_figures_read,
    versioned_inputs,
)
from judging.models import JudgeRun

DEFAULT_ROUNDS = 1000
RUN_INPUTS = ("status", "replied", "parse_failures", "call_failures")
# A campaign's thresholds decide whose votes count (flagged annotators are left out).
CAMPAIGN_INPUTS = ("min_gold_accuracy", "min_seconds_per_item")


def figures_key(what: str, *, campaign=None, dataset=None, run=None, rounds: int, seed: int) -> str:
    """The key of the stored row of these figures: one row per scope and parameters."""
    scope = f"campaign:{campaign.pk}" if campaign is not None else f"dataset:{dataset.pk}"
    return f"{what}:{scope}:run={run.pk if run is not None else '-'}:rounds={rounds}:seed={seed}"


def figures_inputs(figures: StoredFigures) -> dict:
    """What the figures come from now: the count and newest id of the votes in scope (a vote
    added or taken back changes them), the judge run's counts, and the version of the code that
    computes them (core/figures.py). Two small queries."""
    votes = (
        Vote.objects.filter(campaign_id=figures.campaign_id)
        if figures.campaign_id
        # Figures not of a campaign are of a dataset.
        else (Vote.objects.filter(item__dataset_id=cast(int, figures.dataset_id)))
    )
    counted = votes.aggregate(n=Count("pk"), last=Max("pk"))
    inputs = {"votes": counted["n"], "last_vote": counted["last"]}
    if figures.campaign_id:
        row = Campaign.objects.filter(pk=figures.campaign_id).values(*CAMPAIGN_INPUTS).first() or {}
        inputs["campaign"] = {key: str(row.get(key)) for key in CAMPAIGN_INPUTS}
    if figures.run_id:
        row = JudgeRun.objects.filter(pk=figures.run_id).values(*RUN_INPUTS).first() or {}
        inputs["run"] = {key: row.get(key) for key in RUN_INPUTS}
    return versioned_inputs(inputs)


# What a figure that cannot be computed from these votes raises (a singular or ill-conditioned fit,
# a model with no finite score): caught per figure, so that one never fails the refresh of the others.
NOT_COMPUTABLE = (ValueError, ArithmeticError, RuntimeError)


def _not_computed(error: Exception) -> str:
    return f"not estimable: {error}"


def figures_compute(figures: StoredFigures) -> dict:
    """The figures themselves, from the votes as they are now. A figure that cannot be computed
    is stored with the reason instead ("report_reason" for the alignment of a campaign, "reason"
    with `estimable` False for the style fit); the others are computed all the same."""
    # The reports pull in scipy (~0.5 s): loaded where figures are computed, not by every
    # process that reads stored ones or notes a vote.
    from annotation.report import agreement_report, alignment_report, annotator_quality, bt_report

    # style_report fits a logistic model with scipy: the same reason.
    from annotation.style_report import style_bt_report, style_not_computed

    if figures.what == StoredFigures.What.CAMPAIGN:
        # Campaign and style figures always have their campaign.
        campaign = Campaign.objects.select_related("dataset").get(pk=cast(int, figures.campaign_id))
        run = JudgeRun.objects.filter(pk=figures.run_id).first() if figures.run_id else None
        report, reason = None, None
        if run is not None:
            try:
                report = alignment_report(
                    dataset=campaign.dataset, campaign=campaign, run=run, rounds=figures.rounds, seed=figures.seed
                )
            except NOT_COMPUTABLE as error:
                reason = _not_computed(error)
        bt = (
            report["bt"]
            if report is not None
            else bt_report(campaign=campaign, rounds=figures.rounds, seed=figures.seed)
        )
        return {"bt": bt, "report": report, "report_reason": reason, "quality": annotator_quality(campaign=campaign)}
    if figures.what == StoredFigures.What.DESIGN:
        return design_compute(Campaign.objects.select_related("dataset").get(pk=cast(int, figures.campaign_id)))
    if figures.what == StoredFigures.What.STYLE:
        campaign = Campaign.objects.get(pk=cast(int, figures.campaign_id))
        try:
            return style_bt_report(campaign=campaign, rounds=figures.rounds, seed=figures.seed)
        except NOT_COMPUTABLE as error:
            return style_not_computed(campaign=campaign, reason=_not_computed(error))
    if figures.what == StoredFigures.What.RELIABILITY:
        # The reliability fit brings scipy and its own reports, as the reports above.
        from annotation.reliability_report import reliability_report

        campaign = Campaign.objects.get(pk=cast(int, figures.campaign_id))
        plain = bt_report(campaign=campaign, rounds=0, seed=figures.seed)
        try:
            return reliability_report(campaign=campaign, rounds=figures.rounds, seed=figures.seed, plain=plain)
        except NOT_COMPUTABLE as error:
            return {"estimable": False, "reason": _not_computed(error), "votes": plain["votes"]}
    if figures.what == StoredFigures.What.BT:
        return bt_report(dataset=figures.dataset, rounds=figures.rounds, seed=figures.seed)
    run = JudgeRun.objects.filter(pk=figures.run_id).first() if figures.run_id else None
    return agreement_report(dataset=figures.dataset, run=run)


def figures_refresh(*, figures_id: int) -> StoredFigures | None:
    """Compute and store one row's figures now (None: the row, or what it was about, is gone)."""
    figures = StoredFigures.objects.select_related("dataset").filter(pk=figures_id).first()
    if figures is None:
        return None
    began = time.monotonic()
    inputs = figures_inputs(figures)  # read first: a vote cast meanwhile makes them stale, not wrong
    payload = json_safe(figures_compute(figures))
    StoredFigures.objects.filter(pk=figures.pk).update(
        payload=payload,
        inputs=inputs,
        computed_at=timezone.now(),
        refresh_queued_at=None,
        compute_seconds=time.monotonic() - began,
    )
    figures.refresh_from_db()
    return figures


def figures_refresh_queued(*, figures_id: int) -> StoredFigures | None:
    """What a queued refresh does: compute the row's figures, unless they were already computed
    from the inputs as they are now (a refresh asked for again while this one waited, a worker
    busy with a long run meanwhile: the first to run did the work, the others only say so)."""
    figures = StoredFigures.objects.filter(pk=figures_id).first()
    if figures is None:
        return None
    if figures.computed_at is not None and figures.inputs == figures_inputs(figures):
        StoredFigures.objects.filter(pk=figures.pk).update(refresh_queued_at=None)
        return figures
    # While it computes, no vote queues another refresh of the row: refresh_claim takes a refresh
    # asked for six debounce windows ago for one that never ran, and a computation that lasts
    # minutes (the reliability fit over a large campaign) was queued again and again, every
    # worker computing the same row. Marked as asked for until twice its last computation from
    # now, so a worker that dies mid-way leaves the row to be asked for again after that.
    StoredFigures.objects.filter(pk=figures.pk).update(
        refresh_queued_at=timezone.now() + timedelta(seconds=2 * figures.compute_seconds)
    )
    return figures_refresh(figures_id=figures_id)


def figures_schedule(figures: StoredFigures) -> bool:
    """Ask for a row's figures to be computed again soon (debounced; at once when they never
    were); True if a task was queued."""
    # The service <-> task loop of a queued app: annotation/tasks.py imports this module.
    from annotation.tasks import figures_task

    if refresh_claim(StoredFigures.objects.filter(pk=figures.pk)):
        _queue(figures_task, figures.pk, figures.computed_at, figures.compute_seconds)
        return True
    return False


def figures_votes_changed(*, campaign_id: int) -> int:
    """A campaign's votes changed (a vote cast or taken back): ask for every stored figures row
    they feed to be computed again (the campaign's results and style fit, its dataset's BT and
    agreement), debounced, so a burst of votes queues one refresh per row and the page is
    current when it is next opened. Rows never stored are left to the first read, which
    computes them at once. Returns how many refreshes were queued.

    Runs after every vote, so it is one statement: the rows without a refresh queued (or whose
    refresh never ran, refresh_claim's rule) are marked and returned by the same UPDATE, and a
    task is queued for each; in a burst, when every row has one queued, it changes nothing."""
    # The service <-> task loop of a queued app: annotation/tasks.py imports this module.
    from annotation.tasks import figures_task

    now = timezone.now()
    quote = connection.ops.quote_name
    figures, campaigns = quote(StoredFigures._meta.db_table), quote(Campaign._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {figures} SET refresh_queued_at = %s
            WHERE (campaign_id = %s
                   OR (campaign_id IS NULL AND dataset_id = (SELECT dataset_id FROM {campaigns} WHERE id = %s)))
              AND (refresh_queued_at IS NULL OR refresh_queued_at < %s)
            RETURNING id, computed_at, compute_seconds""",
            [now, campaign_id, campaign_id, now - 6 * debounce()],
        )
        claimed = cursor.fetchall()
    for figures_id, computed_at, compute_seconds in claimed:
        _queue(figures_task, figures_id, computed_at, compute_seconds)
    return len(claimed)


def _queue(figures_task, figures_id: int, computed_at, compute_seconds: float) -> None:
    """Queue the refresh of a row just claimed: at once if never computed, else after its delay
    (core.figures.refresh_delay), noted on the row when longer than a debounce window."""
    delay = refresh_delay(compute_seconds)
    if computed_at is not None:
        refresh_due_note(StoredFigures.objects.filter(pk=figures_id), delay)
    enqueue_later(figures_task, figures_id, at_once=computed_at is None, delay=delay)


def figures_read(
    *,
    what: str,
    campaign: Campaign | None = None,
    dataset=None,
    run: JudgeRun | None = None,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    compute: str = "never",
) -> tuple[dict | None, dict]:
    """Stored figures and their freshness ({"computed_at", "stale", "missing"}), read the one
    way stored figures are read (core.figures.stored_figures_read, which says what `compute`
    asks for: "stale" makes them match the votes as they are now)."""
    if campaign is not None:
        dataset = None
    figures, _ = StoredFigures.objects.get_or_create(
        key=figures_key(what, campaign=campaign, dataset=dataset, run=run, rounds=rounds, seed=seed),
        defaults={"what": what, "campaign": campaign, "dataset": dataset, "run": run, "rounds": rounds, "seed": seed},
    )
    return stored_figures_read(
        stored=figures,
        current_inputs=figures_inputs(figures),
        refresh=lambda: figures_refresh(figures_id=figures.pk),
        schedule=figures_schedule,
        reload=lambda: StoredFigures.objects.filter(pk=figures.pk).first(),
        compute=compute,
    )
