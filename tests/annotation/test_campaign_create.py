"""Creating campaigns: the command, the researcher's page and the API, and bad input that changes nothing."""

import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Assignment, Campaign, ComparisonPair
from core.models import Workspace
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """Dataset "mini" with 5 questions: 4 answered by alpha, beta and gamma, 1 by alpha only."""
    dataset = DatasetFactory(name="mini")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    for n in range(5):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for model in models if n < 4 else models[:1]:
            AnswerFactory(item=item, model=model, text=f"{model.name} on {n}")
    people = [UserFactory(username=name, roles=["annotator"]) for name in ("ann1", "ann2")]
    UserFactory(username="reviewer1", roles=["reviewer"])
    return dataset, models, people


def nothing_created():
    return (Campaign.objects.count(), ComparisonPair.objects.count()) == (0, 0)


def test_command_creates_a_balanced_campaign(world, capsys):
    call_command(
        "campaign_create",
        "--dataset",
        "mini",
        "--slug",
        "c1",
        "--models",
        "alpha, beta,gamma",
        "--questions",
        "3",
        "--pairs-per-question",
        "2",
        "--votes-per-pair",
        "2",
        "--annotators",
        "ann1,ann2",
        "--gold-every",
        "5",
        "--seed",
        "7",
        "--title",
        "First campaign",
    )
    out = capsys.readouterr().out
    assert out.strip() == (
        "Created campaign c1 on mini: 6 pairs over 3 questions, 3 models, 2 annotators, 2 votes wanted per pair."
    )
    campaign = Campaign.objects.get(slug="c1")
    assert (campaign.title, campaign.votes_per_pair, campaign.gold_every, campaign.seed) == ("First campaign", 2, 5, 7)
    assert sorted(campaign.annotators.values_list("username", flat=True)) == ["ann1", "ann2"]
    assert sorted(campaign.candidates.values_list("name", flat=True)) == ["alpha", "beta", "gamma"]
    pairs = list(campaign.pairs.values_list("item__external_id", "model_a__name", "model_b__name"))
    # 3 questions x 2 pairs; the 3 model pairs used exactly twice each.
    assert len({p[0] for p in pairs}) == 3 and len(pairs) == 6
    from collections import Counter

    assert sorted(Counter(tuple(sorted(p[1:])) for p in pairs).values()) == [2, 2, 2]
    # Without --questions every eligible question is drawn (q4 has one answer only); the title defaults to the slug.
    call_command("campaign_create", "--dataset", "mini", "--slug", "c2", "--models", "alpha,beta")
    c2 = Campaign.objects.get(slug="c2")
    assert (c2.title, c2.question_count, c2.pairs.count()) == ("c2", 4, 4)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "nope", "--models", "alpha,beta"], "No dataset named 'nope'."),
        (["--models", "alpha,delta,omega"], "Unknown models: delta, omega."),
        (["--models", "alpha"], "A campaign needs at least two candidate models."),
        (
            ["--models", "alpha,beta", "--annotators", "ann1,reviewer1,ghost"],
            "Not active annotators (no such user, or without the annotator role): reviewer1, ghost.",
        ),
        (
            ["--models", "alpha,beta", "--questions", "5"],
            "Only 4 questions of this dataset have answers from two or more of these candidates.",
        ),
        (["--models", "alpha,beta", "--pairs-per-question", "2"], "2 candidates make at most 1 pairs per question."),
        (
            ["--models", "alpha,beta", "--votes-per-pair", "3", "--annotators", "ann1,ann2"],
            "3 votes per pair need at least 3 annotators; 2 were given.",
        ),
        (["--models", "alpha,beta", "--votes-per-pair", "0"], "Votes per pair must be from 1 to 100."),
        (
            ["--models", "alpha,beta", "--gold-every", "-1"],
            "A gold pair every N items needs N from 0 (no gold pairs) to 1000.",
        ),
        (
            ["--models", "alpha,beta", "--slug", "bad slug"],
            "A slug is 1 to 50 letters, digits, hyphens or underscores; 'bad slug' is not.",
        ),
        (["--models", "alpha,beta", "--slug", "new"], "The slug new is reserved; choose another."),
        (
            ["--models", "alpha,beta", "--questions", "0"],
            "Questions, pairs per question and votes per pair must all be at least 1.",
        ),
    ],
)
def test_command_refuses_bad_input_and_creates_nothing(world, args, message):
    base = {"--dataset": "mini", "--slug": "c1"}
    given = dict(zip(args[::2], args[1::2]))
    merged = [part for key, value in {**base, **given}.items() for part in (key, value)]
    with pytest.raises(CommandError) as caught:
        call_command("campaign_create", *merged)
    assert str(caught.value) == message
    assert nothing_created()


