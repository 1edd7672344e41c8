"""Judge runs end to end against a loopback server: shards, saving, cache, resume, cancel, pairwise."""

import itertools
import json
import re
import threading

import pytest
from django.utils import timezone

from curation.choices import Intent, Language
from curation.models import Dataset
from judging.dispatch import run_enqueue
from judging.engine.execution import run_execute_inline, shard_execute
from judging.engine.queue import run_cancel
from judging.models import JudgeRun, JudgeShard, Judgment
from judging.runs.creation import run_create
from judging.runs.planning import pair_order
from judging.runs.resume import run_reparse, run_resume
from judging.runs.spec import RunSpec
from llm.models import Endpoint, LLMResponse
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_llm import default_reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def judged(fake_llm, fast_retries):
    """A dataset of 4 items in two languages and intents, answered by two models and a reference."""
    Endpoint.objects.create(
        name="fake",
        base_url=fake_llm.base_url,
        api_key_env="FAKE_LLM_KEY",
        default_model="judge-m",
        max_in_flight=8,
        timeout_seconds=2,
        max_retries=2,
    )
    dataset = DatasetFactory(name="small")
    items = [
        ItemFactory(dataset=dataset, external_id="a", question="Capital of France?", intent=Intent.FACTUAL_QA),
        ItemFactory(
            dataset=dataset,
            external_id="b",
            question="法国的首都是哪里？",
            intent=Intent.FACTUAL_QA,
            language=Language.ZH,
            reference="巴黎。",
        ),
        ItemFactory(dataset=dataset, external_id="c", question="Write a haiku", intent=Intent.SEEK_CREATIVITY),
        ItemFactory(dataset=dataset, external_id="d", question="Use the API", intent=Intent.API),
    ]
    models = {name: CandidateModelFactory(name=name) for name in ("alpha", "beta", "ref")}
    for item in items:
        for name, model in models.items():
            AnswerFactory(item=item, model=model, text=f"{name} answers {item.external_id}")
    return dataset, items, models


