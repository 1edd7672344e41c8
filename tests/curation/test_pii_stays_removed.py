"""Personal information a reviewer removed stays removed: in the dataset item, its conversation,
every export and API response of cases. The raw text stays on the case for reviewers and
researchers, and leaves only on an explicit, audited request. Accepting with hints left takes a
confirmation. Participants are warned (not stopped) when they paste contact or ID numbers."""

import csv
import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from core.exports import ExportError, export_table
from core.models import AuditEvent
from curation.datasets.services import study_dataset_build
from curation.models import Case, CaseCuration, Item, ReviewEvent, ReviewTask
from curation.pii.hints import pii_hints, quick_personal_info
from curation.review.services import ReviewError, quality_review_decide, review_task_lease
from tests.curation.review_helpers import review_study, submitted_cases  # noqa: F401
from tests.curation.study_helpers import Participant, case_data, small_study  # noqa: F401

pytestmark = pytest.mark.django_db

RAW = ("Question: I am Jane Roe, mail jane.roe@example.org or call +44 7911 123456. How do I appeal a "
       "parking fine?\nAnswer: Write to the council.")  # fmt: skip
REVIEWED_QUESTION = "How do I appeal a parking fine?"
REVIEWED = "Question: How do I appeal a parking fine?\nAnswer: Write to the council."
SECRETS = ("jane.roe@example.org", "7911 123456", "Jane Roe")


def _no_secret(text: str) -> bool:
    return not any(secret in text for secret in SECRETS)


def _export(*args) -> str:
    out = io.StringIO()
    call_command("export", *args, stdout=out)
    return out.getvalue()


def test_what_leaves_review_carries_the_reviewed_text(review_study, reviewer, client, researcher):
    [case] = submitted_cases(review_study, [RAW])
    assert {hint["entity"] for hint in case.curation.pii_hints} >= {"EMAIL_ADDRESS", "PHONE_NUMBER"}
    task = review_task_lease(queue="quality", reviewer=reviewer)
    quality_review_decide(
        task=task, reviewer=reviewer, decision="edit", question=REVIEWED_QUESTION, conversation=REVIEWED
    )
    dataset, added = study_dataset_build(study=review_study, name="rs-working")
    assert added == 1
    item = Item.objects.get()
    assert item.question == REVIEWED_QUESTION and item.metadata["conversation"] == REVIEWED

    for fmt in ("csv", "jsonl"):
        cases = _export("--study", "rs", "--what", "cases", "--format", fmt)
        assert "appeal a parking fine" in cases and _no_secret(cases), fmt
        items = _export("--dataset", "rs-working", "--what", "items", "--format", fmt)
        assert "appeal a parking fine" in items and _no_secret(items), fmt
    client.force_login(researcher)
    api = b"".join(
        client.get(reverse("api-export", args=["cases"]), {"study": "rs", "format": "jsonl"}).streaming_content
    ).decode()
    row = json.loads(api)
    assert (row["question"], row["conversation"]) == (REVIEWED_QUESTION, REVIEWED)
    assert "raw_conversation" not in row and "share_link" not in row

    # The participant's own text is kept on the case, for reviewers and researchers only.
    assert Case.objects.get().conversation == RAW
    case_page = client.get(reverse("curation:review-case", args=[case.pk])).text
    assert "jane.roe@example.org" in case_page


def test_the_raw_text_leaves_only_when_a_researcher_asks_and_that_is_audited(
    review_study, reviewer, client, researcher
):
    submitted_cases(review_study, [RAW])
    quality_review_decide(
        task=review_task_lease(queue="quality", reviewer=reviewer),
        reviewer=reviewer,
        decision="edit",
        question=REVIEWED_QUESTION,
        conversation=REVIEWED,
    )
    client.force_login(researcher)
    url = reverse("api-export", args=["cases"])
    response = client.get(url, {"study": "rs", "format": "csv", "raw": "true"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode().removeprefix("\ufeff"))))
    assert rows[0]["raw_conversation"] == RAW and rows[0]["conversation"] == REVIEWED
    raw_exports = AuditEvent.objects.filter(action="raw_export")
    assert [(event.actor, event.target, event.details) for event in raw_exports] == [
        (researcher, "export:cases", {"study": "rs", "via": "api"})
    ]
    with pytest.raises(ExportError, match="The raw option applies to cases, not to 'items'."):
        export_table("items", raw=True)


