"""Every task judging queues, in one place: a task per queued shard, the run's watchdog, a batch
run's passes, a run's stored figures, and a generation's task and passes.

It stands on judging's ground floor (it imports only judging/models.py, judging/batching.py and
core), so any room queues a task through it without climbing into the room that runs the task:
the engine and `runs/` queue a run's figures here, not in `results/`. The one import loop judging
keeps is here: the tasks (judging/tasks.py) call the rooms, and this module queues the tasks.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.tasks import TaskResultStatus, task_backends
from django.tasks.exceptions import TaskResultDoesNotExist
from django.utils import timezone

from core.figures import enqueue_later, refresh_claim
from judging.batching import batch_pass_defer
from judging.models import AnswerGeneration, AnswerUpload, JudgeRun, JudgeShard, RunFigures, stale_after


def run_enqueue(*, run: JudgeRun) -> int:
    """Queue a task on the `judging` queue for each queued shard; returns how many were queued.

    A worker that takes one holds the run: it claims the run's next shards as its calls run
    low, so the others find their shard taken and end at once, unless a second worker got
    there first and shares the run. The run's watchdog is scheduled too (`run_watch`). Call it
    after the shards are committed. A batch run gets a pass over its batches instead (one task,
    judging/engine/batch.py), which queues the next look itself.
    """
    if run.status in (JudgeRun.Status.PENDING, JudgeRun.Status.FAILED):
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
        run.status = JudgeRun.Status.RUNNING
    if run.batch:
        batch_pass_enqueue(run_id=run.pk)
        return 0
    shard_ids = list(run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", flat=True))
    shard_tasks_enqueue(shard_ids)
    run_watch_schedule(run_id=run.pk)
    return len(shard_ids)


def shard_tasks_enqueue(shard_ids: list[int]) -> None:
    """A task on the `judging` queue for each shard, its id recorded on the shard."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import judge_shard_task

    for shard_id in shard_ids:
        result = judge_shard_task.enqueue(shard_id)
        JudgeShard.objects.filter(pk=shard_id, task_id="").update(task_id=str(result.id)[:64])


def shards_without_task(*, run: JudgeRun) -> list[int]:
    """The run's queued shards whose task is no longer waiting or running (it ended, or it is
    gone): no worker will ever claim them unless they get a new task."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import judge_shard_task

    orphans = []
    for shard_id, task_id in run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", "task_id"):
        try:
            status = judge_shard_task.get_result(task_id).status if task_id else None
        except (TaskResultDoesNotExist, ValueError):
            status = None
        if status not in (TaskResultStatus.READY, TaskResultStatus.RUNNING):
            orphans.append(shard_id)
    return orphans


def shard_tasks_renew(shard_ids: list[int]) -> None:
    """A new task for each of these queued shards (their old one ended or is gone)."""
    JudgeShard.objects.filter(pk__in=shard_ids, status=JudgeShard.Status.QUEUED).update(task_id="")
    shard_tasks_enqueue(shard_ids)


def watchdog_delay() -> timedelta:
    """How long after one look the run's watchdog looks again: a heartbeat goes stale by then."""
    return stale_after() + timedelta(seconds=float(settings.JUDGING_HEARTBEAT_SECONDS))


def run_watch_schedule(*, run_id: int) -> bool:
    """Make sure a watchdog task will look at the running run soon (one at a time: the run
    records when it is due, and a due time already past is replaced). True if one was queued.
    Only backends that can defer a task have one (the test suite's immediate backend has not)."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import run_watch_task

    if not task_backends[run_watch_task.backend].supports_defer:
        return False
    now = timezone.now()
    due = now + watchdog_delay()
    claimed = (
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.RUNNING)
        .filter(Q(watchdog_at__isnull=True) | Q(watchdog_at__lt=now))
        .update(watchdog_at=due)
    )
    if claimed:
        run_watch_task.using(run_after=due).enqueue(run_id)
    return bool(claimed)


def batch_pass_enqueue(*, run_id: int) -> None:
    """A pass over the batch run's batches, now (judging/engine/batch.py)."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import batch_run_task

    batch_run_task.enqueue(run_id)


def batch_poll_schedule(*, run_id: int) -> bool:
    """The next pass over a batch run's batches, LLM_BATCH_POLL_SECONDS from now: one chain of
    them at a time (judging.batching.batch_pass_defer). True if one was queued."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import batch_run_task

    return batch_pass_defer(owner=JudgeRun.objects.filter(pk=run_id), task=batch_run_task, argument=run_id)


def run_figures_schedule(*, run: JudgeRun) -> bool:
    """Ask for the run's figures to be computed again soon (debounced; at once when they never
    were); True if a task was queued (judging/results/figures.py computes them)."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import run_figures_task

    figures, _ = RunFigures.objects.get_or_create(run_id=run.pk)
    if refresh_claim(RunFigures.objects.filter(pk=figures.pk)):
        enqueue_later(run_figures_task, run.pk, at_once=figures.computed_at is None)
        return True
    return False


def generation_enqueue(generation: AnswerGeneration) -> None:
    """The generation's task on the `judging` queue, its id recorded on the generation."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import answers_generate_task

    result = answers_generate_task.enqueue(generation.pk)
    AnswerGeneration.objects.filter(pk=generation.pk).update(task_id=str(result.id)[:64])


def generation_batch_schedule(*, generation_id: int) -> bool:
    """A batch generation's next pass LLM_BATCH_POLL_SECONDS from now, one chain at a time (as a
    run's)."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import answers_generate_task

    return batch_pass_defer(
        owner=AnswerGeneration.objects.filter(pk=generation_id), task=answers_generate_task, argument=generation_id
    )


def answers_upload_enqueue(upload: AnswerUpload) -> None:
    """A large answers file's reading, on the `default` queue (not behind judge runs on
    `judging`), its task id recorded on the upload."""
    # The service <-> task loop of a queued app: judging/tasks.py imports the rooms at load.
    from judging.tasks import answers_upload_task

    result = answers_upload_task.enqueue(upload.pk)
    AnswerUpload.objects.filter(pk=upload.pk).update(task_id=str(result.id)[:64])
