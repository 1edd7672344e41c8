"""Audit entries written before each carried its workspace get it from their target where that
names one object, and entries about a person (tokens, failed log-ins) get that person."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("home", "0001_initial"),
    ("core", "0004_token_tombstones_audit_subject"),
    ("curation", "0008_workspace"),
    ("annotation", "0009_adaptive_sampling"),
    ("judging", "0012_judgment_refers_to_its_reply"),
    ("llm", "0006_deadline_fits_the_reply"),
]
AFTER = [("home", "0002_audit_rows_in_their_workspace")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_the_latest():
    """Whatever the test leaves, the database ends at the latest migrations: the flush after a
    transactional test expects their tables and columns."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_old_audit_rows_find_their_workspace_and_their_person(back_to_the_latest):
    old = _migrate(BEFORE)
    Workspace, AuditEvent = old.get_model("core", "Workspace"), old.get_model("core", "AuditEvent")
    User, Dataset = old.get_model("auth", "User"), old.get_model("curation", "Dataset")
    lab = Workspace.objects.create(slug="lab-b", name="B")
    rob = User.objects.create(username="rob")
    Dataset.objects.create(name="data-b", workspace=lab)
    rows = {
        "import": AuditEvent.objects.create(action="answers_imported", target="dataset:data-b", actor_name="rob"),
        "gone": AuditEvent.objects.create(action="answers_imported", target="dataset:deleted", actor_name="rob"),
        "token": AuditEvent.objects.create(action="token_created", target="token:1", actor=rob, actor_name="rob"),
        "login": AuditEvent.objects.create(action="login_failed", target="login", details={"username": "rob"}),
        "stranger": AuditEvent.objects.create(action="login_failed", target="login", details={"username": "who"}),
    }
    new = _migrate(AFTER)
    NewEvent = new.get_model("core", "AuditEvent")
    found = {
        key: NewEvent.objects.values_list("workspace_id", "subject_id").get(pk=row.pk) for key, row in rows.items()
    }
    assert found == {
        "import": (lab.pk, None),
        "gone": (None, None),
        "token": (None, rob.pk),
        "login": (None, rob.pk),
        "stranger": (None, None),
    }
