"""The judge templates as the papers print them become the newest version of every name.

Rows already there (the earlier paraphrases, researchers' own revisions) stay as older
versions, so a run keeps pointing at the exact text it used. A name whose newest version
already holds the faithful text gets nothing new, so the migration is harmless on a fresh
database (after 0003 replays its own frozen seed) and when run twice.

Reads its texts from `_faithful_templates` (a frozen copy), never from judging.prompts.building.
"""

from django.db import migrations

from judging.migrations._faithful_templates import TEMPLATES


def add_faithful_versions(apps, schema_editor):
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    newest = {}
    for template in JudgeTemplate.objects.filter(name__in=[row[0] for row in TEMPLATES]).order_by("name", "version"):
        newest[template.name] = template
    JudgeTemplate.objects.bulk_create(
        JudgeTemplate(
            name=name,
            version=newest[name].version + 1 if name in newest else 1,
            mode=mode,
            language=language,
            text=text,
        )
        for name, mode, language, text in TEMPLATES
        if name not in newest or newest[name].text != text
    )


def remove_faithful_versions(apps, schema_editor):
    """Undo: drop the faithful versions this migration added that no run or judgment uses."""
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    Judgment = apps.get_model("judging", "Judgment")
    used = set(Judgment.objects.exclude(template=None).values_list("template_id", flat=True))
    for name, _mode, _language, text in TEMPLATES:
        JudgeTemplate.objects.filter(name=name, text=text, version__gt=1, runs=None).exclude(pk__in=used).delete()


class Migration(migrations.Migration):
    dependencies = [("judging", "0004_endpoint_cache_to_llm")]
    operations = [migrations.RunPython(add_faithful_versions, remove_faithful_versions)]
