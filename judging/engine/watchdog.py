"""The run's watchdog: a task queued while the run runs (judging/dispatch.py) that gives
a dead worker's shards back to the queue, gives a queued shard whose task is gone a new one,
and closes a run its last worker left unclosed."""

from __future__ import annotations

import logging

from judging.dispatch import run_watch_schedule, shard_tasks_enqueue, shard_tasks_renew, shards_without_task
from judging.engine.queue import run_close_if_idle, shards_take_back
from judging.models import JudgeRun

logger = logging.getLogger("userbench.engine")


def run_watch(*, run_id: int) -> int:
    """The run's watchdog, run by any worker: shards whose worker died (stale heartbeat, or a
    process of this machine that is gone) go back to the queue with a task each, so the run
    goes on with no one having to resume it; a run whose last worker died between its last
    judgment and closing the run is closed. Looks again later while the run is running.
    Returns how many shards were taken back."""
    JudgeRun.objects.filter(pk=run_id).update(watchdog_at=None)
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None or run.status != JudgeRun.Status.RUNNING:
        return 0
    taken_back = shards_take_back(run=run)
    shard_tasks_enqueue(taken_back)
    # A queued shard whose task ended without claiming it would wait for ever: it gets another.
    orphans = shards_without_task(run=run)
    if orphans:
        logger.warning("run %s shards %s were queued with no task waiting: queued again", run.pk, orphans)
        shard_tasks_renew(orphans)
    if run_close_if_idle(run=run):
        run.refresh_from_db()
        logger.warning(
            "run %s closed by the watchdog as %s: no shard was open and no worker had closed it",
            run.pk,
            run.status,
        )
    else:
        run_watch_schedule(run_id=run_id)
    return len(taken_back)
