"""The "bt" and "agreement" tables of the shared export writer, on hand-worked data."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.campaigns import gold_pair_add
from annotation.exports import AGREEMENT_FIELDS, BT_FIELDS
from annotation.models import Vote, Winner
from annotation.services import assignment_next, vote_cast
from core.exports import export_table, iter_export
from tests.factories import CandidateModelFactory, DatasetFactory, ItemFactory, JudgeRunFactory, JudgmentFactory

pytestmark = pytest.mark.django_db


def import_votes(tmp_path, rows, dataset="stats"):
    path = tmp_path / "votes.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    call_command("import_votes", str(path), "--dataset", dataset)


def export_jsonl(capsys, what, *args):
    capsys.readouterr()
    call_command("export", "--what", what, "--format", "jsonl", *args)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def stats_dataset():
    dataset = DatasetFactory(name="stats")
    items = [ItemFactory(dataset=dataset, external_id=f"q{n}") for n in range(1, 5)]
    models = {name: CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma", "delta", "epsilon")}
    return dataset, items, models


def vote(question, a, b, winner, annotator):
    return {"question_id": question, "model_a": a, "model_b": b, "winner": winner, "annotator": annotator}


def test_bt_export_matches_the_bt_command_and_lists_disconnected_models(stats_dataset, tmp_path, capsys):
    rows = (
        [vote("q1", "alpha", "beta", "model_a", f"h{k}") for k in range(3)]
        + [vote("q1", "beta", "alpha", "model_a", "h3"), vote("q2", "alpha", "beta", "tie", "h4")]
        + [vote("q2", "beta", "gamma", "model_a", f"h{k}") for k in range(2)]
        + [vote("q3", "gamma", "beta", "cannot_determine", "h5")]
        + [vote("q4", "delta", "epsilon", "model_b", "h6")]
    )
    import_votes(tmp_path, rows)
    exported = export_jsonl(capsys, "bt", "--dataset", "stats")
    call_command("bt", "--dataset", "stats", "--bootstrap", "1000", "--seed", "0", "--format", "json")
    report = json.loads(capsys.readouterr().out)
    assert [list(row) for row in exported] == [BT_FIELDS] * 5
    # alpha: 3 wins over beta, 1 loss, 1 tie; beta: 1 + 2 wins, 3 losses, 1 tie; gamma: 2 losses.
    assert [(r["model"], r["wins"], r["losses"], r["ties"], r["ranked"]) for r in exported] == [
        ("alpha", 3, 1, 1, True),
        ("beta", 3, 3, 1, True),
        ("gamma", 0, 2, 0, True),
        ("delta", None, None, None, False),
        ("epsilon", None, None, None, False),
    ]
    for row, score in zip(exported, report["scores"]):
        assert (row["rank"], row["coefficient"], row["lower"], row["upper"]) == (
            score["rank"],
            score["score"],
            score["lower"],
            score["upper"],
        )
        assert row["lower"] <= row["coefficient"] <= row["upper"]
    assert report["disconnected"] == ["delta", "epsilon"]
    assert exported[0]["coefficient"] > exported[1]["coefficient"] > exported[2]["coefficient"]

    table = export_table("bt", dataset=stats_dataset[0])
    lines = list(csv.reader(io.StringIO("".join(iter_export(table, "csv")).removeprefix("\ufeff"))))
    assert lines[0] == BT_FIELDS and len(lines) == 6 and lines[4][1:3] == ["", "delta"]
    call_command("bt", "--dataset", "stats", "--bootstrap", "1000", "--seed", "0", "--format", "csv")
    command_lines = list(csv.reader(io.StringIO(capsys.readouterr().out.removeprefix("\ufeff"))))
    assert command_lines == lines  # the command writes the export


def test_agreement_export_on_a_hand_worked_example(stats_dataset, tmp_path, capsys):
    dataset, items, models = stats_dataset
    # Two annotators on four questions, alpha against beta (alpha is "first" by name):
    #   h1: first, first, second, tie      h2: first, second, second, tie
    rows = [
        vote("q1", "alpha", "beta", "model_a", "h1"),
        vote("q1", "beta", "alpha", "model_b", "h2"),
        vote("q2", "alpha", "beta", "model_a", "h1"),
        vote("q2", "alpha", "beta", "model_b", "h2"),
        vote("q3", "alpha", "beta", "model_b", "h1"),
        vote("q3", "beta", "alpha", "model_a", "h2"),
        vote("q4", "alpha", "beta", "tie", "h1"),
        vote("q4", "alpha", "beta", "tie", "h2"),
        vote("q4", "alpha", "beta", "cannot_determine", "h3"),
    ]
    import_votes(tmp_path, rows)
    # The judge scores alpha/beta per question: 8/5 (first), 5/5 (tie), 3/7 (second), 6/6 (tie).
    run = JudgeRunFactory(dataset=dataset, status="finished")
    for item, (a, b) in zip(items, [(8, 5), (5, 5), (3, 7), (6, 6)]):
        JudgmentFactory(run=run, item=item, model=models["alpha"], final_score=a)
        JudgmentFactory(run=run, item=item, model=models["beta"], final_score=b)

    exported = export_jsonl(capsys, "agreement", "--dataset", "stats")
    assert all(list(row) == AGREEMENT_FIELDS for row in exported)
    got = {(r["metric"], r["rater_a"], r["rater_b"]): (r["units"], r["agreement"], r["value"]) for r in exported}
    judge = f"judge run {run.pk}"
    expected = {
        # 3 of the 4 rating pairs agree; without ties q4 drops out and 2 of 3 agree.
        ("raw_agreement", "", ""): (4, None, 0.75),
        ("raw_agreement_without_ties", "", ""): (3, None, 2 / 3),
        # Category shares 3/8, 3/8, 2/8: P_e = 22/64, P = 3/4, kappa = (3/4 - 11/32) / (21/32) = 13/21.
        ("fleiss_kappa", "", ""): (4, None, 13 / 21),
        # Coincidences: D_o = 2/8, D_e = 2 (3*3 + 3*2 + 3*2) / (8*7) = 3/4, alpha = 1 - 1/3.
        ("krippendorff_alpha", "", ""): (4, None, 2 / 3),
        # Imported votes do not know which side each answer was shown on.
        ("left_answer_win_rate", "", ""): (0, None, None),
        # Marginals (2, 1, 1) and (1, 2, 1): P_e = 5/16, kappa = (3/4 - 5/16) / (11/16) = 7/11.
        ("cohen_kappa", "h1", "h2"): (4, 0.75, 7 / 11),
        # Each against the judge's (1, 1, 2): P_e = 5/16 again, 3 of 4 agree.
        ("cohen_kappa_vs_judge", "h1", judge): (4, 0.75, 7 / 11),
        ("cohen_kappa_vs_judge", "h2", judge): (4, 0.75, 7 / 11),
    }
    assert set(got) == set(expected)
    for key, (units, agreement, value) in expected.items():
        assert got[key][:2] == (units, agreement), key
        # Rates, kappas and alpha have 6 decimal places, as every rate of the exports has.
        assert got[key][2] == (None if value is None else round(value, 6)), key
    spreadsheet = list(
        csv.DictReader(
            io.StringIO("".join(iter_export(export_table("agreement", dataset=dataset), "csv")).removeprefix("\ufeff"))
        )
    )
    assert {row["metric"]: row["value"] for row in spreadsheet}["fleiss_kappa"] == "0.619048"  # 13/21
    assert {row["agreement"] for row in spreadsheet if row["metric"] == "cohen_kappa"} == {"0.75"}
    # The run scope picks the dataset and the judge; a run on another dataset is refused.
    assert export_jsonl(capsys, "agreement", "--run", str(run.pk)) == exported
    other = JudgeRunFactory(dataset=DatasetFactory(name="other"), status="finished")
    with pytest.raises(CommandError, match=f"Judge run {other.pk} is not on dataset stats."):
        call_command("export", "--what", "agreement", "--dataset", "stats", "--run", str(other.pk))


@pytest.mark.parametrize("what", ["bt", "agreement"])
def test_statistics_exports_need_a_dataset(what):
    with pytest.raises(CommandError, match=f"The {what} export needs --dataset NAME"):
        call_command("export", "--what", what)


def test_bt_export_leaves_out_annotators_flagged_in_their_campaign(build_campaign, tmp_path, capsys):
    campaign, models, items, (careless, careful) = build_campaign(
        questions=5, question_count=4, models=2, annotators=2, votes_per_pair=2, gold_every=2
    )
    # The gold pair is on the question no ordinary pair asks, so everyone meets it (gold pairs
    # only come on questions an annotator has not seen).
    drawn = set(campaign.pairs.values_list("item_id", flat=True))
    [unseen] = [item for item in items if item.pk not in drawn]
    gold_pair_add(campaign=campaign, item=unseen, model_a=models[0], model_b=models[1], winner=Winner.MODEL_A)
    for person, gold_choice_wins in ((careless, False), (careful, True)):
        while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
            if assignment.pair.is_gold:
                right_side = "left" if assignment.model_a_on_left else "right"
                wrong_side = "right" if assignment.model_a_on_left else "left"
                choice = right_side if gold_choice_wins else wrong_side
            else:
                # Always the answer of models[0] (model_a or model_b of the pair, on whichever side).
                first_is_a = assignment.pair.model_a_id == models[0].pk
                choice = "left" if first_is_a == assignment.model_a_on_left else "right"
            vote_cast(token=assignment.token, annotator=person, choice=choice)
    assert Vote.objects.filter(annotator=careless, assignment__pair__is_gold=False).count() == 4
    exported = export_jsonl(capsys, "bt", "--dataset", campaign.dataset.name)
    # Only the careful annotator's 4 ordinary votes count (the gold pair never does).
    assert [(r["model"], r["wins"], r["losses"]) for r in exported] == [(models[0].name, 4, 0), (models[1].name, 0, 4)]
