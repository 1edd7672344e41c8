"""An endpoint's name is unique within its workspace, not across the server (names were unique
across the server until now, so every existing one keeps resolving). Undo is allowed only while
no two workspaces hold the same endpoint name."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0009_response_cache_rows_to_their_runs_workspace"),
    ]

    operations = [
        migrations.AlterField(
            model_name="endpoint",
            name="name",
            field=models.CharField(max_length=64),
        ),
        migrations.AddConstraint(
            model_name="endpoint",
            constraint=models.UniqueConstraint(fields=("workspace", "name"), name="endpoint_name_unique_per_workspace"),
        ),
    ]
