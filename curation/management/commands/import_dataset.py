from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.command_workspace import workspace_said
from core.errors import UserbenchError
from core.import_checks import MAX_TEXT_CHARS
from core.workspaces import workspace_for_command
from curation.datasets.importers import DataImportError, dataset_import
from curation.datasets.public_formats import public_formats


class Command(BaseCommand):
    help = (
        "Import a public dataset file (a benchmark's item file: see --format) as a frozen dataset "
        "version. Whole file or nothing: a bad line is named with what was expected. UTF-8 (a BOM is fine); "
        f"questions and references up to {MAX_TEXT_CHARS:,} characters; blank lines are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", required=True, choices=public_formats(), dest="fmt")
        parser.add_argument("--name", required=True, help="name of the new dataset version")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--workspace", help="slug of the workspace the dataset belongs to (needed when there are several)"
        )

    def handle(self, *args, file, fmt, name, description, workspace=None, **options):
        try:
            place = workspace_for_command(workspace, required=True)
        except UserbenchError as error:
            raise CommandError(str(error)) from None
        # Said first: a refusal (a name taken in this workspace) then says which workspace it was.
        workspace_said(self, place)
        try:
            # Binary: the reader decodes line by line, so an encoding error names its line.
            with file.open("rb") as stream:
                dataset = dataset_import(fmt=fmt, stream=stream, name=name, description=description, workspace=place)
        except FileNotFoundError:
            raise CommandError(f"No such file: {file}") from None
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}") from None
        except (DataImportError, UserbenchError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Imported {dataset.items.count()} items into dataset {dataset.name!r}.")