def test_command_refuses_a_slug_in_use(world):
    call_command("campaign_create", "--dataset", "mini", "--slug", "c1", "--models", "alpha,beta", "--questions", "2")
    with pytest.raises(CommandError, match=r"The link name 'c1' is taken\. c1-[a-z2-9]{6} is free"):
        call_command("campaign_create", "--dataset", "mini", "--slug", "c1", "--models", "alpha,gamma")
    assert Campaign.objects.count() == 1 and ComparisonPair.objects.count() == 2


def form_data(**changes):
    data = {
        "title": "From the page",
        "slug": "page-1",
        "dataset": "mini",
        "candidates": ["alpha", "beta", "gamma"],
        "question_count": "2",
        "pairs_per_question": "3",
        "votes_per_pair": "2",
        "annotators": ["ann1", "ann2"],
        "gold_every": "0",
        "seed": "3",
        "instructions_en": "Pick one.",
        "instructions_zh": "选一个。",
    }
    data.update(changes)
    return data


def test_researcher_page_creates_a_campaign(world, client):
    researcher = UserFactory(username="res", roles=["researcher"])
    client.force_login(researcher)
    page = client.get(reverse("annotation:campaign-new"))
    assert page.status_code == 200
    body = page.content.decode()
    assert 'value="ann1"' in body and 'value="reviewer1"' not in body  # only annotators are offered
    response = client.post(reverse("annotation:campaign-new"), form_data())
    assert response.status_code == 302 and response["Location"] == reverse("annotation:results", args=["page-1"])
    campaign = Campaign.objects.get(slug="page-1")
    assert (campaign.pairs.count(), campaign.created_by, campaign.instructions_zh) == (6, researcher, "选一个。")
    results = client.get(response["Location"])
    assert "Campaign page-1 created with 6 pairs." in results.content.decode()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"candidates": ["alpha"]}, "A campaign needs at least two candidate models."),
        (
            {"question_count": "9"},
            "Only 4 questions of this dataset have answers from two or more of these candidates.",
        ),
        ({"votes_per_pair": "3"}, "3 votes per pair need at least 3 annotators; 2 were given."),
        ({"annotators": ["reviewer1"]}, "Select a valid choice. reviewer1 is not one of the available choices."),
        ({"dataset": "nope"}, "Select a valid choice. That choice is not one of the available choices."),
        ({"slug": "new"}, "The slug new is reserved; choose another."),
        ({"question_count": "x"}, "Enter a whole number."),
    ],
)
def test_researcher_page_shows_why_a_design_is_refused(world, client, changes, message):
    client.force_login(UserFactory(username="res", roles=["researcher"]))
    response = client.post(reverse("annotation:campaign-new"), form_data(**changes))
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'")
    assert nothing_created()


