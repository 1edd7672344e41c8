"""`judge`: create a judge run over a dataset and its candidates, print its id at once, then
run it (workers, or `--inline` here) and show progress until it ends."""

from django.core.management.base import BaseCommand

from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from curation.models import Dataset
from judging.dispatch import run_enqueue
from judging.errors import RunError
from judging.management.parameters import (
    add_system_prompt_arguments,
    run_error_for_command,
    system_prompt_from,
    temperature_argument,
)
from judging.management.progress import follow, leave_now, run_here
from judging.prompts.building import TEMPLATE_SETS
from judging.runs.creation import run_create, run_spec_by_names
from judging.runs.spec import DEFAULT_SHARD_SIZE
from llm.cli import add_call_options
from llm.models import Endpoint

# The options named beside an error whose message says what is missing but not where it goes.
OPTIONS = {
    "judge_model": "--judge-model",
    "candidates": "--models",
    "reference_model": "--reference-model",
    "exclude_missing_references": "--exclude-missing-references",
    # Not "batch": its refusal already says what to do (run live), so "(--batch)" after it
    # read as a stray word.
}


class Command(BaseCommand):
    # The system checks import every URL module, the statistics stack included (about 0.8 s):
    # a researcher waiting for a run id need not wait for them (`manage.py check`, the web server
    # and the test suite run them).
    requires_system_checks = []
    help = (
        "Judge a dataset's candidate answers, pointwise or pairwise; print the run id and progress. "
        "Ctrl-C stops the run (what came back is kept; judge_resume continues). Exits non-zero unless "
        "every judgment has a result."
    )

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
        add_workspace_argument(parser, "the dataset and the endpoint")
        add_call_options(parser, what=" across all workers (default: the endpoint's stated limit, else auto)")
        parser.add_argument("--both-orders", action="store_true", help="pairwise: judge both sides, disagreement = tie")
        parser.add_argument("--seed", type=int, help="seed for the pairwise side order (recorded on the run)")
        parser.add_argument("--shard-size", type=int, default=DEFAULT_SHARD_SIZE)
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
        parser.add_argument(
            "--include-cut-off",
            action="store_true",
            help="judge answers cut off at max_tokens too (kept, marked cut off; left out by default)",
        )
        parser.add_argument(
            "--exclude-missing-references",
            action="store_true",
            help="leave out the items whose template judges against a reference they lack (recorded in the "
            "manifest); without it such items refuse the run",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="send the calls through the endpoint's Batch API (about half price, replies within 24 h); "
            "Ctrl-C stops the waiting, never the batches, and judge_resume picks them up",
        )
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--inline", action="store_true", help="run the shards in this process instead of workers")
        how.add_argument("--no-wait", action="store_true", help="queue the shards, print the run id and return")

    def handle(self, *args, **options):
        system_prompt = system_prompt_from(options)
        endpoint = options["endpoint"]
        workspace = command_workspace_said(
            self,
            options["workspace"],
            [
                named("dataset", options["dataset"], Dataset.objects.filter(name=options["dataset"])),
                named("endpoint", endpoint if endpoint != "default" else None, Endpoint.objects.filter(name=endpoint)),
            ],
        )
        # Archived work is absent from the commands' choices (an unknown name is the spec's to say).
        command_refuses_archived(Dataset.objects.filter(name=options["dataset"], workspace=workspace).first())
        try:
            spec = run_spec_by_names(
                workspace_id=workspace.pk if workspace else None,
                dataset=options["dataset"],
                models=options["models"].split(","),
                reference_model=options["reference_model"],
                endpoint=options["endpoint"],
                mode=options["mode"],
                judge_model=options["judge_model"],
                concurrency=options["concurrency"],
                both_orders=options["both_orders"],
                seed=options["seed"],
                shard_size=options["shard_size"],
                max_tokens=options["max_tokens"],
                temperature=options["temperature"],
                system_prompt=system_prompt,
                timeout_seconds=options["timeout"],
                template_set=options["template_set"],
                judge_provider=options["judge_provider"],
                judge_family=options["judge_family"],
                injection_probe=options["injection_probe"],
                exclude_missing_references=options["exclude_missing_references"],
                include_cut_off=options["include_cut_off"],
                batch=options["batch"],
            )
            run = run_create(spec=spec)
        except RunError as error:
            raise run_error_for_command(error, OPTIONS) from None
        concurrency = "auto" if run.concurrency_auto else run.concurrency
        # Flushed at once: piped to a log or `tee`, the id must not wait for the run to end.
        how = "through the Batch API" if run.batch else f"concurrency {concurrency}"
        self.stdout.write(
            f"Run {run.pk}: {run.total} judgments in {run.shards.count()} shards (seed {run.seed}, "
            f"{how}, max_tokens {run.max_tokens})."
        )
        self.stdout.flush()
        if options["inline"]:
            run_here(self, run)
            leave_now(self, 0)
            return
        run_enqueue(run=run)
        if options["no_wait"]:
            self.stdout.write(
                "Queued on 'judging'; follow it with a worker running: "
                "manage.py db_worker --queue-name judging --interval 0.05"
            )
            return
        follow(self, run)
        leave_now(self, 0)
