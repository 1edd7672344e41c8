"""Batch runs: a judge run or a generation may go through the provider's Batch API, and each batch
it sends is a BatchJob row, written step by step (file, batch, results) so nothing is paid twice."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0010_english_pairwise"),
    ]

    operations = [
        migrations.AddField(
            model_name="answergeneration",
            name="batch",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="answergeneration",
            name="batch_poll_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="batch",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="batch_poll_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="BatchJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("preparing", "Preparing"),
                            ("uploaded", "Uploaded"),
                            ("submitted", "At the provider"),
                            ("collected", "Collected"),
                            ("settled", "Settled"),
                        ],
                        default="preparing",
                        max_length=16,
                    ),
                ),
                ("custom_ids", models.JSONField(default=list)),
                ("requests", models.PositiveIntegerField(default=0)),
                ("bytes", models.PositiveBigIntegerField(default=0)),
                ("input_file_id", models.CharField(blank=True, max_length=200)),
                ("batch_id", models.CharField(blank=True, max_length=200, null=True)),
                ("output_file_id", models.CharField(blank=True, max_length=200)),
                ("error_file_id", models.CharField(blank=True, max_length=200)),
                ("provider_status", models.CharField(blank=True, max_length=32)),
                ("completed", models.PositiveIntegerField(default=0)),
                ("failed", models.PositiveIntegerField(default=0)),
                ("prompt_tokens", models.PositiveBigIntegerField(default=0)),
                ("completion_tokens", models.PositiveBigIntegerField(default=0)),
                ("error", models.CharField(blank=True, max_length=500)),
                ("cancel_sent", models.BooleanField(default=False)),
                ("holder", models.CharField(blank=True, max_length=100)),
                ("held_until", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("submitted_at", models.DateTimeField(blank=True, null=True)),
                ("checked_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "generation",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="batch_jobs",
                        to="judging.answergeneration",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="batch_jobs",
                        to="judging.judgerun",
                    ),
                ),
            ],
            options={
                "ordering": ["created_at", "id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("run__isnull", False), ("generation__isnull", True)),
                            models.Q(("run__isnull", True), ("generation__isnull", False)),
                            _connector="OR",
                        ),
                        name="batch_job_has_one_owner",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("batch_id__isnull", False)),
                        fields=("batch_id",),
                        name="batch_job_batch_id_unique",
                    ),
                ],
            },
        ),
    ]
