"""A researcher withdraws a participant and their data is erased wherever it was copied: cases,
drafts, review findings, items of working datasets, answers and judge replies, the LLM response
cache. Frozen versions keep a tombstone in the item's place and say they were amended."""

import io

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import models
from django.urls import reverse

from annotation.models import ComparisonPair
from core.erasure import WITHDRAWN
from core.models import AuditEvent
from curation.datasets.services import dataset_freeze, study_dataset_build
from curation.models import Case, CurationJob, Dataset, Item, ReferenceDraft, ReviewEvent, Submission
from curation.review.services import quality_review_decide, review_task_lease
from curation.studies.services import WithdrawalError, participant_withdraw
from judging.models import Answer, CandidateModel, Judgment
from llm.models import LLMResponse
from tests.curation.review_helpers import submitted_cases
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
)

pytestmark = pytest.mark.django_db

SECRET = "ZEBRA-7731"  # in every text the withdrawn participant wrote, and in copies made of it


def every_stored_text() -> str:
    kinds = (models.CharField, models.TextField, models.JSONField)
    chunks = []
    for model in apps.get_models():
        fields = [field.attname for field in model._meta.concrete_fields if isinstance(field, kinds)]
        if fields:
            chunks.extend(str(row) for row in model.objects.values_list(*fields))
    return "\n".join(chunks)


@pytest.fixture
def pipeline(reviewer):
    """Two participants through review, a working dataset, a frozen version, answers, judgments,
    a reference draft, cached replies and a comparison pair on one working item."""
    study = StudyFactory(slug="w")
    mine = submitted_cases(
        study,
        [
            f"Question: How do I fix {SECRET} error one?\nAnswer: Restart.",
            f"Question: Why does {SECRET} crash twice?\nAnswer: Memory.",
        ],
        prolific_pid="pid-withdrawn",
        drafts={"about": {"occupation": [SECRET]}},
    )
    theirs = submitted_cases(study, ["Question: What is a kettle for?\nAnswer: Water."], prolific_pid="pid-stays")
    while (task := review_task_lease(queue="quality", reviewer=reviewer)) is not None:
        quality_review_decide(task=task, reviewer=reviewer, decision="accept")
    working, _added = study_dataset_build(study=study, name="w-work")
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    model = CandidateModelFactory(name="m")
    run = JudgeRunFactory(dataset=version)
    for n, item in enumerate(version.items.order_by("pk")):
        answer = AnswerFactory(item=item, model=model, text=f"About {item.question[:30]}: restart it.")
        reply = f"The answer to '{item.question}' is fine. 8"
        cached = LLMResponse.objects.create(key=f"j{item.pk}", base_url="x", model="m", text=reply)
        # A reply is stored once, in the cache row the judgment refers to; a judgment saved
        # before that kept a copy of its own.
        stored = {"raw_text": reply} if n == 0 else {"raw_text": "", "response": cached}
        JudgmentFactory(run=run, item=item, model=model, final_score=8, **stored)
        LLMResponse.objects.create(key=f"a{item.pk}", base_url="x", model="m", text=answer.text)
    first_working = working.items.get(source_case=mine[0])
    draft = ReferenceDraft.objects.create(
        job=CurationJob.objects.create(kind="reference", dataset=working, model="m"),
        item=first_working,
        language="en",
        text=f"Fix {SECRET} by restarting.",
        status="done",
    )
    LLMResponse.objects.create(key="draft", base_url="x", model="m", text=draft.text)
    # A comparison pair points at the second working item: it cannot be deleted, only emptied.
    second_working = working.items.get(source_case=mine[1])
    AnswerFactory(item=second_working, model=model)
    AnswerFactory(item=second_working, model=CandidateModelFactory(name="n"))
    ComparisonPair.objects.create(
        campaign=CampaignFactory(dataset=working),
        item=second_working,
        model_a=model,
        model_b=CandidateModel.objects.get(name="n"),
    )
    assert SECRET in every_stored_text()
    return study, mine, theirs, working, version


