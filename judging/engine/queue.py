"""The shard queue: every change of a shard's status, and of its run's as shards close.

A shard is queued when its run is made or given back; a worker claims it (`shard_claim` for
its task's shard, `shard_claim_next` as its calls run low) and beats while it sends; it is
finished (`shard_finish`: done, failed or cancelled), given back when its worker shuts down
(`shards_release`), taken back from a dead worker by the watchdog (`shards_take_back`) or by a
resume (`shards_requeue`). A run is closed when its last shard is (`run_close`), stopped when
it cannot go on (`run_stop`) and cancelled by the researcher (`run_cancel`).

Take-overs, the watchdog's actions and stops write a line on the `userbench.engine` logger
with the run, the shard, the worker and the reason.
"""

from __future__ import annotations

import logging

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from judging.dispatch import run_figures_schedule
from judging.engine.counters import run_counters_refresh
from judging.engine.workers import abandon_reason, abandoned_shard_ids, shard_abandoned
from judging.errors import RunError
from judging.models import JudgeRun, JudgeShard

logger = logging.getLogger("userbench.engine")


def _take(shard: JudgeShard, worker_id: str, now) -> None:
    reason = abandon_reason(shard, now)
    if reason:
        logger.warning(
            "run %s shard %s taken over by worker %s from worker %s: %s",
            shard.run_id,
            shard.pk,
            worker_id[:100],
            shard.worker_id,
            reason,
        )
    shard.status = JudgeShard.Status.RUNNING
    shard.attempts += 1
    shard.worker_id = worker_id[:100]
    shard.heartbeat_at = now
    shard.started_at = now
    shard.error = ""
    shard.save(update_fields=["status", "attempts", "worker_id", "heartbeat_at", "started_at", "error"])


def _open_run(run_id: int) -> None:
    JudgeRun.objects.filter(pk=run_id).exclude(status__in=[JudgeRun.Status.CANCELLED, JudgeRun.Status.RUNNING]).update(
        status=JudgeRun.Status.RUNNING, finished_at=None, error=""
    )


@transaction.atomic
def shard_claim(*, shard_id: int, worker_id: str) -> bool:
    """Take a shard for this worker: a queued one, or a running one whose worker died (its
    heartbeat is stale, or its process on this machine is gone).

    Two workers racing for one shard: the row lock lets exactly one through. The lock is
    waited for, never skipped: the row is also locked, for an instant, by whoever records the
    shard's task id right after queuing the task, and a worker that picked the task up in that
    instant would skip the shard, end its task, and leave the shard queued with no task for ever.
    """
    shard = JudgeShard.objects.select_for_update(of=("self",)).filter(pk=shard_id).select_related("run").first()
    if shard is None:
        return False
    now = timezone.now()
    if shard.status != JudgeShard.Status.QUEUED and not shard_abandoned(shard, now):
        return False
    if shard.run.status == JudgeRun.Status.CANCELLED:
        shard.status = JudgeShard.Status.CANCELLED
        shard.save(update_fields=["status"])
        return False
    if shard.run.status == JudgeRun.Status.FAILED and shard.run.error:
        # The run was stopped (every call failed the same way, or its endpoint is unusable): the
        # shard waits for `judge_resume`, which re-opens the run, rather than failing again.
        return False
    _take(shard, worker_id, now)
    if shard.run.status != JudgeRun.Status.RUNNING:
        _open_run(shard.run_id)
    return True


@transaction.atomic
def shard_claim_next(*, run_id: int, worker_id: str) -> JudgeShard | None:
    """Take the run's next shard for a worker whose calls run low: the first queued one, else
    one left by a worker that died (stale heartbeat, or a process of this machine that is gone).
    None when there is none, or when the run is no longer running."""
    if JudgeRun.objects.filter(pk=run_id).values_list("status", flat=True).first() != JudgeRun.Status.RUNNING:
        return None
    now = timezone.now()
    waiting = JudgeShard.objects.select_for_update(skip_locked=True).filter(run_id=run_id)
    shard = waiting.filter(status=JudgeShard.Status.QUEUED).order_by("index").first()
    if shard is None:
        others = waiting.filter(status=JudgeShard.Status.RUNNING).exclude(worker_id=worker_id[:100]).order_by("index")
        shard = next((candidate for candidate in others if shard_abandoned(candidate, now)), None)
    if shard is None:
        return None
    _take(shard, worker_id, now)
    return shard


