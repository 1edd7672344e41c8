"""The run and campaign forms carry the workspace they were drawn in: sent after the person
switched to another workspace (in another tab, say), they are refused with a clear message and
nothing is created; in the workspace they were drawn in they work as before."""

import re

import pytest
from django.urls import reverse

from annotation.models import Campaign
from core.models import Workspace
from core.workspaces import membership_set
from judging.models import JudgeRun
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def both(client):
    """A researcher of lab-a and lab-b, signed in, working in lab-a; lab-a's dataset "data-a" answered
    by alpha and beta, with annotator ann in lab-a."""
    lab_a = Workspace.objects.create(slug="lab-a", name="Lab A")
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab B")
    person = UserFactory(username="both", roles=["researcher"], roles__workspace=lab_a)
    membership_set(user=person, workspace=lab_b, roles=["researcher"])
    UserFactory(username="ann", roles=["annotator"], roles__workspace=lab_a)
    dataset = DatasetFactory(name="data-a", workspace=lab_a)
    models = [CandidateModelFactory(name=name, workspace=lab_a) for name in ("alpha", "beta")]
    for n in range(3):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} on {n}")
    client.force_login(person)
    switch(client, "lab-a")
    return client, dataset, models


def switch(client, slug):
    assert client.post(reverse("workspace-switch"), {"workspace": slug, "next": "/dashboard/"}).status_code == 302


def drawn_in(page: str) -> str:
    return re.search(r'name="drawn_workspace" value="([^"]*)"', page).group(1)


def run_form(dataset, models, **changes):
    return {
        "dataset": dataset.name,
        "mode": "pointwise",
        "endpoint": "default",
        "judge_model": "judge-m",
        "candidates": [model.pk for model in models],
        "template_set": "urs",
        "concurrency": "4",
        "temperature": "0",
        "action": "preview",
        **changes,
    }


def campaign_form(**changes):
    return {
        "title": "Pilot",
        "slug": "pilot-a",
        "dataset": "data-a",
        "candidates": ["alpha", "beta"],
        "sampling": "fixed",
        "question_count": "3",
        "pairs_per_question": "1",
        "votes_per_pair": "1",
        "annotators": ["ann"],
        "gold_every": "0",
        "seed": "1",
        **changes,
    }


def test_the_run_form_sent_after_switching_is_refused_and_starts_nothing(both):
    client, dataset, models = both
    page = client.get(reverse("judging:run-new"), {"dataset": "data-a"}).text
    assert drawn_in(page) == "lab-a"
    previewed = client.post(reverse("judging:run-new"), run_form(dataset, models, drawn_workspace="lab-a"))
    assert previewed.status_code == 200 and drawn_in(previewed.text) == "lab-a"
    fingerprint = re.search(r'name="previewed" value="([0-9a-f]+)"', previewed.text).group(1)
    switch(client, "lab-b")
    start = run_form(dataset, models, action="start", previewed=fingerprint, drawn_workspace="lab-a")
    refused = client.post(reverse("judging:run-new"), start)
    assert refused.status_code == 400
    assert "You switched workspace" in refused.text and "This form was opened in the workspace lab-a." in refused.text
    assert "You have since switched to lab-b." in refused.text
    assert not JudgeRun.objects.exists()


def test_the_campaign_form_sent_after_switching_is_refused_and_creates_nothing(both):
    client, _dataset, _models = both
    page = client.get(reverse("annotation:campaign-new"), {"dataset": "data-a"}).text
    assert drawn_in(page) == "lab-a"
    switch(client, "lab-b")
    refused = client.post(reverse("annotation:campaign-new"), campaign_form(drawn_workspace="lab-a"))
    assert refused.status_code == 400 and "This form was opened in the workspace lab-a." in refused.text
    assert not Campaign.objects.exists()
    # Opened across all workspaces, sent after choosing one: refused too.
    switch(client, "")
    assert drawn_in(client.get(reverse("annotation:campaign-new")).text) == ""
    switch(client, "lab-a")
    refused = client.post(reverse("annotation:campaign-new"), campaign_form(drawn_workspace=""))
    assert refused.status_code == 400 and "This form was opened across all your workspaces." in refused.text
    assert not Campaign.objects.exists()
    # Sent in the workspace it was drawn in, it makes the campaign there.
    made = client.post(reverse("annotation:campaign-new"), campaign_form(drawn_workspace="lab-a"))
    assert made.status_code == 302, made.text
    assert Campaign.objects.get().workspace.slug == "lab-a"


def test_the_forms_speak_chinese_when_refused(both):
    client, _dataset, _models = both
    client.cookies["django_language"] = "zh-hans"
    switch(client, "lab-b")
    refused = client.post(reverse("annotation:campaign-new"), campaign_form(drawn_workspace="lab-a"))
    assert refused.status_code == 400 and "lab-a" in refused.text and "You switched workspace" not in refused.text
