from django.conf import settings
from django.core.management.base import BaseCommand

from home.archive_purge import archived_purge


class Command(BaseCommand):
    help = (
        "Delete for good the datasets, runs, campaigns and studies archived more than ARCHIVE_DAYS days ago. "
        "One that another object still refers to is kept, naming what refers to it; a frozen version a "
        "manifest cites is never deleted. Each deletion is audited."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="say what would be deleted; delete nothing")

    def handle(self, *args, dry_run=False, **options):
        outcomes = archived_purge(dry_run=dry_run)
        if not outcomes:
            self.stdout.write(f"Nothing archived more than {settings.ARCHIVE_DAYS} days ago.")
        for outcome in outcomes:
            name = f"{outcome.kind} {outcome.key}"
            if outcome.blocked_by:
                self.stdout.write(f"kept {name}: still referred to by {', '.join(outcome.blocked_by)}")
            elif dry_run:
                self.stdout.write(f"would delete {name}")
            else:
                self.stdout.write(f"deleted {name}")
