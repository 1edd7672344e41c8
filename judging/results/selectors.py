"""Cheap reads of judge runs for pages, the API, commands and exports: run lists, progress,
judgments, templates. No statistics here: a page that lists runs or polls progress loads no
numpy or scipy; a run's leaderboard is read in judging/results/boards.py."""

from __future__ import annotations

import difflib
import re
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Avg, Count, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, Length
from django.utils import timezone

from core.roles import Role
from core.workspaces import scoped, workspace_ids
from curation.models import Dataset
from judging.answers.versions import run_answers
from judging.batching import batch_jobs_progress
from judging.models import (
    BatchJob,
    CandidateModel,
    JudgeRun,
    JudgeShard,
    JudgeTemplate,
    Judgment,
    stale_after,
)
from judging.runs.lookup import run_by_id
from llm.selectors import endpoint_prices

GROUPS = ("intent", "language", "country", "category")


def run_list_with_progress(*, user=None) -> QuerySet[JudgeRun]:
    """Runs (of the workspaces where the person is a researcher; every one for the operator; not
    archived) with their judgment counts (done, parse failures), read from the runs' own counts."""
    runs = JudgeRun.objects.active()
    runs = runs if user is None else scoped(runs, user, role=Role.RESEARCHER.value)
    return (
        runs.select_related("dataset", "reference_model")
        .annotate(judgment_count=F("replied") + F("call_failures"), failure_count=F("parse_failures") + F("cut_off"))
        .order_by("-created_at")
    )


def run_get(*, run_id: int, user=None) -> JudgeRun:
    """One run with what its page shows next to it (raises RunNotFound; with a `user`, also for
    a run of another workspace)."""
    return run_by_id(
        run_id=run_id,
        user=user,
        queryset=JudgeRun.objects.select_related("dataset", "reference_model", "endpoint").prefetch_related(
            "candidates", "templates"
        ),
    )


def run_progress(*, run: JudgeRun) -> dict:
    """Done, failed, cut off, in flight, window, rate, ETA, tokens and estimated cost of a run;
    whether it is at work (`live`) and whether a resume would send anything (`resumable`).

    Read from the run's running counts and its workers' rows (a few small queries, however
    many judgments there are): polling it costs the database little. `done` counts judgments
    with a reply (parsed or not); failed calls are counted apart and are what `judge_resume`
    sends again. `workers` is 0 while the run waits for a worker (or every worker died)."""
    now = timezone.now()
    row = (
        JudgeRun.objects.filter(pk=run.pk)
        .values(
            "status",
            "total",
            "error",
            "concurrency",
            "concurrency_auto",
            "replied",
            "parse_failures",
            "call_failures",
            "cut_off",
            "cached_replies",
            "prompt_tokens",
            "completion_tokens",
            "batch",
        )
        .get()
    )
    fresh = now - stale_after()
    workers = run.workers.filter(heartbeat_at__gte=fresh).aggregate(
        n=Count("pk"),
        in_flight=Coalesce(Sum("in_flight"), 0),
        window=Coalesce(Sum("window"), 0),
        rate=Coalesce(Sum("rate"), 0.0),
        overloads=Coalesce(Sum("overloads"), 0),
    )
    shards = dict(run.shards.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    stale = (
        run.shards.filter(status=JudgeShard.Status.RUNNING)
        .filter(Q(heartbeat_at__lt=fresh) | Q(heartbeat_at__isnull=True))
        .count()
        if shards.get(JudgeShard.Status.RUNNING)
        else 0
    )
    status = row["status"]
    running = status == JudgeRun.Status.RUNNING
    rate = float(workers["rate"]) if running else 0.0
    # Runs made before totals were recorded (or loaded from a fixture) count what they hold.
    total = row["total"] or row["replied"] + row["call_failures"]
    remaining = max(0, total - row["replied"])
    unsettled = max(0, remaining - row["call_failures"])
    # A run resumed live after its batches keeps them: their replies stay priced as batched.
    jobs = list(BatchJob.objects.filter(run_id=run.pk).order_by("pk"))
    cost = run_cost(
        endpoint=run.endpoint,
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        batch_prompt_tokens=sum(job.prompt_tokens for job in jobs),
        batch_completion_tokens=sum(job.completion_tokens for job in jobs),
    )
    batches = batch_jobs_progress(jobs, now=now) if row["batch"] or jobs else None
    if batches is not None and row["batch"]:
        # A batch run waits for its batches, not for a worker's window: a worker (or the
        # command) looks at them every LLM_BATCH_POLL_SECONDS.
        seen = max([run.created_at, *(job.checked_at or job.created_at for job in jobs)])
        quiet = now - seen > stale_after() + timedelta(seconds=2 * float(settings.LLM_BATCH_POLL_SECONDS))
        waiting_for_worker = running and remaining > 0 and quiet
    else:
        waiting_for_worker = running and workers["n"] == 0 and remaining > 0
    return {
        "status": status,
        "error": row["error"],
        "total": total,
        "done": row["replied"],
        "remaining": remaining,
        "parse_failures": row["parse_failures"],
        "call_failures": row["call_failures"],
        "cut_off": row["cut_off"],
        "cached": row["cached_replies"],
        "in_flight": workers["in_flight"] if running else 0,
        "window": workers["window"] if running else 0,
        "concurrency": "auto" if row["concurrency_auto"] else str(row["concurrency"]),
        "overloads": workers["overloads"] if running else 0,
        "workers": workers["n"] if running else 0,
        "waiting_for_worker": waiting_for_worker,
        "rate_per_second": round(rate, 2),
        # A slow server (a local model: a minute or more a call) reads better as seconds a call.
        "seconds_per_call": round(1 / rate, 1) if rate > 0 else None,
        # Failed calls are settled until judge_resume: the ETA is for the units still to come back.
        "eta_seconds": round(unsettled / rate) if rate > 0 and unsettled else None,
        "prompt_tokens": row["prompt_tokens"],
        "completion_tokens": row["completion_tokens"],
        "estimated_cost": float(round(cost, 4)) if cost is not None else None,
        "shards": {key: shards.get(key, 0) for key in JudgeShard.Status.values},
        "stale_shards": stale,
        "percent": round(100 * row["replied"] / total, 1) if total else 100.0,
        # Rate, ETA, calls in flight, the window and stale shards mean something only while the
        # run is at work; a finished page leaves them out.
        "live": status in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING),
        # Sent through the Batch API: its batches, their states and counts, how long they waited.
        "batch": row["batch"],
        "batches": batches,
        # What `run_resume` would send: units without a reply after the run stopped, or the
        # shards of a dead worker while it runs.
        "resumable": (
            remaining > 0
            if status in (JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED, JudgeRun.Status.FAILED)
            else running and (stale > 0 or waiting_for_worker)
        ),
    }


