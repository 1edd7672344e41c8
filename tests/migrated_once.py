"""The test database is migrated once per pytest run, not once per worker process.

Each pytest-xdist worker has a test database of its own, and migrating one from nothing takes
about 14 s of CPU, the same for every worker. The first worker to get there migrates as usual
and leaves the result in a folder its run shares: a copy of its in-memory SQLite database, or
on PostgreSQL a template database cloned from its own. The others start from that (SQLite's
backup, PostgreSQL's CREATE DATABASE ... TEMPLATE, both in well under a second) instead of
migrating, and so from the very same rows: role groups, seeded templates, content types,
permissions and the cache table.

Only the migration that builds a worker's test database is replaced, once; every `migrate` a
test runs itself (the migration and upgrade tests) is the real one."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

from django.core import management
from django.db import connections

SQLITE_COPY = "migrated-test-database.sqlite3"
POSTGRES_TEMPLATE = "migrated-test-database.postgres"  # holds the template database's name


def migrate_once_per_run(shared_folder: Path) -> None:
    """Replace the next `call_command("migrate", ...)` (the one `create_test_db` makes) by a copy
    of the first worker's migrated database; the first worker migrates and leaves that copy."""
    real_call_command = management.call_command

    def migrate_or_copy(name, *args, **kwargs):
        if name != "migrate":
            return real_call_command(name, *args, **kwargs)
        management.call_command = real_call_command  # once: later migrations are the real ones
        connection = connections[kwargs.get("database", "default")]
        if connection.vendor == "sqlite" and connection.is_in_memory_db():
            copy, leave, marker = _copy_sqlite, _leave_sqlite, SQLITE_COPY
        elif connection.vendor == "postgresql":
            copy, leave, marker = _clone_postgres, _leave_postgres, POSTGRES_TEMPLATE
        else:
            return real_call_command(name, *args, **kwargs)
        with open(shared_folder / f"{marker}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait while the first one migrates
            if not (shared_folder / marker).exists():
                result = real_call_command(name, *args, **kwargs)
                leave(connection, shared_folder / marker)
                return result
            if copy(connection, shared_folder / marker):
                return None
        return real_call_command(name, *args, **kwargs)  # the copy is gone: migrate after all

    management.call_command = migrate_or_copy


def _leave_sqlite(connection, marker: Path) -> None:
    # Written aside and renamed: a worker never reads half a copy.
    partial = marker.with_suffix(".partial")
    target = sqlite3.connect(partial)
    try:
        connection.connection.backup(target)
    finally:
        target.close()
    partial.replace(marker)


def _copy_sqlite(connection, marker: Path) -> bool:
    connection.ensure_connection()
    source = sqlite3.connect(marker)
    try:
        source.backup(connection.connection)
    finally:
        source.close()
    return True


def _leave_postgres(connection, marker: Path) -> None:
    # A database being cloned may have no other session: this worker's own is closed for it.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    mine = connection.settings_dict["NAME"]
    template = mine.removesuffix(f"_{worker}") + "_migrated"
    quote = connection.ops.quote_name
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {quote(template)}")
        cursor.execute(f"CREATE DATABASE {quote(template)} TEMPLATE {quote(mine)}")
    marker.write_text(template)


def _clone_postgres(connection, marker: Path) -> bool:
    quote = connection.ops.quote_name
    mine, template = connection.settings_dict["NAME"], marker.read_text()
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
        if cursor.fetchone() is None:
            return False  # a worker that finished first dropped it (drop_postgres_template)
        cursor.execute(f"DROP DATABASE {quote(mine)}")
        cursor.execute(f"CREATE DATABASE {quote(mine)} TEMPLATE {quote(template)}")
    return True


def drop_postgres_template(shared_folder: Path) -> None:
    """When a worker is done, the template database goes (the first to finish drops it; every
    worker built its own database long before, at its first database test)."""
    marker = shared_folder / POSTGRES_TEMPLATE
    connection = connections["default"]
    if not marker.exists() or connection.vendor != "postgresql":
        return
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(marker.read_text())}")
