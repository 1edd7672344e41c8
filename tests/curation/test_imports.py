"""Imports of public datasets and answers: exact counts, whole file or nothing, line numbers."""

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

DATA = settings.BASE_DIR.parent / "shared" / "data"
needs_public_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (the public datasets) is absent")

URS_SAMPLE = (
    "\ufeffquestion,reference_ans,user_intent,language\r\n"
    'What is 2+2?,"Four.\nIt is arithmetic.",Factual_QA,EN\r\n'
    "写一首诗,春风,Seek_Creativity,CN\r\n"
    "Call my API,Use requests.,API,EN\r\n"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def import_file(path: Path, fmt: str, name: str) -> str:
    out = io.StringIO()
    call_command("import_dataset", str(path), "--format", fmt, "--name", name, stdout=out)
    return out.getvalue()


def test_urs_sample_imports_with_intents_languages_and_multiline_text(tmp_path):
    output = import_file(write(tmp_path, "urs.csv", URS_SAMPLE), "urs", "urs-small")
    assert output.strip() == "Imported 3 items into dataset 'urs-small'."
    dataset = Dataset.objects.get(name="urs-small")
    assert dataset.source == "urs" and dataset.frozen_at is not None
    rows = list(dataset.items.order_by("external_id").values_list("external_id", "intent", "language", "reference"))
    assert rows == [
        ("0001", "factual_qa", "en", "Four.\nIt is arithmetic."),
        ("0002", "seek_creativity", "zh", "春风"),
        ("0003", "api", "en", "Use requests."),
    ]


@pytest.mark.parametrize(
    "text,message",
    [
        ("q,a\r\nx,y\r\n", "line 1: expected the header question,reference_ans,user_intent,language, found q,a"),
        (URS_SAMPLE + "Bad row,x,Chit_Chat,EN\r\n", "line 6: unknown user_intent 'Chit_Chat'"),
        (URS_SAMPLE + "Bad row,x,Leisure,FR\r\n", "line 6: unknown language 'FR'; expected EN or CN"),
        (URS_SAMPLE + ",x,Leisure,EN\r\n", "line 6: expected a non-empty text in 'question'"),
        (URS_SAMPLE + "too,few\r\n", "line 6: expected 4 columns"),
    ],
)
def test_bad_urs_file_is_rejected_whole_with_the_line(tmp_path, text, message):
    with pytest.raises(CommandError) as error:
        import_file(write(tmp_path, "bad.csv", text), "urs", "bad")
    assert str(error.value).startswith("Nothing imported. ")
    assert message in str(error.value)
    assert Dataset.objects.count() == 0 and Item.objects.count() == 0


def test_bad_jsonl_names_the_line(tmp_path):
    good = json.dumps(
        {"question_id": 1, "category": "数学计算", "subcategory": "x", "question": "1+1", "reference": "2"}
    )
    path = write(tmp_path, "ab.jsonl", good + "\n{not json\n")
    with pytest.raises(CommandError, match=r"Nothing imported. line 2: expected one JSON object per line"):
        import_file(path, "alignbench", "ab")
    path = write(tmp_path, "ab2.jsonl", good + "\n" + good + "\n")
    with pytest.raises(CommandError, match=r"line 2: question_id 1 appears twice"):
        import_file(path, "alignbench", "ab")
    path = write(tmp_path, "ab3.jsonl", json.dumps({"question_id": 2, "question": "x"}) + "\n")
    with pytest.raises(CommandError, match=r"line 1: missing field\(s\) category, subcategory, reference"):
        import_file(path, "alignbench", "ab")
    assert Dataset.objects.count() == 0


def test_a_taken_name_and_a_missing_file_are_refused(tmp_path):
    DatasetFactory(name="taken")
    with pytest.raises(
        CommandError, match="A dataset named 'taken' exists already in this workspace; choose another name."
    ):
        import_file(write(tmp_path, "urs.csv", URS_SAMPLE), "urs", "taken")
    with pytest.raises(CommandError, match="No such file"):
        import_file(tmp_path / "missing.csv", "urs", "new")
    assert Item.objects.count() == 0


def test_answers_match_by_question_or_id_and_refuse_bad_lines_whole(tmp_path):
    dataset = DatasetFactory(name="d")
    first = ItemFactory(dataset=dataset, external_id="7", question="Q one")
    ItemFactory(dataset=dataset, external_id="8", question="Q two")
    lines = [{"instruction": "Q one", "response": "A1"}, {"question_id": 8, "response": "A2"}]
    path = write(tmp_path, "a.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    out = io.StringIO()
    call_command("import_answers", str(path), "--dataset", "d", "--model", "m1", stdout=out)
    assert out.getvalue().strip() == "Imported 2 answers of 'm1' to dataset 'd'."
    assert Answer.objects.get(item=first).text == "A1"

    with pytest.raises(CommandError, match="line 1: 'm1' already has an answer to this item."):
        call_command("import_answers", str(path), "--dataset", "d", "--model", "m1")

    cases = {
        "unknown.jsonl": (
            [{"question": "Q one", "response": "x"}, {"question": "Nope", "response": "y"}],
            "line 2: no item of 'd' matches its question text.",
        ),
        "twice.jsonl": (
            [{"question": "Q two", "response": "x"}, {"question_id": "8", "response": "y"}],
            "line 2: answers the same item as line 1.",
        ),
        "noresp.jsonl": ([{"question": "Q two"}], "line 1: expected a text field 'response'"),
    }
    for name, (rows, message) in cases.items():
        path = write(tmp_path, name, "\n".join(json.dumps(row) for row in rows) + "\n")
        with pytest.raises(CommandError) as error:
            call_command("import_answers", str(path), "--dataset", "d", "--model", "m2")
        assert message in str(error.value)
    assert Answer.objects.filter(model__name="m2").count() == 0
    with pytest.raises(CommandError, match="No dataset named 'nope'."):
        call_command("import_answers", str(path), "--dataset", "nope", "--model", "m2")


@needs_public_data
def test_urs_public_file_gives_the_papers_counts():
    import_file(DATA / "urs" / "data_all.csv", "urs", "urs")
    items = Item.objects.filter(dataset__name="urs")
    assert items.count() == 1846
    by_language = Counter(items.values_list("language", flat=True))
    assert by_language == {"en": 1014, "zh": 832}
    by_intent = Counter(items.values_list("intent", flat=True))
    assert by_intent == {
        "factual_qa": 573,
        "solve_professional_problem": 500,
        "ask_for_advice": 269,
        "seek_creativity": 193,
        "leisure": 159,
        "text_assistant": 124,
        "api": 28,
    }
    # URS Table 2 (English, Chinese), where the paper folds API into Solve Problem.
    folded = Counter(
        ("solve_professional_problem" if intent == "api" else intent, language)
        for intent, language in items.values_list("intent", "language")
    )
    table_2 = {
        "factual_qa": (374, 199),
        "solve_professional_problem": (180, 348),
        "text_assistant": (81, 43),
        "ask_for_advice": (175, 94),
        "seek_creativity": (121, 72),
        "leisure": (83, 76),
    }
    assert {intent: (folded[intent, "en"], folded[intent, "zh"]) for intent in table_2} == table_2


@needs_public_data
def test_alignbench_public_file_gives_683_items_in_8_categories():
    import_file(DATA / "alignbench" / "data_v1.1_release.jsonl", "alignbench", "ab")
    items = Item.objects.filter(dataset__name="ab")
    assert items.count() == 683
    assert Counter(items.values_list("category", flat=True)) == {
        "专业能力": 124,
        "角色扮演": 116,
        "数学计算": 112,
        "逻辑推理": 92,
        "文本写作": 75,
        "基本任务": 68,
        "中文理解": 58,
        "综合问答": 38,
    }


@needs_public_data
def test_chinese_alpaca_eval_gives_795_instructions_and_795_answers_per_model():
    import_file(DATA / "chinese_alpaca_eval" / "chinese_alpaca_eval.jsonl", "alpacaeval", "cae")
    assert Item.objects.filter(dataset__name="cae").count() == 795
    for model in ("gpt-4-0613", "gpt-3.5-turbo-0613", "text-davinci-003"):
        path = DATA / "chinese_alpaca_eval" / "model_outputs" / f"{model}.jsonl"
        call_command("import_answers", str(path), "--dataset", "cae", "--model", model, stdout=io.StringIO())
        assert Answer.objects.filter(model=CandidateModel.objects.get(name=model)).count() == 795
