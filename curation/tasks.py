"""Thin task wrappers for curation's background LLM steps (queue `default`)."""

from django.tasks import task

from curation.llm_steps import curation_job_run


@task(queue_name="default")
def curation_job_task(job_id: int) -> str:
    job = curation_job_run(job_id=job_id)
    return f"{job.kind} job {job.pk}: {job.done} done, {job.failed} failed of {job.total}"
