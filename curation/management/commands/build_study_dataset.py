"""Create or extend a study's working dataset from its accepted cases."""

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from curation.datasets.services import VersionError, study_dataset_build
from curation.models import Dataset, Study


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
        # The study, and the working dataset it extends when that exists already.
        command_refuses_archived(found, Dataset.objects.filter(name=name, workspace=found.workspace).first())
        try:
            dataset, added = study_dataset_build(study=found, name=name)
        except VersionError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            self.style.SUCCESS(f"{added} items added to {dataset.name} ({dataset.items.count()} in all).")
        )
