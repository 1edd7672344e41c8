"""A model's answers deleted or replaced, in the browser and the API: a replace makes the next
version current and a delete leaves none, both asked for first on the page and audited with what
was before and after; the old version's rows stay (for the runs that used them); another
workspace's dataset is not found, other roles are refused, and a bad file changes nothing."""

import io

import pytest
from django.urls import reverse

from core.models import AuditEvent, Workspace
from judging.answers.imports import answers_import
from judging.erasure import judging_item_copies_erase
from judging.models import Answer, AnswerSet
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
MODEL = "org/model-x"  # a model name with "/", as providers name them


def jsonl(*answers: str) -> bytes:
    return b"".join(f'{{"question_id": "q{n}", "response": "{text}"}}\n'.encode() for n, text in enumerate(answers))


def file(content: bytes, name="answers.jsonl"):
    stream = io.BytesIO(content)
    stream.name = name
    return stream


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="team/d4")  # a dataset name with "/" too
    for n in range(2):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    answers_import(dataset_name=dataset.name, model_name=MODEL, stream=file(jsonl("old 0", "old 1")))
    return dataset


def api(dataset, *model):
    if model:
        return reverse("api-model-answers", args=[dataset.name, *model])
    return reverse("api-dataset-answers", args=[dataset.name])


def current_texts(dataset) -> list[str]:
    return list(
        Answer.objects.filter(item__dataset=dataset, model__name=MODEL)
        .order_by("item_id")
        .values_list("text", flat=True)
    )


def versions(dataset) -> list[tuple[int, bool, int]]:
    return [
        (s.version, s.is_current, Answer.all_versions.filter(answer_set=s).count())
        for s in AnswerSet.objects.filter(dataset=dataset, model__name=MODEL).order_by("version")
    ]


def test_a_second_upload_without_replace_is_refused_and_with_it_makes_version_2(client_as, researcher, dataset):
    client = client_as(researcher)
    refused = client.post(api(dataset), {"model": MODEL, "file": file(jsonl("new 0"))})
    assert refused.status_code == 400 and "already has an answer" in refused.json()["detail"]
    done = client.post(api(dataset), {"model": MODEL, "file": file(jsonl("new 0", "new 1")), "replace": "true"})
    assert done.status_code == 201 and done.json() == {"model": MODEL, "imported": 2, "version": 2}
    assert current_texts(dataset) == ["new 0", "new 1"]
    assert versions(dataset) == [(1, False, 2), (2, True, 2)]
    assert client.get(api(dataset)).json() == [{"model": MODEL, "answers": 2, "cut_off": 0, "version": 2}]
    event = AuditEvent.objects.get(action="answers_replaced")
    assert event.target == f"dataset:{dataset.name}" and event.workspace_id == dataset.workspace_id
    assert event.details == {
        "model": MODEL,
        "before": {"version": 1, "answers": 2},
        "after": {"version": 2, "answers": 2},
    }
    assert event.actor == researcher


@pytest.mark.parametrize("by_path", [False, True])
def test_delete_leaves_no_current_answers_keeps_the_version_and_is_audited(client_as, researcher, dataset, by_path):
    client = client_as(researcher)
    url = api(dataset, MODEL) if by_path else api(dataset) + "?model=" + MODEL
    assert client.delete(url).status_code == 204
    assert current_texts(dataset) == [] and client.get(api(dataset)).json() == []
    assert versions(dataset) == [(1, False, 2)]
    assert Answer.all_versions.filter(answer_set__dataset=dataset).count() == 2
    event = AuditEvent.objects.get(action="answers_deleted")
    assert event.details == {"model": MODEL, "before": {"version": 1, "answers": 2}, "after": None}
    assert event.workspace_id == dataset.workspace_id
    again = client.delete(url)
    assert again.status_code == 404 and again.json()["detail"] == f"{MODEL} has no answers on {dataset.name}."
    # An upload after a delete is the next version, not a clash with the deleted one.
    client.post(api(dataset), {"model": MODEL, "file": file(jsonl("fresh 0"))})
    assert versions(dataset) == [(1, False, 2), (2, True, 1)] and current_texts(dataset) == ["fresh 0"]


def test_another_workspaces_dataset_is_not_found_and_says_nothing(client_as, dataset):
    other = Workspace.objects.create(slug="other", name="Other")
    stranger = UserFactory(username="stranger", roles=["researcher"], roles__workspace=other)
    client = client_as(stranger)
    missing = client.delete(reverse("api-dataset-answers", args=["no-such"]) + "?model=" + MODEL)
    for response in (
        client.delete(api(dataset) + "?model=" + MODEL),
        client.delete(api(dataset, MODEL)),
        client.post(api(dataset), {"model": MODEL, "file": file(jsonl("x", "y")), "replace": "true"}),
    ):
        assert response.status_code == 404
        assert response.json()["detail"] == missing.json()["detail"].replace("no-such", dataset.name)
    page = client.post(reverse("judging:dataset-answers", args=[dataset.name]), {"action": "delete", "model": MODEL})
    assert page.status_code == 404
    assert (
        versions(dataset) == [(1, True, 2)] and not AuditEvent.objects.filter(action__startswith="answers_d").exists()
    )


