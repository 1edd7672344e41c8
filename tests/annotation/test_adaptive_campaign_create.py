"""Adaptive campaigns from the command line, the researcher's page (English and Chinese) and the API,
and what an annotator and a researcher then see of them."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Campaign, ComparisonPair, StoredFigures, Vote
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory
from tests.figures import get_computed, run_queued_figures

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """Dataset "mini": 4 questions answered by alpha, beta and gamma; annotators ann1 and ann2."""
    dataset = DatasetFactory(name="mini")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    for n in range(4):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for k, model in enumerate(models):
            AnswerFactory(item=item, model=model, text=f"Answer number {k} to question {n}.")
    people = [UserFactory(username=name, roles=["annotator"]) for name in ("ann1", "ann2")]
    return dataset, models, people


@pytest.fixture
def research(client):
    client.force_login(UserFactory(username="res", roles=["researcher"]))
    return client


def nothing_created():
    return not Campaign.objects.exists() and not ComparisonPair.objects.exists() and not StoredFigures.objects.exists()


def test_the_command_creates_an_adaptive_campaign(world, capsys):
    call_command(
        "campaign_create", "--dataset", "mini", "--slug", "a1", "--models", "alpha,beta,gamma",
        "--annotators", "ann1,ann2", "--sampling", "adaptive", "--budget", "8", "--votes-per-pair", "2",
        "--uniform-share", "0.25", "--seed", "9",
    )  # fmt: skip
    campaign = Campaign.objects.get(slug="a1")
    assert (campaign.sampling, campaign.budget, campaign.uniform_share, campaign.seed) == ("adaptive", 8, 0.25, 9)
    assert (campaign.pairs.count(), campaign.pairs_planned, campaign.question_count) == (0, 4, 4)
    assert StoredFigures.objects.filter(campaign=campaign, what="design").count() == 1
    assert capsys.readouterr().out.strip() == (
        "Created adaptive campaign a1 on mini: up to 4 pairs (8 votes, 2 per pair) chosen from the votes so far "
        "among 4 questions, 3 models, 2 annotators, 25% of the pairs drawn uniformly."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--sampling", "adaptive"],
            "An adaptive campaign needs a budget from 1 (the votes per pair) to 1000000 votes.",
        ),
        (["--sampling", "adaptive", "--budget", "5", "--uniform-share", "0"], "must be above 0 and at most 1"),
        (["--budget", "5"], "A vote budget is for adaptive campaigns; a fixed campaign draws its pairs at once."),
        (["--sampling", "greedy", "--budget", "5"], "argument --sampling: invalid choice: 'greedy'"),
    ],
)
def test_the_command_refuses_a_bad_adaptive_design_and_creates_nothing(world, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("campaign_create", "--dataset", "mini", "--slug", "a1", "--models", "alpha,beta", *args)
    assert nothing_created()


def adaptive_form(**changes):
    data = {
        "title": "Adaptive from the page",
        "slug": "page-a",
        "dataset": "mini",
        "candidates": ["alpha", "beta", "gamma"],
        "sampling": "adaptive",
        "budget": "6",
        "uniform_share": "0.3",
        "votes_per_pair": "1",
        "annotators": ["ann1", "ann2"],
        "gold_every": "0",
        "seed": "4",
    }
    data.update(changes)
    return data


def test_the_page_offers_both_designs_in_english_and_chinese(world, research):
    page = research.get(reverse("annotation:campaign-new")).content.decode()
    assert 'name="sampling" value="fixed"' in page and 'name="sampling" value="adaptive"' in page
    assert "Vote budget" in page and "Share of uniformly drawn pairs" in page
    research.cookies["django_language"] = "zh-hans"
    page = research.get(reverse("annotation:campaign-new")).content.decode()
    assert "抽样方式" in page and "投票预算" in page and "自适应：根据已有投票选择回答对" in page


def test_the_page_creates_an_adaptive_campaign_and_its_results_show_the_design(world, research):
    response = research.post(reverse("annotation:campaign-new"), adaptive_form())
    assert response.status_code == 302, response.content.decode()
    campaign = Campaign.objects.get(slug="page-a")
    assert (campaign.sampling, campaign.budget, campaign.uniform_share, campaign.pairs.count()) == (
        "adaptive",
        6,
        0.3,
        0,
    )
    page = research.get(response["Location"]).content.decode()
    assert "Campaign page-a created: it chooses up to 6 pairs as the votes come in." in page
    assert "0 of 6 pairs drawn so far (a budget of 6 votes)." in page
    assert 'id="design-likeliest"' in page  # every model pair alike before any vote


def test_the_page_says_which_number_each_design_needs(world, research):
    response = research.post(reverse("annotation:campaign-new"), adaptive_form(budget=""))
    assert response.status_code == 400
    assert "An adaptive campaign needs a vote budget." in response.content.decode()
    response = research.post(reverse("annotation:campaign-new"), adaptive_form(uniform_share="0"))
    assert response.status_code == 400
    assert "Keep some pairs uniform: a share above 0" in response.content.decode()
    fixed = adaptive_form(sampling="fixed", budget="")
    response = research.post(reverse("annotation:campaign-new"), fixed)
    assert response.status_code == 400
    assert "A fixed campaign needs the number of questions to draw." in response.content.decode()
    research.cookies["django_language"] = "zh-hans"
    response = research.post(reverse("annotation:campaign-new"), adaptive_form(budget="", slug="page-b"))
    assert "自适应标注任务需要投票预算。" in response.content.decode()
    response = research.post(reverse("annotation:campaign-new"), adaptive_form(votes_per_pair="2", budget="1"))
    assert "自适应标注任务的预算须在 2（每对回答的投票数）到 1000000 票之间。" in response.content.decode()
    assert nothing_created()


def test_a_fixed_campaign_from_the_page_ignores_the_adaptive_fields(world, research):
    data = adaptive_form(sampling="fixed", question_count="2", budget="50", uniform_share="0.5")
    response = research.post(reverse("annotation:campaign-new"), data)
    assert response.status_code == 302
    campaign = Campaign.objects.get(slug="page-a")
    assert (campaign.sampling, campaign.budget, campaign.pairs.count()) == ("fixed", 0, 2)


def test_the_api_creates_an_adaptive_campaign_and_refuses_bad_designs(world, research):
    url = reverse("api-campaigns")
    good = {
        "slug": "api-a",
        "dataset": "mini",
        "models": ["gamma", "alpha", "beta"],
        "sampling": "adaptive",
        "budget": 9,
        "votes_per_pair": 2,
        "uniform_share": 0.5,
        "annotators": ["ann1", "ann2"],
    }
    for changes, answer in [
        (
            {"budget": 0},
            {"detail": "An adaptive campaign needs a budget from 2 (the votes per pair) to 1000000 votes."},
        ),
        ({"budget": None}, {"budget": ["This field may not be null."]}),
        ({"uniform_share": 0}, {"detail": "The share of uniformly drawn pairs must be above 0 and at most 1."}),
        ({"uniform_share": 1.5}, {"uniform_share": ["Ensure this value is less than or equal to 1."]}),
        ({"sampling": "greedy"}, {"sampling": ['"greedy" is not a valid choice.']}),
    ]:
        response = research.post(url, {**good, **changes}, content_type="application/json")
        assert (response.status_code, response.json()) == (400, answer)
    assert nothing_created()
    created = research.post(url, good, content_type="application/json")
    assert created.status_code == 201
    assert created.json() == {
        "slug": "api-a",
        "title": "api-a",
        "dataset": "mini",
        "question_count": 4,
        "pairs_per_question": 1,
        "votes_per_pair": 2,
        "sampling": "adaptive",
        "budget": 9,
        "uniform_share": 0.5,
        "pair_count": 0,
        "pairs_planned": 4,
        "annotators": ["ann1", "ann2"],
    }
    listed = research.get(url).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [(row["slug"], row["sampling"], row["budget"], row["pair_count"]) for row in rows] == [
        ("api-a", "adaptive", 9, 0)
    ]
    manifest = research.get(reverse("api-campaign-manifest", args=["api-a"])).json()
    assert (manifest["design"]["sampling"], manifest["design"]["budget"], manifest["design"]["uniform_share"]) == (
        "adaptive",
        9,
        0.5,
    )


def test_annotators_vote_on_an_adaptive_campaign_through_the_pages_and_the_api(world, client):
    dataset, models, (first, second) = world
    call_command(
        "campaign_create", "--dataset", "mini", "--slug", "a1", "--models", "alpha,beta,gamma",
        "--annotators", "ann1,ann2", "--sampling", "adaptive", "--budget", "3",
    )  # fmt: skip
    client.force_login(first)
    page = client.get(reverse("annotation:annotate", args=["a1"])).content.decode()
    assert "The campaign has 3 pairs." in page
    # Blind: neither a model's name nor the design's figures reach the annotator.
    for word in ("alpha", "beta", "gamma", "probability", "uniform", "information"):
        assert word not in page.lower()
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    client.post(reverse("annotation:vote", args=["a1"]), {"token": token, "choice": "left"})
    client.force_login(second)
    shown = client.get(reverse("api-annotate-next", args=["a1"])).json()
    assert set(shown["pair"]) == {"token", "question_html", "left_html", "right_html", "language", "leased_until"}
    assert (shown["pairs"], shown["wanted"], shown["campaign_votes"]) == (3, 3, 1)
    stored = client.post(
        reverse("api-annotate-vote", args=["a1"]),
        {"token": shown["pair"]["token"], "choice": "tie"},
        content_type="application/json",
    )
    assert stored.status_code == 201
    votes = list(Vote.objects.order_by("pk"))
    assert len(votes) == 2 and all(vote.choice_probability == vote.assignment.pair.choice_probability for vote in votes)
    assert all(vote.choice_probability == pytest.approx(1 / 3) for vote in votes)  # no vote when drawn: uniform


def test_the_votes_export_and_the_results_page_show_the_probabilities(world, client, research):
    dataset, models, (first, second) = world
    call_command(
        "campaign_create", "--dataset", "mini", "--slug", "a1", "--models", "alpha,beta,gamma",
        "--annotators", "ann1", "--sampling", "adaptive", "--budget", "3",
    )  # fmt: skip
    client.force_login(first)
    for _ in range(3):
        token = client.get(reverse("api-annotate-next", args=["a1"])).json()["pair"]["token"]
        client.post(
            reverse("api-annotate-vote", args=["a1"]),
            {"token": token, "choice": "left"},
            content_type="application/json",
        )
    research.force_login(UserFactory(username="res2", roles=["researcher"]))
    exported = research.get(reverse("api-export", args=["votes"]), {"campaign": "a1", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode("utf-8-sig"))))
    # The design was not refreshed between these votes (no worker ran): every model pair at 1/3.
    assert [float(row["choice_probability"]) for row in rows] == pytest.approx([1 / 3] * 3)
    assert {row["chosen_by"] for row in rows} <= {"uniform", "information"} and len(rows) == 3
    run_queued_figures()
    page = get_computed(research, reverse("annotation:results", args=["a1"]), {"rounds": 0}).content.decode()
    assert "3 of 3 pairs drawn so far (a budget of 3 votes)." in page
    assert "Design computed" in page and "from 3 votes." in page
    call_command("campaign_create", "--dataset", "mini", "--slug", "f1", "--models", "alpha,beta", "--questions", "1")
    assert 'id="sampling-design"' not in research.get(reverse("annotation:results", args=["f1"])).content.decode()


def test_a_budget_above_the_distinct_pairs_is_refused_by_the_page_and_the_command(world, research):
    # 4 questions x 3 model pairs = 12 distinct pairs: 24 votes at 2 per pair.
    with pytest.raises(CommandError, match="make 12 distinct pairs .* a budget of 30000 votes asks for more"):
        call_command(
            "campaign_create", "--dataset", "mini", "--slug", "big", "--models", "alpha,beta,gamma",
            "--annotators", "ann1,ann2", "--sampling", "adaptive", "--budget", "30000",
        )  # fmt: skip
    response = research.post(reverse("annotation:campaign-new"), adaptive_form(budget="25", votes_per_pair="2"))
    assert response.status_code == 400
    assert (
        "These candidates and questions make 12 distinct pairs (a question with two of its models), 24 votes at "
        "2 per pair; a budget of 25 votes asks for more."
    ) in response.content.decode()
    research.cookies["django_language"] = "zh-hans"
    page = research.post(reverse("annotation:campaign-new"), adaptive_form(budget="13")).content.decode()
    assert "共可组成 12 个不同的回答对" in page and "13 票的预算超出了这个数" in page
    assert nothing_created()
    research.cookies["django_language"] = "en"
    assert research.post(reverse("annotation:campaign-new"), adaptive_form(budget="12")).status_code == 302
