"""Where a new study, dataset or endpoint goes: the creation forms offer a workspace only to a
person who is a researcher in more than one, exactly those, with core.workspaces.workspace_for_new's
pick chosen at first; a workspace posted that they do not hold (forged) is an error on the field and
nothing is created. Runs and campaigns take their dataset's workspace (tests/test_workspaces.py)."""

import re

import pytest
from django.urls import reverse

from core.models import AuditEvent, Workspace
from core.workspaces import default_workspace_id, membership_set, workspace_for_new
from curation.models import Dataset, Study
from llm.models import Endpoint
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

STUDY = {
    "slug": "pilot", "title_en": "Pilot", "title_zh": "试点", "consent_en": "We may publish.", "consent_zh": "",
    "instructions_en": "", "instructions_zh": "", "min_cases": "3", "max_cases": "6",
    "intents": ["factual_qa", "leisure"], "attention_answer": "4", "completion_code": "C1",
    "screenout_code": "S1", "is_open": "on", "services_text": "ChatGPT", "age_groups_text": "18-30",
}  # fmt: skip
ENDPOINT = {
    "name": "local",
    "base_url": "http://127.0.0.1:8080/v1",
    "api_key_env": "",
    "default_model": "m",
    "max_in_flight": "4",
    "timeout_seconds": "30",
    "max_retries": "2",
}
URS_CSV = "question,reference_ans,user_intent,language\nWhat is 2+2?,4,Factual_QA,EN\n你好吗？,很好。,Leisure,CN\n"

# Each creation form: its address, its data, and what it makes (model, lookup).
FORMS = {
    "study": ("curation:study-new", STUDY, Study, {"slug": "pilot"}),
    "endpoint": ("llm:endpoint-new", ENDPOINT, Endpoint, {"name": "local"}),
    "dataset": ("curation:review-import", {"name": "pilot-set", "format": "urs"}, Dataset, {"name": "pilot-set"}),
}


def post(client, form, **extra):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url, data, _model, _lookup = FORMS[form]
    data = {**data, **extra}
    if form == "dataset":
        data["file"] = SimpleUploadedFile("pilot.csv", URS_CSV.encode(), content_type="text/csv")
    return client.post(reverse(url), data)


def made(form):
    _url, _data, model, lookup = FORMS[form]
    return model.objects.filter(**lookup).first()


@pytest.fixture
def places():
    """default and beta, where ada is a researcher; gamma, where she only annotates; delta, not hers."""
    default = Workspace.objects.get(pk=default_workspace_id())
    beta = Workspace.objects.create(slug="beta", name="Beta team")
    gamma = Workspace.objects.create(slug="gamma", name="Gamma")
    delta = Workspace.objects.create(slug="delta", name="Delta")
    ada = UserFactory(username="ada", roles=["researcher"])
    membership_set(user=ada, workspace=beta, roles=["researcher"])
    membership_set(user=ada, workspace=gamma, roles=["annotator"])
    UserFactory(username="dan", roles=["researcher"], roles__workspace=delta)
    return {"ada": ada, "default": default, "beta": beta, "gamma": gamma, "delta": delta}


def offered(html: str) -> list[tuple[str, str, bool]]:
    """The workspace <select> of a page: (value, label, selected) per option; [] when there is none."""
    select = re.search(r'<select name="workspace"[^>]*>(.*?)</select>', html, re.S)
    if select is None:
        return []
    return [
        (value, label.strip(), "selected" in attributes)
        for value, attributes, label in re.findall(r'<option value="(\d+)"([^>]*)>([^<]*)</option>', select.group(1))
    ]


@pytest.mark.parametrize("form", list(FORMS))
def test_one_workspace_no_chooser_and_the_object_goes_there(client, form):
    beta = Workspace.objects.create(slug="beta", name="Beta")
    solo = UserFactory(username="solo", roles=["researcher"], roles__workspace=beta)
    client.force_login(solo)
    assert offered(client.get(reverse(FORMS[form][0])).text) == []
    # A workspace id posted anyway (the default one, not hers) is not read: the object goes to hers.
    response = post(client, form, workspace=str(default_workspace_id()))
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    assert made(form).workspace == beta


@pytest.mark.parametrize("form", list(FORMS))
def test_several_workspaces_offer_exactly_them_and_the_choice_is_kept(client, places, form):
    client.force_login(places["ada"])
    choices = offered(client.get(reverse(FORMS[form][0])).text)
    # Where she is a researcher, by slug, the default one (workspace_for_new's pick) chosen.
    assert choices == [
        (str(places["beta"].pk), "Beta team (beta)", False),
        (str(places["default"].pk), "Default (default)", True),
    ]
    assert workspace_for_new(places["ada"], "researcher") == places["default"]
    response = post(client, form, workspace=str(places["beta"].pk))
    assert response.status_code == 302
    assert made(form).workspace == places["beta"]


@pytest.mark.parametrize("form", list(FORMS))
def test_a_form_sent_without_the_offered_field_asks_for_it(client, places, form):
    """E.g. a page loaded before she joined beta: she is asked where it goes, never guessed for."""
    client.force_login(places["ada"])
    response = post(client, form)
    assert response.context["form"].errors == {"workspace": ["This field is required."]}
    assert made(form) is None
    assert post(client, form, workspace=str(places["default"].pk)).status_code == 302
    assert made(form).workspace == places["default"]


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("forged", ["gamma", "delta", "made-up", "not-a-number"])
def test_a_forged_workspace_is_an_error_on_the_field_and_nothing_is_created(client, places, form, forged):
    """gamma: hers, but not as a researcher; delta: another team's; an id that does not exist; junk."""
    value = {"made-up": "987654", "not-a-number": "beta"}.get(forged) or str(places[forged].pk)
    client.force_login(places["ada"])
    audited = AuditEvent.objects.count()
    response = post(client, form, workspace=value)
    assert response.status_code in (200, 400)
    errors = response.context["form"].errors
    assert list(errors) == ["workspace"], errors
    assert "Select a valid choice" in errors["workspace"][0]
    assert made(form) is None
    assert AuditEvent.objects.count() == audited
    # The page shows the error beside the field, whose label names it.
    assert 'for="id_workspace"' in response.text and "Select a valid choice" in response.text


def test_a_superuser_chooses_among_every_workspace(client, places):
    boss = UserFactory(username="boss")
    boss.is_superuser = True
    boss.save()
    client.force_login(boss)
    slugs = [label.rsplit("(", 1)[-1].rstrip(")") for _v, label, _s in offered(client.get("/endpoints/new/").text)]
    assert slugs == ["beta", "default", "delta", "gamma"]
    assert post(client, "endpoint", workspace=str(places["delta"].pk)).status_code == 302
    assert made("endpoint").workspace == places["delta"]


def test_editing_never_moves_an_object(client, places):
    client.force_login(places["ada"])
    post(client, "study", workspace=str(places["beta"].pk))
    edit = reverse("curation:study-edit", args=["pilot"])
    assert offered(client.get(edit).text) == []
    assert (
        client.post(edit, {**STUDY, "title_en": "Renamed", "workspace": str(places["default"].pk)}).status_code == 302
    )
    study = Study.objects.get(slug="pilot")
    assert (study.title_en, study.workspace) == ("Renamed", places["beta"])
