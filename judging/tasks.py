"""Thin task wrappers. Shards run on the `judging` queue so long LLM work never starves
`default`, where stored figures are refreshed."""

from django.tasks import task

from core.figures import REFRESH_TASK_PRIORITY

# The one import loop judging keeps, as every queued Django app does: these tasks call the
# engine, the figures, the generation service and large answers uploads, and those queue them
# through judging/dispatch.py, which imports this module when it enqueues, inside the functions that do.
from judging.answers.generation_jobs import generation_execute
from judging.answers.uploads import upload_execute
from judging.engine.batch import run_batch_execute
from judging.engine.execution import shard_execute
from judging.engine.watchdog import run_watch


@task(queue_name="judging")
def judge_shard_task(shard_id: int) -> str:
    return shard_execute(shard_id=shard_id)


@task(queue_name="judging")
def batch_run_task(run_id: int) -> str:
    """A pass over a batch run's batches (judging.engine.batch.run_batch_execute)."""
    return run_batch_execute(run_id=run_id)


@task(queue_name="default", priority=REFRESH_TASK_PRIORITY)
def run_figures_task(run_id: int) -> str:
    from judging.results.figures import run_figures_refresh  # statistics modules load only when needed

    figures = run_figures_refresh(run_id=run_id)
    if figures is None:
        return "gone"
    assert figures.computed_at is not None  # run_figures_refresh sets it
    return figures.computed_at.isoformat()


@task(queue_name="judging")
def run_watch_task(run_id: int) -> str:
    """The run's watchdog: a dead worker's shards go back to the queue (judging.engine.watchdog.run_watch)."""
    return f"{run_watch(run_id=run_id)} shard(s) taken back"


@task(queue_name="judging")
def answers_generate_task(generation_id: int) -> str:
    """A generation of candidate answers started from a page or the API."""
    return generation_execute(generation_id=generation_id)


@task(queue_name="default")
def answers_upload_task(upload_id: int) -> str:
    """A large answers file read and stored (judging.answers.uploads.upload_execute). On `default`:
    it takes seconds, and must not wait behind a long run's shards on `judging`."""
    return upload_execute(upload_id=upload_id)
