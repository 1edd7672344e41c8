"""Archived work is absent from every command's choices: a command given an archived dataset, run,
campaign or study (or a run or campaign on an archived dataset) refuses with a clean CommandError,
saying it is archived, until when it can be restored, and how, and changes nothing; `export
--archived` reads it on purpose (a copy kept before the purge). Restored, the same command works
again. Every command that takes such a name is covered: one added later fails
test_every_command_naming_work_is_covered until it is listed here."""

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class
from django.utils import timezone

from curation.models import CurationJob
from tests.archived_state import changes_between, stored_state
from tests.factories import CampaignFactory, DatasetFactory, JudgeRunFactory, StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(tmp_path):
    dataset = DatasetFactory(name="old-set", frozen_at=timezone.now())
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"question_id": "q1", "response": "An answer."}\n', encoding="utf-8")
    return {
        "dataset": dataset,
        "run": JudgeRunFactory(dataset=dataset),
        "other_run": JudgeRunFactory(dataset=dataset),
        "campaign": CampaignFactory(slug="old-campaign", dataset=dataset),
        "study": StudyFactory(slug="old-study"),
        "job": CurationJob.objects.create(kind="reference", dataset=dataset, model="m", status="failed"),
        "answers_file": answers,
    }


def archive(obj):
    type(obj).objects.filter(pk=obj.pk).update(archived_at=timezone.now())


COMMANDS = {
    # (what is archived, the command's arguments, the restore route it names)
    "bt on an archived dataset": (
        "dataset",
        ["bt", "--dataset", "old-set", "--bootstrap", "0"],
        "/api/datasets/old-set/restore/",
    ),
    "bt on an archived campaign": (
        "campaign",
        ["bt", "--dataset", "old-set", "--campaign", "old-campaign", "--bootstrap", "0"],
        "/api/campaigns/old-campaign/restore/",
    ),
    "leaderboard of an archived run": ("run", ["leaderboard", "--run", "{run}"], "/api/runs/{run}/restore/"),
    "leaderboard of a run on an archived dataset": (
        "dataset",
        ["leaderboard", "--run", "{run}"],
        "/api/datasets/old-set/restore/",
    ),
    "diagnostics": ("run", ["diagnostics", "--run", "{run}"], "/api/runs/{run}/restore/"),
    "compare": ("run", ["compare", "{other_run}", "{run}", "--bootstrap", "0"], "/api/runs/{run}/restore/"),
    "difficulty_filter": ("run", ["difficulty_filter", "--run", "{run}"], "/api/runs/{run}/restore/"),
    "rerun": ("run", ["rerun", "{run}", "--no-wait"], "/api/runs/{run}/restore/"),
    "alignment": (
        "run",
        ["alignment", "--dataset", "old-set", "--run", "{run}", "--bootstrap", "0"],
        "/api/runs/{run}/restore/",
    ),
    "export of an archived dataset": (
        "dataset",
        ["export", "--what", "items", "--dataset", "old-set"],
        "/api/datasets/old-set/restore/",
    ),
    "export of an archived run": (
        "run",
        ["export", "--what", "judgments", "--run", "{run}"],
        "/api/runs/{run}/restore/",
    ),
    "export of an archived campaign": (
        "campaign",
        ["export", "--what", "votes", "--campaign", "old-campaign"],
        "/api/campaigns/old-campaign/restore/",
    ),
    "export of an archived study": (
        "study",
        ["export", "--what", "submissions", "--study", "old-study"],
        "/api/studies/old-study/restore/",
    ),
    "build_study_dataset": (
        "study",
        ["build_study_dataset", "--study", "old-study", "--name", "w"],
        "/api/studies/old-study/restore/",
    ),
    "curate_cases": ("study", ["curate_cases", "--study", "old-study"], "/api/studies/old-study/restore/"),
    "judge": (
        "dataset",
        ["judge", "--dataset", "old-set", "--mode", "pointwise", "--judge-model", "j", "--models", "a,b", "--no-wait"],
        "/api/datasets/old-set/restore/",
    ),
    "judge_resume of an archived run": ("run", ["judge_resume", "{run}", "--no-wait"], "/api/runs/{run}/restore/"),
    "judge_resume of a run on an archived dataset": (
        "dataset",
        ["judge_resume", "{run}", "--no-wait"],
        "/api/datasets/old-set/restore/",
    ),
    "import_answers": (
        "dataset",
        ["import_answers", "{answers_file}", "--dataset", "old-set", "--model", "m"],
        "/api/datasets/old-set/restore/",
    ),
    "import_answers --replace": (
        "dataset",
        ["import_answers", "{answers_file}", "--dataset", "old-set", "--model", "m", "--replace"],
        "/api/datasets/old-set/restore/",
    ),
    "freeze_dataset": ("dataset", ["freeze_dataset", "old-set"], "/api/datasets/old-set/restore/"),
    "freeze_dataset --diff": (
        "dataset",
        ["freeze_dataset", "--diff", "old-set", "old-set"],
        "/api/datasets/old-set/restore/",
    ),
    "generate": ("dataset", ["generate", "--dataset", "old-set", "--model", "m"], "/api/datasets/old-set/restore/"),
    "generate --batch": (
        "dataset",
        ["generate", "--dataset", "old-set", "--model", "m", "--batch"],
        "/api/datasets/old-set/restore/",
    ),
    "campaign_create": (
        "dataset",
        ["campaign_create", "--dataset", "old-set", "--slug", "new-campaign", "--models", "a,b"],
        "/api/datasets/old-set/restore/",
    ),
    "import_votes": (
        "campaign",
        ["import_votes", "{answers_file}", "--dataset", "old-set", "--campaign", "old-campaign"],
        "/api/campaigns/old-campaign/restore/",
    ),
    "build_study_dataset into an archived dataset": (
        "dataset",
        ["build_study_dataset", "--study", "old-study", "--name", "old-set"],
        "/api/datasets/old-set/restore/",
    ),
    "curation_llm": (
        "dataset",
        ["curation_llm", "references", "--dataset", "old-set", "--copy"],
        "/api/datasets/old-set/restore/",
    ),
    "curation_llm --resume of a job on an archived dataset": (
        "dataset",
        ["curation_llm", "references", "--resume", "{job}"],
        "/api/datasets/old-set/restore/",
    ),
    "reproduce --dataset": (
        "dataset",
        [
            "reproduce",
            "--benchmark",
            "chinese_alpaca_eval",
            "--judge-model",
            "j",
            "--models",
            "a",
            "--dataset",
            "old-set",
        ],
        "/api/datasets/old-set/restore/",
    ),
}

