"""A judge's reply is stored once: in the response cache row it came from, which the judgment
refers to. A re-run that asks the server again keeps the new reply on its judgment (the cache
keeps its first), and every reader (re-parse, export, the run's figures) finds the reply where
it is."""

import pytest
from django.db.models.functions import Length

from judging.engine.execution import run_execute_inline
from judging.results.exports import judgments_export
from judging.runs.rerun import run_rerun
from judging.runs.resume import run_reparse
from llm.models import LLMResponse
from tests.judging.test_runs import judged, make_run  # noqa: F401 - the fixture is used by name

pytestmark = pytest.mark.django_db(transaction=True)


def stored_reply_characters() -> int:
    """Characters of judge replies in the database: the cache's texts and the judgments' copies."""
    from judging.models import Judgment

    cache = sum(LLMResponse.objects.annotate(n=Length("text")).values_list("n", flat=True))
    copies = sum(Judgment.objects.annotate(n=Length("raw_text")).values_list("n", flat=True))
    return cache + copies


def test_a_reply_is_stored_once_and_every_reader_finds_it(judged, fake_llm):  # noqa: F811
    dataset, _items, models = judged
    run = make_run(dataset, models)
    run_execute_inline(run=run)
    judgments = list(run.judgments.select_related("response").order_by("pk"))
    replies = [judgment.reply for judgment in judgments]
    assert len(judgments) == 8 and all(replies)
    assert all(judgment.raw_text == "" and judgment.response_id for judgment in judgments)
    assert stored_reply_characters() == sum(len(reply) for reply in replies)

    # The export's raw_text column and the figures' failures read the reply where it is stored.
    table = judgments_export(run=run)
    assert [row["raw_text"] for row in table.rows] == replies

    # A re-parse reads the cache row the judgment refers to.
    first = judgments[0]
    LLMResponse.objects.filter(key=first.response_id).update(text="On reflection.\n{'Final Score': 2}")
    assert run_reparse(run=run) == 1
    first.refresh_from_db()
    assert first.final_score == 2

    # A second run of the same prompts is answered by the cache and stores nothing new.
    before = stored_reply_characters()
    second = make_run(dataset, models)
    run_execute_inline(run=second)
    assert stored_reply_characters() == before
    assert set(second.judgments.values_list("response", flat=True)) == {j.response_id for j in judgments}


def test_a_rerun_that_asks_again_keeps_its_own_replies(judged, fake_llm):  # noqa: F811
    dataset, _items, models = judged
    run = make_run(dataset, models)
    run_execute_inline(run=run)
    first_replies = sorted(j.reply for j in run.judgments.select_related("response"))
    fake_llm.reply = lambda body: "Changed my mind.\n{'Factuality': 3, 'Final Score': 3}"
    again = run_rerun(run=run, fresh_calls=True)
    run_execute_inline(run=again)
    fresh = list(again.judgments.select_related("response"))
    assert len(fresh) == 8 and fake_llm.count == 16
    # The cache keeps its first reply to each prompt; the re-run's differ, so each keeps its own.
    assert {(j.response_id, j.reply, j.final_score) for j in fresh} == {(None, fake_llm.reply({}), 3)}
    assert sorted(j.reply for j in run.judgments.select_related("response")) == first_replies
    assert LLMResponse.objects.count() == 8
