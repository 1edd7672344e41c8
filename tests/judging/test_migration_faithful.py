"""Migration 0005 (faithful templates) on a database that already holds the demo data and the earlier templates:
the faithful texts become the newest versions, older rows stay, runs keep their versions.

It runs the upgrade's commands on a SQLite file of its own, as an upgrade would (migrate,
seed_demo with USERBENCH_DEMO=1 DEBUG=1, migrate again), so the test database is never migrated
backwards; the whole sequence runs in one `manage.py shell` (starting Django once, not per step),
which prints what the templates looked like after each step."""

import importlib
import json
import os
import subprocess
import sys

from django.conf import settings

from judging.migrations._faithful_templates import TEMPLATES
from judging.prompts.building import default_templates

# The database as a release before 0004 left it: every seeded template still the paraphrase,
# and the demo run pointing at two of them.
MAKE_IT_OLD = """
from judging.models import JudgeRun, JudgeTemplate, Judgment
# Before 0005 a name had only the version 0003 seeded: later ones (and what used them) go back to it.
for later in JudgeTemplate.objects.defer("workspace").filter(name__contains="/", version__gt=1):
    first = JudgeTemplate.objects.defer("workspace").get(name=later.name, version=1)
    Judgment.objects.filter(template=later).update(template=first)
    for run in JudgeRun.objects.only("pk").filter(templates=later):
        run.templates.remove(later)
        run.templates.add(first)
    # Without the delete collector: it would read columns this old schema does not have.
    JudgeTemplate.objects.defer("workspace").filter(pk=later.pk)._raw_delete(JudgeTemplate.objects.db)
for template in JudgeTemplate.objects.defer("workspace").filter(name__contains="/"):
    JudgeTemplate.objects.defer("workspace").filter(pk=template.pk).update(text="paraphrase of " + template.name)
old = JudgeTemplate.objects.defer("workspace").get(name="urs/factual_qa/en", version=1)
# Only the columns 0003 had (hence the defer(...) above too): later migrations add fields this old schema lacks.
run = JudgeRun.objects.only("pk").get(pk=1)
run.templates.add(old, JudgeTemplate.objects.defer("workspace").get(name="alpacaeval/pairwise/zh", version=1))
Judgment.objects.filter(pk=Judgment.objects.filter(run=run).order_by("pk").values("pk")[:1]).update(template=old)
"""
DUMP = """
def state():
    from judging.models import JudgeTemplate, Judgment
    return {
        "templates": [[t.name, t.version, t.text, t.mode, t.language] for t in JudgeTemplate.objects.defer("workspace").order_by("name", "version")],
        "run_templates": sorted([t.name, t.version] for t in JudgeTemplate.objects.defer("workspace").filter(runs__pk=1)),
        "judgment_templates": sorted(set(Judgment.objects.filter(run_id=1).values_list("template__name", "template__version"))),
    }
"""
UPGRADE = (
    """
import io
import json
from django.core.management import call_command

def migrate(*target):
    call_command("migrate", *target, interactive=False, verbosity=0)

"""
    + DUMP
    + """
states = {}
migrate()
states["fresh"] = state()
seeded = io.StringIO()
call_command("seed_demo", stdout=seeded)
states["seeded"] = seeded.getvalue()
# The demo is loaded through today's models, so on today's schema; going back to 0003 then
# takes away the unused faithful versions, as a database of that release would be.
migrate("judging", "0003")
"""
    + MAKE_IT_OLD
    + """
states["before"] = state()
migrate()
states["after"] = state()
# Back to 0003 and forward again: the unused faithful versions go and come back.
migrate("judging", "0003")
states["back"] = state()
migrate()
states["again"] = state()
print(json.dumps(states))
"""
)


def upgrade(db) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(DATABASE_URL=f"sqlite:///{db}", DEBUG="1", USERBENCH_DEMO="1", DJANGO_SETTINGS_MODULE="config.settings")
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", UPGRADE],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_frozen_copy_equals_the_live_defaults():
    """0005, 0010 and 0013 write their own copies; a change to a built-in template needs a new data migration."""
    english = importlib.import_module("judging.migrations.0010_english_pairwise")
    arena = importlib.import_module("judging.migrations.0014_arena_hard_template")
    frozen = [tuple(row) for row in TEMPLATES] + [
        (english.NAME, "pairwise", "en", english.TEXT),
        (arena.NAME, "pairwise", "en", arena.TEXT),
    ]
    assert frozen == [(t.name, t.mode, t.language, t.text) for t in default_templates()]


def test_upgrading_the_demo_database_keeps_old_versions_and_adds_the_faithful_ones(tmp_path):
    states = upgrade(tmp_path / "upgrade.sqlite3")
    fresh = states["fresh"]
    # A fresh database ends with the faithful text as the newest version of every name: 0003
    # replays its own frozen seed (the earlier texts), 0005 adds the faithful versions on top.
    newest = {}
    for name, version, text, _mode, _language in fresh["templates"]:
        if version >= newest.get(name, (0, ""))[0]:
            newest[name] = (version, text)
    faithful_names = {name for name, *_ in TEMPLATES}
    assert {name: text for name, (_v, text) in newest.items() if name in faithful_names} == {
        name: text for name, _m, _l, text in TEMPLATES
    }
    assert "Demo data loaded." in states["seeded"]
    before, after = states["before"], states["after"]

    faithful = {name: (mode, language, text) for name, mode, language, text in TEMPLATES}
    rows = {(name, version): (text, mode, language) for name, version, text, mode, language in after["templates"]}
    for name, (mode, language, text) in faithful.items():
        versions = sorted(v for n, v in rows if n == name)
        assert versions == [1, 2], name
        assert rows[(name, 1)] == (f"paraphrase of {name}", mode, language)
        assert rows[(name, 2)] == (text, mode, language)
    # 0010 adds AlpacaEval's English pairwise prompt and 0013 Arena-Hard-Auto's; nothing else
    # changed: the demo's own templates, the run's and its judgments' versions.
    english = importlib.import_module("judging.migrations.0010_english_pairwise")
    arena = importlib.import_module("judging.migrations.0014_arena_hard_template")
    assert [english.NAME, 1, english.TEXT, "pairwise", "en"] in after["templates"]
    assert [arena.NAME, 1, arena.TEXT, "pairwise", "en"] in after["templates"]
    added = {english.NAME, arena.NAME}
    assert [row for row in after["templates"] if row[0] not in faithful and row[0] not in added] == [
        row for row in before["templates"] if row[0] not in faithful
    ]
    # The demo brings no templates of its own: its run uses the built-in ones.
    assert {row[0] for row in before["templates"] if row[0] not in faithful} == set()
    assert after["run_templates"] == before["run_templates"]
    assert ["urs/factual_qa/en", 1] in after["run_templates"] and ["alpacaeval/pairwise/zh", 1] in after[
        "run_templates"
    ]
    assert after["judgment_templates"] == before["judgment_templates"]
    assert ["urs/factual_qa/en", 1] in after["judgment_templates"]

    # Back to 0003 and forward again: the unused faithful versions go and come back, used rows stay.
    assert states["back"]["templates"] == before["templates"]
    assert states["again"]["templates"] == after["templates"]