def test_accepting_with_hints_left_takes_an_explicit_confirmation(review_study, reviewer):
    submitted_cases(review_study, [RAW])
    task = review_task_lease(queue="quality", reviewer=reviewer)
    # The attack of the issue: the question was redacted, the conversation still names and numbers.
    with pytest.raises(
        ReviewError,
        match=r"^2 highlighted piece\(s\) of possible personal information "
        r"\(e-mail address, phone number\) are still in the question or "
        r"the conversation",
    ):
        quality_review_decide(task=task, reviewer=reviewer, decision="edit", question=REVIEWED_QUESTION)
    with pytest.raises(ReviewError, match="still in the question or the conversation"):
        quality_review_decide(task=task, reviewer=reviewer, decision="accept")
    assert Case.objects.get().review_status == "pending"
    quality_review_decide(task=task, reviewer=reviewer, decision="accept", pii_confirmed=True)
    event = ReviewEvent.objects.get(action="accepted")
    assert event.actor == reviewer and event.after["pii_confirmed"] == ["EMAIL_ADDRESS", "PHONE_NUMBER"]


def test_the_accept_key_alone_does_not_accept_a_case_with_hints_left(client, reviewer, review_study):
    submitted_cases(review_study, [RAW])
    client.force_login(reviewer)
    client.post("/review/take/quality/")
    task = ReviewTask.objects.get()
    page = client.get(f"/review/task/{task.pk}/").text
    assert 'name="pii_confirmed"' in page and 'data-testid="pii-left"' in page
    response = client.post(f"/review/task/{task.pk}/", {"decision": "accept"})  # what the A key sends
    assert response.status_code == 200 and "still in the question or the conversation" in response.text
    assert Case.objects.get().review_status == "pending"
    response = client.post(f"/review/task/{task.pk}/", {"decision": "accept", "pii_confirmed": "1"})
    assert response.status_code == 302 and Case.objects.get().review_status == "accepted"


def test_a_clean_edit_needs_no_confirmation_and_the_processing_keeps_it(client, reviewer, review_study):
    [case] = submitted_cases(review_study, [RAW])
    client.force_login(reviewer)
    client.post("/review/take/quality/")
    task = ReviewTask.objects.get()
    response = client.post(
        f"/review/task/{task.pk}/", {"decision": "edit", "question": REVIEWED_QUESTION, "conversation": REVIEWED}
    )
    assert response.status_code == 302
    from curation.review.services import case_process

    case_process(case=Case.objects.get())  # the steps run again: the reviewer's text stays
    curation = CaseCuration.objects.get()
    assert (curation.question, curation.conversation) == (REVIEWED_QUESTION, REVIEWED)


def test_entity_names_are_translated_on_chinese_pages(client, reviewer, review_study):
    submitted_cases(review_study, [RAW])
    client.force_login(reviewer)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    client.post("/review/take/quality/")
    page = client.get(f"/review/task/{ReviewTask.objects.get().pk}/").text
    assert '<mark class="pii" title="电子邮箱地址">jane.roe@example.org</mark>' in page
    assert "电话号码" in page and "EMAIL_ADDRESS" not in page and "PHONE_NUMBER" not in page


# ---------------------------------------------------------------- hints


