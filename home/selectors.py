"""Reads that span the apps: which dataset, study or run an export is about; people and invitations."""

from typing import Any

from django.contrib.auth import get_user_model

from annotation.models import Campaign
from core.exports import ExportError
from core.roles import Role
from curation.datasets.selectors import dataset_by_name
from curation.models import Study
from home.models import Invitation
from judging.models import JudgeRun


def export_scope_resolve(
    *, dataset_name: str | None, study_slug: str | None, run_id: int | None, campaign_slug: str | None = None
) -> dict:
    """Turn the names given on a command line or in a query string into the objects an export
    needs; an unknown name raises DatasetNotFound or ExportError saying which one."""
    scope: dict[str, Any] = {"dataset": None, "study": None, "run": None}
    if campaign_slug:
        scope["campaign"] = Campaign.objects.select_related("dataset").filter(slug=campaign_slug).first()
        if scope["campaign"] is None:
            raise ExportError(f"No campaign with slug {campaign_slug!r}.")
    if dataset_name:
        scope["dataset"] = dataset_by_name(name=dataset_name)
    if study_slug:
        scope["study"] = Study.objects.filter(slug=study_slug).first()
        if scope["study"] is None:
            raise ExportError(f"No study with slug {study_slug!r}.")
    if run_id is not None:
        scope["run"] = JudgeRun.objects.filter(pk=run_id).select_related("dataset").first()
        if scope["run"] is None:
            raise ExportError(f"No judge run {run_id}.")
    return scope


def people_list(*, limit: int = 500):
    """Accounts with their roles (one extra query for all roles), active ones first, by name."""
    users = list(
        get_user_model()
        .objects.order_by("-is_active", "username")
        .prefetch_related("groups")
        .only("id", "username", "is_active", "is_superuser", "last_login", "date_joined")[:limit]
    )
    for user in users:
        # Read by the people page beside the account's fields (an attribute, not a model field).
        user.role_names = sorted(group.name for group in user.groups.all() if group.name in Role.values)  # type: ignore[attr-defined]
    return users


def invitation_list(*, limit: int = 100):
    """The latest invitations, newest first, with who made and who used them."""
    return Invitation.objects.select_related("created_by", "used_by")[:limit]
