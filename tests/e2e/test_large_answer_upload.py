"""A large answers file in the browser, in English and Chinese, on a desktop and a phone: the page
comes back at once with the upload queued, follows a worker's progress without a reload, and then
shows what was stored; a bad file's line is named and nothing is stored. The threshold
(UPLOAD_BACKGROUND_BYTES) is made small so the file stays small; the worker's steps are run here,
in turn, so the page is seen at each."""

import pytest
from playwright.sync_api import expect

from judging.answers.uploads import upload_execute
from judging.models import Answer, AnswerUpload
from tests.e2e.conftest import upload_followed_to_its_end
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
ITEMS = 12
WORDS = {
    "en": {
        "upload": "Upload",
        "heading": "Large uploads",
        "queued": "Queued",
        "reading": "Reading",
        "finished": "Finished",
        "refused": "Refused",
    },
    "zh-hans": {
        "upload": "上传",
        "heading": "大文件上传",
        "queued": "已排队",
        "reading": "读取中",
        "finished": "已完成",
        "refused": "已拒绝",
    },
}


def answers(bad_line: int | None = None) -> str:
    rows = [f'{{"question_id": "q{n}", "response": "answer {n}"}}' for n in range(ITEMS)]
    if bad_line:
        rows[bad_line - 1] = '{"question_id": "q404", "response": "x"}'
    return "\n".join(rows) + "\n"


def send(page, path, model: str) -> None:
    page.locator("#upload_model").fill(model)
    page.locator("#upload_file").set_input_files(str(path))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_large_upload_shows_its_progress_then_its_result(
    signed_in_page, live_server, settings, tmp_path, language, viewport
):
    settings.TASKS = DUMMY  # queued only: the worker's steps are taken below
    settings.UPLOAD_BACKGROUND_BYTES = 100
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    dataset = DatasetFactory(name="large")
    for n in range(ITEMS):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/datasets/large/answers/")

    bad = tmp_path / "bad.jsonl"
    bad.write_text(answers(bad_line=7))
    send(page, bad, "alpha")
    page.get_by_role("button", name=words["upload"], exact=True).click()
    refused = page.locator("article.answers-upload").first
    expect(page.get_by_role("heading", name=words["heading"])).to_be_visible()
    expect(refused.locator('[data-field="status_label"]')).to_have_text(words["queued"])
    assert upload_execute(upload_id=AnswerUpload.objects.get().pk) == "failed"
    expect(refused.locator('[data-field="status_label"]')).to_have_text(words["refused"])
    expect(refused.locator('[data-field="error"]')).to_contain_text("line 7: no item of 'large' matches")
    assert not Answer.objects.exists()

    good = tmp_path / "good.jsonl"
    good.write_text(answers())
    send(page, good, "alpha")
    page.get_by_role("button", name=words["upload"], exact=True).click()
    upload = AnswerUpload.objects.latest("pk")
    article = page.locator(f"#upload-{upload.pk}")
    upload_followed_to_its_end(article, upload, upload_execute, words, ITEMS)
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert Answer.objects.filter(model__name="alpha").count() == ITEMS
