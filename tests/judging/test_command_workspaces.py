"""Commands take `--workspace` where a name could mean two things: a name found in one workspace is
used there (a script written for one team works unchanged), a name used in several is refused with
the workspaces listed, an unknown slug is named; every command says which workspace it used."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from core.models import Workspace, default_workspace_id
from curation.models import Dataset
from judging.models import Answer, CandidateModel, JudgeTemplate
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

TEMPLATE = "Judge: {question}\nReference: {reference}\nAnswer: {answer}\nEnd with {{'Final Score': n}}.\n"


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def team_b(db):
    return Workspace.objects.create(slug="team-b", name="Team B")


@pytest.fixture
def b_data(team_b):
    dataset = DatasetFactory(name="b-data", workspace=team_b)
    for n in (1, 2):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    return dataset


def answers_file(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(
        "".join(json.dumps({"question_id": f"q{n}", "response": f"answer {n}"}) + "\n" for n in (1, 2)),
        encoding="utf-8",
    )
    return path


def test_a_name_in_one_workspace_is_used_there_and_the_command_says_so(tmp_path, b_data):
    out, err = run("import_answers", answers_file(tmp_path), "--dataset", "b-data", "--model", "m1")
    assert "Imported 2 answers" in out and err == "Workspace: team-b.\n"
    assert Answer.objects.filter(item__dataset=b_data).count() == 2


def test_an_unknown_workspace_is_named_with_the_known_ones_and_nothing_changes(tmp_path, b_data):
    with pytest.raises(CommandError) as failed:
        run("import_answers", answers_file(tmp_path), "--dataset", "b-data", "--model", "m1", "--workspace", "nope")
    assert str(failed.value) == "No workspace 'nope'; known: default, team-b."
    with pytest.raises(CommandError, match="No workspace 'nope'; known: default, team-b."):
        run("bt", "--dataset", "b-data", "--workspace", "nope")
    assert not Answer.objects.exists()


def test_a_name_is_looked_up_in_the_workspace_named_only(tmp_path, b_data):
    with pytest.raises(CommandError, match="^No dataset named 'b-data'.$"):
        run("import_answers", answers_file(tmp_path), "--dataset", "b-data", "--model", "m1", "--workspace", "default")
    with pytest.raises(CommandError, match="No dataset named 'b-data'."):
        run("export", "--what", "items", "--dataset", "b-data", "--workspace", "default")
    with pytest.raises(CommandError, match="No dataset named 'b-data'."):
        run("freeze_dataset", "b-data", "--workspace", "default")
    assert not Answer.objects.exists() and Dataset.objects.count() == 1
    out, err = run("export", "--what", "items", "--dataset", "b-data", "--workspace", "team-b")
    assert "Question 1?" in out and err == "Workspace: team-b.\n"


def test_a_template_name_used_in_two_workspaces_is_refused_until_one_is_named(tmp_path, team_b):
    path = tmp_path / "judge.txt"
    path.write_text(TEMPLATE, encoding="utf-8")
    for slug in ("default", "team-b"):
        run("import_template", path, "--name", "pilot/en", "--mode", "pointwise", "--workspace", slug)
    with pytest.raises(CommandError) as failed:
        run("import_template", path, "--name", "pilot/en", "--mode", "pointwise")
    assert (
        str(failed.value) == "Template 'pilot/en' is in several workspaces: default, team-b; name one with --workspace."
    )
    assert JudgeTemplate.objects.filter(name="pilot/en").count() == 2
    out, _err = run("import_template", path, "--name", "pilot/en", "--mode", "pointwise", "--workspace", "team-b")
    assert "v2" in out and "in workspace team-b" in out
    assert list(
        JudgeTemplate.objects.filter(name="pilot/en")
        .order_by("workspace__slug", "version")
        .values_list("workspace__slug", "version")
    ) == [("default", 1), ("team-b", 1), ("team-b", 2)]
    # A name held in one workspace only: its next version goes there without --workspace.
    run("import_template", path, "--name", "solo/en", "--mode", "pointwise", "--workspace", "team-b")
    out, err = run("import_template", path, "--name", "solo/en", "--mode", "pointwise")
    assert "v2" in out and "in workspace team-b" in out
    assert JudgeTemplate.objects.get(name="solo/en", version=2).workspace == team_b


def test_a_new_template_needs_the_workspace_once_there_are_several(tmp_path, team_b):
    path = tmp_path / "judge.txt"
    path.write_text(TEMPLATE, encoding="utf-8")
    with pytest.raises(CommandError, match="Name the workspace with --workspace, one of: default, team-b."):
        run("import_template", path, "--name", "fresh/en", "--mode", "pointwise")
    assert not JudgeTemplate.objects.filter(name="fresh/en").exists()


def test_campaign_create_and_bt_work_in_the_datasets_workspace(b_data, team_b):
    for name in ("alpha", "beta"):
        model = CandidateModelFactory(name=name, workspace=team_b)
        for item in b_data.items.all():
            AnswerFactory(item=item, model=model)
    out, err = run("campaign_create", "--dataset", "b-data", "--slug", "b-camp", "--models", "alpha,beta")
    assert "Created campaign b-camp on b-data" in out and err == "Workspace: team-b.\n"
    assert Campaign.objects.get(slug="b-camp").workspace == team_b
    out, err = run("bt", "--dataset", "b-data", "--campaign", "b-camp", "--bootstrap", "0", "--format", "json")
    assert json.loads(out)["votes"] == 0 and err.startswith("Workspace: team-b.\n")
    with pytest.raises(CommandError, match="No dataset named 'b-data'."):
        run("campaign_create", "--dataset", "b-data", "--slug", "b-two", "--models", "alpha", "--workspace", "default")
    assert Campaign.objects.count() == 1


def test_generate_calls_the_endpoint_of_the_datasets_workspace(fake_llm, fast_retries, b_data, team_b):
    Endpoint.objects.create(name="b-end", base_url=fake_llm.base_url, api_key_env="", workspace=team_b)
    out, err = run("generate", "--dataset", "b-data", "--model", "m1", "--endpoint", "b-end")
    assert "2 generated, 0 failed" in out and err.startswith("Workspace: team-b.\n")
    assert fake_llm.count == 2 and CandidateModel.objects.get(name="m1").answers.count() == 2
    # Named in the other workspace, the endpoint is unknown there: nothing is sent.
    with pytest.raises(CommandError, match="No dataset named 'b-data'."):
        run("generate", "--dataset", "b-data", "--model", "m2", "--endpoint", "b-end", "--workspace", "default")
    assert fake_llm.count == 2


def test_a_dataset_of_another_workspace_than_the_endpoint_runs_on_none_of_them(fake_llm, b_data):
    Endpoint.objects.create(
        name="a-end", base_url=fake_llm.base_url, api_key_env="", workspace_id=default_workspace_id()
    )
    with pytest.raises(CommandError, match="Unknown endpoint 'a-end'"):
        run("generate", "--dataset", "b-data", "--model", "m1", "--endpoint", "a-end")
    assert fake_llm.count == 0


def test_a_dataset_name_used_in_two_workspaces_is_refused_until_one_is_named(team_b):
    for workspace, question in ((Workspace.objects.get(slug="default"), "A's?"), (team_b, "B's?")):
        ItemFactory(dataset=DatasetFactory(name="pilot", workspace=workspace), question=question)
    with pytest.raises(CommandError) as failed:
        run("export", "--what", "items", "--dataset", "pilot")
    assert str(failed.value) == "Dataset 'pilot' is in several workspaces: default, team-b; name one with --workspace."
    out, err = run("export", "--what", "items", "--dataset", "pilot", "--workspace", "team-b")
    assert "B's?" in out and "A's?" not in out and err == "Workspace: team-b.\n"


def test_study_commands_find_the_study_in_its_workspace_only(team_b):
    from curation.models import Submission
    from tests.factories import CaseFactory, StudyFactory, SubmissionFactory

    study = StudyFactory(slug="s-b", workspace=team_b)
    CaseFactory(submission=SubmissionFactory(study=study))
    out, err = run("curate_cases", "--study", "s-b")
    assert "1 cases processed." in out and err == "Workspace: team-b.\n"
    with pytest.raises(CommandError, match="^No study with slug 's-b'.$"):
        run("curate_cases", "--study", "s-b", "--workspace", "default")
    submission = Submission.objects.get()
    with pytest.raises(CommandError, match="^No study with slug 's-b' in workspace default.$"):
        run("withdraw_participant", "--study", "s-b", "--submission", submission.pk, "--workspace", "default")
    assert Submission.objects.filter(pk=submission.pk).exists()
    out, err = run("withdraw_participant", "--study", "s-b", "--submission", submission.pk)
    assert "Erased 1 submission(s)" in out and err == "Workspace: team-b.\n"


def test_describe_model_and_a_refused_import_say_which_workspace_they_used(tmp_path, team_b):
    CandidateModelFactory(name="pilot", workspace=team_b)
    out, err = run("describe_model", "pilot", "--family", "f", "--workspace", "team-b")
    assert out == "pilot: provider -, family f\n" and err == "Workspace: team-b.\n"
    assert CandidateModel.objects.get(name="pilot", workspace=team_b).family == "f"
    DatasetFactory(name="pilot", workspace=team_b)
    items = tmp_path / "items.csv"
    items.write_text("question,reference_ans,user_intent,language\nWhat is 2+2?,4.,Factual_QA,EN\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError, match="^A dataset named 'pilot' exists already in this workspace"):
        call_command("import_dataset", items, "--format", "urs", "--name", "pilot", "--workspace", "team-b", stderr=err)
    assert err.getvalue() == "Workspace: team-b.\n"
