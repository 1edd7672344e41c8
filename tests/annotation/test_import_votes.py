"""import_votes: votes from other tools, for models with no answers here; every bad line named,
every unknown question and model named at once, nothing written; Bradley-Terry on imported
votes equals an independent maximum-likelihood fit. Run on SQLite and PostgreSQL alike."""

import io
import json
import math
import random

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.linalg import null_space
from scipy.optimize import minimize

from annotation.models import Vote
from core.import_checks import MAX_NESTING
from curation.models import Item
from judging.models import Answer, CandidateModel
from tests.factories import CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

MODEL_LIMIT = CandidateModel._meta.get_field("name").max_length
ANNOTATOR_LIMIT = Vote._meta.get_field("annotator_label").max_length
COMMENT_LIMIT = Vote._meta.get_field("comment").max_length
EXTERNAL_ID_LIMIT = Item._meta.get_field("external_id").max_length
NUL_TAIL = "no database column can hold it"


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="ext")
    for n in range(1, 11):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question number {n}?")
    CandidateModelFactory(name="alpha")
    CandidateModelFactory(name="beta")
    return dataset


def vote(question_id="q1", model_a="alpha", model_b="beta", winner="model_a", annotator="h1", **extra) -> dict:
    return {
        "question_id": question_id,
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "annotator": annotator,
        **extra,
    }


