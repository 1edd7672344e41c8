"""A campaign the researcher can keep moving: per-pair completion, which pairs wait on whom,
skips released and pairs given to someone (audited), gold pairs counted apart, a Chinese title."""

import re

import pytest
from django.urls import reverse

from annotation.campaigns import gold_pair_add
from annotation.errors import AnnotationError
from annotation.models import Assignment, Campaign
from annotation.pair_status import campaign_pair_status
from annotation.selectors import campaign_list_with_counts
from annotation.services import assignment_next, assignment_skip, vote_cast
from annotation.upkeep import pair_reassign, pair_release
from core.models import AuditEvent, Workspace
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def vote_next(campaign, person, choice="left"):
    assignment = assignment_next(campaign=campaign, annotator=person)
    assert assignment is not None
    vote_cast(token=assignment.token, annotator=person, choice=choice)
    return assignment


def pairs_section(html):
    return html.split('id="pairs"', 1)[1].split("</section>", 1)[0]


def test_a_skipped_pair_shows_as_stuck_and_released_skips_let_it_finish(build_campaign, client_as, researcher):
    # One pair wanting two votes from two annotators: once one skips it, nobody can finish it.
    campaign, _models, _items, (first, second) = build_campaign(questions=1, models=2, votes_per_pair=2)
    skipped = assignment_next(campaign=campaign, annotator=first)
    assignment_skip(token=skipped.token, annotator=first)
    vote_next(campaign, second)
    assert assignment_next(campaign=campaign, annotator=first) is None  # the campaign stays at 1 of 2 votes

    status = campaign_pair_status(campaign=campaign)
    assert (status["pairs"], status["done"], status["waiting"], status["stuck"]) == (1, 0, 1, 1)
    [row] = status["rows"]
    assert (row["votes"], row["needed"], row["skipped"], row["free"], row["leased"]) == (1, 2, ["annotator0"], [], [])
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    section = pairs_section(client.get(url).content.decode())
    assert "0 of 1 pairs have all their votes; 1 wait." in section
    assert "1 pair cannot be finished by anyone left" in section
    assert f"Release the skips of pair {row['pair']}" in section

    response = client.post(
        reverse("annotation:pairs", args=[campaign.slug]), {"pair": row["pair"], "action": "release"}
    )
    assert response.status_code == 302 and response["Location"].endswith("#pairs")
    event = AuditEvent.objects.get(action="campaign_changed", details__skips_released__isnull=False)
    assert (event.actor, event.target, event.details) == (
        researcher,
        "campaign:blind",
        {"pair": row["pair"], "skips_released": ["annotator0"]},
    )
    again = vote_next(campaign, first)
    assert again.pair_id == row["pair"]
    html = client.get(url).content.decode()
    assert "1 of 1 pairs have all their votes; 0 wait." in pairs_section(html)
    assert "waiting-pairs" not in html


def test_a_pair_held_by_an_annotator_who_went_away_is_given_to_another(build_campaign, client_as, researcher):
    campaign, _models, _items, (first, second) = build_campaign(questions=1, models=2, votes_per_pair=1)
    held = assignment_next(campaign=campaign, annotator=first)
    [row] = campaign_pair_status(campaign=campaign)["rows"]
    assert [lease["annotator"] for lease in row["leased"]] == ["annotator0"]
    assert row["givable"] == ["annotator1"] and not row["stuck"]
    assert assignment_next(campaign=campaign, annotator=second) is None  # its one slot is held

    client = client_as(researcher)
    response = client.post(
        reverse("annotation:pairs", args=[campaign.slug]),
        {"pair": row["pair"], "action": "reassign", "annotator": "annotator1"},
    )
    assert response.status_code == 302
    given = assignment_next(campaign=campaign, annotator=second)
    assert given is not None and given.pair_id == row["pair"]
    event = AuditEvent.objects.get(details__reassigned_to="annotator1")
    assert event.details == {"pair": row["pair"], "reassigned_to": "annotator1", "leases_ended": ["annotator0"]}
    with pytest.raises(AnnotationError, match="not assigned to you"):
        vote_cast(token=held.token, annotator=first, choice="left")
    vote_cast(token=given.token, annotator=second, choice="right")
    assert campaign_pair_status(campaign=campaign)["done"] == 1


def test_upkeep_refuses_what_it_cannot_do_and_changes_nothing(build_campaign):
    campaign, models, items, (first, second) = build_campaign(questions=2, models=2, votes_per_pair=1)
    other, *_ = build_campaign(questions=1, models=2, slug="other")
    gold = gold_pair_add(campaign=campaign, item=items[0], model_a=models[1], model_b=models[0], winner="tie")
    outsider = UserFactory(username="outsider", roles=["annotator"])
    done = vote_next(campaign, first)
    waiting = campaign.pairs.filter(is_gold=False).exclude(pk=done.pair_id).get()
    cases = [
        (lambda: pair_release(campaign=campaign, pair_id=gold.pk, actor=None), "Gold pairs"),
        (lambda: pair_release(campaign=campaign, pair_id=other.pairs.get().pk, actor=None), "No such pair"),
        (lambda: pair_release(campaign=campaign, pair_id=done.pair_id, actor=None), "already has all its votes"),
        (lambda: pair_release(campaign=campaign, pair_id=waiting.pk, actor=None), "Nobody skipped"),
        (
            lambda: pair_reassign(campaign=campaign, pair_id=waiting.pk, annotator=outsider, actor=None),
            "not an annotator of this campaign",
        ),
    ]
    for call, message in cases:
        with pytest.raises(AnnotationError, match=message):
            call()
    Campaign.objects.filter(pk=campaign.pk).update(is_open=False)
    campaign.refresh_from_db()
    with pytest.raises(AnnotationError, match="closed"):
        pair_reassign(campaign=campaign, pair_id=waiting.pk, annotator=second, actor=None)
    assert not AuditEvent.objects.filter(action="campaign_changed", details__pair__isnull=False).exists()
    assert Assignment.objects.filter(pair=waiting).count() == 0


