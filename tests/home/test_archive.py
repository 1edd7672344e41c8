"""Archive and restore of datasets, runs, campaigns and studies: the API and the pages, what
archived work is left out of, read-only, the audit, and the attacker's side."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.campaigns import _check_design
from annotation.models import Campaign, Vote
from core.models import AuditEvent, Workspace
from curation.models import Dataset, Item, ReviewQueue, ReviewTask, Study, Submission
from judging.models import JudgeRun
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    StudyFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# In an order they can be archived in: a dataset after the run and campaign on it.
KINDS = ("run", "campaign", "dataset", "study")


@pytest.fixture
def work(db):
    """One of each, in the default workspace; the run finished, the campaign with its annotator."""
    dataset = DatasetFactory(name="archset/one")
    annotator = UserFactory(username="ann", roles=["annotator"])
    campaign = CampaignFactory(slug="archcamp", dataset=dataset)
    campaign.annotators.add(annotator)
    return {
        "dataset": dataset,
        "run": JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED),
        "campaign": campaign,
        "study": StudyFactory(slug="archstud"),
        "annotator": annotator,
    }


def key_of(kind, work):
    obj = work[kind]
    return {"dataset": obj.name if kind == "dataset" else None, "run": obj.pk}.get(kind) or obj.slug


def api(kind, action, key):
    return reverse(f"api-{kind}-{action}", args=[key])


def fresh(obj):
    return type(obj)._default_manager.get(pk=obj.pk)


def archive_dataset_users(client, work):
    """Archive the run and the campaign on the dataset: until then the dataset is not archived."""
    for kind in ("run", "campaign"):
        assert client.post(api(kind, "archive", key_of(kind, work))).status_code == 200


@pytest.mark.parametrize("kind", KINDS)
def test_the_api_archives_and_restores_each_kind_and_the_audit_has_before_and_after(client_as, researcher, work, kind):
    client = client_as(researcher)
    key = key_of(kind, work)
    if kind == "dataset":
        archive_dataset_users(client, work)
    archived = client.post(api(kind, "archive", key))
    assert archived.status_code == 200, archived.content
    body = archived.json()
    assert body["kind"] == kind and body["key"] == str(key) and body["archived"] is True
    obj = fresh(work[kind])
    assert obj.archived_at is not None
    assert obj.restorable_until - obj.archived_at == timedelta(days=30)
    again = client.post(api(kind, "archive", key))
    assert again.status_code == 400 and "already archived" in again.json()["detail"]
    restored = client.post(api(kind, "restore", key))
    assert restored.status_code == 200 and restored.json()["archived"] is False
    assert fresh(work[kind]).archived_at is None
    events = list(AuditEvent.objects.filter(target=f"{kind}:{key}").order_by("pk"))
    assert [event.action for event in events] == ["archived", "restored"]
    assert all(event.workspace_id == work[kind].workspace_id for event in events)
    assert events[0].details["changes"]["archived_at"][0] is None
    assert events[0].details["changes"]["archived_at"][1] is not None
    assert events[1].details["changes"]["archived_at"][1] is None
    assert events[0].actor == researcher


def test_archived_work_leaves_every_list_picker_and_count(client_as, researcher, work):
    client = client_as(researcher)
    for kind in KINDS:
        assert client.post(api(kind, "archive", key_of(kind, work))).status_code == 200
    assert (
        client.get(reverse("api-datasets")).json() == [] or client.get(reverse("api-datasets")).json()["results"] == []
    )
    for name in ("api-runs", "api-campaigns", "api-studies"):
        listed = client.get(reverse(name)).json()
        rows = listed["results"] if isinstance(listed, dict) else listed
        assert rows == [], name
    dashboard = client.get(reverse("dashboard")).content.decode()
    for text in ("archset/one", "archcamp", "archstud"):
        assert text not in dashboard
    for page in (reverse("curation:datasets"), reverse("judging:run-list"), reverse("curation:review-datasets")):
        assert "archset/one" not in client.get(page).content.decode(), page
    # The pickers of a new run and a new campaign.
    assert "archset/one" not in client.get(reverse("judging:run-new")).content.decode()
    assert "archset/one" not in client.get(reverse("annotation:campaign-new")).content.decode()
    # The annotator's queue.
    annotator = client_as(work["annotator"])
    assert "archcamp" not in annotator.get(reverse("annotation:index")).content.decode()
    assert annotator.get(reverse("annotation:annotate", args=["archcamp"])).status_code == 404
    assert annotator.get(reverse("api-annotate-next", args=["archcamp"])).status_code == 404


def test_restored_work_comes_back_into_the_lists(client_as, researcher, work):
    client = client_as(researcher)
    archive_dataset_users(client, work)
    assert client.post(api("dataset", "archive", "archset/one")).status_code == 200
    assert "archset/one" not in client.get(reverse("curation:datasets")).content.decode()
    client.post(api("dataset", "restore", "archset/one"))
    assert "archset/one" in client.get(reverse("curation:datasets")).content.decode()


def test_an_archived_objects_page_opens_read_only_with_its_dates_and_a_restore_button(client_as, researcher, work):
    client = client_as(researcher)
    pages = {
        "run": reverse("judging:run-detail", args=[work["run"].pk]),
        "campaign": reverse("annotation:results", args=["archcamp"]),
        "dataset": reverse("curation:dataset-detail", args=["archset/one"]),
        "study": reverse("curation:study-detail", args=["archstud"]),
    }
    for kind, page in pages.items():
        live = client.get(page).content.decode()
        assert "data-archive" in live and "Yes, archive it" in live, kind
        client.post(api(kind, "archive", key_of(kind, work)))
        shown = client.get(page)
        assert shown.status_code == 200, kind
        text = shown.content.decode()
        today = timezone.localdate()
        assert "Archived on" in text and "restorable until" in text, kind
        assert f"{(today + timedelta(days=30)).year}" in text
        assert 'data-action="restore"' in text and "Yes, archive it" not in text, kind
        # Restore is asked first, as Archive is: its button is inside a closed <details>.
        assert '<details class="archive-confirm" data-restore>' in text and "Yes, restore it" in text, kind


def test_changes_to_archived_work_are_refused_with_a_clear_message(client_as, researcher, work):
    client = client_as(researcher)
    for kind in KINDS:
        assert client.post(api(kind, "archive", key_of(kind, work))).status_code == 200
    freeze = client.post(reverse("curation:review-freeze", args=[work["dataset"].pk]), follow=True)
    assert "restore it first" in freeze.content.decode()
    assert not Dataset.objects.filter(frozen_from=work["dataset"]).exists()
    resume = client.post(reverse("api-run-resume", args=[work["run"].pk]), {}, content_type="application/json")
    assert resume.status_code == 400 and "restore it first" in resume.json()["detail"]
    page = client.post(reverse("judging:run-action", args=[work["run"].pk, "reparse"]), follow=True)
    assert "restore it first" in page.content.decode()
    edit = client.get(reverse("curation:study-edit", args=["archstud"]), follow=True)
    assert "restore it first" in edit.content.decode()
    # Nothing new is made on an archived dataset.
    AnswerFactory(item__dataset=work["dataset"], model__name="m-a")
    AnswerFactory(item__dataset=work["dataset"], model__name="m-b")
    started = client.post(
        reverse("api-runs"),
        {"dataset": "archset/one", "mode": "pointwise", "judge_model": "j", "models": ["m-a", "m-b"]},
        content_type="application/json",
    )
    assert started.status_code == 400 and "restore it first" in str(started.json())
    assert JudgeRun.objects.count() == 1


def test_a_run_at_work_is_not_archived_and_a_run_or_campaign_waits_for_its_dataset(client_as, researcher, work):
    client = client_as(researcher)
    JudgeRun.objects.filter(pk=work["run"].pk).update(status=JudgeRun.Status.RUNNING)
    refused = client.post(api("run", "archive", work["run"].pk))
    assert refused.status_code == 400 and "still at work" in refused.json()["detail"]
    JudgeRun.objects.filter(pk=work["run"].pk).update(status=JudgeRun.Status.FINISHED)
    for kind in ("run", "campaign", "dataset"):
        assert client.post(api(kind, "archive", key_of(kind, work))).status_code == 200
    for kind in ("run", "campaign"):
        waiting = client.post(api(kind, "restore", key_of(kind, work)))
        assert waiting.status_code == 400 and "restore the dataset first" in waiting.json()["detail"]


def test_restore_is_refused_after_archive_days(client_as, researcher, work, settings):
    settings.ARCHIVE_DAYS = 2
    Dataset.objects.filter(pk=work["dataset"].pk).update(archived_at=timezone.now() - timedelta(days=3))
    refused = client_as(researcher).post(api("dataset", "restore", "archset/one"))
    assert refused.status_code == 400 and "more than 2 days ago" in refused.json()["detail"]


def test_an_archived_name_is_not_taken_by_a_new_object(client_as, researcher, work):
    client = client_as(researcher)
    client.post(api("campaign", "archive", "archcamp"))
    with pytest.raises(Exception, match="The link name .archcamp. is taken"):
        _check_design(
            workspace_id=work["dataset"].workspace_id,
            slug="archcamp",
            title="t",
            title_zh="",
            annotators=[],
            votes_per_pair=1,
            gold_every=0,
            min_gold_accuracy=0.7,
            lease_seconds=600,
            min_seconds_per_item=0,
            sampling="fixed",
            budget=0,
            uniform_share=0.2,
        )
    assert client.post(api("campaign", "restore", "archcamp")).status_code == 200


def test_the_pages_buttons_archive_and_restore(client_as, researcher, work):
    client = client_as(researcher)
    archived = client.post(reverse("annotation:campaign-archive", args=["archcamp"]), follow=True)
    assert "Archived archcamp." in archived.content.decode()
    assert Campaign.objects.get(slug="archcamp").archived_at is not None
    restored = client.post(reverse("annotation:campaign-restore", args=["archcamp"]), follow=True)
    assert "Restored archcamp." in restored.content.decode()
    assert Campaign.objects.get(slug="archcamp").archived_at is None
    assert client.get(reverse("annotation:campaign-archive", args=["archcamp"])).status_code == 405
    client.post(reverse("judging:run-archive", args=[work["run"].pk]))
    client.post(reverse("annotation:campaign-archive", args=["archcamp"]))
    client.post(reverse("curation:dataset-archive", args=[work["dataset"].pk]))
    client.post(reverse("curation:study-archive", args=["archstud"]))
    assert Dataset.objects.active().count() == 0 and Study.objects.active().count() == 0
    assert JudgeRun.objects.active().count() == 0


@pytest.mark.parametrize("kind", KINDS)
def test_another_workspaces_researcher_gets_a_bare_404(client_as, work, kind):
    other = Workspace.objects.create(slug="other", name="Other")
    stranger = UserFactory(username="stranger", roles=["researcher"], roles__workspace=other)
    for action in ("archive", "restore"):
        response = client_as(stranger).post(api(kind, action, key_of(kind, work)))
        assert response.status_code == 404
        assert str(key_of(kind, work)) not in response.content.decode()
    assert fresh(work[kind]).archived_at is None


@pytest.mark.parametrize("role", ["annotator", "reviewer"])
def test_annotators_and_reviewers_cannot_archive(client_as, work, role):
    person = UserFactory(username=f"only-{role}", roles=[role])
    client = client_as(person)
    for kind in KINDS:
        assert client.post(api(kind, "archive", key_of(kind, work))).status_code == 403
    assert client.post(reverse("annotation:campaign-archive", args=["archcamp"])).status_code in (302, 403)
    assert all(fresh(work[kind]).archived_at is None for kind in KINDS)


def test_an_archived_study_shows_participants_a_closed_page_in_both_languages(client, researcher, work):
    client.force_login(researcher)
    client.post(api("study", "archive", "archstud"))
    client.logout()
    english = client.get(reverse("curation:study-start", args=["archstud"]) + "?PROLIFIC_PID=abc")
    assert english.status_code == 410
    assert "This study has ended" in english.content.decode()
    assert 'name="consent"' not in english.content.decode()
    client.get(reverse("curation:study-start", args=["archstud"]) + "?lang=zh-hans")
    chinese = client.get(reverse("curation:study-start", args=["archstud"]))
    assert chinese.status_code == 410
    assert "本研究已结束" in chinese.content.decode()


def test_the_review_queues_leave_out_an_archived_dataset_and_study(client_as, researcher, work, reviewer):
    on_item = ReviewTask.objects.create(queue=ReviewQueue.REFERENCE, item=ItemFactory(dataset=work["dataset"]))
    on_case = ReviewTask.objects.create(queue=ReviewQueue.QUALITY, case=CaseFactory(submission__study=work["study"]))
    assert set(ReviewTask.objects.in_workspaces_of(reviewer)) == {on_item, on_case}
    client = client_as(researcher)
    archive_dataset_users(client, work)
    assert client.post(api("dataset", "archive", "archset/one")).status_code == 200
    client.post(api("study", "archive", "archstud"))
    assert list(ReviewTask.objects.in_workspaces_of(reviewer)) == []
    client.post(api("dataset", "restore", "archset/one"))
    assert list(ReviewTask.objects.in_workspaces_of(reviewer)) == [on_item]


def test_an_annotator_holding_a_lease_cannot_vote_once_the_campaign_is_archived(client_as, researcher, work):
    annotator = client_as(work["annotator"])
    assert annotator.get(reverse("api-annotate-next", args=["archcamp"])).status_code in (200, 204)
    client_as(researcher).post(api("campaign", "archive", "archcamp"))
    annotator = client_as(work["annotator"])
    voted = annotator.post(reverse("api-annotate-vote", args=["archcamp"]), {"winner": "model_a"})
    assert voted.status_code == 404 and Vote.objects.count() == 0


def test_the_archived_page_lists_archived_work_to_find_and_restore(client_as, researcher, work):
    client = client_as(researcher)
    assert "Nothing is archived." in client.get(reverse("archived")).content.decode()
    for kind in KINDS:
        client.post(api(kind, "archive", key_of(kind, work)))
    page = client.get(reverse("archived")).content.decode()
    for kind, url in (
        ("dataset", reverse("curation:dataset-detail", args=["archset/one"])),
        ("run", reverse("judging:run-detail", args=[work["run"].pk])),
        ("campaign", reverse("annotation:results", args=["archcamp"])),
        ("study", reverse("curation:study-detail", args=["archstud"])),
    ):
        assert f'href="{url}"' in page, kind
    assert (timezone.localdate() + timedelta(days=30)).isoformat() in page
    assert client_as(work["annotator"]).get(reverse("archived")).status_code in (302, 403)


def test_a_participant_of_an_archived_study_is_still_withdrawn_and_erased(client_as, researcher, work):
    case = CaseFactory(submission__study=work["study"], submission__prolific_pid="PID-ARCH")
    item = ItemFactory(dataset=work["dataset"], source_case=case)
    client = client_as(researcher)
    client.post(api("study", "archive", "archstud"))
    archive_dataset_users(client, work)
    assert client.post(api("dataset", "archive", "archset/one")).status_code == 200
    client.post(reverse("curation:study-withdraw", args=["archstud"]), {"confirm": "1", "prolific_pid": "PID-ARCH"})
    assert not Submission.objects.filter(prolific_pid="PID-ARCH").exists()
    assert not Item.objects.filter(pk=item.pk).exists()
