"""Endpoints may state no concurrency limit (runs then find the server's capacity) and carry
their own max_tokens; the response cache records why a reply ended (cut off by max_tokens)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="endpoint", name="endpoint_in_flight_positive"),
        migrations.AlterField(
            model_name="endpoint",
            name="max_in_flight",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="endpoint",
            name="max_tokens",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="llmresponse",
            name="finish_reason",
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddConstraint(
            model_name="endpoint",
            constraint=models.CheckConstraint(
                condition=models.Q(("max_in_flight__isnull", True), ("max_in_flight__gte", 1), _connector="OR"),
                name="endpoint_in_flight_positive",
            ),
        ),
        migrations.AddConstraint(
            model_name="endpoint",
            constraint=models.CheckConstraint(
                condition=models.Q(("max_tokens__isnull", True), ("max_tokens__gte", 1), _connector="OR"),
                name="endpoint_max_tokens_positive",
            ),
        ),
    ]
