"""Reviewing is safe from the keyboard: Ctrl+Enter presses the button that matches what was typed.

Every queue in English and in Chinese: a reason rejects (or excludes), a changed text saves the
change, nothing typed accepts, and a case with possible personal information is never accepted
from the keyboard. The button Ctrl+Enter will press is outlined (class will-press).
"""

import re

import pytest
from playwright.sync_api import expect

from curation.datasets.llm_results import reference_draft_store, translation_store
from curation.models import Case, CaseCuration, CurationJob, Item, ReferenceDraft, ReviewEvent, Translation
from curation.review.services import case_process
from tests.factories import CaseFactory, DatasetFactory, ItemFactory, StudyFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

WILL_PRESS = re.compile(r"\bwill-press\b")
LANGUAGES = ["en", "zh-hans"]
TEXT = {
    "en": {
        "saved": "Saved.",
        "empty": "This queue is empty for now.",
        "will_reject": "Ctrl+Enter: Reject",
        "will_accept": "Ctrl+Enter: Accept",
        "will_edit": "Ctrl+Enter: Save edit and accept",
        "both": "Ctrl+Enter does nothing now: what you typed points to two different decisions.",
        "pii": "Ctrl+Enter does not accept a case with possible personal information",
        "will_correct": "Ctrl+Enter: Save the correction",
        "will_accept_draft": "Ctrl+Enter: Accept the draft",
        "will_exclude": "Ctrl+Enter: Exclude",
        "will_keep": "Ctrl+Enter: Keep the localised version",
        "reject": "Reject",
    },
    "zh-hans": {
        "saved": "已保存。",
        "empty": "此队列暂时为空。",
        "will_reject": "Ctrl+Enter：拒绝",
        "will_accept": "Ctrl+Enter：接受",
        "will_edit": "Ctrl+Enter：保存编辑并接受",
        "both": "Ctrl+Enter 现在不会执行任何操作：输入的内容对应两种不同的决定。",
        "pii": "含有可能的个人信息的案例不能用 Ctrl+Enter 接受",
        "will_correct": "Ctrl+Enter：保存修正",
        "will_accept_draft": "Ctrl+Enter：接受草稿",
        "will_exclude": "Ctrl+Enter：排除",
        "will_keep": "Ctrl+Enter：保留本地化版本",
        "reject": "拒绝",
    },
}


def quality_cases(conversations):
    submission = SubmissionFactory(study=StudyFactory(slug="kb"))
    cases = [
        CaseFactory(submission=submission, position=n + 1, conversation=text) for n, text in enumerate(conversations)
    ]
    for case in cases:
        case_process(case=case)
    return cases


def open_queue(page, live_server, log_in, language, queue):
    UserFactory(username="rev", roles=["reviewer"])
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("rev", "pw-for-tests")
    page.goto(f"{live_server.url}/review/")
    page.locator(f'tr[data-queue="{queue}"] button').click()
    expect(page.locator("html[data-shortcuts=on]")).to_be_attached()


def next_case(page, expected_text):
    expect(page.locator(".conversation")).to_contain_text(expected_text)
    expect(page.locator("html[data-shortcuts=on]")).to_be_attached()