def test_annotators_and_reviewers_are_refused(client_as, annotator, reviewer, dataset):
    for person in (annotator, reviewer):
        client = client_as(person)
        assert client.delete(api(dataset) + "?model=" + MODEL).status_code == 403
        assert client.delete(api(dataset, MODEL)).status_code == 403
        assert (
            client.post(api(dataset), {"model": MODEL, "file": file(jsonl("x")), "replace": "true"}).status_code == 403
        )
        page = client.post(
            reverse("judging:dataset-answers", args=[dataset.name]),
            {"action": "delete", "model": MODEL, "confirm": "1"},
        )
        assert page.status_code in (302, 403)
    assert versions(dataset) == [(1, True, 2)] and current_texts(dataset) == ["old 0", "old 1"]


def test_replace_without_a_file_or_with_a_bad_line_changes_nothing(client_as, researcher, dataset):
    client = client_as(researcher)
    no_file = client.post(api(dataset), {"model": MODEL, "replace": "true"})
    assert no_file.status_code == 400 and "file" in no_file.json()
    bad = client.post(
        api(dataset),
        {"model": MODEL, "file": file(jsonl("new 0") + b'{"question_id": "q9", "response": "?"}\n'), "replace": "true"},
    )
    assert bad.status_code == 400 and bad.json()["detail"].startswith("Nothing imported. line 2:")
    no_model = client.delete(api(dataset))
    assert no_model.status_code == 400
    assert versions(dataset) == [(1, True, 2)] and current_texts(dataset) == ["old 0", "old 1"]
    assert not AuditEvent.objects.filter(action__in=["answers_replaced", "answers_deleted"]).exists()


def test_the_page_asks_before_deleting(client_as, researcher, dataset):
    client = client_as(researcher)
    url = reverse("judging:dataset-answers", args=[dataset.name])
    asked = client.post(url, {"action": "delete", "model": MODEL})
    assert asked.status_code == 200
    assert "Delete the answers of org/model-x on team/d4 (version 1, 2 answers)?" in asked.content.decode()
    assert versions(dataset) == [(1, True, 2)]
    done = client.post(url, {"action": "delete", "model": MODEL, "confirm": "1"}, follow=True)
    assert "Deleted the answers of org/model-x" in done.content.decode()
    assert versions(dataset) == [(1, False, 2)] and AuditEvent.objects.filter(action="answers_deleted").count() == 1


def test_the_page_replaces_after_saying_what_a_replace_does(client_as, researcher, dataset):
    client = client_as(researcher)
    url = reverse("judging:dataset-answers", args=[dataset.name])
    page = client.get(url, {"replace": MODEL}).content.decode()
    assert "The file becomes version 2 of org/model-x's answers, in place of version 1 (2 answers)." in page
    assert versions(dataset) == [(1, True, 2)]
    bad = client.post(url, {"action": "upload", "model": MODEL, "replace": "True", "file": file(b"{not json\n")})
    assert bad.status_code == 400 and "Replace the answers of org/model-x?" in bad.content.decode()
    assert versions(dataset) == [(1, True, 2)]
    done = client.post(
        url, {"action": "upload", "model": MODEL, "replace": "True", "file": file(jsonl("new 0", "new 1"))}, follow=True
    )
    assert "Replaced the answers of org/model-x with 2 new ones" in done.content.decode()
    assert versions(dataset) == [(1, False, 2), (2, True, 2)] and current_texts(dataset) == ["new 0", "new 1"]


def test_erasing_a_participants_item_reaches_every_version(dataset):
    answers_import(dataset_name=dataset.name, model_name=MODEL, stream=file(jsonl("new 0", "new 1")), replace=True)
    item = dataset.items.get(external_id="q0")
    removed = judging_item_copies_erase([item.pk])
    assert sorted(removed) == ["new 0", "old 0"]
    texts = Answer.all_versions.filter(item=item).values_list("text", flat=True)
    assert len(texts) == 2 and "old 0" not in texts and "new 0" not in texts
    assert set(current_texts(dataset)) >= {"new 1"}


def test_replace_and_delete_speak_chinese(client_as, researcher, dataset, settings):
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    url = reverse("judging:dataset-answers", args=[dataset.name])
    text = client.get(url, {"replace": MODEL}).text
    assert (
        "替换 org/model-x 的回答？" in text
        and "该文件将成为 org/model-x 回答的第 2 版，取代第 1 版（2 个回答）" in text
    )
    asked = client.post(url, {"action": "delete", "model": MODEL}).text
    assert "删除 org/model-x 在 team/d4 上的回答（版本 1，2 个回答）？" in asked and "删除这些回答" in asked
