"""Run pages and the judging API: permissions, exact numbers, escaping, both languages."""

import pytest
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from core.models import Workspace, default_workspace_id
from curation.choices import Intent
from judging.models import JudgeRun, JudgeShard, JudgeTemplate
from judging.prompts.templates import template_copy
from judging.results.figures import run_figures_refresh
from tests.factories import (
    AnswerFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def pointwise_run():
    """Two models, two items: A scores 8 and 6 (mean 7), B scores 4 and one parse failure."""
    dataset = DatasetFactory(name="pages")
    items = [
        ItemFactory(dataset=dataset, external_id="p1", intent=Intent.FACTUAL_QA),
        ItemFactory(dataset=dataset, external_id="p2", intent=Intent.LEISURE, language="zh"),
    ]
    a, b = CandidateModelFactory(name="model-a"), CandidateModelFactory(name="model-<b>")
    run = JudgeRunFactory(dataset=dataset, judge_model="judge-x", status=JudgeRun.Status.FINISHED, total=4, seed=3)
    run.candidates.set([a, b])
    JudgmentFactory(run=run, item=items[0], model=a, final_score=8, scores={"Factuality": 8})
    JudgmentFactory(run=run, item=items[1], model=a, final_score=6, scores={"Factuality": 6})
    JudgmentFactory(
        run=run, item=items[0], model=b, final_score=4, scores={"Factuality": 4}, flags=["instructions_to_judge"]
    )
    JudgmentFactory(
        run=run,
        item=items[1],
        model=b,
        final_score=None,
        parse_error="no score dict",
        raw_text="<script>alert('judge')</script>",
    )
    for item in items:
        AnswerFactory(item=item, model=a, text="aaaa")
        AnswerFactory(item=item, model=b, text="bb")
    run_figures_refresh(run_id=run.pk)  # what the background task does when a run closes
    return run


def test_pages_need_the_researcher_role(client, client_as, annotator, pointwise_run):
    url = reverse("judging:run-detail", args=[pointwise_run.pk])
    assert client.get(url).status_code == 302
    assert client_as(annotator).get(url).status_code == 403
    assert client.post(reverse("judging:run-action", args=[pointwise_run.pk, "cancel"])).status_code == 403
    pointwise_run.refresh_from_db()
    assert pointwise_run.status == "finished"


def test_run_page_shows_exact_leaderboard_and_escapes_text(client_as, researcher, pointwise_run):
    response = client_as(researcher).get(reverse("judging:run-detail", args=[pointwise_run.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert '7.00 <span class="ci">[6.00, 8.00]</span>' in html
    assert '4.00 <span class="ci">[4.00, 4.00]</span>' in html
    assert "model-&lt;b&gt;" in html and "model-<b>" not in html
    assert "&lt;script&gt;alert(" in html and "<script>alert(" not in html
    assert "gives the judge instructions" in html
    assert "<svg" in html and "Leisure" in html
    assert "cdn" not in html.lower()


def test_run_page_in_chinese(client_as, researcher, pointwise_run):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    html = client.get(
        reverse("judging:run-detail", args=[pointwise_run.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert "排行榜" in html and "解析失败" in html and "进度" in html


def test_api_progress_and_leaderboard(client_as, researcher, pointwise_run):
    client = client_as(researcher)
    progress = client.get(reverse("api-run-progress", args=[pointwise_run.pk])).json()
    assert {k: progress[k] for k in ("status", "total", "done", "parse_failures", "call_failures", "remaining")} == {
        "status": "finished",
        "total": 4,
        "done": 4,
        "parse_failures": 1,
        "call_failures": 0,
        "remaining": 0,
    }
    rows = client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]) + "?by=intent").json()
    overall = [r for r in rows if r["group"] == "overall"]
    assert overall == [
        {
            "run": pointwise_run.pk,
            "group": "overall",
            "column": "overall",
            "model": "model-a",
            "mean": 7.0,
            "low": 6.0,
            "high": 8.0,
            "count": 2,
            "failures": 0,
            "rank": 1,
            "note": None,
        },
        {
            "run": pointwise_run.pk,
            "group": "overall",
            "column": "overall",
            "model": "model-<b>",
            "mean": 4.0,
            "low": 4.0,
            "high": 4.0,
            "count": 1,
            "failures": 1,
            "rank": 2,
            # One score: the interval 4.0 .. 4.0 says why it has no width.
            "note": "a single score: there is nothing to resample, so the interval has no width; that is not certainty",
        },
    ]
    assert client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]) + "?by=planet").json() == {
        "detail": "Unknown group(s) planet; choose among intent, language, country, category."
    }
    detail = client.get(reverse("api-run-detail", args=[pointwise_run.pk])).json()
    assert detail["candidates"] == ["model-<b>", "model-a"] and detail["progress"]["done"] == 4


def test_run_page_and_api_serve_stored_figures_and_say_when_newer_judgments_wait(client_as, researcher, pointwise_run):
    client = client_as(researcher)
    url = reverse("judging:run-detail", args=[pointwise_run.pk])
    html = client.get(url).content.decode()
    assert "Figures computed at" in html and "Newer judgments are waiting" not in html
    # A judgment arrives (model-<b> gets a 10 on p2): the page answers from what is stored, says
    # so, and a refresh is queued.
    item = pointwise_run.judgments.get(model__name="model-<b>", final_score=None).item
    model_b = pointwise_run.candidates.get(name="model-<b>")
    JudgmentFactory(run=pointwise_run, item=item, model=model_b, order=1, final_score=10)
    html = client.get(url).content.decode()
    assert "Newer judgments are waiting: the figures are being recomputed." in html
    assert '4.00 <span class="ci">[4.00, 4.00]</span>' in html
    assert DBTaskResult.objects.filter(task_path="judging.tasks.run_figures_task").count() == 1
    response = client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]))
    assert response["X-Figures-Stale"] == "1"
    assert [r["mean"] for r in response.json() if r["group"] == "overall"] == [7.0, 4.0]

    run_figures_refresh(run_id=pointwise_run.pk)  # the worker runs the task
    html = client.get(url).content.decode()
    assert "Newer judgments are waiting" not in html
    assert '7.00 <span class="ci">[4.00, 10.00]</span>' in html
    response = client.get(reverse("api-run-leaderboard", args=[pointwise_run.pk]))
    assert response["X-Figures-Stale"] == "0"
    assert [r["mean"] for r in response.json() if r["group"] == "overall"] == [7.0, 7.0]


