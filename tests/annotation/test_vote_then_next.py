"""A vote that asks for the next pair (`POST votes/?next=1`) answers what `GET next/` would have:
the same lease, the same blind payload, the same reasons when nothing is left, in one request."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.annotate_api import NextPairSerializer, next_pair_data
from annotation.models import Assignment, Vote
from annotation.selectors import annotator_progress, assignment_display
from annotation.services import assignment_next
from tests.annotation.conftest import MODEL_NAMES

pytestmark = pytest.mark.django_db


def vote(client, slug, token, choice="left", then_next=True):
    url = reverse("api-annotate-vote", args=[slug]) + ("?next=1" if then_next else "")
    return client.post(url, {"token": token, "choice": choice}, content_type="application/json")


def next_pair(client, slug):
    return client.get(reverse("api-annotate-next", args=[slug]))


def test_the_vote_carries_the_pair_next_would_lease(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    person = people[0]
    client.force_login(person)
    first = next_pair(client, campaign.slug).json()

    answer = vote(client, campaign.slug, first["pair"]["token"])

    assert answer.status_code == 201
    body = answer.json()
    assert body["stored"] is True and body["created"] is True
    assert body["next_reason"] == "" and body["retry_after"] is None
    shown = body["next"]
    assert shown["pair"]["token"] != first["pair"]["token"]
    # Leased to this annotator: next/ offers the same item again, with the same progress line.
    lease = Assignment.objects.get(token=shown["pair"]["token"])
    assert lease.annotator == person and lease.status == Assignment.Status.LEASED
    again = next_pair(client, campaign.slug).json()
    assert again["pair"]["token"] == shown["pair"]["token"]
    assert {key: again[key] for key in again if key != "pair"} == {key: shown[key] for key in shown if key != "pair"}
    assert shown["voted"] == 1 and shown["can_undo"] is True
    assert Vote.objects.filter(annotator=person).count() == 1


def test_the_vote_with_its_next_pair_names_no_model(client, build_campaign):
    campaign, models, _items, people = build_campaign(questions=2, models=3)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]

    text = vote(client, campaign.slug, token).content.decode()

    assert '"next": {' in text.replace('"next":{', '"next": {')
    for model in models:
        assert model.name not in text and f'"{model.pk}"' not in text
    for name in MODEL_NAMES:
        assert name not in text


def test_without_next_the_vote_leases_nothing(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]

    answer = vote(client, campaign.slug, token, then_next=False)

    assert answer.status_code == 201 and answer.json() == {"stored": True, "created": True}
    assert Assignment.objects.filter(annotator=people[0]).count() == 1


def test_a_refused_vote_leases_nothing(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]

    answer = vote(client, campaign.slug, token, choice="both")

    assert answer.status_code == 400 and "choice" in answer.json()
    assert Vote.objects.count() == 0
    assert list(Assignment.objects.filter(annotator=people[0]).values_list("token", flat=True)) == [token]


def test_the_last_vote_says_done(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=1, models=2)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]

    body = vote(client, campaign.slug, token).json()

    assert body["stored"] is True
    assert body["next"] is None and body["next_reason"] == "done" and body["retry_after"] is None
    assert next_pair(client, campaign.slug).status_code == 204


def test_a_vote_while_the_rest_is_held_by_others_says_wait(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=2, models=2, votes_per_pair=1, lease_seconds=600)
    holder, voter = people
    held = assignment_next(campaign=campaign, annotator=holder)
    client.force_login(voter)
    token = next_pair(client, campaign.slug).json()["pair"]["token"]
    assert token != held.token

    body = vote(client, campaign.slug, token).json()

    assert body["next"] is None and body["next_reason"] == "wait" and body["retry_after"] == 60
    wait = next_pair(client, campaign.slug)
    assert wait.status_code == 204 and wait["Retry-After"] == "60"


def test_a_vote_on_an_item_held_when_the_campaign_closed_counts_and_says_closed(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]
    campaign.is_open = False
    campaign.save()

    body = vote(client, campaign.slug, token).json()

    assert body["stored"] is True and Vote.objects.count() == 1
    assert body["next"] is None and body["next_reason"] == "closed"
    assert next_pair(client, campaign.slug).status_code == 409


def test_the_same_vote_sent_again_stores_nothing_and_offers_the_pair_held(client, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]
    first = vote(client, campaign.slug, token).json()

    again = vote(client, campaign.slug, token)

    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["next"]["pair"]["token"] == first["next"]["pair"]["token"]
    assert Vote.objects.count() == 1


def test_one_request_a_round_runs_fewer_statements_than_two(client, build_campaign):
    """The request's own statements (session, user, throttle count, campaign) are paid once."""
    campaign, _models, _items, people = build_campaign(questions=6, models=3, annotators=2)
    client.force_login(people[0])
    token = next_pair(client, campaign.slug).json()["pair"]["token"]
    with CaptureQueriesContext(connection) as two:
        vote(client, campaign.slug, token, then_next=False)
        token = next_pair(client, campaign.slug).json()["pair"]["token"]
    with CaptureQueriesContext(connection) as one:
        vote(client, campaign.slug, token)

    assert len(one.captured_queries) < len(two.captured_queries)


def test_the_pair_is_written_as_its_serializer_writes_it(client, build_campaign):
    """next/ and the vote write the pair directly, not through NextPairSerializer (its fields
    deep-copied on every request); the schema still documents that serializer, so both must agree."""
    campaign, _models, _items, people = build_campaign(questions=3, models=3)
    client.force_login(people[0])
    lease = assignment_next(campaign=campaign, annotator=people[0])
    shown = assignment_display(assignment=lease)
    progress = annotator_progress(campaign=campaign, annotator=people[0])

    written = next_pair_data(shown, progress)

    assert json.dumps(written) == json.dumps(NextPairSerializer({"pair": shown, **progress}).data)
    assert next_pair(client, campaign.slug).json() == written
