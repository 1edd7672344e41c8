"""Two teams name everything `pilot` (an endpoint, a dataset, a candidate model, a judge template,
a study and a campaign titled `pilot`, and all the rest a team makes), in either order, and each
gets its own over every route of the URLconf, every export and every bundle: its owner, and a
person in both teams, who works in one at a time (the switcher on pages, the
X-Userbench-Workspace header in the API). Whatever team A makes carries `hidden-a`, B's
`hidden-b`; neither mark may reach the other team. Neither team's forms and actions change the
other's objects, whether they name them by id, by link or by the name both use.

The routes come from the tables of tests/workspace_world.py (scoped routes, lists, and the forms
that answer without a 404), so a new route listed there is walked here too.
"""

import io
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from core.exports import EXPORTERS
from core.workspaces import DEFAULT_SLUG, WORKSPACE_HEADER
from tests.workspace_world import (
    LISTS,
    MARKS,
    NOT_404,
    PILOT,
    Pilots,
    Team,
    body_text,
    owned_rows,
    pilots_build,
    scoped_routes,
)

pytestmark = pytest.mark.django_db

# NOT_404's routes with arguments naming the team's own objects (its others take none of a team's).
OWN_ARGUMENTS = {
    "curation:review-task": lambda team: {"task_id": team.task.pk},
    "workspace-rename": lambda team: {"slug": team.workspace.slug},
}
# The API lists of a team's work: each holds the team's `pilot` and nothing else.
API_LISTS = {
    "api-studies": "title_en",
    "api-datasets": "name",
    "api-campaigns": "title",
    "api-endpoints": "name",
}


@pytest.fixture(params=["a", "b"], ids=["a-first", "b-first"])
def pilots(request) -> Pilots:
    """Creation order matters for the links (the first team's study and campaign get `pilot`, the
    second a free one), so both orders are walked."""
    return pilots_build(first=request.param)


def own_routes(team: Team) -> dict[str, dict]:
    """Every route the tables list as scoped, as a list or as a form answered without a 404, with
    the arguments naming `team`'s own objects."""
    routes = {name: kwargs for name, (kwargs, _data) in scoped_routes(team).items()}
    routes |= LISTS
    for name, (kwargs, _data) in NOT_404.items():
        routes[name] = OWN_ARGUMENTS[name](team) if name in OWN_ARGUMENTS else kwargs
    return routes


def in_workspace(client: Client, slug: str) -> None:
    """Pages: the header's switcher (a POST, remembered in the session)."""
    response = client.post(reverse("workspace-switch"), {"workspace": slug, "next": "/dashboard/"})
    assert response.status_code == 302 and client.session["userbench_workspace"] == slug


def fetch(client: Client, url: str, workspace: str | None, **query):
    """GET `url`, following redirects; an API address names the workspace with the header when one
    is given (pages take the session's)."""
    headers = {WORKSPACE_HEADER: workspace} if workspace and url.startswith("/api/") else {}
    return client.get(url, query, headers=headers, follow=True)


def only_own(response, key: str, where: str) -> str:
    """The body, lower-cased, after checking it holds nothing of the other team's."""
    text = body_text(response).lower()
    other = MARKS["b" if key == "a" else "a"]
    assert other not in text, f"{where}: team {key}'s response shows the other team's ({other})"
    return text


def shows_own(text: str, key: str) -> bool:
    """Whether a body shows the team's content (its owner's name, which carries the mark too and
    is shown to the person in both but not in the owner's own header, aside)."""
    return MARKS[key] in text.replace(f"{MARKS[key]}-owner", "")


# Routes that are 404 for a team's own object, by design, and why (besides a campaign's manifest
# and alignment, which a campaign made without a manifest or a finished judge run lacks, and say so).
OWN_404 = {
    "judging:template-copy": "copies a built-in template into the workspace; a team's own is no built-in",
    "api-dataset-answers-restore": "POST only: its GET reads the answers of a model named 'restore', which no team has",
}


def own_404(name: str, response, text: str) -> bool:
    """Whether a 404 for a team's own object is one of the documented ones."""
    return response.status_code == 404 and ("predates" in text or "judge run" in text or name in OWN_404)


# Routes whose answer depends on whether the person administers the workspace: the owner does,
# the person in both is a member with every role.
ADMIN_ROUTES = {"api-workspace-members", "people"}

