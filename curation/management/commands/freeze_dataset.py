"""Freeze a working dataset's accepted items into a new immutable version; or compare two versions."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.archiving import command_refuses_archived
from core.command_workspace import add_workspace_argument, command_workspace_said, named
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.datasets.services import MissingReferences, VersionError, dataset_freeze, datasets_diff
from curation.models import Dataset


class Command(BaseCommand):
    help = "freeze_dataset NAME freezes a version; freeze_dataset --diff OLD NEW shows what changed."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?")
        parser.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"))
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument(
            "--confirm-missing-references",
            action="store_true",
            help="freeze items without a reference answer too (without it the freeze says how many lack one and stops)",
        )
        add_workspace_argument(parser, "the datasets")

    def _dataset(self, name):
        try:
            found = dataset_by_name(name=name, workspace_id=self.workspace.pk if self.workspace else None)
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        # Archived work is absent from the commands' choices, to freeze as to compare.
        command_refuses_archived(found)
        return found

    def handle(self, *args, name=None, diff=None, format="table", confirm_missing_references=False, **options):
        self.workspace = command_workspace_said(
            self,
            options.get("workspace"),
            [named("dataset", each, Dataset.objects.filter(name=each)) for each in (diff or [name])],
        )
        if diff:
            result = datasets_diff(old=self._dataset(diff[0]), new=self._dataset(diff[1]))
            if format == "json":
                payload = {
                    "added": result.added,
                    "removed": result.removed,
                    "unchanged": result.unchanged,
                    "changed": [
                        {"external_id": key, "fields": {f: list(v) for f, v in ch.items()}}
                        for key, ch in result.changed
                    ],
                }
                self.stdout.write(json.dumps(payload, ensure_ascii=False))
                return
            for key in result.added:
                self.stdout.write(f"+ {key}")
            for key in result.removed:
                self.stdout.write(f"- {key}")
            for key, changes in result.changed:
                self.stdout.write(f"~ {key}: {', '.join(sorted(changes))}")
            self.stdout.write(
                f"{len(result.added)} added, {len(result.removed)} removed, "
                f"{len(result.changed)} changed, {result.unchanged} unchanged"
            )
            return
        if not name:
            raise CommandError("Name a working dataset to freeze, or use --diff OLD NEW.")
        try:
            version = dataset_freeze(dataset=self._dataset(name), confirm_missing_references=confirm_missing_references)
        except MissingReferences as error:
            raise CommandError(
                f"{error.missing} of {error.total} items have no reference answer: a reference-anchored judge would "
                "compare their answers with nothing. Draft them first (curation_llm references), or freeze with "
                "--confirm-missing-references."
            ) from None
        except VersionError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(self.style.SUCCESS(f"{version.name}: {version.items.count()} items frozen."))
