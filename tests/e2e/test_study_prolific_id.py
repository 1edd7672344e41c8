"""The Prolific ID flow in two browsers: the ID opens nothing in a second browser, which may start
a submission of its own; the private link, copied from the page, opens the answers anywhere; the
researcher sees the shared ID flagged."""

import pytest
from django.conf import settings
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Submission
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

PID = "e2e-shared-pid"
SECRET = "Question: the name of my doctor is Dr Example\nAnswer: Noted."


@pytest.fixture
def demo_study(db):
    call_command("loaddata", str(settings.BASE_DIR / "fixtures" / "demo.json"), verbosity=0)


def add_case(page):
    page.get_by_label("Which AI assistant (LLM service) did you ask?").select_option("ChatGPT")
    page.get_by_label("Your question and the assistant's answer").fill(SECRET)
    page.get_by_label("What did you want to achieve?").select_option("factual_qa")
    page.get_by_role("button", name="Save this case").click()


def test_a_second_browser_with_the_same_prolific_id_sees_nothing_and_may_start_its_own(
    browser, page, live_server, demo_study, log_in
):
    link = f"{live_server.url}/study/demo/?PROLIFIC_PID={PID}&STUDY_ID=st&SESSION_ID=se&lang=en"
    page.goto(link)
    page.get_by_label("I have read the notice above and agree to take part.").check()
    page.get_by_role("button", name="Start").click()
    add_case(page)
    expect(page.locator("#case-count")).to_have_text("You have reported 1 case.")
    page.get_by_text("Continue later on this or another device").click()
    private_link = page.get_by_label("Your private link to continue").input_value()
    assert "/study/demo/resume/?token=" in private_link and PID not in private_link

    other = browser.new_context()
    try:
        second = other.new_page()
        second.goto(link)
        expect(second.get_by_role("heading", name="This study is already in progress elsewhere")).to_be_visible()
        expect(second.get_by_text("Dr Example")).to_have_count(0)
        second.goto(f"{live_server.url}/study/demo/cases/")
        expect(second).to_have_url(f"{live_server.url}/study/demo/")
        second.goto(link)
        second.get_by_label("I have read the notice above and agree to take part.").check()
        second.get_by_role("button", name="Start again here").click()
        expect(second.locator("#case-count")).to_have_text("You have reported 0 cases.")

        # The owner's private link opens their answers in the second browser (say, their phone),
        # once they confirm: this browser already holds a submission of its own.
        second.goto(private_link)
        expect(second.get_by_role("heading", name="Continue a questionnaire?")).to_be_visible()
        second.get_by_role("button", name="Yes, continue this questionnaire here").click()
        expect(second.locator("#case-count")).to_have_text("You have reported 1 case.")
        expect(second.get_by_text("the name of my doctor")).to_be_visible()
    finally:
        other.close()

    # The first browser still holds its answers.
    page.reload()
    expect(page.locator("#case-count")).to_have_text("You have reported 1 case.")
    assert Submission.objects.filter(prolific_pid=PID).count() == 2

    researcher = UserFactory(username="researcher-e2e", roles=["researcher"])
    assert researcher.memberships.get().role_names() == ["researcher"]
    page.context.clear_cookies()
    log_in("researcher-e2e", "pw-for-tests")
    page.goto(f"{live_server.url}/studies/demo/")
    shared = page.get_by_test_id("shared-prolific-ids")
    expect(shared).to_contain_text(PID)
    first_id = Submission.objects.filter(prolific_pid=PID).order_by("pk").first().pk
    shared.get_by_role("button", name=f"Keep #{first_id}").click()
    expect(page.get_by_text(f"Submission #{first_id} kept; the others are excluded.")).to_be_visible()
    expect(page.get_by_test_id("shared-prolific-ids")).to_have_count(0)
