"""The questionnaire as a participant meets it: limits shown and never enforced by cutting,
errors summarised and focused, removal confirmed, a readable grid, a friendly refused form."""

import html
import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from curation.models import Case
from tests.curation.study_helpers import CONVERSATION, Participant, case_data, participant, small_study  # noqa: F401
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def textarea(page: str, name: str) -> str:
    match = re.search(rf'<textarea name="{name}"([^>]*)>(.*?)</textarea>', page, re.S)
    return match.group(1), html.unescape(match.group(2))


def test_the_limit_is_shown_and_the_browser_is_never_told_to_cut(participant):
    participant.consent()
    page = participant.client.get(participant.url("cases")).text
    attributes, _text = textarea(page, "conversation")
    # maxlength made the browser cut a long paste without a word; the counter reads data-max-length.
    assert "maxlength" not in attributes and 'data-max-length="20000"' in attributes
    assert "maxlength" not in page
    assert "Several turns are welcome, up to 20,000 characters." in page


def test_an_over_long_paste_is_refused_naming_the_field_and_comes_back_whole(participant):
    participant.consent()
    pasted = "Question: what happened?\nAnswer: " + "a" * 25_000 + "\nThe end of the answer."
    response = participant.client.post(participant.url("cases"), case_data(conversation=pasted))
    assert response.status_code == 200
    assert response.context["form"].errors["conversation"] == [
        f"“Your question and the assistant's answer” has {len(pasted):,} characters, more than the 20,000 that "
        f"fit. Please shorten it by {len(pasted) - 20_000:,} characters; everything you typed is still here."
    ]
    assert textarea(response.text, "conversation")[1] == "\n" + pasted  # Django keeps a leading newline
    assert Case.objects.count() == 0


def test_a_long_chinese_paste_gets_the_message_not_the_too_large_page(participant):
    """30,000 Chinese characters are 270 kB as a browser sends them: over the old 256 KiB cap."""
    participant.consent()
    pasted = "问题：" + "长" * 30_000 + "\n回答：好"
    response = participant.client.post(participant.url("cases"), case_data(conversation=pasted))
    assert response.status_code == 200
    assert "more than the 20,000 that fit" in response.text
    assert textarea(response.text, "conversation")[1] == "\n" + pasted


def test_line_breaks_count_once_as_the_counter_counts_them(participant):
    participant.consent()
    lines = ["Question: q", "Answer: " + "b" * 19_000] + ["d"] * 400
    sent = "\r\n".join(lines)
    assert len(sent) > 20_000 >= len("\n".join(lines))
    assert participant.client.post(participant.url("cases"), case_data(conversation=sent)).status_code == 302
    assert Case.objects.get().conversation == "\n".join(lines)


def test_a_language_switch_keeps_an_over_long_paste_whole(participant):
    participant.consent()
    pasted = "Question: q\nAnswer: " + "a" * 21_000
    participant.client.post(participant.url("cases"), {**case_data(conversation=pasted), "_language": "zh-hans"})
    page = participant.client.get(participant.url("cases")).text
    assert textarea(page, "conversation")[1] == "\n" + pasted


def test_a_failed_save_focuses_the_first_error_and_sums_up_every_error_at_the_top(participant):
    participant.consent()
    response = participant.client.post(
        participant.url("cases"), case_data(service="", conversation="no labels here", intent="other")
    )
    page = response.text
    summary = page[page.index('data-testid="error-summary"') : page.index("</ul>", page.index("error-summary"))]
    assert re.findall(r'<a href="#([\w-]+)">', summary) == ["id_service", "id_conversation", "id_intent_other"]
    assert "There are problems with 3 answers" in summary
    assert "Please mark the turns" in summary
    # The summary comes before the form; the first wrong answer, and only it, has the focus.
    assert page.index("error-summary") < page.index('name="service"')
    assert page.count("autofocus") == 1
    assert re.search(r'<select name="service"[^>]*autofocus', page)


def test_on_the_usage_page_a_group_of_radios_is_reached_through_its_first_input(participant):
    participant.consent()
    participant.to_review()
    response = participant.client.post(participant.url("usage"), {"sat_factual_qa": "3"})
    summary = response.text[response.text.index('data-testid="error-summary"') :]
    anchors = re.findall(r'<a href="#([\w-]+)">', summary)
    assert anchors[:3] == ["id_frequency_0", "id_sat_solve_professional_problem_0", "id_sat_text_assistant_0"]
    for anchor in anchors:
        assert f'id="{anchor}"' in response.text
    assert all('name="frequency"' in tag for tag in re.findall(r"<input[^>]*autofocus[^>]*>", response.text))


