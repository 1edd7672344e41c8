"""The demo data fills every page, loads once, and its accounts exist only in demo mode."""

import re
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Campaign, ComparisonPair, Vote
from curation.models import Case, Dataset, Item, Study, Submission
from home.demo import demo_seed
from judging.models import Answer, CandidateModel, JudgeRun, JudgeTemplate, Judgment
from judging.prompts.building import default_templates

pytestmark = pytest.mark.django_db


def test_demo_accounts_are_refused_outside_demo_mode(settings):
    settings.DEMO_MODE = False
    with pytest.raises(ImproperlyConfigured, match="USERBENCH_DEMO=1"):
        demo_seed()
    assert get_user_model().objects.count() == 0
    assert Study.objects.count() == 0


def test_demo_seed_loads_everything_once(settings, capsys):
    settings.DEMO_MODE = True
    call_command("seed_demo")
    assert "researcher  password: demo-researcher" in capsys.readouterr().out
    counts = {
        "studies": Study.objects.filter(slug="demo").count(),
        "submissions": Submission.objects.count(),
        "excluded": Submission.objects.filter(excluded=True).count(),
        "cases": Case.objects.count(),
        "datasets": Dataset.objects.count(),
        "items": Item.objects.count(),
        "models": CandidateModel.objects.count(),
        "answers": Answer.objects.count(),
        "finished_runs": JudgeRun.objects.filter(status="finished").count(),
        "judgments": Judgment.objects.count(),
        "parse_failures": Judgment.objects.exclude(parse_error="").count(),
        "pairs": ComparisonPair.objects.count(),
        "votes": Vote.objects.count(),
    }
    assert counts == {
        "studies": 1,
        "submissions": 3,
        "excluded": 1,
        "cases": 15,
        "datasets": 1,
        "items": 6,
        "models": 3,
        "answers": 18,
        "finished_runs": 1,
        "judgments": 18,
        "parse_failures": 1,
        "pairs": 18,
        "votes": 36,
    }
    user = get_user_model().objects.get(username="annotator")
    assert Campaign.objects.get(slug="demo").annotators.filter(pk=user.pk).exists()

    Study.objects.filter(slug="demo").update(title_en="Edited by a researcher")
    call_command("seed_demo")
    assert "nothing changed" in capsys.readouterr().out
    assert Study.objects.get(slug="demo").title_en == "Edited by a researcher"
    assert get_user_model().objects.count() == 3


def test_demo_fills_each_role_page(settings, client):
    settings.DEMO_MODE = True
    demo_seed()
    assert client.login(username="researcher", password="demo-researcher")
    page = client.get(reverse("dashboard")).text
    assert "demo-v1" in page and "judge-large" in page and "Demo: which answer" in page
    client.logout()
    assert client.login(username="reviewer", password="demo-reviewer")
    page = client.get(reverse("curation:review")).text
    # Five cases of the second participant wait; the excluded participant's never enter the queue.
    assert '<td class="num" data-label="Waiting for you">5</td>' in page
    client.logout()
    assert client.login(username="annotator", password="demo-annotator")
    page = client.get(reverse("annotation:index")).text
    assert "Demo: which answer" in page


def test_dashboard_query_count_does_not_grow_with_data(settings, client, django_assert_num_queries, researcher):
    settings.DEMO_MODE = True
    client.force_login(researcher)
    # session, user with roles, the workspace it names, then one query per table section
    with django_assert_num_queries(7):
        client.get(reverse("dashboard"))
    demo_seed()
    with django_assert_num_queries(7):
        client.get(reverse("dashboard"))


def test_demo_answers_never_name_their_style_and_questions_vary(settings):
    settings.DEMO_MODE = True
    demo_seed()
    texts = list(Answer.objects.values_list("text", flat=True))
    label = re.compile(r"^[^\n.!?。]{0,40}(answer|reply|response|回答|答复)\s*[:：]", re.IGNORECASE)
    assert [text for text in texts if label.match(text)] == []
    for word in ("careful, complete", "shorter answer", "详细而完整", "简短回答"):
        assert not any(word in text for text in texts), word
    # Each model's answers are its own, not the reference with a label in front.
    references = set(Item.objects.values_list("reference", flat=True))
    assert not any(reference in text for text in texts for reference in references)
    assert sorted(set(Item.objects.values_list("intent", flat=True))) == sorted(
        ["factual_qa", "solve_professional_problem", "text_assistant", "ask_for_advice", "seek_creativity", "leisure"]
    )
    languages = Counter(Item.objects.values_list("language", flat=True))
    assert languages["en"] >= 2 and languages["zh"] >= 2


def test_demo_judge_run_and_votes_tell_one_story(settings):
    from annotation.report import alignment_report
    from judging.results.boards import run_leaderboard
    from judging.runs.resume import run_reparse

    settings.DEMO_MODE = True
    demo_seed()
    run = JudgeRun.objects.get()
    judge = [row["model"] for row in run_leaderboard(run=run)["tables"]["overall"]["rows"]]
    assert judge == ["alpha-chat", "beta-instruct", "gamma-mini"]
    means = {row["model"]: row["overall"].mean for row in run_leaderboard(run=run)["tables"]["overall"]["rows"]}
    assert means["alpha-chat"] > means["beta-instruct"] + 1 > means["gamma-mini"] + 2
    campaign = Campaign.objects.get(slug="demo")
    report = alignment_report(dataset=campaign.dataset, campaign=campaign, run=run, rounds=100)
    bt = [score["label"] for score in report["bt"]["scores"]]
    assert bt == judge  # the better model wins more human votes and scores higher with the judge
    wins = {score["label"]: score["wins"] for score in report["bt"]["scores"]}
    assert wins["alpha-chat"] > wins["beta-instruct"] > wins["gamma-mini"]
    assert report["bt"]["cannot_determine"] == 2
    assert report["satisfaction_vs_judge"]["pearson"]["r"] > 0.9
    # The run used the built-in templates, which the demo leaves in place, and its stored
    # verdicts are what the parser reads from its replies.
    assert sorted(run.templates.values_list("name", flat=True)) == [
        "urs/ask_for_advice/en",
        "urs/factual_qa/en",
        "urs/leisure/zh",
        "urs/seek_creativity/zh",
        "urs/solve_professional_problem/en",
        "urs/text_assistant/en",
    ]
    assert not Judgment.objects.filter(template__isnull=True).exists()
    assert JudgeTemplate.objects.filter(version=1).count() == len(default_templates())
    assert run_reparse(run=run) == 0
