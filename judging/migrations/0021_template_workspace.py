"""Judge templates belong to a workspace; the built-in ones (no workspace) are read-only.

Which existing versions are built-in: those no person wrote (`created_by` empty), i.e. the ones
migrations, `templates_ensure_defaults` and reproductions stored, and the operator's
`import_template` loads of the past (trusted like the environment's `default` endpoint). They
keep no workspace and stay shared, read-only.

Every version a person wrote (on the template page, `created_by` set) is an edit and moves to a
workspace, so that the team that made it keeps judging with it and no other team does:
- the workspace of the runs that used it; when runs of several workspaces used it, the workspace
  of the earliest of them (the others' runs keep pointing at the version they used: a run's
  templates never change);
- a version no run used goes to the default workspace, where every existing object was put when
  workspaces came, as the person who wrote it was a member there.
Version numbers are kept, so every run's record still names the version it used.

Undo drops the workspaces: allowed only while no two workspaces hold the same name and version.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

DEFAULT_SLUG = "default"


def edits_to_workspaces(apps, schema_editor):
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    JudgeRun = apps.get_model("judging", "JudgeRun")
    Workspace = apps.get_model("core", "Workspace")
    edited = list(JudgeTemplate.objects.exclude(created_by=None).only("pk"))
    if not edited:
        return
    default = Workspace.objects.filter(slug=DEFAULT_SLUG).first()
    if default is None:
        default = Workspace.objects.create(slug=DEFAULT_SLUG, name="Default")
    for template in edited:
        first_run = (
            JudgeRun.objects.filter(templates=template.pk).order_by("created_at", "pk").values("workspace_id").first()
        )
        workspace_id = first_run["workspace_id"] if first_run else default.pk
        JudgeTemplate.objects.filter(pk=template.pk).update(workspace_id=workspace_id)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0004_token_tombstones_audit_subject"),
        ("judging", "0020_answer_has_a_version"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="judgetemplate",
            name="template_version_unique",
        ),
        migrations.AddField(
            model_name="judgetemplate",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judge_templates",
                to="core.workspace",
            ),
        ),
        migrations.RunPython(edits_to_workspaces, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="judgetemplate",
            constraint=models.UniqueConstraint(fields=("workspace", "name", "version"), name="template_version_unique"),
        ),
        migrations.AddConstraint(
            model_name="judgetemplate",
            constraint=models.UniqueConstraint(
                condition=models.Q(("workspace__isnull", True)),
                fields=("name", "version"),
                name="builtin_template_version_unique",
            ),
        ),
    ]
