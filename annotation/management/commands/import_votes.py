from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import AnnotationError
from annotation.management.commands._campaign_args import resolve
from annotation.vote_import import votes_import
from core.command_workspace import add_workspace_argument


class Command(BaseCommand):
    help = (
        "Import human pairwise votes (JSONL: question or question_id, model_a, model_b, "
        "winner = model_a|model_b|tie|cannot_determine, annotator[, comment]). Whole file or nothing: "
        "a bad line is named with what was expected, and all unknown questions and models are named "
        "at once. Models need no answers here; --create-models creates the unknown ones. Running it "
        "again adds nothing twice. UTF-8; blank lines are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--campaign", help="Attach the votes to this campaign (slug).")
        add_workspace_argument(parser)
        parser.add_argument(
            "--create-models", action="store_true", help="Create the models the file names that do not exist yet."
        )

    def handle(self, *args, file, dataset, campaign=None, create_models=False, **options):
        found, target = resolve(self, dataset, campaign, options.get("workspace"))
        try:
            # Binary: the reader decodes line by line, so an encoding error names its line.
            with file.open("rb") as stream:
                result = votes_import(
                    dataset=found,
                    lines=stream,
                    campaign=target,
                    create_models=create_models,
                    progress=lambda n: self.stderr.write(f"  checked {n} lines", ending="\r"),
                )
        except FileNotFoundError:
            raise CommandError(f"No such file: {file}") from None
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}") from None
        except AnnotationError as error:
            raise CommandError(str(error)) from None
        if result["models_created"]:
            self.stdout.write(f"Created {len(result['models_created'])} models: {', '.join(result['models_created'])}.")
        self.stdout.write(
            f"Read {result['read']} votes: {result['created']} imported, "
            f"{result['already_imported']} already imported before."
        )
