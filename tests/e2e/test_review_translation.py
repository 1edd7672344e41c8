"""Translation calibration and reference review in a real browser: side by side, tags, keys."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from curation.datasets.llm_results import reference_draft_store, translation_store
from curation.models import CurationJob, Item, ReferenceDraft, ReviewEvent, Translation
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_translation_revert_with_a_tag_then_reference_correction(page, live_server, log_in, blocked_requests):
    Group.objects.get_or_create(name="reviewer")
    UserFactory(username="rev", roles=["reviewer"])
    dataset = DatasetFactory(name="cae-work")
    item = ItemFactory(dataset=dataset, external_id="t1", question="Name a famous US landmark", reference="")
    job = CurationJob.objects.create(kind="translation", dataset=dataset, model="m", total=1)
    translation_store(
        translation=Translation.objects.create(
            job=job,
            item=item,
            source_text=item.question,
            translation="说出一个美国著名地标",
            localised="说出一个中国著名地标",
        )
    )
    zh_item = ItemFactory(dataset=dataset, external_id="r1", question="长城有多长？", reference="", language="zh")
    ref_job = CurationJob.objects.create(kind="reference", dataset=dataset, model="strong-m", total=1)
    reference_draft_store(
        draft=ReferenceDraft.objects.create(job=ref_job, item=zh_item, language="zh"), text="<b>约</b>两万千米"
    )

    log_in("rev", "pw-for-tests")
    page.goto(f"{live_server.url}/review/")
    page.locator('tr[data-queue="translation"]').get_by_role("button", name="Take next").click()
    expect(page.get_by_test_id("translation")).to_have_text("说出一个美国著名地标")
    expect(page.get_by_test_id("localised")).to_have_text("说出一个中国著名地标")
    page.get_by_label("Excessive localisation").check()
    page.wait_for_selector("html[data-shortcuts=on]", state="attached")
    page.locator("h1").click()
    page.keyboard.press("v")
    expect(page).to_have_url(f"{live_server.url}/review/")
    item.refresh_from_db()
    assert (item.question, item.language) == ("说出一个美国著名地标", "zh")
    assert ReviewEvent.objects.get(item=item, action="reverted").tags == ["excessive_localisation"]

    page.locator('tr[data-queue="reference"]').get_by_role("button", name="Take next").click()
    # Model output is shown as text, never as markup.
    expect(page.get_by_test_id("draft")).to_have_text("<b>约</b>两万千米")
    page.wait_for_selector("html[data-shortcuts=on]", state="attached")
    page.get_by_label("Corrected reference").fill("约两万一千千米（2012 年国家文物局数据）。")
    # A typed correction: Ctrl+Enter saves it, never the draft.
    expect(page.get_by_role("button", name="Save the correction")).to_have_class("will-press")
    page.get_by_label("Corrected reference").press("Control+Enter")
    expect(page).to_have_url(f"{live_server.url}/review/")
    zh_item.refresh_from_db()
    assert zh_item.reference == "约两万一千千米（2012 年国家文物局数据）。"
    # The item page shows the whole history: drafted by the system, corrected by the reviewer.
    page.goto(f"{live_server.url}/review/items/{zh_item.pk}/")
    expect(page.locator("table.history")).to_contain_text("Reference drafted")
    expect(page.locator("table.history")).to_contain_text("Reference corrected")
    assert Item.objects.filter(excluded=True).count() == 0
    assert blocked_requests == []
