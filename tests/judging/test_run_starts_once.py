"""A run starts once: the same /runs/new/ preview submitted again (the back button, then the button
again) shows the run it started; `POST /api/runs/` with an Idempotency-Key gives the same run for
the same key and values, and a 409 naming the values that differ."""

import re

import pytest
from django.db import IntegrityError
from django.urls import reverse

from judging.models import JudgeRun
from judging.runs.creation import run_create, run_spec_by_names
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def answered(db):
    dataset = DatasetFactory(name="once")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta")]
    for n in range(3):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} answers {n}")
    return dataset, models


def page_form(dataset, models, **changes):
    return {
        "dataset": dataset.name, "mode": "pointwise", "endpoint": "default", "judge_model": "judge-m",
        "candidates": [model.pk for model in models], "template_set": "urs", "concurrency": "4",
        "temperature": "0", "max_tokens": "", "seed": "", "action": "preview", **changes,
    }  # fmt: skip


def previewed(client, data):
    text = client.post(reverse("judging:run-new"), data).text
    fingerprint = re.search(r'name="previewed" value="([0-9a-f]+)"', text).group(1)
    token = re.search(r'name="start_token" value="([^"]+)"', text).group(1)
    return fingerprint, token


def test_the_same_preview_submitted_twice_starts_one_run(client_as, researcher, answered):
    dataset, models = answered
    client = client_as(researcher)
    data = page_form(dataset, models)
    fingerprint, token = previewed(client, data)
    start = {**data, "action": "start", "previewed": fingerprint, "start_token": token}
    first = client.post(reverse("judging:run-new"), start)
    run = JudgeRun.objects.get()
    assert first["Location"] == reverse("judging:run-detail", args=[run.pk])
    assert run.start_key == f"page:{token}"

    # Back, and the button again: the run already started, no second one.
    again = client.post(reverse("judging:run-new"), start, follow=True)
    assert JudgeRun.objects.count() == 1
    assert again.redirect_chain[-1][0] == reverse("judging:run-detail", args=[run.pk])
    assert f"Run #{run.pk} was already started from this preview: here it is (no second run was made)." in again.text

    # A new preview is a new token: the researcher who wants the same run twice asks twice.
    fingerprint, second_token = previewed(client, data)
    assert second_token != token
    client.post(reverse("judging:run-new"), {**start, "previewed": fingerprint, "start_token": second_token})
    assert JudgeRun.objects.count() == 2


def test_a_preview_token_belongs_to_its_researcher(client_as, researcher, answered):
    dataset, models = answered
    data = page_form(dataset, models)
    fingerprint, token = previewed(client_as(researcher), data)
    start = {**data, "action": "start", "previewed": fingerprint, "start_token": token}
    client_as(researcher).post(reverse("judging:run-new"), start)
    colleague = UserFactory(username="colleague", roles=["researcher"])
    client_as(colleague).post(reverse("judging:run-new"), start)
    assert sorted(JudgeRun.objects.values_list("created_by__username", flat=True)) == ["colleague", researcher.username]


PAYLOAD = {"dataset": "once", "mode": "pointwise", "judge_model": "j", "models": ["alpha", "beta"]}


def post(client, payload, key=None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(reverse("api-runs"), payload, content_type="application/json", headers=headers)


def test_the_api_starts_one_run_per_idempotency_key(client_as, researcher, answered):
    client = client_as(researcher)
    first = post(client, PAYLOAD, key="paper-run-1")
    assert first.status_code == 201 and first["Idempotent-Replayed"] == "false"
    again = post(client, PAYLOAD, key="paper-run-1")
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"] and JudgeRun.objects.count() == 1
    # The same values written otherwise (defaults spelt out) are the same request.
    spelt = post(client, {**PAYLOAD, "both_orders": False, "temperature": 0.0}, key="paper-run-1")
    assert spelt.status_code == 200 and spelt.json()["id"] == first.json()["id"]
    # Another key, or none, is another run.
    assert post(client, PAYLOAD, key="paper-run-2").status_code == 201
    assert post(client, PAYLOAD).status_code == 201 and JudgeRun.objects.count() == 3


def test_the_same_key_with_other_values_is_a_409_naming_them(client_as, researcher, answered):
    client = client_as(researcher)
    run_id = post(client, PAYLOAD, key="k").json()["id"]
    response = post(client, {**PAYLOAD, "models": ["alpha"], "judge_model": "other"}, key="k")
    assert response.status_code == 409
    assert response.json() == {
        "detail": f"This Idempotency-Key already started run #{run_id} with other values: judge_model, models.",
        "fields": ["judge_model", "models"],
        "run": run_id,
    }
    assert JudgeRun.objects.count() == 1


def test_a_key_is_per_person_and_bounded(client_as, researcher, answered):
    post(client_as(researcher), PAYLOAD, key="shared")
    colleague = UserFactory(username="colleague", roles=["researcher"])
    assert post(client_as(colleague), PAYLOAD, key="shared").status_code == 201
    too_long = post(client_as(colleague), PAYLOAD, key="x" * 201)
    assert too_long.status_code == 400 and "Idempotency-Key" in too_long.json()["detail"]
    assert JudgeRun.objects.count() == 2


def test_the_database_refuses_a_second_run_with_the_same_key(researcher, answered):
    # What makes two simultaneous starts one run: the second row is refused, then read.
    spec = run_spec_by_names(**PAYLOAD, user=researcher)
    run_create(spec=spec, created_by=researcher, start_key="api:race")
    with pytest.raises(IntegrityError):
        run_create(spec=spec, created_by=researcher, start_key="api:race")
    assert JudgeRun.objects.count() == 1
