from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._campaign_args import resolve
from annotation.services import AnnotationError, votes_import


class Command(BaseCommand):
    help = (
        "Import human pairwise votes (JSONL: question or question_id, model_a, model_b, "
        "winner = model_a|model_b|tie|cannot_determine, annotator). Whole file or nothing; "
        "running it again adds nothing twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--campaign", help="Attach the votes to this campaign (slug).")

    def handle(self, *args, file, dataset, campaign=None, **options):
        found, target = resolve(dataset, campaign)
        try:
            with file.open(encoding="utf-8-sig") as stream:
                result = votes_import(
                    dataset=found,
                    lines=stream,
                    campaign=target,
                    progress=lambda n: self.stderr.write(f"  read {n} lines", ending="\r"),
                )
        except FileNotFoundError:
            raise CommandError(f"No such file: {file}") from None
        except AnnotationError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Read {result['read']} votes: {result['created']} imported, "
            f"{result['already_imported']} already imported before."
        )