@pytest.mark.parametrize("language", LANGUAGES)
def test_quality_ctrl_enter_follows_what_was_typed(page, live_server, log_in, blocked_requests, language):
    text = TEXT[language]
    first, second, third, fourth, fifth = quality_cases(
        [
            "Q: What is DNS exactly?\nA: x",
            "Q: What is TCP exactly?\nA: y",
            "Q: What is UDP exactly?\nA: z",
            "Q: What is ICMP exactly?\nA: w",
            "Q: What is ARP exactly?\nA: v",
        ]
    )
    open_queue(page, live_server, log_in, language, "quality")
    reason, question = page.locator("#id_reason"), page.locator("#id_question")
    hint = page.locator("[data-ctrl-enter-hint]")
    accept, edit, reject = (page.locator(f'button[name="decision"][value="{v}"]') for v in ("accept", "edit", "reject"))

    # 1. A reason, then Ctrl+Enter: rejected with that reason (it used to accept the case).
    next_case(page, "What is DNS exactly?")
    expect(accept).to_have_class(WILL_PRESS)
    expect(hint).to_have_text(text["will_accept"])
    reason.fill("Off topic for the study")
    expect(reject).to_have_class(WILL_PRESS)
    expect(accept).not_to_have_class(WILL_PRESS)
    expect(hint).to_have_text(text["will_reject"])
    reason.press("Control+Enter")

    # 2. An edited question, then Ctrl+Enter: the edit is saved.
    next_case(page, "What is TCP exactly?")
    expect(page.get_by_role("status")).to_contain_text(text["saved"])
    question.fill("What does TCP guarantee?")
    expect(edit).to_have_class(WILL_PRESS)
    expect(hint).to_have_text(text["will_edit"])
    # A reason as well points to two decisions: Ctrl+Enter presses nothing.
    reason.fill("Unclear")
    expect(hint).to_contain_text(text["both"])
    for button in (accept, edit, reject):
        expect(button).not_to_have_class(WILL_PRESS)
    reason.press("Control+Enter")
    expect(page.locator(".conversation")).to_contain_text("What is TCP exactly?")
    reason.fill("")
    question.press("Control+Enter")

    # 3. Enter in the one-line reason field rejects too (the form's first button is Accept).
    next_case(page, "What is UDP exactly?")
    reason.fill("Duplicate of an earlier case")
    reason.press("Enter")

    # 4. Nothing typed: Ctrl+Enter accepts.
    next_case(page, "What is ICMP exactly?")
    page.locator("h1").click()
    page.keyboard.press("Control+Enter")

    # 5. A question changed and changed back is nothing typed.
    next_case(page, "What is ARP exactly?")
    question.fill("Something else")
    question.fill("What is ARP exactly?")
    expect(accept).to_have_class(WILL_PRESS)
    question.press("Control+Enter")
    expect(page.get_by_role("status")).to_contain_text(text["empty"])

    statuses = dict(Case.objects.values_list("pk", "review_status"))
    assert statuses == {
        first.pk: "rejected",
        second.pk: "accepted",
        third.pk: "rejected",
        fourth.pk: "accepted",
        fifth.pk: "accepted",
    }
    assert ReviewEvent.objects.get(case=first, action="rejected").reason == "Off topic for the study"
    assert ReviewEvent.objects.get(case=second, action="edited").reason == ""
    assert CaseCuration.objects.get(case=second).question == "What does TCP guarantee?"
    assert ReviewEvent.objects.get(case=third, action="rejected").reason == "Duplicate of an earlier case"
    assert [e.action for e in ReviewEvent.objects.filter(case=fifth).order_by("id")] == ["processed", "accepted"]
    assert blocked_requests == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_case_with_personal_information_is_never_accepted_from_the_keyboard(
    page, live_server, log_in, blocked_requests, language
):
    text = TEXT[language]
    [case] = quality_cases(["Q: Write to zhang.san@example.com about my leave\nA: Dear ..."])
    open_queue(page, live_server, log_in, language, "quality")
    next_case(page, "zhang.san@example.com")
    accept = page.locator('button[name="decision"][value="accept"]')
    expect(accept.locator("kbd")).to_have_count(0)
    expect(page.locator("[data-ctrl-enter-hint]")).to_contain_text(text["pii"])
    page.locator("h1").click()
    page.keyboard.press("Control+Enter")
    page.keyboard.press("a")
    page.keyboard.press("e")
    page.locator("#id_question").fill("Write to my manager about my leave")
    expect(page.locator("[data-ctrl-enter-hint]")).to_contain_text(text["pii"])
    page.locator("#id_question").press("Control+Enter")
    # Still here, nothing decided.
    expect(page.locator(".conversation")).to_contain_text("zhang.san@example.com")
    assert Case.objects.get(pk=case.pk).review_status == "pending"
    # A reason still rejects from the keyboard.
    page.locator("#id_question").fill(CaseCuration.objects.get(case=case).question)
    page.locator("#id_reason").fill("Contains an e-mail address")
    expect(page.locator('button[name="decision"][value="reject"]')).to_have_class(WILL_PRESS)
    page.locator("#id_reason").press("Control+Enter")
    expect(page.get_by_role("status")).to_contain_text(text["empty"])
    assert Case.objects.get(pk=case.pk).review_status == "rejected"
    assert blocked_requests == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_reference_and_translation_ctrl_enter(page, live_server, log_in, blocked_requests, language):
    text = TEXT[language]
    dataset = DatasetFactory(name="kb-work")
    items = [
        ItemFactory(dataset=dataset, external_id=f"r{n}", question=q, reference="", language="zh")
        for n, q in enumerate(["长城有多长？", "黄河有多长？"])
    ]
    job = CurationJob.objects.create(kind="reference", dataset=dataset, model="strong-m", total=2)
    for item, draft in zip(items, ["约两万千米", "约五千四百六十四千米"]):
        reference_draft_store(draft=ReferenceDraft.objects.create(job=job, item=item, language="zh"), text=draft)
    source = ItemFactory(dataset=dataset, external_id="t1", question="Name a famous US landmark", reference="")
    translation_job = CurationJob.objects.create(kind="translation", dataset=dataset, model="m", total=1)
    translation_store(
        translation=Translation.objects.create(
            job=translation_job,
            item=source,
            source_text=source.question,
            translation="说出一个美国著名地标",
            localised="说出一个中国著名地标",
        )
    )
    open_queue(page, live_server, log_in, language, "reference")
    correction = page.locator("#id_reference")
    hint = page.locator("[data-ctrl-enter-hint]")

    # A typed correction: Ctrl+Enter saves it (it used to accept the draft and drop the correction).
    expect(page.get_by_test_id("draft")).to_have_text("约两万千米")
    expect(hint).to_have_text(text["will_accept_draft"])
    correction.fill("约两万一千千米（2012 年国家文物局数据）。")
    expect(page.locator('button[value="correct"]')).to_have_class(WILL_PRESS)
    expect(hint).to_have_text(text["will_correct"])
    correction.press("Control+Enter")
    # Nothing typed: Ctrl+Enter accepts the draft.
    expect(page.get_by_test_id("draft")).to_have_text("约五千四百六十四千米")
    expect(page.locator("html[data-shortcuts=on]")).to_be_attached()
    correction.press("Control+Enter")
    expect(page.get_by_role("status")).to_contain_text(text["empty"])
    references = dict(Item.objects.filter(external_id__startswith="r").values_list("external_id", "reference"))
    assert references == {"r0": "约两万一千千米（2012 年国家文物局数据）。", "r1": "约五千四百六十四千米"}

    # Translation: a reason means exclude, and is kept as the exclusion reason.
    page.locator('tr[data-queue="translation"] button').click()
    expect(page.get_by_test_id("localised")).to_have_text("说出一个中国著名地标")
    expect(page.locator("html[data-shortcuts=on]")).to_be_attached()
    expect(hint).to_have_text(text["will_keep"])
    page.locator("#id_reason").fill("与中国用户无关")
    expect(page.locator('button[value="exclude"]')).to_have_class(WILL_PRESS)
    expect(hint).to_have_text(text["will_exclude"])
    page.locator("#id_reason").press("Control+Enter")
    expect(page.get_by_role("status")).to_contain_text(text["empty"])
    source.refresh_from_db()
    assert (source.excluded, source.exclusion_reason, source.question) == (
        True,
        "与中国用户无关",
        "Name a famous US landmark",
    )
    assert blocked_requests == []


