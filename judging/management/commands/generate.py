"""`generate`: candidate answers from an endpoint for a dataset, with a benchmark's parameters; resumable."""

from django.core.management.base import BaseCommand, CommandError

from curation.models import Dataset
from judging.generation import GENERATION_PRESETS, answers_generate
from llm.client import endpoint_config


class Command(BaseCommand):
    help = "Generate a model's answers to every dataset item it has not answered yet."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", required=True)
        parser.add_argument("--endpoint", help="a named endpoint; default: OPENAI_BASE_URL / OPENAI_API_KEY")
        parser.add_argument("--concurrency", type=int)
        parser.add_argument("--max-tokens", type=int, help="the longest answer asked for (default: the preset's)")
        parser.add_argument(
            "--preset",
            choices=list(GENERATION_PRESETS),
            help="ask as a benchmark's authors did; "
            + "; ".join(f"{name}: {preset.source}" for name, preset in GENERATION_PRESETS.items())
            + " (default: temperature by category as in AlignBench's table, 0.7 otherwise, no system prompt)",
        )

    def handle(self, *args, dataset, model, endpoint, concurrency, max_tokens, preset=None, **options):
        try:
            target = Dataset.objects.get(name=dataset)
        except Dataset.DoesNotExist:
            raise CommandError(f"No dataset named {dataset!r}.") from None
        try:
            config = endpoint_config(endpoint)
        except ValueError as error:
            raise CommandError(str(error)) from None

        def show(done, failed, total):
            self.stdout.write(f"\r{done}/{total} generated, {failed} failed", ending="")
            self.stdout.flush()

        try:
            counts = answers_generate(
                dataset=target,
                model_name=model,
                endpoint=config,
                concurrency=concurrency,
                max_tokens=max_tokens,
                preset=preset,
                on_progress=show,
            )
        except KeyboardInterrupt:
            self.stdout.write("\nInterrupted; answers saved so far are kept. Run the same command to continue.")
            raise SystemExit(130) from None
        self.stdout.write(
            f"\n{counts['generated']} generated, {counts['failed']} failed, {counts['skipped']} already answered."
        )
        for error in counts["errors"][:20]:
            self.stderr.write(f"  {error}")
