"""Every Study and Dataset belongs to a workspace; what exists moves into `default`
(made by core's 0002_workspaces with the existing staff as its members)."""

import django.db.models.deletion
from django.db import migrations, models

import core.models

MODELS = ["Study", "Dataset"]


def into_default_workspace(apps, schema_editor):
    Workspace = apps.get_model("core", "Workspace")
    workspace, _ = Workspace.objects.get_or_create(slug="default", defaults={"name": "Default"})
    for model in MODELS:
        apps.get_model("curation", model).objects.filter(workspace__isnull=True).update(workspace=workspace)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_workspaces"),
        ("curation", "0007_security"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="core.workspace"
            ),
        ),
        migrations.AddField(
            model_name="dataset",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="core.workspace"
            ),
        ),
        migrations.RunPython(into_default_workspace, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="study",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                default=core.models.default_workspace_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="core.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="dataset",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                default=core.models.default_workspace_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="core.workspace",
            ),
        ),
    ]
