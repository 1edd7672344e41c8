"""A judge run's temperature, max_tokens and system prompt are data: set from the command, the API
and /runs/new/, recorded on the run and in its manifest, shown on its page, and sent with every
call exactly as set (checked in the request bodies the loopback server received)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from curation.choices import Intent, Language
from judging.models import JudgeRun
from judging.results.compare import manifest_changes
from judging.runs.manifest import run_manifest
from judging.runs.rerun import run_rerun
from judging.runs.spec import MAX_TOKENS_RANGE
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
SYSTEM = "你是一位严格的评审。\nJudge <b>strictly</b>."


@pytest.fixture
def answered(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_retries=1, timeout_seconds=5)
    dataset = DatasetFactory(name="params")
    model = CandidateModelFactory(name="m")
    for n, (question, language) in enumerate([("Capital of France?", Language.EN), ("法国的首都？", Language.ZH)]):
        item = ItemFactory(
            dataset=dataset, external_id=f"q{n}", question=question, intent=Intent.FACTUAL_QA, language=language
        )
        AnswerFactory(item=item, model=model, text=f"answer {n}")
    return dataset


def judge(*extra):
    out = StringIO()
    call_command(
        "judge",
        "--dataset",
        "params",
        "--mode",
        "pointwise",
        "--judge-model",
        "j",
        "--models",
        "m",
        "--inline",
        *extra,
        stdout=out,
        stderr=StringIO(),
    )
    return JudgeRun.objects.order_by("-pk").first()


def test_the_command_sends_the_temperature_max_tokens_and_system_prompt_with_every_call(answered, fake_llm):
    run = judge("--temperature", "0.3", "--max-tokens", "64", "--system-prompt", SYSTEM)
    assert (run.temperature, run.max_tokens, run.system_prompt, run.status) == (0.3, 64, SYSTEM, "finished")
    assert len(fake_llm.requests) == 2
    for body in fake_llm.requests:
        assert (body["temperature"], body["max_tokens"]) == (0.3, 64)
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["messages"][0]["content"] == SYSTEM
        assert body["messages"][1]["content"].startswith(("You are asked to assess", "请你以公正的评判者的身份"))
    judge_entry = run_manifest(run=run)["judge"]
    assert (judge_entry["temperature"], judge_entry["max_tokens"], judge_entry["system_prompt"]) == (0.3, 64, SYSTEM)


def test_temperature_none_sends_no_temperature_and_is_recorded_as_unset(answered, fake_llm):
    run = judge("--temperature", "none")
    assert run.temperature is None and run.system_prompt == ""
    # No temperature; max_tokens is judging's default, as on every call.
    assert [sorted(body) for body in fake_llm.requests] == [["max_tokens", "messages", "model"]] * 2
    assert all([m["role"] for m in body["messages"]] == ["user"] for body in fake_llm.requests)
    assert run_manifest(run=run)["judge"]["temperature"] is None


def test_by_default_the_judge_runs_at_temperature_zero_with_the_prompt_alone(answered, fake_llm):
    run = judge()
    assert (run.temperature, run.max_tokens, run.system_prompt) == (0.0, 1024, "")
    assert [(body["temperature"], len(body["messages"]), body["max_tokens"]) for body in fake_llm.requests] == [
        (0.0, 1, 1024)
    ] * 2


def test_a_system_prompt_file_is_sent_byte_for_byte(answered, fake_llm, tmp_path):
    text = "  You rank answers.\r\n\tMind the 中文 quality.  \n"
    path = tmp_path / "system.txt"
    path.write_bytes(text.encode("utf-8"))
    run = judge("--system-prompt-file", str(path))
    assert run.system_prompt == text
    assert {body["messages"][0]["content"] for body in fake_llm.requests} == {text}


def test_another_system_prompt_is_asked_again_not_served_from_the_cache(answered, fake_llm):
    judge("--system-prompt", "A")
    judge("--system-prompt", "A")
    assert len(fake_llm.requests) == 2  # the second run read the cache
    judge("--system-prompt", "B")
    judge("--temperature", "none", "--system-prompt", "B")
    assert len(fake_llm.requests) == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--temperature", "hot"], "'hot' is not a number; give one (e.g. 0 or 0.7) or 'none' to send no temperature"),
        (["--temperature", "2.5"], "The temperature must be between 0 and 2, or unset to send none; got 2.5."),
        (["--temperature", "nan"], "The temperature must be between 0 and 2, or unset to send none; got nan."),
        (["--max-tokens", "0"], "argument --max-tokens: must be at least 1"),
        (["--system-prompt", "a\x00b"], "The system prompt holds a character a database cannot store"),
        (["--system-prompt", "x" * 20_001], "The system prompt is 20,001 characters; the limit is 20,000."),
        (["--system-prompt", "a", "--system-prompt-file", "f"], "not allowed with argument"),
        (["--system-prompt-file", "/nonexistent/system.txt"], "Cannot read /nonexistent/system.txt"),
    ],
)
def test_bad_parameters_are_refused_and_nothing_is_written(answered, fake_llm, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        judge(*args)
    assert JudgeRun.objects.count() == 0 and fake_llm.count == 0


def test_a_rerun_keeps_the_parameters_and_compare_names_a_changed_system_prompt(answered, fake_llm):
    run = judge("--temperature", "none", "--system-prompt", SYSTEM)
    again = run_rerun(run=run)
    assert (again.temperature, again.system_prompt) == (None, SYSTEM)
    other = judge("--temperature", "none", "--system-prompt", "Judge kindly.")
    changes = {c["field"]: (c["a"], c["b"]) for c in manifest_changes(run_manifest(run=run), run_manifest(run=other))}
    assert changes["judge.system_prompt"] == (SYSTEM, "Judge kindly.")
    assert "judge.temperature" not in changes


# ---- The API -----------------------------------------------------------------------------------


def test_the_api_creates_a_run_with_its_parameters_and_the_workers_send_them(
    answered, fake_llm, client_as, researcher, settings
):
    settings.TASKS = IMMEDIATE
    client = client_as(researcher)
    payload = {
        "dataset": "params",
        "mode": "pointwise",
        "judge_model": "j",
        "models": ["m"],
        "endpoint": "fake",
        "temperature": None,
        "max_tokens": 300,
        "system_prompt": SYSTEM,
        "template_set": "urs-code",
    }
    response = client.post(reverse("api-runs"), payload, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["temperature"], body["max_tokens"], body["system_prompt"]) == (None, 300, SYSTEM)
    run = JudgeRun.objects.get(pk=body["id"])
    assert (run.created_by, run.endpoint.name, run.temperature, run.system_prompt) == (researcher, "fake", None, SYSTEM)
    run.refresh_from_db()
    assert run.status == "finished" and len(fake_llm.requests) == 2
    for sent in fake_llm.requests:
        assert "temperature" not in sent and sent["max_tokens"] == 300
        assert sent["messages"][0] == {"role": "system", "content": SYSTEM}
        assert sent["messages"][1]["content"].startswith("请你以公正的评判者的身份")  # urs-code: Chinese for all
    detail = client.get(reverse("api-run-detail", args=[run.pk])).json()
    assert (detail["temperature"], detail["system_prompt"]) == (None, SYSTEM)


@pytest.mark.parametrize(
    ("changes", "status", "expected"),
    [
        ({"temperature": 5}, 400, {"temperature": ["Ensure this value is less than or equal to 2.0."]}),
        ({"max_tokens": 0}, 400, {"max_tokens": ["Ensure this value is greater than or equal to 1."]}),
        (
            {"models": ["m", "ghost"]},
            400,
            {"detail": "Unknown model(s): ghost. Import or generate their answers first."},
        ),
        ({"mode": "listwise"}, 400, {"detail": "Unknown mode 'listwise'; use pointwise or pairwise."}),
        ({"endpoint": "nowhere"}, 400, {"detail": "Unknown endpoint 'nowhere'."}),
        ({"dataset": "nope"}, 400, {"detail": "No dataset named 'nope'."}),
        ({"concurrency": "lots"}, 400, {"detail": "Concurrency must be a whole number or auto, not 'lots'."}),
        ({"concurrency": 0}, 400, {"detail": "Concurrency must be at least 1."}),
        ({"timeout_seconds": 0}, 400, {"timeout_seconds": ["Ensure this value is greater than or equal to 0.1."]}),
    ],
)
def test_the_api_refuses_bad_runs_and_writes_nothing(answered, client_as, researcher, changes, status, expected):
    payload = {"dataset": "params", "mode": "pointwise", "judge_model": "j", "models": ["m"], **changes}
    response = client_as(researcher).post(reverse("api-runs"), payload, content_type="application/json")
    assert (response.status_code, response.json()) == (status, expected)
    assert JudgeRun.objects.count() == 0


@pytest.mark.parametrize(("given", "stored"), [("auto", (64, True)), (12, (12, False)), (None, (64, True))])
def test_the_api_takes_a_number_or_auto_for_concurrency_and_a_timeout(answered, client_as, researcher, given, stored):
    payload = {"dataset": "params", "mode": "pointwise", "judge_model": "j", "models": ["m"], "timeout_seconds": 9.5}
    if given is not None:
        payload["concurrency"] = given
    response = client_as(researcher).post(reverse("api-runs"), payload, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["concurrency"], body["concurrency_auto"], body["timeout_seconds"]) == (*stored, 9.5)


def test_only_researchers_create_runs_through_the_api(answered, client, client_as, annotator):
    payload = {"dataset": "params", "mode": "pointwise", "judge_model": "j", "models": ["m"]}
    assert client.post(reverse("api-runs"), payload, content_type="application/json").status_code in (401, 403)
    assert client_as(annotator).post(reverse("api-runs"), payload, content_type="application/json").status_code == 403
    assert JudgeRun.objects.count() == 0


# ---- /runs/new/ and the run page -----------------------------------------------------------------


def page_form(**changes):
    """/runs/new/'s fields for a pointwise preview of the `answered` dataset, with `changes`."""
    model = JudgeRun._meta.apps.get_model("judging", "CandidateModel").objects.get(name="m")
    return {
        "dataset": "params",
        "mode": "pointwise",
        "endpoint": "fake",
        "judge_model": "j",
        "candidates": [model.pk],
        "template_set": "urs",
        "concurrency": "2",
        "temperature": "0",
        "max_tokens": "",
        "system_prompt": "",
        "seed": "",
        "action": "preview",
        **changes,
    }