def test_a_run_without_figures_says_they_are_being_computed(client_as, researcher):
    run = JudgeRunFactory(status=JudgeRun.Status.FINISHED, total=0)
    html = client_as(researcher).get(reverse("judging:run-detail", args=[run.pk])).content.decode()
    assert "These figures are being computed in the background; reload the page in a moment." in html
    [queued] = DBTaskResult.objects.filter(task_path="judging.tasks.run_figures_task")
    assert queued.args_kwargs["args"] == [run.pk]


def test_api_needs_the_researcher_role(client_as, annotator, pointwise_run):
    client = client_as(annotator)
    assert client.get(reverse("api-run-progress", args=[pointwise_run.pk])).status_code == 403
    assert client.post(reverse("api-run-cancel", args=[pointwise_run.pk])).status_code == 403


def test_cancel_and_resume_through_the_api(client_as, researcher, settings):
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}
    }
    run = JudgeRunFactory(status=JudgeRun.Status.RUNNING, total=2)
    JudgeShard.objects.create(run=run, index=0, units=[[1, 1, 0]])
    client = client_as(researcher)
    assert client.post(reverse("api-run-cancel", args=[run.pk])).json()["status"] == "cancelled"
    assert run.shards.get().status == "cancelled"
    assert client.post(reverse("api-run-resume", args=[run.pk])).json() == {"requeued_shards": 1, "status": "running"}
    assert run.shards.get().task_id != ""


def test_editing_a_template_makes_a_new_version(client_as, researcher):
    builtin = JudgeTemplate.objects.filter(name="urs/factual_qa/en").order_by("-version").first()
    template, _made = template_copy(template=builtin, workspace=Workspace.objects.get(pk=default_workspace_id()))
    versions = JudgeTemplate.objects.filter(name="urs/factual_qa/en").count()
    client = client_as(researcher)
    url = reverse("judging:template-edit", args=[template.pk])
    response = client.post(url, {"text": "Judge {answer} against {reference}."})
    revised = JudgeTemplate.objects.get(name="urs/factual_qa/en", version=template.version + 1)
    assert response.status_code == 302 and revised.created_by == researcher
    assert JudgeTemplate.objects.get(pk=template.pk).text == template.text
    bad = client.post(url, {"text": "no placeholder"})
    assert bad.status_code == 400
    assert "A pointwise template must contain the {answer} placeholder." in bad.content.decode()
    assert JudgeTemplate.objects.filter(name="urs/factual_qa/en").count() == versions + 1


def test_seeded_templates_follow_the_papers():
    names = set(JudgeTemplate.objects.values_list("name", flat=True))
    assert len([n for n in names if n.startswith("urs/")]) == 12
    assert {
        "alignbench/事实与解释型回答/zh",
        "alignbench/逻辑推理型回答/zh",
        "alignbench/生成型回答/zh",
        "alignbench/建议型回答/zh",
        "alpacaeval/pairwise/zh",
    } <= names
    leisure = JudgeTemplate.objects.filter(name="urs/leisure/en").order_by("-version").first().text
    for phrase in (
        "[Leisure]",
        "1 User Satisfaction",
        "2 Engagement",
        "3 Appropriateness",
        "4 Creativity",
        "5 Factuality",
        "the reference answer would receive a score of 8",
        "Note that a longer answer is not always better",
        "factual correctness and fulfillment of user needs",
        "'Final Score'",
        "{answer}",
        "{reference}",
    ):
        assert phrase in leisure
    zh = JudgeTemplate.objects.filter(name="urs/ask_for_advice/zh").order_by("-version").first().text
    for phrase in (
        "[给出建议]",
        "1 满足用户需求",
        "3 公平与可负责程度",
        "参考答案可以得到8分",
        "'综合得分'",
        "回答不是越长越好",
    ):
        assert phrase in zh


def test_exports_stream_judgments_and_leaderboard(pointwise_run):
    import csv
    import io
    import json

    from django.core.management import call_command

    out = io.StringIO()
    call_command("export", "--run", str(pointwise_run.pk), "--what", "judgments", "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 4
    assert [(r["question_id"], r["model"], r["final_score"], r["parse_error"]) for r in rows] == [
        ("p1", "model-a", "8", ""),
        ("p2", "model-a", "6", ""),
        ("p1", "model-<b>", "4", ""),
        ("p2", "model-<b>", "", "no score dict"),
    ]
    assert rows[2]["flags"] == '["instructions_to_judge"]'

    out = io.StringIO()
    call_command("export", "--dataset", "pages", "--what", "leaderboard", "--format", "jsonl", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    overall = [(r["model"], r["mean"], r["failures"]) for r in lines if r["group"] == "overall"]
    assert overall == [("model-a", 7.0, 0), ("model-<b>", 4.0, 1)]