def scores_by_model(reply_for):
    """A judge that scores by which model wrote the answer in the prompt."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        for name, score in reply_for.items():
            if f"{name} answers" in prompt:
                return f"Fine.\n{{'Factuality': {score}, 'Final Score': {score}}}"
        return "no idea"

    return reply


def make_run(dataset, models, **kwargs):
    from llm.models import Endpoint as E

    defaults = dict(
        dataset=dataset,
        mode="pointwise",
        judge_model="judge-m",
        candidates=[models["alpha"], models["beta"]],
        endpoint=E.objects.get(name="fake"),
        concurrency=4,
    )
    defaults.update(kwargs)
    return run_create(spec=RunSpec(**defaults))


def test_pointwise_run_judges_every_answer_once_with_the_items_template(judged, fake_llm):
    dataset, items, models = judged
    fake_llm.reply = scores_by_model({"alpha": 8, "beta": 5})
    run = make_run(dataset, models, shard_size=3)
    assert run.total == 8 and run.shards.count() == 3
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert fake_llm.count == 8
    finals = sorted(run.judgments.values_list("model__name", "final_score"))
    assert finals == [("alpha", 8)] * 4 + [("beta", 5)] * 4
    names = dict(run.judgments.values_list("item__external_id", "template__name").distinct())
    assert names == {
        "a": "urs/factual_qa/en",
        "b": "urs/factual_qa/zh",
        "c": "urs/seek_creativity/en",
        "d": "urs/solve_professional_problem/en",
    }
    prompts = fake_llm.prompts()
    chinese = [p for p in prompts if "法国的首都是哪里" in p]
    assert len(chinese) == 2 and all("事实正确性" in p and "[助手的答案开始]" in p for p in chinese)
    assert all(j.prompt_tokens == 10 and j.completion_tokens and not j.cached for j in run.judgments.all())


def test_a_second_run_with_the_same_prompts_costs_nothing(judged, fake_llm):
    dataset, items, models = judged
    run_execute_inline(run=make_run(dataset, models))
    assert fake_llm.count == 8
    second = make_run(dataset, models)
    run_execute_inline(run=second)
    assert fake_llm.count == 8
    assert second.judgments.filter(cached=True).count() == 8
    assert LLMResponse.objects.count() == 8


def test_parse_failures_are_kept_and_reparsed_without_calls(judged, fake_llm):
    dataset, items, models = judged
    fake_llm.reply = lambda body: "Overall decent. Final score = seven"
    run = make_run(dataset, models)
    run_execute_inline(run=run)
    assert run.judgments.exclude(parse_error="").count() == 8
    failure = run.judgments.first()
    assert failure.reply == "Overall decent. Final score = seven"
    assert failure.parse_error == "no score dict and no final-score phrase in the reply"
    Judgment.objects.filter(pk=failure.pk).update(raw_text="Overall decent. Final Score: 6")
    assert run_reparse(run=run) == 1
    assert Judgment.objects.get(pk=failure.pk).final_score == 6
    assert fake_llm.count == 8


def test_failed_calls_keep_their_reason_and_resume_sends_only_those(judged, fake_llm):
    dataset, items, models = judged
    fake_llm.reply = scores_by_model({"alpha": 8, "beta": 5})
    fake_llm.faults = {"beta answers c": ["400"], "beta answers d": ["500"] * 3}
    run = make_run(dataset, models)
    run_execute_inline(run=run)
    failed = dict(run.judgments.exclude(call_error="").values_list("item__external_id", "call_error"))
    assert failed == {"c": "HTTP 400: bad request: context too long", "d": "HTTP 500: server exploded after 3 attempts"}
    assert fake_llm.count == 8 + 2
    run.refresh_from_db()
    # "Finished" only when every unit has a result.
    assert run.status == JudgeRun.Status.FAILED
    assert run.error == (
        f"2 of 8 judgments have no result; 2 calls failed (1 prompt exceeds the judge's context length); "
        f"'judge_resume {run.pk}' sends what is missing again, and a prompt over the context length only "
        "with a smaller --max-tokens or once the endpoint changes."
    )

    assert run_resume(run=run) == 1
    run_execute_inline(run=run)
    # Only the call that may succeed went out again; the prompt too long for this endpoint did not.
    assert fake_llm.prompts()[10:] == [p for p in fake_llm.prompts()[:10] if "beta answers d" in p][:1]
    assert list(run.judgments.exclude(call_error="").values_list("item__external_id", "call_error_kind")) == [
        ("c", "context_length")
    ]
    assert run.judgments.count() == 8

    # A smaller max_tokens leaves more of the context for the prompt: it is sent again.
    assert run_resume(run=run, max_tokens=run.max_tokens // 2) == 1
    fake_llm.faults = {"beta answers c": ["400"]}
    run_execute_inline(run=run)
    assert fake_llm.count == 12 and "beta answers c" in fake_llm.prompts()[-1]

    # Another endpoint (a model with a longer context) gets the long prompt again.
    from tests.judging.fake_llm import FakeLLM

    bigger = FakeLLM(reply=scores_by_model({"beta": 5})).start()
    try:
        Endpoint.objects.filter(name="fake").update(base_url=bigger.base_url)
        assert run_resume(run=run) == 1
        run_execute_inline(run=run)
        assert bigger.count == 1 and "beta answers c" in bigger.prompts()[0]
    finally:
        bigger.stop()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED and run.error == ""
    assert run.judgments.exclude(call_error="").count() == 0 and run.judgments.count() == 8


def test_a_crashed_shard_resumes_without_repeating_finished_calls(judged, fake_llm, settings):
    dataset, items, models = judged
    settings.JUDGING_STALE_SECONDS = 30
    run = make_run(dataset, models, shard_size=8)
    shard = run.shards.get()
    # What a worker killed mid-shard leaves: three judgments saved, the shard RUNNING, heartbeat old.
    run_execute_inline(run=make_run(dataset, models, candidates=[models["alpha"]]))  # unrelated warm-up run
    warm = fake_llm.count
    for unit in shard.units[:3]:
        Judgment.objects.create(
            run=run, item_id=unit[0], model_id=unit[1], order=unit[2], final_score=6, raw_text="{'Final Score': 6}"
        )
    JudgeShard.objects.filter(pk=shard.pk).update(
        status=JudgeShard.Status.RUNNING, worker_id="dead:1", attempts=1, heartbeat_at=timezone.now()
    )
    assert run_resume(run=run) == 0  # heartbeat still fresh: maybe alive
    assert shard_execute(shard_id=shard.pk) == "skipped"
    JudgeShard.objects.filter(pk=shard.pk).update(heartbeat_at=timezone.now() - timezone.timedelta(minutes=5))
    assert run_resume(run=run) == 1
    assert shard_execute(shard_id=shard.pk) == JudgeShard.Status.DONE
    # Only beta's unfinished units reach the server: finished ones are skipped, alpha's are cached.
    unfinished_beta = [u for u in shard.units[3:] if u[1] == models["beta"].pk]
    sent_after = fake_llm.prompts()[warm:]
    assert len(sent_after) == len(unfinished_beta) == 4 - sum(1 for u in shard.units[:3] if u[1] == models["beta"].pk)
    assert all("beta answers" in p for p in sent_after)
    assert run.judgments.count() == 8
    shard.refresh_from_db()
    assert shard.attempts == 2 and shard.status == "done"


def test_cancel_stops_the_calls_and_resume_sends_only_what_did_not_come_back(judged, fake_llm, settings):
    settings.JUDGING_TICK_SECONDS = 0.05
    dataset, items, models = judged
    # The server answers the first two calls and holds the others until the cancel has landed:
    # the order is made, not hoped for, however loaded the machine is.
    released = threading.Event()
    served = itertools.count()

    def two_then_held(body):
        if next(served) >= 2:
            released.wait(timeout=120)
        return default_reply(body)

    fake_llm.reply = two_then_held
    run = make_run(dataset, models, shard_size=2, concurrency=2)
    cancelled = []

    def cancel_after_first_batch():
        if not cancelled:
            cancelled.append(run_cancel(run=run))

    try:
        run_execute_inline(run=run, on_progress=cancel_after_first_batch)
    finally:
        released.set()
    fake_llm.reply = default_reply
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED
    kept = {f"{j.model.name} answers {j.item.external_id}" for j in run.judgments.select_related("model", "item")}
    assert 1 <= len(kept) <= 2  # the two answered (the cancel may land between them); none held
    statuses = list(run.shards.values_list("status", flat=True))
    assert "cancelled" in statuses and "running" not in statuses and "queued" not in statuses
    sent = fake_llm.count

    assert run_resume(run=run) == statuses.count("cancelled")
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED and run.judgments.count() == 8
    # No call whose reply came back was sent again.
    again = fake_llm.prompts()[sent:]
    assert not [marker for marker in kept if any(marker in prompt for prompt in again)]


def test_pairwise_sides_are_seeded_and_outcomes_follow_the_candidate(judged, fake_llm):
    dataset, items, models = judged

    def prefers_alpha(body):
        prompt = body["messages"][-1]["content"]
        first = prompt.index('"model": "model_1"')
        second = prompt.index('"model": "model_2"')
        alpha_first = "alpha answers" in prompt[first:second]
        if "alpha answers" in prompt:
            winner = "model_1" if alpha_first else "model_2"
        else:  # beta vs ref: ref wins
            winner = "model_2" if "beta answers" in prompt[first:second] else "model_1"
        loser = "model_2" if winner == "model_1" else "model_1"
        return f"[{{'model': '{winner}', 'rank': 1}}, {{'model': '{loser}', 'rank': 2}}]"

    fake_llm.reply = prefers_alpha
    # The sides hash the seed with the rows' ids, which differ between runs (PostgreSQL does not
    # reset its sequences): the first seed from 42 that puts these pairs on both sides is taken,
    # so that the run really meets both (with seed 42 alone, 1 run in 128 met one side only).
    pairs = [(i.pk, m.pk) for i in items for m in (models["alpha"], models["beta"])]
    seed = next(s for s in range(42, 1042) if len({pair_order(s, *pair) for pair in pairs}) == 2)
    run = make_run(dataset, models, mode="pairwise", reference_model=models["ref"], seed=seed)
    run_execute_inline(run=run)
    outcomes = sorted(run.judgments.values_list("model__name", "outcome"))
    assert outcomes == [("alpha", "win")] * 4 + [("beta", "lose")] * 4
    orders = {(j.item_id, j.model_id): j.order for j in run.judgments.all()}
    assert orders == {pair: pair_order(seed, *pair) for pair in pairs}
    assert len(set(orders.values())) == 2  # both sides occur
    assert all("alpaca" not in p and "ref answers" in p for p in fake_llm.prompts())


def test_both_orders_judges_each_pair_twice(judged, fake_llm):
    dataset, items, models = judged
    run = make_run(dataset, models, mode="pairwise", reference_model=models["ref"], both_orders=True)
    run_execute_inline(run=run)
    assert run.total == 16 and run.judgments.count() == 16
    assert sorted(set(run.judgments.values_list("order", flat=True))) == [0, 1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # A page shows these too: the service names no option; `judge` adds its own (test_commands).
        ({"mode": "pairwise"}, "A pairwise run needs a reference model."),
        ({"candidates": []}, "Name at least one candidate model."),
        ({"concurrency": 0}, "Concurrency must be at least 1."),
        ({"judge_model": ""}, "Name the judge model."),
    ],
)
def test_bad_run_requests_write_nothing(judged, kwargs, message):
    dataset, items, models = judged
    with pytest.raises(ValueError, match=re.escape(message)):
        make_run(dataset, models, **kwargs)
    assert JudgeRun.objects.count() == 0 and JudgeShard.objects.count() == 0


def test_models_without_answers_are_refused(judged):
    dataset, items, models = judged
    empty = Dataset.objects.create(name="empty-answers")
    ItemFactory(dataset=empty)
    with pytest.raises(ValueError, match="None of alpha, beta has answers on dataset “empty-answers”"):
        make_run(empty, models)


def test_shards_run_as_tasks_on_the_judging_queue(judged, fake_llm, settings):
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    dataset, items, models = judged
    run = make_run(dataset, models, shard_size=5)
    assert run_enqueue(run=run) == 2
    run.refresh_from_db()
    assert run.status == "finished" and run.judgments.count() == 8
    assert all(s.task_id for s in run.shards.all())
    assert json.dumps(list(run.shards.values_list("status", flat=True))) == '["done", "done"]'


def test_progress_and_leaderboard_of_a_finished_run(judged, fake_llm):
    from judging.results.boards import leaderboard_rows, run_leaderboard
    from judging.results.selectors import run_progress

    dataset, items, models = judged
    fake_llm.reply = scores_by_model({"alpha": 8, "beta": 5})
    fake_llm.faults = {"beta answers d": ["400"]}
    run = make_run(dataset, models)
    run_execute_inline(run=run)
    run.refresh_from_db()
    progress = run_progress(run=run)
    assert {
        k: progress[k]
        for k in (
            "status",
            "total",
            "done",
            "remaining",
            "parse_failures",
            "call_failures",
            "cut_off",
            "in_flight",
            "prompt_tokens",
            "workers",
        )
    } == {
        "status": "failed",
        "total": 8,
        "done": 7,
        "remaining": 1,
        "parse_failures": 0,
        "call_failures": 1,
        "cut_off": 0,
        "in_flight": 0,
        "prompt_tokens": 70,
        "workers": 0,
    }
    assert progress["error"].startswith("1 of 8 judgments have no result; 1 calls failed")
    board = run_leaderboard(run=run)
    overall = {row["model"]: row["overall"] for row in board["tables"]["overall"]["rows"]}
    assert (overall["alpha"].mean, overall["alpha"].count, overall["beta"].mean, overall["beta"].count) == (
        8.0,
        4,
        5.0,
        3,
    )
    assert set(board["tables"]) == {"overall", "intent", "language"}
    by_language = {row["model"]: row["cells"] for row in board["tables"]["language"]["rows"]}
    assert by_language["alpha"]["zh"].mean == 8.0 and by_language["beta"]["en"].count == 2
    assert board["criteria"]["rows"][0] == {"model": "alpha", "means": {"Factuality": 8.0}, "counts": {"Factuality": 4}}
    rows = leaderboard_rows(run=run)
    assert {
        "run": run.pk,
        "group": "overall",
        "column": "overall",
        "model": "beta",
        "mean": 5.0,
        "low": 5.0,
        "high": 5.0,
        "count": 3,
        "failures": 0,
        "rank": 2,
        # Three scores of 5: the interval has no width, and says why.
        "note": "every score is the same: the interval has no width; that is not certainty, only few or uniform scores",
    } in rows


def test_cross_validation_over_runs_with_model_written_references(judged, fake_llm):
    """Pointwise runs whose references are a model's own answers give the evaluator x source
    matrix and the rating bias (URS Equation 1)."""
    from judging.results.boards import dataset_cross_validation

    dataset, items, models = judged

    def judge(body):
        prompt = body["messages"][0]["content"]
        reference = (
            prompt.split("[Start of Reference Answer]")[-1]
            if "[Start of Reference Answer]" in prompt
            else prompt.split("[参考答案开始]")[-1]
        )
        answer = (
            prompt.split("[start of AI assistant's answer]")[-1]
            if "[start of AI assistant's answer]" in prompt
            else prompt.split("[助手的答案开始]")[-1]
        )
        own = reference.split()[0] == answer.split()[0]  # the candidate wrote the reference
        return "{'Final Score': 9}" if own else "{'Final Score': 6}"

    fake_llm.reply = judge
    for source in ("alpha", "beta"):
        run = make_run(dataset, models, reference_model=models[source])
        run_execute_inline(run=run)
        assert run.judgments.count() == 8
    result = dataset_cross_validation(dataset=dataset)
    assert result["evaluators"] == ["judge-m"] and result["sources"] == ["alpha", "beta"]
    assert result["matrix"] == {"judge-m": {"alpha": 7.5, "beta": 7.5}}
    assert result["rating_bias"] == {"judge-m": 1.0}  # 9 on its own references, minus 8


def test_alignbench_items_get_their_question_type_template_and_aggregates(fake_llm, fast_retries):
    from judging.results.boards import run_leaderboard

    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url)
    dataset = DatasetFactory(name="ab", source="alignbench")
    model = CandidateModelFactory(name="glm")
    scores = {"数学计算": 4, "逻辑推理": 6, "文本写作": 8, "综合问答": 7}
    for category in scores:
        item = ItemFactory(
            dataset=dataset, external_id=category, question=category, category=category, language=Language.ZH, intent=""
        )
        AnswerFactory(item=item, model=model, text=f"answer {category}")
    fake_llm.reply = lambda body: next(
        f"{{'维度一': {s}, '综合得分': {s}}}"
        for c, s in scores.items()
        if f"answer {c}" in body["messages"][0]["content"]
    )
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="j",
            candidates=[model],
            endpoint=Endpoint.objects.get(name="fake"),
        ),
    )
    run_execute_inline(run=run)
    names = dict(run.judgments.values_list("item__category", "template__name"))
    assert names == {
        "数学计算": "alignbench/逻辑推理型回答/zh",
        "逻辑推理": "alignbench/逻辑推理型回答/zh",
        "文本写作": "alignbench/生成型回答/zh",
        "综合问答": "alignbench/建议型回答/zh",
    }
    assert run.judgments.get(item__category="数学计算").scores == {"Factuality": 4}  # 维度一 -> first dimension
    board = run_leaderboard(run=run)
    assert board["alignbench"] == {"glm": {"中文推理": 5.0, "中文语言": 7.5, "总分": 6.25}}


def test_resume_queues_the_shards_it_requeues_unless_told_not_to(judged, fake_llm):
    """One run_resume serves the run page, the API and judge_resume: it re-queues the shards and
    queues a task for each (judge_resume --inline runs them itself instead)."""
    dataset, items, models = judged
    run = make_run(dataset, models, shard_size=2)
    run_cancel(run=run)
    assert set(run.shards.values_list("task_id", flat=True)) == {""}
    assert run_resume(run=run, enqueue=False) == run.shards.count()
    assert set(run.shards.values_list("status", "task_id")) == {("queued", "")}
    run_cancel(run=run)
    assert run_resume(run=run) == run.shards.count()
    run.refresh_from_db()
    assert run.status == "running" and "" not in set(run.shards.values_list("task_id", flat=True))
