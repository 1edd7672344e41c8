"""Thin task wrappers for annotation: stored figures are refreshed on the `default` queue.

annotation/figures.py queues `figures_task` and the task calls back into it: the service <-> task
loop of a queued app (the statistics stack itself loads only where figures are computed)."""

from django.tasks import task

from annotation.figures import figures_refresh_queued
from core.figures import REFRESH_TASK_PRIORITY


@task(queue_name="default", priority=REFRESH_TASK_PRIORITY)
def figures_task(figures_id: int) -> str:
    figures = figures_refresh_queued(figures_id=figures_id)
    return figures.key if figures is not None else "gone"
