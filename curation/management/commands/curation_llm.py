"""Draft reference answers or translate items with an LLM, with progress; resumable, and
Ctrl-C stops it at once (what came back is kept)."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, command_refuses_archived, refuse_archived_in_command
from core.command_workspace import (
    add_workspace_argument,
    command_workspace,
    command_workspace_said,
    named,
    workspace_said,
)
from core.errors import UserbenchError
from core.progress import progress_bar
from curation.datasets.llm_steps import (
    curation_job_endpoint_set,
    curation_job_restart,
    curation_job_run,
    job_cut_off_count,
    reference_job_create,
    translation_job_create,
)
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.datasets.services import VersionError, dataset_working_copy
from curation.models import CurationJob, Dataset
from llm.cli import add_call_options
from llm.models import Endpoint

STEP_KINDS = {"references": CurationJob.Kind.REFERENCE, "translate": CurationJob.Kind.TRANSLATION}


class Command(BaseCommand):
    # The system checks import every URL module, the statistics stack included (about 0.8 s):
    # a researcher waiting for a run id need not wait for them (`manage.py check`, the web server
    # and the test suite run them).
    requires_system_checks = []
    help = (
        "references: draft a reference for every item of a working dataset without one; "
        "translate: translate and localise its English items (ChineseAlpacaEval 2.1-2.2). "
        "--resume JOB continues a stopped job, or starts a failed one again (its failed items only), "
        "without sending finished items again; with --endpoint it goes on at that endpoint. "
        "A frozen (imported) dataset never changes: --copy works on a working copy of it, made in the same step. "
        "Exits non-zero unless every item got a complete result."
    )

    def add_arguments(self, parser):
        parser.add_argument("step", choices=["references", "translate"])
        parser.add_argument("--dataset", help="working dataset name (or a frozen one with --copy)")
        parser.add_argument(
            "--copy",
            nargs="?",
            const="",
            default=None,
            metavar="NAME",
            help="work on a working copy of the frozen --dataset (default name: <dataset>-work); "
            "run again with the same name to continue in that copy",
        )
        parser.add_argument(
            "--model",
            help="model name (default: CURATION_REFERENCE_MODEL / CURATION_TRANSLATION_MODEL when set, else the "
            "endpoint's default model, OPENAI_MODEL for the default endpoint)",
        )
        parser.add_argument(
            "--endpoint",
            default=None,
            help="endpoint name (default: OPENAI_BASE_URL; with --resume: the job's own, 'default' for OPENAI_BASE_URL)",
        )
        add_call_options(parser, what=" (default: the endpoint's stated limit, else auto)")
        parser.add_argument("--resume", type=int, help="continue this job id")
        add_workspace_argument(parser, "the dataset and the endpoint")

    def handle(
        self,
        *args,
        step,
        dataset=None,
        model=None,
        endpoint=None,
        concurrency=None,
        resume=None,
        copy=None,
        timeout=None,
        max_tokens=None,
        **options,
    ):
        if resume is not None:
            job = self.resumed(resume, step, endpoint, options.get("workspace"))
        else:
            endpoint = endpoint or ""
            workspace = command_workspace_said(
                self,
                options.get("workspace"),
                [
                    named("dataset", dataset, Dataset.objects.filter(name=dataset)),
                    named(
                        "endpoint", "" if endpoint == "default" else endpoint, Endpoint.objects.filter(name=endpoint)
                    ),
                ],
            )
            try:
                found = dataset_by_name(name=dataset or "", workspace_id=workspace.pk if workspace else None)
                refuse_archived_in_command(found)
            except (DatasetNotFound, ArchivedError) as error:
                raise CommandError(str(error)) from None
            if found.frozen_at is not None and copy is None:
                raise CommandError(
                    f"Dataset {found.name} is frozen and never changes; add --copy to work on a working copy of it."
                )
            try:
                if copy is not None:
                    found, made = dataset_working_copy(dataset=found, name=copy)
                    command_refuses_archived(found)  # a copy made before, archived since
                    self.stdout.write(
                        f"{'Made' if made else 'Using'} the working copy {found.name} "
                        f"({found.items.count()} items) of {dataset}."
                    )
                if step == "references":
                    # No --model: the endpoint's default model (curation_model_for); the job records it.
                    job = reference_job_create(dataset=found, model=model or "", endpoint_name=endpoint)
                else:
                    job = translation_job_create(dataset=found, model=model or "", endpoint_name=endpoint)
            except VersionError as error:
                raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(f"job {job.pk}: {job.total} items")
        self.stdout.write(f"model: {job.model}")
        self.stdout.flush()

        def progress(current):
            current = CurationJob.objects.get(pk=current.pk)
            self.stdout.write(
                f"\r{current.kind} job {current.pk}: {progress_bar(current.done, current.total)} done, "
                f"{current.failed} failed",
                ending="",
            )
            self.stdout.flush()

        try:
            job = curation_job_run(
                job_id=job.pk,
                in_flight=concurrency,
                on_progress=progress,
                max_tokens=max_tokens,
                timeout_seconds=timeout,
                interruptible=True,
            )
        except ValueError as error:
            raise CommandError(f"{error}\nStart it again with --resume {job.pk} (and --endpoint NAME).") from None
        cut_off = job_cut_off_count(job)
        self.stdout.write("")
        summary = f"job {job.pk} {job.status}: {job.done} done, {job.failed} failed ({cut_off} cut off) of {job.total}"
        if job.stopped == "signal":
            self.stdout.write(summary)
            self.stdout.write(
                f"Stopped; finished items are kept and are not sent again. Continue with: "
                f"manage.py curation_llm {step} --resume {job.pk}"
            )
            raise SystemExit(130)
        if job.done < job.total:
            detail = f" Last error: {job.last_error.rstrip('.')}." if job.last_error else ""
            again = f"--resume {job.pk}" + (" --max-tokens N, N above the limit that cut them off" if cut_off else "")
            raise CommandError(f"{summary}.{detail} Start it again with {again} (and --endpoint NAME to use another).")
        self.stdout.write(self.style.SUCCESS(summary))

    def resumed(self, job_id: int, step: str, endpoint: str | None, slug: str | None = None) -> CurationJob:
        """The job to continue: a failed one is started again first (its failed items only),
        on `endpoint` if one is named (looked up in the job's workspace); an unfinished one goes
        on, at `endpoint` if named. A job of another workspace than the one named is unknown;
        the command says which workspace the job is in."""
        workspace = command_workspace(slug) if slug else None
        job = CurationJob.objects.select_related("dataset__workspace").filter(pk=job_id).first()
        if job is None or (workspace is not None and job.dataset.workspace_id != workspace.pk):
            raise CommandError(f"No curation job {job_id}" + (f" in workspace {workspace.slug}." if workspace else "."))
        workspace_said(self, job.dataset.workspace)
        if job.kind != STEP_KINDS[step]:
            raise CommandError(f"Job {job.pk} is a {job.get_kind_display().lower()} job, not {step}.")
        # Its dataset archived since: read-only until restored, so the job does not go on.
        command_refuses_archived(job.dataset)
        endpoint_name = None if endpoint is None else ("" if endpoint == "default" else endpoint)
        try:
            if job.status == CurationJob.Status.FAILED:
                job, count = curation_job_restart(job_id=job.pk, endpoint_name=endpoint_name)
                where = job.endpoint_name or "the default endpoint"
                self.stdout.write(f"Job {job.pk} failed before: {count} item(s) sent again, at {where}.")
            elif endpoint_name is not None:
                job = curation_job_endpoint_set(job_id=job.pk, endpoint_name=endpoint_name)
        except UserbenchError as error:
            raise CommandError(str(error)) from None
        return job
