"""A study's participant link is unique across the server: a slug another team holds is answered
with a free one put in the field, in the same words as a slug of one's own workspace, never saying
whose it is; saving again takes it. In English and Chinese, on a desktop and a phone."""

import re

import pytest
from playwright.sync_api import expect

from core.models import Workspace
from curation.models import Study
from tests.factories import StudyFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SAVE_STUDY = {"en": "Save study", "zh-hans": "保存研究"}
TAKEN = {"en": "is taken", "zh-hans": "已被占用"}
FREE = re.compile(r"pilot-[a-z2-9]{6}")


def _new_study(page, live_server, language, *, slug: str, title: str) -> str:
    """Fill the new-study form with `slug` and save it; the slug field's error as shown."""
    page.goto(f"{live_server.url}/studies/new/")
    page.locator("#id_slug").fill(slug)
    page.locator("#id_title_en").fill(title)
    page.locator("#id_completion_code").fill("C1")
    page.locator("#id_screenout_code").fill("S1")
    page.get_by_role("button", name=SAVE_STUDY[language]).click()
    error = page.locator("#id_slug").locator("xpath=ancestor::*[contains(@class, 'has-error')][1]")
    expect(error).to_contain_text(TAKEN[language])
    return error.inner_text()


@pytest.mark.parametrize(
    ("language", "viewport"),
    [("en", DESKTOP), ("en", PHONE), ("zh-hans", DESKTOP), ("zh-hans", PHONE)],
    ids=["en-desktop", "en-phone", "zh-desktop", "zh-phone"],
)
def test_a_taken_link_is_answered_with_a_free_one_whoever_holds_it(signed_in_page, live_server, language, viewport):
    other = Workspace.objects.create(slug="lab-other", name="Other team")
    StudyFactory(slug="pilot", title_en="Their study", workspace=other)
    mine = Workspace.objects.create(slug="lab-mine", name="My team")
    UserFactory(username="res", roles=["researcher"], roles__workspace=mine)
    page = signed_in_page("res", language, viewport)

    theirs = _new_study(page, live_server, language, slug="pilot", title="Pilot")
    proposal = page.locator("#id_slug").input_value()
    assert FREE.fullmatch(proposal) and proposal in theirs
    assert "Their study" not in page.content() and "lab-other" not in page.content()
    assert "Other team" not in page.content()
    # Saving again takes the proposal: the study is ours, its participant link the free one.
    page.get_by_role("button", name=SAVE_STUDY[language]).click()
    expect(page).to_have_url(f"{live_server.url}/studies/{proposal}/")
    assert Study.objects.get(slug=proposal).workspace == mine

    # Our own taken slug is answered in the very same words.
    own = _new_study(page, live_server, language, slug=proposal, title="Pilot two")
    again = page.locator("#id_slug").input_value()
    assert re.fullmatch(re.escape(proposal) + r"-[a-z2-9]{6}", again)
    said_to_us = own.replace(again, "<free>").replace(proposal, "<slug>")
    assert said_to_us == theirs.replace(proposal, "<free>").replace("'pilot'", "'<slug>'")
    assert Study.objects.filter(workspace=mine).count() == 1
