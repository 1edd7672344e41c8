import getpass
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from core.archiving import refuse_archived_in_command
from core.command_workspace import command_workspace, named, workspace_said
from core.errors import UserbenchError
from core.exports import EXPORTERS, ROW_FORMATS, ExportError, export_table, iter_export
from curation.datasets.public_formats import iter_public, public_formats
from curation.datasets.selectors import DatasetNotFound
from curation.models import Dataset, Study
from home.selectors import export_scope_resolve


def _shell_user() -> str:
    """The account that ran the command, for the audit log of personal exports."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


class Command(BaseCommand):
    help = (
        "Stream a table as CSV or JSONL (memory stays flat). Items can also be written in a benchmark's "
        "public format (see --format) that import_dataset reads back."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", help="dataset name")
        parser.add_argument("--study", help="study slug (submissions, cases)")
        parser.add_argument("--run", type=int, help="judge run id (judgments, leaderboard)")
        parser.add_argument(
            "--campaign", help="annotation campaign slug (votes, bt, agreement: that campaign's only, as its page)"
        )
        parser.add_argument(
            "--workspace", help="slug of a workspace: only its rows (default: every workspace, for the operator)"
        )
        parser.add_argument("--what", required=True, help=f"one of: {', '.join(sorted(EXPORTERS))}")
        parser.add_argument("--format", default="csv", dest="fmt", choices=ROW_FORMATS + public_formats())
        parser.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
        parser.add_argument(
            "--raw",
            action="store_true",
            help="cases: add participants' unreviewed text (recorded in the audit log)",
        )
        parser.add_argument(
            "--question-text",
            action="store_true",
            help="votes, judgments, answers: add each row's question text as a last column (recorded in the audit log)",
        )
        # Exporting is how a copy of archived work is kept before ARCHIVE_DAYS let it be purged: an
        # explicit flag reads it; without it, an archived name is refused as every command does.
        parser.add_argument(
            "--archived",
            action="store_true",
            help="read an archived dataset, study, run or campaign as it is (to keep a copy before it is purged)",
        )

    def handle(
        self,
        *args,
        dataset,
        study,
        run,
        what,
        fmt,
        output,
        raw=False,
        campaign=None,
        workspace=None,
        question_text=False,
        archived=False,
        **options,
    ):
        try:
            # No name and no --workspace: every workspace's rows (the operator's export), as before.
            names = [
                named("dataset", dataset, Dataset.objects.filter(name=dataset)),
                named("study", study, Study.objects.filter(slug=study)),
                named("campaign", campaign, Campaign.objects.filter(slug=campaign)),
            ]
            place = command_workspace(workspace, names) if workspace or any(names) else None
            workspace_said(self, place)
            scope = export_scope_resolve(
                dataset_name=dataset,
                study_slug=study,
                run_id=run,
                campaign_slug=campaign,
                workspace_id=place.pk if place is not None else None,
            )
            if not archived:
                # A run's or campaign's dataset archived leaves it out too.
                chosen = [obj for obj in scope.values() if obj is not None]
                refuse_archived_in_command(
                    *chosen, *(getattr(obj, "dataset", None) for obj in chosen), flag="--archived"
                )
            if place is not None and any(obj is not None and obj.workspace_id != place.pk for obj in scope.values()):
                raise ExportError(f"That dataset, study, run or campaign is not in workspace {place.slug!r}.")
            table = export_table(
                what,
                **scope,
                raw=raw,
                question_text=question_text,
                actor=None,
                via=f"command line ({_shell_user()})",
                workspaces={place.pk} if place is not None else None,
            )
            if fmt in public_formats():
                if what != "items":
                    raise ExportError(f"Public formats hold items only; use --what items with --format {fmt}.")
                chunks = iter_public(table.rows, fmt)
            else:
                chunks = iter_export(table, fmt)
            if output:
                with output.open("w", encoding="utf-8", newline="") as target:
                    for chunk in chunks:
                        target.write(chunk)
            else:
                for chunk in chunks:
                    self.stdout.write(chunk, ending="")
        except (ExportError, DatasetNotFound, UserbenchError) as error:
            raise CommandError(str(error)) from None
        except BrokenPipeError:
            # The reader (e.g. `| head`) stopped early: not an error of the export.
            sys.stderr.close()
            return
        if output:
            self.stderr.write(f"Wrote {output}.")
