"""A researcher chooses Batch on /runs/new/, in English and Chinese, and follows the run's batch on
its page until the loopback provider finishes it: no live call is made."""

import threading

import pytest
from playwright.sync_api import expect

from judging.engine.batch import run_batch_execute
from judging.models import JudgeRun
from llm.models import Endpoint
from tests.e2e.conftest import in_a_worker_thread
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory
from tests.judging.fake_batch import FakeBatchLLM

pytestmark = pytest.mark.django_db(transaction=True)
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
WORDS = {
    "en": {
        "judge_model": "Judge model",
        "endpoint": "Endpoint",
        "batch": "Batch (about half price, results within 24 h)",
        "count": "Count calls and cost",
        "start": "Start the run",
        "sent": "Sent through the endpoint's Batch API",
        "validating": "validating",
        "completed": "completed",
        "finished": "Finished",
    },
    "zh": {
        "judge_model": "评判模型",
        "endpoint": "端点",
        "batch": "批量（约半价，24 小时内出结果）",
        "count": "计算调用次数和费用",
        "start": "开始运行",
        "sent": "通过端点的批量 API 发送",
        "validating": "校验中",
        "completed": "已完成",
        "finished": "已完成",
    },
}


def in_a_thread(work) -> None:
    """The pass a worker would run, off the thread Playwright's event loop runs on."""
    in_a_worker_thread(work)


def passes_until_done(run_id: int) -> str:
    """What a worker does: a pass, and another while batches are out (the run page's own
    requests may be taking a step of the same batch at that moment, as a second worker would)."""
    pause = threading.Event()
    for _attempt in range(40):
        status = run_batch_execute(run_id=run_id)
        if status != "waiting":
            return status
        pause.wait(0.25)
    raise AssertionError(f"run {run_id} still waiting on its batches after 40 passes")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_batch_run_chosen_on_the_page_shows_its_batch_until_it_is_done(
    settings, page, live_server, log_in, blocked_requests, language
):
    settings.TASKS = IMMEDIATE
    words = WORDS[language]
    server = FakeBatchLLM().start()
    try:
        Endpoint.objects.create(name="loopback", base_url=server.base_url, max_retries=1, timeout_seconds=5)
        dataset = DatasetFactory(name="pilot")
        model = CandidateModelFactory(name="north")
        for n in range(2):
            AnswerFactory(
                item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?"), model=model
            )
        UserFactory(username="lead", roles=["researcher"])
        page.context.add_cookies(
            [{"name": "django_language", "value": "zh-hans" if language == "zh" else "en", "url": live_server.url}]
        )
        log_in("lead", "pw-for-tests")
        page.goto(f"{live_server.url}/runs/new/?dataset=pilot")
        page.get_by_label(words["endpoint"], exact=True).select_option("loopback")
        page.get_by_label(words["judge_model"]).fill("judge-m")
        page.get_by_label("north").check()
        page.get_by_label(words["batch"]).check()
        page.get_by_role("button", name=words["count"]).click()
        expect(page.locator("#preview-batch")).to_contain_text(words["sent"])
        page.get_by_role("button", name=words["start"]).click()
        # The first pass ran as the run started: the batch is at the provider, being validated.
        batches = page.locator("#batches")
        expect(batches).to_contain_text("batch_1")
        expect(batches.locator("tbody tr")).to_contain_text(words["validating"])

        run = JudgeRun.objects.get()
        server.complete()
        in_a_thread(lambda: passes_until_done(run.pk))
        # The page follows the run and shows it done, with the batch completed.
        expect(page.locator("#progress [data-field=status]")).to_have_text(words["finished"], timeout=60_000)
        expect(batches.locator("tbody tr")).to_contain_text(words["completed"])
        run.refresh_from_db()
        assert (run.status, run.batch, run.replied) == ("finished", True, 2)
        assert server.count == 0 and len(server.uploads) == 1
        assert blocked_requests == []
    finally:
        server.stop()
