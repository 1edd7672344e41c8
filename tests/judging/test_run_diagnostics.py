"""A run's judge diagnostics end to end: simulated judges on a loopback server whose biases are
set by construction, recovered by the run page, the API and the `diagnostics` command."""

import json
import math
import random
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import translation

from curation.choices import Language
from judging.engine.execution import run_execute_inline
from judging.models import CandidateModel, JudgeRun
from judging.results.diagnostics import run_diagnostics
from judging.results.figures import run_figures_refresh
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import UserFactory, VoteFactory
from tests.judging import simulated


@pytest.fixture(autouse=True)
def back_to_the_default_language():
    """A page asked for in Chinese leaves Chinese active in this thread: later tests expect English."""
    yield
    translation.deactivate()


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    """A transactional test's flush removes the role groups the migration made: put them back."""
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


@pytest.fixture
def endpoint_row(fake_llm, fast_retries):
    return Endpoint.objects.create(
        name="fake", base_url=fake_llm.base_url, default_model="judge-m", max_in_flight=8, timeout_seconds=5
    )


def pairwise_run(dataset, endpoint_row, *, both_orders=True, **kwargs):
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pairwise",
            judge_model="judge-m",
            candidates=[CandidateModel.objects.get(name="cand")],
            reference_model=CandidateModel.objects.get(name="ref"),
            endpoint=endpoint_row,
            both_orders=both_orders,
            seed=7,
            concurrency=8,
            **kwargs,
        ),
    )
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    return run


def test_a_judge_that_always_prefers_the_first_answer(fake_llm, endpoint_row):
    dataset = simulated.build_dataset("first", {"cand": [200] * 30, "ref": [300] * 30})
    fake_llm.reply = lambda body: simulated.PAIRWISE_FIRST
    run = pairwise_run(dataset, endpoint_row)
    report = run_diagnostics(run=run)

    position = report["position_bias"]
    assert (position["first_wins"], position["second_wins"], position["decisive"]) == (60, 0, 60)
    assert position["first_rate"] == 1.0
    # Wilson at 60/60: the lower end is 60 / (60 + 1.96^2), well above one half.
    assert position["low"] == pytest.approx(60 / (60 + 1.959964**2), abs=1e-6) and position["high"] == 1.0
    assert position["p"] < 1e-15
    flips = report["flip_rate"]
    assert flips["pairs"] == 30 and flips["incomplete"] == 0
    assert flips["flips"]["rate"] == 1.0 and flips["flips_to_first"] == 30 and flips["flips_to_second"] == 0
    # Every verdict follows the position, none the length: the length slope is not identifiable.
    assert report["length_bias"]["slope"] is None and report["length_bias"]["reason"]
    assert report["parse_failures"]["overall"]["successes"] == 0


def test_a_simulated_judge_with_set_position_bias_length_slope_and_flip_rate_is_recovered(fake_llm, endpoint_row):
    """logit P(first wins) = 0.85 + 3 z with z = (a - b) / (a + b): all three figures land in their intervals."""
    rng = random.Random(16)
    count = 150
    cand = [rng.randint(100, 900) for _ in range(count)]
    ref = [rng.randint(100, 900) for _ in range(count)]
    dataset = simulated.build_dataset("sim", {"cand": cand, "ref": ref})
    lengths = {(f"q{i:03d}", "cand"): cand[i] for i in range(count)} | {
        (f"q{i:03d}", "ref"): ref[i] for i in range(count)
    }
    intercept, slope = math.log(0.7 / 0.3), 3.0
    fake_llm.reply = simulated.position_length_judge(intercept=intercept, slope=slope, lengths=lengths, salt="16")
    run = pairwise_run(dataset, endpoint_row)
    report = run_diagnostics(run=run)

    pairs = list(zip(cand, ref))
    length = report["length_bias"]
    assert length["kind"] == "pairwise" and length["n"] == 2 * count
    assert length["low"] < slope < length["high"] and length["low"] > 0
    assert length["first_rate_low"] < 0.7 < length["first_rate_high"]
    position = report["position_bias"]
    expected_first = simulated.expected_first_rate(intercept=intercept, slope=slope, pairs=pairs)
    assert position["decisive"] == 2 * count
    assert position["low"] < expected_first < position["high"] and position["low"] > 0.5
    flips = report["flip_rate"]
    expected_flips = simulated.expected_flip_rate(intercept=intercept, slope=slope, pairs=pairs)
    assert flips["pairs"] == count
    assert flips["flips"]["low"] < expected_flips < flips["flips"]["high"]


