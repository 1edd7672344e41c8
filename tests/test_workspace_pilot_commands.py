"""Every command that takes a workspace's names, run with `--workspace` and the name `pilot` that
two teams use (tests/workspace_world.py: everything team A makes carries `hidden-a`, B's
`hidden-b`), in either creation order: what it prints to one team holds nothing of the other's and
says which workspace it used, and what it changes is the named team's `pilot` only: the other's
objects are as they were, and its endpoint is never called.

The commands are the ones tests/test_command_workspace_flags.py finds (an option naming a
workspace's object, or `--workspace`): a new one fails `test_every_name_taking_command_is_walked`
until it is run here, or listed in NOT_RUN with the reason.
"""

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Campaign, Vote
from core.exports import EXPORTERS
from curation.models import Case, CaseCuration, Dataset, Item, ReferenceDraft, Submission
from judging.models import Answer, CandidateModel, JudgeRun, JudgeTemplate
from llm.models import Endpoint
from tests.judging.fake_llm import FakeLLM
from tests.test_command_workspace_flags import name_taking_commands
from tests.workspace_world import MARKS, PILOT, Pilots, Team, owned_rows, pilots_build

pytestmark = pytest.mark.django_db

# Name-taking commands not run here, and why: one that needs what a test cannot give (a provider's
# own service, say) goes here with the reason. Every one is run at present.
NOT_RUN: dict[str, str] = {}


@dataclass
class Side:
    """One team's side of the walk: its objects, its workspace's slug, its loopback LLM server and
    a folder for the files a command reads."""

    key: str
    team: Team
    server: FakeLLM
    folder: object

    @property
    def slug(self) -> str:
        return self.team.workspace.slug


def write(side: Side, name: str, lines: list[dict]) -> str:
    path = side.folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def export_calls(s: Side) -> list[list]:
    scopes = (
        ["--dataset", PILOT],
        ["--study", s.team.study.slug],
        ["--run", s.team.run.pk],
        ["--campaign", s.team.campaign.slug],
    )
    return [["export", "--what", what, *scope] for what in sorted(EXPORTERS) for scope in scopes]


# Commands that only read, and their invocations naming `pilot` (and the team's links and ids).
READS: dict[str, Callable[[Side], list[list]]] = {
    "export": export_calls,
    "bt": lambda s: [
        ["bt", "--dataset", PILOT, "--bootstrap", "0", "--format", "json"],
        ["bt", "--dataset", PILOT, "--campaign", s.team.campaign.slug, "--bootstrap", "0"],
    ],
    "alignment": lambda s: [
        f"alignment --dataset {PILOT} --run {s.team.run.pk} --bootstrap 0 --format json".split(),
        f"alignment --dataset {PILOT} --run {s.team.run.pk} --campaign {s.team.campaign.slug} --bootstrap 0".split(),
    ],
    "freeze_dataset": lambda s: [["freeze_dataset", "--diff", PILOT, PILOT]],
}


def _answers(s: Side) -> list[list]:
    item = Item.objects.get(pk=s.team.item_id)
    path = write(s, "answers.jsonl", [{"question_id": item.external_id, "response": "imported answer"}])
    return [["import_answers", path, "--dataset", PILOT, "--model", PILOT, "--replace"]]


def _votes(s: Side) -> list[list]:
    item = Item.objects.get(pk=s.team.item_id)
    vote = {"question_id": item.external_id, "model_a": PILOT, "model_b": "other", "winner": "model_a"}
    path = write(s, "votes.jsonl", [{**vote, "annotator": "imported-voter"}])
    return [["import_votes", path, "--dataset", PILOT, "--campaign", s.team.campaign.slug]]


def _template(s: Side) -> list[list]:
    path = s.folder / "judge.txt"
    path.write_text("Judge {question} {reference} {answer}; end with {{'Final Score': n}}.\n", encoding="utf-8")
    return [["import_template", str(path), "--name", PILOT, "--mode", "pointwise"]]


def _dataset(s: Side) -> list[list]:
    path = s.folder / "items.csv"
    path.write_text("question,reference_ans,user_intent,language\nWhat is 2+2?,4.,Factual_QA,EN\n", encoding="utf-8")
    # `pilot` is taken in the team's own workspace (refused, in the same words for both); `second` is free.
    return [
        ["import_dataset", str(path), "--format", "urs", "--name", PILOT],
        ["import_dataset", str(path), "--format", "urs", "--name", "second"],
    ]


