"""Arena-Hard-Auto v0.1 as the fourth benchmark: its files import as they are, its judge is asked
as arena-hard-v0.1.yaml says, its verdicts are counted as battles and its leaderboard is shown in
its own layout; its scoring maths checked against the general fit and the published leaderboard."""

import ast
import csv
import json
import math
from importlib import import_module
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from core.import_checks import FormatError
from curation.models import Dataset
from judging.benchmarks.arena_hard import (
    BASELINE,
    JUDGE_SYSTEM,
    USER_TEMPLATE,
    _yaml_prompt_template,
    read_answers,
    read_questions,
)
from judging.benchmarks.registry import benchmarks
from judging.models import Answer, JudgeRun
from judging.papers.arena_scores import Battle, arena_scores, battle_of, style_controlled
from judging.papers.tables import arena_lines
from judging.prompts.building import fill
from judging.results.figures import run_figures_refresh
from stats.logistic import fit_logistic

pytestmark = pytest.mark.django_db

SHARED = Path(settings.BASE_DIR).parent / "shared"
DATA = SHARED / "data" / "arena_hard"
PEERS = SHARED / "peers" / "arena-hard-auto"


def needs(path: Path):
    return pytest.mark.skipif(not path.exists(), reason=f"{path} is not on this machine")


def jsonl(rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def answer_line(uid: str, model: str, text: str) -> dict:
    return {
        "uid": uid,
        "ans_id": f"a-{uid}",
        "model": model,
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": {"answer": text}}],
        "tstamp": 1.0,
    }


QUESTIONS = [
    {"uid": "q1", "category": "arena-hard-v0.1", "cluster": "Math", "prompt": "What is 2 + 2?"},
    {"uid": "q2", "category": "arena-hard-v0.1", "cluster": "Code", "prompt": "Write hello world in C."},
    {"uid": "q3", "category": "arena-hard-v0.1", "cluster": "Chat", "prompt": "Say something, a tie please."},
]


@pytest.fixture
def small_arena(tmp_path):
    """A folder of the benchmark's own layout: question.jsonl and model_answer/<model>.jsonl."""
    folder = tmp_path / "arena"
    (folder / "model_answer").mkdir(parents=True)
    (folder / "question.jsonl").write_text(jsonl(QUESTIONS), encoding="utf-8")
    for model, prefix in ((BASELINE, "Baseline says"), ("mine", "Mine says")):
        rows = [answer_line(q["uid"], model, f"{prefix}: {q['prompt']}") for q in QUESTIONS]
        (folder / "model_answer" / f"{model}.jsonl").write_text(jsonl(rows), encoding="utf-8")
    return folder


# ---- Its files, as they are ------------------------------------------------------------------------


def test_its_questions_and_answers_import_as_they_are(small_arena):
    call_command(
        "import_dataset",
        str(small_arena / "question.jsonl"),
        "--format",
        "arena_hard",
        "--name",
        "ah",
        stdout=StringIO(),
    )
    dataset = Dataset.objects.get(name="ah")
    assert dataset.source == "arena_hard"
    items = list(dataset.items.order_by("external_id").values_list("external_id", "question", "category", "language"))
    assert items == [
        ("q1", "What is 2 + 2?", "Math", "en"),
        ("q2", "Write hello world in C.", "Code", "en"),
        ("q3", "Say something, a tie please.", "Chat", "en"),
    ]
    call_command(
        "import_answers",
        str(small_arena / "model_answer" / "mine.jsonl"),
        "--dataset",
        "ah",
        "--model",
        "mine",
        stdout=StringIO(),
    )
    assert sorted(Answer.objects.values_list("item__external_id", "text")) == [
        ("q1", "Mine says: What is 2 + 2?"),
        ("q2", "Mine says: Write hello world in C."),
        ("q3", "Mine says: Say something, a tie please."),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"uid": "q1"}, "line 1: expected the field 'prompt'"),
        ({"uid": "q1", "prompt": ""}, "line 1: expected a non-empty text in 'prompt'"),
        ({"prompt": "q"}, "line 1: expected the field 'uid'"),
    ],
)
def test_a_bad_question_line_is_named(line, message):
    with pytest.raises(FormatError, match=message):
        read_questions([json.dumps(line)])


