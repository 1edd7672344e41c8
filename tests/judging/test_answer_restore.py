"""An earlier version of a model's answers made current again, on the answers page and through
`POST /api/datasets/<name>/answers/restore/`: the version current before is retired as a replace
retires it, nothing is deleted, the page asks first, the audit has the version before and after;
an archived dataset, an unknown version or the current one are refused and change nothing; another
workspace's dataset is not found."""

import io

import pytest
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent, Workspace
from curation.models import Dataset
from judging.answers.imports import answers_import
from judging.answers.versions import AnswerVersionRefused, answers_restore
from judging.models import Answer, AnswerSet
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
MODEL = "org/model-x"


def upload(dataset, *texts: str, replace=False) -> None:
    lines = "".join(f'{{"question_id": "q{n}", "response": "{text}"}}\n' for n, text in enumerate(texts))
    answers_import(dataset_name=dataset.name, model_name=MODEL, stream=io.BytesIO(lines.encode()), replace=replace)


@pytest.fixture
def dataset():
    """Version 1 ("old") replaced by version 2 ("new")."""
    dataset = DatasetFactory(name="team/d5")
    for n in range(2):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    upload(dataset, "old 0", "old 1")
    upload(dataset, "new 0", "new 1", replace=True)
    return dataset


def state(dataset) -> list[tuple]:
    """Each version: (number, current, retired by, answers, its answers marked current)."""
    return [
        (
            s.version,
            s.is_current,
            s.retired_by,
            Answer.all_versions.filter(answer_set=s).count(),
            Answer.all_versions.filter(answer_set=s, is_current=True).count(),
        )
        for s in AnswerSet.objects.filter(dataset=dataset, model__name=MODEL).order_by("version")
    ]


def current_texts(dataset) -> list[str]:
    return list(Answer.objects.filter(item__dataset=dataset).order_by("item_id").values_list("text", flat=True))


def restore_url(dataset) -> str:
    return reverse("api-dataset-answers-restore", args=[dataset.name])


def restore(client, dataset, body):
    return client.post(restore_url(dataset), body, content_type="application/json")


def page(dataset) -> str:
    return reverse("judging:dataset-answers", args=[dataset.name])


def test_the_api_makes_version_1_current_again_and_retires_version_2_as_a_replace(client_as, researcher, dataset):
    done = restore(client_as(researcher), dataset, {"model": MODEL, "version": 1})
    assert done.status_code == 200 and done.json() == {"model": MODEL, "version": 1, "answers": 2}
    assert state(dataset) == [(1, True, "", 2, 2), (2, False, "restored", 2, 0)]
    assert current_texts(dataset) == ["old 0", "old 1"]
    assert AnswerSet.objects.get(dataset=dataset, version=1).retired_at is None
    assert AnswerSet.objects.get(dataset=dataset, version=2).retired_at is not None
    event = AuditEvent.objects.get(action="answers_restored")
    assert event.details == {
        "model": MODEL,
        "before": {"version": 2, "answers": 2},
        "after": {"version": 1, "answers": 2},
    }
    assert event.target == f"dataset:{dataset.name}" and event.workspace_id == dataset.workspace_id
    assert event.actor == researcher
    # And back: version 2 is an earlier version like any other.
    assert restore(client_as(researcher), dataset, {"model": MODEL, "version": 2}).json()["version"] == 2
    assert current_texts(dataset) == ["new 0", "new 1"]


def test_a_deleted_version_is_restored_from_the_page_after_asking(client_as, researcher, dataset):
    client = client_as(researcher)
    client.post(page(dataset), {"action": "delete", "model": MODEL, "confirm": "1"})
    assert state(dataset) == [(1, False, "replaced", 2, 0), (2, False, "deleted", 2, 0)]
    listed = client.get(page(dataset)).text
    assert "Earlier versions" in listed and listed.count(">Make current again</button>") == 2
    assert "Replaced" in listed and "Deleted" in listed
    form = listed[listed.index('data-version="2"') :]
    assert 'name="drawn_workspace"' in form[: form.index("</form>")]

    asked = client.post(page(dataset), {"action": "restore", "model": MODEL, "version": "2"})
    assert asked.status_code == 200
    assert (
        "Make version 2 of org/model-x&#x27;s answers on team/d5 (2 answers) current again? "
        "The model has no answers here now" in asked.text
    )
    assert 'name="confirm" value="1"' in asked.text and 'name="drawn_workspace"' in asked.text
    assert (
        state(dataset)[1] == (2, False, "deleted", 2, 0)
        and not AuditEvent.objects.filter(action="answers_restored").exists()
    )

    done = client.post(
        page(dataset), {"action": "restore", "model": MODEL, "version": "2", "confirm": "1"}, follow=True
    )
    assert "Version 2 of org/model-x&#x27;s answers is current again" in done.text
    assert state(dataset) == [(1, False, "replaced", 2, 0), (2, True, "", 2, 2)]
    event = AuditEvent.objects.get(action="answers_restored")
    assert event.details["before"] is None and event.details["after"] == {"version": 2, "answers": 2}