def test_only_researchers_look_after_pairs(build_campaign, client_as):
    campaign, _models, _items, (first, _second) = build_campaign(questions=1, models=2)
    client = client_as(first)
    url = reverse("annotation:pairs", args=[campaign.slug])
    assert client.post(url, {"pair": campaign.pairs.get().pk, "action": "release"}).status_code == 403
    assert client.get(url).status_code in (403, 405)


def test_a_bad_request_says_why_on_the_page(build_campaign, client_as, researcher):
    campaign, *_ = build_campaign(questions=1, models=2)
    client = client_as(researcher)
    url = reverse("annotation:pairs", args=[campaign.slug])
    for data, message in (
        ({"pair": "x", "action": "release"}, "pair must be a whole number"),
        ({"pair": campaign.pairs.get().pk, "action": "explode"}, "Choose a pair and what to do with it."),
        ({"pair": campaign.pairs.get().pk, "action": "reassign", "annotator": "nobody"}, "Choose an annotator"),
    ):
        page = client.post(url, data, follow=True).content.decode()
        assert message in page


def test_gold_pairs_are_counted_apart_on_the_end_screen_the_page_and_the_dashboard(
    build_campaign, client_as, researcher
):
    campaign, models, items, (first, _second) = build_campaign(questions=2, models=2, gold_every=1)
    gold_pair_add(campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], winner="model_a")
    seen = []
    while (assignment := assignment_next(campaign=campaign, annotator=first)) is not None:
        seen.append(assignment.pair.is_gold)
        vote_cast(token=assignment.token, annotator=first, choice="left")
    assert sorted(seen) == [False, False, True]

    client = client_as(first)
    end = client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert "You have voted on 2 items. The campaign has 2 pairs." in end
    assert "You also answered 1 quality-check item, not counted among the pairs above." in end
    client.cookies["django_language"] = "zh-hans"
    assert "质量检查" in client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    index = client.get(reverse("annotation:index")).content.decode()
    assert '<td class="num">2</td><td class="num">2</td>' in index

    row = campaign_list_with_counts().get(pk=campaign.pk)
    assert (row.pair_count, row.vote_count, row.gold_pair_count, row.gold_vote_count) == (2, 2, 1, 1)
    status = campaign_pair_status(campaign=campaign)
    assert (status["pairs"], status["done"], status["gold_pairs"], status["gold_votes"]) == (2, 2, 1, 1)
    client.cookies["django_language"] = "en"
    page = client_as(researcher).get(reverse("annotation:results", args=[campaign.slug])).content.decode()
    assert "Gold pairs, counted apart: 1, with 1 votes." in page


def test_a_campaign_has_a_chinese_title_shown_on_chinese_pages(build_campaign, client_as, researcher):
    campaign, _models, _items, (first, _second) = build_campaign(questions=1, models=2, title_zh="盲测")
    assert Campaign.objects.get(pk=campaign.pk).title_zh == "盲测"
    client = client_as(first)
    assert "<h1>Blind test</h1>" in client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    client.cookies["django_language"] = "zh-hans"
    assert "<h1>盲测</h1>" in client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert "盲测" in client.get(reverse("annotation:index")).content.decode()
    research = client_as(researcher)
    research.cookies["django_language"] = "zh-hans"
    assert "盲测" in research.get(reverse("annotation:results", args=[campaign.slug])).content.decode()
    assert "盲测" in research.get(reverse("dashboard")).content.decode()
    research.cookies["django_language"] = "en"
    english = research.get(reverse("annotation:results", args=[campaign.slug])).content.decode()
    # Only the settings' field for the Chinese title holds it.
    outside = re.sub(r'<section aria-labelledby="settings-heading".*?</section>', "", english, flags=re.S)
    assert "盲测" not in outside and 'value="盲测"' in english


def test_a_pair_is_never_given_to_an_annotator_of_another_workspace(build_campaign, client_as, researcher):
    """An annotator of another workspace is nobody here: the page says to choose an annotator,
    and no lease is made for them."""
    campaign, *_ = build_campaign(questions=1, models=2)
    elsewhere = Workspace.objects.create(slug="elsewhere", name="Elsewhere")
    stranger = UserFactory(username="stranger", roles=["annotator"], roles__workspace=elsewhere)
    url = reverse("annotation:pairs", args=[campaign.slug])
    data = {"pair": campaign.pairs.get().pk, "action": "reassign", "annotator": "stranger"}
    page = client_as(researcher).post(url, data, follow=True).content.decode()
    assert "Choose an annotator" in page
    assert not Assignment.objects.filter(annotator=stranger).exists()
