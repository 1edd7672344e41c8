"""The judge engine: run-wide windows (workers holding a run, their share and window), running
counts for cheap progress, auto concurrency and a per-run timeout, the watchdog that hands a
dead worker's shards to another, cut-off replies and context-length failures on judgments,
and stored leaderboards (RunFigures)."""

import django.db.models.deletion
from django.db import migrations, models


def count_existing_runs(apps, schema_editor):
    """Runs made before the counts existed get them from their judgments."""
    from django.db.models import Count, Q, Sum
    from django.db.models.functions import Coalesce

    JudgeRun = apps.get_model("judging", "JudgeRun")
    for run in JudgeRun.objects.all():
        totals = run.judgments.aggregate(
            replied=Count("pk", filter=Q(call_error="")),
            parse_failures=Count("pk", filter=Q(call_error="") & ~Q(parse_error="")),
            call_failures=Count("pk", filter=~Q(call_error="")),
            cached_replies=Count("pk", filter=Q(cached=True)),
            prompt_tokens=Coalesce(Sum("prompt_tokens", filter=Q(cached=False)), 0),
            completion_tokens=Coalesce(Sum("completion_tokens", filter=Q(cached=False)), 0),
        )
        JudgeRun.objects.filter(pk=run.pk).update(**totals)


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0006_beyond"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="cached_replies",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="call_failures",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="completion_tokens",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="concurrency_auto",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="cut_off",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="error",
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="parse_failures",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="prompt_tokens",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="replied",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="watchdog_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="timeout_seconds",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="judgment",
            name="call_error_kind",
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name="judgment",
            name="error_endpoint",
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name="judgment",
            name="finish_reason",
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.CreateModel(
            name="RunFigures",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("payload", models.JSONField(default=dict)),
                ("inputs", models.JSONField(default=dict)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                ("refresh_queued_at", models.DateTimeField(blank=True, null=True)),
                (
                    "run",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="figures", to="judging.judgerun"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="RunWorker",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("worker_id", models.CharField(max_length=100)),
                ("ceiling", models.PositiveIntegerField(default=0)),
                ("window", models.PositiveIntegerField(default=0)),
                ("in_flight", models.PositiveIntegerField(default=0)),
                ("overloads", models.PositiveIntegerField(default=0)),
                ("rate", models.FloatField(default=0.0)),
                ("heartbeat_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="workers", to="judging.judgerun"
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("run", "worker_id"), name="one_row_per_run_worker")],
            },
        ),
        migrations.RunPython(count_existing_runs, migrations.RunPython.noop),
    ]
