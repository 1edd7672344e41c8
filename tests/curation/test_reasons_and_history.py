"""Exclusion reasons and history entries are stored in English and as codes, and read in the
reader's language."""

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from curation import reasons
from curation.models import ReviewEvent
from curation.reasons import exclusion_reason_text
from curation.review.history import history_rows
from tests.curation.study_helpers import participant, small_study  # noqa: F401
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "stored, chinese",
    [
        (reasons.ATTENTION_FAILED.text(chosen=5, asked=2), "未通过注意力检查：题目要求选择 2，实际选择了 5。"),
        (reasons.ANOTHER_SUBMISSION_KEPT.text(kept=12), "保留了同一 Prolific ID 下的另一份提交（#12）。"),
        (
            reasons.DIFFICULTY_FILTERED.text(filter=3, mean="9.10", percent=10),
            "难度筛选 3：平均分 9.10，位于最高的 10%",
        ),
        (reasons.WITHDRAWN.text(), "参与者已撤回"),
        ("Off topic: asks about a film.", "Off topic: asks about a film."),  # a reviewer's own words
    ],
)
def test_a_stored_reason_reads_in_the_readers_language(stored, chinese):
    with translation.override("zh-hans"):
        assert exclusion_reason_text(stored) == chinese
    with translation.override("en"):
        assert exclusion_reason_text(stored) == stored


def test_the_stored_texts_stay_as_the_exports_know_them():
    assert reasons.ATTENTION_FAILED.text(chosen=5, asked=2) == (
        "Failed the attention check: chose 5 where the instruction asked for 2."
    )
    assert reasons.DIFFICULTY_FILTERED.text(filter=3, mean="9.10", percent=10) == (
        "difficulty filter 3: mean 9.10 in the top 10%"
    )


def test_a_failed_attention_check_reads_in_chinese_on_the_study_page(participant, client_as, researcher):
    participant.consent()
    participant.to_review(attention="5")
    participant.submit()
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("curation:study-detail", args=[participant.study.slug])).text
    assert "未通过注意力检查：题目要求选择 2，实际选择了 5。" in page
    assert "Failed the attention check" not in page


def test_history_names_fields_and_values_in_chinese(client_as, researcher):
    item = ItemFactory(dataset=DatasetFactory(name="hist"), excluded=True, exclusion_reason=reasons.WITHDRAWN.text())
    ReviewEvent.objects.create(
        action=ReviewEvent.Action.EXCLUDED,
        item=item,
        before={"excluded": False, "language": "en", "review_status": "pending"},
        after={"excluded": True, "exclusion_reason": reasons.WITHDRAWN.text(), "duplicate_kind": "near"},
        tags=["coherence", "factual_illusion"],
    )
    with translation.override("zh-hans"):
        [row] = history_rows(list(ReviewEvent.objects.filter(item=item)))
        assert row["changes"] == [
            ("重复类型", "", "近似"),
            ("已排除", "否", "是"),
            ("排除原因", "", "参与者已撤回"),
            ("语言", "英语", ""),
            ("审核状态", "待审核", ""),
        ]
        assert row["tags"] == "连贯性、事实幻觉"
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("curation:review-item", args=[item.pk])).text
    assert "<b>排除原因</b>：" in page and "exclusion_reason" not in page
    assert "已排除：参与者已撤回" in page
