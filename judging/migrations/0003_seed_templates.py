"""Seed the judge templates of the three papers so a run can start on a fresh database.

Primary keys start at 1000 so the demo fixture's own templates (pks 1-2) never collide;
on PostgreSQL the sequence is then moved past them.
"""

from django.core.management.color import no_style
from django.db import migrations

FIRST_PK = 1000


def seed(apps, schema_editor):
    from judging.prompts import default_templates

    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    existing = set(JudgeTemplate.objects.values_list("name", flat=True))
    rows = [
        JudgeTemplate(pk=FIRST_PK + index, name=t.name, version=1, mode=t.mode, language=t.language, text=t.text)
        for index, t in enumerate(default_templates())
        if t.name not in existing
    ]
    JudgeTemplate.objects.bulk_create(rows)
    connection = schema_editor.connection
    statements = connection.ops.sequence_reset_sql(no_style(), [JudgeTemplate])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def unseed(apps, schema_editor):
    from judging.prompts import default_templates

    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    JudgeTemplate.objects.filter(name__in=[t.name for t in default_templates()], version=1, runs=None).delete()


class Migration(migrations.Migration):
    dependencies = [("judging", "0002_runs_shards_cache")]
    operations = [migrations.RunPython(seed, unseed)]
