"""Archived work is read-only until restored (issue 37, item 2): every route that changes a
dataset, run, campaign or study, on the pages and through the API, refuses on an archived one
(or on a run or campaign whose dataset is archived), says so, and leaves everything stored exactly
as it was. The one change still allowed is stopping work that spends (cancelling a generation).

Each case names what is archived, the request, and what the person is shown: "refused" (the
page's message, or the API's 400, saying to restore it first), "hidden" (a 404 or 410: archived
work is absent for annotators and participants) or "unchanged" (a form that no longer offers it)."""

from datetime import timedelta
from io import BytesIO

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from curation.models import CurationJob, ReviewQueue, ReviewTask
from judging.answers.versions import answers_delete
from judging.models import AnswerGeneration, AnswerUpload, JudgeRun
from tests.archived_state import changes_between, stored_state
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    CaseFactory,
    ComparisonPairFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    StudyFactory,
    SubmissionFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

ANSWERS = b'{"question_id": "q1", "response": "A new answer."}\n'
LONG_AGO = timedelta(days=1)


@pytest.fixture
def world(db):
    """A working dataset with answers (one model's deleted: an earlier version), a generation and
    a large upload to resume, a curation job to restart; a frozen dataset to copy; a finished run;
    a campaign with an annotator holding a lease; a study with two submissions of one Prolific ID;
    a reviewer holding a task on an item and one on a case."""
    researcher = UserFactory(username="res", roles=["researcher"])
    annotator = UserFactory(username="ann", roles=["annotator"])
    UserFactory(username="ann2", roles=["annotator"])
    reviewer = UserFactory(username="rev", roles=["reviewer"])
    dataset = DatasetFactory(name="ro-set")
    items = [ItemFactory(dataset=dataset, external_id=f"q{n}") for n in (1, 2)]
    models = [CandidateModelFactory(name=name) for name in ("m-a", "m-b", "m-c")]
    for item in items:
        for model in models[:2]:
            AnswerFactory(item=item, model=model)
    # m-b's answers deleted: an earlier version that could be made current again.
    answers_delete(dataset=dataset, model_name="m-b", actor=researcher)
    generation = AnswerGeneration.objects.create(dataset=dataset, model=models[2], status="cancelled", total=2)
    upload = AnswerUpload.objects.create(
        dataset=dataset,
        model_name="m-c",
        file_name="m-c.jsonl",
        content=ANSWERS,
        size=len(ANSWERS),
        status="running",
        beat_at=timezone.now() - LONG_AGO,
    )
    AnswerUpload.objects.filter(pk=upload.pk).update(created_at=timezone.now() - LONG_AGO)
    job = CurationJob.objects.create(kind="reference", dataset=dataset, model="m", status="failed")
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    campaign = CampaignFactory(slug="ro-camp", dataset=dataset, votes_per_pair=1)
    campaign.annotators.add(annotator)
    pair = ComparisonPairFactory(campaign=campaign, item=items[0], model_a=models[0], model_b=models[1])
    lease = Assignment.objects.create(
        pair=pair,
        annotator=annotator,
        token="lease-token",
        model_a_on_left=True,
        leased_until=timezone.now() + LONG_AGO,
    )
    study = StudyFactory(slug="ro-study")
    first = SubmissionFactory(study=study, prolific_pid="PID-TWICE")
    SubmissionFactory(study=study, prolific_pid="PID-TWICE", status="in_progress")
    case = CaseFactory(submission=first)
    soon = timezone.now() + LONG_AGO
    item_task = ReviewTask.objects.create(
        queue=ReviewQueue.REFERENCE, item=items[1], leased_to=reviewer, lease_expires_at=soon
    )
    case_task = ReviewTask.objects.create(
        queue=ReviewQueue.QUALITY, case=case, leased_to=reviewer, lease_expires_at=soon
    )
    return {
        "researcher": researcher,
        "annotator": annotator,
        "reviewer": reviewer,
        "dataset": dataset,
        "frozen": DatasetFactory(name="ro-frozen", frozen_at=timezone.now()),
        "generation": generation,
        "upload": upload,
        "job": job,
        "run": run,
        "campaign": campaign,
        "pair": pair,
        "lease": lease,
        "study": study,
        "submission": first,
        "item_task": item_task,
        "case_task": case_task,
    }


def archive(obj):
    type(obj).objects.filter(pk=obj.pk).update(archived_at=timezone.now())


