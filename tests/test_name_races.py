"""A name taken by two requests at the same moment: both find it free, the database's unique
constraint refuses the second row, and the second is told the clash in the same words as the
check before it (never a server error), with nothing of its own written.

How the interleaving is forced, without timing and without replacing any code of ours: Django's
documented `connection.execute_wrapper` watches the SQL this connection sends, and just before
the service's own INSERT (or UPDATE) of the named table it writes the clashing row, as the other
request's commit would have. The service's check has already run and found the name free, so
only the database's constraint can refuse the row: the very path a real race takes. It runs the
same on SQLite and PostgreSQL."""

import io
import re
from contextlib import contextmanager

import pytest
from django.db import connection

from annotation.campaign_edits import campaign_update
from annotation.campaigns import campaign_create
from annotation.errors import CampaignTitleTaken
from annotation.models import Campaign
from core.models import Workspace
from curation.datasets.importers import DatasetNameError, dataset_import
from curation.datasets.services import VersionError, dataset_freeze, dataset_working_copy
from curation.models import Dataset, Study
from curation.studies.services import StudyError, study_save
from llm.models import Endpoint
from llm.services import EndpointNameTaken, endpoint_save
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    StudyFactory,
)

pytestmark = pytest.mark.django_db


@contextmanager
def taken_just_before_writing(model, make_clash):
    """Calls `make_clash()` once, just before this connection first inserts into or updates
    `model`'s table; yields a list that holds True once it has."""
    table = model._meta.db_table
    written = []

    def before_our_row(execute, sql, params, many, context):
        if not written and re.match(rf'\s*(INSERT INTO|UPDATE) "{table}"', sql):
            written.append(True)
            make_clash()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(before_our_row):
        yield written


def workspace():
    return Workspace.objects.get(slug="default")


ENDPOINT = {"name": "pilot", "base_url": "http://127.0.0.1:9/v1", "api_key_env": ""}


def test_an_endpoint_named_meanwhile_is_named_not_a_server_error():
    def clash():
        Endpoint.objects.create(name="pilot", base_url="http://127.0.0.1:8/v1", workspace=workspace())

    with taken_just_before_writing(Endpoint, clash) as written, pytest.raises(EndpointNameTaken) as refused:
        endpoint_save(endpoint=None, values=dict(ENDPOINT), actor=None)
    assert written == [True]
    assert str(refused.value) == "An endpoint named 'pilot' exists already in this workspace; choose another name."


def test_an_endpoint_renamed_onto_a_name_taken_meanwhile_is_named():
    mine = endpoint_save(endpoint=None, values=dict(ENDPOINT, name="mine"), actor=None)

    def clash():
        Endpoint.objects.create(name="pilot", base_url="http://127.0.0.1:8/v1", workspace=workspace())

    with taken_just_before_writing(Endpoint, clash), pytest.raises(EndpointNameTaken, match="'pilot' exists already"):
        endpoint_save(endpoint=Endpoint.objects.get(pk=mine.pk), values={"name": "pilot"}, actor=None)
    assert Endpoint.objects.get(pk=mine.pk).name == "mine"


def test_a_dataset_imported_under_a_name_taken_meanwhile_is_named():
    def clash():
        DatasetFactory(name="pilot")

    rows = io.BytesIO(b"question,reference_ans,user_intent,language\r\nWhy?,Because.,Factual_QA,EN\r\n")
    with taken_just_before_writing(Dataset, clash) as written, pytest.raises(DatasetNameError) as refused:
        dataset_import(fmt="urs", stream=rows, name="pilot")
    assert written == [True]
    assert str(refused.value) == "A dataset named 'pilot' exists already in this workspace; choose another name."


def test_a_working_copy_and_a_version_named_meanwhile_are_named():
    frozen = DatasetFactory(name="base", frozen_at="2026-01-01T00:00:00Z")
    ItemFactory(dataset=frozen, external_id="q1")
    with (
        taken_just_before_writing(Dataset, lambda: DatasetFactory(name="base-work")),
        pytest.raises(VersionError, match="'base-work' exists already in this workspace; choose another name"),
    ):
        dataset_working_copy(dataset=frozen)
    working = DatasetFactory(name="draft")
    ItemFactory(dataset=working, external_id="w1", reference="A reference.")
    with (
        taken_just_before_writing(Dataset, lambda: DatasetFactory(name="draft@v1")),
        pytest.raises(VersionError) as refused,
    ):
        dataset_freeze(dataset=working)
    assert str(refused.value) == (
        "A dataset named 'draft@v1' exists already in this workspace; rename it before freezing."
    )
    # Held before the freeze (a dataset imported under the version's name): the check names it too.
    DatasetFactory(name="draft@v1")
    with pytest.raises(VersionError, match="'draft@v1' exists already in this workspace"):
        dataset_freeze(dataset=working)


STUDY = {"slug": "s-new", "title_en": "pilot", "max_cases": 6, "is_open": False}


def test_a_study_titled_meanwhile_is_named_on_creating_and_on_editing():
    said = "A study titled 'pilot' exists already in this workspace; choose another title."
    with (
        taken_just_before_writing(Study, lambda: StudyFactory(slug="other", title_en="pilot")),
        pytest.raises(StudyError) as refused,
    ):
        study_save(values=dict(STUDY))
    assert (str(refused.value), refused.value.fields) == (said, {"title_en": [said]})
    mine = study_save(values=dict(STUDY, title_en="mine"))
    with (
        taken_just_before_writing(Study, lambda: StudyFactory(slug="other", title_en="pilot")),
        pytest.raises(StudyError, match="'pilot' exists already"),
    ):
        study_save(values={"title_en": "pilot"}, study=Study.objects.get(pk=mine.pk))
    assert Study.objects.get(pk=mine.pk).title_en == "mine"


def answered_dataset():
    dataset = DatasetFactory(name="mini")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta")]
    for n in range(2):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} on {n}")
    return dataset, models


def test_a_campaign_titled_meanwhile_is_named_on_creating_and_on_editing():
    dataset, models = answered_dataset()
    said = "A campaign titled 'pilot' exists already in this workspace; choose another title."

    def clash():
        CampaignFactory(slug="theirs", title="pilot", dataset=dataset)

    with taken_just_before_writing(Campaign, clash), pytest.raises(CampaignTitleTaken) as refused:
        campaign_create(slug="mine", title="pilot", dataset=dataset, candidates=models, question_count=1)
    assert str(refused.value) == said
    mine = campaign_create(slug="mine", title="mine", dataset=dataset, candidates=models, question_count=1)
    with taken_just_before_writing(Campaign, clash), pytest.raises(CampaignTitleTaken, match="'pilot' exists"):
        campaign_update(campaign=mine, actor=None, changes={"title": "pilot"})
    assert Campaign.objects.get(pk=mine.pk).title == "mine"
