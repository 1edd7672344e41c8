"""Create or extend a study's working dataset from its accepted cases."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from curation.datasets.services import VersionError, study_dataset_build
from curation.models import Study


class Command(BaseCommand):
    help = "Add an item per accepted, non-duplicate case of a study to a working dataset."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--name", required=True, help="working dataset name (created if missing)")
        add_workspace_argument(parser, "the study and the dataset")

    def handle(self, *args, study, name, **options):
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
            refuse_archived_in_command(found)
        except ArchivedError as error:
            raise CommandError(str(error)) from None
        try:
            dataset, added = study_dataset_build(study=found, name=name)
        except VersionError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            self.style.SUCCESS(f"{added} items added to {dataset.name} ({dataset.items.count()} in all).")
        )
