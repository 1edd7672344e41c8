"""Answers cut off at max_tokens: a small local model's replies stopped at 2,048 tokens were
thrown away without a word, and `reproduce` then said the model had no answers right after
generating them. Now they are kept, marked cut off, counted where a generation is shown, left out
of runs unless asked for (`--include-cut-off`, the API's `include_cut_off`, the run form), and the
error when nothing complete is left says what happened and the way on."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import translation

from judging.answers.versions import run_answer_versions, run_answers
from judging.errors import RunError
from judging.models import Answer, AnswerGeneration, JudgeRun
from judging.results.exports import answers_export
from judging.runs.creation import run_create
from judging.runs.planning import run_plan
from judging.runs.spec import RunSpec
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.test_reproduce import server, small_alpaca  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="cut")
    for n in range(3):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}?", reference="A reference.")
    return dataset


def with_answers(dataset, *, cut_off: set[str]):
    """Answers of model "small" to every item, those of `cut_off` (external ids) cut off."""
    model = CandidateModelFactory(name="small")
    for item in dataset.items.order_by("id"):
        AnswerFactory(item=item, model=model, text=f"answer {item.external_id}", cut_off=item.external_id in cut_off)
    return model


def generate(*args):
    out = StringIO()
    call_command("generate", "--dataset", "cut", "--model", "small", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_cut_off_reply_is_kept_marked_counted_and_asked_for_again(server, dataset):
    server.reply = lambda body: "a complete answer to " + body["messages"][-1]["content"]
    server.faults = {"question 0?": ["length"], "question 1?": ["length"]}
    with pytest.raises(CommandError) as refused:
        generate()
    message = str(refused.value)
    assert message.startswith("2 of 3 items got no complete answer (2 answer(s) were cut off at max_tokens 2048")
    assert "--max-tokens" in message and "--include-cut-off" in message
    marked = dict(Answer.objects.values_list("item__external_id", "cut_off"))
    assert marked == {"q0": True, "q1": True, "q2": False}
    assert Answer.objects.get(item__external_id="q0").parameters["max_tokens"] == 2048

    # Asked again with a larger max_tokens: the complete replies take the cut-off ones' places.
    out = generate("--max-tokens", "4096")
    assert "2 generated, 0 failed, 0 cut off, 1 already answered." in out
    assert [body["max_tokens"] for body in server.requests[3:]] == [4096, 4096]
    assert Answer.objects.count() == 3 and not Answer.objects.filter(cut_off=True).exists()
    assert Answer.objects.get(item__external_id="q0").parameters["max_tokens"] == 4096


def test_the_progress_and_summary_name_the_max_tokens_the_replies_were_cut_off_at(server, dataset):
    server.faults = {f"question {n}?": ["length"] for n in range(3)}
    out = StringIO()
    with pytest.raises(CommandError, match="3 of 3 items got no complete answer"):
        call_command("generate", "--dataset", "cut", "--model", "small", "--max-tokens", "64", stdout=out)
    assert "3 generated, 0 failed, 3 cut off at max_tokens 64, 0 already answered." in out.getvalue()
    assert Answer.objects.filter(cut_off=True).count() == 3


def test_a_run_leaves_cut_off_answers_out_unless_asked_and_its_manifest_says_which(dataset, client, researcher):
    model = with_answers(dataset, cut_off={"q0", "q1"})
    spec = {"dataset": dataset, "mode": "pointwise", "judge_model": "j", "candidates": [model]}
    plan = run_plan(spec=RunSpec(**spec))
    assert (plan.calls, plan.cut_off_left_out) == (1, 2)
    left_out = run_create(spec=RunSpec(**spec))
    assert left_out.total == 1
    assert (left_out.manifest["include_cut_off"], left_out.manifest["cut_off_left_out"]) == (False, 2)
    included = run_create(spec=RunSpec(**spec, include_cut_off=True))
    assert included.total == 3
    assert (included.manifest["include_cut_off"], included.manifest["cut_off_left_out"]) == (True, 0)

    client.force_login(researcher)
    page = client.get(reverse("judging:run-detail", args=[left_out.pk])).content.decode()
    assert '<dt>Answers cut off at max_tokens</dt><dd id="manifest-cut-off">2 left out</dd>' in page
    page = client.get(reverse("judging:run-detail", args=[included.pk])).content.decode()
    assert '<dd id="manifest-cut-off">judged as they are</dd>' in page
    with translation.override("zh-hans"):
        chinese = client.get(reverse("judging:run-detail", args=[left_out.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert '<dd id="manifest-cut-off">已排除 2 个</dd>' in chinese.content.decode()


def test_the_judge_command_and_the_api_refuse_only_cut_off_answers_unless_asked(dataset, client, researcher):
    with_answers(dataset, cut_off={"q0", "q1", "q2"})
    judge = ["judge", "--dataset", "cut", "--models", "small", "--judge-model", "j", "--mode", "pointwise"]
    with pytest.raises(CommandError, match=r"were cut off at max_tokens \(3\).*--max-tokens.*--include-cut-off"):
        call_command(*judge, "--no-wait", stdout=StringIO())
    assert not JudgeRun.objects.exists()
    call_command(*judge, "--no-wait", "--include-cut-off", stdout=StringIO())
    assert JudgeRun.objects.get().manifest["include_cut_off"] is True

    client.force_login(researcher)
    body = {"dataset": "cut", "mode": "pointwise", "judge_model": "j", "models": ["small"]}
    refused = client.post(reverse("api-runs"), body, content_type="application/json")
    assert refused.status_code == 400 and "cut off at max_tokens (3)" in str(refused.json())
    created = client.post(reverse("api-runs"), {**body, "include_cut_off": True}, content_type="application/json")
    assert created.status_code == 201
    assert JudgeRun.objects.get(pk=created.json()["id"]).total == 3


def test_reproduce_says_when_every_answer_was_cut_off_and_judges_them_when_asked(server, tmp_path, small_alpaca):  # noqa: F811
    server.reply = lambda body: (
        "很长的回答" * 5
        if body["model"] != "judge"
        else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    # Twice each: the first reproduce and the one asked to include them both get cut-off replies.
    server.faults = {question: ["length", "length"] for question in ("说出一条河。", "打个招呼。", "数到三。")}
    args = ["--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine"]
    args += ["--data", str(small_alpaca), "--out", str(tmp_path)]
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("reproduce", *args, stdout=out, stderr=StringIO())
    assert re.search(r"mine: 3/3 generated, 0 failed, 3 cut off at max_tokens \d+", out.getvalue())
    assert re.search(r"Answers of mine: 3 generated \(.* preset\), 3 cut off at max_tokens \d+", out.getvalue())
    message = str(refused.value)
    assert "The answers of mine" in message and "cut off at max_tokens (3)" in message
    assert "--max-tokens" in message and "--include-cut-off" in message
    assert not JudgeRun.objects.exists() and Answer.objects.filter(cut_off=True).count() == 3

    call_command("reproduce", *args, "--include-cut-off", stdout=StringIO(), stderr=StringIO())
    run = JudgeRun.objects.get()
    assert run.total == 3 and run.manifest["include_cut_off"] is True


def test_the_answers_page_the_run_preview_and_the_export_mark_cut_off_answers(dataset, client, researcher):
    model = with_answers(dataset, cut_off={"q0", "q1"})
    AnswerGeneration.objects.create(dataset=dataset, model=model, total=3, generated=3, cut_off=2, max_tokens=2048)
    client.force_login(researcher)
    page = client.get(reverse("judging:dataset-answers", args=["cut"])).content.decode()
    assert "3 / 3 <span" in page and "(2 cut off at max_tokens)" in page
    assert '<span data-field="cut_off">2</span> · max_tokens 2048' in page
    with translation.override("zh-hans"):
        chinese = client.get(reverse("judging:dataset-answers", args=["cut"]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "（2 个回答在 max_tokens 处被截断）" in chinese.content.decode()

    preview = client.post(
        reverse("judging:run-new"),
        {
            "dataset": "cut",
            "mode": "pointwise",
            "judge_model": "j",
            "endpoint": "default",
            "candidates": [str(model.pk)],
            "template_set": "urs",
            "temperature": "0",
            "action": "preview",
        },
    ).content.decode()
    assert "This run makes 1 call to the judge" in preview
    assert "2 answers cut off at max_tokens are left out" in preview
    assert 'name="include_cut_off"' in preview

    listed = client.get(reverse("api-dataset-answers", args=["cut"])).json()
    assert listed == [{"model": "small", "answers": 3, "cut_off": 2, "version": 1}]
    rows = {row["external_id"]: row["cut_off"] for row in answers_export(dataset=dataset).rows}
    assert rows == {"q0": True, "q1": True, "q2": False}


def test_a_run_of_only_cut_off_answers_names_them_not_missing_ones(dataset):
    model = with_answers(dataset, cut_off={"q0", "q1", "q2"})
    with pytest.raises(RunError, match="were cut off at max_tokens") as refused:
        run_plan(spec=RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model]))
    assert "import or generate them first" not in str(refused.value)


def test_asking_again_after_a_run_judged_the_cut_off_text_makes_a_new_version_and_the_run_keeps_its_own(
    server, dataset
):
    server.reply = lambda body: "a complete answer to " + body["messages"][-1]["content"]
    server.faults = {"question 0?": ["length"]}
    with pytest.raises(CommandError):
        generate()
    model = Answer.objects.get(item__external_id="q0").model
    cut_text = Answer.objects.get(item__external_id="q0").text
    spec = RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model], include_cut_off=True)
    run = run_create(spec=spec)

    generate("--max-tokens", "4096")
    # The run still reads version 1 as it judged it, the cut-off text included.
    judged = dict(run_answers(run).values_list("item__external_id", "text"))
    assert judged["q0"] == cut_text and len(judged) == 3
    assert run_answer_versions(run) == {"small": 1}
    # New work reads version 2: the complete reply, and the two other answers carried over.
    current = Answer.objects.filter(model=model)
    assert set(current.values_list("answer_set__version", flat=True)) == {2}
    assert dict(current.values_list("item__external_id", "cut_off")) == {"q0": False, "q1": False, "q2": False}
    assert current.get(item__external_id="q1").text == judged["q1"]


def test_asking_again_when_no_run_used_the_cut_off_text_writes_into_the_same_version(server, dataset):
    server.faults = {"question 0?": ["length"]}
    with pytest.raises(CommandError):
        generate()
    generate("--max-tokens", "4096")
    assert set(Answer.all_versions.values_list("answer_set__version", flat=True)) == {1}
    assert Answer.all_versions.count() == 3
