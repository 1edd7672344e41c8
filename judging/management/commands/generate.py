"""`generate`: candidate answers from an endpoint for a dataset, with a benchmark's parameters;
resumable, and Ctrl-C stops it at once (what came back is kept)."""

from dataclasses import replace

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from core.progress import progress_bar
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Dataset
from judging.answers.generation import (
    GENERATION_PRESETS,
    GenerationError,
    answers_generate,
    cut_off_text,
    cut_off_way_on,
)
from judging.answers.generation_batch import generation_batch_wait
from judging.answers.generation_jobs import generation_batch_open
from judging.batching import batch_jobs_progress
from judging.management.progress import batch_summary
from judging.models import AnswerGeneration, BatchJob
from llm.cli import add_call_options
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.selectors import endpoint_by_name, endpoint_config


class Command(BaseCommand):
    # The system checks import every URL module, the statistics stack included (about 0.8 s):
    # a researcher waiting for a run id need not wait for them (`manage.py check`, the web server
    # and the test suite run them).
    requires_system_checks = []
    help = (
        "Generate a model's answers to every dataset item it has not answered yet. Exits non-zero "
        "unless every item got a complete answer."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", required=True)
        parser.add_argument("--endpoint", help="a named endpoint; default: OPENAI_BASE_URL / OPENAI_API_KEY")
        add_call_options(parser, what=" (default: the endpoint's stated limit, else auto)")
        parser.add_argument(
            "--preset",
            choices=list(GENERATION_PRESETS),
            help="ask as a benchmark's authors did; "
            + "; ".join(f"{name}: {preset.source}" for name, preset in GENERATION_PRESETS.items())
            + " (default: temperature by category as in AlignBench's table, 0.7 otherwise, no system prompt;"
            " an explicit --max-tokens wins over the preset's)",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="ask through the endpoint's Batch API (about half price, answers within 24 h); Ctrl-C stops the "
            "waiting, never the batches, and the same command picks them up",
        )
        add_workspace_argument(parser, "the dataset and the endpoint")

    def handle(self, *args, dataset, model, endpoint, concurrency, timeout, max_tokens, preset=None, **options):
        workspace = command_workspace_said(
            self,
            options.get("workspace"),
            [
                named("dataset", dataset, Dataset.objects.filter(name=dataset)),
                named("endpoint", endpoint if endpoint != "default" else None, Endpoint.objects.filter(name=endpoint)),
            ],
        )
        try:
            target = dataset_by_name(name=dataset, workspace_id=workspace.pk if workspace else None)
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        command_refuses_archived(target)
        if options.get("batch"):
            self._batch(target, model, endpoint, preset, max_tokens)
            return
        try:
            # The dataset's workspace's endpoint of that name (or the shared default).
            config = endpoint_config(endpoint, workspace_id=target.workspace_id)
        except EndpointError as error:
            raise CommandError(str(error)) from None
        if timeout:
            config = replace(config, timeout_seconds=timeout)

        def show(counts):
            self.stdout.write(
                f"\r{progress_bar(counts['generated'], counts['total'])} generated, {counts['failed']} failed, "
                f"{cut_off_text(counts['cut_off'], counts['cut_off_at'])}",
                ending="",
            )
            self.stdout.flush()

        self.stdout.write(f"{model}: answering the items of {dataset} it has not answered yet...")
        self.stdout.flush()
        counts = answers_generate(
            dataset=target,
            model_name=model,
            endpoint=config,
            concurrency=concurrency,
            max_tokens=max_tokens,
            preset=preset,
            on_progress=show,
            interruptible=True,
        )
        summary = (
            f"\n{counts['generated']} generated, {counts['failed']} failed, "
            f"{cut_off_text(counts['cut_off'], counts['cut_off_at'])}, {counts['skipped']} already answered."
        )
        self.stdout.write(summary)
        for message in counts["errors"][:20]:
            self.stderr.write(f"  {message}")
        if counts["interrupted"]:
            self.stdout.write(
                "Stopped; answers saved so far are kept and are not asked for again. Run the same command to continue."
            )
            raise SystemExit(130)
        if counts["stopped"]:
            raise CommandError(counts["stopped"])
        if counts["failed"] or counts["cut_off"]:
            hint = f" ({cut_off_way_on(counts['cut_off'], counts['cut_off_at'])})" if counts["cut_off"] else ""
            raise CommandError(
                f"{counts['failed'] + counts['cut_off']} of {counts['total']} items got no complete answer{hint}; "
                "run the same command to try them again."
            )

    def _batch(self, dataset, model, endpoint, preset, max_tokens):
        try:
            row = (
                endpoint_by_name(name=endpoint, workspace_id=dataset.workspace_id)
                if endpoint and endpoint != "default"
                else None
            )
            generation, made = generation_batch_open(
                dataset=dataset, model_name=model, endpoint=row, preset=preset or "", max_tokens=max_tokens
            )
        except (EndpointError, GenerationError) as error:
            raise CommandError(str(error)) from None
        out = generation.batch_jobs.filter(status__in=BatchJob.OPEN).count()
        self.stdout.write(
            f"Generation {generation.pk}: {model}'s answers to {generation.total} item(s) of {dataset.name} "
            + ("through the Batch API." if made else f"through the Batch API, picked up with {out} batch(es) out.")
        )
        self.stdout.flush()

        def show():
            generation.refresh_from_db()
            batches = batch_jobs_progress(generation.batch_jobs.all())
            self.stdout.write(
                f"\r{progress_bar(generation.generated, generation.total)} generated, {generation.failed} failed, "
                f"{cut_off_text(generation.cut_off, generation.max_tokens)}; {batch_summary(batches)}",
                ending="",
            )
            self.stdout.flush()

        status = generation_batch_wait(generation=generation, on_progress=show)
        generation.refresh_from_db()
        if status == "interrupted":
            self.stdout.write(
                "\nStopped waiting; the batches stay at the provider and are never uploaded again. Run the same "
                "command to continue."
            )
            raise SystemExit(130)
        self.stdout.write(
            f"\n{generation.generated} generated, {generation.failed} failed, "
            f"{cut_off_text(generation.cut_off, generation.max_tokens)}."
        )
        for message in generation.error.splitlines()[:20]:
            self.stderr.write(f"  {message}")
        if status == AnswerGeneration.Status.FAILED:
            raise CommandError(generation.error.splitlines()[0] if generation.error else "The generation failed.")
        if generation.failed or generation.cut_off:
            hint = f" ({cut_off_way_on(generation.cut_off, generation.max_tokens)})" if generation.cut_off else ""
            raise CommandError(
                f"{generation.failed + generation.cut_off} of {generation.total} items got no complete answer{hint}; "
                "run the same command to try them again."
            )
