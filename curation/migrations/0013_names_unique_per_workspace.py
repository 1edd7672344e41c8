"""A dataset's name and a study's title are unique within their workspace, not across the server:
another team may use the same name. Names were unique across the server until now, so every
existing dataset keeps its name and every URL that names one still resolves.

Study titles were not unique at all: where one workspace holds several studies of the same
title, the earliest keeps it and each later one gets " (2)", " (3)"... (its slug, the
participants' link, is unchanged). Undo is allowed only while no two workspaces hold the same
dataset name."""

from django.db import migrations, models

TITLE_LENGTH = 200


def titles_made_unique(apps, schema_editor):
    Study = apps.get_model("curation", "Study")
    taken: dict[int, set[str]] = {}
    for study in Study.objects.order_by("pk").only("pk", "workspace_id", "title_en"):
        titles = taken.setdefault(study.workspace_id, set())
        title, number = study.title_en, 1
        while title in titles:
            number += 1
            suffix = f" ({number})"
            title = study.title_en[: TITLE_LENGTH - len(suffix)] + suffix
        titles.add(title)
        if title != study.title_en:
            Study.objects.filter(pk=study.pk).update(title_en=title)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0004_token_tombstones_audit_subject"),
        ("curation", "0012_dataset_uploads"),
    ]

    operations = [
        migrations.AlterField(
            model_name="dataset",
            name="name",
            field=models.CharField(max_length=100),
        ),
        migrations.AddConstraint(
            model_name="dataset",
            constraint=models.UniqueConstraint(fields=("workspace", "name"), name="dataset_name_unique_per_workspace"),
        ),
        migrations.RunPython(titles_made_unique, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="study",
            constraint=models.UniqueConstraint(
                fields=("workspace", "title_en"), name="study_title_unique_per_workspace"
            ),
        ),
    ]
