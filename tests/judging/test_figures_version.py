"""A run's stored figures carry the version of the code that computed them (core/figures.py,
FIGURES_VERSION): figures stored by an older version are computed again at their next read, not
only after the next judgment, and the run page renders a payload that lacks what it reads."""

import pytest
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from core.figures import FIGURES_VERSION, INPUTS_VERSION_KEY
from judging.models import JudgeMode, JudgeRun, RunFigures
from judging.results.figures import run_figures_inputs
from tests.factories import CandidateModelFactory, JudgeRunFactory
from tests.judging.test_pages import pointwise_run  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def overall_means(response):
    return [row["mean"] for row in response.json() if row["group"] == "overall"]


def test_figures_of_an_older_version_are_computed_again_at_the_next_read(
    client_as,
    researcher,
    pointwise_run,
    monkeypatch,  # noqa: F811
):
    client = client_as(researcher)
    stored = RunFigures.objects.get(run=pointwise_run)
    assert stored.inputs[INPUTS_VERSION_KEY] == FIGURES_VERSION
    # Stored before figures had a version, with a payload that lacks the rows the API serves.
    unversioned = {key: value for key, value in stored.inputs.items() if key != INPUTS_VERSION_KEY}
    RunFigures.objects.filter(pk=stored.pk).update(inputs=unversioned, payload={"board": {}})

    # The page renders what is stored, says it is being recomputed and queues the refresh: no
    # judgment came in, only the code changed.
    page = client.get(reverse("judging:run-detail", args=[pointwise_run.pk]))
    assert page.status_code == 200
    assert "Newer judgments are waiting: the figures are being recomputed." in page.text
    assert DBTaskResult.objects.filter(task_path="judging.tasks.run_figures_task").count() == 1
    # The API computes them again at once, as it computes figures never computed.
    response = client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]))
    assert (response["X-Figures-Stale"], overall_means(response)) == ("0", [7.0, 4.0])
    assert RunFigures.objects.get(pk=stored.pk).inputs[INPUTS_VERSION_KEY] == FIGURES_VERSION

    # A change to the code that bumps the version does the same to every stored run.
    monkeypatch.setattr("core.figures.FIGURES_VERSION", FIGURES_VERSION + 1)
    assert run_figures_inputs(pointwise_run) != RunFigures.objects.get(pk=stored.pk).inputs
    response = client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]))
    assert (response["X-Figures-Stale"], overall_means(response)) == ("0", [7.0, 4.0])
    assert RunFigures.objects.get(pk=stored.pk).inputs[INPUTS_VERSION_KEY] == FIGURES_VERSION + 1


@pytest.mark.parametrize(
    ("mode", "payload"),
    [
        (JudgeMode.POINTWISE, {}),
        (JudgeMode.POINTWISE, {"board": {"tables": {"overall": {"rows": [{"model": "m"}]}}}, "flagged": [{}]}),
        (JudgeMode.PAIRWISE, {"board": {"pairwise": [{"model": "m", "win_rate": None}]}, "cross": {}}),
    ],
)
def test_the_run_page_renders_a_stored_payload_that_lacks_what_it_reads(client_as, researcher, mode, payload):
    reference = CandidateModelFactory(name="reference") if mode == JudgeMode.PAIRWISE else None
    run = JudgeRunFactory(status=JudgeRun.Status.FINISHED, total=0, mode=mode, reference_model=reference)
    RunFigures.objects.create(run=run, payload=payload, inputs=run_figures_inputs(run), computed_at=run.created_at)
    page = client_as(researcher).get(reverse("judging:run-detail", args=[run.pk]))
    assert page.status_code == 200 and "Figures computed at" in page.text
