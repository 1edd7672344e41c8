"""The audit log: one service every app calls when someone touches participant data or the
set-up that spends money, and one selector for the researcher's page (its export table is
`core/audit_export.py`).

Call `audit_record` inside the transaction of the change it records, so a change that rolls
back leaves no entry and an entry never describes a change that did not happen.
"""

from django.db import models
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from core.models import AuditEvent, Workspace
from core.workspaces import scoped


class AuditAction(models.TextChoices):
    """The actions Userbench records. Pages of other apps may pass their own string as well;
    it is shown as written."""

    EXPORT = "export", _("Exported participant data")
    RAW_EXPORT = "raw_export", _("Exported participants' unreviewed text")
    STUDY_CHANGED = "study_changed", _("Changed a study")
    CAMPAIGN_CHANGED = "campaign_changed", _("Changed a campaign")
    ENDPOINT_CHANGED = "endpoint_changed", _("Changed an endpoint")
    ENDPOINT_TESTED = "endpoint_tested", _("Tested an endpoint's connection")
    PEOPLE_CHANGED = "people_changed", _("Changed an account or its roles")
    INVITATION_CHANGED = "invitation_changed", _("Made, used or withdrew an invitation")
    WORKSPACE_CHANGED = "workspace_changed", _("Changed a workspace")
    RUN_CHANGED = "run_changed", _("Started or resumed a judge run")
    TEMPLATE_CHANGED = "template_changed", _("Changed a judge template")
    RUN_CANCELLED = "run_cancelled", _("Cancelled a judge run")
    LOGIN_FAILED = "login_failed", _("Failed log-in")
    PARTICIPANT_WITHDRAWN = "participant_withdrawn", _("Withdrew a participant and erased their data")
    DUPLICATE_RESOLVED = "duplicate_resolved", _("Resolved submissions sharing a Prolific ID")
    SUBMISSIONS_EXPIRED = "submissions_expired", _("Erased abandoned submissions")


MAX_NAME = AuditEvent._meta.get_field("actor_name").max_length
MAX_TARGET = AuditEvent._meta.get_field("target").max_length


def audit_record(
    *, actor, action: str, target: str = "", details: dict | None = None, workspace: Workspace | int | None = None
) -> AuditEvent:
    """Write one entry of the audit log and return it.

    `actor`: the signed-in person (a User), or None for the system and the command line; an
    anonymous user counts as None. `action`: an AuditAction value (or another short string,
    at most 40 characters). `target`: what was acted on, as "<kind>:<key>" such as
    "study:demo", "run:12", "endpoint:local-vllm" or "export:cases". `details`: a small
    JSON-serialisable dict of what a reader needs (never a secret, a password, an IP address or
    a participant's text). For a failed log-in pass the typed user name as details["username"];
    it becomes the entry's name. `workspace` (a Workspace or its id): whose members read the
    entry on /audit/; None for what belongs to no workspace.
    """
    details = dict(details or {})
    person = actor if actor is not None and getattr(actor, "is_authenticated", False) else None
    name = person.get_username() if person is not None else str(details.get("username", ""))
    return AuditEvent.objects.create(
        actor=person,
        actor_name=name[:MAX_NAME],
        action=str(action)[:40],
        target=str(target)[:MAX_TARGET],
        details=details,
        workspace_id=workspace.pk if isinstance(workspace, Workspace) else workspace,
    )


# A changed value longer than this is kept cut, with an ellipsis: the log says what changed, it is
# not a copy of a study's consent text.
MAX_VALUE_CHARS = 200


def audit_value(value):
    """A field's value as the audit log keeps it: JSON values as they are, anything else as text,
    long text cut."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [audit_value(part) for part in value][:50]
    text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def audit_changes(before: dict, after: dict) -> dict[str, list]:
    """{field: [before, after]} for every field whose value changed, as the audit log keeps them."""
    return {
        field: [audit_value(before.get(field)), audit_value(value)]
        for field, value in sorted(after.items())
        if before.get(field) != value
    }


def audit_events(*, action: str = "", user=None) -> QuerySet[AuditEvent]:
    """The audit log, newest first, optionally of one action. With a `user`, the entries of the
    workspaces where they are a researcher and those that belong to no workspace (failed
    log-ins, the operator's changes); a superuser reads every entry."""
    events = AuditEvent.objects.select_related("workspace").order_by("-created_at", "-id")
    if user is not None:
        events = scoped(events, user, role="researcher") | events.filter(workspace__isnull=True)
    return events.filter(action=action) if action else events


def audit_action_label(action: str) -> str:
    """The readable name of an action; an action no AuditAction lists is shown as written."""
    return str(AuditAction(action).label) if action in AuditAction.values else action
