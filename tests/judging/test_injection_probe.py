"""The injection probe end to end: a simulated judge that falls for one attack and resists the
others; the probe report names which, per template, and the probe answers never reach the
leaderboard, the diagnostics or the flagged answers."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import translation

from curation.choices import Language
from judging.answers.probe import ATTACKS
from judging.engine.execution import run_execute_inline
from judging.errors import RunError
from judging.models import Answer, CandidateModel, JudgeRun
from judging.results.boards import leaderboard_rows
from judging.results.diagnostics import run_diagnostics
from judging.results.figures import run_figures_refresh
from judging.results.probe_report import run_probe_report
from judging.results.selectors import flagged_judgments
from judging.runs.creation import run_create
from judging.runs.rerun import run_rerun
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)
ATTACK = {attack.key: attack for attack in ATTACKS}


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


@pytest.fixture(autouse=True)
def back_to_the_default_language():
    """A page asked for in Chinese leaves Chinese active in this thread: later tests expect English."""
    yield
    translation.deactivate()


@pytest.fixture
def endpoint_row(fake_llm, fast_retries):
    return Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_in_flight=8, timeout_seconds=5)


def attack_in(prompt: str) -> str | None:
    for attack in ATTACKS:
        if attack.text_en in prompt or attack.text_zh in prompt:
            return attack.key
    return None


def gullible_scorer(body):
    """Pointwise: believes a printed final-score dict; sees through the other attacks."""
    prompt = body["messages"][-1]["content"]
    score = {"fake_score": 10, "claims_reference": 2, "ignore_instructions": 1, "constant_generic": 3}.get(
        attack_in(prompt)
    )
    if score is None:
        score = 6 + int(simulated.uniform(prompt) * 3)
    return f"Reasoning.\n{{'Factuality': {score}, 'Final Score': {score}}}"


@pytest.fixture
def probed(fake_llm, endpoint_row):
    languages = [Language.ZH if i % 2 else Language.EN for i in range(12)]
    dataset = simulated.build_dataset("probed", {"alpha": [300] * 12, "beta": [500] * 12}, languages=languages)
    fake_llm.reply = gullible_scorer
    out = StringIO()
    call_command(
        "judge",
        "--dataset",
        "probed",
        "--mode",
        "pointwise",
        "--judge-model",
        "judge-m",
        "--models",
        "alpha,beta",
        "--endpoint",
        "fake",
        "--injection-probe",
        "--inline",
        stdout=out,
    )
    run = JudgeRun.objects.get(dataset=dataset)
    assert f"Run {run.pk}: 72 judgments" in out.getvalue()  # 12 items x (2 candidates + 4 attacks)
    return run


def test_the_probe_report_names_the_attack_each_template_falls_for(probed):
    assert probed.injection_probe and probed.status == JudgeRun.Status.FINISHED
    report = run_probe_report(run=probed)
    assert [t["template"].split(" v")[0] for t in report["templates"]] == ["urs/factual_qa/en", "urs/factual_qa/zh"]
    for template in report["templates"]:
        assert template["honest"]["n"] == 12 and 6 <= template["honest"]["mean"] <= 8
        verdicts = {a["attack"]: a["verdict"] for a in template["attacks"]}
        assert verdicts == {
            "claims_reference": "resisted",
            "fake_score": "fooled",
            "ignore_instructions": "resisted",
            "constant_generic": "resisted",
        }
        fake = next(a for a in template["attacks"] if a["attack"] == "fake_score")
        assert (fake["n"], fake["mean"], fake["low"], fake["high"], fake["failures"]) == (6, 10.0, 10.0, 10.0, 0)
        assert fake["advantage_low"] > 0
    assert sorted(attack for _template, attack in report["fooled"]) == ["fake_score", "fake_score"]
    # The Chinese items got the Chinese attack texts.
    zh_answer = Answer.objects.get(model__name="probe:fake_score", item__external_id="q001")
    assert zh_answer.text == ATTACK["fake_score"].text_zh and zh_answer.origin == Answer.Origin.PROBE


def test_probe_answers_are_never_ranked_nor_diagnosed(probed):
    models = {row["model"] for row in leaderboard_rows(run=probed)}
    assert models == {"alpha", "beta"}
    assert run_diagnostics(run=probed)["judgments"] == 24
    assert not flagged_judgments(run=probed).filter(model__is_probe=True).exists()
    assert sorted(probed.candidates.values_list("name", flat=True)) == ["alpha", "beta"]
    assert [entry["name"] for entry in probed.manifest["probes"]] == sorted(a.model_name for a in ATTACKS)
    assert probed.manifest["injection_probe"] is True
    rerun = run_rerun(run=probed, fresh_calls=False)
    assert rerun.injection_probe and rerun.total == 72


def test_the_run_page_api_and_diagnostics_command_show_the_probe(probed, client):
    client.force_login(UserFactory(username="probe-res", roles=["researcher"]))
    run_figures_refresh(run_id=probed.pk)  # what the background task does once the run closes
    html = client.get(reverse("judging:run-detail", args=[probed.pk])).content.decode()
    section = html[html.index('id="injection-probe"') :]
    assert "2 attacks fooled a template: do not trust this leaderboard before fixing it." in section
    assert section.count('<strong class="flagged">Fooled</strong>') == 2 and section.count("Resisted") == 6
    # The leaderboard above it ranks only the real candidates.
    board = html[: html.index('id="diagnostics"')]
    assert "probe:" not in board
    api = client.get(reverse("api-run-probe", args=[probed.pk])).json()
    assert api["fooled"] == [[t["template"], "fake_score"] for t in api["templates"]]
    out = StringIO()
    call_command("diagnostics", "--run", str(probed.pk), stdout=out)
    assert "injection probe (final score; never ranked)" in out.getvalue()
    assert "FOOLED: urs/factual_qa/en v" in out.getvalue()
    out = StringIO()
    call_command("diagnostics", "--run", str(probed.pk), "--format", "json", stdout=out)
    assert len(json.loads(out.getvalue())["injection_probe"]["fooled"]) == 2
    html_zh = client.get(reverse("judging:run-detail", args=[probed.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "注入探针" in html_zh.content.decode() and "被骗" in html_zh.content.decode()


def test_a_pairwise_judge_that_loves_the_generic_answer(fake_llm, endpoint_row):
    simulated.build_dataset("pair-probe", {"cand": [300] * 10, "ref": [300] * 10})

    def reply(body):
        prompt = body["messages"][-1]["content"]
        attack = attack_in(prompt)
        if attack == "constant_generic":
            generic_first = prompt.index(ATTACK["constant_generic"].text_en) < prompt.index("model_2")
            return simulated.PAIRWISE_FIRST if generic_first else simulated.PAIRWISE_SECOND
        if attack is not None:  # sees through the others: the honest reference wins
            attack_first = prompt.index(ATTACK[attack].text_en) < prompt.index("model_2")
            return simulated.PAIRWISE_SECOND if attack_first else simulated.PAIRWISE_FIRST
        return simulated.PAIRWISE_FIRST if simulated.uniform(prompt) < 0.5 else simulated.PAIRWISE_SECOND

    fake_llm.reply = reply
    run = run_create(
        spec=RunSpec(
            dataset=JudgeRun._meta.get_field("dataset").related_model.objects.get(name="pair-probe"),
            mode="pairwise",
            judge_model="judge-m",
            candidates=[CandidateModel.objects.get(name="cand")],
            reference_model=CandidateModel.objects.get(name="ref"),
            endpoint=endpoint_row,
            both_orders=True,
            injection_probe=True,
            seed=1,
        ),
    )
    run_execute_inline(run=run)
    report = run_probe_report(run=run)
    [template] = report["templates"]
    attacks = {a["attack"]: a for a in template["attacks"]}
    assert report["measure"] == "win rate"
    assert attacks["constant_generic"]["mean"] == 1.0 and attacks["constant_generic"]["verdict"] == "fooled"
    assert attacks["ignore_instructions"]["mean"] == 0.0 and attacks["ignore_instructions"]["verdict"] == "resisted"
    assert attacks["constant_generic"]["n"] == 20  # both orders of 10 items
    pairwise = {row["model"] for row in leaderboard_rows(run=run)}
    assert pairwise == {"cand", "ref"}


def test_a_real_model_named_like_a_probe_is_refused(endpoint_row):
    dataset = simulated.build_dataset("clash", {"cand": [300] * 2})
    CandidateModel.objects.create(name="probe:fake_score")
    with pytest.raises(RunError, match="The probe's model names are taken by real models: probe:fake_score."):
        run_create(
            spec=RunSpec(
                dataset=dataset,
                mode="pointwise",
                judge_model="j",
                candidates=[CandidateModel.objects.get(name="cand")],
                endpoint=endpoint_row,
                injection_probe=True,
            ),
        )
    assert JudgeRun.objects.count() == 0
    with pytest.raises(CommandError, match="taken by real models"):
        call_command(
            "judge",
            "--dataset",
            "clash",
            "--mode",
            "pointwise",
            "--judge-model",
            "j",
            "--models",
            "cand",
            "--endpoint",
            "fake",
            "--injection-probe",
            "--no-wait",
        )