def test_an_answer_without_the_assistants_reply_is_named():
    line = {"uid": "q1", "model": "m", "messages": [{"role": "user", "content": "q"}]}
    with pytest.raises(FormatError, match="line 1: expected the last message to be the assistant's"):
        read_answers([json.dumps(line)])


@needs(DATA / "question.jsonl")
def test_the_published_files_read_whole():
    with (DATA / "question.jsonl").open("rb") as stream:
        questions = read_questions(stream)
    assert len(questions) == 500 and len({q.external_id for q in questions}) == 500
    for model in ("gpt-4-0314", "gpt-4-0613", "gpt-3.5-turbo-0125"):
        with (DATA / "model_answer" / f"{model}.jsonl").open("rb") as stream:
            answers = read_answers(stream)
        assert len(answers) == 500 and {a.question_id for a in answers} == {q.external_id for q in questions}


# ---- Its judge, as published ------------------------------------------------------------------------


@needs(DATA / "arena-hard-v0.1.yaml")
def test_the_user_template_is_the_published_one():
    published = _yaml_prompt_template((DATA / "arena-hard-v0.1.yaml").read_text(encoding="utf-8"))
    assert published == USER_TEMPLATE


@needs(PEERS / "utils" / "judge_utils.py")
def test_the_system_prompt_is_the_published_one():
    tree = ast.parse((PEERS / "utils" / "judge_utils.py").read_text(encoding="utf-8"))
    values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id.isupper()
        and isinstance(node.value, ast.Constant)
    }
    assert values["OG_ARENA_HARD_PROMPT"] == JUDGE_SYSTEM


def test_the_migration_seeds_the_same_template():
    migration = import_module("judging.migrations.0014_arena_hard_template")
    assert (migration.NAME, migration.TEXT) == ("arena_hard/pairwise/en", USER_TEMPLATE)


# ---- Its maths -------------------------------------------------------------------------------------


def test_a_significant_win_counts_three_times_and_a_tie_half_each_way():
    battles = [
        battle_of(model="m", outcome="win", strength=2),
        battle_of(model="m", outcome="lose", strength=1),
        battle_of(model="m", outcome="tie", strength=1),
    ]
    assert [(b.winner, b.weight) for b in battles] == [("model", 3), ("baseline", 1), ("tie", 1)]
    assert battle_of(model="m", outcome="error", strength=1) is None
    score, _low, _high = arena_scores(battles, baseline="base", rounds=10)["m"]
    assert score == pytest.approx(100 * (3 + 0.5) / 5)


def test_the_score_is_the_bradley_terry_fit_of_the_battles():
    """Arena fits BT by an unpenalised logistic regression on the battles written twice (a tie
    once each way); with the baseline in every battle its maximum is the weighted win share."""
    rng = np.random.default_rng(5)
    battles = []
    for model, p in (("m1", 0.7), ("m2", 0.35), ("m3", 0.5)):
        for _ in range(120):
            draw = rng.random()
            outcome = "win" if draw < p * 0.8 else "tie" if draw < p else "lose"
            battles.append(battle_of(model=model, outcome=outcome, strength=int(rng.integers(1, 3))))
    scores = arena_scores(battles, baseline="base", rounds=20)
    models = ["base", "m1", "m2", "m3"]
    rows, y = [], []
    for battle in battles:
        for _copy in range(battle.weight):
            x = np.zeros(len(models))
            x[0], x[models.index(battle.model)] = math.log(10), -math.log(10)
            for outcome in (1.0, 0.0) if battle.winner == "tie" else (1.0 * (battle.winner == "baseline"),) * 2:
                rows.append(x)
                y.append(outcome)
    design = np.array(rows)[:, 1:]  # the baseline's strength fixed at 0
    fitted = fit_logistic(design, np.array(y))
    for index, model in enumerate(models[1:]):
        win_rate = 100 / (1 + 10 ** -fitted.coef[index])
        assert scores[model][0] == pytest.approx(win_rate, abs=1e-6)
        assert scores[model][1] < scores[model][0] < scores[model][2]


