"""Only a pending or running run can be cancelled, and who cancelled it is in the audit log."""

import pytest
from django.urls import reverse

from core.models import AuditEvent
from judging.engine.queue import run_cancel
from judging.errors import RunError
from judging.models import JudgeRun
from tests.factories import JudgeRunFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("status", ["finished", "failed", "cancelled"])
def test_a_run_that_ended_keeps_its_status(client, researcher, status):
    run = JudgeRunFactory(status=status)
    with pytest.raises(RunError, match=f"Only a pending or running run can be cancelled; run {run.pk} is {status}."):
        run_cancel(run=run)
    client.force_login(researcher)
    api = client.post(reverse("api-run-cancel", args=[run.pk]))
    assert api.status_code == 400 and api.json()["detail"].startswith("Only a pending or running run")
    page = client.post(reverse("judging:run-action", args=[run.pk, "cancel"]), follow=True)
    assert "Only a pending or running run can be cancelled" in page.text
    run.refresh_from_db()
    assert run.status == status
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("status", ["pending", "running"])
def test_a_pending_or_running_run_is_cancelled_and_audited(client, researcher, status):
    run = JudgeRunFactory(status=status)
    client.force_login(researcher)
    assert client.post(reverse("api-run-cancel", args=[run.pk])).status_code == 200
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    event = AuditEvent.objects.get()
    assert (event.actor, event.action, event.target, event.details) == (
        researcher,
        "run_cancelled",
        f"run:{run.pk}",
        {"was": status},
    )
