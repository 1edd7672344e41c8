"""Thin task wrappers for curation's background LLM steps (queue `default`)."""

from django.tasks import task

from curation.datasets.llm_steps import curation_job_run
from curation.datasets.uploads import dataset_upload_execute
from curation.models import Submission
from curation.review.services import submission_process


@task(queue_name="default")
def curation_job_task(job_id: int) -> str:
    job = curation_job_run(job_id=job_id)
    return f"{job.kind} job {job.pk}: {job.done} done, {job.failed} failed of {job.total}"


@task(queue_name="default")
def submission_process_task(submission_id: int) -> str:
    """The automatic curation steps for a just-finished submission, off the participant's request."""
    submission = Submission.objects.get(pk=submission_id)
    processed = submission_process(submission=submission)
    return f"submission {submission_id}: {processed} cases processed"


@task(queue_name="default")
def dataset_upload_task(upload_id: int) -> str:
    """A large dataset file read and stored (curation.datasets.uploads.dataset_upload_execute), on
    `default` beside large answers uploads."""
    return dataset_upload_execute(upload_id=upload_id)
