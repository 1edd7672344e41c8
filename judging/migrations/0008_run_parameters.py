"""A judge run's parameters as data: an optional system prompt, and a temperature that may be
left unset (None sends no temperature, so the server's default applies)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0007_engine")]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="system_prompt",
            field=models.TextField(blank=True),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="temperature",
            field=models.FloatField(blank=True, default=0.0, null=True),
        ),
        migrations.AddConstraint(
            model_name="judgerun",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("temperature__isnull", True),
                    models.Q(("temperature__gte", 0), ("temperature__lte", 2)),
                    _connector="OR",
                ),
                name="run_temperature_in_range",
            ),
        ),
    ]
