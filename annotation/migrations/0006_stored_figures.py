"""Stored statistics (BT, style-controlled BT, bootstrap, agreement, alignment, annotator quality)
with the inputs they came from."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_manifest"),
        ("curation", "0007_security"),
        ("judging", "0007_engine"),
    ]

    operations = [
        migrations.CreateModel(
            name="StoredFigures",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=200, unique=True)),
                (
                    "what",
                    models.CharField(
                        choices=[
                            ("campaign", "Campaign results"),
                            ("style", "Style-controlled Bradley-Terry of a campaign"),
                            ("bt", "Bradley-Terry over a dataset's votes"),
                            ("agreement", "Agreement over a dataset's votes"),
                        ],
                        max_length=16,
                    ),
                ),
                ("rounds", models.PositiveIntegerField(default=1000)),
                ("seed", models.BigIntegerField(default=0)),
                ("payload", models.JSONField(default=dict)),
                ("inputs", models.JSONField(default=dict)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                ("refresh_queued_at", models.DateTimeField(blank=True, null=True)),
                (
                    "campaign",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotation.campaign",
                    ),
                ),
                (
                    "dataset",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="curation.dataset",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="judging.judgerun",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "stored figures",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("campaign__isnull", False), ("what__in", ["campaign", "style"])),
                            models.Q(
                                models.Q(("what__in", ["campaign", "style"]), _negated=True), ("dataset__isnull", False)
                            ),
                            _connector="OR",
                        ),
                        name="stored_figures_have_a_scope",
                    )
                ],
            },
        ),
    ]
