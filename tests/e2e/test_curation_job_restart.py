"""A researcher starts a failed reference job again from the dataset page, choosing another
endpoint, in a real browser, in English and in Chinese: only the failed item reaches the new
endpoint, and the job ends done."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from curation.datasets.llm_steps import curation_job_run, reference_job_create
from curation.models import CurationJob
from llm.models import Endpoint
from tests.factories import DatasetFactory, ItemFactory, UserFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = {
    "en": {
        "endpoint": "Endpoint for job {job}",
        "send": "Send the failed items again",
        "started": "Job {job} started again for 1 item, at backup.",
        "failed": "Failed",
        "done": "Done",
    },
    "zh-hans": {
        "endpoint": "任务 {job} 的端点",
        "send": "重新发送失败的条目",
        "started": "任务 {job} 已在 backup 重新开始，共 1 个条目。",
        "failed": "失败",
        "done": "已完成",
    },
}


@pytest.fixture
def servers(settings):
    settings.JUDGING_RETRY_BASE_SECONDS = 0.001
    settings.JUDGING_RETRY_CAP_SECONDS = 0.002
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    primary = FakeLLM(reply=lambda body: "A drafted reference.").start()
    backup = FakeLLM(reply=lambda body: "A drafted reference.").start()
    yield primary, backup
    primary.stop()
    backup.stop()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_failed_job_is_started_again_at_another_endpoint(
    page, live_server, log_in, blocked_requests, servers, language
):
    primary, backup = servers
    words = WORDS[language]
    Group.objects.get_or_create(name="researcher")
    UserFactory(username="res", roles=["researcher"])
    Endpoint.objects.create(name="primary", base_url=primary.base_url, max_retries=0)
    Endpoint.objects.create(name="backup", base_url=backup.base_url, max_retries=0)
    dataset = DatasetFactory(name="work")
    ItemFactory(dataset=dataset, external_id="a", question="What is DNS?", reference="", language="en")
    ItemFactory(dataset=dataset, external_id="b", question="What is TCP?", reference="", language="en")
    primary.faults = {"What is TCP?": ["500"] * 1000}
    job = reference_job_create(dataset=dataset, model="m", endpoint_name="primary")
    # Off this thread: Playwright's event loop runs here, and a job drives one of its own.
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(curation_job_run, job_id=job.pk).result()
    assert (job.status, job.done, job.failed) == ("failed", 1, 1)
    paid = primary.count

    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("res", "pw-for-tests")
    page.goto(f"{live_server.url}/review/datasets/{dataset.pk}/")
    row = page.locator(f'tr[data-job="{job.pk}"]')
    expect(row).to_contain_text(words["failed"])
    expect(row).to_contain_text("HTTP 500")
    choice = page.get_by_label(words["endpoint"].format(job=job.pk))
    expect(choice).to_have_value("primary")
    choice.select_option("backup")
    row.get_by_role("button", name=words["send"]).click()
    expect(page.locator(".messages")).to_contain_text(words["started"].format(job=job.pk))

    page.reload()
    row = page.locator(f'tr[data-job="{job.pk}"]')
    expect(row).to_have_attribute("data-status", "done")
    expect(row).to_contain_text(words["done"])
    expect(row.get_by_role("button", name=words["send"])).to_have_count(0)
    job = CurationJob.objects.get(pk=job.pk)
    assert (job.status, job.done, job.failed, job.endpoint_name) == ("done", 2, 0, "backup")
    assert (backup.prompts(), primary.count) == (["What is TCP?"], paid)
    assert blocked_requests == []
