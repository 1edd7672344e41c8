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
