"""Withdraw a study participant and erase their data wherever it was copied."""

from django.core.management.base import BaseCommand, CommandError

from core.command_workspace import add_workspace_argument, command_workspace_said, named
from curation.models import Study
from curation.studies.services import WithdrawalError, participant_withdraw


class Command(BaseCommand):
    help = (
        "withdraw_participant --study SLUG (--prolific-pid ID | --submission N): erase the participant's "
        "submissions, cases and drafts, delete their items from working datasets and turn them into "
        "tombstones in frozen versions. Recorded in the audit log."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        add_workspace_argument(parser, "the study")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--prolific-pid", dest="prolific_pid")
        who.add_argument("--submission", type=int)

    def handle(self, *args, study, prolific_pid=None, submission=None, **options):
        workspace = command_workspace_said(
            self, options.get("workspace"), [named("study", study, Study.objects.filter(slug=study))]
        )
        studies = Study.objects.filter(slug=study)
        found = (studies if workspace is None else studies.filter(workspace=workspace)).first()
        if found is None:
            raise CommandError(
                f"No study with slug {study!r}" + (f" in workspace {workspace.slug}." if workspace else ".")
            )
        try:
            report = participant_withdraw(study=found, prolific_pid=prolific_pid or "", submission_id=submission)
        except WithdrawalError as error:
            raise CommandError(str(error)) from None
        versions = ", ".join(report["frozen_versions"]) or "none"
        self.stdout.write(
            f"Erased {len(report['submissions'])} submission(s), {report['cases']} case(s); "
            f"{report['items_deleted']} item(s) deleted, {report['items_tombstoned']} tombstoned "
            f"(frozen versions amended: {versions}); {report['cached_replies']} cached repl(ies) purged."
        )
