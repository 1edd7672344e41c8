"""A finished run's page leaves out what only a run at work has (rate, ETA, calls in flight, the
window, stale shards: "Rate 0 / s" and "ETA — s" were shown), and offers Resume only when a
resume would send something; the progress API says both (`live`, `resumable`)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from judging.models import JudgeRun, RunWorker
from tests.factories import JudgeRunFactory

pytestmark = pytest.mark.django_db

LIVE_ONLY = ("In flight", "Window", ">Rate<", ">ETA<", "Stale shards")
RESUME = "/resume/"


def page_and_progress(client, run):
    html = client.get(reverse("judging:run-detail", args=[run.pk])).text
    progress = client.get(reverse("api-run-progress", args=[run.pk])).json()
    return html, progress


def test_a_finished_run_with_nothing_left_shows_no_live_fields_and_no_resume(client_as, researcher):
    run = JudgeRunFactory(status=JudgeRun.Status.FINISHED, total=4, replied=4)
    html, progress = page_and_progress(client_as(researcher), run)
    assert not [word for word in LIVE_ONLY if word in html]
    assert "— s" not in html and RESUME not in html
    assert (progress["live"], progress["resumable"]) == (False, False)


@pytest.mark.parametrize("status", [JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED, JudgeRun.Status.FAILED])
def test_a_stopped_run_with_units_left_offers_resume(client_as, researcher, status):
    run = JudgeRunFactory(status=status, total=4, replied=3, call_failures=1)
    html, progress = page_and_progress(client_as(researcher), run)
    assert reverse("judging:run-action", args=[run.pk, "resume"]) in html
    assert not [word for word in LIVE_ONLY if word in html]
    assert (progress["live"], progress["resumable"]) == (False, True)


def test_a_running_run_shows_its_live_fields_and_resume_only_without_a_worker(client_as, researcher):
    run = JudgeRunFactory(status=JudgeRun.Status.RUNNING, total=4, replied=1)
    html, progress = page_and_progress(client_as(researcher), run)
    assert all(word in html for word in LIVE_ONLY)
    assert '<span data-field="eta_seconds" data-unit=" s">—</span>' in html  # no unit after the dash
    # No worker holds it (every worker died, or none was started): a resume re-queues its shards.
    assert (progress["live"], progress["resumable"], progress["waiting_for_worker"]) == (True, True, True)
    assert reverse("judging:run-action", args=[run.pk, "resume"]) in html


def test_a_running_run_held_by_a_live_worker_offers_no_resume(client_as, researcher):
    run = JudgeRunFactory(status=JudgeRun.Status.RUNNING, total=4, replied=1)
    RunWorker.objects.create(run=run, worker_id="w1", window=2, in_flight=2, rate=1.5, heartbeat_at=timezone.now())
    html, progress = page_and_progress(client_as(researcher), run)
    assert (progress["live"], progress["resumable"], progress["eta_seconds"]) == (True, False, 2)
    assert RESUME not in html and '<span data-field="eta_seconds" data-unit=" s">2 s</span>' in html
