"""Lists across all of a person's workspaces name each row's workspace and can be kept to one with
`?workspace=` (the dashboard, /runs/, /datasets/, /annotate/); another's workspace is 404; with a
current workspace, or a single one, there is neither column nor filter."""

import re

import pytest
from django.urls import reverse

from core.models import Workspace
from core.workspaces import membership_set
from tests.factories import CampaignFactory, DatasetFactory, JudgeRunFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def labs():
    lab_a = Workspace.objects.create(slug="lab-a", name="Lab Alpha")
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab Beta")
    Workspace.objects.create(slug="lab-c", name="Lab Gamma")
    for lab, letter in ((lab_a, "a"), (lab_b, "b")):
        dataset = DatasetFactory(name=f"data-{letter}", workspace=lab)
        JudgeRunFactory(dataset=dataset, workspace=lab, judge_model=f"judge-of-{letter}")
        CampaignFactory(slug=f"camp-{letter}", title=f"Campaign {letter.upper()}", dataset=dataset, workspace=lab)
    return lab_a, lab_b


def person_in(labs, role, username="both"):
    lab_a, lab_b = labs
    person = UserFactory(username=username, roles=[role], roles__workspace=lab_a)
    membership_set(user=person, workspace=lab_b, roles=[role])
    return person


def rows(page: str) -> list[str]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip() for row in body.split("<tr")[1:]]


def test_the_runs_list_names_each_workspace_and_keeps_to_one(client, labs):
    client.force_login(person_in(labs, "researcher"))
    page = client.get(reverse("judging:run-list")).text
    assert 'data-testid="workspace-filter"' in page and '<th scope="col">Workspace</th>' in page
    listed = rows(page)
    assert any("Lab Alpha" in row and "data-a" in row for row in listed)
    assert any("Lab Beta" in row and "data-b" in row for row in listed)
    kept = rows(client.get(reverse("judging:run-list"), {"workspace": "lab-b"}).text)
    assert len(kept) == 1 and "data-b" in kept[0] and "Lab Beta" in kept[0]
    # A workspace that is not theirs, or none at all: not found, as its runs are.
    assert client.get(reverse("judging:run-list"), {"workspace": "lab-c"}).status_code == 404
    assert client.get(reverse("judging:run-list"), {"workspace": "nope"}).status_code == 404


def test_with_a_current_workspace_there_is_neither_column_nor_filter(client, labs):
    client.force_login(person_in(labs, "researcher"))
    client.post(reverse("workspace-switch"), {"workspace": "lab-a", "next": "/dashboard/"})
    page = client.get(reverse("judging:run-list")).text
    assert 'data-testid="workspace-filter"' not in page and '<th scope="col">Workspace</th>' not in page
    listed = rows(page)
    assert len(listed) == 1 and "data-a" in listed[0] and "Lab Alpha" not in listed[0]


def test_one_workspace_only_shows_neither(client, labs):
    lab_a, _lab_b = labs
    client.force_login(UserFactory(username="solo", roles=["researcher"], roles__workspace=lab_a))
    for name in ("judging:run-list", "curation:datasets", "dashboard"):
        page = client.get(reverse(name)).text
        assert 'data-testid="workspace-filter"' not in page and "data-b" not in page


def test_the_datasets_list_and_the_dashboard_keep_to_the_workspace_chosen(client, labs):
    client.force_login(person_in(labs, "researcher"))
    page = client.get(reverse("curation:datasets")).text
    assert "Lab Alpha" in page and "Lab Beta" in page and 'data-testid="workspace-filter"' in page
    kept = client.get(reverse("curation:datasets"), {"workspace": "lab-a"}).text
    assert "data-a" in kept and "data-b" not in kept
    dashboard = client.get(reverse("dashboard"), {"workspace": "lab-a"}).text
    assert "data-a" in dashboard and "camp-a" in dashboard and "data-b" not in dashboard and "camp-b" not in dashboard
    assert '<option value="lab-a" selected>' in dashboard


def test_the_annotation_queue_names_the_workspace_of_each_campaign(client, labs):
    annotator = person_in(labs, "annotator", username="ann")
    for campaign in ("camp-a", "camp-b"):
        CampaignFactory._meta.model.objects.get(slug=campaign).annotators.add(annotator)
    client.force_login(annotator)
    listed = rows(client.get(reverse("annotation:index")).text)
    assert len(listed) == 2
    assert any("Campaign A" in row and "Lab Alpha" in row for row in listed)
    assert any("Campaign B" in row and "Lab Beta" in row for row in listed)
    kept = rows(client.get(reverse("annotation:index"), {"workspace": "lab-a"}).text)
    assert len(kept) == 1 and "Campaign A" in kept[0]
    assert client.get(reverse("annotation:index"), {"workspace": "lab-c"}).status_code == 404


def test_the_filter_speaks_chinese(client, labs):
    client.force_login(person_in(labs, "researcher"))
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("judging:run-list"), {"workspace": "lab-a"}).text
    assert "工作区" in page and "您的全部工作区" in page and "显示" in page


def test_the_endpoints_list_names_each_workspace_and_keeps_to_one(client, labs):
    from llm.models import Endpoint

    lab_a, lab_b = labs
    Endpoint.objects.create(name="end-a", base_url="http://a.example/v1", workspace=lab_a)
    Endpoint.objects.create(name="end-b", base_url="http://b.example/v1", workspace=lab_b)
    client.force_login(person_in(labs, "researcher"))
    listed = rows(client.get(reverse("llm:endpoints")).text)
    assert any("end-a" in row and "Lab Alpha" in row for row in listed)
    assert any("end-b" in row and "Lab Beta" in row for row in listed)
    kept = rows(client.get(reverse("llm:endpoints"), {"workspace": "lab-a"}).text)
    assert len(kept) == 1 and "end-a" in kept[0]
