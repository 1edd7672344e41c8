"""Working dataset from a study, difficulty filter, frozen versions and their diff."""

import pytest

from curation.datasets.maths import difficulty_cut, items_diff
from curation.datasets.services import (
    VersionError,
    dataset_freeze,
    datasets_diff,
    study_dataset_build,
)
from curation.models import Dataset, DifficultyScore, Item, ReviewEvent, ReviewQueue
from curation.review.services import ReviewError, quality_review_decide, review_task_lease
from judging.runs.difficulty import difficulty_filter_from_run
from tests.curation.review_helpers import review_study, submitted_cases  # noqa: F401
from tests.factories import (
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    SubmissionFactory,
)

pytestmark = pytest.mark.django_db


def test_difficulty_cut_rounds_half_up_and_breaks_ties_by_key():
    means = {"a": 9.0, "b": 8.0, "c": 8.0, "d": 2.0, "e": 5.0}
    assert difficulty_cut(means, 50) == {"a", "b", "c"}  # 2.5 rounds to 3
    assert difficulty_cut(means, 40) == {"a", "b"}
    assert difficulty_cut(means, 0) == set()
    assert difficulty_cut({f"q{i}": float(i % 10) for i in range(683)}, 50).__len__() == 342
    with pytest.raises(ValueError):
        difficulty_cut(means, 101)


def test_items_diff():
    old = {"a": {"question": "Q1", "reference": "R1"}, "b": {"question": "Q2"}, "c": {"question": "Q3"}}
    new = {"a": {"question": "Q1", "reference": "R1 fixed"}, "c": {"question": "Q3"}, "d": {"question": "Q4"}}
    diff = items_diff(old, new)
    assert (diff.added, diff.removed, diff.unchanged) == (["d"], ["b"], 1)
    assert diff.changed == [("a", {"reference": ("R1", "R1 fixed")})]


def accept_all(reviewer):
    while task := review_task_lease(queue=ReviewQueue.QUALITY, reviewer=reviewer):
        quality_review_decide(task=task, reviewer=reviewer, decision="accept")


def test_study_to_working_dataset_to_frozen_versions(review_study, reviewer):
    cases = submitted_cases(
        review_study,
        ["Q: What is DNS exactly?\nA: x", "Q: what is dns exactly\nA: dup", "问：什么是量子计算？\n答：……"],
        country="China",
    )
    submitted_cases(review_study, ["Q: Is this excluded?\nA: yes"], excluded=True, exclusion_reason="attention")
    accept_all(reviewer)
    dataset, added = study_dataset_build(study=review_study, name="rs-work", created_by=reviewer)
    assert added == 2  # the same participant's duplicate and the excluded submission stay out
    items = {item.external_id: item for item in dataset.items.all()}
    assert set(items) == {f"case-{cases[0].pk}", f"case-{cases[2].pk}"}
    zh = items[f"case-{cases[2].pk}"]
    assert (zh.question, zh.language, zh.country, zh.intent) == ("什么是量子计算？", "zh", "China", "factual_qa")
    assert study_dataset_build(study=review_study, name="rs-work")[1] == 0  # idempotent

    Item.objects.filter(pk=zh.pk).update(reference="量子计算利用量子比特。")
    v1 = dataset_freeze(dataset=dataset, created_by=reviewer, confirm_missing_references=True)
    assert (v1.name, v1.version, v1.frozen_from, v1.previous_version) == ("rs-work@v1", 1, dataset, None)
    assert v1.frozen_at is not None
    assert sorted(v1.items.values_list("external_id", flat=True)) == sorted(items)
    frozen_zh = v1.items.get(external_id=zh.external_id)
    assert frozen_zh.metadata["source"] == "study:rs"
    assert frozen_zh.reference == "量子计算利用量子比特。"

    # Change the working dataset, freeze again, and compare.
    Item.objects.filter(pk=zh.pk).update(reference="量子计算利用叠加与纠缠。")
    Item.objects.filter(pk=items[f"case-{cases[0].pk}"].pk).update(excluded=True, exclusion_reason="test")
    ItemFactory(dataset=dataset, external_id="extra", question="New one", reference="R")
    v2 = dataset_freeze(dataset=dataset, confirm_missing_references=True)
    assert (v2.name, v2.version, v2.previous_version) == ("rs-work@v2", 2, v1)
    diff = datasets_diff(old=v1, new=v2)
    assert diff.added == ["extra"]
    assert diff.removed == [f"case-{cases[0].pk}"]
    assert diff.changed == [(zh.external_id, {"reference": ("量子计算利用量子比特。", "量子计算利用叠加与纠缠。")})]
    # v1 never changed.
    assert v1.items.get(external_id=zh.external_id).reference == "量子计算利用量子比特。"
    assert ReviewEvent.objects.filter(action="frozen").count() == 4