# Pages and API routes that show the content of the object they name: each team's shows its own.
SHOWS_OWN = {
    "api-dataset-answers-upload",
    "api-dataset-upload",
    "api-run-manifest",
    "curation:dataset-detail",
    "curation:review-case",
    "curation:review-item",
    "judging:dataset-answers",
    "judging:run-detail",
    "judging:template-edit",
    "llm:endpoint-edit",
}


def walk(client: Client, team: Team, key: str, workspace: str | None = None) -> dict[str, tuple[object, bool]]:
    """Every route with the team's own arguments: route -> (its status, whether it shows the
    team's content). A scoped route is never 404 but for the documented ones; a list opens; the
    API's lists hold `pilot` and nothing else."""
    seen = {}
    for name, kwargs in own_routes(team).items():
        response = fetch(client, reverse(name, kwargs=kwargs), workspace)
        text = only_own(response, key, name)
        status: object = response.status_code
        if status == 404:
            assert own_404(name, response, text), f"{name}: team {key} gets a 404 for its own"
            status = "own 404"
        if name in LISTS:
            assert status == 200, (name, status)
        seen[name] = (status, shows_own(text, key))
    for name, field in API_LISTS.items():
        rows = fetch(client, reverse(name), workspace).json()["results"]
        assert [row[field] for row in rows] == [PILOT], (name, key, rows)
    return seen


def test_every_route_gives_each_team_its_own_pilot(pilots):
    """Each owner, then the person in both switched to each team, walks every route."""
    owners = {}
    for key, team in pilots.teams.items():
        client = Client()
        client.force_login(team.owner)
        owners[key] = walk(client, team, key)
        assert {name for name, (_status, shown) in owners[key].items() if shown} >= SHOWS_OWN
    # Nothing said to a team depends on which team named `pilot` first, or on what the other named.
    assert owners["a"] == owners["b"]
    both = Client()
    both.force_login(pilots.both)
    # Without a current workspace, the name both teams use asks which.
    ambiguous = both.get(reverse("api-dataset-answers", kwargs={"name": PILOT}))
    assert ambiguous.status_code == 400 and "team-a, team-b" in ambiguous.json()["detail"]
    for key, team in pilots.teams.items():
        in_workspace(both, team.workspace.slug)
        seen = walk(both, team, key, workspace=team.workspace.slug)
        differ = {name: (owners[key][name], seen[name]) for name in seen if seen[name] != owners[key][name]}
        assert set(differ) <= ADMIN_ROUTES, differ


def test_in_one_workspace_the_other_teams_ids_and_links_are_not_found(pilots, client):
    """The person in both, working in team X, names team Y's objects by id or link: 404 (405 for
    a method the route does not take), and nothing of Y's."""
    client.force_login(pilots.both)
    for key, team in pilots.teams.items():
        theirs = pilots.teams[pilots.other(key)]
        in_workspace(client, team.workspace.slug)
        mine = own_routes(team)
        for name, kwargs in own_routes(theirs).items():
            if kwargs == mine[name]:
                continue  # the same arguments (the name `pilot`): walked above, the own one's
            response = fetch(client, reverse(name, kwargs=kwargs), team.workspace.slug)
            # NOT_404's routes answer another's object as an unknown one, on one's own page.
            assert response.status_code in (404, 405) or name in NOT_404, (name, key, response.status_code)
            only_own(response, key, name)


def export_queries(team: Team) -> list[dict]:
    return [
        {},
        {"dataset": PILOT},
        {"study": team.study.slug},
        {"run": team.run.pk},
        {"campaign": team.campaign.slug},
    ]


@pytest.mark.parametrize("what", sorted(EXPORTERS))
def test_every_export_of_pilot_gives_each_team_its_own(pilots, what):
    """Every export table in every scope that names `pilot` (or the team's links and run): the
    team's own, the same answers for both teams and for the person in both as for the owner."""
    seen = {}
    for key, team in pilots.teams.items():
        owner, both = Client(), Client()
        owner.force_login(team.owner)
        both.force_login(pilots.both)
        # The owner as a script written for one workspace would (no header); the person in both names it.
        for who, client, header in (("owner", owner, None), ("both", both, team.workspace.slug)):
            for query in export_queries(team):
                for fmt in ("csv", "jsonl"):
                    response = fetch(client, reverse("api-export", args=[what]), header, **query, format=fmt)
                    assert response.status_code in (200, 400), (what, query, response.status_code)
                    text = only_own(response, key, f"export {what} {query}")
                    seen[key, who, tuple(query), fmt] = (response.status_code, shows_own(text, key))
    for (key, who, query, fmt), got in seen.items():
        # The same for both teams, and for the person in both as for the owner.
        assert got == seen["a", "owner", query, fmt], (what, key, who, query, fmt)
    # Each export finds the team's own `pilot` in some scope.
    assert any(status == 200 for status, _shown in seen.values()), what


