"""A large dataset file on the import page, in English and Chinese, on a desktop and a phone: the
page comes back at once with the upload queued, follows a worker's progress without a reload, and
then links to the dataset made; a bad file's line is named and nothing is stored, and the refused
upload is discarded after a confirmation. A refused answers upload is discarded the same way on the
answers page. The threshold (UPLOAD_BACKGROUND_BYTES) is made small so the files stay small; the
worker's steps are run here, in turn, so the page is seen at each."""

import pytest
from playwright.sync_api import expect

from core.models import AuditEvent
from curation.datasets.uploads import dataset_upload_execute
from curation.models import Dataset, DatasetUpload, Item
from judging.answers.uploads import upload_execute
from judging.models import AnswerUpload
from tests.e2e.conftest import upload_followed_to_its_end
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
ITEMS = 12
WORDS = {
    "en": {
        "import": "Import",
        "upload": "Upload",
        "heading": "Large imports",
        "queued": "Queued",
        "reading": "Reading",
        "finished": "Finished",
        "refused": "Refused",
        "open": "Open the dataset",
        "discard": "Discard…",
        "confirm": "Yes, discard it",
        "discarded": "is discarded",
    },
    "zh-hans": {
        "import": "导入",
        "upload": "上传",
        "heading": "大文件导入",
        "queued": "已排队",
        "reading": "读取中",
        "finished": "已完成",
        "refused": "已拒绝",
        "open": "打开数据集",
        "discard": "丢弃…",
        "confirm": "确认丢弃",
        "discarded": "已丢弃",
    },
}
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
LANGUAGES = pytest.mark.parametrize("language", ["en", "zh-hans"])


def questions(bad_line: int | None = None) -> str:
    rows = [f'{{"uid": "u{n}", "prompt": "Question {n}?"}}' for n in range(ITEMS)]
    if bad_line:
        rows[bad_line - 1] = '{"uid": "u404"}'
    return "\n".join(rows) + "\n"


def send(page, path, name: str) -> None:
    page.locator("#id_name").fill(name)
    page.locator("#id_format").select_option("arena_hard")
    page.locator("#id_file").set_input_files(str(path))


def discard(page, article, words) -> None:
    """Open the question, then confirm: the button is not there before the question is open."""
    confirm = article.get_by_role("button", name=words["confirm"])
    expect(confirm).to_be_hidden()
    article.get_by_text(words["discard"]).click()
    confirm.click()
    expect(page.get_by_text(words["discarded"])).to_be_visible()


@VIEWPORTS
@LANGUAGES
def test_a_large_import_shows_its_progress_its_refusal_and_is_discarded(
    signed_in_page, live_server, settings, tmp_path, language, viewport
):
    settings.TASKS = DUMMY  # queued only: the worker's steps are taken below
    settings.UPLOAD_BACKGROUND_BYTES = 100
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/review/datasets/import/")

    bad = tmp_path / "bad.jsonl"
    bad.write_text(questions(bad_line=7))
    send(page, bad, "refused-set")
    page.get_by_role("button", name=words["import"], exact=True).click()
    expect(page.get_by_role("heading", name=words["heading"])).to_be_visible()
    refused_upload = DatasetUpload.objects.get()
    refused = page.locator(f"#upload-{refused_upload.pk}")
    expect(refused.locator('[data-field="status_label"]')).to_have_text(words["queued"])
    assert dataset_upload_execute(upload_id=refused_upload.pk) == "failed"
    expect(refused.locator('[data-field="status_label"]')).to_have_text(words["refused"])
    expect(refused.locator('[data-field="error"]')).to_contain_text("line 7: expected the field 'prompt'")
    assert not Dataset.objects.exists() and not Item.objects.exists()

    good = tmp_path / "good.jsonl"
    good.write_text(questions())
    send(page, good, "large-set")
    page.get_by_role("button", name=words["import"], exact=True).click()
    upload = DatasetUpload.objects.latest("pk")
    article = page.locator(f"#upload-{upload.pk}")
    upload_followed_to_its_end(article, upload, dataset_upload_execute, words, ITEMS)
    expect(article.get_by_role("link", name=words["open"])).to_have_attribute("href", "/datasets/large-set/")
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert Item.objects.filter(dataset__name="large-set").count() == ITEMS

    # The finished one offers no discard; the refused one does, after a confirmation.
    expect(article.get_by_text(words["discard"])).to_be_hidden()
    page.reload()
    discard(page, page.locator(f"#upload-{refused_upload.pk}"), words)
    expect(page.locator(f"#upload-{refused_upload.pk}")).to_have_count(0)
    assert list(DatasetUpload.objects.values_list("pk", flat=True)) == [upload.pk]
    assert AuditEvent.objects.get(action="upload_discarded").details["before"]["name"] == "refused-set"
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


@VIEWPORTS
@LANGUAGES
def test_a_refused_answers_upload_is_discarded_after_a_confirmation(
    signed_in_page, live_server, settings, tmp_path, language, viewport
):
    settings.TASKS = DUMMY
    settings.UPLOAD_BACKGROUND_BYTES = 100
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    dataset = DatasetFactory(name="large")
    for n in range(ITEMS):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/datasets/large/answers/")
    rows = [f'{{"question_id": "q{n}", "response": "answer {n}"}}' for n in range(ITEMS)]
    rows[4] = '{"question_id": "q404", "response": "x"}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(rows) + "\n")
    page.locator("#upload_model").fill("alpha")
    page.locator("#upload_file").set_input_files(str(bad))
    page.get_by_role("button", name=words["upload"], exact=True).click()
    upload = AnswerUpload.objects.get()
    article = page.locator(f"#upload-{upload.pk}")
    expect(article.locator('[data-field="status_label"]')).to_have_text(words["queued"])
    expect(article.get_by_text(words["discard"])).to_be_hidden()  # at work: nothing to discard yet
    assert upload_execute(upload_id=upload.pk) == "failed"
    expect(article.locator('[data-field="status_label"]')).to_have_text(words["refused"])
    # The page learns it can be discarded as it follows the upload, without a reload.
    discard(page, article, words)
    expect(page.locator(f"#upload-{upload.pk}")).to_have_count(0)
    assert not AnswerUpload.objects.exists()
    assert AuditEvent.objects.get(action="upload_discarded").details["before"]["model"] == "alpha"
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
