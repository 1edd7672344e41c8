"""import_votes, bt and alignment on votes and judgments built with factories; the votes export."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Vote
from core.exports import export_table
from tests.factories import (
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
    SubmissionFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    study = StudyFactory()
    dataset = DatasetFactory(name="urs-mini", study=study)
    items = [
        ItemFactory(dataset=dataset, external_id="q1", question="What is BT?", intent="factual_qa"),
        ItemFactory(dataset=dataset, external_id="q2", question="Plan my trip", intent="ask_for_advice"),
        ItemFactory(dataset=dataset, external_id="q3", question="Write a poem", intent="seek_creativity"),
    ]
    models = [CandidateModelFactory(name=n) for n in ("alpha", "beta", "gamma")]
    return dataset, items, models, study


def write(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_import_votes_whole_file_or_nothing_and_never_twice(world, tmp_path, capsys):
    dataset, items, models, _ = world
    good = write(
        tmp_path / "votes.jsonl",
        [
            {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "model_a", "annotator": "h1"},
            {"question": "Plan my trip", "model_a": "beta", "model_b": "gamma", "winner": "tie", "annotator": "h1"},
            {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "model_a", "annotator": "h1"},
        ],
    )
    call_command("import_votes", str(good), "--dataset", "urs-mini")
    assert "Read 3 votes: 3 imported, 0 already imported before." in capsys.readouterr().out
    call_command("import_votes", str(good), "--dataset", "urs-mini")
    assert "Read 3 votes: 0 imported, 3 already imported before." in capsys.readouterr().out
    assert Vote.objects.count() == 3
    bad = write(
        tmp_path / "bad.jsonl",
        [
            {"question_id": "q2", "model_a": "alpha", "model_b": "beta", "winner": "model_b", "annotator": "h2"},
            {"question_id": "q2", "model_a": "alpha", "model_b": "delta", "winner": "model_b", "annotator": "h2"},
        ],
    )
    with pytest.raises(CommandError, match="Line 2: unknown model 'delta'."):
        call_command("import_votes", str(bad), "--dataset", "urs-mini")
    for row, message in [
        (
            {"question_id": "q9", "model_a": "alpha", "model_b": "beta", "winner": "tie", "annotator": "x"},
            "Line 1: no question of dataset urs-mini",
        ),
        (
            {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "left", "annotator": "x"},
            "Line 1: winner must be model_a, model_b, tie or cannot_determine.",
        ),
        (
            {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "tie"},
            "Line 1: annotator must be a name",
        ),
        (
            {"question_id": "q1", "model_a": "alpha", "model_b": "alpha", "winner": "tie", "annotator": "x"},
            "Line 1: model_a and model_b are the same model.",
        ),
    ]:
        with pytest.raises(CommandError, match=message):
            call_command("import_votes", str(write(tmp_path / "one.jsonl", [row])), "--dataset", "urs-mini")
    (tmp_path / "broken.jsonl").write_text('{"question_id": "q1"\n')
    with pytest.raises(CommandError, match="Line 1 is not valid JSON"):
        call_command("import_votes", str(tmp_path / "broken.jsonl"), "--dataset", "urs-mini")
    with pytest.raises(CommandError, match="No dataset named 'nope'."):
        call_command("import_votes", str(good), "--dataset", "nope")
    with pytest.raises(CommandError, match="No campaign 'gone' on dataset 'urs-mini'."):
        call_command("import_votes", str(good), "--dataset", "urs-mini", "--campaign", "gone")
    assert Vote.objects.count() == 3


def test_bt_and_alignment_commands_on_known_data(world, tmp_path, capsys):
    dataset, items, models, study = world
    alpha, beta, gamma = models
    rows = []
    # alpha beats beta 3-1, beta beats gamma 3-1, alpha beats gamma 2-0 plus a tie; 2 cannot-determine.
    for winner, n in (("model_a", 3), ("model_b", 1)):
        rows += [
            {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": winner, "annotator": f"h{k}"}
            for k in range(n)
        ]
        rows += [
            {"question_id": "q2", "model_a": "beta", "model_b": "gamma", "winner": winner, "annotator": f"h{k}"}
            for k in range(n)
        ]
    rows += [
        {"question_id": "q3", "model_a": "gamma", "model_b": "alpha", "winner": "model_b", "annotator": f"h{k}"}
        for k in range(2)
    ]
    rows += [{"question_id": "q3", "model_a": "gamma", "model_b": "alpha", "winner": "tie", "annotator": "h3"}]
    rows += [
        {
            "question_id": "q3",
            "model_a": "gamma",
            "model_b": "alpha",
            "winner": "cannot_determine",
            "annotator": f"h{k}",
        }
        for k in (4, 5)
    ]
    call_command("import_votes", str(write(tmp_path / "v.jsonl", rows)), "--dataset", "urs-mini")
    capsys.readouterr()
    call_command("bt", "--dataset", "urs-mini", "--bootstrap", "100", "--format", "json")
    report = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in report["scores"]] == ["alpha", "beta", "gamma"]
    assert (report["votes"], report["cannot_determine"], report["comparisons"]) == (13, 2, 11)
    assert [(s["wins"], s["losses"], s["ties"]) for s in report["scores"]] == [(5, 1, 1), (4, 4, 0), (1, 5, 1)]

    run = JudgeRunFactory(dataset=dataset, status="finished")
    scores = {"alpha": [9, 8, 7], "beta": [6, 6, 6], "gamma": [3, 4, None]}
    for model in models:
        for item, score in zip(items, scores[model.name]):
            JudgmentFactory(run=run, item=item, model=model, final_score=score, parse_error="" if score else "no score")
    SubmissionFactory(study=study, usage={"satisfaction": {"factual_qa": 5, "ask_for_advice": 3, "seek_creativity": 4}})
    SubmissionFactory(study=study, usage={"satisfaction": {"factual_qa": 4, "ask_for_advice": 2, "seek_creativity": 3}})
    SubmissionFactory(
        study=study,
        excluded=True,
        exclusion_reason="Failed the anchor question.",
        usage={"satisfaction": {"factual_qa": 1, "ask_for_advice": 5, "seek_creativity": 1}},
    )
    call_command("alignment", "--dataset", "urs-mini", "--run", str(run.pk), "--bootstrap", "50", "--format", "json")
    out = json.loads(capsys.readouterr().out)
    assert out["judge_scores"] == {"alpha": 8.0, "beta": 6.0, "gamma": 3.5}
    assert out["bt_vs_judge"]["n"] == 3 and out["bt_vs_judge"]["spearman"]["r"] == pytest.approx(1.0)
    # Per intent judge means: factual_qa (9+6+3)/3 = 6, ask_for_advice (8+6+4)/3 = 6, seek_creativity (7+6)/2 = 6.5;
    # satisfaction (excluded submission left out): 4.5, 2.5, 3.5.
    points = {
        p["intent"]: (p["judge"], p["satisfaction"], p["respondents"]) for p in out["satisfaction_vs_judge"]["points"]
    }
    assert points == {"factual_qa": (6.0, 4.5, 2), "ask_for_advice": (6.0, 2.5, 2), "seek_creativity": (6.5, 3.5, 2)}
    call_command("alignment", "--dataset", "urs-mini", "--run", str(run.pk), "--bootstrap", "20")
    assert "pearson" in capsys.readouterr().out
    with pytest.raises(CommandError, match="No judge run 999999 on dataset 'urs-mini'."):
        call_command("alignment", "--dataset", "urs-mini", "--run", "999999")
    with pytest.raises(CommandError, match="No dataset named 'nope'."):
        call_command("bt", "--dataset", "nope")

    table = export_table("votes", dataset=dataset)
    exported = list(table.rows)
    assert len(exported) == 13 and table.fields[0] == "vote_id"
    assert {row["model_a"] for row in exported} == {"alpha", "beta", "gamma"}


def _votes(wins: dict[tuple[str, str], int]) -> list[dict]:
    """{(winner, loser): n} as import_votes rows, each vote by its own annotator."""
    rows = []
    for (winner, loser), n in wins.items():
        rows += [
            {"question_id": "q1", "model_a": winner, "model_b": loser, "winner": "model_a", "annotator": f"{winner}{k}"}
            for k in range(n)
        ]
    return rows


def test_bt_alpha_can_be_set_and_zero_needs_a_strongly_connected_graph(world, tmp_path, capsys):
    # A cycle of wins (alpha > beta > gamma > alpha, each 3-1): strongly connected.
    cycle = {("alpha", "beta"): 3, ("beta", "alpha"): 1, ("beta", "gamma"): 3, ("gamma", "beta"): 1}
    cycle |= {("gamma", "alpha"): 1, ("alpha", "gamma"): 2}
    call_command("import_votes", str(write(tmp_path / "v.jsonl", _votes(cycle))), "--dataset", "urs-mini")
    capsys.readouterr()

    def scores(*args):
        call_command("bt", "--dataset", "urs-mini", "--bootstrap", "0", "--format", "json", *args)
        report = json.loads(capsys.readouterr().out)
        return report["alpha"], {s["label"]: s["score"] for s in report["scores"]}

    default_alpha, default = scores()
    plain_alpha, plain = scores("--alpha", "0")
    regularised_alpha, regularised = scores("--alpha", "0.01")
    # On a strongly connected graph the default is FastChat's unregularised fit.
    assert (default_alpha, plain_alpha, regularised_alpha) == (0.0, 0.0, 0.01)
    assert default == plain
    # The regulariser pulls the scores together: without it they spread further.
    assert plain["alpha"] - plain["gamma"] > regularised["alpha"] - regularised["gamma"] > 0
    call_command("bt", "--dataset", "urs-mini", "--bootstrap", "0", "--alpha", "0")
    assert "alpha 0." in capsys.readouterr().out
    with pytest.raises(CommandError, match="--alpha must be zero or positive, got -1.0."):
        call_command("bt", "--dataset", "urs-mini", "--alpha", "-1")


def test_bt_alpha_zero_is_refused_when_a_model_never_loses(world, tmp_path, capsys):
    one_sided = {("alpha", "beta"): 3, ("beta", "gamma"): 2, ("gamma", "beta"): 1, ("alpha", "gamma"): 2}
    call_command("import_votes", str(write(tmp_path / "v.jsonl", _votes(one_sided))), "--dataset", "urs-mini")
    capsys.readouterr()
    with pytest.raises(CommandError, match="alpha=0 needs a strongly connected comparison graph .* 'alpha' never lost"):
        call_command("bt", "--dataset", "urs-mini", "--bootstrap", "0", "--alpha", "0")
    # The default alpha keeps the estimate finite on the same votes.
    call_command("bt", "--dataset", "urs-mini", "--bootstrap", "0", "--format", "json")
    assert [s["label"] for s in json.loads(capsys.readouterr().out)["scores"]] == ["alpha", "beta", "gamma"]