def _curation(s: Side) -> list[list]:
    """A translation of `pilot`, then the team's failed reference job resumed at `pilot` (its
    endpoint name looked up in the job's workspace), its item's reference gone meanwhile."""
    Item.objects.filter(pk=s.team.item_id).update(reference="")
    ReferenceDraft.objects.create(job=s.team.job, item_id=s.team.item_id, language="en", status="failed")
    return [
        ["curation_llm", "translate", "--dataset", PILOT, "--endpoint", PILOT, "--model", "m"],
        ["curation_llm", "references", "--resume", s.team.job.pk, "--endpoint", PILOT],
    ]


def _own(s: Side, model, **lookup):
    return model.objects.filter(workspace=s.team.workspace, **lookup)


# Commands that change a team's objects: their invocations naming `pilot`, and what shows that
# they acted on the named team's.
CHANGES: dict[str, tuple[Callable[[Side], list[list]], Callable[[Side], bool]]] = {
    "build_study_dataset": (
        lambda s: [["build_study_dataset", "--study", s.team.study.slug, "--name", PILOT]],
        lambda s: Item.objects.filter(dataset=s.team.dataset, source_case=s.team.case).exists(),
    ),
    "campaign_create": (
        lambda s: [
            f"campaign_create --dataset {PILOT} --slug second-{s.key} --title second --models {PILOT},other".split()
        ],
        lambda s: _own(s, Campaign, title="second", dataset=s.team.dataset).exists(),
    ),
    "curate_cases": (
        lambda s: [["curate_cases", "--study", s.team.study.slug, "--all"]],
        lambda s: CaseCuration.objects.get(case=s.team.case).processed_at is not None,
    ),
    "curation_llm": (
        _curation,
        lambda s: s.server.count >= 2 and ReferenceDraft.objects.get(job=s.team.job).status == "done",
    ),
    "describe_model": (
        lambda s: [["describe_model", PILOT, "--family", f"family-{s.key}"]],
        lambda s: _own(s, CandidateModel, name=PILOT).get().family == f"family-{s.key}",
    ),
    "freeze_dataset": (
        lambda s: [["freeze_dataset", PILOT, "--confirm-missing-references"]],
        lambda s: _own(s, Dataset, frozen_at__isnull=False).exists(),
    ),
    "generate": (
        lambda s: [["generate", "--dataset", PILOT, "--model", "generated", "--endpoint", PILOT]],
        lambda s: s.server.count > 0 and _own(s, CandidateModel, name="generated").get().answers.exists(),
    ),
    "import_answers": (
        _answers,
        lambda s: Answer.objects.filter(item_id=s.team.item_id, model__name=PILOT, text="imported answer").exists(),
    ),
    "import_dataset": (_dataset, lambda s: _own(s, Dataset, name="second").exists()),
    "import_template": (_template, lambda s: _own(s, JudgeTemplate, name=PILOT, version=2).exists()),
    "import_votes": (
        _votes,
        lambda s: Vote.objects.filter(campaign=s.team.campaign, annotator_label="imported-voter").exists(),
    ),
    "judge": (
        lambda s: [
            f"judge --dataset {PILOT} --mode pointwise --judge-model j --models {PILOT},other --endpoint {PILOT} "
            "--inline".split()
        ],
        lambda s: s.server.count > 0 and _own(s, JudgeRun, status="finished").exists(),
    ),
    # URS: its judge templates and table over a dataset already in Userbench (no public files needed).
    "reproduce": (
        lambda s: [
            f"reproduce --benchmark urs --dataset {PILOT} --endpoint {PILOT} --judge-model j --models {PILOT},other "
            f"--out {s.folder}".split()
        ],
        lambda s: s.server.count > 0 and _own(s, JudgeRun, status="finished").exists(),
    ),
    "withdraw_participant": (
        lambda s: [["withdraw_participant", "--study", s.team.study.slug, "--prolific-pid", f"{MARKS[s.key]}-pid"]],
        lambda s: not Submission.objects.filter(study=s.team.study).exists(),
    ),
}


def test_every_name_taking_command_is_walked():
    walked = set(READS) | set(CHANGES) | set(NOT_RUN)
    missing = sorted(set(name_taking_commands()) - walked)
    assert not missing, f"name-taking commands neither walked with two teams' `pilot` nor listed in NOT_RUN: {missing}"
    assert not sorted(walked - set(name_taking_commands())), "walked commands that take no name any more"


