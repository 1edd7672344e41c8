"""The endpoint admin (superusers only) names the workspace an endpoint goes to, and a name
taken in that workspace is an error on the form in the words of the constraint, not a server
error; the same name in another workspace is free."""

import pytest

from core.models import Workspace
from llm.models import Endpoint
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ADD = "/admin/llm/endpoint/add/"


@pytest.fixture
def superuser_client(client):
    boss = UserFactory(username="boss")
    boss.is_staff = boss.is_superuser = True
    boss.save()
    client.force_login(boss)
    return client


def posted(workspace, name="pilot"):
    return {
        "workspace": workspace.pk,
        "name": name,
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "",
        "max_retries": "1",
    }


def test_a_name_taken_in_the_workspace_is_named_on_the_admin_form(superuser_client):
    lab_a = Workspace.objects.create(slug="lab-a", name="Lab A")
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab B")
    Endpoint.objects.create(name="pilot", base_url="http://127.0.0.1:8/v1", workspace=lab_a)
    refused = superuser_client.post(ADD, posted(lab_a))
    assert refused.status_code == 200
    assert "An endpoint of this name exists already in this workspace; choose another name." in refused.text
    assert Endpoint.objects.filter(name="pilot").count() == 1
    # Another workspace's endpoint of the same name says nothing against this one.
    made = superuser_client.post(ADD, posted(lab_b))
    assert made.status_code == 302
    assert set(Endpoint.objects.filter(name="pilot").values_list("workspace__slug", flat=True)) == {"lab-a", "lab-b"}
    # Renaming B's onto a name B already has: the same error.
    Endpoint.objects.create(name="other", base_url="http://127.0.0.1:8/v1", workspace=lab_b)
    theirs = Endpoint.objects.get(name="other")
    renamed = superuser_client.post(f"/admin/llm/endpoint/{theirs.pk}/change/", posted(lab_b, name="pilot"))
    assert renamed.status_code == 200
    assert "An endpoint of this name exists already in this workspace" in renamed.text
    assert Endpoint.objects.get(pk=theirs.pk).name == "other"


def test_the_admin_form_needs_a_workspace(superuser_client):
    refused = superuser_client.post(ADD, {**posted(Workspace.objects.get(slug="default")), "workspace": ""})
    assert refused.status_code == 200
    assert not Endpoint.objects.exists()
