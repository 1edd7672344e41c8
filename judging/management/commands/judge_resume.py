"""`judge_resume RUN`: continue a run after a crash, a stop or failed calls, repeating no
finished call; optionally with a new concurrency, timeout or max_tokens."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from judging.errors import RunError
from judging.management.progress import follow, leave_now, run_here
from judging.models import BatchJob
from judging.papers.reproduce import reproduction_table_of
from judging.runs.lookup import run_by_id
from judging.runs.resume import run_resume
from llm.cli import add_call_options


class Command(BaseCommand):
    # The system checks import every URL module, the statistics stack included (about 0.8 s):
    # a researcher waiting for a run id need not wait for them (`manage.py check`, the web server
    # and the test suite run them).
    requires_system_checks = []
    help = (
        "Re-queue what a crash, a stop or failed calls left of a run, then follow it. --concurrency, "
        "--timeout and --max-tokens change the run from here on (a new max_tokens sends again the "
        "replies the old one cut off)."
    )

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)
        parser.add_argument("--force", action="store_true", help="also take shards whose heartbeat is still fresh")
        add_call_options(parser, what=" across all workers")
        parser.add_argument(
            "--live",
            action="store_true",
            help="a batch run: send what is left (failed or expired lines) as live calls instead of a new batch",
        )
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--inline", action="store_true", help="run the shards in this process instead of workers")
        how.add_argument("--no-wait", action="store_true")

    def handle(self, *args, run, force, inline, no_wait, concurrency, timeout, max_tokens, live=False, **options):
        try:
            judge_run = run_by_id(run_id=run)
        except RunError as error:
            raise CommandError(str(error)) from None
        # An archived run, or one whose dataset is archived, is read-only until restored.
        command_refuses_archived(judge_run, judge_run.dataset)
        try:
            count = run_resume(
                run=judge_run,
                force=force,
                enqueue=not inline,
                concurrency=concurrency,
                timeout_seconds=timeout,
                max_tokens=max_tokens,
                live=live,
            )
        except RunError as error:
            raise CommandError(str(error)) from None
        judge_run.refresh_from_db()
        if judge_run.batch:
            out = judge_run.batch_jobs.filter(status__in=BatchJob.OPEN).count()
            self.stdout.write(
                f"Run {judge_run.pk}: batch run; {out} batch(es) still at the provider are picked up, never "
                "uploaded again, and what has no result goes in a new batch."
            )
        else:
            self.stdout.write(f"Run {judge_run.pk}: {count} shard(s) queued again.")
        self.stdout.flush()
        if inline:
            run_here(self, judge_run)
        elif not no_wait:
            follow(self, judge_run)
        else:
            return
        self._paper_table(judge_run)
        leave_now(self, 0)

    def _paper_table(self, run) -> None:
        """A run `reproduce` made (and a crash cut short) ends, as `reproduce` would have, with
        the paper's table."""
        run.refresh_from_db()
        lines = reproduction_table_of(run=run)
        if lines:
            self.stdout.write("")
            for line in lines:
                self.stdout.write(line)