def as_researcher(client, w):
    client.force_login(w["researcher"])
    return client


def file(content=ANSWERS, name="answers.jsonl"):
    upload = BytesIO(content)
    upload.name = name
    return upload


def _json(client, method, url, data=None):
    return getattr(client, method)(url, data or {}, content_type="application/json")


def _large_upload(client, w, page):
    """A file over the background threshold, which is stored for a worker instead of read now."""
    with override_settings(UPLOAD_BACKGROUND_BYTES=10):
        data = {"model": "m-d", "file": file()}
        if page:
            data["action"] = "upload"
            return client.post(reverse("judging:dataset-answers", args=["ro-set"]), data, follow=True)
        return client.post(reverse("api-dataset-answers", args=["ro-set"]), data)


ANSWERS_PAGE = ("judging:dataset-answers", ["ro-set"])
CAMPAIGN_API = "/api/campaigns/ro-camp/"


def page(name, args, data=None):
    return lambda client, w: as_researcher(client, w).post(reverse(name, args=args), data or {}, follow=True)


def run_action(action):
    return lambda client, w: as_researcher(client, w).post(
        reverse("judging:run-action", args=[w["run"].pk, action]), follow=True
    )


def settings_change(data):
    return page("annotation:settings", ["ro-camp"], {"confirm": "1", **data})


def annotator(method, name, data=None):
    def call(client, w):
        client.force_login(w["annotator"])
        url = reverse(name, args=["ro-camp"])
        return client.get(url) if method == "get" else client.post(url, data or {})

    return call


def reviewer_decides(task, data):
    def call(client, w):
        client.force_login(w["reviewer"])
        return client.post(reverse("curation:review-task", args=[w[task].pk]), data, follow=True)

    return call