def test_a_frozen_version_refuses_every_change(reviewer):
    working = DatasetFactory(name="w")
    ItemFactory(dataset=working, external_id="a", question="Q", reference="")
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    with pytest.raises(VersionError, match="Dataset w@v1 is a frozen version and cannot change."):
        dataset_freeze(dataset=version, confirm_missing_references=True)
    with pytest.raises(VersionError, match="is a frozen version"):
        from curation.datasets.llm_steps import reference_job_create

        reference_job_create(dataset=version, model="m")
    assert Dataset.objects.count() == 2


def test_items_with_open_reviews_are_not_frozen(reviewer):
    working = DatasetFactory(name="w2")
    ItemFactory(dataset=working, external_id="ready", question="Q1")
    waiting = ItemFactory(dataset=working, external_id="waiting", question="Q2")
    from curation.models import ReviewTask

    ReviewTask.objects.create(queue=ReviewQueue.REFERENCE, item=waiting)
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    assert list(version.items.values_list("external_id", flat=True)) == ["ready"]


def test_nothing_to_freeze_is_an_error():
    working = DatasetFactory(name="empty")
    with pytest.raises(VersionError, match="Nothing to freeze: no accepted item without open reviews."):
        dataset_freeze(dataset=working, confirm_missing_references=True)
    assert Dataset.objects.count() == 1


def test_difficulty_filter_marks_the_easiest_half_of_the_working_items(reviewer):
    working = DatasetFactory(name="ab")
    for index in range(6):
        ItemFactory(dataset=working, external_id=f"q{index}", question=f"Q{index}")
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    run = JudgeRunFactory(dataset=version)
    filters = [CandidateModelFactory(name=f"filter-{n}") for n in range(3)]
    scores = {"q0": [9, 9, 8], "q1": [2, 3, 4], "q2": [7, 7, 7], "q3": [5, 6, None], "q4": [10, 9, 9], "q5": [1, 1, 1]}
    for external_id, values in scores.items():
        item = version.items.get(external_id=external_id)
        for model, value in zip(filters, values, strict=True):
            JudgmentFactory(run=run, item=item, model=model, final_score=value)
    flt = difficulty_filter_from_run(run=run, percent=50, created_by=reviewer)
    assert (flt.dataset, flt.item_count, flt.excluded_count) == (working, 6, 3)
    excluded = sorted(working.items.filter(excluded=True).values_list("external_id", flat=True))
    assert excluded == ["q0", "q2", "q4"]
    means = {
        s.item.external_id: (s.mean_score, s.judgments, s.excluded)
        for s in DifficultyScore.objects.select_related("item")
    }
    assert means["q3"] == (5.5, 2, False)  # the parse failure is left out of the mean
    assert means["q0"] == (pytest.approx(26 / 3), 3, True)
    reason = working.items.get(external_id="q4").exclusion_reason
    assert reason == f"difficulty filter {flt.pk}: mean 9.33 in the top 50%"
    v2 = dataset_freeze(dataset=working, confirm_missing_references=True)
    assert sorted(v2.items.values_list("external_id", flat=True)) == ["q1", "q3", "q5"]
    with pytest.raises(VersionError, match="The percentage must be between 0 and 100."):
        difficulty_filter_from_run(run=run, percent=120)


def test_frozen_items_cannot_be_reviewed(reviewer):
    working = DatasetFactory(name="w3")
    ItemFactory(dataset=working, external_id="a", question="Q", reference="")
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    from curation.models import ReviewTask

    frozen = version.items.get()
    task = ReviewTask.objects.create(queue=ReviewQueue.REFERENCE, item=frozen)
    leased = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    assert leased.pk == task.pk
    from curation.review.services import reference_review_decide

    with pytest.raises(ReviewError, match="frozen dataset version and cannot change"):
        reference_review_decide(task=leased, reviewer=reviewer, decision="correct", reference="new")
    assert SubmissionFactory._meta.model.objects.count() == 0


def test_working_datasets_count_items_and_versions_without_multiplying_them():
    from django.utils import timezone

    from curation.datasets.selectors import working_datasets

    working = DatasetFactory(name="working")
    for n in range(5):
        ItemFactory(dataset=working, excluded=n < 2)
    for number in (1, 2, 3):
        DatasetFactory(name=f"working-v{number}", frozen_from=working, frozen_at=timezone.now())
    DatasetFactory(name="empty")
    counts = {row.name: (row.item_count, row.excluded_count, row.version_count) for row in working_datasets()}
    assert counts == {"working": (5, 2, 3), "empty": (0, 0, 0)}
