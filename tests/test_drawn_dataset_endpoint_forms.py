"""The forms that post a dataset's or an endpoint's name (the answers page, the dataset page's
working copy, the connection tests, the confirmation of a delete) carry the workspace they were
drawn in. A person in two workspaces that both have a dataset and an endpoint of the same name
draws the form in one, switches to the other, and sends it: it is refused as every drawn form is
(400, saying which workspace it was opened in), and nothing changes in either workspace; sent
without switching, it works."""

import io
from html.parser import HTMLParser

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent, Workspace
from core.workspaces import membership_set
from curation.models import Dataset
from judging.answers.imports import answers_import
from judging.models import Answer, AnswerGeneration, AnswerSet
from llm.models import Endpoint
from tests.factories import CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

# Forms of the page's frame (language, workspace switcher, log-out): not drawn for a workspace.
FRAME_FORMS = ("set_language", "workspace-switch", "logout")


class PostForms(HTMLParser):
    """The page's POST forms: each one's action, id and the values it sends as drawn (hidden
    inputs, text inputs with a value)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form" and (attributes.get("method") or "").lower() == "post":
            self._open = {"action": attributes.get("action") or "", "id": attributes.get("id") or "", "fields": {}}
            self.forms.append(self._open)
        elif tag == "input" and self._open is not None and attributes.get("name"):
            if attributes.get("type") in ("hidden", "text", None) and attributes.get("value") is not None:
                self._open["fields"][attributes["name"]] = attributes["value"]

    def handle_endtag(self, tag):
        if tag == "form":
            self._open = None


def post_forms(page: str, url: str) -> list[dict]:
    parser = PostForms()
    parser.feed(page)
    for form in parser.forms:
        form["action"] = form["action"] or url
    frame = {reverse(name) for name in FRAME_FORMS}
    return [form for form in parser.forms if form["action"] not in frame]


def switch(client, slug):
    assert client.post(reverse("workspace-switch"), {"workspace": slug, "next": "/dashboard/"}).status_code == 302


def answers_file(prefix: str) -> bytes:
    return b"".join(f'{{"question_id": "q{n}", "response": "{prefix}{n}"}}\n'.encode() for n in range(2))


@pytest.fixture
def both(client):
    """A researcher of lab-a and lab-b, signed in, working in lab-a. Each workspace has a frozen
    dataset "shared" with alpha's answers, a queued generation of it, and an endpoint "lab"."""
    person = UserFactory(username="both")
    for slug in ("lab-a", "lab-b"):
        place = Workspace.objects.create(slug=slug, name=slug.upper())
        membership_set(user=person, workspace=place, roles=["researcher"])
        dataset = DatasetFactory(name="shared", workspace=place, frozen_at=timezone.now())
        for n in range(2):
            ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n} of {slug}?")
        answers_import(
            dataset_name="shared", workspace_id=place.pk, model_name="alpha", stream=io.BytesIO(answers_file(slug))
        )
        AnswerGeneration.objects.create(
            dataset=dataset, model=CandidateModelFactory(name="gen-m", workspace=place), total=2
        )
        # A closed port: a connection test that is sent fails at once (and is audited).
        Endpoint.objects.create(name="lab", workspace=place, base_url="http://127.0.0.1:9/v1", default_model="m")
    client.force_login(person)
    switch(client, "lab-a")
    return client


def state() -> list:
    """What a form could change, in both workspaces."""
    return [
        sorted(Dataset.objects.values_list("workspace__slug", "name")),
        sorted(Answer.objects.values_list("item__dataset__workspace__slug", "model__name", "text")),
        sorted(AnswerSet.objects.values_list("dataset__workspace__slug", "model__name", "version")),
        sorted(AnswerGeneration.objects.values_list("dataset__workspace__slug", "status")),
        AuditEvent.objects.count(),
    ]


def answers_page() -> str:
    return reverse("judging:dataset-answers", args=["shared"])


def drawn_upload(client):
    form = next(f for f in post_forms(client.get(answers_page()).text, answers_page()) if f["id"] == "upload-form")
    return form, {"action": "upload", "model": "beta", "file": SimpleUploadedFile("a.jsonl", answers_file("new"))}