def run_cost(
    *,
    endpoint,
    prompt_tokens: int,
    completion_tokens: int,
    batch_prompt_tokens: int = 0,
    batch_completion_tokens: int = 0,
) -> Decimal | None:
    """What a run's paid tokens cost at the endpoint's prices: the tokens of replies that came
    through the Batch API at its batch price, the others at the live price. None when a price is
    unknown."""
    batch_prompt = min(batch_prompt_tokens, prompt_tokens)
    batch_completion = min(batch_completion_tokens, completion_tokens)
    live_in, live_out = endpoint_prices(endpoint)
    batch_in, batch_out = endpoint_prices(endpoint, batch=True)
    live_tokens = prompt_tokens - batch_prompt
    if (live_in is None and (live_tokens or not batch_prompt)) or (batch_in is None and batch_prompt):
        return None
    total = Decimal(prompt_tokens - batch_prompt) * (live_in or Decimal(0))
    total += Decimal(completion_tokens - batch_completion) * (live_out or Decimal(0))
    total += Decimal(batch_prompt) * (batch_in or Decimal(0)) + Decimal(batch_completion) * (batch_out or Decimal(0))
    return total / Decimal(1_000_000)


def judgment_rows(*, run: JudgeRun):
    """The run's replied judgments of real candidates as the leaderboards read them, one dict each."""
    # Injection-probe answers are never ranked: their own report is judging/results/probe_report.py.
    return (
        run.judgments.replied()
        .filter(model__is_probe=False)
        .values(
            "model__name",
            "final_score",
            "scores",
            "outcome",
            "item_id",
            "order",
            "item__intent",
            "item__language",
            "item__category",
            "item__country",
            "item__source_case__submission__country",
        )
        .order_by("item_id", "model__name", "order")
    )


def run_judgments(*, run: JudgeRun, failures_only: bool = False) -> QuerySet[Judgment]:
    """The run's judgments with item and model, for the run page's table and exports."""
    queryset = run.judgments.select_related("item", "model", "template").order_by("item_id", "model__name", "order")
    if failures_only:
        queryset = queryset.unscored()
    return queryset


