"""A researcher gets candidate answers without the command line, in English and Chinese, on a
desktop and a phone: from /runs/new/ to the dataset's answers page, an upload refused naming its
line and then taken, and a generation from a loopback endpoint after its preview."""

import pytest
from playwright.sync_api import expect

from judging.answers.generation_jobs import generation_execute
from judging.models import Answer, AnswerGeneration
from llm.models import Endpoint
from tests.e2e.conftest import in_a_worker_thread
from tests.factories import DatasetFactory, ItemFactory, UserFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
WORDS = {
    "en": {
        "link": "Upload or generate them",
        "heading": "Candidate answers",
        "upload": "Upload",
        "imported": "Imported 2 answers of alpha.",
        "count": "Count calls and cost",
        "calls": "This generation makes 2 calls",
        "start": "Start generating",
        "finished": "Finished",
    },
    "zh-hans": {
        "link": "上传或生成回答",
        "heading": "候选回答",
        "upload": "上传",
        "imported": "已导入 alpha 的 2 个回答。",
        "count": "计算调用次数和费用",
        "calls": "此次生成将调用 2 次",
        "start": "开始生成",
        "finished": "已完成",
    },
}


@pytest.fixture
def fake_llm():
    server = FakeLLM().start()
    server.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    yield server
    server.stop()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_answers_are_uploaded_and_generated_in_the_browser(
    signed_in_page, live_server, settings, fake_llm, tmp_path, language, viewport
):
    settings.TASKS = IMMEDIATE
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    dataset = DatasetFactory(name="d2")
    for n in range(2):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, default_model="gen-m", max_in_flight=2)
    page = signed_in_page("res", language, viewport)

    page.goto(f"{live_server.url}/runs/new/?dataset=d2")
    page.get_by_role("link", name=words["link"]).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(words["heading"])

    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"question_id": "q0", "response": "A0"}\n{"question_id": "q9", "response": "A9"}\n')
    page.locator("#upload_model").fill("alpha")
    page.locator("#upload_file").set_input_files(str(bad))
    page.get_by_role("button", name=words["upload"], exact=True).click()
    expect(page.locator("#upload-form")).to_contain_text("line 2: no item of 'd2' matches question_id q9.")
    assert not Answer.objects.exists()
    good = tmp_path / "answers.csv"
    good.write_text("question_id,response\nq0,A0\nq1,A1\n")
    page.locator("#upload_model").fill("alpha")
    page.locator("#upload_file").set_input_files(str(good))
    page.get_by_role("button", name=words["upload"], exact=True).click()
    expect(page.get_by_role("status").first).to_contain_text(words["imported"])

    page.locator("#generate_model").fill("gen-m")
    page.locator("#generate_endpoint").select_option("fake")
    page.get_by_role("button", name=words["count"]).click()
    expect(page.locator("#preview")).to_contain_text(words["calls"])
    assert fake_llm.count == 0
    page.get_by_role("button", name=words["start"]).click()
    expect(page.locator("article.generation [data-field=status_label]")).to_have_text(words["finished"])
    expect(page.locator("article.generation [data-field=generated]")).to_have_text("2")
    assert sorted(Answer.objects.filter(model__name="gen-m").values_list("text", flat=True)) == [
        "answer to Question 0?",
        "answer to Question 1?",
    ]
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_a_generation_is_followed_live_cancelled_and_resumed(browser, live_server, settings, fake_llm):
    """A worker runs the generation while the page is open: the page follows it without a
    reload; a second one is cancelled before a worker takes it, then resumed."""
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}
    }
    UserFactory(username="res", roles=["researcher"])
    dataset = DatasetFactory(name="d2")
    for n in range(2):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, default_model="gen-m", max_in_flight=2)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("#id_username").fill("res")
    page.locator("#id_password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/datasets/d2/answers/")

    def start(model):
        page.locator("#generate_model").fill(model)
        page.locator("#generate_endpoint").select_option("fake")
        page.get_by_role("button", name="Count calls and cost").click()
        page.get_by_role("button", name="Start generating").click()
        return AnswerGeneration.objects.get(model__name=model)

    def work(generation_id):
        """What a worker does, in a thread of its own: Playwright's loop holds this one."""
        return in_a_worker_thread(lambda: generation_execute(generation_id=generation_id))

    first = start("gen-m")
    article = page.locator(f"#generation-{first.pk}")
    expect(article.locator("[data-field=status_label]")).to_have_text("Queued")
    expect(article.get_by_role("button", name="Cancel")).to_be_visible()
    page.locator("#upload_model").fill("typed, not sent")  # the page is never reloaded under it
    assert work(first.pk) == "finished"
    expect(article.locator("[data-field=status_label]")).to_have_text("Finished", timeout=10_000)
    expect(article.locator("[data-field=generated]")).to_have_text("2")
    expect(article.get_by_role("button", name="Cancel")).to_be_hidden()
    expect(article.get_by_role("button", name="Resume")).to_be_hidden()
    assert page.locator("#upload_model").input_value() == "typed, not sent"

    second = start("gen-b")
    article = page.locator(f"#generation-{second.pk}")
    article.get_by_role("button", name="Cancel").click()
    expect(article.locator("[data-field=status_label]")).to_have_text("Cancelled")
    article.get_by_role("button", name="Resume").click()
    expect(article.locator("[data-field=status_label]")).to_have_text("Queued")
    second.refresh_from_db()
    assert second.status == "queued" and fake_llm.count == 2
    context.close()
