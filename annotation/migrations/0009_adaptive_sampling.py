"""Adaptive sampling: a campaign's design (fixed or adaptive, its vote budget and uniform share),
the probability with which an adaptive pair was chosen, recorded on the pair and copied onto its
votes, and the stored pairing design of an adaptive campaign."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_campaign_title_zh")]

    operations = [
        migrations.RemoveConstraint(
            model_name="storedfigures",
            name="stored_figures_have_a_scope",
        ),
        migrations.AddField(
            model_name="campaign",
            name="budget",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="campaign",
            name="sampling",
            field=models.CharField(
                choices=[
                    ("fixed", "Fixed: pairs drawn at creation"),
                    ("adaptive", "Adaptive: pairs chosen from the votes so far"),
                ],
                default="fixed",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="uniform_share",
            field=models.FloatField(default=0.2),
        ),
        migrations.AddField(
            model_name="comparisonpair",
            name="choice_probability",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="comparisonpair",
            name="chosen_by",
            field=models.CharField(blank=True, default="", max_length=12),
        ),
        migrations.AddField(
            model_name="vote",
            name="choice_probability",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="storedfigures",
            name="what",
            field=models.CharField(
                choices=[
                    ("campaign", "Campaign results"),
                    ("design", "Pairing design of an adaptive campaign"),
                    ("style", "Style-controlled Bradley-Terry of a campaign"),
                    ("bt", "Bradley-Terry over a dataset's votes"),
                    ("agreement", "Agreement over a dataset's votes"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="campaign",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("budget", 0), ("sampling", "fixed")),
                    models.Q(("budget__gte", models.F("votes_per_pair")), ("sampling", "adaptive")),
                    _connector="OR",
                ),
                name="campaign_budget_fits_sampling",
            ),
        ),
        migrations.AddConstraint(
            model_name="campaign",
            constraint=models.CheckConstraint(
                condition=models.Q(("uniform_share__gt", 0), ("uniform_share__lte", 1)),
                name="campaign_uniform_share_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="comparisonpair",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("choice_probability__isnull", True), ("chosen_by", "")),
                    models.Q(
                        ("choice_probability__gt", 0),
                        ("choice_probability__isnull", False),
                        ("choice_probability__lte", 1),
                        ("chosen_by__in", ["uniform", "information"]),
                    ),
                    _connector="OR",
                ),
                name="pair_choice_recorded_whole",
            ),
        ),
        migrations.AddConstraint(
            model_name="storedfigures",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("campaign__isnull", False), ("what__in", ["campaign", "style", "design"])),
                    models.Q(
                        models.Q(("what__in", ["campaign", "style", "design"]), _negated=True),
                        ("dataset__isnull", False),
                    ),
                    _connector="OR",
                ),
                name="stored_figures_have_a_scope",
            ),
        ),
    ]
