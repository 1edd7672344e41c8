"""Reads that span the apps: which dataset, study or run an export is about; people and invitations."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count

from annotation.models import Campaign
from core.exports import ExportError
from core.models import Membership, Workspace, WorkspaceInvitation
from core.roles import Role
from core.workspaces import (
    DEFAULT_SLUG,
    admin_workspace_ids,
    is_everywhere,
    places_of,
    scoped,
    workspace_choices,
    workspace_ids,
)
from curation.datasets.selectors import dataset_by_name
from curation.models import Dataset, Study
from home.models import Invitation
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id


def export_scope_resolve(
    *,
    dataset_name: str | None,
    study_slug: str | None,
    run_id: int | None,
    campaign_slug: str | None = None,
    user=None,
    workspace_id: int | None = None,
) -> dict:
    """Turn the names given on a command line or in a query string into the objects an export
    needs; an unknown name raises DatasetNotFound or ExportError saying which one. With a
    `user`, only what belongs to the workspaces where they are a researcher is found: another
    workspace's study is "no study" to them. With a `workspace_id` (a command's --workspace), names
    are looked up in that workspace only."""
    scope: dict[str, Any] = {"dataset": None, "study": None, "run": None}
    if campaign_slug:
        campaigns = (
            Campaign.objects.all() if user is None else scoped(Campaign.objects.all(), user, role=Role.RESEARCHER.value)
        )
        if workspace_id is not None:
            campaigns = campaigns.filter(workspace_id=workspace_id)
        scope["campaign"] = campaigns.select_related("dataset").filter(slug=campaign_slug).first()
        if scope["campaign"] is None:
            raise ExportError(f"No campaign with slug {campaign_slug!r}.")
    if dataset_name:
        scope["dataset"] = dataset_by_name(name=dataset_name, user=user, workspace_id=workspace_id)
    if study_slug:
        studies = Study.objects.all() if user is None else scoped(Study.objects.all(), user, role=Role.RESEARCHER.value)
        if workspace_id is not None:
            studies = studies.filter(workspace_id=workspace_id)
        scope["study"] = studies.filter(slug=study_slug).first()
        if scope["study"] is None:
            raise ExportError(f"No study with slug {study_slug!r}.")
    if run_id is not None:
        try:
            scope["run"] = run_by_id(run_id=run_id, queryset=JudgeRun.objects.select_related("dataset"), user=user)
        except RunNotFound:
            raise ExportError(f"No judge run {run_id}.") from None
    return scope


def people_list(*, workspace: Workspace, limit: int = 500):
    """The workspace's members with their roles there and whether they administer it (one extra
    query for all of them), active ones first, by name."""
    places = {membership.user_id: membership for membership in Membership.objects.filter(workspace=workspace)}
    users = list(
        get_user_model()
        .objects.filter(pk__in=list(places))
        .order_by("-is_active", "username")
        .only("id", "username", "is_active", "is_staff", "is_superuser", "last_login", "date_joined")[:limit]
    )
    for user in users:
        # Read by the people page beside the account's fields (attributes, not model fields).
        user.role_names = sorted(places[user.pk].role_names())  # type: ignore[attr-defined]
        user.is_workspace_admin = places[user.pk].admin  # type: ignore[attr-defined]
    return users


def people_workspaces(*, user) -> list[Workspace]:
    """The workspaces whose members the person may see on /people/: where they are a researcher
    or an admin (every one for a superuser), by slug."""
    researching, administering = workspace_ids(user, Role.RESEARCHER.value), admin_workspace_ids(user)
    if researching is None or administering is None:
        return list(Workspace.objects.order_by("slug"))
    return list(Workspace.objects.filter(pk__in=researching | administering).order_by("slug"))


def invitation_list(*, workspace: Workspace, limit: int | None = 100):
    """The latest invitations into the workspace, newest first, with who made and who used them."""
    hashes = WorkspaceInvitation.objects.filter(workspace=workspace).values("token_hash")
    invitations = Invitation.objects.select_related("created_by", "used_by")
    if workspace.slug == DEFAULT_SLUG:
        # Links made before workspaces have no workspace: they lead into the default one.
        invitations = invitations.exclude(
            token_hash__in=WorkspaceInvitation.objects.exclude(workspace=workspace).values("token_hash")
        )
    else:
        invitations = invitations.filter(token_hash__in=hashes)
    return invitations if limit is None else invitations[:limit]


def workspace_rows(*, user) -> list[dict]:
    """The person's workspaces (every one for a superuser), by slug, each with the roles they hold
    there, whether they administer it, and its number of members."""
    places = places_of(user)
    counts = dict(
        Membership.objects.values("workspace_id").annotate(members=Count("id")).values_list("workspace_id", "members")
    )
    rows = []
    for workspace in workspace_choices(user):
        place = places.get(workspace.pk)
        rows.append(
            {
                "workspace": workspace,
                "roles": sorted(place.roles) if place else [],
                "admin": bool(place and place.admin) or is_everywhere(user),
                "members": counts.get(workspace.pk, 0),
            }
        )
    return rows


def workspace_members(*, workspace: Workspace) -> list[Membership]:
    """The workspace's members, by user name, with their accounts."""
    return list(Membership.objects.filter(workspace=workspace).select_related("user").order_by("user__username"))


def archived_work(*, user, limit: int = 200) -> list[tuple[str, Any]]:
    """What is archived in the workspaces where the person is a researcher, newest first, as
    (kind, object) pairs ("dataset", "run", "campaign", "study"): the one place archived work is
    listed, so that it can be found and restored."""
    found: list[tuple[str, Any]] = []
    for kind, model in (("dataset", Dataset), ("run", JudgeRun), ("campaign", Campaign), ("study", Study)):
        archived = model._default_manager.archived()  # type: ignore[attr-defined]
        if model is JudgeRun:
            archived = archived.select_related("dataset")
        rows = scoped(archived, user, role=Role.RESEARCHER.value)
        found += [(kind, row) for row in rows.order_by("-archived_at")[:limit]]
    return sorted(found, key=lambda pair: pair[1].archived_at, reverse=True)[:limit]
