"""Results served from stored figures: computed by the background task, stored with the votes
they came from, shown with when they were computed and whether newer votes are waiting."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from annotation.figures import figures_refresh
from annotation.models import StoredFigures
from annotation.services import assignment_next, vote_cast

pytestmark = pytest.mark.django_db

COMPUTING = "These figures are being computed in the background; reload the page in a moment."
WAITING = "Newer votes are waiting: the figures are being recomputed."


def vote_everything(campaign, person, favourite):
    """`person` votes on every pair left to them: `favourite` wins whenever it is shown."""
    count = 0
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        names = (assignment.pair.model_a.name, assignment.pair.model_b.name)
        if favourite not in names:
            choice = "tie"
        else:
            choice = "left" if (names[0] == favourite) == assignment.model_a_on_left else "right"
        vote_cast(token=assignment.token, annotator=person, choice=choice)
        count += 1
    return count


def figures_tasks(what="campaign"):
    """The queued refreshes of the campaign's figures (`what`: its results, or its style fit)."""
    ids = StoredFigures.objects.filter(what=what).values_list("pk", flat=True)
    return DBTaskResult.objects.filter(task_path="annotation.tasks.figures_task", args_kwargs__args__0__in=list(ids))


def bt_wins(html, model):
    row = html.split(f"<td>{model}</td>", 1)[1].split("</tr>", 1)[0]
    return [cell.split("<", 1)[0] for cell in row.split('<td class="num">')[1:]][2]


def test_the_results_page_serves_stored_figures_and_says_when_newer_votes_wait(build_campaign, client_as, researcher):
    campaign, models, items, (first, second) = build_campaign(
        questions=3, models=3, pairs_per_question=3, votes_per_pair=2
    )
    first_votes = vote_everything(campaign, first, "orion-large")
    assert first_votes == 9
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])

    # Nothing stored yet: the page says so at once and a refresh is queued to run at once.
    html = client.get(url).content.decode()
    assert COMPUTING in html and "bt-table" not in html
    [queued] = figures_tasks()
    assert queued.run_after.year == 9999  # no delay: figures that never were are wanted now
    # The style-controlled fit is stored apart (fewer bootstrap rounds), and asked for too.
    [style] = figures_tasks("style")
    assert StoredFigures.objects.get(what="style", campaign=campaign).rounds == 200
    figures = StoredFigures.objects.get(campaign=campaign, what="campaign")
    assert (figures.what, figures.rounds, figures.computed_at) == ("campaign", 1000, None)

    figures_refresh(figures_id=figures.pk)  # what the worker does with the task
    html = client.get(url).content.decode()
    assert "Figures computed at" in html and WAITING not in html and COMPUTING not in html
    # Each of orion-large's 6 pairs with another model was voted once: 6 wins.
    assert bt_wins(html, "orion-large") == "6"
    assert StoredFigures.objects.get(pk=figures.pk).inputs["votes"] == 9

    # More votes: the page answers from what is stored, marks it stale, and queues one refresh,
    # debounced, however often it is read.
    vote_everything(campaign, second, "orion-large")
    before = figures_tasks().count()
    for _ in range(3):
        html = client.get(url).content.decode()
        assert WAITING in html
        assert bt_wins(html, "orion-large") == "6"
    assert figures_tasks().count() == before + 1
    delayed = figures_tasks().order_by("-enqueued_at").first()
    # Deferred by the debounce from when it was queued (not compared with the clock now: on a
    # loaded machine the three reads above may outlast the debounce).
    assert delayed.run_after.year != 9999 and delayed.run_after > delayed.enqueued_at

    figures_refresh(figures_id=figures.pk)
    html = client.get(url).content.decode()
    assert WAITING not in html and bt_wins(html, "orion-large") == "12"


def test_the_results_page_costs_the_same_queries_however_many_votes(build_campaign, client_as, researcher):
    campaign, models, items, (first, second) = build_campaign(
        questions=4, models=3, pairs_per_question=3, votes_per_pair=2
    )
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    vote_everything(campaign, first, "vega-7b")
    figures_refresh(figures_id=client.get(url) and StoredFigures.objects.get(campaign=campaign, what="campaign").pk)
    figures_refresh(figures_id=StoredFigures.objects.get(campaign=campaign, what="style").pk)
    figures_refresh(figures_id=StoredFigures.objects.get(campaign=campaign, what="reliability").pk)
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    vote_everything(campaign, second, "vega-7b")
    for figures in StoredFigures.objects.filter(campaign=campaign):
        figures_refresh(figures_id=figures.pk)
    with CaptureQueriesContext(connection) as many:
        assert client.get(url).status_code == 200
    assert len(many) == len(few)


def test_the_api_computes_missing_figures_then_serves_them_with_their_freshness(build_campaign, client_as, researcher):
    campaign, models, items, (first, second) = build_campaign(questions=2, models=2, votes_per_pair=2)
    vote_everything(campaign, first, "orion-large")
    client = client_as(researcher)
    url = reverse("api-campaign-bt", args=[campaign.slug])
    response = client.get(url)
    body = response.json()
    assert response["X-Figures-Stale"] == "0" and response["X-Figures-Computed-At"]
    assert (body["votes"], body["scores"][0]["label"], body["scores"][0]["wins"]) == (2, "orion-large", 2)

    vote_everything(campaign, second, "vega-7b")
    response = client.get(url)
    assert response["X-Figures-Stale"] == "1"
    assert response.json()["votes"] == 2  # the stored figures, until the refresh has run
    figures_refresh(figures_id=StoredFigures.objects.get(campaign=campaign, what="campaign", rounds=1000, seed=0).pk)
    response = client.get(url)
    assert (response["X-Figures-Stale"], response.json()["votes"]) == ("0", 4)
    quality = client.get(reverse("api-campaign-quality", args=[campaign.slug])).json()
    assert [(row["annotator"], row["votes"]) for row in quality] == [("annotator0", 2), ("annotator1", 2)]