def test_withdrawing_erases_the_participant_wherever_they_were_copied(pipeline, researcher):
    study, mine, theirs, working, version = pipeline
    items_in_version = version.items.count()
    report = participant_withdraw(study=study, prolific_pid="pid-withdrawn", actor=researcher)

    assert SECRET not in every_stored_text()
    assert list(Submission.objects.values_list("prolific_pid", flat=True)) == ["pid-stays"]
    assert not Case.objects.filter(pk__in=[case.pk for case in mine]).exists()
    # Working dataset: one item deleted, the one a comparison pair needs emptied and excluded.
    assert report["items_deleted"] == 1 and report["items_tombstoned"] == 3
    [kept] = working.items.filter(withdrawn_at__isnull=False)
    assert (kept.question, kept.reference, kept.metadata, kept.excluded) == (WITHDRAWN, "", {"withdrawn": True}, True)
    assert working.items.filter(withdrawn_at__isnull=True).count() == 1  # the other participant's
    # Frozen version: the same rows, two of them tombstones, and it says it was amended.
    version.refresh_from_db()
    assert version.items.count() == items_in_version == 3
    assert sorted(version.items.values_list("question", flat=True)) == sorted(
        [WITHDRAWN, WITHDRAWN, "What is a kettle for?"]
    )
    assert version.amended_at is not None and version.withdrawn_items == 2
    assert report["frozen_versions"] == [version.name]
    # Scores stay; the words made from the question go.
    tombstones = version.items.filter(withdrawn_at__isnull=False)
    assert set(Answer.objects.filter(item__in=tombstones).values_list("text", flat=True)) == {WITHDRAWN}
    assert set(Judgment.objects.filter(item__in=tombstones).values_list("raw_text", "response", "final_score")) == {
        ("", None, 8)
    }
    assert LLMResponse.objects.count() == 2 and report["cached_replies"] == 5
    assert ReferenceDraft.objects.count() == 0
    # The other participant's items and history are untouched.
    assert Item.objects.filter(question="What is a kettle for?").count() == 2
    assert ReviewEvent.objects.filter(case=theirs[0]).exists()

    event = AuditEvent.objects.get(action="participant_withdrawn")
    assert event.actor == researcher and event.target == "study:w"
    assert "pid-withdrawn" not in str(event.details) and event.details["cases"] == 2


def test_a_withdrawal_by_submission_number_from_the_command_line(pipeline):
    study, mine, _theirs, _working, _version = pipeline
    out = io.StringIO()
    call_command("withdraw_participant", "--study", "w", "--submission", str(mine[0].submission_id), stdout=out)
    assert out.getvalue().startswith("Erased 1 submission(s), 2 case(s); 1 item(s) deleted, 3 tombstoned")
    with pytest.raises(CommandError, match="No submission of this study matches; nothing was erased."):
        call_command("withdraw_participant", "--study", "w", "--submission", "999999", stdout=out)


def test_the_study_page_withdraws_only_with_a_confirmation_and_only_for_researchers(
    pipeline, client, researcher, reviewer
):
    url = reverse("curation:study-withdraw", args=["w"])
    client.force_login(reviewer)
    assert client.post(url, {"prolific_pid": "pid-withdrawn", "confirm": "1"}).status_code == 403
    client.force_login(researcher)
    page = client.get(reverse("curation:study-detail", args=["w"])).text
    assert "Withdraw a participant" in page
    unconfirmed = client.post(url, {"prolific_pid": "pid-withdrawn"}, follow=True)
    assert "Tick the box to confirm the erasure; nothing was erased." in unconfirmed.text
    assert Submission.objects.count() == 2
    done = client.post(url, {"prolific_pid": "pid-withdrawn", "confirm": "1"}, follow=True)
    assert "Erased 1 submission(s) and 2 case(s); 1 item(s) deleted, 3 replaced by a tombstone." in done.text
    assert Submission.objects.count() == 1
    working, version = pipeline[3], pipeline[4]
    listing = client.get(reverse("curation:review-dataset", args=[working.pk])).text
    assert "2 items withdrawn" in listing and f"{version.name} <span" in listing


def test_a_withdrawal_names_one_participant(pipeline):
    study = pipeline[0]
    with pytest.raises(WithdrawalError, match="by a Prolific ID or by a submission number, not both"):
        participant_withdraw(study=study, prolific_pid="pid-withdrawn", submission_id=1)
    with pytest.raises(WithdrawalError, match="by a Prolific ID or by a submission number"):
        participant_withdraw(study=study)
    assert Dataset.objects.filter(amended_at__isnull=False).count() == 0


def test_another_questions_reply_in_the_same_words_is_kept(pipeline, researcher):
    """The cache is purged by text, and short verdicts repeat word for word across questions: a
    judgment of another participant's question that refers to a row with the same words keeps it."""
    study, _mine, _theirs, _working, version = pipeline
    judgments = list(Judgment.objects.filter(item__dataset=version).select_related("item"))
    kept = next(j for j in judgments if j.item.question == "What is a kettle for?")
    gone = next(j for j in judgments if j.item.question != "What is a kettle for?" and j.response_id)
    LLMResponse.objects.filter(key=gone.response_id).update(text="[[A]]")
    Judgment.objects.filter(pk=kept.pk).update(
        raw_text="", response=LLMResponse.objects.create(key="kettle", base_url="x", model="m", text="[[A]]")
    )
    participant_withdraw(study=study, prolific_pid="pid-withdrawn", actor=researcher)
    assert Judgment.objects.select_related("response").get(pk=kept.pk).reply == "[[A]]"
    assert Judgment.objects.filter(pk=gone.pk).values_list("raw_text", "response").get() == ("", None)
    assert not LLMResponse.objects.filter(text="[[A]]").exists()
