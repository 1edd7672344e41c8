"""The audit log: one service, a researcher's page, an export, and failed log-ins."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from core.audit import AuditAction, audit_record
from core.models import AuditEvent
from core.workspaces import default_workspace_id
from tests.factories import AnswerFactory, DatasetFactory, ItemFactory, StudyFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_audit_record_keeps_who_what_and_the_name_at_the_time(researcher):
    event = audit_record(actor=researcher, action=AuditAction.STUDY_CHANGED, target="study:demo", details={"n": 1})
    researcher.delete()
    event.refresh_from_db()
    assert (event.actor_id, event.actor_name, event.action, event.target, event.details) == (
        None,
        "res",
        "study_changed",
        "study:demo",
        {"n": 1},
    )


def test_an_export_of_participant_data_is_audited_with_the_person_who_asked(client, researcher):
    study = StudyFactory(slug="s")
    SubmissionFactory(study=study)
    client.force_login(researcher)
    response = client.get(reverse("api-export", args=["submissions"]), {"study": "s"})
    assert response.status_code == 200
    [event] = AuditEvent.objects.all()
    assert (event.actor, event.action, event.target, event.details) == (
        researcher,
        "export",
        "export:submissions",
        {"study": "s", "via": "api"},
    )


def test_an_export_from_the_command_line_is_audited_too():
    StudyFactory(slug="s")
    call_command("export", "--study", "s", "--what", "cases", stdout=io.StringIO())
    [event] = AuditEvent.objects.all()
    assert (event.actor, event.action, event.target, event.details["study"]) == (None, "export", "export:cases", "s")
    assert event.details["via"].startswith("command line (")


def test_exports_without_participant_data_are_not_audited(client, researcher):
    item = ItemFactory(dataset=DatasetFactory(name="public"))
    AnswerFactory(item=item)
    client.force_login(researcher)
    for what in ("items", "answers"):
        assert client.get(reverse("api-export", args=[what]), {"dataset": "public"}).status_code == 200
    assert AuditEvent.objects.count() == 0
    # Items of a study's dataset are participants' questions: those are audited.
    ItemFactory(dataset=DatasetFactory(name="from-study", study=StudyFactory()))
    client.get(reverse("api-export", args=["items"]), {"dataset": "from-study"})
    assert list(AuditEvent.objects.values_list("target", "details")) == [
        ("export:items", {"dataset": "from-study", "via": "api"})
    ]


def test_the_audit_page_is_for_researchers_only_and_lists_entries(client, researcher, reviewer):
    audit_record(actor=researcher, action=AuditAction.RUN_CANCELLED, target="run:7")
    audit_record(actor=None, action="custom_action", target="x:<b>1</b>", workspace=default_workspace_id())
    url = reverse("core:audit")
    assert client.get(url).status_code == 302
    client.force_login(reviewer)
    assert client.get(url).status_code == 403
    client.force_login(researcher)
    page = client.get(url).text
    assert "Cancelled a judge run" in page and "run:7" in page
    assert "custom_action" in page and "x:&lt;b&gt;1&lt;/b&gt;" in page
    filtered = client.get(url, {"action": "run_cancelled"}).text
    assert "run:7" in filtered and "custom_action" not in filtered


def test_the_audit_log_is_exportable(client, researcher):
    audit_record(
        actor=researcher,
        action=AuditAction.EXPORT,
        target="export:cases",
        details={"study": "s"},
        workspace=default_workspace_id(),
    )
    client.force_login(researcher)
    body = b"".join(client.get(reverse("api-export", args=["audit"]), {"format": "jsonl"}).streaming_content)
    assert b'"actor": "res"' in body and b'"target": "export:cases"' in body


def test_failed_log_ins_are_audited_with_the_typed_name_and_no_address(client):
    UserFactory(username="alice")
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"}, REMOTE_ADDR="198.51.100.9")
    assert response.status_code == 200
    [event] = AuditEvent.objects.all()
    assert (event.action, event.actor_name, event.actor) == ("login_failed", "alice", None)
    assert "198.51.100.9" not in str(event.details) + event.target
    assert "wrong" not in str(event.details)


def test_changes_to_studies_campaigns_endpoints_and_templates_are_audited(client, researcher):
    from annotation.campaigns import campaign_create
    from curation.studies.services import study_save
    from judging.models import JudgeTemplate
    from judging.prompts.templates import template_revise
    from llm.models import Endpoint
    from tests.factories import CandidateModelFactory

    # Closed: a study opens to participants only with both Prolific codes.
    study = study_save(values={"slug": "s1", "title_en": "One", "is_open": False}, user=researcher)
    study_save(values={"title_en": "One, renamed", "is_open": study.is_open}, study=study, user=researcher)
    item = ItemFactory(dataset=DatasetFactory(name="d"))
    models = [CandidateModelFactory(name="a"), CandidateModelFactory(name="b")]
    for model in models:
        AnswerFactory(item=item, model=model)
    campaign_create(
        slug="c1", title="C", dataset=item.dataset, candidates=models, question_count=1, created_by=researcher
    )
    template = JudgeTemplate.objects.create(
        name="t", version=1, mode="pointwise", language="en", text="{answer}", workspace_id=default_workspace_id()
    )
    template_revise(template=template, text="Judge: {answer}", user=researcher)

    admin = UserFactory(username="boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    response = client.post(
        reverse("admin:llm_endpoint_add"),
        {
            "workspace": default_workspace_id(),
            "name": "local",
            "base_url": "http://127.0.0.1:8001/v1",
            # No key for a local server: LOCAL_API_KEY is bound to no host (LLM_KEY_HOSTS).
            "api_key_env": "",
            "default_model": "",
            "max_in_flight": 4,
            "timeout_seconds": 30,
            "max_retries": 2,
        },
    )
    assert response.status_code == 302
    refused = client.post(
        reverse("admin:llm_endpoint_add"),
        {
            "workspace": default_workspace_id(),
            "name": "evil",
            "base_url": "https://collector.example/v1",
            "api_key_env": "SECRET_KEY",
            "default_model": "",
            "max_in_flight": 4,
            "timeout_seconds": 30,
            "max_retries": 2,
        },
    )
    assert refused.status_code == 200 and "cannot hold an endpoint&#x27;s key" in refused.text
    assert not Endpoint.objects.filter(name="evil").exists()
    client.post(reverse("admin:llm_endpoint_delete", args=[Endpoint.objects.get(name="local").pk]), {"post": "yes"})

    rows = list(AuditEvent.objects.order_by("id").values_list("actor_name", "action", "target", "details"))
    assert rows == [
        ("res", "study_changed", "study:s1", {"created": True, "fields": ["is_open", "slug", "title_en"]}),
        (
            "res",
            "study_changed",
            "study:s1",
            {"created": False, "fields": ["title_en"], "changes": {"title_en": ["One", "One, renamed"]}},
        ),
        ("res", "campaign_changed", "campaign:c1", {"created": True, "pairs": 1, "annotators": 0, "sampling": "fixed"}),
        ("res", "template_changed", "template:t", {"version": 2, "from_version": 1}),
        (
            "boss",
            "endpoint_changed",
            "endpoint:local",
            # As /endpoints/ records it: every changed setting, old and new (tests/llm/test_egress.py).
            {
                "created": True,
                "changes": {
                    "base_url": [None, "http://127.0.0.1:8001/v1"],
                    "max_in_flight": [None, 4],
                    "max_retries": [None, 2],
                    "name": [None, "local"],
                    "timeout_seconds": [None, 30.0],
                    # The admin names the workspace it goes to.
                    "workspace": [None, "default"],
                },
            },
        ),
        ("boss", "endpoint_changed", "endpoint:local", {"deleted": True, "via": "admin"}),
    ]
