"""Manifests, re-runs and judge drift end to end, against a loopback judge whose drift is set by
construction: the manifest's hashes match independent computations and hold no key, `rerun`
makes an identical run with the exact template versions and fresh calls, and `compare` recovers
the drift the test built in."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import translation

from annotation.campaigns import campaign_create
from core import __version__
from curation.models import Item
from judging.engine.execution import run_execute_inline
from judging.errors import RunError
from judging.models import Answer, CandidateModel, JudgeRun
from judging.prompts.templates import template_copy, template_revise
from judging.results.compare import runs_compare
from judging.results.figures import run_figures_refresh
from judging.runs.creation import run_create
from judging.runs.manifest import dataset_content_hash
from judging.runs.rerun import run_rerun
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging import simulated


@pytest.fixture(autouse=True)
def back_to_the_default_language():
    """A page asked for in Chinese leaves Chinese active in this thread: later tests expect English."""
    yield
    translation.deactivate()


pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "sk-test-manifest-0123456789"


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


@pytest.fixture
def endpoint_row(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", SECRET)
    return Endpoint.objects.create(
        name="fake", base_url=fake_llm.base_url, api_key_env="FAKE_JUDGE_API_KEY", max_in_flight=8, timeout_seconds=5
    )


def independent_dataset_hash(dataset) -> str:
    """Written apart from judging/runs/manifest.py: one canonical JSON line per item, in id order."""
    fields = [
        "external_id",
        "question",
        "reference",
        "intent",
        "category",
        "subcategory",
        "language",
        "country",
        "metadata",
        "excluded",
    ]
    digest = hashlib.sha256()
    for item in Item.objects.filter(dataset=dataset).order_by("id"):
        line = json.dumps([getattr(item, f) for f in fields], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()


def score_judge(base: dict[str, int], salt: str):
    """Pointwise: each model's base score plus a coin in {-1, 0, 1} fixed by the prompt and salt."""

    def score_of(external_id, model, prompt):
        return base[model] + int(simulated.uniform(prompt, salt) * 3) - 1

    return simulated.pointwise_judge(score_of)


@pytest.fixture
def judged(fake_llm, endpoint_row):
    dataset = simulated.build_dataset("drift", {"alpha": [400] * 40, "beta": [600] * 40})
    alpha = CandidateModel.objects.get(name="alpha")
    Answer.objects.filter(model=alpha).update(
        origin=Answer.Origin.GENERATED, parameters={"temperature": 0.7, "max_tokens": 512, "cached": False}
    )
    fake_llm.reply = score_judge({"alpha": 8, "beta": 6}, "first")
    fake_llm.reported_model = "judge-m-2024-08-06"
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=list(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
            endpoint=endpoint_row,
            seed=42,
            concurrency=8,
            max_tokens=300,
        ),
    )
    run_execute_inline(run=run)
    return run


def test_the_manifest_records_what_the_run_was_made_from_and_no_key(judged, fake_llm):
    run = JudgeRun.objects.get(pk=judged.pk)
    m = run.manifest
    assert m["format"] == "userbench-run-manifest/1" and m["userbench_version"] == __version__
    assert m["dataset"]["content_hash"] == independent_dataset_hash(run.dataset)
    assert m["dataset"]["items"] == 40 and m["dataset"]["name"] == "drift"
    template = run.templates.get()
    assert m["templates"] == [
        {
            "id": template.pk,
            "name": "urs/factual_qa/en",
            "version": template.version,
            "mode": "pointwise",
            "language": "en",
            "text_hash": hashlib.sha256(template.text.encode()).hexdigest(),
        }
    ]
    assert m["judge"]["model"] == "judge-m" and m["judge"]["max_tokens"] == 300 and m["seeds"]["pair_order"] == 42
    assert m["endpoint"] == {"name": "fake", "base_url": fake_llm.base_url}
    alpha, beta = m["candidates"]
    assert alpha["generation"] == [{"parameters": {"max_tokens": 512, "temperature": 0.7}, "answers": 40}]
    assert alpha["origins"] == {"generated": 40} and beta["origins"] == {"imported": 40}
    expected = hashlib.sha256()
    for answer in Answer.objects.filter(model__name="alpha").order_by("item_id").select_related("item"):
        expected.update(json.dumps([answer.item.external_id, answer.text], separators=(",", ":")).encode() + b"\n")
    assert alpha["answers_hash"] == expected.hexdigest()
    # The endpoint's own name for its model, counted over the replies.
    assert run.judgments.filter(reported_model="judge-m-2024-08-06").count() == 80
    assert SECRET not in json.dumps(run.manifest) and "FAKE_JUDGE_API_KEY" not in json.dumps(run.manifest)


