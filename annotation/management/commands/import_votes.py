from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services import AnnotationError, votes_import
from curation.models import Dataset


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
        from annotation.models import Campaign

        found = Dataset.objects.filter(name=dataset).first()
        if found is None:
            raise CommandError(f"No dataset named {dataset!r}.")
        target = None
        if campaign:
            target = Campaign.objects.filter(slug=campaign, dataset=found).first()
            if target is None:
                raise CommandError(f"No campaign {campaign!r} on dataset {dataset!r}.")
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