def test_every_bundle_of_pilot_holds_each_teams_own(pilots):
    """The person in both downloads each team's study, dataset, run and campaign bundle."""
    for key, team in pilots.teams.items():
        client = Client()
        client.force_login(pilots.both)
        for kind, value in (
            ("study", team.study.slug),
            ("dataset", PILOT),
            ("run", team.run.pk),
            ("campaign", team.campaign.slug),
        ):
            response = fetch(client, reverse("api-export-bundle"), team.workspace.slug, **{kind: value})
            assert response.status_code == 200, (kind, key, response.content)
            archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
            text = "".join(archive.read(name).decode("utf-8", "replace") for name in archive.namelist()).lower()
            assert MARKS[pilots.other(key)] not in text, f"team {key}'s {kind} bundle shows the other team's"
            # A campaign's bundle holds its votes and scores (none yet), no text of the team's.
            assert MARKS[key] in text or kind == "campaign", (kind, key)


def aimed_at(data: dict, theirs: Team) -> dict:
    """NOT_404's form data, naming the other team's objects and workspace instead of those of
    tests/test_workspaces.py's world (`pilot` for the names both teams use)."""
    slug = theirs.workspace.slug
    instead = {
        "alpha-endpoint": PILOT,
        "alpha-data": PILOT,
        "alpha-study": theirs.study.slug,
        DEFAULT_SLUG: slug,
        "1": str(theirs.workspace.pk),
    }
    return {
        field.replace(f"{DEFAULT_SLUG}-", f"{slug}-"): instead.get(value, value) if isinstance(value, str) else value
        for field, value in data.items()
    }


# Routes whose POST with a team's own arguments acts on its owner's own account (removes their
# roles, deactivates them): the walk of POSTs leaves them out, or the owner would lock themself out.
ON_ONESELF = {"people-roles", "people-active", "people-remove"}
# Routes whose POST erases the object that routes after them name: posted last.
ERASING = ("curation:study-withdraw", "judging:answers-upload-discard", "curation:review-import-discard")


def test_each_team_acts_on_its_own_pilot_and_never_on_the_others(pilots):
    """Each owner posts every scoped route with its own arguments (found, never a 404 but the
    documented ones; nothing of the other's in the answer), then every scoped route and every form
    with the other team's (their ids and links are not found; the name `pilot` is the poster's own):
    the other team's objects are as they were. Both teams get the same answers."""
    answered = {}
    for key, team in pilots.teams.items():
        theirs = pilots.teams[pilots.other(key)]
        before = owned_rows(theirs.workspace)
        client = Client()
        client.force_login(team.owner)
        answered[key] = {}
        routes = scoped_routes(team)
        for name, (kwargs, data) in sorted(routes.items(), key=lambda route: route[0] in ERASING):
            if name in ON_ONESELF:
                continue
            response = client.post(reverse(name, kwargs=kwargs), data)
            text = only_own(response, key, f"POST {name}")
            assert response.status_code != 404 or own_404(name, response, text), f"POST {name}: team {key} gets 404"
            answered[key][name] = response.status_code
        for name, (kwargs, data) in scoped_routes(theirs).items():
            response = client.post(reverse(name, kwargs=kwargs), data)
            only_own(response, key, f"POST {name} (theirs)")
            if kwargs != routes[name][0]:
                assert response.status_code in (404, 405), (name, key, response.status_code)
        for name, (kwargs, data) in NOT_404.items():
            kwargs = OWN_ARGUMENTS[name](theirs) if name in OWN_ARGUMENTS else kwargs
            only_own(client.post(reverse(name, kwargs=kwargs), aimed_at(data, theirs)), key, f"POST {name}")
        assert owned_rows(theirs.workspace) == before, f"team {key} changed the other team's objects"
    assert answered["a"] == answered["b"]
