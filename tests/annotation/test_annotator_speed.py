"""Annotators faster than the campaign's least time per item are flagged, like a failed gold check,
and their votes are left out of the statistics."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.errors import AnnotationError
from annotation.models import Campaign
from annotation.report import FLAG_FAST, annotator_quality, bt_report
from annotation.services import assignment_next, vote_cast
from tests.figures import get_computed

pytestmark = pytest.mark.django_db


def vote_all(campaign, person, seconds):
    """Vote "left" on everything the annotator gets, `seconds` after each lease."""
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        now = timezone.now() + timedelta(seconds=seconds)
        vote_cast(token=assignment.token, annotator=person, choice="left", now=now)


def test_a_fast_annotator_is_flagged_and_left_out(build_campaign, client, researcher):
    campaign, models, items, (fast, careful) = build_campaign(
        questions=4, models=3, annotators=2, votes_per_pair=2, min_seconds_per_item=5
    )
    vote_all(campaign, fast, seconds=1)
    vote_all(campaign, careful, seconds=12)
    rows = {row["annotator"]: row for row in annotator_quality(campaign=campaign)}
    assert (rows["annotator0"]["flags"], rows["annotator0"]["flagged"]) == ([FLAG_FAST], True)
    assert (rows["annotator1"]["flags"], rows["annotator1"]["flagged"]) == ([], False)
    assert 1 <= rows["annotator0"]["median_seconds"] < 2 and rows["annotator1"]["median_seconds"] >= 12
    report = bt_report(campaign=campaign, rounds=0)
    assert report["excluded_annotators"] == ["annotator0"] and report["votes"] == 4
    # With the check off, the same votes flag nobody.
    Campaign.objects.filter(pk=campaign.pk).update(min_seconds_per_item=0)
    campaign.refresh_from_db()
    assert [row["flags"] for row in annotator_quality(campaign=campaign)] == [[], []]
    Campaign.objects.filter(pk=campaign.pk).update(min_seconds_per_item=5)

    client.force_login(researcher)
    page = get_computed(client, reverse("annotation:results", args=[campaign.slug]), {"rounds": 0}).text
    assert '<span class="flagged">Faster than 5 s per item</span>' in page
    assert "Left out (flagged by gold accuracy or speed): annotator0" in page
    assert "or a median time per item under 5 seconds" in page
    quality = client.get(reverse("api-campaign-quality", args=[campaign.slug])).json()
    assert [(row["annotator"], row["flags"]) for row in quality] == [("annotator0", ["too_fast"]), ("annotator1", [])]


@pytest.mark.parametrize("seconds", [-1, 3601])
def test_a_least_time_out_of_range_is_refused(build_campaign, seconds):
    with pytest.raises(
        AnnotationError, match="^The least time per item must be from 0 \\(no check\\) to 3600 seconds.$"
    ):
        build_campaign(min_seconds_per_item=seconds)
    assert not Campaign.objects.exists()


def test_the_campaign_command_and_page_set_the_least_time(build_campaign, client, researcher, capsys):
    campaign, models, items, people = build_campaign()
    names = ",".join(model.name for model in models)
    call_command(
        "campaign_create", "--dataset", campaign.dataset.name, "--slug", "timed", "--models", names,
        "--min-seconds-per-item", "4.5",
    )  # fmt: skip
    assert Campaign.objects.get(slug="timed").min_seconds_per_item == 4.5
    with pytest.raises(CommandError, match="The least time per item must be from 0"):
        call_command(
            "campaign_create", "--dataset", campaign.dataset.name, "--slug", "late", "--models", names,
            "--min-seconds-per-item", "9999",
        )  # fmt: skip
    client.force_login(researcher)
    page = client.get(reverse("annotation:campaign-new")).text
    assert 'name="min_seconds_per_item"' in page and "Flag annotators faster than (seconds per item)" in page
