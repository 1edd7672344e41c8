"""Every answer now belongs to a version (0017 gave the old ones version 1)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0019_answer_versions_backfill")]

    operations = [
        migrations.AlterField(
            model_name="answer",
            name="answer_set",
            field=models.ForeignKey(on_delete=models.deletion.CASCADE, related_name="answers", to="judging.answerset"),
        ),
    ]
