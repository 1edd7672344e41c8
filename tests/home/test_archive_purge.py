"""`purge_archived`: what was archived more than ARCHIVE_DAYS ago is deleted, unless something
still refers to it, and then the command says by what."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Campaign, Vote
from core.models import AuditEvent
from curation.models import Dataset, Study, Submission
from judging.models import JudgeRun, Judgment
from tests.factories import (
    CampaignFactory,
    DatasetFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
    SubmissionFactory,
    VoteFactory,
)

pytestmark = pytest.mark.django_db


def archived(obj, *, days_ago: int):
    type(obj)._default_manager.filter(pk=obj.pk).update(archived_at=timezone.now() - timedelta(days=days_ago))
    return obj


def purge(*args) -> str:
    out = StringIO()
    call_command("purge_archived", *args, stdout=out)
    return out.getvalue()


def test_purge_deletes_what_was_archived_long_ago_with_its_own_rows_and_audits_it():
    dataset = archived(DatasetFactory(name="old-set"), days_ago=31)
    run = archived(JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED), days_ago=31)
    JudgmentFactory(run=run, item__dataset=dataset)
    campaign = archived(CampaignFactory(slug="old-camp", dataset=dataset), days_ago=40)
    VoteFactory(campaign=campaign, item__dataset=dataset)
    study = archived(StudyFactory(slug="old-study"), days_ago=60)
    SubmissionFactory(study=study)
    recent = archived(DatasetFactory(name="recent-set"), days_ago=29)
    live = DatasetFactory(name="live-set")

    out = purge()

    assert "deleted campaign old-camp" in out and f"deleted run {run.pk}" in out
    assert "deleted dataset old-set" in out and "deleted study old-study" in out
    assert not JudgeRun.objects.filter(pk=run.pk).exists() and Judgment.objects.count() == 0
    assert not Campaign.objects.exists() and Vote.objects.count() == 0
    assert not Study.objects.exists() and Submission.objects.count() == 0
    assert set(Dataset.objects.values_list("name", flat=True)) == {recent.name, live.name}
    events = AuditEvent.objects.filter(action="purged")
    assert sorted(events.values_list("target", flat=True)) == sorted(
        ["campaign:old-camp", f"run:{run.pk}", "dataset:old-set", "study:old-study"]
    )
    first = events.get(target="dataset:old-set")
    assert first.details["changes"]["exists"] == [True, False]
    assert first.details["changes"]["archived_at"][1] is None
    assert first.workspace_id == dataset.workspace_id
    assert purge() == "Nothing archived more than 30 days ago.\n"


def test_purge_keeps_a_dataset_a_live_run_or_campaign_still_uses_and_says_which():
    dataset = archived(DatasetFactory(name="used-set"), days_ago=31)
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    CampaignFactory(slug="live-camp", dataset=dataset)
    study = archived(StudyFactory(slug="used-study"), days_ago=31)
    DatasetFactory(name="from-study", study=study)

    out = purge()

    assert f"kept dataset used-set: still referred to by run #{run.pk}, campaign live-camp" in out
    assert "kept study used-study: still referred to by dataset from-study" in out
    assert Dataset.objects.filter(name="used-set").exists() and Study.objects.filter(slug="used-study").exists()
    assert not AuditEvent.objects.filter(action="purged").exists()


def test_a_frozen_version_a_manifest_cites_is_never_purged():
    working = DatasetFactory(name="work")
    frozen = archived(
        DatasetFactory(name="work@v1", frozen_at=timezone.now(), frozen_from=working, version=1), days_ago=90
    )
    other = DatasetFactory(name="elsewhere")
    citing = JudgeRunFactory(dataset=other, manifest={"dataset": {"id": frozen.pk, "name": frozen.name}})

    out = purge()

    assert f"kept dataset work@v1: still referred to by run #{citing.pk}'s manifest" in out
    assert Dataset.objects.filter(pk=frozen.pk).exists()


def test_a_dry_run_deletes_nothing():
    archived(DatasetFactory(name="old-set"), days_ago=31)
    assert purge("--dry-run") == "would delete dataset old-set\n"
    assert Dataset.objects.filter(name="old-set").exists()


def test_archive_days_is_a_setting(settings):
    settings.ARCHIVE_DAYS = 5
    archived(DatasetFactory(name="week-old"), days_ago=6)
    assert "deleted dataset week-old" in purge()