CASES = {
    # ---- a campaign: its settings, on the page and through the API (the audit's holes), and its pairs
    "campaign: PATCH the title": (
        "campaign",
        lambda c, w: _json(as_researcher(c, w), "patch", CAMPAIGN_API, {"title": "Renamed"}),
        "refused",
    ),
    "campaign: PATCH closed": (
        "campaign",
        lambda c, w: _json(as_researcher(c, w), "patch", CAMPAIGN_API, {"closed": True}),
        "refused",
    ),
    "campaign: PATCH the annotators": (
        "campaign",
        lambda c, w: _json(as_researcher(c, w), "patch", CAMPAIGN_API, {"annotators": ["ann", "ann2"]}),
        "refused",
    ),
    "campaign on an archived dataset: PATCH the title": (
        "dataset",
        lambda c, w: _json(as_researcher(c, w), "patch", CAMPAIGN_API, {"title": "Renamed"}),
        "refused",
    ),
    "campaign: page edit": ("campaign", settings_change({"action": "edit", "title": "Renamed"}), "refused"),
    "campaign: page close": ("campaign", settings_change({"action": "close"}), "refused"),
    "campaign: page add an annotator": ("campaign", settings_change({"action": "add", "annotator": "ann2"}), "refused"),
    "campaign: page remove an annotator": (
        "campaign",
        settings_change({"action": "remove", "annotator": "ann"}),
        "refused",
    ),
    "campaign: page edit, asked first": (
        "campaign",
        page("annotation:settings", ["ro-camp"], {"action": "edit", "title": "Renamed"}),
        "refused",
    ),
    "campaign: release a pair's skips": (
        "campaign",
        lambda c, w: page("annotation:pairs", ["ro-camp"], {"action": "release", "pair": w["pair"].pk})(c, w),
        "refused",
    ),
    "campaign: give a pair to someone": (
        "campaign",
        lambda c, w: page(
            "annotation:pairs", ["ro-camp"], {"action": "reassign", "pair": w["pair"].pk, "annotator": "ann"}
        )(c, w),
        "refused",
    ),
    # ---- the annotator's side of an archived campaign: absent
    "campaign: the annotate page (it leases)": ("campaign", annotator("get", "annotation:annotate"), "hidden"),
    "campaign: vote on the page": (
        "campaign",
        annotator("post", "annotation:vote", {"token": "lease-token", "choice": "model_a"}),
        "hidden",
    ),
    "campaign: skip on the page": (
        "campaign",
        annotator("post", "annotation:skip", {"token": "lease-token"}),
        "hidden",
    ),
    "campaign: undo on the page": ("campaign", annotator("post", "annotation:undo"), "hidden"),
    "campaign: next pair (it leases)": ("campaign", annotator("get", "api-annotate-next"), "hidden"),
    "campaign: vote through the API": (
        "campaign",
        annotator("post", "api-annotate-vote", {"token": "lease-token", "winner": "model_a"}),
        "hidden",
    ),
    "campaign: skip through the API": (
        "campaign",
        annotator("post", "api-annotate-skip", {"token": "lease-token"}),
        "hidden",
    ),
    "campaign: undo through the API": ("campaign", annotator("post", "api-annotate-undo"), "hidden"),
    # ---- a dataset's answers (the audit's holes: delete, replace, large uploads, resume)
    "dataset: DELETE answers ?model=": (
        "dataset",
        lambda c, w: as_researcher(c, w).delete(reverse("api-dataset-answers", args=["ro-set"]) + "?model=m-a"),
        "refused",
    ),
    "dataset: DELETE answers/<model>/": (
        "dataset",
        lambda c, w: as_researcher(c, w).delete(reverse("api-model-answers", args=["ro-set", "m-a"])),
        "refused",
    ),
    "dataset: make an earlier version current again through the API": (
        "dataset",
        lambda c, w: _json(
            as_researcher(c, w),
            "post",
            reverse("api-dataset-answers-restore", args=["ro-set"]),
            {"model": "m-b", "version": 1},
        ),
        "refused",
    ),
    "dataset: make an earlier version current again on the page": (
        "dataset",
        page(*ANSWERS_PAGE, {"action": "restore", "model": "m-b", "version": "1", "confirm": "1"}),
        "refused",
    ),
    "dataset: upload answers through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).post(
            reverse("api-dataset-answers", args=["ro-set"]), {"model": "m-d", "file": file()}
        ),
        "refused",
    ),
    "dataset: replace answers through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).post(
            reverse("api-dataset-answers", args=["ro-set"]), {"model": "m-a", "file": file(), "replace": "true"}
        ),
        "refused",
    ),
    "dataset: a large upload through the API": (
        "dataset",
        lambda c, w: _large_upload(as_researcher(c, w), w, page=False),
        "refused",
    ),
    "dataset: a large upload on the page": (
        "dataset",
        lambda c, w: _large_upload(as_researcher(c, w), w, page=True),
        "refused",
    ),
    "dataset: delete answers on the page, confirmed": (
        "dataset",
        page(*ANSWERS_PAGE, {"action": "delete", "model": "m-a", "confirm": "1"}),
        "refused",
    ),
    "dataset: delete answers on the page, asked first": (
        "dataset",
        page(*ANSWERS_PAGE, {"action": "delete", "model": "m-a"}),
        "refused",
    ),
    "dataset: replace answers on the page": (
        "dataset",
        lambda c, w: page(*ANSWERS_PAGE, {"action": "upload", "model": "m-a", "replace": "on", "file": file()})(c, w),
        "refused",
    ),
    "dataset: upload answers on the page": (
        "dataset",
        lambda c, w: page(*ANSWERS_PAGE, {"action": "upload", "model": "m-d", "file": file()})(c, w),
        "refused",
    ),
    "dataset: start a generation on the page": (
        "dataset",
        page(*ANSWERS_PAGE, {"action": "start", "model": "m-d", "previewed": "x"}),
        "refused",
    ),
    "dataset: resume a generation on the page": (
        "dataset",
        lambda c, w: page("judging:generation-action", ["ro-set", w["generation"].pk, "resume"])(c, w),
        "refused",
    ),
    "dataset: resume a generation through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).post(
            reverse("api-dataset-generation-resume", args=["ro-set", w["generation"].pk])
        ),
        "refused",
    ),
    "dataset: start a generation through the API": (
        "dataset",
        lambda c, w: _json(
            as_researcher(c, w), "post", reverse("api-dataset-generations", args=["ro-set"]), {"model": "m-d"}
        ),
        "refused",
    ),
    "dataset: resume a large upload on the page": (
        "dataset",
        lambda c, w: page("judging:answers-upload-resume", ["ro-set", w["upload"].pk])(c, w),
        "refused",
    ),
    "dataset: discard a large upload on the page": (
        "dataset",
        lambda c, w: page("judging:answers-upload-discard", ["ro-set", w["upload"].pk])(c, w),
        "refused",
    ),
    "dataset: resume a large upload through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).post(
            reverse("api-dataset-answers-upload-resume", args=["ro-set", w["upload"].pk])
        ),
        "refused",
    ),
    "dataset: discard a large upload through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).delete(reverse("api-dataset-answers-upload", args=["ro-set", w["upload"].pk])),
        "refused",
    ),
    # ---- a dataset's curation: jobs, freezing, building, copying, the difficulty filter
    "dataset: start a reference job": (
        "dataset",
        lambda c, w: page("curation:review-job", [w["dataset"].pk], {"kind": "reference", "model": "m"})(c, w),
        "refused",
    ),
    "dataset: restart a failed job": (
        "dataset",
        lambda c, w: page("curation:review-job-restart", [w["dataset"].pk, w["job"].pk])(c, w),
        "refused",
    ),
    "dataset: freeze on the page": (
        "dataset",
        lambda c, w: page("curation:review-freeze", [w["dataset"].pk], {"confirm_missing_references": "on"})(c, w),
        "refused",
    ),
    "dataset: freeze through the API": (
        "dataset",
        lambda c, w: _json(
            as_researcher(c, w),
            "post",
            reverse("api-dataset-freeze", args=["ro-set"]),
            {"confirm_missing_references": True},
        ),
        "refused",
    ),
    "dataset: build it from a study": (
        "dataset",
        page("curation:review-build", [], {"study": "ro-study", "name": "ro-set"}),
        "refused",
    ),
    "dataset: a working copy of an archived frozen one": (
        "frozen",
        page("curation:review-copy", [], {"dataset": "ro-frozen", "name": "ro-copy"}),
        "refused",
    ),
    "dataset: its difficulty filter": (
        "dataset",
        lambda c, w: page("judging:dataset-difficulty", [w["dataset"].pk], {"run": w["run"].pk, "percent": 50})(c, w),
        "refused",
    ),
    "dataset: a reviewer's decision on an item leased before": (
        "dataset",
        reviewer_decides("item_task", {"decision": "accept"}),
        "refused",
    ),
    # ---- new runs and campaigns on an archived dataset
    "dataset: a run through the API": (
        "dataset",
        lambda c, w: _json(
            as_researcher(c, w),
            "post",
            reverse("api-runs"),
            {"dataset": "ro-set", "mode": "pointwise", "judge_model": "j", "models": ["m-a", "m-b"]},
        ),
        "refused",
    ),
    "dataset: a campaign through the API": (
        "dataset",
        lambda c, w: _json(
            as_researcher(c, w),
            "post",
            reverse("api-campaigns"),
            {"slug": "new-camp", "dataset": "ro-set", "models": ["m-a", "m-b"]},
        ),
        "refused",
    ),
    "dataset: a campaign on the page": (
        "dataset",
        page("annotation:campaign-new", [], {"dataset": "ro-set", "slug": "new-camp", "models": ["m-a", "m-b"]}),
        "unchanged",
    ),
    "dataset: a run on the page": (
        "dataset",
        page("judging:run-new", [], {"dataset": "ro-set", "mode": "pointwise", "judge_model": "j", "models": ["m-a"]}),
        "unchanged",
    ),
    # ---- a run: its actions, also when only its dataset is archived
    "run: resume on the page": ("run", run_action("resume"), "refused"),
    "run: cancel on the page": ("run", run_action("cancel"), "refused"),
    "run: re-run on the page": ("run", run_action("rerun"), "refused"),
    "run: parse again on the page": ("run", run_action("reparse"), "refused"),
    "run: resume through the API": (
        "run",
        lambda c, w: as_researcher(c, w).post(reverse("api-run-resume", args=[w["run"].pk])),
        "refused",
    ),
    "run: cancel through the API": (
        "run",
        lambda c, w: as_researcher(c, w).post(reverse("api-run-cancel", args=[w["run"].pk])),
        "refused",
    ),
    "run: a difficulty filter from it": (
        "run",
        lambda c, w: page("judging:dataset-difficulty", [w["dataset"].pk], {"run": w["run"].pk, "percent": 50})(c, w),
        "refused",
    ),
    "run on an archived dataset: resume on the page": ("dataset", run_action("resume"), "refused"),
    "run on an archived dataset: re-run on the page": ("dataset", run_action("rerun"), "refused"),
    "run on an archived dataset: parse again on the page": ("dataset", run_action("reparse"), "refused"),
    "run on an archived dataset: resume through the API": (
        "dataset",
        lambda c, w: as_researcher(c, w).post(reverse("api-run-resume", args=[w["run"].pk])),
        "refused",
    ),
    # ---- a study: its set-up, Prolific decisions, a reviewer's case; participants meet a closed page
    "study: edit its set-up": ("study", page("curation:study-edit", ["ro-study"], {"title_en": "Renamed"}), "refused"),
    "study: decide a submission": (
        "study",
        lambda c, w: page(
            "curation:study-submission-decide",
            ["ro-study", w["submission"].pk],
            {"decision": "approve", "confirm": "yes"},
        )(c, w),
        "refused",
    ),
    "study: keep one of two submissions of a Prolific ID": (
        "study",
        lambda c, w: page(
            "curation:study-duplicate-resolve", ["ro-study"], {"prolific_pid": "PID-TWICE", "keep": w["submission"].pk}
        )(c, w),
        "refused",
    ),
    "study: build a dataset from it": (
        "study",
        page("curation:review-build", [], {"study": "ro-study", "name": "new-set"}),
        "unchanged",
    ),
    "study: a reviewer's decision on a case leased before": (
        "study",
        reviewer_decides("case_task", {"decision": "reject", "reason": "spam"}),
        "refused",
    ),
    "study: a participant starts it": (
        "study",
        lambda c, w: c.post(reverse("curation:study-start", args=["ro-study"]) + "?PROLIFIC_PID=NEW", {"consent": "1"}),
        "hidden",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_change_to_archived_work_is_refused_and_changes_nothing(client, world, case):
    archived, request, shown = CASES[case]
    archive(world[archived])
    before = stored_state()
    response = request(client, world)
    assert response.status_code < 500, response.content[:500]
    assert changes_between(before, stored_state()) == {}
    text = response.content.decode()
    if shown == "refused":
        assert response.status_code in (200, 400), (response.status_code, text[:300])
        assert "archived" in text and ("restore it first" in text or "until it is restored" in text), text[:2000]
    elif shown == "hidden":
        assert response.status_code in (404, 410)


def test_a_generation_on_an_archived_dataset_can_still_be_cancelled(client, world):
    """Stopping calls that cost money is never refused: what came back is kept, nothing more arrives."""
    AnswerGeneration.objects.filter(pk=world["generation"].pk).update(status="running", beat_at=timezone.now())
    archive(world["dataset"])
    cancelled = as_researcher(client, world).post(
        reverse("api-dataset-generation-cancel", args=["ro-set", world["generation"].pk])
    )
    assert cancelled.status_code == 200
    assert AnswerGeneration.objects.get(pk=world["generation"].pk).cancel_requested


def test_an_archived_campaigns_page_shows_no_settings_form_and_offers_the_restore(client, world):
    researcher = as_researcher(client, world)
    url = reverse("annotation:results", args=["ro-camp"])
    live = researcher.get(url).content.decode()
    assert 'id="campaign-edit"' in live and 'id="annotator-change"' in live and 'id="campaign-state"' in live
    archive(world["campaign"])
    shown = researcher.get(url).content.decode()
    for form in ('id="campaign-edit"', 'id="annotator-change"', 'id="campaign-state"', 'id="give"'):
        assert form not in shown, form
    assert 'id="settings-archived"' in shown and 'href="#archived"' in shown and 'id="archived"' in shown
    assert 'data-action="restore"' in shown
    # Still read: who annotates it.
    assert 'id="settings-annotators">ann<' in shown


def test_a_campaign_whose_dataset_is_archived_shows_its_settings_read_only(client, world):
    archive(world["dataset"])
    shown = as_researcher(client, world).get(reverse("annotation:results", args=["ro-camp"])).content.decode()
    assert 'id="campaign-edit"' not in shown and 'id="settings-archived"' in shown
    assert reverse("curation:dataset-detail", args=["ro-set"]) in shown


def test_an_archived_datasets_answers_page_offers_no_change(client, world):
    researcher = as_researcher(client, world)
    url = reverse("judging:dataset-answers", args=["ro-set"])
    live = researcher.get(url).content.decode()
    assert 'id="upload-form"' in live and 'id="generate-form"' in live and 'value="delete"' in live
    archive(world["dataset"])
    shown = researcher.get(url).content.decode()
    for form in ('id="upload-form"', 'id="generate-form"', 'value="delete"', "?replace="):
        assert form not in shown, form
    assert 'id="answers-archived"' in shown and "m-a" in shown
    assert "/resume/" not in shown.split('id="generations-heading"')[1].split("</section>")[0]
