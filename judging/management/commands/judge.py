"""`judge`: create a judge run over a dataset and its candidates, then run it and show progress."""

import os
import time

from django.core.management.base import BaseCommand, CommandError

from curation.models import Dataset
from judging.execution import run_execute_inline
from judging.management.parameters import add_system_prompt_arguments, system_prompt_from, temperature_argument
from judging.management.progress import progress_line
from judging.models import CandidateModel, JudgeRun
from judging.prompts import TEMPLATE_SETS
from judging.selectors import run_progress
from judging.services import DEFAULT_SHARD_SIZE, run_create, run_enqueue
from llm.models import Endpoint


def follow(command: BaseCommand, run: JudgeRun, *, poll: float = 1.0) -> None:
    """Print the run's progress until it stops; Ctrl-C stops watching, not the workers."""
    try:
        while True:
            run.refresh_from_db()
            command.stdout.write("\r" + progress_line(run_progress(run=run)), ending="")
            command.stdout.flush()
            if run.status not in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
                break
            time.sleep(poll)
    except KeyboardInterrupt:
        command.stdout.write(
            f"\nStopped watching; run {run.pk} goes on in the workers ('judge_resume {run.pk}' after a crash)."
        )
        return
    command.stdout.write(f"\nRun {run.pk}: {run.get_status_display()}.")


def run_here(command: BaseCommand, run: JudgeRun) -> None:
    """Execute the run's queued shards in this process, printing progress as judgments are saved."""
    last = [0.0]

    def show():
        if time.monotonic() - last[0] >= 0.5:
            last[0] = time.monotonic()
            command.stdout.write("\r" + progress_line(run_progress(run=run)), ending="")
            command.stdout.flush()

    try:
        run_execute_inline(run=run, on_progress=show)
    except KeyboardInterrupt:
        command.stdout.write(
            f"\nInterrupted; saved judgments are kept. Continue with 'judge_resume {run.pk} --inline'."
        )
        command.stdout.flush()
        # Leave now: the event loop's thread would otherwise finish the calls still in flight
        # before the interpreter exits. Every saved judgment is committed; the shard is marked failed.
        os._exit(130)
    run.refresh_from_db()
    command.stdout.write("\r" + progress_line(run_progress(run=run)))
    command.stdout.write(f"Run {run.pk}: {run.get_status_display()}.")


class Command(BaseCommand):
    help = "Judge a dataset's candidate answers, pointwise or pairwise, and print the run id and progress."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--mode", required=True, choices=["pointwise", "pairwise"])
        parser.add_argument("--judge-model", required=True)
        parser.add_argument("--models", required=True, help="comma-separated candidate model names")
        parser.add_argument(
            "--reference-model",
            help="pairwise: the model compared against; pointwise: whose "
            "answers serve as the 8-point references (cross-validation)",
        )
        parser.add_argument("--endpoint", help="a named endpoint; default: OPENAI_BASE_URL / OPENAI_API_KEY")
        parser.add_argument("--concurrency", type=int, help="calls in flight per shard (default: the endpoint's)")
        parser.add_argument("--both-orders", action="store_true", help="pairwise: judge both sides, disagreement = tie")
        parser.add_argument("--seed", type=int, help="seed for the pairwise side order (recorded on the run)")
        parser.add_argument("--shard-size", type=int, default=DEFAULT_SHARD_SIZE)
        parser.add_argument("--max-tokens", type=int, help="the longest reply asked for (default: none sent)")
        parser.add_argument(
            "--temperature",
            type=temperature_argument,
            default=0.0,
            help="the judge's temperature (default 0); 'none' sends none, so the server's default applies",
        )
        add_system_prompt_arguments(parser, what="each judge prompt")
        parser.add_argument(
            "--template-set",
            choices=list(TEMPLATE_SETS),
            help="pointwise judge prompts: "
            + "; ".join(f"{k}: {v}" for k, v in TEMPLATE_SETS.items())
            + " (default: the dataset's own)",
        )
        parser.add_argument("--judge-provider", default="", help="who serves the judge (self-preference diagnostic)")
        parser.add_argument("--judge-family", default="", help="the judge's model family (self-preference diagnostic)")
        parser.add_argument(
            "--injection-probe",
            action="store_true",
            help="also judge constant adversarial answers (known attacks on judges) on every item, reported "
            "per template and never ranked (see `diagnostics --run RUN`)",
        )
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--inline", action="store_true", help="run the shards in this process instead of workers")
        how.add_argument("--no-wait", action="store_true", help="queue the shards, print the run id and return")

    def handle(self, *args, **options):
        try:
            dataset = Dataset.objects.get(name=options["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f"No dataset named {options['dataset']!r}.") from None
        names = [name.strip() for name in options["models"].split(",") if name.strip()]
        candidates = list(CandidateModel.objects.filter(name__in=names))
        unknown = sorted(set(names) - {c.name for c in candidates})
        if unknown:
            raise CommandError(f"Unknown model(s): {', '.join(unknown)}. Import or generate their answers first.")
        reference = None
        if options["reference_model"]:
            reference = CandidateModel.objects.filter(name=options["reference_model"]).first()
            if reference is None:
                raise CommandError(f"Unknown reference model {options['reference_model']!r}.")
        endpoint = None
        if options["endpoint"] and options["endpoint"] != "default":
            endpoint = Endpoint.objects.filter(name=options["endpoint"]).first()
            if endpoint is None:
                raise CommandError(f"Unknown endpoint {options['endpoint']!r}.")
        concurrency = options["concurrency"] or (endpoint.max_in_flight if endpoint else 16)
        system_prompt = system_prompt_from(options)
        try:
            run = run_create(
                dataset=dataset,
                mode=options["mode"],
                judge_model=options["judge_model"],
                candidates=candidates,
                reference_model=reference,
                endpoint=endpoint,
                concurrency=concurrency,
                both_orders=options["both_orders"],
                seed=options["seed"],
                shard_size=options["shard_size"],
                max_tokens=options["max_tokens"],
                temperature=options["temperature"],
                system_prompt=system_prompt,
                template_set=options["template_set"],
                judge_provider=options["judge_provider"],
                judge_family=options["judge_family"],
                injection_probe=options["injection_probe"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Run {run.pk}: {run.total} judgments in {run.shards.count()} shards (seed {run.seed}).")
        if options["inline"]:
            run_here(self, run)
            return
        run_enqueue(run=run)
        if options["no_wait"]:
            self.stdout.write(
                "Queued on 'judging'; follow it with a worker running: manage.py db_worker --queue-name judging"
            )
            return
        follow(self, run)
