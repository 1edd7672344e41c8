"""What a worker does with the stored-figures tasks, for tests that read the results pages.

Pages serve figures a background task computed (core/figures.py); the test database backend
only stores the tasks. `run_queued_figures` runs them as `db_worker` would, and `get_computed`
reads a page the way a researcher sees it once the worker has caught up."""

from django_tasks_db.models import DBTaskResult

from annotation.figures import figures_refresh
from judging.results.figures import run_figures_refresh

FIGURES_TASKS = {
    "annotation.tasks.figures_task": lambda pk: figures_refresh(figures_id=pk),
    "judging.tasks.run_figures_task": lambda pk: run_figures_refresh(run_id=pk),
}


def run_queued_figures() -> int:
    """Compute every queued figures task now; returns how many ran."""
    ran = 0
    for result in DBTaskResult.objects.filter(task_path__in=FIGURES_TASKS).order_by("enqueued_at"):
        FIGURES_TASKS[result.task_path](*result.args_kwargs["args"])
        result.delete()
        ran += 1
    return ran


def get_computed(client, url, *args, **kwargs):
    """The page after its figures were asked for and computed: read, let the worker run, read again."""
    client.get(url, *args, **kwargs)
    run_queued_figures()
    return client.get(url, *args, **kwargs)
