"""An endpoint's timeout may be blank: each call then gets a deadline that fits the reply it asks
for (llm.config.call_deadline). Endpoints saved before keep the timeout they have."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0005_batch_price"),
    ]

    operations = [
        migrations.AlterField(
            model_name="endpoint",
            name="timeout_seconds",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
