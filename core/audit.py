"""The audit log: one service every app calls when someone touches participant data or the
set-up that spends money, and one selector for the researcher's page (its export table is
`core/audit_export.py`).

Call `audit_record` inside the transaction of the change it records, so a change that rolls
back leaves no entry and an entry never describes a change that did not happen.
"""

from django.db import models
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from core.models import AuditEvent, Workspace
from core.workspaces import is_everywhere, scoped


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
    PROLIFIC_DECIDED = "prolific_decided", _("Decided a flagged submission for Prolific")
    SUBMISSIONS_EXPIRED = "submissions_expired", _("Erased abandoned submissions")
    DATASET_IMPORTED = "dataset_imported", _("Imported a dataset")
    ANSWERS_IMPORTED = "answers_imported", _("Imported candidate answers")
    ANSWERS_REPLACED = "answers_replaced", _("Replaced a model's candidate answers")
    ANSWERS_DELETED = "answers_deleted", _("Deleted a model's candidate answers")
    ANSWERS_RESTORED = "answers_restored", _("Made an earlier version of a model's candidate answers current again")
    GENERATION_STARTED = "generation_started", _("Started generating candidate answers")
    GENERATION_CANCELLED = "generation_cancelled", _("Cancelled generating candidate answers")
    GENERATION_RESUMED = "generation_resumed", _("Resumed generating candidate answers")
    TOKEN_CREATED = "token_created", _("Created an API token")
    TOKEN_REVOKED = "token_revoked", _("Revoked an API token")
    ARCHIVED = "archived", _("Archived a dataset, run, campaign or study")
    RESTORED = "restored", _("Restored an archived dataset, run, campaign or study")
    PURGED = "purged", _("Deleted an archived dataset, run, campaign or study for good")
    UPLOAD_DISCARDED = "upload_discarded", _("Discarded a large upload that was refused or stopped")


MAX_NAME = AuditEvent._meta.get_field("actor_name").max_length
MAX_TARGET = AuditEvent._meta.get_field("target").max_length


def audit_record(
    *,
    actor,
    action: str,
    target: str = "",
    details: dict | None = None,
    workspace: Workspace | int | None = None,
    subject=None,
) -> AuditEvent:
    """Write one entry of the audit log and return it.

    `actor`: the signed-in person (a User), or None for the system and the command line; an
    anonymous user counts as None. `action`: an AuditAction value (or another short string,
    at most 40 characters). `target`: what was acted on, as "<kind>:<key>" such as
    "study:demo", "run:12", "endpoint:local-vllm" or "export:cases". `details`: a small
    JSON-serialisable dict of what a reader needs (never a secret, a password, an IP address or
    a participant's text). For a failed log-in pass the typed user name as details["username"];
    it becomes the entry's name. `workspace` (a Workspace or its id): whose members read the
    entry on /audit/; None for what belongs to no workspace. `subject`: the person an entry
    outside any workspace is about (their tokens, a failed log-in with their name): they read it,
    and superusers; an entry with neither is for superusers only.
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
        subject=subject,
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


def audit_events(*, action: str = "", user=None, workspace: Workspace | None = None) -> QuerySet[AuditEvent]:
    """The audit log, newest first, optionally of one action and of one `workspace`. With a
    `user`: the entries of the workspaces where they are a researcher (of their current one, when
    they chose one), and of no workspace those about them or done by them (their tokens, failed
    log-ins with their name); a superuser reads every entry, failed log-ins of unknown names
    included."""
    events = AuditEvent.objects.select_related("workspace").order_by("-created_at", "-id")
    if user is not None:
        personal = Q(workspace__isnull=True) & (Q(subject=user) | Q(actor=user))
        if is_everywhere(user):
            personal = Q(workspace__isnull=True)
        events = scoped(events, user, role="researcher") | events.filter(personal)
    if workspace is not None:
        events = events.filter(workspace=workspace)
    return events.filter(action=action) if action else events


def audit_action_label(action: str) -> str:
    """The readable name of an action; an action no AuditAction lists is shown as written."""
    return str(AuditAction(action).label) if action in AuditAction.values else action


# The words /audit/ shows for the keys of an entry's details; a key not listed is shown as written.
DETAIL_LABELS = {
    "created": _("created"),
    "deleted": _("deleted"),
    "fields": _("fields changed"),
    "changes": _("changed"),
    "change": _("what"),
    "roles": _("roles"),
    "admin": _("workspace admin"),
    "via": _("from"),
    "model": _("model"),
    "ok": _("answered"),
    "was": _("status before"),
    "shards": _("shards queued"),
    "calls": _("calls"),
    "of": _("re-run of run"),
    "changed": _("judgments changed"),
    "pairs": _("pairs"),
    "annotators": _("annotators"),
    "version": _("version"),
    "from_version": _("from version"),
    "imported": _("imported"),
    "days": _("days valid"),
    "user": _("account"),
    "username": _("typed user name"),
    "locked_out": _("locked out"),
    "dataset": _("dataset"),
    "study": _("study"),
    "studies": _("studies"),
    "run": _("run"),
    "kept": _("submission kept"),
    "submission": _("submission"),
    "excluded": _("submissions excluded"),
    "count": _("count"),
    "idle_days": _("idle days"),
    "format": _("file format"),
    "items": _("items"),
    "added": _("added"),
    "removed": _("removed"),
    "leases_returned": _("leases returned to the pool"),
}
# The words for a few values: where a change came from, and what happened to an account.
VALUE_LABELS = {
    "admin": _("the admin"),
    "api": _("the API"),
    "command": _("the command line"),
    "created": _("created"),
    "roles changed": _("roles changed"),
    "activated": _("activated"),
    "deactivated": _("deactivated"),
    "used": _("used"),
    "withdrawn": _("withdrawn"),
    "started": _("started"),
    "resumed": _("resumed"),
    "rerun": _("re-run"),
    "reparsed": _("parsed again"),
    # A flagged submission's decision for Prolific (prolific_decision before and after).
    "approve": _("approve"),
    "reject": _("reject"),
}


def _shown(value) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return str(_("yes") if value else _("no"))
    if isinstance(value, list):
        return ", ".join(_shown(part) for part in value) or "—"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_shown(part)}" for key, part in value.items())
    text = str(value)
    return str(VALUE_LABELS[text]) if text in VALUE_LABELS else text


def audit_detail_rows(details: dict) -> list[tuple[str, str]]:
    """An entry's details as (label, text) pairs in the reader's language: a value that changed
    reads "before → after", one per changed field."""
    rows: list[tuple[str, str]] = []
    for key, value in details.items():
        label = str(DETAIL_LABELS.get(key, key))
        if key == "changes" and isinstance(value, dict):
            rows.extend(
                (str(field), f"{_shown(pair[0])} → {_shown(pair[1])}")
                for field, pair in value.items()
                if isinstance(pair, list) and len(pair) == 2
            )
        elif (
            key in ("roles", "admin")
            and isinstance(value, list)
            and len(value) == 2
            and not all(isinstance(v, str) for v in value)
        ):
            rows.append((label, f"{_shown(value[0])} → {_shown(value[1])}"))
        else:
            rows.append((label, _shown(value)))
    return rows