@transaction.atomic
def shard_finish(*, shard_id: int, status: str, error: str = "", holder: str | None = None) -> None:
    """Close a shard; when it was the last one open, close the run (`run_close`).

    With `holder` (a worker closing a shard it claimed), only while that worker still holds it:
    a worker cut off from the database for longer than the stale time had its shards taken over,
    and when it hears from the database again (to say its calls failed) the other worker may
    have finished them; failing them then would fail a finished run."""
    shards = JudgeShard.objects.filter(pk=shard_id)
    if holder is not None:
        shards = shards.filter(status=JudgeShard.Status.RUNNING, worker_id=holder[:100])
    closed = shards.update(
        status=status, error=error[:300], in_flight=0, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    if not closed:
        logger.info("shard %s is no longer held by worker %s: left as it is (%s)", shard_id, holder, status)
        return
    run_id = JudgeShard.objects.values_list("run_id", flat=True).get(pk=shard_id)
    run = JudgeRun.objects.select_for_update().get(pk=run_id)
    if run.status == JudgeRun.Status.CANCELLED or (run.status == JudgeRun.Status.FAILED and run.error):
        return
    open_shards = run.shards.exclude(
        status__in=[JudgeShard.Status.DONE, JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]
    )
    if open_shards.exists():
        return
    run_close(run=run)


def shards_release(*, shard_ids: list[int], holder: str | None = None) -> int:
    """Give shards back to the queue (a worker asked to shut down, or that lost its database a
    moment): nothing they hold is lost, and the next worker sends only what they miss. With
    `holder`, only the shards that worker still holds. Returns how many were released."""
    held = JudgeShard.objects.filter(pk__in=shard_ids, status=JudgeShard.Status.RUNNING)
    if holder is not None:
        held = held.filter(worker_id=holder[:100])
    for run_id, shard_id, worker_id in held.values_list("run_id", "pk", "worker_id"):
        logger.info("run %s shard %s given back to the queue by worker %s: it shuts down", run_id, shard_id, worker_id)
    return held.update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")


def shards_take_back(*, run: JudgeRun) -> list[int]:
    """The watchdog's transition: the run's running shards whose worker died go back to the
    queue (a shard another worker holds locked is left for the next look). Returns their ids."""
    with transaction.atomic():
        now = timezone.now()
        locked = JudgeShard.objects.select_for_update(skip_locked=True).filter(pk__in=abandoned_shard_ids(run, now))
        taken_back = []
        for shard in locked:
            reason = abandon_reason(shard, now)
            if reason:
                taken_back.append(shard.pk)
                logger.warning(
                    "run %s shard %s re-queued by the watchdog from worker %s: %s",
                    run.pk,
                    shard.pk,
                    shard.worker_id,
                    reason,
                )
        JudgeShard.objects.filter(pk__in=taken_back).update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")
    return taken_back


def shards_requeue(*, run: JudgeRun, force: bool) -> int:
    """A resume's transition: the run's failed and cancelled shards, its running ones whose
    worker died (every running one with `force`) and its finished ones with units that have no
    judgment go back to the queue. Returns how many. Runs inside the resume's transaction."""
    # Right after a crash the dead worker's heartbeat is still fresh: a process of this machine
    # that is gone is known dead at once, any other holder once its heartbeat is stale.
    now = timezone.now()
    running = run.shards.filter(status=JudgeShard.Status.RUNNING).only("pk", "status", "heartbeat_at", "worker_id")
    taken = {shard.pk: (shard.worker_id, abandon_reason(shard, now) or "forced") for shard in running}
    if not force:
        taken = {pk: held for pk, held in taken.items() if held[1] != "forced"}
    # A shard that finished since it was read above stays finished.
    retry = Q(status__in=[JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]) | Q(
        status=JudgeShard.Status.RUNNING, pk__in=list(taken)
    )
    # A finished shard with units that have no judgment (failed calls dropped, cut-off replies of
    # an old max_tokens) gets another go too.
    retry |= Q(status=JudgeShard.Status.DONE, pk__in=_shards_missing_units(run))
    count = run.shards.filter(retry).update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")
    for shard_id, (worker_id, reason) in sorted(taken.items()):
        logger.warning("run %s shard %s re-queued by a resume from worker %s: %s", run.pk, shard_id, worker_id, reason)
    return count


def _shards_missing_units(run: JudgeRun) -> list[int]:
    done = set(run.judgments.values_list("item_id", "model_id", "order"))
    return [
        shard.pk
        for shard in run.shards.filter(status=JudgeShard.Status.DONE).only("pk", "units")
        if any(tuple(unit) not in done for unit in shard.units)
    ]


def run_close(*, run: JudgeRun) -> None:
    """Every shard is closed: recount, and call the run finished only if every unit has a
    result; otherwise it failed, with a summary of what is missing and how to continue."""
    counts = run_counters_refresh(run=run)
    missing = max(0, run.total - counts["replied"])
    failed_shards = run.shards.filter(status=JudgeShard.Status.FAILED).count()
    if counts["call_failures"] or missing or failed_shards:
        run.status = JudgeRun.Status.FAILED
        context = run.judgments.filter(call_error_kind="context_length").count()
        parts = [f"{missing} of {run.total} judgments have no result"]
        if counts["call_failures"]:
            too_long = f"{context} {'prompt exceeds' if context == 1 else 'prompts exceed'} the judge's context length"
            parts.append(f"{counts['call_failures']} calls failed" + (f" ({too_long})" if context else ""))
        if failed_shards:
            parts.append(f"{failed_shards} shards failed")
        run.error = "; ".join(parts) + f"; 'judge_resume {run.pk}' sends what is missing again"
        # `run_resume` keeps those: the same request would fail the same way.
        run.error += (
            ", and a prompt over the context length only with a smaller --max-tokens or once the endpoint changes."
            if context
            else "."
        )
    else:
        run.status = JudgeRun.Status.FINISHED
        run.error = ""
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "error"])
    run_figures_schedule(run=run)