def test_the_dataset_hash_follows_the_content_not_the_rows(judged):
    dataset = judged.dataset
    before = dataset_content_hash(dataset=dataset)
    copy = simulated.build_dataset("copy", {"alpha": [400] * 40, "beta": [600] * 40})
    assert dataset_content_hash(dataset=copy) == before
    Item.objects.filter(dataset=dataset, external_id="q003").update(question="Question 3, edited?")
    assert dataset_content_hash(dataset=dataset) != before


def test_rerun_is_identical_asks_again_and_compare_recovers_the_drift(judged, fake_llm, client):
    calls = fake_llm.count
    # A newer template version exists by now: the re-run keeps the exact version the run used.
    used = judged.templates.get()
    # Built-in templates are changed through a copy in the workspace (which a new run would take).
    copy, _made = template_copy(template=used, workspace=judged.dataset.workspace)
    template_revise(template=copy, text=copy.text + "\n")
    # The judge drifted: alpha falls 3 points, beta rises 1.
    fake_llm.reply = score_judge({"alpha": 5, "beta": 7}, "second")
    out = StringIO()
    call_command("rerun", str(judged.pk), "--inline", stdout=out)
    rerun = JudgeRun.objects.exclude(pk=judged.pk).get(dataset=judged.dataset)
    assert (
        f"Run {rerun.pk}: a re-run of run {judged.pk}, 80 judgments in 1 shards (seed 42, fresh calls)."
        in out.getvalue()
    )
    assert f"compare {judged.pk} {rerun.pk}" in out.getvalue()
    assert rerun.rerun_of_id == judged.pk and rerun.fresh_calls and rerun.seed == 42
    assert list(rerun.templates.all()) == [used] and rerun.judgments.filter(template=used).count() == 80
    assert fake_llm.count == calls + 80 and rerun.judgments.filter(cached=True).count() == 0
    assert rerun.manifest["rerun_of"] == judged.pk and rerun.manifest["judge"]["fresh_calls"] is True

    report = runs_compare(run_a=judged, run_b=rerun, rounds=500)
    assert report["units"] == 80 and report["only_a"] == report["only_b"] == 0
    models = {row["model"]: row for row in report["models"]["models"]}
    assert models["alpha"]["low"] < -3 < models["alpha"]["high"]
    assert models["beta"]["low"] < 1 < models["beta"]["high"]
    assert (models["alpha"]["rank_a"], models["alpha"]["rank_b"], models["alpha"]["moved"]) == (1, 2, -1)
    assert report["shift"]["low"] < -1 < report["shift"]["high"]
    assert report["verdicts"]["kappa"] < 0.2
    assert [change["field"] for change in report["manifest_changes"]] == ["judge.fresh_calls"]

    out = StringIO()
    call_command("compare", str(judged.pk), str(rerun.pk), "--bootstrap", "100", stdout=out)
    text = out.getvalue()
    assert "80 units judged by both" in text and "mean shift (b - a)" in text and "moved -1" in text
    assert "judge.fresh_calls: False -> True" in text
    out = StringIO()
    call_command("compare", str(judged.pk), str(rerun.pk), "--format", "json", "--bootstrap", "0", stdout=out)
    assert json.loads(out.getvalue())["models"]["models"][0]["model"] == "beta"

    client.force_login(UserFactory(username="m-res", roles=["researcher"]))
    run_figures_refresh(run_id=rerun.pk)  # what the background task does once the run closes
    html = client.get(reverse("judging:run-detail", args=[rerun.pk])).content.decode()
    assert f"Drift against run #{judged.pk}" in html and 'id="drift-models"' in html
    manifest_section = html[html.index('id="manifest"') :]
    assert hashlib.sha256(used.text.encode()).hexdigest()[:12] in manifest_section
    assert reverse("judging:run-manifest", args=[rerun.pk]) in html
    download = client.get(reverse("judging:run-manifest", args=[rerun.pk]))
    assert download["Content-Disposition"] == f'attachment; filename="run-{rerun.pk}-manifest.json"'
    manifest = json.loads(download.content)
    assert manifest["judge_reported_models"] == {"judge-m-2024-08-06": 80} and manifest["rerun_of"] == judged.pk
    assert SECRET not in download.content.decode()
    api = client.get(reverse("api-run-manifest", args=[rerun.pk])).json()
    assert api["dataset"]["content_hash"] == judged.manifest["dataset"]["content_hash"]
    html_zh = client.get(reverse("judging:run-detail", args=[rerun.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans").content
    assert "清单" in html_zh.decode()


def test_a_cached_rerun_reads_back_the_same_replies(judged, fake_llm):
    calls = fake_llm.count
    fake_llm.reply = score_judge({"alpha": 1, "beta": 1}, "ignored")
    rerun = run_rerun(run=judged, fresh_calls=False)
    run_execute_inline(run=rerun)
    assert fake_llm.count == calls and rerun.judgments.filter(cached=True).count() == 80
    report = runs_compare(run_a=judged, run_b=rerun, rounds=50)
    assert report["verdicts"]["agreement"]["rate"] == 1.0 and report["shift"]["shift"] == 0.0


def test_rerun_refuses_changed_data_and_names_every_change(judged, client):
    Item.objects.filter(dataset=judged.dataset, external_id="q000").update(reference="Another reference.")
    Answer.objects.filter(model__name="beta", item__external_id="q001").update(text="changed")
    with pytest.raises(RunError) as refused:
        run_rerun(run=judged)
    message = str(refused.value)
    assert message.startswith("An identical run is not possible:\nDataset 'drift' changed since run")
    assert f"The answers of beta on 'drift' changed since run {judged.pk}." in message
    assert "alpha" not in message
    assert JudgeRun.objects.count() == 1
    with pytest.raises(CommandError, match="Allow the changes"):
        call_command("rerun", str(judged.pk), "--no-wait")
    allowed = run_rerun(run=judged, allow_changes=True)
    assert len(allowed.manifest["changes_since_original"]) == 2

    client.force_login(UserFactory(username="m-res2", roles=["researcher"]))
    page = client.post(reverse("judging:run-action", args=[judged.pk, "rerun"]), follow=True)
    assert "An identical run is not possible" in page.content.decode()


def test_compare_refuses_runs_of_two_modes(judged, endpoint_row):
    pairwise = run_create(
        spec=RunSpec(
            dataset=judged.dataset,
            mode="pairwise",
            judge_model="judge-m",
            candidates=[CandidateModel.objects.get(name="alpha")],
            reference_model=CandidateModel.objects.get(name="beta"),
            endpoint=endpoint_row,
        ),
    )
    with pytest.raises(CommandError, match=f"Run {judged.pk} is pointwise and run {pairwise.pk} is pairwise"):
        call_command("compare", str(judged.pk), str(pairwise.pk))
    with pytest.raises(CommandError, match="No judge run 999"):
        call_command("compare", str(judged.pk), "999")


def test_a_campaign_records_its_manifest(judged, client):
    annotators = [UserFactory(username=f"m-ann{k}", roles=["annotator"]) for k in range(2)]
    campaign = campaign_create(
        slug="manifested",
        title="Manifested",
        dataset=judged.dataset,
        candidates=list(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
        question_count=10,
        annotators=annotators,
        seed=9,
    )
    m = campaign.manifest
    assert m["format"] == "userbench-campaign-manifest/1" and m["userbench_version"] == __version__
    assert m["dataset"]["content_hash"] == judged.manifest["dataset"]["content_hash"]
    assert [c["answers_hash"] for c in m["candidates"]] == [c["answers_hash"] for c in judged.manifest["candidates"]]
    assert m["design"]["pairs_drawn"] == 10 and m["design"]["annotators"] == 2 and m["seeds"] == {"pairs": 9}
    client.force_login(UserFactory(username="m-res3", roles=["researcher"]))
    assert client.get(reverse("api-campaign-manifest", args=["manifested"])).json()["seeds"] == {"pairs": 9}
    html = client.get(reverse("annotation:results", args=["manifested"]) + "?rounds=0").content.decode()
    assert 'id="campaign-manifest"' in html and m["dataset"]["content_hash"] in html
