import os
from pathlib import Path

import pytest

from tests.factories import UserFactory
from tests.migrated_once import drop_postgres_template, migrate_once_per_run


@pytest.fixture
def researcher(db):
    return UserFactory(username="res", roles=["researcher"])


@pytest.fixture
def reviewer(db):
    return UserFactory(username="rev", roles=["reviewer"])


@pytest.fixture
def annotator(db):
    return UserFactory(username="ann", roles=["annotator"])


@pytest.fixture
def client_as(client):
    """client_as(user) logs the test client in as that user and returns it."""

    def log_in(user):
        client.force_login(user)
        return client

    return log_in


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    """Rate limits count in the cache, which outlives a test: every test starts with none used."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def default_language_after_each_test():
    """A request in Chinese leaves Chinese active in the thread; the next test starts in English."""
    yield
    from django.utils import translation

    translation.deactivate()


# The fixtures through which a test reaches the database (pytest-django's, and what needs them).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
}


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="Run only the tests that touch the database (the PostgreSQL stage of `make test`: "
        "tests that never reach a database already ran in the SQLite stage).",
    )


def touches_the_database(item) -> bool:
    """A test touches the database if it is marked django_db or asks for a fixture that opens it;
    a test with a skip condition is kept too (it may be one that only runs on this database)."""
    if item.get_closest_marker("django_db") or item.get_closest_marker("skipif"):
        return True
    return bool(DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--database-tests-only"):
        return
    kept = [item for item in items if touches_the_database(item)]
    dropped = [item for item in items if not touches_the_database(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory, django_db_blocker):
    """pytest-django's hook just before the test databases are built: with several workers, the
    test database is migrated by the first and copied by the others (tests/migrated_once.py),
    through the folder `make test` gives its stages (USERBENCH_TEST_SHARED), or else the run's:
    the parent of each worker's temporary folder."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    shared = os.environ.get("USERBENCH_TEST_SHARED")
    folder = Path(shared) if shared else tmp_path_factory.getbasetemp().parent
    migrate_once_per_run(folder)
    yield
    with django_db_blocker.unblock():
        drop_postgres_template(folder)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Two ways PostgreSQL's test database is made cheaper to write to, neither changing what a test
    sees (SQLite's needs neither):
    - it commits without waiting for its write-ahead log to reach the disk (synchronous_commit
      off: what a commit makes visible, and when, is unchanged; only a crash of PostgreSQL itself
      could lose the last commits, and no test crashes it). Set on the database, so every session
      opened on it later, the servers' and workers' a test starts too, has it;
    - the flush after each transactional test deletes the rows instead of truncating the tables
      (empty_by_deleting)."""
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            name = connection.ops.quote_name(connection.settings_dict["NAME"])
            with connection.cursor() as cursor:
                cursor.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
                cursor.execute("SET synchronous_commit = off")
            empty_by_deleting(type(connection.ops))
    yield


def empty_by_deleting(operations) -> None:
    """The flush after a transactional test as DELETE FROM each table, not TRUNCATE: a TRUNCATE of
    the 60-odd tables gives each table and index a new file and took 2.7-3.8 s at load 21 against
    0.2-0.4 s for the DELETEs, paid by each of the ~200 transactional tests on PostgreSQL. The
    tables end as empty either way, and sequences go on counting either way (a flush that resets
    them still truncates). Every foreign key Django makes on PostgreSQL is deferrable, so the rows
    go in any order and the keys are checked at the flush's commit."""
    truncate = operations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        delete = style.SQL_KEYWORD("DELETE FROM")
        return ["SET CONSTRAINTS ALL DEFERRED", *(f"{delete} {style.SQL_FIELD(self.quote_name(t))}" for t in tables)]

    operations.sql_flush = sql_flush
