"""Audit entries written before every entry carried its workspace get it where the target names
an object that still exists (a dataset, study, campaign, run or endpoint), and entries about a
person (their API tokens, failed log-ins with their user name) get that person as their subject.
What cannot be derived stays without a workspace: superusers read it."""

from django.db import migrations

# The target's kind -> (app, model, the field its key is).
KINDS = {
    "dataset": ("curation", "Dataset", "name"),
    "study": ("curation", "Study", "slug"),
    "campaign": ("annotation", "Campaign", "slug"),
    "run": ("judging", "JudgeRun", "pk"),
    "endpoint": ("llm", "Endpoint", "name"),
}


def _workspace_of(apps, target: str, details: dict):
    kind, _, key = target.partition(":")
    if kind == "export" and isinstance(details, dict):
        for name in ("study", "dataset", "run"):
            if details.get(name):
                kind, key = name, str(details[name])
                break
    if kind not in KINDS or not key:
        return None
    app, model, field = KINDS[kind]
    if field == "pk" and not key.isdigit():
        return None
    # Only a name that means one object: never guess between two workspaces.
    found = list(apps.get_model(app, model).objects.filter(**{field: key}).values_list("workspace_id", flat=True)[:2])
    return found[0] if len(found) == 1 else None


def backfill(apps, schema_editor):
    AuditEvent = apps.get_model("core", "AuditEvent")
    User = apps.get_model("auth", "User")
    for event in AuditEvent.objects.filter(workspace__isnull=True).iterator(chunk_size=500):
        changed = []
        if event.action in ("token_created", "token_revoked") and event.actor_id:
            event.subject_id = event.actor_id
            changed.append("subject")
        elif event.action == "login_failed":
            typed = (event.details or {}).get("username") if isinstance(event.details, dict) else None
            person = User.objects.filter(username=typed).values_list("pk", flat=True).first() if typed else None
            if person:
                event.subject_id = person
                changed.append("subject")
        else:
            workspace = _workspace_of(apps, event.target or "", event.details)
            if workspace:
                event.workspace_id = workspace
                changed.append("workspace")
        if changed:
            event.save(update_fields=changed)


class Migration(migrations.Migration):
    dependencies = [
        ("home", "0001_initial"),
        ("core", "0004_token_tombstones_audit_subject"),
        ("curation", "0008_workspace"),
        ("annotation", "0009_adaptive_sampling"),
        ("judging", "0012_judgment_refers_to_its_reply"),
        ("llm", "0006_deadline_fits_the_reply"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
