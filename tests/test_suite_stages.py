"""The PostgreSQL stage of `make test` runs only the tests that reach a database
(tests/conftest.py, --database-tests-only): what it leaves out must be what never touches one.
And the flush between transactional tests, by DELETE on PostgreSQL (tests/conftest.py,
empty_by_deleting), leaves every table empty, rows that point at each other included."""

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.core.management import call_command

from tests.conftest import touches_the_database
from tests.factories import AnswerFactory, UserFactory


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


@pytest.mark.django_db(transaction=True)
def test_the_flush_between_transactional_tests_leaves_every_table_empty():
    user = UserFactory(username="flushed")
    user.groups.add(Group.objects.create(name="flushed-group"))
    answer = AnswerFactory()  # an answer, its item, dataset, model: rows that point at each other
    assert user.groups.exists() and answer.item.dataset.items.exists()
    # As TransactionTestCase flushes after each test (django/test/testcases.py, _fixture_teardown),
    # but without the post_migrate signal, which would write the content types back.
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
    left = {model._meta.label: model.objects.count() for model in apps.get_models()}
    assert {label: count for label, count in left.items() if count} == {}
