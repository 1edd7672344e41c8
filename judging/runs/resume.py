"""A judge run after its first pass: resumed (what a crash, a stop, failed calls or a cancel
left is queued again) and re-parsed (the stored replies read again, without a call)."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from judging.answers.versions import run_answers
from judging.dispatch import run_enqueue, run_figures_schedule
from judging.engine.counters import run_counters_refresh
from judging.engine.execution import build_prompt, endpoint_for_run
from judging.engine.queue import shards_requeue
from judging.errors import RunError
from judging.models import CUT_OFF, BatchJob, JudgeRun, JudgeShard
from judging.prompts.building import criteria_for_template
from judging.runs.spec import concurrency_resolve, max_tokens_check, timeout_check
from judging.verdicts.judgments import judgment_fields_from_reply
from llm.config import CallKind, endpoint_signature, max_tokens_for
from llm.errors import EndpointError


def run_resume(
    *,
    run: JudgeRun,
    force: bool = False,
    enqueue: bool = True,
    concurrency: int | str | None = None,
    timeout_seconds: float | None = None,
    max_tokens: int | None = None,
    live: bool = False,
) -> int:
    """Re-queue what a crash, a failure, a stop or a cancel left; returns how many shards were
    re-queued.

    A RUNNING shard counts as abandoned only when its worker died: its heartbeat is stale, or
    its process on this machine is gone (or with `force`).
    Finished judgments stay: the shard sends only what is missing, and the response cache
    makes a re-sent identical prompt free. Failed calls are sent again, except prompts that
    exceed the judge's context length on the same endpoint, model and max_tokens.
    `concurrency` ("auto" or a number), `timeout_seconds` and `max_tokens` change the run from
    here on; a new `max_tokens` also sends again the replies the old one cut off. With
    `enqueue` (the page, the API and `judge_resume`), a task is queued for every queued shard
    once the re-queue is committed; `judge_resume --inline` runs the shards itself instead.
    A batch run picks up the batches it has at the provider (never sending them again) and sends
    what has no result in a new batch; with `live`, it sends the rest as live calls from here
    on, once no batch of it is still at the provider (RunError otherwise). An archived run, or a
    run whose dataset is archived: ArchivedError (read-only until restored).
    """
    refuse_if_archived(run)
    refuse_if_archived(run.dataset)
    count = _run_requeue(
        run=run,
        force=force,
        concurrency=concurrency,
        timeout_seconds=timeout_seconds,
        max_tokens=max_tokens,
        live=live,
    )
    run.refresh_from_db()
    if enqueue:
        run_enqueue(run=run)
    return count


@transaction.atomic
def _run_requeue(
    *,
    run: JudgeRun,
    force: bool,
    concurrency: int | str | None = None,
    timeout_seconds: float | None = None,
    max_tokens: int | None = None,
    live: bool = False,
) -> int:
    run = JudgeRun.objects.select_for_update(of=("self",)).select_related("endpoint").get(pk=run.pk)
    changed = []
    if live and run.batch:
        out = run.batch_jobs.filter(status__in=BatchJob.OPEN).count()
        if out:
            raise RunError(
                _(
                    "Run %(id)s still has %(count)d batch(es) at the provider: resume it without --live to "
                    "collect them first; then what is left can be sent live."
                )
                % {"id": run.pk, "count": out}
            )
        run.batch = False
        changed.append("batch")
    if concurrency is not None:
        run.concurrency, run.concurrency_auto = concurrency_resolve(concurrency, endpoint=run.endpoint)
        changed += ["concurrency", "concurrency_auto"]
    if timeout_seconds is not None:
        timeout_check(timeout_seconds)
        run.timeout_seconds = timeout_seconds
        changed.append("timeout_seconds")
    if max_tokens is not None:
        max_tokens_check(max_tokens)
        if max_tokens != run.max_tokens:
            run.judgments.filter(finish_reason="length").delete()
        run.max_tokens = max_tokens
        changed.append("max_tokens")
    _drop_failed_calls(run)
    count = shards_requeue(run=run, force=force)
    if count or run.shards.filter(status=JudgeShard.Status.QUEUED).exists():
        run.status = JudgeRun.Status.RUNNING
        run.finished_at = None
        run.error = ""
        changed += ["status", "finished_at", "error"]
    if changed:
        run.save(update_fields=sorted(set(changed)))
    run_counters_refresh(run=run)
    return count


def _drop_failed_calls(run: JudgeRun) -> None:
    """Failed calls have no reply worth keeping: drop them so they are sent again. A prompt
    that exceeds the context length stays failed while the endpoint, the model and max_tokens
    are the same."""
    failed = run.judgments.call_failures()
    try:
        endpoint = endpoint_for_run(run)
        max_tokens = max_tokens_for(CallKind.JUDGING, endpoint=endpoint, override=run.max_tokens)
        signature = endpoint_signature(endpoint, run.judge_model, max_tokens)
    except EndpointError:
        signature = None  # the endpoint is gone: nothing can be sent anyway; keep what is known
    if signature is not None:
        failed.exclude(call_error_kind="context_length", error_endpoint=signature).delete()
    else:
        failed.exclude(call_error_kind="context_length").delete()


@transaction.atomic
def run_reparse(*, run: JudgeRun) -> int:
    """Parse the stored replies again (e.g. after a parser fix) without a single new call.

    Returns how many verdicts (final score, outcome or parse failure) changed. An archived run, or
    a run whose dataset is archived: ArchivedError."""
    refuse_if_archived(run)
    refuse_if_archived(run.dataset)
    changed = 0
    # Replies about a withdrawn participant's question were erased: their verdicts stay as they were.
    # A reply cut off by max_tokens is never scored, however it parses.
    judgments = (
        run.judgments.replied()
        .exclude(CUT_OFF)
        .filter(item__withdrawn_at__isnull=True)
        .select_related("item", "template", "response")
    )
    answers = {(a.item_id, a.model_id): a.text for a in run_answers(run).only("item_id", "model_id", "text")}
    for judgment in judgments:
        answer = answers.get((judgment.item_id, judgment.model_id), "")
        reference = answers.get((judgment.item_id, run.reference_model_id), "") if run.reference_model_id else ""
        _prompt, side = build_prompt(run, judgment.template, judgment.item, answer, reference, judgment.order)
        fields = judgment_fields_from_reply(
            mode=run.mode,
            text=judgment.reply,
            candidate_side=side,
            criteria=criteria_for_template(judgment.template.name) if judgment.template else [],
            template=judgment.template.text if judgment.template else "",
            answer=answer,
            template_name=judgment.template.name if judgment.template else "",
        )
        verdict_changed = any(
            getattr(judgment, key) != fields[key] for key in ("final_score", "outcome", "parse_error")
        )
        if verdict_changed or judgment.scores != fields["scores"]:
            for key, value in fields.items():
                setattr(judgment, key, value)
            judgment.save(update_fields=list(fields))
        changed += verdict_changed
    run_counters_refresh(run=run)
    if changed:
        transaction.on_commit(lambda: run_figures_schedule(run=run))
    return changed
