"""The researcher's command line: generate, judge, judge_resume, leaderboard."""

import json
import re
import zlib
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from curation.choices import Intent
from curation.models import Dataset
from judging.models import Answer, JudgeRun
from judging.results.exports import LEADERBOARD_FIELDS
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db(transaction=True)

DATA = Path(django_settings.BASE_DIR).parent / "shared" / "data"
ALPACA = DATA / "chinese_alpaca_eval"


@pytest.fixture
def default_endpoint(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    return fake_llm


def run_command(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_generate_uses_category_temperature_and_resumes(default_endpoint):
    dataset = DatasetFactory(name="ab", source="alignbench")
    ItemFactory(dataset=dataset, external_id="1", question="1+1?", category="数学计算")
    ItemFactory(dataset=dataset, external_id="2", question="写一首诗", category="文本写作")
    ItemFactory(dataset=dataset, external_id="3", question="other", category="")
    default_endpoint.reply = lambda body: f"answer to {body['messages'][0]['content']}"
    default_endpoint.faults = {"other": ["400-param"]}
    out = StringIO()
    with pytest.raises(CommandError, match=r"^1 of 3 items got no complete answer; run the same command"):
        call_command("generate", "--dataset", "ab", "--model", "m1", stdout=out, stderr=StringIO())
    assert "2 generated, 1 failed, 0 cut off, 0 already answered." in out.getvalue()
    temperatures = {body["messages"][0]["content"]: body["temperature"] for body in default_endpoint.requests}
    assert temperatures == {"1+1?": 0.1, "写一首诗": 0.7, "other": 0.7}
    # Every call carries a max_tokens: generation's default when neither endpoint nor command sets one.
    assert {body["max_tokens"] for body in default_endpoint.requests} == {2048}
    answer = Answer.objects.get(item__external_id="1")
    assert (answer.text, answer.origin, answer.parameters["temperature"], answer.completion_tokens) == (
        "answer to 1+1?",
        "generated",
        0.1,
        3,
    )

    out = run_command("generate", "--dataset", "ab", "--model", "m1", "--max-tokens", "300")
    assert "1 generated, 0 failed, 0 cut off, 2 already answered." in out
    assert default_endpoint.count == 4
    assert default_endpoint.requests[-1]["max_tokens"] == 300


def test_generate_refuses_unknown_dataset_and_missing_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(CommandError, match="No dataset named 'nope'."):
        run_command("generate", "--dataset", "nope", "--model", "m")
    DatasetFactory(name="d")
    with pytest.raises(CommandError, match="OPENAI_BASE_URL is not set"):
        run_command("generate", "--dataset", "d", "--model", "m")


def test_judge_inline_then_leaderboard_in_three_formats(default_endpoint):
    dataset = DatasetFactory(name="urs-mini")
    for n, intent in enumerate([Intent.FACTUAL_QA, Intent.LEISURE, Intent.FACTUAL_QA]):
        item = ItemFactory(dataset=dataset, external_id=f"i{n}", intent=intent)
        AnswerFactory(item=item, model=CandidateModelFactory(name="good"), text=f"good {n}")
        AnswerFactory(item=item, model=CandidateModelFactory(name="bad"), text=f"bad {n}")
    default_endpoint.reply = lambda body: (
        "{'Final Score': 9}" if "good " in body["messages"][0]["content"] else "{'Final Score': 3}"
    )
    out = run_command(
        "judge",
        "--dataset",
        "urs-mini",
        "--mode",
        "pointwise",
        "--judge-model",
        "j",
        "--models",
        "good,bad",
        "--inline",
        "--concurrency",
        "4",
    )
    run = JudgeRun.objects.get()
    assert f"Run {run.pk}: 6 judgments in 1 shards" in out
    assert "6/6 done, 0 unparsed, 0 cut off, 0 failed calls" in out
    assert f"Run {run.pk}: Finished." in out

    table = run_command("leaderboard", "--run", str(run.pk), "--by", "intent")
    assert "== overall" in table and "== intent" in table
    assert "9.00 [9.00,9.00]***" in table and "3.00 [3.00,3.00]**" in table
    rows = json.loads(run_command("leaderboard", "--run", str(run.pk), "--format", "json", "--by", "intent"))
    overall = {r["model"]: r["mean"] for r in rows if r["group"] == "overall"}
    assert overall == {"good": 9.0, "bad": 3.0}
    csv_text = run_command("leaderboard", "--run", str(run.pk), "--format", "csv", "--by", "intent")
    # The same columns as the "leaderboard" export (pairwise columns stay empty here), after
    # the byte order mark every CSV starts with.
    assert csv_text.splitlines()[0] == "\ufeff" + ",".join(LEADERBOARD_FIELDS)
    assert csv_text.splitlines()[0].startswith("\ufeffrun,group,column,model,mean,low,high,count,failures,rank")
    assert len(csv_text.splitlines()) == 1 + 2 + 4  # header, overall x2, intent (2 intents x 2 models)

    with pytest.raises(CommandError, match="Unknown group"):
        run_command("leaderboard", "--run", str(run.pk), "--by", "planet")
    with pytest.raises(CommandError, match="No judge run 999."):
        run_command("leaderboard", "--run", "999")


def test_judge_refuses_bad_input_and_writes_nothing(default_endpoint):
    DatasetFactory(name="d")
    with pytest.raises(CommandError, match=r"Unknown model\(s\): ghost"):
        run_command("judge", "--dataset", "d", "--mode", "pointwise", "--judge-model", "j", "--models", "ghost")
    CandidateModelFactory(name="m")
    with pytest.raises(CommandError, match="A pairwise run needs a reference model"):
        run_command("judge", "--dataset", "d", "--mode", "pairwise", "--judge-model", "j", "--models", "m")
    assert JudgeRun.objects.count() == 0


def test_judge_names_its_own_option_beside_an_error_pages_show_without_it(default_endpoint):
    DatasetFactory(name="d")
    CandidateModelFactory(name="m")
    with pytest.raises(CommandError, match=re.escape("A pairwise run needs a reference model (--reference-model).")):
        run_command("judge", "--dataset", "d", "--mode", "pairwise", "--judge-model", "j", "--models", "m")
    with pytest.raises(CommandError, match=re.escape("Name the judge model (--judge-model).")):
        run_command("judge", "--dataset", "d", "--mode", "pointwise", "--judge-model", "", "--models", "m")
    assert JudgeRun.objects.count() == 0


def test_judge_resume_inline_sends_only_failed_calls(default_endpoint):
    dataset = DatasetFactory(name="r")
    for n in range(5):
        AnswerFactory(
            item=ItemFactory(dataset=dataset, external_id=f"x{n}", question=f"q{n}"),
            model=CandidateModelFactory(name="m"),
            text=f"answer {n}",
        )
    default_endpoint.faults = {"answer 3": ["500", "500", "500", "500", "500"]}
    Endpoint.objects.create(name="flaky", base_url=default_endpoint.base_url, max_retries=1)
    with pytest.raises(CommandError) as failed:
        run_command(
            "judge",
            "--dataset",
            "r",
            "--mode",
            "pointwise",
            "--judge-model",
            "j",
            "--models",
            "m",
            "--endpoint",
            "flaky",
            "--inline",
        )
    run = JudgeRun.objects.get()
    # Not "Finished": a summary, and a non-zero exit.
    assert str(failed.value) == (
        f"Run {run.pk}: Failed. 1 of 5 judgments have no result; 1 calls failed; "
        f"'judge_resume {run.pk}' sends what is missing again."
    )
    assert run.judgments.exclude(call_error="").count() == 1
    assert default_endpoint.count == 4 + 2
    out = StringIO()
    with pytest.raises(CommandError, match="1 calls failed"):
        call_command("judge_resume", str(run.pk), "--inline", stdout=out)
    assert "1 shard(s) queued again." in out.getvalue()
    assert default_endpoint.count == 6 + 2  # still failing: 2 more attempts, nothing else resent
    default_endpoint.faults = {}
    run_command("judge_resume", str(run.pk), "--inline")
    assert default_endpoint.count == 9
    assert run.judgments.filter(call_error="", final_score=7).count() == 5


@pytest.mark.skipif(not ALPACA.exists(), reason="../shared/data/chinese_alpaca_eval is not on this machine")
def test_chinese_alpaca_eval_imports_and_a_pairwise_run_gives_a_well_formed_table(default_endpoint):
    call_command(
        "import_dataset",
        str(ALPACA / "chinese_alpaca_eval.jsonl"),
        "--format",
        "alpacaeval",
        "--name",
        "cae",
        stdout=StringIO(),
    )
    for model in ("gpt-4-0613", "gpt-3.5-turbo-0613", "text-davinci-003"):
        call_command(
            "import_answers",
            str(ALPACA / "model_outputs" / f"{model}.jsonl"),
            "--dataset",
            "cae",
            "--model",
            model,
            stdout=StringIO(),
        )
    dataset = Dataset.objects.get(name="cae")
    assert dataset.items.count() == 795
    assert Answer.objects.filter(item__dataset=dataset).count() == 3 * 795

    # A judge that prefers the longer answer, and garbles every 50th reply.
    def longer_wins(body):
        prompt = body["messages"][0]["content"]
        # Figure 3 quotes each output as a Python triple-quoted string after its model name.
        first = prompt.split('"model": "model_1",\n        "answer": """')[1].split('"""')[0]
        second = prompt.split('"model": "model_2",\n        "answer": """')[1].split('"""')[0]
        if zlib.crc32(prompt.encode()) % 50 == 0:
            return "I think model_1 is better."
        winner, loser = ("model_1", "model_2") if len(first) >= len(second) else ("model_2", "model_1")
        return f"[{{'model': '{winner}', 'rank': 1}}, {{'model': '{loser}', 'rank': 2}}]"

    default_endpoint.reply = longer_wins
    run_command(
        "judge",
        "--dataset",
        "cae",
        "--mode",
        "pairwise",
        "--judge-model",
        "gpt-4",
        "--models",
        "gpt-4-0613,gpt-3.5-turbo-0613",
        "--reference-model",
        "text-davinci-003",
        "--seed",
        "7",
        "--inline",
        "--concurrency",
        "32",
    )
    run = JudgeRun.objects.get()
    assert run.judgments.count() == 2 * 795
    # Identical prompts (two models giving the same answer) are paid once.
    assert default_endpoint.count == len(set(default_endpoint.prompts())) <= 2 * 795
    assert run.judgments.filter(cached=True).count() == 2 * 795 - default_endpoint.count
    rows = json.loads(run_command("leaderboard", "--run", str(run.pk), "--format", "json"))
    assert [r["model"] for r in rows if r["reference"]] == ["text-davinci-003"]
    for row in rows:
        assert set(row) == {
            "run",
            "model",
            "items",
            "win_rate",
            "lose_rate",
            "tie_rate",
            "error_rate",
            "win_rate_se",
            "length",
            "reference",
            "rank",
            "decisive",
            "rank_meaningful",
            "lc_win_rate",
            "lc_low",
            "lc_high",
            "lc_note",
            "lc_too_few",
            "failures_as",
        }
        assert row["rank_meaningful"] is True  # 795 items each
        if not row["reference"]:
            assert row["items"] == 795
            assert row["win_rate"] + row["lose_rate"] + row["error_rate"] == pytest.approx(1.0)
            assert 0 < row["error_rate"] < 0.1
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows == sorted(rows, key=lambda r: (-r["win_rate"], r["lose_rate"]))
    table = run_command("leaderboard", "--run", str(run.pk))
    assert "(reference)" in table and "win %" in table
