"""Malformed files for import_dataset (urs, alignbench, alpacaeval) and import_answers: each is
refused with a CommandError that names the line and what was expected, never a traceback, and
nothing is written. The same limits hold on SQLite and PostgreSQL (run this file on both)."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.import_checks import MAX_NESTING, MAX_TEXT_CHARS
from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

HEADER = "question,reference_ans,user_intent,language\r\n"
URS_ROWS = [
    "What is 2+2?,Four.,Factual_QA,EN\r\n",
    "写一首诗,春风,Seek_Creativity,CN\r\n",
    "Call my API,Use requests.,API,EN\r\n",
    "Plan a trip,Go by train.,Ask_for_Advice,EN\r\n",
    "Tell a joke,Knock knock.,Leisure,EN\r\n",
]
BIG = 200 * 1024  # 204,800 characters: twice the limit
EXTERNAL_ID_LIMIT = Item._meta.get_field("external_id").max_length
CATEGORY_LIMIT = Item._meta.get_field("category").max_length
SUBCATEGORY_LIMIT = Item._meta.get_field("subcategory").max_length
MODEL_NAME_LIMIT = CandidateModel._meta.get_field("name").max_length
NUL_TAIL = "no database column can hold it"


def urs(*extra: str, bom: bool = True) -> str:
    return ("\ufeff" if bom else "") + HEADER + "".join(URS_ROWS) + "".join(extra)


def alignbench_row(n: int, **fields) -> dict:
    row = {
        "question_id": n,
        "category": "数学计算",
        "subcategory": "初等数学",
        "question": f"{n}+{n}=?",
        "reference": str(2 * n),
        "evidences": [{"url": "https://example.org", "quote": "2"}],
    }
    return {**row, **fields}


def alpaca_row(n: int, **fields) -> dict:
    return {"dataset": "helpful_base", "instruction": f"Say {n}", "instruction_zh": f"说 {n}", **fields}


def jsonl(rows) -> str:
    """Dicts become JSON lines; strings are written as they are (raw, possibly broken, lines)."""
    return "".join((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows)


def put(tmp_path: Path, text: str | bytes, name: str = "input") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def written() -> tuple[int, int, int, int]:
    return Dataset.objects.count(), Item.objects.count(), Answer.objects.count(), CandidateModel.objects.count()


def refused(command: str, path: Path, *args: str) -> str:
    """Run the command, expect it to refuse the file, check nothing was written; the message."""
    before = written()
    with pytest.raises(CommandError) as error:
        call_command(command, str(path), *args, stdout=io.StringIO())
    assert written() == before
    return str(error.value)


def refused_dataset(tmp_path, fmt: str, text: str | bytes) -> str:
    return refused("import_dataset", put(tmp_path, text), "--format", fmt, "--name", "new")


def imported(tmp_path, fmt: str, text: str | bytes) -> Dataset:
    call_command("import_dataset", str(put(tmp_path, text)), "--format", fmt, "--name", "new", stdout=io.StringIO())
    return Dataset.objects.get(name="new")


# ---------------------------------------------------------------- URS CSV


URS_CASES = {
    "200 KB question": (
        urs("x" * BIG + ",ref,Leisure,EN\r\n"),
        f"line 7: field 'question' is {BIG} characters; the limit is 100000",
    ),
    "200 KB reference": (
        urs('q,"' + "y\n" * (BIG // 2) + '",Leisure,EN\r\n'),
        f"line 7: field 'reference_ans' is {BIG} characters; the limit is 100000",
    ),
    "NUL in a field": (
        urs("q,ref\x00erence,Leisure,EN\r\n"),
        f"line 7: field 'reference_ans' contains a NUL character (U+0000) at character 4; {NUL_TAIL}",
    ),
    "header without the language column": (
        "question,reference_ans,user_intent\r\nq,r,Leisure\r\n",
        "line 1: expected the header question,reference_ans,user_intent,language, "
        "found question,reference_ans,user_intent",
    ),
    "short row": (
        urs("only,two\r\n"),
        "line 7: expected 4 columns (question, reference_ans, user_intent, language), found 2",
    ),
    "long row": (
        urs("a,b,Leisure,EN,extra\r\n"),
        "line 7: expected 4 columns (question, reference_ans, user_intent, language), found 5",
    ),
    "quote never closed": (
        urs('"open,b,Leisure,EN\r\n', "c,d,Leisure,EN\r\n"),
        "line 7: not valid CSV (unexpected end of data); the record runs on to line 8",
    ),
    "text after a closing quote": (urs('"q"x,b,Leisure,EN\r\n'), "line 7: not valid CSV (',' expected after '\"')"),
    "empty file": ("", "line 1: expected the header question,reference_ans,user_intent,language, found nothing"),
    "header only": (HEADER, "line 1: the file has a header but no rows"),
}


@pytest.mark.parametrize("case", URS_CASES)
def test_bad_urs_csv_is_refused_with_its_line(tmp_path, case):
    text, message = URS_CASES[case]
    assert refused_dataset(tmp_path, "urs", text) == f"Nothing imported. {message}"


NOT_UTF8 = {
    # In GBK 写 is D0 B4 and 一 is D2 BB, both also valid UTF-8 (U+0434, U+04BB); 首 is CA D7,
    # which is not: the third character.
    "GBK": (
        ("\ufeff" + HEADER).encode() + "写一首诗,春风,Seek_Creativity,CN\r\n".encode("gbk"),
        "line 2: not UTF-8 (byte 0xca at column 3)",
    ),
    "UTF-16 with BOM": (
        urs(bom=False).encode("utf-16"),
        "line 1: not UTF-8 (byte 0xff at column 1); the file looks like UTF-16",
    ),
    "UTF-16 without BOM": (
        urs(bom=False).encode("utf-16-le"),
        "line 1: not UTF-8 (byte 0x00 at column 2); the file looks like UTF-16 or UTF-32",
    ),
    "UTF-16 big-endian without BOM": (
        urs(bom=False).encode("utf-16-be"),
        "line 1: not UTF-8 (byte 0x00 at column 1); the file looks like UTF-16 or UTF-32",
    ),
    # Latin-1 é in line 4, after four characters of which two are Chinese (six bytes): the column counts characters.
    "one Latin-1 byte": (
        urs().encode().replace(b"Use requests.", "写诗 ".encode() + b"\xe9"),
        "line 4: not UTF-8 (byte 0xe9 at column 16)",
    ),
}


@pytest.mark.parametrize("case", NOT_UTF8)
def test_a_file_that_is_not_utf8_is_refused_at_the_bad_byte(tmp_path, case):
    data, message = NOT_UTF8[case]
    assert refused_dataset(tmp_path, "urs", data) == f"Nothing imported. {message}"


def test_utf8_with_and_without_bom_and_blank_lines_import(tmp_path):
    """Blank lines are skipped, never counted as items, and later lines keep their numbers."""
    dataset = imported(tmp_path, "urs", urs("\r\n", "\r\n", "Last one,r,Leisure,EN\r\n"))
    assert list(dataset.items.order_by("external_id").values_list("external_id", flat=True)) == [
        "0001",
        "0002",
        "0003",
        "0004",
        "0005",
        "0006",
    ]
    assert dataset.items.get(external_id="0006").question == "Last one"
    Dataset.objects.all().delete()
    assert imported(tmp_path, "urs", urs(bom=False)).items.count() == 5
    Dataset.objects.all().delete()
    message = refused_dataset(tmp_path, "urs", urs("\r\n", "\r\n", "bad,r,Chit_Chat,EN\r\n"))
    assert message == (
        "Nothing imported. line 9: unknown user_intent 'Chit_Chat'; expected one of Factual_QA, "
        "Solve_Professional_Problem, API, Text_Assistant, Ask_for_Advice, Seek_Creativity, Leisure"
    )


def test_a_question_at_the_limit_imports_and_one_over_it_does_not(tmp_path):
    dataset = imported(tmp_path, "urs", urs("z" * MAX_TEXT_CHARS + ",r,Leisure,EN\r\n"))
    assert len(dataset.items.get(external_id="0006").question) == MAX_TEXT_CHARS
    message = refused(
        "import_dataset",
        put(tmp_path, urs("z" * (MAX_TEXT_CHARS + 1) + ",r,Leisure,EN\r\n")),
        "--format",
        "urs",
        "--name",
        "other",
    )
    assert message == "Nothing imported. line 7: field 'question' is 100001 characters; the limit is 100000"


# ---------------------------------------------------------------- AlignBench and ChineseAlpacaEval JSONL


def alignbench(*rows) -> str:
    return jsonl([alignbench_row(n) for n in range(1, 7)] + list(rows))


ALIGNBENCH_CASES = {
    "200 KB question": (
        alignbench(alignbench_row(7, question="问" * BIG)),
        f"line 7: field 'question' is {BIG} characters; the limit is 100000",
    ),
    "200 KB reference": (
        alignbench(alignbench_row(7, reference="答" * BIG)),
        f"line 7: field 'reference' is {BIG} characters; the limit is 100000",
    ),
    "NaN": (
        alignbench('{"question_id": 7, "category": "a", "subcategory": "b", "question": "q", "reference": NaN}'),
        "line 7: NaN is not a number JSON allows; expected a finite number or null",
    ),
    "Infinity": (
        alignbench('{"question_id": Infinity, "category": "a", "subcategory": "b", "question": "q", "reference": ""}'),
        "line 7: Infinity is not a number JSON allows; expected a finite number or null",
    ),
    "-Infinity in evidences": (
        alignbench(
            '{"question_id": 7, "category": "a", "subcategory": "b", "question": "q", "reference": "", '
            '"evidences": [-Infinity]}'
        ),
        "line 7: -Infinity is not a number JSON allows; expected a finite number or null",
    ),
    "a float beyond range": (
        alignbench(jsonl([alignbench_row(7)]).strip().replace('"evidences": [', '"evidences": [1e999, ')),
        "line 7: the number 1e999 is beyond the range of a float",
    ),
    "a 5000-digit number": (
        alignbench(jsonl([alignbench_row(7)]).strip().replace('"question_id": 7', '"question_id": ' + "9" * 5000)),
        "line 7: a number of 5000 characters; the limit is 100",
    ),
    "nesting 11 deep": (
        alignbench(jsonl([alignbench_row(7, evidences=json.loads("[" * 10 + "]" * 10))]).strip()),
        f"line 7: nesting deeper than {MAX_NESTING} levels of objects and lists (at column 125)",
    ),
    "nesting 100,000 deep (RecursionError before)": (
        alignbench('{"question_id": 7, "evidences": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        f"line 7: nesting deeper than {MAX_NESTING} levels of objects and lists (at column 42)",
    ),
    "escaped NUL in the question": (
        alignbench(alignbench_row(7, question="ab\x00c")),
        f"line 7: field 'question' contains a NUL character (U+0000) at character 3; {NUL_TAIL}",
    ),
    "escaped NUL deep in evidences": (
        alignbench(alignbench_row(7, evidences=[{"quote": "\x00"}])),
        f"line 7: field 'evidences' contains a NUL character (U+0000) at character 1; {NUL_TAIL}",
    ),
    "raw NUL byte in the question": (
        alignbench(jsonl([alignbench_row(7, question="ab@c")]).strip().replace("@", "\x00")),
        f"line 7: field 'question' contains a NUL character (U+0000) at character 3; {NUL_TAIL}",
    ),
    "raw NUL byte between fields": (
        alignbench(jsonl([alignbench_row(7)]).strip().replace(", ", ",\x00", 1)),
        "line 7: a NUL character (U+0000) at column 19; JSON text cannot hold one",
    ),
    "unpaired surrogate": (
        alignbench(jsonl([alignbench_row(7, question="ab@")]).strip().replace("@", "\\ud800")),
        "line 7: field 'question' contains an unpaired surrogate (U+D800) at character 3; it is not Unicode text",
    ),
    "question_id longer than its column": (
        alignbench(alignbench_row("q" * (EXTERNAL_ID_LIMIT + 1))),
        f"line 7: field 'question_id' is {EXTERNAL_ID_LIMIT + 1} characters; the limit is {EXTERNAL_ID_LIMIT}",
    ),
    "category longer than its column": (
        alignbench(alignbench_row(7, category="类" * (CATEGORY_LIMIT + 1))),
        f"line 7: field 'category' is {CATEGORY_LIMIT + 1} characters; the limit is {CATEGORY_LIMIT}",
    ),
    "subcategory longer than its column": (
        alignbench(alignbench_row(7, subcategory="s" * (SUBCATEGORY_LIMIT + 1))),
        f"line 7: field 'subcategory' is {SUBCATEGORY_LIMIT + 1} characters; the limit is {SUBCATEGORY_LIMIT}",
    ),
    "question_id a list": (
        alignbench(alignbench_row([7])),
        "line 7: expected question_id to be a number or text, found a list",
    ),
    "question_id true": (
        alignbench(alignbench_row(True)),
        "line 7: expected question_id to be a number or text, found true",
    ),
    "question a number": (
        alignbench(alignbench_row(7, question=7)),
        "line 7: expected a non-empty text in 'question', found the number 7",
    ),
    "reference an object": (
        alignbench(alignbench_row(7, reference={"text": "x"})),
        "line 7: expected a text in 'reference', found an object",
    ),
    "a line that is a list": (alignbench("[7]"), "line 7: expected a JSON object, found a list"),
    "a line that is a string": (alignbench('"question"'), "line 7: expected a JSON object, found 'question'"),
    "a line that is null": (alignbench("null"), "line 7: expected a JSON object, found null"),
    "a key twice": (
        alignbench(
            jsonl([alignbench_row(7)]).strip().replace('{"question_id": 7', '{"question_id": 7, "question_id": 8')
        ),
        "line 7: field 'question_id' appears twice in one object",
    ),
    "broken JSON": (
        alignbench('{"question_id": 7,'),
        "line 7: expected one JSON object per line (Expecting property name enclosed in double quotes at column 19)",
    ),
    "a raw tab in a string": (
        alignbench(jsonl([alignbench_row(7, question="a@b")]).strip().replace("@", "\t")),
        "line 7: expected one JSON object per line (Invalid control character at column 77)",
    ),
    "UTF-16 with BOM": (
        alignbench().encode("utf-16"),
        "line 1: not UTF-8 (byte 0xff at column 1); the file looks like UTF-16",
    ),
    "UTF-16 without BOM": (
        alignbench().encode("utf-16-le"),
        "line 1: not UTF-8 (byte 0x00 at column 2); the file looks like UTF-16 or UTF-32",
    ),
    "GBK": (alignbench(alignbench_row(7)).encode("gbk"), "line 1: not UTF-8 (byte 0xca at column 33)"),
    "no rows, only blank lines": ("\n \n\t\n", "line 1: the file has no rows"),
}


@pytest.mark.parametrize("case", ALIGNBENCH_CASES)
def test_bad_alignbench_jsonl_is_refused_with_its_line(tmp_path, case):
    text, message = ALIGNBENCH_CASES[case]
    assert refused_dataset(tmp_path, "alignbench", text) == f"Nothing imported. {message}"


def test_alignbench_blank_lines_are_skipped_and_limits_at_the_edge_import(tmp_path):
    longest = alignbench_row(
        "i" * EXTERNAL_ID_LIMIT,
        category="c" * CATEGORY_LIMIT,
        subcategory=None,
        reference=None,
        evidences=json.loads("[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)),
    )
    dataset = imported(tmp_path, "alignbench", "\n" + alignbench("   ", longest))
    assert dataset.items.count() == 7
    item = dataset.items.get(external_id="i" * EXTERNAL_ID_LIMIT)
    assert (item.category, item.subcategory, item.reference) == ("c" * CATEGORY_LIMIT, "", "")
    assert dataset.items.get(external_id="3").metadata == {
        "question_id": 3,
        "evidences": [{"url": "https://example.org", "quote": "2"}],
    }


ALPACA_CASES = {
    "200 KB instruction_zh": (
        jsonl([alpaca_row(1), alpaca_row(2, instruction_zh="长" * BIG)]),
        f"line 2: field 'instruction_zh' is {BIG} characters; the limit is 100000",
    ),
    "200 KB instruction": (
        jsonl([alpaca_row(1, instruction="l" * BIG)]),
        f"line 1: field 'instruction' is {BIG} characters; the limit is 100000",
    ),
    "dataset longer than the category column": (
        jsonl([alpaca_row(1, dataset="d" * (CATEGORY_LIMIT + 1))]),
        f"line 1: field 'dataset' is {CATEGORY_LIMIT + 1} characters; the limit is {CATEGORY_LIMIT}",
    ),
    "dataset a list": (
        jsonl([alpaca_row(1, dataset=["x"])]),
        "line 1: expected a non-empty text in 'dataset', found a list",
    ),
    "missing field": (jsonl([{"dataset": "x", "instruction": "y"}]), "line 1: missing field(s) instruction_zh"),
    "NaN": (
        jsonl([alpaca_row(1), '{"dataset": NaN}']),
        "line 2: NaN is not a number JSON allows; expected a finite number or null",
    ),
    "NUL": (
        jsonl([alpaca_row(1, instruction="a\x00")]),
        f"line 1: field 'instruction' contains a NUL character (U+0000) at character 2; {NUL_TAIL}",
    ),
}


@pytest.mark.parametrize("case", ALPACA_CASES)
def test_bad_alpacaeval_jsonl_is_refused_with_its_line(tmp_path, case):
    text, message = ALPACA_CASES[case]
    assert refused_dataset(tmp_path, "alpacaeval", text) == f"Nothing imported. {message}"


def test_a_dataset_name_longer_than_its_column_is_refused(tmp_path):
    limit = Dataset._meta.get_field("name").max_length
    message = refused("import_dataset", put(tmp_path, urs()), "--format", "urs", "--name", "n" * (limit + 1))
    assert message == f"The dataset name is {limit + 1} characters; the limit is {limit}."


def test_a_folder_instead_of_a_file_is_a_clear_error(tmp_path):
    message = refused("import_dataset", tmp_path, "--format", "urs", "--name", "x")
    assert message == f"Cannot read {tmp_path}: Is a directory"


# ---------------------------------------------------------------- answers


@pytest.fixture
def answer_dataset():
    dataset = DatasetFactory(name="d")
    for n in range(1, 8):
        ItemFactory(dataset=dataset, external_id=str(n), question=f"Question {n}")
    return dataset


def answers(*rows) -> str:
    return jsonl([{"question_id": n, "response": f"Answer {n}"} for n in range(1, 7)] + list(rows))


ANSWER_CASES = {
    "200 KB response": (
        answers({"question_id": 7, "response": "r" * BIG}),
        f"line 7: field 'response' is {BIG} characters; the limit is 100000",
    ),
    "200 KB question": (
        answers({"question": "q" * BIG, "response": "r"}),
        f"line 7: field 'question' is {BIG} characters; the limit is 100000",
    ),
    "response a number": (
        answers({"question_id": 7, "response": 3}),
        "line 7: expected a text field 'response', found the number 3",
    ),
    "response null": (
        answers({"question_id": 7, "response": None}),
        "line 7: expected a text field 'response', found null",
    ),
    "question_id longer than its column": (
        answers({"question_id": "7" * (EXTERNAL_ID_LIMIT + 1), "response": "r"}),
        f"line 7: field 'question_id' is {EXTERNAL_ID_LIMIT + 1} characters; the limit is {EXTERNAL_ID_LIMIT}",
    ),
    "question_id an object": (
        answers({"question_id": {"id": 7}, "response": "r"}),
        "line 7: expected question_id to be a number or text, found an object",
    ),
    "instruction a list": (
        answers({"instruction": ["Question 7"], "response": "r"}),
        "line 7: expected a non-empty text in 'instruction', found a list",
    ),
    "Infinity": (
        answers('{"question_id": 7, "response": "r", "tokens": Infinity}'),
        "line 7: Infinity is not a number JSON allows; expected a finite number or null",
    ),
    "nesting": (
        answers('{"question_id": 7, "response": "r", "extra": ' + '{"a": ' * 20 + "1" + "}" * 20 + "}"),
        f"line 7: nesting deeper than {MAX_NESTING} levels of objects and lists (at column 100)",
    ),
    "NUL in the response": (
        answers({"question_id": 7, "response": "ok\x00"}),
        f"line 7: field 'response' contains a NUL character (U+0000) at character 3; {NUL_TAIL}",
    ),
    "not an object": (answers("7"), "line 7: expected a JSON object, found the number 7"),
    "GBK": (
        answers({"question_id": 7, "response": "中文"}).encode("gbk"),
        "line 7: not UTF-8 (byte 0xd6 at column 33)",
    ),
    "UTF-16 without BOM": (
        answers().encode("utf-16-le"),
        "line 1: not UTF-8 (byte 0x00 at column 2); the file looks like UTF-16 or UTF-32",
    ),
}


@pytest.mark.parametrize("case", ANSWER_CASES)
def test_bad_answers_are_refused_with_their_line(tmp_path, answer_dataset, case):
    text, message = ANSWER_CASES[case]
    assert (
        refused("import_answers", put(tmp_path, text), "--dataset", "d", "--model", "m")
        == f"Nothing imported. {message}"
    )


def test_answers_skip_blank_lines_and_a_long_model_name_is_refused(tmp_path, answer_dataset):
    path = put(tmp_path, "\n" + answers("", {"question": "Question 7", "response": ""}))
    out = io.StringIO()
    call_command("import_answers", str(path), "--dataset", "d", "--model", "m", stdout=out)
    assert out.getvalue().strip() == "Imported 7 answers of 'm' to dataset 'd'."
    assert Answer.objects.get(item__external_id="7").text == ""
    too_long = "m" * (MODEL_NAME_LIMIT + 1)
    message = refused("import_answers", path, "--dataset", "d", "--model", too_long)
    assert message == f"The model name is {MODEL_NAME_LIMIT + 1} characters; the limit is {MODEL_NAME_LIMIT}."


# ---------------------------------------------------------------- the public files, damaged

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_public_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (the public datasets) is absent")


@needs_public_data
@pytest.mark.parametrize(
    "damage,message",
    [
        (b"\xd6\xd0", "not UTF-8 (byte 0xd6 at column {column})"),  # 中 in GBK
        (b"\x00", "field 'question' contains a NUL character (U+0000) at character {column}; " + NUL_TAIL),
    ],
)
def test_the_urs_csv_damaged_deep_inside_names_its_physical_line(tmp_path, damage, message):
    """1,846 records over more lines than that (answers span lines): the line is the file's own."""
    data = (DATA / "urs" / "data_all.csv").read_bytes()
    marker = b"\r\n"  # the file ends records with CRLF; line breaks inside its cells are bare LF
    offset = 0
    for _ in range(1500):  # the start of some record far into the file, after multi-line ones
        offset = data.index(marker, offset) + len(marker)
    while data[offset : offset + 1] == b'"':  # a quoted question: damage its first character inside the quote
        offset += 1
    line = data[:offset].count(b"\n") + 1
    column = len(data[data.rindex(b"\n", 0, offset) + 1 : offset].decode()) + 1
    assert line > 20_000  # far beyond the record number
    text = refused_dataset(tmp_path, "urs", data[:offset] + damage + data[offset:])
    assert text == f"Nothing imported. line {line}: " + message.format(column=column)
    assert Item.objects.count() == 0
