"""A dataset is not archived while anything still uses it: a run or campaign not archived, or a
generation, stored answers upload or curation job at work. The page and the API refuse it with
the same message, naming what uses it, and nothing changes; once those are archived (or done) it
is archived. Archived work thus stays absent from every list and queue."""

import pytest
from django.urls import reverse

from annotation.models import Campaign
from core.models import AuditEvent, Workspace
from curation.models import CurationJob, Dataset
from judging.models import AnswerGeneration, AnswerUpload, JudgeRun
from tests.factories import CampaignFactory, CandidateModelFactory, DatasetFactory, JudgeRunFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def used(db):
    """A dataset with a finished run and a campaign with its annotator on it."""
    dataset = DatasetFactory(name="inuse")
    annotator = UserFactory(username="ann", roles=["annotator"])
    campaign = CampaignFactory(slug="inuse-camp", dataset=dataset)
    campaign.annotators.add(annotator)
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    return {"dataset": dataset, "campaign": campaign, "run": run, "annotator": annotator}


def archive_api(client, name="inuse"):
    return client.post(reverse("api-dataset-archive", args=[name]))


def fresh(obj):
    return type(obj)._default_manager.get(pk=obj.pk)


def test_the_page_and_the_api_refuse_while_a_run_and_a_campaign_use_it_and_nothing_changes(client_as, researcher, used):
    client = client_as(researcher)
    page = client.post(reverse("curation:dataset-archive", args=[used["dataset"].pk]), follow=True)
    said = page.content.decode()
    assert "Dataset inuse cannot be archived while it is in use" in said
    assert f"run #{used['run'].pk}, campaign inuse-camp" in said
    assert "Archive those runs and campaigns first" in said
    refused = archive_api(client)
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert f"in use: run #{used['run'].pk}, campaign inuse-camp. Archive those" in detail
    # Nothing changed: the dataset is listed, the campaign is in its annotator's queue, no audit.
    assert fresh(used["dataset"]).archived_at is None
    assert "inuse" in client.get(reverse("curation:datasets")).content.decode()
    assert not AuditEvent.objects.filter(target="dataset:inuse").exists()
    queue = client_as(used["annotator"]).get(reverse("annotation:index")).content.decode()
    assert "inuse-camp" in queue


def test_archiving_the_run_and_the_campaign_first_lets_the_dataset_be_archived(client_as, researcher, used):
    client = client_as(researcher)
    assert client.post(reverse("api-run-archive", args=[used["run"].pk])).status_code == 200
    still = archive_api(client)
    assert still.status_code == 400 and "in use: campaign inuse-camp." in still.json()["detail"]
    assert f"run #{used['run'].pk}" not in still.json()["detail"]
    done = client.post(reverse("annotation:campaign-archive", args=["inuse-camp"]), follow=True)
    assert "Archived inuse-camp." in done.content.decode()
    page = client.post(reverse("curation:dataset-archive", args=[used["dataset"].pk]), follow=True)
    assert "Archived inuse." in page.content.decode()
    assert fresh(used["dataset"]).archived_at is not None
    # Restoring the dataset is not held back by anything; the run and campaign then follow it.
    assert client.post(reverse("api-dataset-restore", args=["inuse"])).status_code == 200
    assert client.post(reverse("api-campaign-restore", args=["inuse-camp"])).status_code == 200
    assert Campaign.objects.active().filter(slug="inuse-camp").exists()


def test_work_at_work_on_it_refuses_too_until_it_is_done(client_as, researcher):
    dataset = DatasetFactory(name="busy")
    model = CandidateModelFactory(name="gen-m", workspace=dataset.workspace)
    generation = AnswerGeneration.objects.create(dataset=dataset, model=model, status=AnswerGeneration.Status.RUNNING)
    upload = AnswerUpload.objects.create(dataset=dataset, model_name="up-m", status=AnswerUpload.Status.QUEUED)
    job = CurationJob.objects.create(dataset=dataset, kind=CurationJob.Kind.TRANSLATION, model="x")
    refused = archive_api(client_as(researcher), "busy")
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert (
        f"in use: curation job {job.pk} (Translation and localisation), the generation of gen-m's answers, "
        "the upload of up-m's answers." in detail
    )
    assert "let its generations, uploads and curation jobs finish (or cancel them)" in detail
    AnswerGeneration.objects.filter(pk=generation.pk).update(status=AnswerGeneration.Status.CANCELLED)
    AnswerUpload.objects.filter(pk=upload.pk).update(status=AnswerUpload.Status.FAILED)
    CurationJob.objects.filter(pk=job.pk).update(status=CurationJob.Status.DONE)
    assert archive_api(client_as(researcher), "busy").status_code == 200


def test_a_run_at_work_refuses_it_and_cannot_itself_be_archived(client_as, researcher):
    dataset = DatasetFactory(name="judged")
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.RUNNING)
    client = client_as(researcher)
    assert f"in use: run #{run.pk}." in archive_api(client, "judged").json()["detail"]
    assert client.post(reverse("api-run-archive", args=[run.pk])).status_code == 400
    assert Dataset.objects.active().filter(name="judged").exists()


def test_the_refusal_names_nothing_of_another_workspace(client_as, researcher, used):
    other = Workspace.objects.create(slug="other", name="Other")
    theirs = DatasetFactory(name="inuse", workspace=other)
    CampaignFactory(slug="their-camp", dataset=theirs, workspace=other)
    their_run = JudgeRunFactory(dataset=theirs, workspace=other, status=JudgeRun.Status.FINISHED)
    mine = archive_api(client_as(researcher)).json()["detail"]
    assert f"in use: run #{used['run'].pk}, campaign inuse-camp. Archive" in mine
    assert "their-camp" not in mine and f"#{their_run.pk}," not in mine
    stranger = UserFactory(username="stranger", roles=["researcher"], roles__workspace=other)
    detail = archive_api(client_as(stranger)).json()["detail"]
    assert f"in use: run #{their_run.pk}, campaign their-camp. Archive" in detail
    assert "inuse-camp" not in detail


def test_the_refusal_is_translated(client_as, researcher, used):
    refused = client_as(researcher).post(
        reverse("api-dataset-archive", args=["inuse"]), headers={"accept-language": "zh-hans"}
    )
    assert refused.status_code == 400
    assert "仍在使用" in refused.json()["detail"] and "标注任务 inuse-camp" in refused.json()["detail"]
