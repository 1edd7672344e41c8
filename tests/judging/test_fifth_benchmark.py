"""A fifth benchmark is one module (tests/judging/fifth/benchmark.py, registered once): every
command, form and table that lists benchmarks finds it, and `reproduce` runs it end to end."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from curation.datasets.forms import DatasetImportForm
from curation.models import Dataset, dataset_sources
from judging.answers.forms import _preset_choices
from judging.benchmarks.registry import benchmark_unregister, benchmarks, template_sets
from judging.models import JudgeRun
from judging.prompts.building import TEMPLATE_SETS, default_templates
from tests.judging.fifth import benchmark as fifth

pytestmark = pytest.mark.django_db


@pytest.fixture
def registered():
    yield fifth.register()
    benchmark_unregister(fifth.NAME)


def test_registering_one_module_makes_it_known_everywhere(registered):
    assert list(benchmarks())[-1] == "fifth"
    assert "fifth" in template_sets() and "fifth" in TEMPLATE_SETS
    assert "fifth/pointwise/en" in {t.name for t in default_templates()}
    assert ("fifth", "Fifth") in dataset_sources()
    assert ("fifth", "Fifth (JSONL)") in DatasetImportForm().fields["format"].choices
    assert "fifth" in [name for name, _label in _preset_choices()]


def test_taken_out_again_it_is_known_nowhere(registered):
    benchmark_unregister(fifth.NAME)
    assert "fifth" not in benchmarks() and "fifth" not in TEMPLATE_SETS
    assert "fifth" not in [value for value, _label in dataset_sources()]


def test_reproduce_runs_it_end_to_end(registered, fake_llm, fast_retries, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fifth")
    fake_llm.reply = lambda body: "An answer." if body["model"] != "judge" else "Fine. {'Final Score': 6}"
    (tmp_path / "fifth.jsonl").write_text(
        "".join(json.dumps({"id": n, "q": f"Question {n}?"}) + "\n" for n in range(1, 4)), encoding="utf-8"
    )
    out = StringIO()
    call_command(
        "reproduce",
        "--benchmark",
        "fifth",
        "--judge-model",
        "judge",
        "--models",
        "mine",
        "--data",
        str(tmp_path),
        "--manifest",
        str(tmp_path / "m.json"),
        stdout=out,
        stderr=StringIO(),
    )
    assert Dataset.objects.get().source == "fifth"
    run = JudgeRun.objects.get()
    assert [t.name for t in run.templates.all()] == ["fifth/pointwise/en"]
    assert (run.temperature, run.max_tokens, run.total) == (0.0, 512, 3)
    answers = [body for body in fake_llm.requests if body["model"] == "mine"]
    assert {(body["temperature"], body["max_tokens"]) for body in answers} == {(0.2, 64)}
    assert "Fifth benchmark (mean score)\nmine 6.00" in out.getvalue()
