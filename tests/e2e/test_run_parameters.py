"""A researcher sets a judge run's temperature (left empty: none sent) and system prompt on /runs/new/
and reads them back on the run's page, in English and Chinese; the loopback judge received them."""

import pytest
from playwright.sync_api import expect

from judging.models import JudgeRun
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
WORDS = {
    "en": {
        "judge_model": "Judge model",
        "endpoint": "Endpoint",
        "temperature": "Temperature",
        "system_prompt": "System prompt",
        "count": "Count calls and cost",
        "start": "Start the run",
        "finished": "Finished",
        "not_sent": "temperature not sent (the server's default)",
    },
    "zh": {
        "judge_model": "评判模型",
        "endpoint": "端点",
        "temperature": "温度",
        "system_prompt": "系统提示词",
        "count": "计算调用次数和费用",
        "start": "开始运行",
        "finished": "已完成",
        "not_sent": "温度 未发送（使用服务器的默认值）",
    },
}
SYSTEM = "Judge <b>fairly</b>.\n请公正评判。"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_temperature_and_system_prompt_from_the_page_reach_the_judge(
    settings, page, live_server, log_in, blocked_requests, language
):
    settings.TASKS = IMMEDIATE
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    words = WORDS[language]
    server = FakeLLM().start()
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
        page.get_by_label(words["temperature"]).fill("")
        page.get_by_label(words["system_prompt"]).fill(SYSTEM)
        page.get_by_role("button", name=words["count"]).click()
        expect(page.locator("#preview")).to_be_visible()
        page.get_by_role("button", name=words["start"]).click()
        expect(page.locator("#progress [data-field=status]")).to_have_text(words["finished"])
        expect(page.locator("#run-parameters")).to_contain_text(words["not_sent"])
        expect(page.locator("#run-system-prompt")).to_have_text(SYSTEM)  # shown as text, not markup
        assert page.locator("#run-system-prompt b").count() == 0

        run = JudgeRun.objects.get()
        assert (run.temperature, run.system_prompt, run.status) == (None, SYSTEM, "finished")
        assert [("temperature" in body, body["messages"][0]) for body in server.requests] == [
            (False, {"role": "system", "content": SYSTEM})
        ] * 2
        assert blocked_requests == []
    finally:
        server.stop()
