"""A retired version of a model's answers says what retired it: a replace, a delete, or an earlier
version made current again, so the answers page can show each earlier version's story.

Versions retired before this have no record of it: a replace made the next version in the same
transaction as it retired the old one, so a successor made within seconds of the retirement
means a replace; otherwise it was a delete."""

from datetime import timedelta

from django.db import migrations, models

SAME_TRANSACTION = timedelta(seconds=5)


def _backfill(apps, schema_editor):
    AnswerSet = apps.get_model("judging", "AnswerSet")
    for retired in AnswerSet.objects.filter(retired_at__isnull=False, retired_by=""):
        successor = AnswerSet.objects.filter(
            dataset_id=retired.dataset_id,
            model_id=retired.model_id,
            version__gt=retired.version,
            created_at__gte=retired.retired_at - SAME_TRANSACTION,
            created_at__lte=retired.retired_at + SAME_TRANSACTION,
        )
        retired.retired_by = "replaced" if successor.exists() else "deleted"
        retired.save(update_fields=["retired_by"])


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0023_candidate_model_per_workspace"),
    ]

    operations = [
        migrations.AddField(
            model_name="answerset",
            name="retired_by",
            field=models.CharField(
                blank=True,
                choices=[
                    ("replaced", "Replaced"),
                    ("deleted", "Deleted"),
                    ("restored", "An earlier version made current again"),
                ],
                default="",
                max_length=16,
            ),
        ),
        migrations.RunPython(_backfill, migrations.RunPython.noop),
    ]
