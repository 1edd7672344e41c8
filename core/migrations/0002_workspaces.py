"""Workspaces and memberships. Everything that exists moves into one workspace, `default`, and
every active account holding a role becomes a member of it with the roles its groups gave it; a
superuser (who holds every role anyway) becomes its admin."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

ROLE_NAMES = ["researcher", "reviewer", "annotator"]


def default_workspace_with_members(apps, schema_editor):
    Workspace = apps.get_model("core", "Workspace")
    Membership = apps.get_model("core", "Membership")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    workspace, _ = Workspace.objects.get_or_create(slug="default", defaults={"name": "Default"})
    for user in User.objects.prefetch_related("groups"):
        names = {group.name for group in user.groups.all()} & set(ROLE_NAMES)
        if not names and not user.is_superuser:
            continue
        Membership.objects.get_or_create(
            workspace=workspace,
            user=user,
            defaults={name: name in names for name in ROLE_NAMES} | {"admin": bool(user.is_superuser)},
        )


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Workspace",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slug", models.SlugField(unique=True)),
                ("name", models.CharField(max_length=100)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={"ordering": ["slug"]},
        ),
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("researcher", models.BooleanField(default=False)),
                ("reviewer", models.BooleanField(default=False)),
                ("annotator", models.BooleanField(default=False)),
                ("admin", models.BooleanField(default=False)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="core.workspace"
                    ),
                ),
            ],
            options={
                "ordering": ["workspace__slug", "user__username"],
                "constraints": [
                    models.UniqueConstraint(fields=("workspace", "user"), name="membership_once_per_workspace")
                ],
            },
        ),
        migrations.CreateModel(
            name="WorkspaceInvitation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="core.workspace"
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="auditevent",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="core.workspace",
            ),
        ),
        migrations.RunPython(default_workspace_with_members, migrations.RunPython.noop),
    ]