def jsonl(rows) -> str:
    """Dicts become JSON lines; strings are written as they are."""
    return "".join((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows)


def put(tmp_path, data: str | bytes):
    path = tmp_path / "votes.jsonl"
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def run(path, *args) -> str:
    out = io.StringIO()
    call_command("import_votes", str(path), "--dataset", "ext", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def refused(tmp_path, data, *args) -> str:
    models = sorted(CandidateModel.objects.values_list("name", flat=True))
    with pytest.raises(CommandError) as error:
        run(put(tmp_path, data), *args)
    assert Vote.objects.count() == 0
    assert sorted(CandidateModel.objects.values_list("name", flat=True)) == models
    return str(error.value)


# ---------------------------------------------------------------- each bad line, named

BAD_LINES = {
    "winner a number": (
        vote(winner=1),
        "winner must be model_a, model_b, tie or cannot_determine, found the number 1.",
    ),
    "winner a list": (
        vote(winner=["model_a"]),
        "winner must be model_a, model_b, tie or cannot_determine, found a list.",
    ),
    "winner null": (vote(winner=None), "winner must be model_a, model_b, tie or cannot_determine, found null."),
    "winner unknown": (
        vote(winner="Model_A"),
        "winner must be model_a, model_b, tie or cannot_determine, found 'Model_A'.",
    ),
    "winner true": (vote(winner=True), "winner must be model_a, model_b, tie or cannot_determine, found true."),
    "winner missing": ({k: v for k, v in vote().items() if k != "winner"}, "missing field(s) winner"),
    "model_a a number": (vote(model_a=3), "expected a non-empty text in 'model_a', found the number 3"),
    "model_b a list": (vote(model_b=["beta"]), "expected a non-empty text in 'model_b', found a list"),
    "model_a null": (vote(model_a=None), "expected a non-empty text in 'model_a', found null"),
    "model_b blank": (vote(model_b="  "), "expected a non-empty text in 'model_b'"),
    "model name longer than its column": (
        vote(model_b="m" * (MODEL_LIMIT + 1)),
        f"field 'model_b' is {MODEL_LIMIT + 1} characters; the limit is {MODEL_LIMIT}",
    ),
    "the same model twice": (vote(model_a="alpha", model_b=" alpha "), "model_a and model_b are the same model."),
    "annotator a list": (
        vote(annotator=["h"]),
        f"annotator must be a name of 1 to {ANNOTATOR_LIMIT} characters, found a list.",
    ),
    "annotator longer than its column": (
        vote(annotator="a" * (ANNOTATOR_LIMIT + 1)),
        f"annotator must be a name of 1 to {ANNOTATOR_LIMIT} characters, found {'a' * 59!r}….",
    ),
    "annotator with NUL": (
        vote(annotator="h\x00"),
        f"field 'annotator' contains a NUL character (U+0000) at character 2; {NUL_TAIL}",
    ),
    "comment longer than its column": (
        vote(comment="c" * (COMMENT_LIMIT + 1)),
        f"field 'comment' is {COMMENT_LIMIT + 1} characters; the limit is {COMMENT_LIMIT}",
    ),
    "comment a number": (vote(comment=5), "expected a text in 'comment', found the number 5"),
    "question of 200 KB": (
        {**vote(), "question_id": None, "question": "q" * 204800},
        "field 'question' is 204800 characters; the limit is 100000",
    ),
    "question_id longer than its column": (
        vote(question_id="q" * (EXTERNAL_ID_LIMIT + 1)),
        f"field 'question_id' is {EXTERNAL_ID_LIMIT + 1} characters; the limit is {EXTERNAL_ID_LIMIT}",
    ),
    "question_id false": (vote(question_id=False), "expected question_id to be a number or text, found false"),
    "no question at all": (
        {k: v for k, v in vote().items() if k != "question_id"},
        "expected 'question' or 'question_id'.",
    ),
    "a line that is a list": ("[1, 2]", "expected a JSON object, found a list"),
    "a line that is a number": ("42", "expected a JSON object, found the number 42"),
    "NaN": (
        '{"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "tie", "annotator": "h", '
        '"weight": NaN}',
        "NaN is not a number JSON allows; expected a finite number or null",
    ),
    "deep nesting": (
        '{"question_id": "q1", "extra": ' + "[" * 5000 + "]" * 5000 + "}",
        f"nesting deeper than {MAX_NESTING} levels of objects and lists (at column 41)",
    ),
}


@pytest.mark.parametrize("case", BAD_LINES)
def test_a_bad_vote_line_is_named_and_nothing_is_written(tmp_path, dataset, case):
    row, detail = BAD_LINES[case]
    message = refused(tmp_path, jsonl([vote(), "", row]), "--create-models")
    assert message == f"Nothing imported. Line 3: {detail}"


def test_broken_json_and_bad_encodings_name_their_line(tmp_path, dataset):
    assert refused(tmp_path, jsonl([vote(), '{"question_id": "q1",'])) == (
        "Nothing imported. Line 2 is not valid JSON: expected one JSON object per line "
        "(Expecting property name enclosed in double quotes at column 22)"
    )
    gbk = jsonl([vote(), vote(annotator="标注员")]).encode("gbk")
    # '{"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "model_a", "annotator": "' is 96
    # characters; 标 is B1 EA in GBK, and 0xb1 cannot start a UTF-8 character.
    assert refused(tmp_path, gbk) == "Nothing imported. Line 2: not UTF-8 (byte 0xb1 at column 97)"
    assert refused(tmp_path, jsonl([vote()]).encode("utf-16")) == (
        "Nothing imported. Line 1: not UTF-8 (byte 0xff at column 1); the file looks like UTF-16"
    )
    assert refused(tmp_path, jsonl([vote()]).encode("utf-16-le")) == (
        "Nothing imported. Line 1: not UTF-8 (byte 0x00 at column 2); the file looks like UTF-16 or UTF-32"
    )


# ---------------------------------------------------------------- unknown questions and models, all at once


def test_all_unknown_models_are_named_sorted_in_one_error_then_created(tmp_path, dataset):
    rows = [
        vote(model_a="zeta", model_b="alpha"),
        vote(model_a="beta", model_b="delta"),
        vote(model_a="zeta", model_b="delta", winner="tie"),
        vote(model_a="Epsilon", model_b="beta", winner="cannot_determine"),
    ]
    assert refused(tmp_path, jsonl(rows)) == (
        "Nothing imported.\n"
        "3 unknown model(s); run again with --create-models to create them:\n"
        "Line 4: unknown model 'Epsilon'.\n"
        "Line 2: unknown model 'delta'.\n"
        "Line 1: unknown model 'zeta'."
    )
    output = run(put(tmp_path, jsonl(rows)), "--create-models")
    assert output == "Created 3 models: Epsilon, delta, zeta.\nRead 4 votes: 4 imported, 0 already imported before.\n"
    assert sorted(CandidateModel.objects.values_list("name", flat=True)) == [
        "Epsilon",
        "alpha",
        "beta",
        "delta",
        "zeta",
    ]
    # Votes need their question and two models, not answers: none exist.
    assert Answer.objects.count() == 0
    assert list(Vote.objects.order_by("pk").values_list("model_a__name", "model_b__name", "winner")) == [
        ("zeta", "alpha", "model_a"),
        ("beta", "delta", "model_a"),
        ("zeta", "delta", "tie"),
        ("Epsilon", "beta", "cannot_determine"),
    ]
    # Idempotent: the same file again adds nothing and creates nothing.
    assert (
        run(put(tmp_path, jsonl(rows)), "--create-models") == "Read 4 votes: 0 imported, 4 already imported before.\n"
    )
    assert Vote.objects.count() == 4 and CandidateModel.objects.count() == 5


def test_unknown_questions_are_named_with_their_lines_together_with_unknown_models(tmp_path, dataset):
    rows = [
        vote(),
        vote(question_id="q99"),
        {**vote(model_b="omega"), "question_id": None, "question": "Question number 77?"},
        vote(question_id=7),
    ]
    assert refused(tmp_path, jsonl(rows)) == (
        "Nothing imported.\n"
        "Line 2: no question of dataset ext has question_id 'q99'.\n"
        "Line 3: no question of dataset ext has the question text 'Question number 77?'.\n"
        "Line 4: no question of dataset ext has question_id '7'.\n"
        "1 unknown model(s); run again with --create-models to create them:\n"
        "Line 3: unknown model 'omega'."
    )
    # --create-models does not make unknown questions importable.
    assert refused(tmp_path, jsonl(rows), "--create-models") == (
        "Nothing imported.\n"
        "Line 2: no question of dataset ext has question_id 'q99'.\n"
        "Line 3: no question of dataset ext has the question text 'Question number 77?'.\n"
        "Line 4: no question of dataset ext has question_id '7'."
    )


def test_a_long_list_of_unknown_questions_is_cut_after_twenty_lines(tmp_path, dataset):
    message = refused(tmp_path, jsonl([vote(question_id=f"x{n}") for n in range(25)]))
    lines = message.split("\n")
    assert lines[0] == "Nothing imported." and len(lines) == 22
    assert lines[1] == "Line 1: no question of dataset ext has question_id 'x0'."
    assert lines[20] == "Line 20: no question of dataset ext has question_id 'x19'."
    assert lines[21] == "... and 5 more such lines."


def test_questions_by_text_or_id_blank_lines_skipped_and_an_ambiguous_text_refused(tmp_path, dataset):
    rows = [
        "",
        {"question": "  Question number 2?  ", "model_a": "alpha", "model_b": "beta", "winner": "tie", "annotator": 17},
        "   ",
        vote(question_id="q3", comment=None),
        vote(question_id="q4", comment="close call"),
    ]
    assert run(put(tmp_path, jsonl(rows))) == "Read 3 votes: 3 imported, 0 already imported before.\n"
    assert list(Vote.objects.order_by("pk").values_list("item__external_id", "annotator_label", "comment")) == [
        ("q2", "17", ""),
        ("q3", "h1", ""),
        ("q4", "h1", "close call"),
    ]
    Vote.objects.all().delete()
    ItemFactory(dataset=dataset, external_id="q2-copy", question="Question number 2?")
    assert refused(tmp_path, jsonl(rows)) == (
        "Nothing imported.\nLine 2: the question appears more than once in dataset ext; give question_id instead."
    )


# ---------------------------------------------------------------- Bradley-Terry on votes from elsewhere

STRENGTHS = {"atlas": 1.2, "borealis": 0.6, "cirrus": 0.0, "dorado": -0.4, "eridanus": -1.4}


def generated_votes(seed: int, count: int) -> list[dict]:
    """Votes drawn from known Bradley-Terry strengths: 8 % cannot-determine, 12 % ties, else
    model_a wins with probability 1 / (1 + exp(s_b - s_a)). Questions by id or by text."""
    rng = random.Random(seed)
    names = sorted(STRENGTHS)
    rows = []
    for k in range(count):
        first, second = rng.sample(names, 2)
        n = rng.randint(1, 10)
        u = rng.random()
        if u < 0.08:
            winner = "cannot_determine"
        elif u < 0.20:
            winner = "tie"
        else:
            p_first = 1 / (1 + math.exp(STRENGTHS[second] - STRENGTHS[first]))
            winner = "model_a" if rng.random() < p_first else "model_b"
        where = {"question_id": f"q{n}"} if k % 2 else {"question": f"Question number {n}?"}
        rows.append({**where, "model_a": first, "model_b": second, "winner": winner, "annotator": f"rater{k % 7}"})
    return rows


def penalised_ml_fit(names: list[str], rows: list[dict], alpha: float) -> dict[str, float]:
    """Maximise sum_ij W_ij (t_i - log(e^t_i + e^t_j)) - alpha n^2 log(sum_i e^t_i) over sum t = 0.

    W_ij = wins of i over j plus half their ties; cannot-determine votes left out. The sum-zero
    plane is parametrised by an orthonormal basis, and the problem solved by BFGS with its gradient.
    """
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((n, n))
    for row in rows:
        a, b = index[row["model_a"]], index[row["model_b"]]
        if row["winner"] == "model_a":
            wins[a, b] += 1
        elif row["winner"] == "model_b":
            wins[b, a] += 1
        elif row["winner"] == "tie":
            wins[a, b] += 0.5
            wins[b, a] += 0.5
    basis = null_space(np.ones((1, n)))  # n x (n-1), columns orthonormal and summing to zero

    def negative(z):
        t = basis @ z
        gap = t[:, None] - t[None, :]
        log_p = -np.logaddexp(0.0, -gap)  # log P(i beats j)
        shift = t.max()
        log_total = shift + np.log(np.exp(t - shift).sum())
        value = -(wins * log_p).sum() + alpha * n * n * log_total
        p = np.exp(log_p)
        gradient_t = -(wins * (1 - p)).sum(axis=1) + (wins.T * (1 - p.T)).sum(axis=1)
        gradient_t += alpha * n * n * np.exp(t - log_total)
        return value, basis.T @ gradient_t

    result = minimize(negative, np.zeros(n - 1), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000})
    assert result.success or np.max(np.abs(result.jac)) < 1e-8, result.message
    return dict(zip(names, (basis @ result.x).tolist()))


def test_bt_scores_of_imported_votes_equal_an_independent_penalised_ml_fit(tmp_path, dataset, capsys):
    rows = generated_votes(seed=20240607, count=200)
    winners = [row["winner"] for row in rows]
    assert (winners.count("cannot_determine"), winners.count("tie")) == (16, 19)
    output = run(put(tmp_path, jsonl(rows)), "--create-models")
    assert output == (
        "Created 5 models: atlas, borealis, cirrus, dorado, eridanus.\n"
        "Read 200 votes: 200 imported, 0 already imported before.\n"
    )
    assert Answer.objects.count() == 0

    # An explicit alpha: the default on these (strongly connected) votes would be unregularised.
    call_command("bt", "--dataset", "ext", "--bootstrap", "0", "--format", "json", "--alpha", "0.01")
    report = json.loads(capsys.readouterr().out)
    assert (report["votes"], report["cannot_determine"], report["comparisons"]) == (200, 16, 184)
    assert report["alpha"] == 0.01 and report["disconnected"] == []
    ours = {score["label"]: score["score"] for score in report["scores"]}
    theirs = penalised_ml_fit(sorted(STRENGTHS), rows, alpha=report["alpha"])
    assert set(ours) == set(STRENGTHS)
    assert max(abs(ours[name] - theirs[name]) for name in STRENGTHS) < 1e-6
    # The fit recovers the order of the strengths the votes were drawn from.
    assert [score["label"] for score in report["scores"]] == sorted(STRENGTHS, key=STRENGTHS.get, reverse=True)
