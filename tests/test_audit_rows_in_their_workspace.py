"""Every audit entry about a workspace's object carries that workspace: a resumed generation of
answers, and the abandoned submissions the expiry erases (one entry per workspace concerned, each
with only its own studies). The team's researchers read them on /audit/; the other team's never."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent, Workspace
from curation.models import Submission
from curation.studies.services import submissions_expire
from judging.answers.generation_jobs import generation_resume
from judging.models import AnswerGeneration
from tests.factories import (
    CandidateModelFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    StudyFactory,
    SubmissionFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}


@pytest.fixture
def teams():
    """lab-a with researchers ada and rita, lab-b with researcher rob, and a superuser."""
    lab_a, lab_b = (Workspace.objects.create(slug=slug, name=slug.upper()) for slug in ("lab-a", "lab-b"))
    people = {
        "ada": UserFactory(username="ada", roles=["researcher"], roles__workspace=lab_a),
        "rita": UserFactory(username="rita", roles=["researcher"], roles__workspace=lab_a),
        "rob": UserFactory(username="rob", roles=["researcher"], roles__workspace=lab_b),
        "boss": UserFactory(username="boss", is_superuser=True),
    }
    return lab_a, lab_b, people


def audit_page(client, person) -> str:
    """The rows the person reads on /audit/ (the table's body; the filter lists every action)."""
    client.force_login(person)
    page = client.get(reverse("core:audit")).text
    return page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""


def test_a_resumed_generation_is_audited_in_its_datasets_workspace(client, teams, settings):
    settings.TASKS = DUMMY
    lab_a, _lab_b, people = teams
    dataset = DatasetFactory(name="data-a", workspace=lab_a)
    ItemFactory(dataset=dataset, external_id="q1")
    generation = AnswerGeneration.objects.create(
        dataset=dataset, model=CandidateModelFactory(name="gen-m", workspace=lab_a), total=1, status="cancelled"
    )
    generation_resume(generation=generation, actor=people["ada"])
    assert AuditEvent.objects.get(action="generation_resumed").workspace == lab_a
    assert "Resumed generating candidate answers" in audit_page(client, people["rita"])
    page = audit_page(client, people["rob"])
    assert "Resumed generating candidate answers" not in page and "data-a" not in page


def test_expired_submissions_are_audited_in_each_workspace_with_its_own_studies(client, teams):
    lab_a, lab_b, people = teams
    old = timezone.now() - timedelta(days=40)
    for slug, place, abandoned in (("study-a", lab_a, 2), ("study-b", lab_b, 1)):
        study = StudyFactory(slug=slug, workspace=place)
        for _n in range(abandoned):
            CaseFactory(submission=SubmissionFactory(study=study, status="in_progress", last_activity_at=old))
        SubmissionFactory(study=study, status="in_progress", last_activity_at=timezone.now())
    assert submissions_expire(idle_for=timedelta(days=30)) == 3
    assert Submission.objects.count() == 2
    entries = {
        event.workspace.slug: event.details
        for event in AuditEvent.objects.filter(action="submissions_expired").select_related("workspace")
    }
    assert entries == {
        "lab-a": {"count": 2, "idle_days": 30.0, "studies": {"study-a": 2}},
        "lab-b": {"count": 1, "idle_days": 30.0, "studies": {"study-b": 1}},
    }
    page = audit_page(client, people["rita"])
    assert "Erased abandoned submissions" in page and "study-a: 2" in page and "study-b" not in page
    page = audit_page(client, people["rob"])
    assert "Erased abandoned submissions" in page and "study-b: 1" in page and "study-a" not in page
    page = audit_page(client, people["boss"])
    assert "study-a: 2" in page and "study-b: 1" in page
