"""The database cache's table writes no WAL on PostgreSQL: every API request counts against its
throttle there, and a lost count after a crash is harmless (core/apps.py)."""

import pytest
from django.db import connection

from core.apps import CACHE_TABLE, create_cache_table

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL)"),
]


def persistence() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE oid = to_regclass(%s)", [CACHE_TABLE])
        return cursor.fetchone()[0]


def test_migrate_leaves_the_cache_table_unlogged():
    assert persistence() == "u"


def test_a_logged_cache_table_of_an_older_deployment_is_made_unlogged_and_keeps_its_counts():
    with connection.cursor() as cursor:
        cursor.execute(f'ALTER TABLE "{CACHE_TABLE}" SET LOGGED')
        cursor.execute(
            f"INSERT INTO \"{CACHE_TABLE}\" (cache_key, value, expires) VALUES ('kept', '1', now() + interval '1 hour')"
        )
    assert persistence() == "p"

    create_cache_table(sender=None)
    create_cache_table(sender=None)  # again: nothing to do

    assert persistence() == "u"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT value FROM \"{CACHE_TABLE}\" WHERE cache_key = 'kept'")
        assert cursor.fetchone() == ("1",)