def test_style_control_keeps_the_baseline_at_fifty_and_moves_a_model_that_wins_by_length():
    battles, features = [], {}
    for item in range(60):
        long_wins = item % 3 != 0
        battles.append(Battle(model="long", winner="model" if long_wins else "baseline", weight=1, item=item))
        battles.append(Battle(model="short", winner="tie", weight=1, item=item))
        features[("base", item)] = {"length": 100 + item, "headers": 0, "list_items": 1, "bold": 0}
        features[("long", item)] = {"length": 400 + 10 * item, "headers": 2, "list_items": 4, "bold": item % 2}
        features[("short", item)] = {"length": 90 + item, "headers": 0, "list_items": 1, "bold": 0}
    plain = arena_scores(battles, baseline="base", rounds=20)
    styled = style_controlled(battles, features, baseline="base", rounds=20)
    assert styled["base"][0] == pytest.approx(50.0)
    assert plain["long"][0] == pytest.approx(100 * 40 / 60)
    # The long answers win; once their length and markdown are accounted for, less so.
    assert styled["long"][0] < plain["long"][0]


@needs(DATA / "leaderboard_20240731.csv")
def test_the_published_intervals_read_back_in_the_leaderboards_layout():
    """The leaderboard of 2024-07-31 prints each interval as (score - q2.5, q97.5 - score); our table
    writes every one of its 60 rows the same way, and the baseline at 50 with no width."""
    with (DATA / "leaderboard_20240731.csv").open(encoding="utf-8") as stream:
        published = list(csv.DictReader(stream))
    assert len(published) == 60
    table = {
        "baseline": BASELINE,
        "length_unit": "tokens",
        "rows": [
            {
                "model": row["model"],
                "score": float(row["score"]),
                "lower": float(row["rating_q025"]),
                "upper": float(row["rating_q975"]),
                "avg_length": float(row["avg_tokens"]),
                "battles": 0,
            }
            for row in published
        ],
    }
    lines = arena_lines(table)
    assert lines[1].split() == ["Model", "Score", "95%", "CI", "Avg.", "#tokens"]
    for line, row in zip(lines[2:], published):
        model, score, *interval, tokens = line.split()
        assert (model, score, " ".join(interval), tokens) == (
            row["model"],
            f"{float(row['score']):.2f}",
            row["CI"],
            str(int(float(row["avg_tokens"]))),
        )
    baseline = next(row for row in published if row["model"] == BASELINE)
    assert (baseline["score"], baseline["CI"]) == ("50.0", "(-0.00, +0.00)")


# ---- End to end --------------------------------------------------------------------------------------


