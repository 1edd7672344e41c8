"""AlignBench 2.2 difficulty filter: exclude the X % of items with the highest mean judge score."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from curation.datasets.services import VersionError
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.difficulty import difficulty_filter_from_run
from judging.runs.lookup import run_by_id


class Command(BaseCommand):
    help = "From a judge run over filter models, mark the easiest items as excluded."

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--percent", type=int, default=50)

    def handle(self, *args, run, percent, **options):
        try:
            found = run_by_id(run_id=run, queryset=JudgeRun.objects.select_related("dataset"))
            refuse_archived_in_command(found, found.dataset)
            flt = difficulty_filter_from_run(run=found, percent=percent)
        except (RunNotFound, ArchivedError) as error:
            raise CommandError(str(error)) from None
        except VersionError as error:
            raise CommandError(" ".join(error.messages)) from None
        for score in flt.scores.select_related("item").order_by("-mean_score", "item__external_id"):
            mark = "excluded" if score.excluded else "kept"
            self.stdout.write(f"{score.item.external_id}\t{score.mean_score:.2f}\t{score.judgments}\t{mark}")
        self.stdout.write(
            self.style.SUCCESS(
                f"{flt.excluded_count} of {flt.item_count} items of {flt.dataset.name} excluded (top {percent}%)."
            )
        )
