"""A campaign's title is unique within its workspace (another team may use the same title).
Titles were not unique until now: where one workspace holds several campaigns of the same title,
the earliest keeps it and each later one gets " (2)", " (3)"... Slugs (the annotators' links)
are unchanged."""

from django.db import migrations, models

TITLE_LENGTH = 200


def titles_made_unique(apps, schema_editor):
    Campaign = apps.get_model("annotation", "Campaign")
    taken: dict[int, set[str]] = {}
    for campaign in Campaign.objects.order_by("pk").only("pk", "workspace_id", "title"):
        titles = taken.setdefault(campaign.workspace_id, set())
        title, number = campaign.title, 1
        while title in titles:
            number += 1
            suffix = f" ({number})"
            title = campaign.title[: TITLE_LENGTH - len(suffix)] + suffix
        titles.add(title)
        if title != campaign.title:
            Campaign.objects.filter(pk=campaign.pk).update(title=title)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_campaign_pins_answer_versions"),
    ]

    operations = [
        migrations.RunPython(titles_made_unique, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="campaign",
            constraint=models.UniqueConstraint(
                fields=("workspace", "title"), name="campaign_title_unique_per_workspace"
            ),
        ),
    ]
