"""Judgment and answer exports of a study's dataset are audited (they quote participants'
questions and reply to them), from the API and the command line; those of other datasets are not.
Before, neither was ever audited."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from core.models import AuditEvent
from tests.factories import (
    AnswerFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_data():
    dataset = DatasetFactory(name="from-study", study=StudyFactory(slug="s"))
    item = ItemFactory(dataset=dataset, question="my landlord's name is ...")
    answer = AnswerFactory(item=item)
    run = JudgeRunFactory(dataset=dataset)
    JudgmentFactory(run=run, item=item, model=answer.model)
    return dataset, run


@pytest.fixture
def public_data():
    dataset = DatasetFactory(name="public")
    item = ItemFactory(dataset=dataset)
    answer = AnswerFactory(item=item)
    run = JudgeRunFactory(dataset=dataset)
    JudgmentFactory(run=run, item=item, model=answer.model)
    return dataset, run


def test_judgment_and_answer_exports_of_a_study_dataset_are_audited(client, researcher, study_data):
    dataset, run = study_data
    client.force_login(researcher)
    for what, query in (
        ("judgments", {"dataset": dataset.name}),
        ("judgments", {"run": run.pk}),
        ("judgments", {"study": "s"}),
        ("answers", {"dataset": dataset.name}),
    ):
        assert client.get(reverse("api-export", args=[what]), query).status_code == 200, (what, query)
    events = list(AuditEvent.objects.order_by("pk").values_list("actor", "action", "target", "details"))
    assert events == [
        (researcher.pk, "export", "export:judgments", {"dataset": "from-study", "via": "api"}),
        (researcher.pk, "export", "export:judgments", {"run": str(run), "via": "api"}),
        (researcher.pk, "export", "export:judgments", {"study": "s", "via": "api"}),
        (researcher.pk, "export", "export:answers", {"dataset": "from-study", "via": "api"}),
    ]


def test_the_command_line_exports_are_audited_too(study_data):
    call_command("export", "--dataset", "from-study", "--what", "judgments", stdout=io.StringIO())
    call_command("export", "--dataset", "from-study", "--what", "answers", stdout=io.StringIO())
    targets = list(AuditEvent.objects.order_by("pk").values_list("actor", "target"))
    assert targets == [(None, "export:judgments"), (None, "export:answers")]


def test_exports_of_other_datasets_are_not(client, researcher, public_data):
    dataset, run = public_data
    client.force_login(researcher)
    for what, query in (
        ("judgments", {"dataset": "public"}),
        ("judgments", {"run": run.pk}),
        ("answers", {"dataset": "public"}),
    ):
        assert client.get(reverse("api-export", args=[what]), query).status_code == 200
    assert AuditEvent.objects.count() == 0
