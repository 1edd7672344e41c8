"""Arena-Hard-Auto v0.1's judge template (its arena-hard-v0.1.yaml `prompt_template`, the
placeholders named as Userbench names them) becomes a judge template, so that a pairwise run of
that benchmark is judged with it.

The text is frozen here (a migration never reads live code); it equals
judging.benchmarks.arena_hard.USER_TEMPLATE, which a test checks against the published file. A
database that already holds this exact text under the name gets nothing new.
"""

from django.db import migrations

NAME = "arena_hard/pairwise/en"
TEXT = (
    "<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{output_1}\n<|The End of Assistant A's "
    "Answer|>\n\n<|The Start of Assistant B's Answer|>\n{output_2}\n<|The End of Assistant B's Answer|>"
)


def add_arena_hard_template(apps, schema_editor):
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    newest = JudgeTemplate.objects.filter(name=NAME).order_by("-version").first()
    if newest is not None and newest.text == TEXT:
        return
    JudgeTemplate.objects.create(
        name=NAME, version=newest.version + 1 if newest else 1, mode="pairwise", language="en", text=TEXT
    )


def remove_arena_hard_template(apps, schema_editor):
    """Undo: drop this version unless a run or judgment uses it."""
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    Judgment = apps.get_model("judging", "Judgment")
    used = set(Judgment.objects.exclude(template=None).values_list("template_id", flat=True))
    JudgeTemplate.objects.filter(name=NAME, text=TEXT, runs=None).exclude(pk__in=used).delete()


class Migration(migrations.Migration):
    dependencies = [("judging", "0013_run_start_key")]

    operations = [migrations.RunPython(add_arena_hard_template, remove_arena_hard_template)]