def test_the_page_asks_naming_the_version_it_replaces(client_as, researcher, dataset):
    asked = client_as(researcher).post(page(dataset), {"action": "restore", "model": MODEL, "version": "1"})
    assert "current again, in place of version 2? Runs and campaigns that used version 2 keep it" in asked.text
    assert state(dataset)[0][:2] == (1, False)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": MODEL, "version": 9}, "version"),
        ({"model": MODEL, "version": 2}, "version"),  # already current
        ({"model": MODEL, "version": "one"}, "version"),
        ({"model": MODEL, "version": 0}, "version"),
        ({"model": MODEL}, "version"),
        ({"model": "no-such-model", "version": 1}, "model"),
        ({"version": 1}, "model"),
    ],
)
def test_a_bad_model_or_version_is_refused_naming_the_field_and_changes_nothing(
    client_as, researcher, dataset, body, field
):
    before = state(dataset)
    refused = restore(client_as(researcher), dataset, body)
    assert refused.status_code == 400 and list(refused.json()) == [field]
    assert state(dataset) == before and not AuditEvent.objects.filter(action="answers_restored").exists()


def test_messages_say_what_is_wrong(dataset):
    for version, message in (
        (9, "org/model-x has no version 9 of answers on team/d5."),
        (2, "Version 2 of org/model-x's answers is already current."),
    ):
        with pytest.raises(AnswerVersionRefused, match=message):
            answers_restore(dataset=dataset, model_name=MODEL, version=version, actor=None)


def test_an_archived_dataset_is_refused_on_the_page_and_the_api(client_as, researcher, dataset):
    Dataset.objects.filter(pk=dataset.pk).update(archived_at=timezone.now())
    before = state(dataset)
    client = client_as(researcher)
    refused = restore(client, dataset, {"model": MODEL, "version": 1})
    assert refused.status_code == 400 and "is archived and cannot be changed" in refused.json()["detail"]
    shown = client.post(
        page(dataset), {"action": "restore", "model": MODEL, "version": "1", "confirm": "1"}, follow=True
    )
    assert "is archived and cannot be changed" in shown.text
    assert ">Make current again</button>" not in shown.text  # an archived dataset offers no button
    assert state(dataset) == before and not AuditEvent.objects.filter(action="answers_restored").exists()


def test_an_unknown_version_on_the_page_changes_nothing(client_as, researcher, dataset):
    before = state(dataset)
    shown = client_as(researcher).post(
        page(dataset), {"action": "restore", "model": MODEL, "version": "2", "confirm": "1"}, follow=True
    )
    assert "org/model-x has no earlier version 2 of answers on team/d5." in shown.text
    assert state(dataset) == before


def test_another_workspaces_researcher_gets_404(client_as, researcher, dataset):
    other = Workspace.objects.create(slug="other", name="Other")
    client = client_as(UserFactory(username="stranger", roles=["researcher"], roles__workspace=other))
    before = state(dataset)
    missing = client.post(
        reverse("api-dataset-answers-restore", args=["no-such"]), {"model": MODEL, "version": 1}, "application/json"
    )
    got = restore(client, dataset, {"model": MODEL, "version": 1})
    assert got.status_code == 404 and got.json()["detail"] == missing.json()["detail"].replace("no-such", dataset.name)
    asked = client.post(page(dataset), {"action": "restore", "model": MODEL, "version": "1", "confirm": "1"})
    assert asked.status_code == 404
    assert state(dataset) == before and not AuditEvent.objects.filter(action="answers_restored").exists()


def test_a_model_named_restore_is_still_read_by_its_path(client_as, researcher, dataset):
    answers_import(
        dataset_name=dataset.name,
        model_name="restore",
        stream=io.BytesIO(b'{"question_id": "q0", "response": "r"}\n'),
    )
    got = client_as(researcher).get(reverse("api-model-answers", args=[dataset.name, "restore"]))
    assert got.status_code == 200 and got.json() == {"model": "restore", "answers": 1, "cut_off": 0, "version": 1}


def test_the_button_and_question_speak_chinese(client_as, researcher, dataset, settings):
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    listed = client.get(page(dataset)).text
    assert "较早的版本" in listed and ">重新设为当前版本</button>" in listed and "替换" in listed
    asked = client.post(page(dataset), {"action": "restore", "model": MODEL, "version": "1"}).text
    assert "将 org/model-x 在 team/d5 上回答的第 1 版（2 个回答）重新设为当前版本，取代第 2 版？" in asked
    assert "重新设为当前版本" in asked


def test_a_dataset_named_with_answers_at_the_end_is_still_restored_by_its_path(client_as, researcher):
    archived = DatasetFactory(name="team/answers", archived_at=timezone.now())
    done = client_as(researcher).post(reverse("api-dataset-restore", args=[archived.name]))
    assert done.status_code == 200
    archived.refresh_from_db()
    assert archived.archived_at is None
