"""The PostgreSQL stage of `make test` runs only the tests that reach a database
(tests/conftest.py, --database-tests-only): what it leaves out must be what never touches one."""

import pytest

from tests.conftest import touches_the_database


def test_sample_pure():
    assert 1 + 1 == 2


def test_sample_with_db(db):
    assert db is None


@pytest.mark.django_db(transaction=True)
def test_sample_marked():
    pass


@pytest.mark.skipif(False, reason="a condition that may hold on one database only")
def test_sample_with_a_skip_condition():
    pass


def test_sample_with_a_live_server(live_server):
    assert live_server.url


def test_only_tests_that_never_reach_a_database_are_left_to_the_sqlite_stage(request):
    siblings = {item.name: item for item in request.session.items if item.module is request.module}
    verdicts = {name: touches_the_database(item) for name, item in siblings.items() if name.startswith("test_sample")}
    assert verdicts == {
        "test_sample_pure": False,
        "test_sample_with_db": True,
        "test_sample_marked": True,
        "test_sample_with_a_skip_condition": True,
        "test_sample_with_a_live_server": True,
    }
