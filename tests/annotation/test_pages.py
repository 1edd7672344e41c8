"""The annotator's pages and API: blindness, permissions, sanitising, and fixed query counts."""

import json
import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, Vote
from judging.models import Answer
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def identities(models):
    """Every string that would tell an annotator which model wrote an answer."""
    out = set()
    for model in models:
        out |= {model.name, model.name.upper(), f'"model_id": {model.pk}', f"model={model.pk}"}
    return out


def scan(response, secrets):
    body = response.content.decode()
    location = response.headers.get("Location", "")
    for secret in secrets:
        assert secret not in body, f"{secret!r} leaked in {response.request['PATH_INFO']}"
        assert secret not in location
    for word in ("model_a", "model_b", "pair_id", '"pair": {"id'):
        assert word not in body
    return body


def test_the_whole_flow_never_reveals_a_model(build_campaign, client):
    campaign, models, items, (person, _) = build_campaign(questions=3, models=3, pairs_per_question=2)
    secrets = identities(models)
    client.force_login(person)
    responses = [client.get(reverse("annotation:index"))]
    page = client.get(reverse("annotation:annotate", args=[campaign.slug]))
    responses.append(page)
    hidden = re.findall(r'<input type="hidden" name="(\w+)"', page.content.decode())
    assert sorted(set(hidden)) == ["csrfmiddlewaretoken", "next", "token"]
    token = Assignment.objects.get(annotator=person, status="leased").token
    responses.append(client.post(reverse("annotation:vote", args=[campaign.slug]), {"token": token, "choice": "left"}))
    responses.append(client.get(reverse("annotation:annotate", args=[campaign.slug])))
    responses.append(client.post(reverse("annotation:undo", args=[campaign.slug])))
    responses.append(client.get(reverse("annotation:annotate", args=[campaign.slug])))
    responses.append(client.post(reverse("annotation:vote", args=[campaign.slug]), {"token": token, "choice": "tie"}))
    responses.append(client.get(reverse("annotation:annotate", args=[campaign.slug])))
    token = Assignment.objects.get(annotator=person, status="leased").token
    responses.append(client.post(reverse("annotation:skip", args=[campaign.slug]), {"token": token}))
    api_next = client.get(reverse("api-annotate-next", args=[campaign.slug]))
    responses.append(api_next)
    assert sorted(api_next.json()) == [
        "campaign_votes",
        "can_undo",
        "pair",
        "pairs",
        "percent",
        "skipped",
        "voted",
        "wanted",
    ]
    assert sorted(api_next.json()["pair"]) == [
        "language",
        "leased_until",
        "left_html",
        "question_html",
        "right_html",
        "token",
    ]
    token = api_next.json()["pair"]["token"]
    first = client.post(
        reverse("api-annotate-vote", args=[campaign.slug]),
        {"token": token, "choice": "right"},
        content_type="application/json",
    )
    again = client.post(
        reverse("api-annotate-vote", args=[campaign.slug]),
        {"token": token, "choice": "right"},
        content_type="application/json",
    )
    assert (first.status_code, again.status_code) == (201, 200)
    responses += [first, again]
    responses.append(client.post(reverse("api-annotate-undo", args=[campaign.slug])))
    responses.append(client.get(reverse("api-annotate-next", args=[campaign.slug])))
    bad = client.post(
        reverse("api-annotate-vote", args=[campaign.slug]),
        {"token": token, "choice": "best"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    responses.append(bad)
    responses.append(
        client.post(
            reverse("api-annotate-skip", args=[campaign.slug]), {"token": token}, content_type="application/json"
        )
    )
    while (r := client.get(reverse("api-annotate-next", args=[campaign.slug]))).status_code == 200:
        responses.append(r)
        client.post(
            reverse("api-annotate-vote", args=[campaign.slug]),
            {"token": r.json()["pair"]["token"], "choice": "tie"},
            content_type="application/json",
        )
    assert r.status_code == 204
    responses.append(client.get(reverse("annotation:annotate", args=[campaign.slug])))
    for response in responses:
        assert response.status_code in (200, 201, 204, 302, 400), response.status_code
        scan(response, secrets)
    # 6 pairs: 2 voted via pages/API before the loop, 2 skipped, the rest in the loop.
    assert Vote.objects.filter(annotator=person).count() == 4
    assert Assignment.objects.filter(annotator=person, status="released").count() == 2


def test_answers_are_rendered_as_markdown_and_sanitised(build_campaign, client):
    campaign, models, items, (person, _) = build_campaign(questions=1, models=2)
    Answer.objects.filter(model=models[0]).update(
        text='**bold** <script>alert("x")</script> <img src="https://tracker.example/p.png"> [link](javascript:alert(1))'
    )
    Answer.objects.filter(model=models[1]).update(text="<b onclick='steal()'>hi</b>\n\n```\ncode <tag>\n```")
    client.force_login(person)
    body = client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert "<strong>bold</strong>" in body
    assert "<script>alert" not in body and "tracker.example" not in body and "javascript:alert" not in body
    assert "onclick" not in body and "steal()" not in body
    assert "code &lt;tag&gt;" in body
    assert body.count("<strong>bold</strong>") == 1  # the one pair shows the first model's answer once
    assert "<img" not in body  # images are stripped, not just their tracker addresses
    assert "Paris." not in body  # the reference answer is never shown


def test_who_may_open_what(build_campaign, client, researcher):
    campaign, _, _, (person, _) = build_campaign(questions=1, models=2)
    outsider = UserFactory(username="outsider", roles=["annotator"])
    client.force_login(outsider)
    assert client.get(reverse("annotation:annotate", args=[campaign.slug])).status_code == 404
    assert client.get(reverse("api-annotate-next", args=[campaign.slug])).status_code == 404
    assert client.get(reverse("api-annotate-next", args=[campaign.slug])).json() == {
        "detail": "No such campaign for you."
    }
    assert client.get(reverse("annotation:results", args=[campaign.slug])).status_code == 403
    assert client.get(reverse("api-campaign-bt", args=[campaign.slug])).status_code == 403
    client.force_login(researcher)
    assert client.get(reverse("annotation:annotate", args=[campaign.slug])).status_code == 403
    assert client.post(reverse("api-annotate-undo", args=[campaign.slug])).status_code == 403
    assert client.get(reverse("annotation:results", args=[campaign.slug])).status_code == 200
    client.logout()
    assert client.get(reverse("annotation:annotate", args=[campaign.slug])).status_code == 302
    assert client.get(reverse("api-annotate-next", args=[campaign.slug])).status_code in (401, 403)
    campaign.is_open = False
    campaign.save()
    client.force_login(person)
    closed = client.get(reverse("annotation:annotate", args=[campaign.slug]))
    assert closed.status_code == 200 and "This campaign is closed: it takes no new items." in closed.content.decode()


def test_query_counts_are_fixed(build_campaign, client, django_assert_num_queries):
    campaign, _, _, (person, _) = build_campaign(questions=6, models=3, pairs_per_question=3)
    client.force_login(person)
    url = reverse("annotation:annotate", args=[campaign.slug])
    client.get(url)  # warm up: session, content types
    with django_assert_num_queries(NEXT_WITH_LEASE):
        client.get(url)
    for _ in range(3):
        token = Assignment.objects.get(annotator=person, status="leased").token
        with django_assert_num_queries(VOTE):
            client.post(reverse("annotation:vote", args=[campaign.slug]), {"token": token, "choice": "left"})
        with django_assert_num_queries(NEXT_NEW_LEASE):
            client.get(url)
    api = reverse("api-annotate-next", args=[campaign.slug])
    with django_assert_num_queries(API_NEXT):
        token = client.get(api).json()["pair"]["token"]
    with django_assert_num_queries(API_VOTE):
        client.post(
            reverse("api-annotate-vote", args=[campaign.slug]),
            {"token": token, "choice": "tie"},
            content_type="application/json",
        )


NEXT_WITH_LEASE = 7
NEXT_NEW_LEASE = 12
VOTE = 11
API_NEXT = 7
API_VOTE = 11


def test_index_counts_my_votes_and_the_drawn_pairs(build_campaign, client):
    from annotation.campaigns import gold_pair_add
    from annotation.services import assignment_next, vote_cast

    campaign, models, items, (person, other) = build_campaign(questions=3, models=3, pairs_per_question=2)
    assert campaign.pairs_drawn == 6
    # A gold pair comes on top of the drawn ones and is not counted among them.
    gold_pair_add(campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], winner="model_a")
    for voter, votes in ((person, 2), (other, 1)):
        for _ in range(votes):
            vote_cast(token=assignment_next(campaign=campaign, annotator=voter).token, annotator=voter, choice="tie")
    client.force_login(person)
    page = client.get(reverse("annotation:index")).content.decode()
    assert re.search(r'Blind test</a></td><td class="num">2</td><td class="num">6</td>', page)
    api = client.get(reverse("api-annotate-next", args=[campaign.slug])).json()
    assert (api["voted"], api["pairs"]) == (2, 6)


def test_campaign_list_counts_pairs_and_votes_without_multiplying_them(build_campaign):
    from annotation.campaigns import gold_pair_add
    from annotation.selectors import campaign_list_with_counts
    from annotation.services import assignment_next, vote_cast

    campaign, models, items, (person, other) = build_campaign(questions=3, models=3, pairs_per_question=2)
    build_campaign(questions=1, models=2, slug="empty", annotators=0)
    gold_pair_add(campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], winner="model_a")
    for voter, votes in ((person, 3), (other, 2)):
        for _ in range(votes):
            vote_cast(token=assignment_next(campaign=campaign, annotator=voter).token, annotator=voter, choice="tie")
    counts = {row.slug: (row.pair_count, row.vote_count) for row in campaign_list_with_counts()}
    # Gold pairs are counted apart (gold_pair_count), not among the campaign's pairs.
    assert counts == {"blind": (6, 5), "empty": (1, 0)}
    assert campaign_list_with_counts().get(slug="blind").gold_pair_count == 1


