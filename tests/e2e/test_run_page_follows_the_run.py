"""The run page follows its run to the end, whenever the end comes: even when the run finishes
before the page's first progress request is answered, and when the server is briefly too busy to
answer. In both cases the page used to stay at "Running" for good."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from judging.models import CandidateModel, JudgeRun
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)


def a_running_run() -> JudgeRun:
    dataset = simulated.build_dataset("follow", {"north": [100, 200]})
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=[CandidateModel.objects.get(name="north")],
        )
    )
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    return run


def finish(run: JudgeRun) -> None:
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FINISHED, finished_at=timezone.now())


def test_a_run_that_ends_before_the_first_poll_is_answered_is_shown_finished(
    page, live_server, log_in, blocked_requests
):
    run = a_running_run()
    UserFactory(username="lead", roles=["researcher"])
    log_in("lead", "pw-for-tests")
    polls = []

    def first_poll_after_the_end(route):
        # The run ends between the page being drawn and its first progress request being answered.
        if not polls:
            finish(run)
        polls.append(route.request.url)
        route.continue_()

    page.route(f"**/api/runs/{run.pk}/progress/", first_poll_after_the_end)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    expect(page.locator("#progress [data-field=status]")).to_have_text("Finished")
    assert polls, "the page never asked for its run's progress"
    assert blocked_requests == []


def test_a_busy_server_is_asked_again(page, live_server, log_in, blocked_requests):
    run = a_running_run()
    UserFactory(username="lead", roles=["researcher"])
    log_in("lead", "pw-for-tests")
    answers = []

    def busy_then_real(route):
        # A proxy in front of the app answers 503 once, as it does while workers restart.
        answers.append(route.request.url)
        if len(answers) == 1:
            route.fulfill(status=503, body="busy")
        else:
            finish(run)
            route.continue_()

    page.route(f"**/api/runs/{run.pk}/progress/", busy_then_real)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    expect(page.locator("#progress [data-field=status]")).to_have_text("Finished")
    assert len(answers) >= 2
    assert blocked_requests == []