def test_the_page_leaves_temperature_unset_and_sets_a_system_prompt(
    answered, fake_llm, client_as, researcher, settings
):
    import re

    settings.TASKS = IMMEDIATE
    client = client_as(researcher)
    data = page_form(temperature="", system_prompt="Judge <b>fairly</b>.\r\nOne line more.")
    page = client.post(reverse("judging:run-new"), data)
    assert page.status_code == 200, page.text
    fingerprint = re.search(r'name="previewed" value="([0-9a-f]+)"', page.text).group(1)
    response = client.post(reverse("judging:run-new"), {**data, "action": "start", "previewed": fingerprint})
    run = JudgeRun.objects.get()
    assert (run.temperature, run.system_prompt) == (None, "Judge <b>fairly</b>.\nOne line more.")
    assert [("temperature" in body, body["messages"][0]["content"]) for body in fake_llm.requests] == [
        (False, "Judge <b>fairly</b>.\nOne line more.")
    ] * 2
    shown = client.get(response["Location"]).text
    assert '<dd id="run-parameters">temperature not sent (the server\'s default) · max tokens 1024</dd>' in shown
    assert (
        '<pre class="system-prompt" id="run-system-prompt">Judge &lt;b&gt;fairly&lt;/b&gt;.\nOne line more.</pre>'
        in shown
    )
    client.cookies["django_language"] = "zh-hans"
    shown = client.get(response["Location"]).text
    assert "<dt>参数</dt>" in shown and "未发送（使用服务器的默认值）" in shown and "<dt>系统提示词</dt>" in shown


