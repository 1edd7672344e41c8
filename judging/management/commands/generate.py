"""`generate`: candidate answers from an endpoint for a dataset, with a benchmark's parameters;
resumable, and Ctrl-C stops it at once (what came back is kept)."""

from dataclasses import replace

from django.core.management.base import BaseCommand, CommandError

from core.progress import progress_bar
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from judging.answers.generation import GENERATION_PRESETS, answers_generate
from llm.cli import add_call_options
from llm.errors import EndpointError
from llm.selectors import endpoint_config


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

    def handle(self, *args, dataset, model, endpoint, concurrency, timeout, max_tokens, preset=None, **options):
        try:
            target = dataset_by_name(name=dataset)
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        try:
            config = endpoint_config(endpoint)
        except EndpointError as error:
            raise CommandError(str(error)) from None
        if timeout:
            config = replace(config, timeout_seconds=timeout)

        def show(counts):
            self.stdout.write(
                f"\r{progress_bar(counts['generated'], counts['total'])} generated, {counts['failed']} failed, "
                f"{counts['cut_off']} cut off",
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
            f"\n{counts['generated']} generated, {counts['failed']} failed, {counts['cut_off']} cut off, "
            f"{counts['skipped']} already answered."
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
            hint = " (raise --max-tokens for the cut-off ones)" if counts["cut_off"] else ""
            raise CommandError(
                f"{counts['failed'] + counts['cut_off']} of {counts['total']} items got no complete answer{hint}; "
                "run the same command to try them again."
            )
