"""Votes keep the stored figures current: each vote queues the debounced refresh of the
figures it feeds, so the results page is current without anyone opening it in between."""

import pytest
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from annotation.figures import figures_inputs, figures_read
from annotation.models import StoredFigures
from annotation.services import assignment_next, vote_cast, vote_undo
from tests.figures import get_computed, run_queued_figures

pytestmark = pytest.mark.django_db

WAITING = "Newer votes are waiting: the figures are being recomputed."


def queued_refreshes():
    return DBTaskResult.objects.filter(task_path="annotation.tasks.figures_task")


def test_59_votes_queue_one_refresh_and_the_stored_figures_are_current_without_opening_the_page(
    build_campaign, client_as, researcher, django_capture_on_commit_callbacks
):
    campaign, _models, _items, (first, _second) = build_campaign(questions=20, models=3, pairs_per_question=3)
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    assert "0 votes" in get_computed(client, url).content.decode()
    stored = list(StoredFigures.objects.filter(campaign=campaign))
    assert {row.what for row in stored} == {"campaign", "style", "reliability"} and not queued_refreshes().exists()

    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(59):
            assignment = assignment_next(campaign=campaign, annotator=first)
            vote_cast(token=assignment.token, annotator=first, choice="left")

    # The burst queued one refresh per stored row, not one per vote.
    assert sorted(queued_refreshes().values_list("args_kwargs__args__0", flat=True)) == sorted(r.pk for r in stored)
    assert run_queued_figures() == 3
    for row in StoredFigures.objects.filter(campaign=campaign):
        assert row.inputs == figures_inputs(row) and row.inputs["votes"] == 59
        assert row.refresh_queued_at is None
    html = client.get(url).content.decode()
    assert "59 votes" in html and WAITING not in html
    assert not queued_refreshes().exists()  # reading current figures queues nothing


