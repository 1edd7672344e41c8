"""A frozen (imported) dataset never changes; LLM steps work on a working copy made in one step."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from curation.datasets.services import VersionError, dataset_freeze, dataset_working_copy, datasets_diff
from curation.models import Dataset, Item, ReviewEvent
from tests.factories import DatasetFactory, ItemFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db


def imported(name="ab-import"):
    dataset = DatasetFactory(name=name, source="alignbench", frozen_at=timezone.now())
    ItemFactory(dataset=dataset, external_id="1", question="Q1", reference="", category="数学计算", language="zh")
    ItemFactory(dataset=dataset, external_id="2", question="Q2", reference="R2", metadata={"evidences": ["e"]})
    ItemFactory(dataset=dataset, external_id="3", question="Q3", reference="", excluded=True, exclusion_reason="dup")
    return dataset


def test_working_copy_takes_every_item_and_leaves_the_frozen_dataset_alone(researcher):
    frozen = imported()
    copy, made = dataset_working_copy(dataset=frozen, created_by=researcher)
    assert made and (copy.name, copy.frozen_at, copy.previous_version, copy.source) == (
        "ab-import-work",
        None,
        frozen,
        "alignbench",
    )
    rows = list(copy.items.order_by("external_id").values_list("external_id", "question", "reference", "excluded"))
    assert rows == [("1", "Q1", "", False), ("2", "Q2", "R2", False), ("3", "Q3", "", True)]
    two = copy.items.get(external_id="2")
    assert two.metadata == {
        "evidences": ["e"],
        "source": "alignbench",
        "copied_from_item": frozen.items.get(external_id="2").pk,
    }
    assert ReviewEvent.objects.filter(item__dataset=copy, action="added", actor=researcher).count() == 3
    assert frozen.items.count() == 3 and Item.objects.count() == 6

    again, made = dataset_working_copy(dataset=frozen)
    assert (again, made) == (copy, False)
    with pytest.raises(VersionError, match="Dataset ab-import-work is already a working dataset."):
        dataset_working_copy(dataset=copy)
    DatasetFactory(name="taken")
    with pytest.raises(
        VersionError,
        match="A dataset named 'taken' exists already in this workspace; choose another name for the copy.",
    ):
        dataset_working_copy(dataset=frozen, name="taken")
    with pytest.raises(VersionError, match="no @"):
        dataset_working_copy(dataset=frozen, name="x@v1")


def test_freezing_the_copy_diffs_against_the_import():
    frozen = imported()
    copy, _ = dataset_working_copy(dataset=frozen)
    copy.items.filter(external_id="1").update(reference="R1")
    version = dataset_freeze(dataset=copy)
    assert (version.name, version.previous_version) == ("ab-import-work@v1", frozen)
    diff = datasets_diff(old=frozen, new=version)
    assert diff.changed == [("1", {"reference": ("", "R1")})]
    assert diff.removed == ["3"]  # excluded items never enter a version


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_curation_llm_works_on_a_copy_of_a_frozen_dataset(monkeypatch):
    frozen = imported()
    with pytest.raises(CommandError, match="Dataset ab-import is frozen and never changes; add --copy"):
        run("curation_llm", "references", "--dataset", "ab-import")
    server = FakeLLM(reply=lambda body: "A drafted reference.").start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = run("curation_llm", "references", "--dataset", "ab-import", "--copy", "--model", "strong")
        assert "Made the working copy ab-import-work (3 items) of ab-import." in out
        assert "done: 1 done, 0 failed (0 cut off) of 1" in out  # item 2 has a reference, item 3 is excluded
        copy = Dataset.objects.get(name="ab-import-work")
        assert copy.curation_jobs.count() == 1
        assert frozen.items.filter(reference="").count() == 2  # the import never changes
        with pytest.raises(CommandError, match="No item needs a reference draft."):
            run("curation_llm", "references", "--dataset", "ab-import", "--copy")
        out = run("curation_llm", "translate", "--dataset", "ab-import", "--copy", "ab-translated", "--model", "m")
        assert "Made the working copy ab-translated (3 items) of ab-import." in out
        assert server.count == 1 + 2  # one draft, then the one English item translated and localised
    finally:
        server.stop()