# The options through which a command is given a dataset, run, campaign or study (or a job of one).
NAMING = {"dataset", "run", "run_a", "run_b", "campaign", "study", "name", "diff", "resume", "copy"}
# Commands with such an option that read no archived work, and why.
EXEMPT = {
    "import_dataset": "--name names the new dataset; a name an archived dataset keeps is refused as taken "
    "(test_a_new_dataset_cannot_take_an_archived_ones_name)",
    "import_template": "--name names a judge template, which is never archived",
    "withdraw_participant": "a participant's erasure reaches archived work too (issue 37, item 2)",
}
PROJECT_APPS = {"core", "llm", "curation", "judging", "annotation", "home"}


def _filled(values, work):
    ids = {name: getattr(obj, "pk", obj) for name, obj in work.items()}
    return [value.format(**ids) for value in values]


def commands_naming_work() -> set[str]:
    """Userbench's commands with an option that names a dataset, run, campaign or study."""
    found = set()
    for name, app in get_commands().items():
        if app.split(".")[0] not in PROJECT_APPS:
            continue
        parser = load_command_class(app, name).create_parser("manage.py", name)
        if NAMING & {action.dest for action in parser._actions}:
            found.add(name)
    return found


def test_every_command_naming_work_is_covered():
    covered = {arguments[0] for _kind, arguments, _restore in COMMANDS.values()}
    assert sorted(commands_naming_work() - covered - set(EXEMPT)) == []
    assert not set(EXEMPT) & covered


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_command_refuses_archived_work_saying_how_to_restore_it(work, case):
    kind, arguments, restore = COMMANDS[case]
    archive(work[kind])
    before = stored_state()
    # A CommandError, never another exception's traceback.
    with pytest.raises(CommandError) as refused:
        call_command(*_filled(arguments, work))
    message = str(refused.value)
    assert "is archived, and commands leave archived work out" in message
    assert "restorable until" in message and _filled([restore], work)[0] in message
    assert changes_between(before, stored_state()) == {}


def test_a_new_dataset_cannot_take_an_archived_ones_name(work, tmp_path):
    archive(work["dataset"])
    items = tmp_path / "items.jsonl"
    items.write_text('{"question_id": "q1", "question": "What is 2 + 2?"}\n', encoding="utf-8")
    before = stored_state()
    with pytest.raises(CommandError, match="old-set"):
        call_command("import_dataset", str(items), "--format", "urs", "--name", "old-set")
    assert changes_between(before, stored_state()) == {}


@pytest.mark.parametrize("case", [case for case in COMMANDS if case.startswith("export")])
def test_export_reads_archived_work_with_archived_and_says_so_without(work, case, capsys):
    kind, arguments, _ = COMMANDS[case]
    archive(work[kind])
    with pytest.raises(CommandError, match="Or add --archived to read it as it is"):
        call_command(*_filled(arguments, work))
    call_command(*_filled(arguments, work), "--archived", "--format", "jsonl")  # read on purpose: no refusal


def test_restored_work_is_read_again(work, capsys):
    archive(work["run"])
    with pytest.raises(CommandError):
        call_command("leaderboard", "--run", str(work["run"].pk), "--format", "json")
    type(work["run"]).objects.filter(pk=work["run"].pk).update(archived_at=None)
    call_command("leaderboard", "--run", str(work["run"].pk), "--format", "json")
    assert capsys.readouterr().out.strip().startswith("[")
