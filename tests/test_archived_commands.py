"""Archived work is absent from every command's choices: a command given an archived dataset, run,
campaign or study (or a run or campaign on an archived dataset) refuses, saying it is archived,
until when it can be restored, and how; `export --archived` reads it on purpose (a copy kept
before the purge). Restored, the same command works again."""

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from tests.factories import CampaignFactory, DatasetFactory, JudgeRunFactory, StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def work():
    dataset = DatasetFactory(name="old-set", frozen_at=timezone.now())
    return {
        "dataset": dataset,
        "run": JudgeRunFactory(dataset=dataset),
        "other_run": JudgeRunFactory(dataset=dataset),
        "campaign": CampaignFactory(slug="old-campaign", dataset=dataset),
        "study": StudyFactory(slug="old-study"),
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
}


def _filled(values, work):
    ids = {name: obj.pk for name, obj in work.items()}
    return [value.format(**ids) for value in values]


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_command_refuses_archived_work_saying_how_to_restore_it(work, case):
    kind, arguments, restore = COMMANDS[case]
    archive(work[kind])
    with pytest.raises(CommandError) as refused:
        call_command(*_filled(arguments, work))
    message = str(refused.value)
    assert "is archived, and commands leave archived work out" in message
    assert "restorable until" in message and _filled([restore], work)[0] in message


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