def test_a_run_without_a_system_prompt_says_none(answered, fake_llm, client_as, researcher):
    run = judge("--temperature", "0.7")
    shown = client_as(researcher).get(reverse("judging:run-detail", args=[run.pk])).text
    assert '<dd id="run-parameters">temperature 0.7 · max tokens 1024</dd>' in shown
    assert "<dt>System prompt</dt><dd>none</dd>" in shown


def test_max_tokens_has_one_range_on_the_page_in_the_api_and_in_the_command(answered, fake_llm, client_as, researcher):
    """RunSpec's MAX_TOKENS_RANGE bounds every door alike: the page once stopped at 100,000 where
    the API took 1,000,000."""
    client = client_as(researcher)
    high, over = MAX_TOKENS_RANGE[1], MAX_TOKENS_RANGE[1] + 1
    assert client.post(reverse("judging:run-new"), page_form(max_tokens=str(high))).status_code == 200
    refused = client.post(reverse("judging:run-new"), page_form(max_tokens=str(over)))
    assert refused.status_code == 400 and 'name="previewed"' not in refused.text
    payload = {"dataset": "params", "mode": "pointwise", "judge_model": "j", "models": ["m"]}
    made = client.post(reverse("api-runs"), {**payload, "max_tokens": high}, content_type="application/json")
    assert made.status_code == 201 and JudgeRun.objects.get().max_tokens == high
    refused = client.post(reverse("api-runs"), {**payload, "max_tokens": over}, content_type="application/json")
    assert refused.status_code == 400 and "max_tokens" in refused.json()
    with pytest.raises(CommandError, match="Max tokens must be at most 1,000,000; got 1,000,001"):
        judge("--max-tokens", str(over))
    assert JudgeRun.objects.count() == 1 and fake_llm.count == 0
