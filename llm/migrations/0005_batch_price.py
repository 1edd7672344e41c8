"""An endpoint's prices through the Batch API (blank: half the live prices)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0004_shared_budget"),
    ]

    operations = [
        migrations.AddField(
            model_name="endpoint",
            name="batch_input_price_per_million",
            field=models.DecimalField(blank=True, decimal_places=4, max_digits=10, null=True),
        ),
        migrations.AddField(
            model_name="endpoint",
            name="batch_output_price_per_million",
            field=models.DecimalField(blank=True, decimal_places=4, max_digits=10, null=True),
        ),
    ]
