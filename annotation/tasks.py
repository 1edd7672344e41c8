"""Thin task wrappers for annotation: stored figures are refreshed on the `default` queue."""

from django.tasks import task


@task(queue_name="default")
def figures_task(figures_id: int) -> str:
    from annotation.figures import figures_refresh  # the statistics stack loads only in the worker

    figures = figures_refresh(figures_id=figures_id)
    return figures.key if figures is not None else "gone"