def test_a_typed_reason_and_ctrl_enter_rejects(page, live_server, log_in, blocked_requests):
    """As reported: a typed rejection reason + Ctrl+Enter accepted the case."""
    [case] = quality_cases(["Q: What is DNS exactly?\nA: x"])
    open_queue(page, live_server, log_in, "en", "quality")
    page.locator("#id_reason").fill("Off topic")
    page.locator("#id_reason").press("Control+Enter")
    expect(page).to_have_url(f"{live_server.url}/review/")
    assert Case.objects.get(pk=case.pk).review_status == "rejected"
    assert blocked_requests == []


def test_a_typed_correction_and_ctrl_enter_saves_it(page, live_server, log_in, blocked_requests):
    """As reported: a typed reference correction + Ctrl+Enter accepted the junk draft instead."""
    dataset = DatasetFactory(name="kb-defects")
    item = ItemFactory(dataset=dataset, external_id="r0", question="长城有多长？", reference="", language="zh")
    job = CurationJob.objects.create(kind="reference", dataset=dataset, model="strong-m", total=1)
    reference_draft_store(draft=ReferenceDraft.objects.create(job=job, item=item, language="zh"), text="junk draft")
    open_queue(page, live_server, log_in, "en", "reference")
    page.locator("#id_reference").fill("约两万一千千米。")
    page.locator("#id_reference").press("Control+Enter")
    expect(page).to_have_url(f"{live_server.url}/review/")
    assert Item.objects.get(pk=item.pk).reference == "约两万一千千米。"
    assert blocked_requests == []