def drawn_replace(client):
    page = client.get(answers_page(), {"replace": "alpha"}).text
    form = next(f for f in post_forms(page, answers_page()) if f["id"] == "replace-form")
    return form, {"action": "upload", "file": SimpleUploadedFile("a.jsonl", answers_file("new"))}


def drawn_delete_confirmation(client):
    """The delete on the answers page asks first; the confirmation's form is the one sent."""
    row = next(f for f in post_forms(client.get(answers_page()).text, answers_page()) if f["fields"].get("action"))
    asked = client.post(answers_page(), row["fields"])
    assert "Are you sure?" in asked.text
    return post_forms(asked.text, answers_page())[0], {}


def drawn_generate(client):
    form = next(f for f in post_forms(client.get(answers_page()).text, answers_page()) if f["id"] == "generate-form")
    endpoint = Endpoint.objects.get(workspace__slug="lab-a").pk
    return form, {"model": "gen-new", "endpoint": str(endpoint), "action": "preview"}


def drawn_generation_cancel(client):
    forms = post_forms(client.get(answers_page()).text, answers_page())
    return next(f for f in forms if f["action"].endswith("/cancel/")), {}


def drawn_working_copy(client):
    url = reverse("curation:dataset-detail", args=["shared"])
    form = next(f for f in post_forms(client.get(url).text, url) if f["action"] == reverse("curation:review-copy"))
    return form, {"name": "shared-copy"}


def drawn_connection_test_on_the_list(client):
    url = reverse("llm:endpoints")
    forms = post_forms(client.get(url).text, url)
    return next(f for f in forms if f["fields"].get("endpoint") == "lab"), {}


def drawn_connection_test_on_the_endpoint(client):
    url = reverse("llm:endpoint-edit", args=[Endpoint.objects.get(workspace__slug="lab-a").pk])
    forms = post_forms(client.get(url).text, url)
    return next(f for f in forms if f["action"] == reverse("llm:endpoint-test")), {}


DRAWN = [
    drawn_upload,
    drawn_replace,
    drawn_delete_confirmation,
    drawn_generate,
    drawn_generation_cancel,
    drawn_working_copy,
    drawn_connection_test_on_the_list,
    drawn_connection_test_on_the_endpoint,
]


@pytest.mark.parametrize("drawn", DRAWN, ids=lambda drawn: drawn.__name__.removeprefix("drawn_"))
def test_a_form_sent_after_switching_is_refused_and_changes_nothing(both, drawn):
    client = both
    form, typed = drawn(client)
    pass
    switch(client, "lab-b")
    before = state()
    refused = client.post(form["action"], {**form["fields"], **typed})
    assert refused.status_code == 400
    assert "This form was opened in the workspace lab-a." in refused.text
    assert "You have since switched to lab-b." in refused.text
    assert state() == before


@pytest.mark.parametrize("drawn", [drawn_delete_confirmation, drawn_working_copy, drawn_upload])
def test_the_same_form_sent_where_it_was_drawn_works(both, drawn):
    client = both
    form, typed = drawn(client)
    before = state()
    assert client.post(form["action"], {**form["fields"], **typed}).status_code == 302
    assert state() != before
    # Only lab-a's objects changed.
    assert sorted(Answer.objects.filter(item__dataset__workspace__slug="lab-b").values_list("text", flat=True)) == [
        "lab-b0",
        "lab-b1",
    ]
    assert list(Dataset.objects.filter(workspace__slug="lab-b").values_list("name", flat=True)) == ["shared"]


@pytest.mark.parametrize(
    "url",
    [
        reverse("judging:dataset-answers", args=["shared"]),
        reverse("judging:dataset-answers", args=["shared"]) + "?replace=alpha",
        reverse("curation:dataset-detail", args=["shared"]),
        reverse("llm:endpoints"),
    ],
)
def test_every_form_of_these_pages_carries_its_workspace(both, url):
    forms = post_forms(both.get(url).text, url)
    assert forms
    assert [form["action"] for form in forms if form["fields"].get("drawn_workspace") != "lab-a"] == []