def test_the_satisfaction_grid_is_a_table_with_column_headers(participant):
    participant.consent()
    participant.to_review()
    page = participant.client.get(participant.url("usage")).text
    grid = page[page.index('<table class="rating-grid"') : page.index("</table>")]
    headers = re.findall(r'<th scope="col">([^<]*)</th>', grid)
    assert headers == [
        "Kind of use", "Very dissatisfied", "Dissatisfied", "Neutral", "Satisfied", "Very satisfied", "Not used",
    ]  # fmt: skip
    rows = re.findall(r'<th scope="row"><span id="(id_sat_\w+)_label">', grid)
    assert len(rows) == 7 and "id_sat_attention" in rows
    # Each radio is named by its column and described by its row.
    assert re.search(
        r'<input type="radio" name="sat_factual_qa" value="4"[^>]*aria-describedby="id_sat_factual_qa_label"', grid
    )
    assert '<span class="rating-label">Satisfied</span>' in grid


def test_remove_asks_first_and_works_without_javascript(participant):
    participant.consent()
    participant.add_cases(2)
    client = participant.client
    cases = client.get(participant.url("cases")).text
    assert 'data-confirm="Remove case 1? What you entered for it will be deleted."' in cases
    # The button without JavaScript: no removal, a page that asks.
    response = client.post(participant.url("case-remove", 1))
    assert response["Location"] == participant.url("case-remove", 1)
    page = client.get(participant.url("case-remove", 1)).text
    assert "Remove case 1?" in page and 'name="confirm" value="yes"' in page and "No, keep it" in page
    assert Case.objects.count() == 2
    response = client.post(participant.url("case-remove", 1), {"confirm": "yes"})
    assert response["Location"] == participant.url("cases")
    assert Case.objects.count() == 1
    assert client.get(participant.url("case-remove", 5)).status_code == 404


@pytest.mark.parametrize(
    "language, words",
    [
        ("en", ["This form could not be sent", "Open the page again", "security code"]),
        ("zh-hans", ["无法提交此表单", "重新打开页面", "安全码"]),
    ],
)
def test_a_form_with_a_stale_token_gets_a_page_that_says_what_to_do(small_study, language, words):
    client = Client(enforce_csrf_checks=True)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    start = reverse("curation:study-start", args=[small_study.slug])
    client.get(start)  # the page sets the token's cookie
    response = client.post(
        start,
        {"agree": "on", "csrfmiddlewaretoken": "stale" * 8},
        headers={"referer": f"http://testserver{start}"},
    )
    assert response.status_code == 403
    page = response.text
    assert all(word in page for word in words), page
    assert f'<html lang="{language}">' in page
    assert f'href="http://testserver{start}"' in page
    assert "CSRF" not in page and "DEBUG" not in page
    assert small_study.submissions.count() == 0


def test_without_the_cookie_the_page_asks_to_allow_cookies(small_study):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("curation:study-start", args=[small_study.slug]), {"agree": "on"})
    assert response.status_code == 403
    assert "please allow cookies for this site" in response.text
    # Rendering the page set a fresh token: reloading the form works again.
    assert settings.CSRF_COOKIE_NAME in response.cookies


def test_chinese_participants_see_chinese_service_names_and_the_same_value_is_stored(client, small_study):
    small_study.services = ["ChatGPT", "ERNIE Bot", "Qwen", "Spark", "ChatGLM", "Kimi/Moonshot", "Doubao", "DeepSeek"]
    small_study.save()
    person = Participant(client, small_study)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    person.consent()
    page = client.get(person.url("cases")).text
    options = re.findall(r'<option value="([^"]+)">([^<]+)</option>', page)
    assert options[:8] == [
        ("ChatGPT", "ChatGPT"), ("ERNIE Bot", "文心一言"), ("Qwen", "通义千问"), ("Spark", "讯飞星火"),
        ("ChatGLM", "智谱清言"), ("Kimi/Moonshot", "Kimi"), ("Doubao", "豆包"), ("DeepSeek", "DeepSeek"),
    ]  # fmt: skip
    person.add_cases(1, service="ERNIE Bot")
    assert Case.objects.get().service == "ERNIE Bot"
    assert "<dd>文心一言</dd>" in client.get(person.url("cases")).text
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert "<dd>ERNIE Bot</dd>" in client.get(person.url("cases")).text


def test_the_researcher_is_warned_when_the_chinese_consent_is_empty(client_as, researcher):
    study = StudyFactory(slug="no-zh", consent_en="Please read this.", consent_zh="", title_zh="标题")
    client = client_as(researcher)
    for name in ("curation:study-detail", "curation:study-edit"):
        page = client.get(reverse(name, args=[study.slug])).text
        assert "The Chinese consent notice is empty" in page, name
    study.consent_zh = "请阅读。"
    study.save()
    for name in ("curation:study-detail", "curation:study-edit"):
        assert 'data-testid="chinese-gaps"' not in client.get(reverse(name, args=[study.slug])).text
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    study.consent_zh = ""
    study.save()
    assert "中文知情同意说明为空" in client.get(reverse("curation:study-detail", args=[study.slug])).text


def test_the_study_form_reads_in_chinese(client_as, researcher):
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("curation:study-new")).text
    for label in ("知情同意说明（中文）：", "每位参与者最少报告的案例数：", "Prolific 筛除码：", "接受新参与者："):
        assert label in page
    assert CONVERSATION  # the helpers' conversation stays English data