def test_pointwise_length_slope_self_preference_and_parse_failures(fake_llm, endpoint_row):
    """Scores rise 1.5 points per SD of length; the judge's own family gets 2 points more;
    Chinese questions never parse."""
    rng = random.Random(3)
    count = 40
    languages = [Language.ZH if i % 4 == 0 else Language.EN for i in range(count)]
    lengths = {name: [rng.randint(200, 1400) for _ in range(count)] for name in ("gpt4", "claude", "llama")}
    dataset = simulated.build_dataset("points", lengths, languages=languages)
    CandidateModel.objects.filter(name="gpt4").update(provider="openai", family="gpt")
    CandidateModel.objects.filter(name="claude").update(provider="anthropic", family="claude")
    all_lengths = [value for values in lengths.values() for value in values]
    mean = sum(all_lengths) / len(all_lengths)
    sd = (sum((v - mean) ** 2 for v in all_lengths) / (len(all_lengths) - 1)) ** 0.5

    def score_of(external_id, model, prompt):
        z = (lengths[model][int(external_id[1:])] - mean) / sd
        noise = simulated.uniform(prompt, "noise") - 0.5
        own = 2 if model == "gpt4" else 0
        return max(1, min(10, round(5 + 1.5 * z + own + noise)))

    fake_llm.reply = simulated.pointwise_judge(score_of, fail_when=lambda prompt: "事实" in prompt)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="gpt-4o",
            candidates=list(CandidateModel.objects.filter(name__in=lengths)),
            endpoint=endpoint_row,
            judge_family="GPT",
            concurrency=8,
            seed=1,
        ),
    )
    run_execute_inline(run=run)
    report = run_diagnostics(run=run)

    length = report["length_bias"]
    assert length["kind"] == "pointwise" and length["n"] == 90 and length["groups"] == 30
    assert length["low"] < 1.5 < length["high"]
    assert report["position_bias"] is None and report["flip_rate"] is None
    self_pref = report["self_preference"]
    assert (self_pref["judge_family"], self_pref["measure"]) == ("GPT", "score")
    assert self_pref["same"]["n"] == 30 and self_pref["other"]["n"] == 60
    assert self_pref["low"] < 2 < self_pref["high"] and self_pref["low"] > 0
    assert [row["candidate"] for row in self_pref["by_candidate"] if row["same_family"]] == ["gpt4"]
    groups = report["parse_failures"]["groups"]
    by_group = {(g["group"]["template"].split(" v")[0], g["group"]["language"]): g for g in groups}
    chinese, english = by_group[("urs/factual_qa/zh", "zh")], by_group[("urs/factual_qa/en", "en")]
    assert (chinese["failures"], chinese["total"], chinese["rate"]) == (30, 30, 1.0)
    assert (english["failures"], english["total"], english["rate"]) == (0, 90, 0.0)
    overall = report["parse_failures"]["overall"]
    assert (overall["successes"], overall["trials"]) == (30, 120)


def test_self_preference_names_the_judge_family_from_a_namesake_candidate(fake_llm, endpoint_row):
    dataset = simulated.build_dataset("namesake", {"cand": [300] * 6, "ref": [300] * 6})
    fake_llm.reply = simulated.pointwise_judge(lambda *_: 6)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="ref",
            candidates=[CandidateModel.objects.get(name="cand")],
            endpoint=endpoint_row,
        ),
    )
    run_execute_inline(run=run)
    report = run_diagnostics(run=run)
    assert report["self_preference"]["reason"].startswith("The judge's provider and family are unknown")
    out = StringIO()
    call_command("describe_model", "ref", "cand", "--family", "same", stdout=out)
    assert out.getvalue() == "ref: provider -, family same\ncand: provider -, family same\n"
    report = run_diagnostics(run=run)
    assert report["self_preference"]["judge_family"] == "same"
    assert report["self_preference"]["same"]["n"] == 6 and report["self_preference"]["other"]["n"] == 0
    assert report["self_preference"]["reason"] == "Need at least two judgments in each group (same family and other)."
    with pytest.raises(CommandError, match="Give --provider, --family or both."):
        call_command("describe_model", "ref")


def test_the_judge_command_records_the_judge_family(fake_llm, endpoint_row):
    simulated.build_dataset("cli", {"gpt4": [300] * 4, "claude": [500] * 4})
    CandidateModel.objects.filter(name="gpt4").update(family="gpt")
    fake_llm.reply = simulated.pointwise_judge(lambda _id, model, _p: 9 if model == "gpt4" else 4)
    call_command(
        "judge",
        "--dataset",
        "cli",
        "--mode",
        "pointwise",
        "--judge-model",
        "gpt-4o",
        "--models",
        "gpt4,claude",
        "--endpoint",
        "fake",
        "--judge-family",
        "gpt",
        "--judge-provider",
        "openai",
        "--inline",
        stdout=StringIO(),
    )
    run = JudgeRun.objects.get(dataset__name="cli")
    assert (run.judge_family, run.judge_provider) == ("gpt", "openai")
    self_pref = run_diagnostics(run=run)["self_preference"]
    assert (self_pref["same"]["mean"], self_pref["other"]["mean"], self_pref["advantage"]) == (9.0, 4.0, 5.0)
    assert self_pref["reason"] == "Every value within each group is the same: no interval can be given."


