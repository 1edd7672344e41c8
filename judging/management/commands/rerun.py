"""`rerun RUN`: an identical run from a run's manifest, asking the judge again, to read its drift."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from judging.dispatch import run_enqueue
from judging.errors import RunError
from judging.management.commands.judge import follow, run_here
from judging.management.parameters import run_error_for_command
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id
from judging.runs.rerun import RerunRefused, run_rerun


class Command(BaseCommand):
    help = (
        "Start a run identical to RUN (same dataset content, answers, template versions, judge, endpoint, "
        "parameters and seed), refused when any of them changed; then `compare RUN NEW` reads the drift."
    )

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)
        parser.add_argument(
            "--cached",
            action="store_true",
            help="answer identical prompts from the response cache (a cheap reproduction; measures no drift)",
        )
        parser.add_argument(
            "--allow-changes", action="store_true", help="judge today's data even where it changed since RUN"
        )
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--inline", action="store_true", help="run the shards in this process instead of workers")
        how.add_argument("--no-wait", action="store_true", help="queue the shards, print the run id and return")

    def handle(self, *args, run, cached, allow_changes, inline, no_wait, **options):
        try:
            original = run_by_id(
                run_id=run, queryset=JudgeRun.objects.select_related("dataset", "endpoint", "reference_model")
            )
            refuse_archived_in_command(original, original.dataset)
            new = run_rerun(run=original, fresh_calls=not cached, allow_changes=allow_changes)
        except RerunRefused as error:
            raise CommandError(f"{error} Add --allow-changes to do so.") from None
        except ArchivedError as error:
            raise CommandError(str(error)) from None
        except RunError as error:
            raise run_error_for_command(error, {"allow_changes": "--allow-changes"}) from None
        for change in new.manifest.get("changes_since_original", []):
            self.stdout.write(f"Changed: {change}")
        calls = "cached replies allowed" if cached else "fresh calls"
        self.stdout.write(
            f"Run {new.pk}: a re-run of run {original.pk}, {new.total} judgments in {new.shards.count()} shards "
            f"(seed {new.seed}, {calls})."
        )
        if inline:
            run_here(self, new)
        else:
            run_enqueue(run=new)
            if no_wait:
                self.stdout.write(
                    "Queued on 'judging'; follow it with a worker running: manage.py db_worker --queue-name judging"
                )
                return
            follow(self, new)
        self.stdout.write(f"\nRead the drift with: manage.py compare {original.pk} {new.pk}")
