"""/runs/new/: a researcher starts a judge run from the browser, seeing the number of calls and
the estimated cost first; the run then goes to the workers."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from curation.choices import Intent
from curation.models import Dataset
from judging.models import JudgeRun, JudgeTemplate
from judging.runs.planning import run_plan
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}


@pytest.fixture
def answered():
    """Four items (two English, two Chinese); alpha and beta answered all, gamma only two."""
    dataset = DatasetFactory(name="d4", source=Dataset.Source.STUDY)
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    for n in range(4):
        item = ItemFactory(
            dataset=dataset,
            external_id=f"q{n}",
            question=f"Question {n}?" if n < 2 else f"问题{n}？",
            language="en" if n < 2 else "zh",
            intent=Intent.FACTUAL_QA if n % 2 == 0 else Intent.LEISURE,
            category="数学计算",
        )
        for model in models[: 3 if n < 2 else 2]:
            AnswerFactory(item=item, model=model, text=f"{model.name} answers {n}")
    return dataset, models


def form(dataset, models, **changes):
    data = {
        "dataset": dataset.name,
        "mode": "pointwise",
        "endpoint": "default",
        "judge_model": "judge-m",
        "candidates": [model.pk for model in models],
        "template_set": "urs",
        "concurrency": "4",
        "temperature": "0",
        "max_tokens": "",
        "seed": "",
        "action": "preview",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def preview(client, data):
    response = client.post(reverse("judging:run-new"), data)
    assert response.status_code == 200, response.text
    fingerprint = re.search(r'name="previewed" value="([0-9a-f]+)"', response.text).group(1)
    return response.text, fingerprint


def test_only_researchers_start_runs(client, client_as, annotator, answered):
    dataset, models = answered
    assert client.get(reverse("judging:run-new")).status_code == 302
    client = client_as(annotator)
    assert client.get(reverse("judging:run-new")).status_code == 403
    assert client.post(reverse("judging:run-new"), form(dataset, models, action="start")).status_code == 403
    assert JudgeRun.objects.count() == 0


def test_dataset_first_then_candidates_with_answer_counts(client_as, researcher, answered):
    dataset, _models = answered
    client = client_as(researcher)
    page = client.get(reverse("judging:run-new")).text
    assert '<option value="d4">d4</option>' in page
    assert client.get(reverse("judging:run-new"), {"dataset": "nope"}).status_code == 400
    page = client.get(reverse("judging:run-new"), {"dataset": "d4"}).text
    assert "alpha (4 answers)" in page and "gamma (2 answers)" in page
    assert page.count('name="candidates"') == 3


def test_preview_counts_calls_templates_and_cost_and_writes_nothing(client_as, researcher, answered):
    dataset, models = answered
    Endpoint.objects.create(
        name="priced",
        base_url="http://127.0.0.1:9/v1",
        input_price_per_million=Decimal("2.50"),
        output_price_per_million=Decimal("10"),
    )
    client = client_as(researcher)
    page, _ = preview(client, form(dataset, models, endpoint="priced", max_tokens="100"))
    plan = run_plan(spec=RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=models, max_tokens=100))
    assert plan.calls == 10 and plan.completion_tokens == 1000
    cost = (Decimal(plan.prompt_tokens) * Decimal("2.5") + Decimal(1000) * Decimal(10)) / Decimal(1_000_000)
    assert "This run makes 10 calls to the judge, in 1 shard(s)." in page
    assert f"about {plan.prompt_tokens} sent and 1000 received" in page
    assert f"<strong>{cost.quantize(Decimal('0.0001'))}</strong> (at the prices set on the endpoint priced)" in page
    # The newest version of each template the items need.
    for name in ("urs/factual_qa/en", "urs/leisure/en", "urs/factual_qa/zh", "urs/leisure/zh"):
        assert f"{name} v{plan.templates[name].version}" in page
    assert JudgeRun.objects.count() == 0

    page, _ = preview(client, form(dataset, models, mode="pairwise", reference_model=models[0].pk, both_orders="on"))
    # beta and gamma against alpha, both orders: (4 + 2) x 2.
    newest = JudgeTemplate.objects.filter(name="alpacaeval/pairwise/zh").order_by("-version").first()
    assert "This run makes 12 calls to the judge" in page and f"alpacaeval/pairwise/zh v{newest.version}" in page
    assert "unknown: the default endpoint has no prices" in page


def test_start_needs_the_preview_of_the_same_settings(client_as, researcher, answered):
    dataset, models = answered
    client = client_as(researcher)
    response = client.post(reverse("judging:run-new"), form(dataset, models, action="start"))
    assert response.status_code == 200 and JudgeRun.objects.count() == 0
    assert "This run makes 10 calls" in response.text  # the numbers, not a run
    _page, fingerprint = preview(client, form(dataset, models))
    changed = form(dataset, models[:1], action="start", previewed=fingerprint)
    response = client.post(reverse("judging:run-new"), changed)
    assert "The settings changed since the preview" in response.text
    assert "This run makes 4 calls" in response.text and JudgeRun.objects.count() == 0


def test_start_creates_and_runs_the_run_with_the_chosen_settings(client_as, researcher, answered, fake_llm, settings):
    settings.TASKS = IMMEDIATE
    dataset, models = answered
    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, default_model="judge-m")
    client = client_as(researcher)
    data = form(dataset, models[:2], endpoint="fake", template_set="alignbench", temperature="0.3", seed="7")
    _page, fingerprint = preview(client, data)
    response = client.post(reverse("judging:run-new"), {**data, "action": "start", "previewed": fingerprint})
    run = JudgeRun.objects.get()
    assert response["Location"] == reverse("judging:run-detail", args=[run.pk])
    assert (
        run.mode,
        run.judge_model,
        run.endpoint.name,
        run.temperature,
        run.seed,
        run.concurrency,
        run.created_by,
    ) == (
        "pointwise",
        "judge-m",
        "fake",
        0.3,
        7,
        4,
        researcher,
    )
    assert sorted(run.candidates.values_list("name", flat=True)) == ["alpha", "beta"]
    assert sorted(run.templates.values_list("name", flat=True)) == ["alignbench/逻辑推理型回答/zh"]
    run.refresh_from_db()
    assert run.status == "finished" and run.judgments.filter(final_score=7).count() == 8
    assert set(run.judgments.values_list("template__name", flat=True)) == {"alignbench/逻辑推理型回答/zh"}
    assert all("你是一个擅长评价文本质量的助手" in prompt for prompt in fake_llm.prompts())
    page = client.get(response["Location"]).text
    assert f"Run #{run.pk} started: 8 calls in 1 shard(s)." in page


@pytest.mark.parametrize(
    "changes,where,message",
    [
        ({"mode": "pairwise"}, 'id="id_reference_model_error"', "A pairwise run needs a reference model."),
        ({"candidates": None}, 'id="id_candidates_error"', "This field is required."),
        ({"judge_model": ""}, 'id="id_judge_model_error"', "This field is required."),
        ({"concurrency": "0"}, 'id="id_concurrency_error"', "Give a whole number of calls (at least 1), or auto."),
        ({"temperature": "3"}, 'id="id_temperature_error"', "Ensure this value is less than or equal to 2."),
    ],
)
def test_bad_settings_are_refused_beside_their_field(client_as, researcher, answered, changes, where, message):
    dataset, models = answered
    response = client_as(researcher).post(reverse("judging:run-new"), form(dataset, models, **changes))
    assert response.status_code == 400
    start = response.text.index(where)
    assert message in response.text[start : start + 300]
    assert JudgeRun.objects.count() == 0


def test_a_plan_the_service_refuses_is_explained(client_as, researcher, answered):
    dataset, models = answered
    lonely = CandidateModelFactory(name="lonely")
    AnswerFactory(item=dataset.items.get(external_id="q3"), model=lonely)  # gamma never answered q3
    data = form(dataset, [models[2]], mode="pairwise", reference_model=lonely.pk)
    response = client_as(researcher).post(reverse("judging:run-new"), data)
    assert response.status_code == 400
    alert = response.text.index('data-testid="error-summary"')
    assert "None of gamma has answers on dataset “d4”" in response.text[alert : alert + 500]
    assert JudgeRun.objects.count() == 0


def test_new_run_page_speaks_chinese(client_as, researcher, answered):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("judging:run-new"), {"dataset": "d4"}).text
    assert "<h1>新建评判运行</h1>" in page and "计算调用次数和费用" in page
