"""Answers cut off at max_tokens in a generation through the Batch API: kept and marked as in a
live one (test_cut_off_answers.py), and the command's end names them and the way on."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Answer
from llm.models import Endpoint
from tests.factories import DatasetFactory, ItemFactory
from tests.judging.test_batch_runs import server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def test_a_batched_generation_keeps_and_counts_cut_off_answers_too(server):  # noqa: F811
    server.line_faults = {"question 1?": "length"}  # the second item's reply is stopped at max_tokens
    server.complete_after = 0.0
    server.reply = lambda body: "a complete answer to " + body["messages"][-1]["content"]
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY")
    dataset = DatasetFactory(name="cut")
    [ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}?") for n in range(3)]
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("generate", "--dataset", "cut", "--model", "small", "--endpoint", "fake", "--batch", stdout=out)
    assert "3 generated, 0 failed, 1 cut off." in out.getvalue()
    assert "1 answer(s) were cut off at max_tokens" in str(refused.value)
    assert dict(Answer.objects.values_list("item__external_id", "cut_off")) == {"q0": False, "q1": True, "q2": False}
