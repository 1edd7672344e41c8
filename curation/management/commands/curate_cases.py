"""Run the automatic curation steps on submitted cases (the ones not processed yet, or all)."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from core.command_workspace import command_workspace, named, workspace_said
from core.progress import progress_bar
from curation.models import Case, Study, Submission
from curation.review.services import cases_process


class Command(BaseCommand):
    help = "Parse, extract, detect language, find duplicates and PII hints for submitted cases."

    def add_arguments(self, parser):
        parser.add_argument("--study", help="only this study's cases (slug)")
        parser.add_argument("--all", action="store_true", help="process again cases already processed")
        parser.add_argument(
            "--workspace", help="only this workspace's studies (slug); with --study, the workspace it belongs to"
        )

    def handle(self, *args, study=None, all=False, **options):
        cases = Case.objects.filter(submission__status=Submission.Status.SUBMITTED).select_related("submission")
        slug = options.get("workspace")
        # Without --study or --workspace: every workspace's cases, as before (the operator's sweep).
        workspace = (
            command_workspace(slug, [named("study", study, Study.objects.filter(slug=study))])
            if (study or slug)
            else None
        )
        workspace_said(self, workspace)
        if workspace is not None:
            cases = cases.filter(submission__study__workspace=workspace)
        if study:
            found = Study.objects.filter(slug=study, **({"workspace": workspace} if workspace else {})).first()
            if found is None:
                raise CommandError(f"No study with slug {study!r}.")
            try:
                refuse_archived_in_command(found)
            except ArchivedError as error:
                raise CommandError(str(error)) from None
            cases = cases.filter(submission__study__slug=study)
        if not all:
            # Resumable: an interrupted run continues with the cases it had not reached.
            cases = cases.filter(curation__isnull=True)
        chosen = list(cases.order_by("submission_id", "position"))
        total = len(chosen)

        def progress(done):
            if done == total or done % 50 == 0:
                self.stdout.write(f"{progress_bar(done, total)} cases processed")

        cases_process(cases=chosen, on_progress=progress)
        self.stdout.write(self.style.SUCCESS(f"{total} cases processed."))