@pytest.fixture(params=["a", "b"], ids=["a-first", "b-first"])
def sides(request, tmp_path, settings) -> Iterator[dict[str, Side]]:
    """Both teams, made in either order (the first gets the links `pilot`); each team's endpoint
    `pilot` on a loopback server of its own, and its case accepted with a question, so that a
    dataset can be built from it."""
    settings.LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.1"]
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    settings.JUDGING_RETRY_CAP_SECONDS = 0.05
    pilots: Pilots = pilots_build(first=request.param)
    made = {}
    for key, team in pilots.teams.items():
        server = FakeLLM().start()
        Endpoint.objects.filter(pk=team.endpoint.pk).update(base_url=server.base_url, api_key_env="", max_retries=0)
        Case.objects.filter(pk=team.case.pk).update(review_status=Case.ReviewStatus.ACCEPTED)
        CaseCuration.objects.create(
            case=team.case, question=f"{MARKS[key].upper()} built?", processed_at=timezone.now()
        )
        # The team's files lie in a folder named like its workspace (said as <workspace> to both).
        folder = tmp_path / team.workspace.slug
        folder.mkdir()
        made[key] = Side(key=key, team=team, server=server, folder=folder)
    yield made
    for side in made.values():
        side.server.stop()


def run(side: Side, args: list) -> str:
    """The command's standard output and error (or its refusal), after checking they hold nothing
    of the other team's and say which workspace was used."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*map(str, args), "--workspace", side.slug, stdout=out, stderr=err)
    except CommandError as error:
        err.write(f"CommandError: {error}")
    said = out.getvalue() + err.getvalue()
    other = MARKS["b" if side.key == "a" else "a"]
    assert other not in said.lower(), f"{args} for team {side.key} shows the other team's: {said}"
    assert f"Workspace: {side.slug}." in err.getvalue() or f"in workspace {side.slug}" in out.getvalue(), (
        f"{args} does not say it used workspace {side.slug}: {said}"
    )
    return said


def same_for_both(said: dict[str, list[str]], sides: dict[str, Side]) -> None:
    """What each team was told is the same, but for its own marks and workspace, the ids of what
    it made, and its links (the second team's were free ones, not `pilot`)."""
    plain = {}
    for key, texts in said.items():
        team = sides[key].team
        own = {
            MARKS[key]: "<mark>",
            MARKS[key].upper(): "<MARK>",
            team.workspace.slug: "<workspace>",
            team.study.slug: PILOT,
            team.campaign.slug: PILOT,
            f"second-{key}": "second-<key>",
            f"family-{key}": "family-<key>",
        }
        for text in texts:
            for value, placeholder in own.items():
                text = text.replace(value, placeholder)
            plain.setdefault(key, []).append(ids_aside(text) if text.startswith("\ufeff") else varied(text))
    assert plain["a"] == plain["b"]


def ids_aside(table: str) -> list[list[str]]:
    """A CSV export's rows, its id columns (`id`, `run`, `…_id`) blanked: the teams' ids differ."""
    header, *rows = csv.reader(io.StringIO(table.lstrip("\ufeff")))
    ids = [n for n, column in enumerate(header) if column in ("id", "run") or column.endswith("_id")]
    return [header, *([("<id>" if n in ids else varied(cell)) for n, cell in enumerate(row)] for row in rows)]


def varied(text: str) -> str:
    for varying, placeholder in VARYING:
        text = varying.sub(placeholder, text)
    return text


# What differs between two runs of a command whoever runs it: the ids of what it made (a run, a
# job), the time, a seed drawn at random, and hashes of what the teams wrote.
VARYING = (
    (re.compile(r"((?:job|run|Run|Job|invitation)[ -])\d+"), r"\1<id>"),
    (re.compile(r'("(?:id|run|[a-z_]+_id)": )\d+'), r"\1<id>"),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"seed \d+"), "seed <n>"),
    # A hash of the content, which carries the team's mark.
    (re.compile(r"\b[0-9a-f]{64}\b"), "<hash>"),
)


@pytest.mark.parametrize("command", sorted(READS))
def test_each_team_reads_its_own_pilot(sides, command):
    said = {key: [run(side, args) for args in READS[command](side)] for key, side in sides.items()}
    for key, texts in said.items():
        refused = [text for text in texts if text.startswith("CommandError")]
        assert len(refused) < len(texts), f"{command} found nothing of team {key}'s: {refused}"
    same_for_both(said, sides)


@pytest.mark.parametrize("command", sorted(CHANGES))
def test_each_team_changes_its_own_pilot_only(sides, command):
    calls, acted = CHANGES[command]
    said = {}
    for key, side in sides.items():
        other = sides["b" if key == "a" else "a"]
        before, called = owned_rows(other.team.workspace), other.server.count
        said[key] = [run(side, args) for args in calls(side)]
        assert acted(side), f"{command} did not act on team {key}'s `pilot`: {said[key]}"
        assert owned_rows(other.team.workspace) == before, f"{command} for team {key} changed the other team's"
        assert other.server.count == called, f"{command} for team {key} called the other team's endpoint"
    same_for_both(said, sides)
