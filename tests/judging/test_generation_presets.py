"""`generate --preset`: candidate answers asked the way each benchmark's authors asked them, as the
request bodies at the loopback server show, and recorded on every answer."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.answers.generation import GENERATION_PRESETS, GenerationError, answers_generate
from judging.models import Answer, CandidateModel
from judging.runs.manifest import model_entry
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

# ChineseAlpacaEval's generation_demo.py, SYSTEM_CONTENT_zh, as published.
CAE_SYSTEM = "您是一位乐于助人的智能助手。请用中文回复用户的请求。"


@pytest.fixture
def items(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    fake_llm.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    dataset = DatasetFactory(name="mixed", source="alignbench")
    ItemFactory(dataset=dataset, external_id="1", question="1+1?", category="数学计算")
    ItemFactory(dataset=dataset, external_id="2", question="写一首诗", category="文本写作")
    ItemFactory(dataset=dataset, external_id="3", question="other", category="helpful_base")
    return dataset


def generate(*extra, model="m"):
    out = StringIO()
    call_command("generate", "--dataset", "mixed", "--model", model, *extra, stdout=out, stderr=StringIO())
    return out.getvalue()


def sent(fake_llm):
    """question -> the request body without its messages, and the roles of its messages."""
    return {
        body["messages"][-1]["content"]: (
            {key: value for key, value in body.items() if key not in ("messages", "model")},
            [message["role"] for message in body["messages"]],
        )
        for body in fake_llm.requests
    }


def test_the_urs_preset_sends_no_temperature_and_no_system_prompt(items, fake_llm):
    assert "3 generated, 0 failed" in generate("--preset", "urs")
    # No temperature; max_tokens is generation's default, as on every call.
    assert sent(fake_llm) == {question: ({"max_tokens": 2048}, ["user"]) for question in ("1+1?", "写一首诗", "other")}
    parameters = Answer.objects.get(item__external_id="1").parameters
    assert (parameters["preset"], parameters["temperature"], parameters["max_tokens"]) == ("urs", None, 2048)
    assert "system_prompt" not in parameters


def test_the_alignbench_preset_takes_the_categorys_temperature(items, fake_llm):
    generate("--preset", "alignbench")
    assert sent(fake_llm) == {
        "1+1?": ({"temperature": 0.1, "max_tokens": 2048}, ["user"]),
        "写一首诗": ({"temperature": 0.7, "max_tokens": 2048}, ["user"]),
        "other": ({"temperature": 0.7, "max_tokens": 2048}, ["user"]),
    }
    assert {a.item.external_id: a.parameters["temperature"] for a in Answer.objects.all()} == {
        "1": 0.1,
        "2": 0.7,
        "3": 0.7,
    }


def test_the_chinese_alpaca_eval_preset_sends_its_chinese_system_prompt(items, fake_llm):
    generate("--preset", "chinese_alpaca_eval")
    assert {question: body for question, body in sent(fake_llm).items()} == {
        question: ({"temperature": 0.7, "max_tokens": 2048}, ["system", "user"])
        for question in ("1+1?", "写一首诗", "other")
    }
    assert {body["messages"][0]["content"] for body in fake_llm.requests} == {CAE_SYSTEM}
    answer = Answer.objects.get(item__external_id="2")
    assert answer.text == "answer to 写一首诗"
    assert {key: answer.parameters[key] for key in ("preset", "system_prompt", "temperature", "max_tokens")} == {
        "preset": "chinese_alpaca_eval",
        "system_prompt": CAE_SYSTEM,
        "temperature": 0.7,
        "max_tokens": 2048,
    }
    # The run manifest groups a model's answers by the parameters they were made with.
    entry = model_entry(CandidateModel.objects.get(name="m"), items)
    assert [group["answers"] for group in entry["generation"]] == [3]
    assert entry["generation"][0]["parameters"]["preset"] == "chinese_alpaca_eval"


def test_max_tokens_given_wins_over_the_presets(items, fake_llm):
    generate("--preset", "chinese_alpaca_eval", "--max-tokens", "99")
    assert {body["max_tokens"] for body in fake_llm.requests} == {99}


def test_without_a_preset_generation_is_as_before(items, fake_llm):
    generate()
    assert {q: body for q, (body, _roles) in sent(fake_llm).items()} == {
        "1+1?": {"temperature": 0.1, "max_tokens": 2048},
        "写一首诗": {"temperature": 0.7, "max_tokens": 2048},
        "other": {"temperature": 0.7, "max_tokens": 2048},
    }
    assert "preset" not in Answer.objects.get(item__external_id="1").parameters


def test_an_unknown_preset_is_refused(items, fake_llm):
    with pytest.raises(CommandError, match="invalid choice: 'mt-bench'"):
        generate("--preset", "mt-bench")
    with pytest.raises(GenerationError, match="Unknown generation preset 'mt-bench'; choose among urs, alignbench"):
        answers_generate(dataset=items, model_name="m", endpoint=None, preset="mt-bench")
    assert fake_llm.count == 0 and not Answer.objects.exists()


def test_every_preset_names_its_source():
    assert set(GENERATION_PRESETS) == {"urs", "alignbench", "chinese_alpaca_eval", "arena_hard"}
    assert all(preset.source for preset in GENERATION_PRESETS.values())