def test_statistics_api_returns_the_whole_report_through_its_serializers(build_campaign, client, researcher):
    """The Output serializers that describe the schema drop nothing the report holds."""
    from annotation.report import alignment_report, annotator_quality, bt_report
    from annotation.services import assignment_next, vote_cast
    from tests.factories import JudgeRunFactory, JudgmentFactory

    campaign, models, items, people = build_campaign(questions=2, models=3, annotators=2)
    for person in people:
        while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
            vote_cast(annotator=person, token=assignment.token, choice="left")
    run = JudgeRunFactory(dataset=campaign.dataset, status="finished")
    for item in items:
        for rank, model in enumerate(models):
            JudgmentFactory(run=run, item=item, model=model, final_score=9 - rank)
    client.force_login(researcher)
    bt = client.get(reverse("api-campaign-bt", args=[campaign.slug]), {"rounds": 20}).json()
    assert bt == json.loads(json.dumps(bt_report(campaign=campaign, rounds=20, seed=0)))
    assert len(bt["scores"]) == 3 and bt["votes"] == Vote.objects.filter(campaign=campaign).count()
    alignment = client.get(
        reverse("api-campaign-alignment", args=[campaign.slug]), {"rounds": 20, "run": run.pk}
    ).json()
    expected = alignment_report(dataset=campaign.dataset, campaign=campaign, run=run, rounds=20, seed=0)
    # The report as computed, and the two fields that say it could be computed.
    assert alignment == json.loads(json.dumps({**expected, "estimable": True, "reason": None}))
    quality = client.get(reverse("api-campaign-quality", args=[campaign.slug])).json()
    assert quality == json.loads(json.dumps(annotator_quality(campaign=campaign)))
    voters = Vote.objects.filter(campaign=campaign).values_list("annotator__username", flat=True)
    assert {row["annotator"]: row["votes"] for row in quality} == {
        name: list(voters).count(name) for name in set(voters)
    }


def test_a_second_submit_with_another_choice_is_refused_not_stored(build_campaign, client):
    """A double click stores one vote; a change of mind sent as a second vote gets a clear
    answer instead of a 'stored' that would hide that the first choice stands."""
    campaign, models, items, (person, _) = build_campaign(questions=1, models=2)
    client.force_login(person)
    token = client.get(reverse("api-annotate-next", args=[campaign.slug])).json()["pair"]["token"]
    url = reverse("api-annotate-vote", args=[campaign.slug])
    first = client.post(url, {"token": token, "choice": "left"}, content_type="application/json")
    same = client.post(url, {"token": token, "choice": "left"}, content_type="application/json")
    other = client.post(url, {"token": token, "choice": "right"}, content_type="application/json")
    assert (first.status_code, same.status_code, same.json()) == (201, 200, {"stored": True, "created": False})
    assert (other.status_code, other.json()) == (
        400,
        {"detail": "You have already voted differently on this item: undo your vote to change it."},
    )
    assert Vote.objects.filter(annotator=person).count() == 1