def flagged_judgments(*, run: JudgeRun) -> QuerySet[Judgment]:
    """Judgments whose answer carried judge-format strings or instructions to the judge."""
    return run_judgments(run=run).exclude(flags=[]).exclude(model__is_probe=True)


def templates_visible(user) -> QuerySet[JudgeTemplate]:
    """The templates a researcher reads: the built-in ones and those of the workspaces where they
    are researcher (narrowed to the current workspace when one is set)."""
    ids = workspace_ids(user, Role.RESEARCHER.value)
    rows = JudgeTemplate.objects.all()
    return rows if ids is None else rows.filter(Q(workspace=None) | Q(workspace_id__in=ids))


def template_list(user) -> QuerySet[JudgeTemplate]:
    """The templates a researcher reads, by name, each workspace's before the built-in one, newest
    version first."""
    return (
        templates_visible(user)
        .select_related("workspace")
        .order_by("name", F("workspace__slug").asc(nulls_last=True), "-version")
    )


def template_versions(*, template: JudgeTemplate) -> QuerySet[JudgeTemplate]:
    """Every version of a template's name in its workspace (or among the built-in ones), newest
    first, with who made it."""
    rows = JudgeTemplate.objects.filter(name=template.name, workspace=template.workspace)
    return rows.select_related("created_by").order_by("-version")


DIFF_CONTEXT_LINES = 3


def template_versions_diff(*, old: JudgeTemplate, new: JudgeTemplate) -> list[list[dict]]:
    """What changed from `old` to `new`, line by line, as hunks of rows with a few lines of
    context: {"kind": "same"|"removed"|"added", "old": line number or None, "new": ..., "text"}.
    An empty list means the two texts are the same."""
    old_lines, new_lines = old.text.splitlines(), new.text.splitlines()
    if old_lines == new_lines:
        return []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    hunks = []
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT_LINES):
        rows = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [
                    {"kind": "same", "old": i + 1, "new": j + 1, "text": old_lines[i]}
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                ]
                continue
            rows += [{"kind": "removed", "old": i + 1, "new": None, "text": old_lines[i]} for i in range(i1, i2)]
            rows += [{"kind": "added", "old": None, "new": j + 1, "text": new_lines[j]} for j in range(j1, j2)]
        hunks.append(rows)
    return hunks


def candidates_with_answers(*, dataset: Dataset) -> QuerySet:
    """Candidate models that answered items of the dataset, with how many, by name."""
    return (
        CandidateModel.objects.filter(answers__item__dataset=dataset, answers__is_current=True)
        .annotate(answer_count=Count("answers"))
        .order_by("name")
    )


def answer_lengths(*, run: JudgeRun) -> dict[str, float]:
    """Average answer length in characters per model on the run's dataset (ChineseAlpacaEval's Length)."""
    models = list(run.candidates.values_list("pk", flat=True)) + (
        [run.reference_model_id] if run.reference_model_id else []
    )
    rows = run_answers(run).filter(model_id__in=models).values("model__name").annotate(length=Avg(Length("text")))
    return {row["model__name"]: round(float(row["length"]), 1) for row in rows}


def _same_model(reported: str, asked: str) -> bool:
    """The model asked for, or a dated snapshot of it ("gpt-4o" answered as "gpt-4o-2024-08-06" or
    "gpt-4-0613"); "gpt-4o-mini" for "gpt-4o" is another model."""
    return (
        reported == asked or re.fullmatch(re.escape(asked) + r"-(\d{4}-\d{2}-\d{2}|\d{4}|\d{8})", reported) is not None
    )


def judge_model_mismatch(*, run: JudgeRun) -> dict | None:
    """When the endpoint reported another model than the run asked for (a gateway's fallback, a
    wrong alias) in some replies: {"asked", "replies", "other": {name: count}, "other_replies"};
    None when every reply that names a model names the one asked (or a dated snapshot of it).
    Replies naming no model are counted in "replies" only."""
    counts = dict(run.judgments.replied().values_list("reported_model").annotate(n=Count("pk")).order_by())
    other = {name: n for name, n in sorted(counts.items()) if name and not _same_model(name, run.judge_model)}
    if not other:
        return None
    return {
        "asked": run.judge_model,
        "replies": sum(counts.values()),
        "other": other,
        "other_replies": sum(other.values()),
    }