def test_an_undone_vote_queues_a_refresh_too(build_campaign, client_as, researcher, django_capture_on_commit_callbacks):
    campaign, _models, _items, (first, _second) = build_campaign(questions=3, models=2)
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    with django_capture_on_commit_callbacks(execute=True):
        assignment = assignment_next(campaign=campaign, annotator=first)
        vote_cast(token=assignment.token, annotator=first, choice="right")
    assert not queued_refreshes().exists()  # nothing stored yet: the first read computes them
    assert "1 votes" in get_computed(client, url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        vote_undo(campaign=campaign, annotator=first)
    assert queued_refreshes().count() == 3
    run_queued_figures()
    assert StoredFigures.objects.get(campaign=campaign, what="campaign").inputs["votes"] == 0


def test_a_vote_refreshes_its_datasets_figures_but_not_another_campaigns(
    build_campaign, client_as, researcher, django_capture_on_commit_callbacks
):
    campaign, _models, _items, (first, _second) = build_campaign(questions=3, models=2)
    other, *_ = build_campaign(questions=2, models=2, slug="other")
    client = client_as(researcher)
    get_computed(client, reverse("annotation:results", args=[other.slug]))
    figures_read(what="bt", dataset=campaign.dataset)  # as the BT export reads them
    dataset_rows = list(StoredFigures.objects.filter(dataset=campaign.dataset).values_list("pk", flat=True))
    assert dataset_rows
    with django_capture_on_commit_callbacks(execute=True):
        assignment = assignment_next(campaign=campaign, annotator=first)
        vote_cast(token=assignment.token, annotator=first, choice="tie")
    assert sorted(queued_refreshes().values_list("args_kwargs__args__0", flat=True)) == sorted(dataset_rows)


def test_a_refresh_that_took_long_is_asked_again_later_and_one_already_done_is_not_repeated(
    build_campaign, client_as, researcher, django_capture_on_commit_callbacks, settings
):
    """Figures whose last computation took 4 s are recomputed no sooner than 3 x 4 s after a vote
    asks (one that took 100 s, 300 s after), so that votes arriving without pause never keep a
    worker computing them all the time; and a refresh task that finds its row already computed
    from the current votes (it was asked for twice while a worker was busy) computes nothing."""
    from annotation.tasks import figures_task
    from core.figures import REFRESH_SPACING

    settings.FIGURES_DEBOUNCE_SECONDS = 5
    campaign, _models, _items, (first, _second) = build_campaign(questions=6, models=2)
    get_computed(client_as(researcher), reverse("annotation:results", args=[campaign.slug]))
    rows = StoredFigures.objects.filter(campaign=campaign)
    rows.filter(what="campaign").update(compute_seconds=4)
    rows.filter(what="style").update(compute_seconds=100)
    rows.filter(what="reliability").update(compute_seconds=0.1)
    with django_capture_on_commit_callbacks(execute=True):
        assignment = assignment_next(campaign=campaign, annotator=first)
        vote_cast(token=assignment.token, annotator=first, choice="left")
    delays = {
        StoredFigures.objects.get(pk=task.args_kwargs["args"][0]).what: (
            task.run_after - task.enqueued_at
        ).total_seconds()
        for task in queued_refreshes()
    }
    assert set(delays) == {"campaign", "style", "reliability"}
    # From when the task was queued (its delay is reckoned a moment before that row is written).
    assert REFRESH_SPACING * 4 == 12
    assert 11.5 < delays["campaign"] <= 12
    assert 299.5 < delays["style"] <= 300
    assert 4.5 < delays["reliability"] <= 5  # a quick one: one window
    # More votes, six debounce windows later (the windows made tiny): a refresh still waiting for
    # its due time is not taken for one that never ran, so nothing is queued twice.
    settings.FIGURES_DEBOUNCE_SECONDS = 0.0001
    with django_capture_on_commit_callbacks(execute=True):
        assignment = assignment_next(campaign=campaign, annotator=first)
        vote_cast(token=assignment.token, annotator=first, choice="right")
    for what in ("campaign", "style"):
        assert queued_refreshes().filter(args_kwargs__args__0=rows.get(what=what).pk).count() == 1, what
    settings.FIGURES_DEBOUNCE_SECONDS = 5

    row = rows.get(what="campaign")
    figures_task.call(row.pk)
    computed = StoredFigures.objects.get(pk=row.pk)
    assert computed.inputs["votes"] == 2 and computed.computed_at > row.computed_at
    assert computed.compute_seconds != 4  # measured again
    figures_task.call(row.pk)  # the same refresh asked for twice
    assert StoredFigures.objects.get(pk=row.pk).computed_at == computed.computed_at


def test_votes_cast_while_a_long_refresh_computes_queue_no_second_one(
    build_campaign, client_as, researcher, django_capture_on_commit_callbacks, settings, monkeypatch
):
    """A refresh that computes for minutes is not queued again by the votes cast meanwhile, even
    once six debounce windows have passed (the rule for a refresh that never ran): otherwise
    every worker ends up computing the same row. Once it is done, the next vote asks again."""
    import annotation.figures as figures_module
    from annotation.tasks import figures_task

    campaign, _models, _items, (first, second) = build_campaign(questions=6, models=2)
    get_computed(client_as(researcher), reverse("annotation:results", args=[campaign.slug]))
    row = StoredFigures.objects.get(campaign=campaign, what="campaign")
    StoredFigures.objects.filter(pk=row.pk).update(compute_seconds=100)
    # Six windows pass within the computation below (a vote takes longer than 0.6 ms).
    settings.FIGURES_DEBOUNCE_SECONDS = 0.0001

    def vote(person):
        with django_capture_on_commit_callbacks(execute=True):
            assignment = assignment_next(campaign=campaign, annotator=person)
            vote_cast(token=assignment.token, annotator=person, choice="left")

    vote(first)
    queued_refreshes().delete()
    real_compute = figures_module.figures_compute
    during = []

    def computing(figures):
        vote(second)  # cast while the row is being computed
        during.append(queued_refreshes().filter(args_kwargs__args__0=row.pk).count())
        return real_compute(figures)

    monkeypatch.setattr(figures_module, "figures_compute", computing)
    figures_task.call(row.pk)
    assert during == [0]
    monkeypatch.setattr(figures_module, "figures_compute", real_compute)
    vote(first)
    assert queued_refreshes().filter(args_kwargs__args__0=row.pk).count() == 1