@transaction.atomic
def run_close_if_idle(*, run: JudgeRun) -> bool:
    """Close a running run that has no open shard left (nothing was left to claim); True if closed."""
    run = JudgeRun.objects.select_for_update().get(pk=run.pk)
    if run.status != JudgeRun.Status.RUNNING:
        return False
    if run.shards.filter(status__in=[JudgeShard.Status.QUEUED, JudgeShard.Status.RUNNING]).exists():
        return False
    run_close(run=run)
    return True


CANCELLABLE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


@transaction.atomic
def run_cancel(*, run: JudgeRun, actor: AbstractBaseUser | None = None) -> None:
    """Stop a pending or running run: queued shards never start, running shards stop sending
    after their next heartbeat. A finished, failed or cancelled run keeps its status (RunError).
    The audit log records who cancelled it."""
    locked = JudgeRun.objects.select_for_update().get(pk=run.pk)
    if locked.status not in CANCELLABLE:
        raise RunError(
            _("Only a pending or running run can be cancelled; run %(id)s is %(status)s.")
            % {"id": locked.pk, "status": str(locked.get_status_display()).lower()}
        )
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.CANCELLED, finished_at=timezone.now())
    run.shards.filter(status=JudgeShard.Status.QUEUED).update(status=JudgeShard.Status.CANCELLED)
    running = run.shards.filter(status=JudgeShard.Status.RUNNING).values_list("pk", "worker_id")
    held = ", ".join(f"shard {shard_id} (worker {worker_id})" for shard_id, worker_id in running) or "no shard"
    logger.info(
        "run %s cancelled by %s (was %s); stops at its next heartbeat: %s",
        run.pk,
        actor or "a command",
        locked.status,
        held,
    )
    audit_record(
        actor=actor,
        action=AuditAction.RUN_CANCELLED,
        target=f"run:{run.pk}",
        details={"was": locked.status},
        workspace=locked.workspace_id,
    )
    run.refresh_from_db()


@transaction.atomic
def run_stop(*, run_id: int, error: str) -> None:
    """Stop a run that cannot go on as it is (every call fails the same way): the other workers
    stop at their next tick, and `error` tells the researcher what to fix."""
    stopped = (
        JudgeRun.objects.filter(pk=run_id)
        .exclude(status=JudgeRun.Status.CANCELLED)
        .update(status=JudgeRun.Status.FAILED, finished_at=timezone.now(), error=error[:500])
    )
    if stopped:
        held = JudgeShard.objects.filter(run_id=run_id, status=JudgeShard.Status.RUNNING).values_list("pk", "worker_id")
        shards = ", ".join(f"shard {shard_id} (worker {worker_id})" for shard_id, worker_id in held) or "no shard held"
        logger.warning("run %s stopped, %s: %s", run_id, shards, error[:500])
