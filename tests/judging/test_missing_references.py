"""No judging against a missing reference.

As reported: a dataset froze with no reference answers (the drafting job had failed) and a
reference-anchored URS run then sent the judge `[参考答案开始]\n\n[参考答案结束]`, ranking the
models as usual, with no warning anywhere. Now a freeze says how many items lack a reference and
asks for a confirmation (page, API, `freeze_dataset`); a run whose templates use `{reference}`
refuses such items at creation, naming how many and where references are drafted, unless the
researcher excludes them explicitly (recorded in the manifest); `reproduce` and `rerun` do the same.
"""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from curation.datasets.services import MissingReferences, dataset_freeze
from curation.models import Dataset
from judging.benchmarks.registry import benchmarks
from judging.errors import RunError
from judging.models import JudgeRun
from judging.papers.reproduce import ReproduceError, reproduction_run
from judging.runs.creation import run_create
from judging.runs.rerun import run_rerun
from judging.runs.spec import RunSpec
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def working():
    """A working dataset of five accepted items, two of them without a reference answer."""
    dataset = DatasetFactory(name="draft-failed")
    for n in range(5):
        ItemFactory(dataset=dataset, external_id=f"w{n}", reference="" if n in (1, 3) else "A reference.")
    return dataset


def test_a_freeze_without_confirmation_says_how_many_lack_a_reference_and_writes_nothing(working):
    with pytest.raises(MissingReferences) as refused:
        dataset_freeze(dataset=working)
    assert (refused.value.missing, refused.value.total) == (2, 5)
    assert str(refused.value).startswith("2 of 5 items have no reference answer")
    assert not Dataset.objects.filter(frozen_from=working).exists()
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    assert version.items.filter(reference="").count() == 2


def test_the_freeze_page_shows_the_count_and_asks_for_a_confirmation(working, client, researcher):
    client.force_login(researcher)
    page = client.get(reverse("curation:review-dataset", args=[working.pk])).content.decode()
    assert "2 of these 5 items have no reference answer" in page
    assert '<input type="checkbox" name="confirm_missing_references" required>' in page
    assert '<a href="#background-jobs">Draft references for items without one</a>' in page
    url = reverse("curation:review-freeze", args=[working.pk])
    refused = client.post(url, follow=True).content.decode()
    assert "2 of 5 items have no reference answer" in refused
    assert not Dataset.objects.filter(frozen_from=working).exists()
    client.post(url, {"confirm_missing_references": "on"})
    assert Dataset.objects.get(frozen_from=working).name == "draft-failed@v1"


def test_the_freeze_api_refuses_with_the_count_until_confirmed(working, client, researcher):
    client.force_login(researcher)
    url = reverse("api-dataset-freeze", args=["draft-failed"])
    refused = client.post(url, {}, content_type="application/json")
    assert refused.status_code == 400
    body = refused.json()
    assert body["missing_references"] == 2 and body["items"] == 5
    assert body["confirm_missing_references"][0].startswith("2 of 5 items have no reference answer")
    assert not Dataset.objects.filter(frozen_from=working).exists()
    done = client.post(url, {"confirm_missing_references": True}, content_type="application/json")
    assert done.status_code == 201
    assert done.json() == {"name": "draft-failed@v1", "version": 1, "items": 5, "missing_references": 2}


def test_freeze_dataset_refuses_with_the_count_until_confirmed(working):
    with pytest.raises(CommandError, match="2 of 5 items have no reference answer.*--confirm-missing-references"):
        call_command("freeze_dataset", "draft-failed")
    out = io.StringIO()
    call_command("freeze_dataset", "draft-failed", "--confirm-missing-references", stdout=out)
    assert "draft-failed@v1: 5 items frozen." in out.getvalue()


@pytest.fixture
def frozen(working):
    version = dataset_freeze(dataset=working, confirm_missing_references=True)
    model = CandidateModelFactory(name="cand")
    for item in version.items.all():
        AnswerFactory(item=item, model=model, text="An answer.")
    return version, model


