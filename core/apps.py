from django.apps import AppConfig
from django.contrib.auth.signals import user_login_failed
from django.core.management import call_command
from django.db import connections
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    """The ground floor every app stands on: roles, access, progress, counting, exports, errors,
    and the audit log."""

    name = "core"
    verbose_name = _("Userbench core")

    def ready(self):
        # Registered once the apps are loaded: the audit log's export table reads AuditEvent, and
        # the log-in signal handler writes it (failed log-ins, the admin's and the site's).
        from core import audit_export  # noqa: F401

        # The receiver writes AuditEvent rows, so it too is imported once the models are loaded.
        from core.signals import login_failed_audit, login_failed_count

        user_login_failed.connect(login_failed_audit, dispatch_uid="userbench-audit-login-failed")
        user_login_failed.connect(login_failed_count, dispatch_uid="userbench-count-login-failed")
        post_migrate.connect(create_cache_table, sender=self, dispatch_uid="userbench-cache-table")


# The database cache's table when CACHES names it (config/settings.py's default).
CACHE_TABLE = "userbench_cache"


def create_cache_table(sender, using="default", verbosity=1, **kwargs):
    """The database cache's table (rate limits count there, shared by every process), made by
    every `migrate`: a fresh clone, `make run`, a deployment and the test databases all have it
    without a step of their own. Idempotent. The default table is made even when this process
    counts elsewhere (the tests' local memory): the servers and workers started on the same
    database run with the default settings, and count there."""
    call_command("createcachetable", database=using, verbosity=0)
    call_command("createcachetable", CACHE_TABLE, database=using, verbosity=0)
    cache_table_unlogged(using)


def cache_table_unlogged(using: str) -> None:
    """On PostgreSQL the cache's table writes no WAL (UNLOGGED). Every API request counts against
    its throttle there, one upsert a request; logged, each is a commit waiting on the disk, which
    at a crowd's pace was a tenth of PostgreSQL's work a vote (bench/README.md, "A vote's cost").
    What is lost with it is lost harmlessly: PostgreSQL empties an unlogged table after a crash
    (never on a clean restart), and rate-limit counts start again from zero; nothing else is kept
    in the cache. An unlogged table is not copied to standby servers, which need no counts."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE oid = to_regclass(%s)", [CACHE_TABLE])
        row = cursor.fetchone()
        if row is not None and row[0] == "p":
            cursor.execute(f'ALTER TABLE "{CACHE_TABLE}" SET UNLOGGED')