@pytest.mark.parametrize(
    "region,text,number",
    [
        ("GB", "ring me tonight: +44 7911 123456", "+44 7911 123456"),
        ("GB", "office: 020 7946 0958", "020 7946 0958"),
        ("US", "call (202) 555-0143", "(202) 555-0143"),
        ("CA", "phone +1 (613) 555-0142", "+1 (613) 555-0142"),
        ("AU", "mobile +61 412 345 678", "+61 412 345 678"),
        ("IN", "whatsapp +91 98765 43210", "+91 98765 43210"),
        ("DE", "Telefon +49 151 23456789", "+49 151 23456789"),
        ("FR", "portable +33 6 12 34 56 78", "+33 6 12 34 56 78"),
        ("JP", "携帯 +81 90-1234-5678", "+81 90-1234-5678"),
        ("CN", "电话13812345678", "13812345678"),
    ],
)
def test_phone_numbers_of_many_countries_are_hinted_whole(region, text, number):
    language = "zh" if region in ("CN", "JP") else "en"
    assert [(hint.entity, hint.text) for hint in pii_hints(text, language)] == [("PHONE_NUMBER", number)], region


@pytest.mark.parametrize(
    "text,expected",
    [
        ("card 4111 1111 1111 1111", [("CREDIT_CARD", "4111 1111 1111 1111")]),
        ("card 4111 1111 1111 1112", []),  # fails the Luhn checksum
        ("IBAN GB82 WEST 1234 5698 7654 32", [("IBAN_CODE", "GB82 WEST 1234 5698 7654 32")]),
        ("IBAN GB82 WEST 1234 5698 7654 33", []),  # fails the mod-97 checksum
        ("DE89 3704 0044 0532 0130 00 please", [("IBAN_CODE", "DE89 3704 0044 0532 0130 00")]),
        ("my server is 192.168.1.20", [("IP_ADDRESS", "192.168.1.20")]),
        ("and 2001:db8::1 too", [("IP_ADDRESS", "2001:db8::1")]),
    ],
)
def test_cards_ibans_and_addresses_with_checksums(text, expected):
    assert [(hint.entity, hint.text) for hint in pii_hints(text, "en")] == expected


@pytest.mark.parametrize(
    "text",
    [
        "df = pd.read_csv('data.csv')\nprint(df.head())",
        "Use pd.read_csv to load it",
        "```\nurl = 'site.io'\n```",
        "x = np.array([1, 2]); self.id = 3",
        "call `requests.get` first",
    ],
)
def test_no_link_hint_inside_code(text):
    assert [hint for hint in pii_hints(text, "en") if hint.entity == "URL"] == []


def test_real_links_are_still_hinted():
    assert [(hint.entity, hint.text) for hint in pii_hints("see example.com (my blog) or https://x.org/me", "en")] == [
        ("URL", "example.com"),
        ("URL", "https://x.org/me"),
    ]


# ---------------------------------------------------------------- participants


@pytest.mark.parametrize(
    "text,kinds",
    [
        ("mail me at a.b@example.co.uk", ["EMAIL_ADDRESS"]),
        ("我的邮箱是ab@x.com谢谢", ["EMAIL_ADDRESS"]),
        ("call +44 7911 123456", ["PHONE_NUMBER"]),
        ("手机13812345678", ["PHONE_NUMBER"]),
        ("身份证11010519491231002X", ["ID_NUMBER"]),
        ("SSN 123-45-6789", ["ID_NUMBER"]),
        ("The Moon is 384,400 km away, in 2023-2024; pi is 3.14159265358979", []),
    ],
)
def test_the_participants_quick_check(text, kinds):
    assert quick_personal_info(text) == kinds


def test_participants_are_warned_in_their_language_and_the_case_is_saved(client, small_study):
    person = Participant(client, small_study)
    person.consent()
    conversation = "Question: my email is jane@example.org, can you write to me?\nAnswer: No."
    response = client.post(person.url("cases"), case_data(conversation=conversation), follow=True)
    assert Case.objects.get().conversation == conversation
    assert (
        "Case 1 seems to contain personal information (e-mail address). Unless you are happy to share it, "
        "please edit the case and remove it; you may also leave it as it is."
    ) in response.text
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    response = client.post(
        person.url("case-edit", 1), case_data(conversation=conversation + " 13812345678"), follow=True
    )
    assert "案例 1 似乎包含个人信息（电子邮箱地址、电话号码）" in response.text
    quiet = client.post(person.url("cases"), case_data(), follow=True)
    assert "案例 2 似乎包含个人信息" not in quiet.text and "案例 2" in quiet.text