@pytest.fixture
def server(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-arena")
    return fake_llm


def arena_judge(body: dict) -> str:
    """A judge answering in the published verdict format: the tie question a tie; otherwise "mine"
    much better when shown first (A), the baseline slightly better when shown first."""
    prompt = body["messages"][-1]["content"]
    if "a tie please" in prompt:
        return "Both answers are equally good.\n\nMy final verdict is tie: [[A=B]]"
    first = prompt.split("<|The Start of Assistant A's Answer|>\n", 1)[1]
    if first.startswith("Mine says"):
        return "My final verdict is: Assistant A is significantly better: [[A>>B]]"
    return "My final verdict is: Assistant A is slightly better: [[A>B]]"


def test_reproduce_prints_the_leaderboard_in_its_layout(server, tmp_path, small_arena, client_as, researcher):
    server.reply = arena_judge
    out = StringIO()
    call_command(
        "reproduce",
        "--benchmark",
        "arena_hard",
        "--judge-model",
        "judge",
        "--models",
        "mine",
        "--data",
        str(small_arena),
        "--manifest",
        str(tmp_path / "manifest.json"),
        stdout=out,
        stderr=StringIO(),
    )
    text = out.getvalue()
    run = JudgeRun.objects.get()
    assert (run.mode, run.reference_model.name, run.total, run.both_orders) == ("pairwise", BASELINE, 6, True)
    assert [t.name for t in run.templates.all()] == ["arena_hard/pairwise/en"]
    bodies = [body for body in server.requests if body["model"] == "judge"]
    assert len(bodies) == 6
    assert {(body["temperature"], body["max_tokens"]) for body in bodies} == {(0.0, 4096)}
    assert all(body["messages"][0] == {"role": "system", "content": JUDGE_SYSTEM} for body in bodies)
    answers = {(a.item.external_id, a.model.name): a.text for a in Answer.objects.select_related("item", "model")}
    expected = set()
    for question in QUESTIONS:
        mine, base = answers[(question["uid"], "mine")], answers[(question["uid"], BASELINE)]
        for first, second in ((mine, base), (base, mine)):
            expected.add(fill(USER_TEMPLATE, {"question": question["prompt"], "output_1": first, "output_2": second}))
    assert {body["messages"][-1]["content"] for body in bodies} == expected

    # Two questions: won 3 times (A>>B, shown first) and lost once (A>B, shown second); one tie
    # each way: (6 + 0.5 * 2) / 10 = 70 %.
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("Arena-Hard-Auto v0.1 leaderboard"))
    assert lines[start + 1].split() == ["Model", "Score", "95%", "CI", "Avg.", "#characters"]
    mine_row, base_row = lines[start + 2].split(), lines[start + 3].split()
    assert mine_row[:2] == ["mine", "70.00"] and mine_row[-1] == str(
        int(np.mean([len(answers[(q["uid"], "mine")]) for q in QUESTIONS]))
    )
    assert base_row[:4] == [BASELINE, "50.00", "(-0.00,", "+0.00)"]
    assert "Style control (length, headers, list items, bold)" in text
    assert "Lengths in characters: no tokenizer whose encoding ships in its package is installed." in text
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["benchmark"] == "arena_hard"
    assert manifest["judge"]["system_prompt"] == JUDGE_SYSTEM and manifest["judge"]["max_tokens"] == 4096
    rows = {row["model"]: row for row in manifest["table"]["data"]["rows"]}
    assert rows["mine"]["score"] == pytest.approx(70.0) and rows["mine"]["battles"] == 10

    # The run page and the leaderboard export show the same table.
    run_figures_refresh(run_id=run.pk)  # what the background task does once the run closes
    page = client_as(researcher).get(reverse("judging:run-detail", args=[run.pk])).text
    table = page.split('id="benchmark-arena_hard-table"', 1)[1].split("</table>", 1)[0]
    assert "<td>mine</td>" in table and "70.00" in table and "(-0.00, +0.00)" in table
    out = StringIO()
    call_command("export", "--run", str(run.pk), "--what", "leaderboard", "--format", "jsonl", stdout=out)
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    scores = {(row["model"], row["column"]): row["mean"] for row in exported if row["group"] == "arena_hard"}
    assert scores[("mine", "score")] == pytest.approx(70.0) and scores[(BASELINE, "score")] == 50.0
    assert ("mine", "style control") in scores


def test_the_benchmark_is_registered_once_with_every_part():
    benchmark = benchmarks()["arena_hard"]
    assert benchmark.format.name == "arena_hard" and benchmark.battles
    assert benchmark.generation_preset.temperature == 0.0 and benchmark.generation_preset.max_tokens == 4096
    assert [ts.name for ts in benchmark.template_sets] == ["arena_hard"]