@pytest.fixture
def voted_run(fake_llm, endpoint_row):
    """Ten questions judged pointwise for alpha and beta, with human votes built so that
    agreement is 6 of 9 majorities, kappa 15/42, and four disagreements of known strength."""
    dataset = simulated.build_dataset("voted", {"alpha": [300] * 10, "beta": [300] * 10})
    judge_prefers_beta = {5, 6, 7}  # items (0-based) where beta scores higher
    fake_llm.reply = simulated.pointwise_judge(
        lambda external_id, model, prompt: 8 if (model == "beta") == (int(external_id[1:]) in judge_prefers_beta) else 5
    )
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=list(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
            endpoint=endpoint_row,
        ),
    )
    run_execute_inline(run=run)
    alpha, beta = CandidateModel.objects.get(name="alpha"), CandidateModel.objects.get(name="beta")
    items = list(dataset.items.order_by("external_id"))
    votes = {
        0: ["model_a"],
        1: ["model_a"],
        2: ["model_a"],
        3: ["model_a"],
        4: ["model_b", "model_b"],  # humans reverse the judge, unanimously
        5: ["model_b"],
        6: ["model_b"],
        7: ["model_a", "model_a"],  # reversal again
        8: ["tie", "tie"],  # humans tie where the judge picked alpha
        9: ["model_a", "model_b", "cannot_determine"],  # no majority
    }
    for index, winners in votes.items():
        for number, winner in enumerate(winners):
            VoteFactory(item=items[index], model_a=alpha, model_b=beta, winner=winner, annotator_label=f"h{number}")
    return run, items


def test_agreement_with_human_votes_kappa_and_the_strongest_disagreements(voted_run):
    run, items = voted_run
    human = run_diagnostics(run=run)["human_agreement"]
    assert (human["shared"], human["no_majority"]) == (10, 1)
    assert human["agreement"]["successes"] == 6 and human["agreement"]["trials"] == 9
    assert human["agreement_without_ties"]["successes"] == 6 and human["agreement_without_ties"]["trials"] == 8
    assert human["kappa"] == pytest.approx(15 / 42)
    assert human["kappa_low"] < human["kappa"] < human["kappa_high"]
    assert human["disagreement_count"] == 4
    ranked = [(row["external_id"], row["strength"]) for row in human["disagreements"]]
    # Unanimous reversals first (strength 2), then a human tie and a split (strength 1); equal
    # strengths with equal votes go by item.
    assert sorted(ranked[:2]) == [("q004", 2.0), ("q007", 2.0)]
    assert sorted(ranked[2:]) == [("q008", 1.0), ("q009", 1.0)]
    assert {row["external_id"]: row["kind"] for row in human["disagreements"]} == {
        "q004": "reversal",
        "q007": "reversal",
        "q008": "human tie",
        "q009": "no majority",
    }
    by_item = {row["external_id"]: row for row in human["disagreements"]}
    assert by_item["q004"]["item_id"] == items[4].pk and by_item["q004"]["votes"] == {"second": 2}
    assert (by_item["q004"]["judge"], by_item["q004"]["majority"]) == ("first", "second")
    assert by_item["q009"]["majority"] is None and by_item["q009"]["votes"] == {"first": 1, "second": 1}


def test_run_page_api_and_command_show_the_diagnostics(voted_run, client):
    run, items = voted_run
    researcher = UserFactory(username="diag-res", roles=["researcher"])
    client.force_login(researcher)
    run_figures_refresh(run_id=run.pk)  # what the background task does once the run closes
    page = client.get(reverse("judging:run-detail", args=[run.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="diagnostics"' in html and "Judge diagnostics" in html
    assert "Pointwise judgments show one answer at a time" in html
    assert f'href="/review/items/{items[4].pk}/"' in html and "q004" in html
    assert "0.357" in html  # kappa

    api = client.get(reverse("api-run-diagnostics", args=[run.pk]))
    assert api.status_code == 200
    data = api.json()
    assert data["human_agreement"]["kappa"] == pytest.approx(15 / 42)
    assert data["position_bias"] is None and data["length_bias"]["kind"] == "pointwise"
    assert data["parse_failures"]["overall"] == {
        "successes": 0,
        "trials": 20,
        "rate": 0.0,
        "low": 0.0,
        "high": pytest.approx(0.1611, abs=1e-4),
    }

    out = StringIO()
    call_command("diagnostics", "--run", str(run.pk), stdout=out)
    text = out.getvalue()
    assert "judge vs human kappa" in text and "0.357" in text
    assert f"/review/items/{items[4].pk}/" in text
    out = StringIO()
    call_command("diagnostics", "--run", str(run.pk), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["human_agreement"]["disagreement_count"] == 4

    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("judging:run-detail", args=[run.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "评判诊断" in page.content.decode()


def test_diagnostics_are_for_researchers_only(voted_run, client):
    run, _items = voted_run
    client.force_login(UserFactory(username="diag-ann", roles=["annotator"]))
    assert client.get(reverse("api-run-diagnostics", args=[run.pk])).status_code == 403
    assert client.get(reverse("judging:run-detail", args=[run.pk])).status_code == 403
    client.force_login(UserFactory(username="diag-res2", roles=["researcher"]))
    assert client.get(reverse("api-run-diagnostics", args=[run.pk + 1000])).status_code == 404


def test_the_command_names_a_missing_run():
    with pytest.raises(Exception, match="No judge run 999"):
        call_command("diagnostics", "--run", "999")
