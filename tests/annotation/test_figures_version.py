"""A campaign's stored figures carry the version of the code that computed them (core/figures.py,
FIGURES_VERSION): a change that bumps it recomputes an old campaign's figures at their next read,
without a new vote, and the results page renders a payload that lacks what it reads."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.figures import figures_inputs, figures_key
from annotation.models import StoredFigures
from core.figures import FIGURES_VERSION, INPUTS_VERSION_KEY
from tests.annotation.test_figures import vote_everything

pytestmark = pytest.mark.django_db


def test_a_version_bump_recomputes_a_campaigns_figures_at_the_next_read(
    build_campaign, client_as, researcher, monkeypatch
):
    campaign, _models, _items, (first, _second) = build_campaign(questions=2, models=2, votes_per_pair=2)
    vote_everything(campaign, first, "orion-large")
    client = client_as(researcher)
    url = reverse("api-campaign-bt", args=[campaign.slug])
    assert client.get(url).json()["votes"] == 2
    stored = StoredFigures.objects.get(campaign=campaign, what="campaign", rounds=1000, seed=0)
    assert stored.inputs[INPUTS_VERSION_KEY] == FIGURES_VERSION
    # What an older version stored: no alignment, no annotator quality.
    StoredFigures.objects.filter(pk=stored.pk).update(payload={"bt": stored.payload["bt"]})

    monkeypatch.setattr("core.figures.FIGURES_VERSION", FIGURES_VERSION + 1)
    response = client.get(url)
    assert (response["X-Figures-Stale"], response.json()["votes"]) == ("0", 2)
    stored.refresh_from_db()
    assert stored.inputs[INPUTS_VERSION_KEY] == FIGURES_VERSION + 1 and "quality" in stored.payload


@pytest.mark.parametrize("payload", [{}, {"bt": None}, {"bt": {"scores": [], "votes": 0}, "report": None}])
def test_the_results_page_renders_a_stored_payload_that_lacks_what_it_reads(
    build_campaign, client_as, researcher, payload
):
    campaign, *_rest = build_campaign(questions=2, models=2, votes_per_pair=2)
    key = figures_key("campaign", campaign=campaign, run=None, rounds=1000, seed=0)
    figures = StoredFigures.objects.create(
        key=key, what="campaign", campaign=campaign, rounds=1000, seed=0, payload=payload, computed_at=timezone.now()
    )
    StoredFigures.objects.filter(pk=figures.pk).update(inputs=figures_inputs(figures))
    page = client_as(researcher).get(reverse("annotation:results", args=[campaign.slug]))
    assert page.status_code == 200
