"""Provider limits as one budget shared by every worker and run: tokens per minute on an
endpoint, and the budget's row, its in-flight leases and its sliding minute of spends."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0003_workspace"),
    ]

    operations = [
        migrations.CreateModel(
            name="SharedBudget",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=400, unique=True)),
                ("not_before", models.DateTimeField(blank=True, null=True)),
                ("touched_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.AddField(
            model_name="endpoint",
            name="tokens_per_minute",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="BudgetSpend",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField()),
                ("requests", models.PositiveIntegerField()),
                ("tokens", models.PositiveBigIntegerField()),
                (
                    "budget",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="spends", to="llm.sharedbudget"
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["budget", "at"], name="budget_spend_at")],
            },
        ),
        migrations.CreateModel(
            name="BudgetLease",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("holder", models.CharField(max_length=100)),
                ("slots", models.PositiveIntegerField(default=0)),
                ("wanted", models.PositiveIntegerField(default=0)),
                ("expires_at", models.DateTimeField()),
                (
                    "budget",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="leases", to="llm.sharedbudget"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("budget", "holder"), name="budget_lease_one_per_holder")
                ],
            },
        ),
    ]
