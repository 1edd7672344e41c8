"""Who holds a shard, whether that worker is provably gone, and the workers sharing a run.

A shard records the worker holding it as `host:pid:namespace` (core/processes.py, `worker_name`).
A heartbeat older than JUDGING_STALE_SECONDS says a worker died, wherever it ran; but a worker
killed on this machine can be known dead at once (`worker_is_gone`: its process is gone). Then
its shards are taken over without waiting for the heartbeat to go stale, by a worker's claim, by
`judge_resume` and by the run's watchdog.
"""

from __future__ import annotations

from django.utils import timezone

from core.processes import worker_is_gone
from judging.models import JudgeRun, JudgeShard, RunWorker, stale_after


def abandon_reason(shard: JudgeShard, now) -> str:
    """Why a running shard's worker counts as dead ("" while it is alive, or the shard is not running):
    its heartbeat is stale, or its process on this machine is gone. Logged with every take-over."""
    if shard.status != JudgeShard.Status.RUNNING:
        return ""
    if shard.heartbeat_at is None:
        return "no heartbeat"
    if shard.heartbeat_at < now - stale_after():
        return f"heartbeat {int((now - shard.heartbeat_at).total_seconds())}s old"
    return "process gone" if worker_is_gone(shard.worker_id) else ""


def shard_abandoned(shard: JudgeShard, now) -> bool:
    """A running shard whose worker died: its heartbeat is stale, or its process is provably gone."""
    return bool(abandon_reason(shard, now))


def abandoned_shard_ids(run: JudgeRun, now) -> list[int]:
    """The running shards of the run whose worker died."""
    running = run.shards.filter(status=JudgeShard.Status.RUNNING).only("pk", "status", "heartbeat_at", "worker_id")
    return [shard.pk for shard in running if shard_abandoned(shard, now)]


def run_worker_beat(
    *,
    run_id: int,
    worker_id: str,
    shard_ids: list[int],
    window: int,
    ceiling: int,
    in_flight: int,
    overloads: int,
    rate: float,
) -> tuple[str, int, int, int]:
    """A worker holding shards of a run says it is alive, with its window; returns the run's
    status, its concurrency (`judge_resume` may change it) and (live workers, this worker's
    place among them) to share it."""
    now = timezone.now()
    if shard_ids:
        JudgeShard.objects.filter(pk__in=shard_ids, status=JudgeShard.Status.RUNNING).update(
            heartbeat_at=now, in_flight=in_flight // max(1, len(shard_ids))
        )
    RunWorker.objects.update_or_create(
        run_id=run_id,
        worker_id=worker_id[:100],
        defaults={
            "window": window,
            "ceiling": ceiling,
            "in_flight": in_flight,
            "overloads": overloads,
            "rate": rate,
            "heartbeat_at": now,
        },
    )
    status, concurrency = JudgeRun.objects.values_list("status", "concurrency").get(pk=run_id)
    fresh = RunWorker.objects.filter(run_id=run_id, heartbeat_at__gte=now - stale_after()).values_list(
        "worker_id", flat=True
    )
    # A worker of this machine that was killed takes no share while its row is still fresh.
    gone = [name for name in fresh if worker_is_gone(name)]
    if gone:
        RunWorker.objects.filter(run_id=run_id, worker_id__in=gone).delete()
    live = sorted(set(fresh) - set(gone))
    place = live.index(worker_id[:100]) if worker_id[:100] in live else len(live)
    return status, concurrency, max(1, len(live)), place


def run_worker_leave(*, run_id: int, worker_id: str) -> None:
    """The worker holds nothing of the run any more."""
    RunWorker.objects.filter(run_id=run_id, worker_id=worker_id[:100]).delete()


def concurrency_share(total: int, workers: int, place: int) -> int:
    """This worker's part of the run's concurrency: an even split, the remainder to the first."""
    workers = max(1, workers)
    return max(1, total // workers + (1 if place < total % workers else 0))
