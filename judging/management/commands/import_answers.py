from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from core.import_checks import MAX_TEXT_CHARS
from curation.models import Dataset
from judging.answers.imports import DataImportError, answer_format, answers_import


class Command(BaseCommand):
    help = (
        "Import one model's answers (JSONL with instruction/question/question_id and response, or a .csv file "
        "with a header naming those columns). Whole file "
        f"or nothing: a bad line is named with what was expected. UTF-8; answers up to {MAX_TEXT_CHARS:,} characters; "
        "blank lines are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Make the file the model's next version of answers; runs that used the one before keep it.",
        )
        add_workspace_argument(parser, "the dataset")

    def handle(self, *args, file, dataset, model, replace=False, **options):
        workspace = command_workspace_said(
            self, options.get("workspace"), [named("dataset", dataset, Dataset.objects.filter(name=dataset))]
        )
        # Archived work is absent from the commands' choices (an unknown name is the import's to say).
        command_refuses_archived(Dataset.objects.filter(name=dataset, workspace=workspace).first())
        try:
            # Binary: the reader decodes line by line, so an encoding error names its line.
            with file.open("rb") as stream:
                count = answers_import(
                    dataset_name=dataset,
                    model_name=model,
                    stream=stream,
                    file_format=answer_format(file.name),
                    replace=replace,
                    workspace_id=workspace.pk if workspace else None,
                )
        except FileNotFoundError:
            raise CommandError(f"No such file: {file}") from None
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}") from None
        except DataImportError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Imported {count} answers of {model!r} to dataset {dataset!r}.")