def test_researcher_page_offers_a_free_link_and_names_a_title_in_use(world, client):
    """A taken slug (whoever holds it) puts a free one in the field; sending again takes it. A
    title another campaign of this workspace has is named beside the title."""
    other = Workspace.objects.create(slug="other-team", name="Other team")
    CampaignFactory(slug="page-1", title="Theirs", dataset=DatasetFactory(name="theirs", workspace=other))
    client.force_login(UserFactory(username="res", roles=["researcher"]))
    response = client.post(reverse("annotation:campaign-new"), form_data())
    proposal = response.context["form"]["slug"].value()
    assert response.status_code == 400 and re.fullmatch(r"page-1-[a-z2-9]{6}", proposal)
    assert response.context["form"].errors["slug"] == [
        f"The link name 'page-1' is taken. {proposal} is free: keep it or choose another."
    ]
    assert "Theirs" not in response.text and "other-team" not in response.text
    assert client.post(reverse("annotation:campaign-new"), form_data(slug=proposal)).status_code == 302
    again = client.post(reverse("annotation:campaign-new"), form_data(slug="page-2"))
    assert again.context["form"].errors["title"] == [
        "A campaign titled 'From the page' exists already in this workspace; choose another title."
    ]
    assert Campaign.objects.count() == 2


def test_only_researchers_create_campaigns(world, client):
    annotator = world[2][0]
    client.force_login(annotator)
    assert client.get(reverse("annotation:campaign-new")).status_code == 403
    assert client.post(reverse("annotation:campaign-new"), form_data()).status_code == 403
    api = client.post(
        reverse("api-campaigns"),
        {"slug": "x", "dataset": "mini", "models": ["alpha", "beta"], "questions": 1},
        content_type="application/json",
    )
    assert api.status_code == 403
    client.logout()
    assert client.post(reverse("api-campaigns"), {}, content_type="application/json").status_code in (401, 403)
    assert nothing_created()


def test_api_creates_a_campaign_and_refuses_bad_input(world, client):
    client.force_login(UserFactory(username="res", roles=["researcher"]))
    url = reverse("api-campaigns")
    good = {
        "slug": "api-1",
        "dataset": "mini",
        "models": ["gamma", "alpha"],
        "questions": 3,
        "votes_per_pair": 2,
        "annotators": ["ann2", "ann1"],
        "title": "Via the API",
    }
    for changes, message in [
        ({"models": ["alpha", "zeta"]}, {"detail": "Unknown models: zeta."}),
        ({"dataset": "gone"}, {"detail": "No dataset named 'gone'."}),
        ({"votes_per_pair": 3}, {"detail": "3 votes per pair need at least 3 annotators; 2 were given."}),
        ({"questions": 0}, {"questions": ["Ensure this value is greater than or equal to 1."]}),
        ({"models": ["alpha"]}, {"models": ["Ensure this field has at least 2 elements."]}),
        (
            {"slug": "no spaces"},
            {"slug": ['Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.']},
        ),
        (
            {"annotators": ["reviewer1"]},
            {"detail": "Not active annotators (no such user, or without the annotator role): reviewer1."},
        ),
    ]:
        response = client.post(url, {**good, **changes}, content_type="application/json")
        assert (response.status_code, response.json()) == (400, message)
    assert nothing_created()
    created = client.post(url, good, content_type="application/json")
    assert created.status_code == 201
    assert created.json() == {
        "slug": "api-1",
        "title": "Via the API",
        "dataset": "mini",
        "question_count": 3,
        "pairs_per_question": 1,
        "votes_per_pair": 2,
        "sampling": "fixed",
        "budget": 0,
        "uniform_share": 0.2,
        "pair_count": 3,
        "pairs_planned": 3,
        "annotators": ["ann1", "ann2"],
    }
    again = client.post(url, good, content_type="application/json")
    proposed = again.json()["proposed_slug"]
    assert re.fullmatch(r"api-1-[a-z2-9]{6}", proposed) and not Campaign.objects.filter(slug=proposed).exists()
    assert (again.status_code, again.json()["detail"]) == (
        400,
        f"The link name 'api-1' is taken. {proposed} is free: keep it or choose another.",
    )
    assert Campaign.objects.count() == 1 and ComparisonPair.objects.count() == 3 and Assignment.objects.count() == 0
    listed = client.get(url).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [(row["slug"], row["pair_count"]) for row in rows] == [("api-1", 3)]
