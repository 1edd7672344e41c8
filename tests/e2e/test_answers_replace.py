"""A researcher replaces a model's wrong answers in the browser, in English and Chinese, on a
desktop and a phone: the page says what a replace does before anything changes, a file with a bad
line changes nothing, the replace makes version 2 while a run made before keeps version 1, and a
delete asks first."""

import pytest
from playwright.sync_api import expect

from core.models import AuditEvent
from judging.models import Answer, AnswerSet, CandidateModel
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {
        "replace": "Replace",
        "question": "The file becomes version 2 of alpha's answers, in place of version 1 (3 answers).",
        "confirm": "Replace the answers",
        "replaced": "Replaced the answers of alpha with 3 new ones",
        "kept": "alpha (version 1)",
        "delete": "Delete",
        "asked": "Delete the answers of alpha on e2e-v (version 2, 3 answers)?",
        "deleted": "Deleted the answers of alpha",
        "confirm_delete": "Delete the answers",
    },
    "zh-hans": {
        "replace": "替换",
        "question": "该文件将成为 alpha 回答的第 2 版，取代第 1 版（3 个回答）。",
        "confirm": "替换这些回答",
        "replaced": "已用 3 个新回答替换 alpha 的回答",
        "kept": "alpha （版本 1）",
        "delete": "删除",
        "asked": "删除 alpha 在 e2e-v 上的回答（版本 2，3 个回答）？",
        "deleted": "已删除 alpha 的回答",
        "confirm_delete": "删除这些回答",
    },
}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_answers_are_replaced_after_a_confirmation_and_an_earlier_run_keeps_its_own(
    signed_in_page, live_server, tmp_path, language, viewport
):
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    dataset = simulated.build_dataset("e2e-v", {"alpha": [100] * 3, "beta": [120] * 3})
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-e2e",
            candidates=tuple(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
            seed=1,
        )
    )
    old_texts = sorted(Answer.objects.filter(model__name="alpha").values_list("text", flat=True))
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/datasets/e2e-v/answers/")

    row = page.locator("tr[data-model=alpha]")
    row.get_by_role("link", name=words["replace"], exact=True).click()
    expect(page.get_by_test_id("confirm-question")).to_contain_text(words["question"])
    assert AnswerSet.objects.filter(model__name="alpha").count() == 1

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q000", "response": "new 0"}\n{"question_id": "q999", "response": "?"}\n')
    page.locator("#upload_file").set_input_files(str(bad))
    page.get_by_role("button", name=words["confirm"], exact=True).click()
    expect(page.locator("#replace-form")).to_contain_text("line 2: no item of 'e2e-v' matches question_id q999.")
    assert sorted(Answer.objects.filter(model__name="alpha").values_list("text", flat=True)) == old_texts

    good = tmp_path / "good.jsonl"
    good.write_text("".join(f'{{"question_id": "q{i:03d}", "response": "new {i}"}}\n' for i in range(3)))
    page.locator("#upload_file").set_input_files(str(good))
    page.get_by_role("button", name=words["confirm"], exact=True).click()
    expect(page.get_by_role("status").first).to_contain_text(words["replaced"])
    expect(page.locator("tr[data-model=alpha] td").nth(2)).to_have_text("2")
    assert sorted(Answer.objects.filter(model__name="alpha").values_list("text", flat=True)) == [
        "new 0",
        "new 1",
        "new 2",
    ]
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

    page.goto(f"{live_server.url}/runs/{run.pk}/")
    expect(page.locator("#manifest-answers")).to_contain_text(words["kept"])

    page.goto(f"{live_server.url}/datasets/e2e-v/answers/")
    page.locator("tr[data-model=alpha]").get_by_role("button", name=words["delete"], exact=True).click()
    expect(page.get_by_test_id("confirm-question")).to_contain_text(words["asked"])
    assert Answer.objects.filter(model__name="alpha").count() == 3
    page.get_by_role("button", name=words["confirm_delete"], exact=True).click()
    expect(page.get_by_role("status").first).to_contain_text(words["deleted"])
    expect(page.locator("tr[data-model=alpha]")).to_have_count(0)
    assert not Answer.objects.filter(model__name="alpha").exists()
    assert list(AuditEvent.objects.order_by("pk").values_list("action", flat=True)).count("answers_replaced") == 1
    assert AuditEvent.objects.filter(action="answers_deleted").count() == 1
