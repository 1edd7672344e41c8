"""The audit log: one service every app calls when someone touches participant data or the
set-up that spends money, and one selector for the researcher's page (its export table is
`core/audit_export.py`).

Call `audit_record` inside the transaction of the change it records, so a change that rolls
back leaves no entry and an entry never describes a change that did not happen.
"""

from django.db import models
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from core.models import AuditEvent


class AuditAction(models.TextChoices):
    """The actions Userbench records. Pages of other apps may pass their own string as well;
    it is shown as written."""

    EXPORT = "export", _("Exported participant data")
    RAW_EXPORT = "raw_export", _("Exported participants' unreviewed text")
    STUDY_CHANGED = "study_changed", _("Changed a study")
    CAMPAIGN_CHANGED = "campaign_changed", _("Changed a campaign")
    ENDPOINT_CHANGED = "endpoint_changed", _("Changed an endpoint")
    TEMPLATE_CHANGED = "template_changed", _("Changed a judge template")
    RUN_CANCELLED = "run_cancelled", _("Cancelled a judge run")
    LOGIN_FAILED = "login_failed", _("Failed log-in")
    PARTICIPANT_WITHDRAWN = "participant_withdrawn", _("Withdrew a participant and erased their data")
    DUPLICATE_RESOLVED = "duplicate_resolved", _("Resolved submissions sharing a Prolific ID")
    SUBMISSIONS_EXPIRED = "submissions_expired", _("Erased abandoned submissions")
    ANSWERS_IMPORTED = "answers_imported", _("Imported candidate answers")
    GENERATION_STARTED = "generation_started", _("Started generating candidate answers")
    GENERATION_CANCELLED = "generation_cancelled", _("Cancelled generating candidate answers")
    GENERATION_RESUMED = "generation_resumed", _("Resumed generating candidate answers")
    TOKEN_CREATED = "token_created", _("Created an API token")
    TOKEN_REVOKED = "token_revoked", _("Revoked an API token")


MAX_NAME = AuditEvent._meta.get_field("actor_name").max_length
MAX_TARGET = AuditEvent._meta.get_field("target").max_length


def audit_record(*, actor, action: str, target: str = "", details: dict | None = None) -> AuditEvent:
    """Write one entry of the audit log and return it.

    `actor`: the signed-in person (a User), or None for the system and the command line; an
    anonymous user counts as None. `action`: an AuditAction value (or another short string,
    at most 40 characters). `target`: what was acted on, as "<kind>:<key>" such as
    "study:demo", "run:12", "endpoint:local-vllm" or "export:cases". `details`: a small
    JSON-serialisable dict of what a reader needs (never a secret, a password, an IP address or
    a participant's text). For a failed log-in pass the typed user name as details["username"];
    it becomes the entry's name.
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
    )


def audit_events(*, action: str = "") -> QuerySet[AuditEvent]:
    """The audit log, newest first, optionally of one action."""
    events = AuditEvent.objects.order_by("-created_at", "-id")
    return events.filter(action=action) if action else events


def audit_action_label(action: str) -> str:
    """The readable name of an action; an action no AuditAction lists is shown as written."""
    return str(AuditAction(action).label) if action in AuditAction.values else action
