"""A candidate model belongs to a workspace, its name unique there: two teams' `gpt-4o` are two
models, each with its own provider and family (`describe_model`).

Until now one row served every workspace that used the name. Each row goes to the workspace
that used it (its answers' datasets, its generations, runs, campaigns, pairs and votes); a row
used by several is kept by the default workspace when that is one of them (else the one with
the smallest id) and copied, with its provider and family, into each other one, whose rows are
pointed at the copy. A row nothing uses goes to the default workspace, where every object was
put when workspaces came. Names are kept, so every page and export names the same models.
Undo is allowed only while no two workspaces hold the same model name."""

import django.db.models.deletion
from django.db import migrations, models

import core.models

DEFAULT_SLUG = "default"


def _users(apps):
    """(model, field, path to the workspace id) of every row that refers to a candidate model."""
    judging = [
        ("Answer", "model", "item__dataset__workspace_id"),
        ("AnswerSet", "model", "dataset__workspace_id"),
        ("AnswerGeneration", "model", "dataset__workspace_id"),
        ("Judgment", "model", "run__workspace_id"),
        ("JudgeRun", "reference_model", "workspace_id"),
    ]
    annotation = [
        ("ComparisonPair", "model_a", "campaign__workspace_id"),
        ("ComparisonPair", "model_b", "campaign__workspace_id"),
        ("Vote", "model_a", "item__dataset__workspace_id"),
        ("Vote", "model_b", "item__dataset__workspace_id"),
        ("ModelPairSlots", "model_a", "campaign__workspace_id"),
        ("ModelPairSlots", "model_b", "campaign__workspace_id"),
    ]
    rows = [(apps.get_model("judging", name), field, path) for name, field, path in judging]
    rows += [(apps.get_model("annotation", name), field, path) for name, field, path in annotation]
    # The many-to-many tables: a run's and a campaign's candidates.
    rows.append((apps.get_model("judging", "JudgeRun").candidates.through, "candidatemodel", "judgerun__workspace_id"))
    rows.append(
        (apps.get_model("annotation", "Campaign").candidates.through, "candidatemodel", "campaign__workspace_id")
    )
    return rows


def models_to_workspaces(apps, schema_editor):
    CandidateModel = apps.get_model("judging", "CandidateModel")
    Workspace = apps.get_model("core", "Workspace")
    default = Workspace.objects.filter(slug=DEFAULT_SLUG).first()
    if default is None:
        default = Workspace.objects.create(slug=DEFAULT_SLUG, name="Default")
    users = _users(apps)
    for model in CandidateModel.objects.order_by("pk"):
        used_in: set[int] = set()
        for table, field, path in users:
            used_in |= set(table.objects.filter(**{f"{field}_id": model.pk}).values_list(path, flat=True).distinct())
        used_in.discard(None)
        owner = default.pk if default.pk in used_in or not used_in else min(used_in)
        CandidateModel.objects.filter(pk=model.pk).update(workspace_id=owner)
        for workspace_id in sorted(used_in - {owner}):
            copy = CandidateModel.objects.create(
                name=model.name,
                provider=model.provider,
                family=model.family,
                is_probe=model.is_probe,
                workspace_id=workspace_id,
            )
            for table, field, path in users:
                table.objects.filter(**{f"{field}_id": model.pk, path: workspace_id}).update(**{f"{field}_id": copy.pk})


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0004_token_tombstones_audit_subject"),
        ("judging", "0022_answer_cut_off"),
        # The copies' rows are pointed at them in annotation's tables too.
        ("annotation", "0013_campaign_pins_answer_versions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="candidatemodel",
            name="name",
            field=models.CharField(max_length=128),
        ),
        migrations.AddField(
            model_name="candidatemodel",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="core.workspace"
            ),
        ),
        migrations.RunPython(models_to_workspaces, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="candidatemodel",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                default=core.models.default_workspace_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="core.workspace",
            ),
        ),
        migrations.AddConstraint(
            model_name="candidatemodel",
            constraint=models.UniqueConstraint(
                fields=("workspace", "name"), name="candidate_model_name_unique_per_workspace"
            ),
        ),
    ]