def test_a_reference_anchored_run_refuses_items_without_a_reference(frozen):
    version, model = frozen
    spec = RunSpec(dataset=version, mode="pointwise", judge_model="judge", candidates=[model])
    with pytest.raises(RunError) as refused:
        run_create(spec=spec)
    message = str(refused.value)
    assert message.startswith("2 of the 5 items judged have no reference answer")
    assert f"/review/datasets/{version.frozen_from_id}/#background-jobs" in message
    assert refused.value.parameter == "exclude_missing_references"
    assert not JudgeRun.objects.exists()


def test_excluding_them_explicitly_leaves_them_out_and_the_manifest_says_so(frozen):
    version, model = frozen
    spec = RunSpec(
        dataset=version, mode="pointwise", judge_model="judge", candidates=[model], exclude_missing_references=True
    )
    run = run_create(spec=spec)
    judged = {unit[0] for shard in run.shards.all() for unit in shard.units}
    assert sorted(version.items.filter(pk__in=judged).values_list("external_id", flat=True)) == ["w0", "w2", "w4"]
    assert run.total == 3
    assert run.manifest["exclude_missing_references"] is True
    assert run.manifest["excluded_without_reference"] == {"count": 2, "items": ["w1", "w3"]}
    # A re-run makes the same choice, as the manifest records it.
    again = run_rerun(run=run)
    assert again.total == 3 and again.manifest["excluded_without_reference"]["count"] == 2


def test_a_reference_model_supplies_the_reference_so_nothing_is_refused(frozen):
    version, model = frozen
    other = CandidateModelFactory(name="ref-model")
    for item in version.items.all():
        AnswerFactory(item=item, model=other, text="Reference by a model.")
    run = run_create(
        spec=RunSpec(dataset=version, mode="pointwise", judge_model="j", candidates=[model], reference_model=other)
    )
    assert run.total == 5 and run.manifest["excluded_without_reference"]["count"] == 0


def test_the_api_page_and_judge_command_refuse_alike(frozen, client, researcher):
    version, _model = frozen
    client.force_login(researcher)
    body = {"dataset": version.name, "mode": "pointwise", "judge_model": "j", "models": ["cand"]}
    refused = client.post(reverse("api-runs"), body, content_type="application/json")
    assert refused.status_code == 400
    assert "2 of the 5 items judged have no reference answer" in str(refused.json())
    created = client.post(
        reverse("api-runs"), {**body, "exclude_missing_references": True}, content_type="application/json"
    )
    assert created.status_code == 201
    page = client.post(
        reverse("judging:run-new"),
        {
            "dataset": version.name,
            "mode": "pointwise",
            "judge_model": "j",
            "endpoint": "default",
            "candidates": [str(_model.pk)],
            "template_set": "urs",
            "temperature": "0",
            "action": "preview",
        },
    ).content.decode()
    assert "2 of the 5 items judged have no reference answer" in page
    assert 'name="exclude_missing_references"' in page
    with pytest.raises(CommandError, match="2 of the 5 items judged .*\\(--exclude-missing-references\\)"):
        call_command(
            "judge",
            "--dataset",
            version.name,
            "--mode",
            "pointwise",
            "--models",
            "cand",
            "--judge-model",
            "j",
            "--no-wait",
        )


def test_reproduce_refuses_them_too_unless_excluded(frozen):
    version, _model = frozen
    arguments = dict(
        benchmark=benchmarks()["urs"],
        dataset=version,
        judge_model="judge",
        models=["cand"],
        reference_model=None,
        endpoint_name=None,
        concurrency=4,
    )
    with pytest.raises(ReproduceError, match="2 of the 5 items judged have no reference answer"):
        reproduction_run(**arguments)
    run, _notes = reproduction_run(**arguments, exclude_missing_references=True)
    assert run.total == 3 and run.manifest["excluded_without_reference"]["items"] == ["w1", "w3"]
