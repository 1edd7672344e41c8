"""Fuzzing the parse-and-validate layers of the three importers (import_dataset in its three
formats, import_answers, import_votes) with mutated small valid files.

For about three seconds per importer (and never fewer than MIN_CASES inputs), seeded inputs are
made by stacking random mutations on a valid file: byte flips, insertions and deletions,
truncation, duplicated and swapped lines, deep nesting, huge and non-finite numbers, NUL and
surrogate escapes, fields replaced by values of the wrong type, over-long fields, and whole
files re-encoded as GBK, UTF-16 or UTF-32. Each input must either be refused with the
importers' own FormatError, whose message starts with "line N: " for a line N of the input, or
be accepted with records the database can store: no NUL or unpaired surrogate anywhere, every
column within its model's max_length, free text within MAX_TEXT_CHARS, metadata that is
strict JSON. Any other exception fails the test with the seed that reproduces it.
"""

import io
import json
import random
import re
import time
from dataclasses import astuple, is_dataclass

import pytest

from annotation.models import Vote
from annotation.vote_format import read_votes
from core.import_checks import MAX_TEXT_CHARS, FormatError
from curation.datasets.importers import item_columns
from curation.models import Item
from judging.answers.imports import read_answers, read_answers_csv
from judging.benchmarks.alignbench import read_alignbench
from judging.benchmarks.chinese_alpaca_eval import read_alpacaeval
from judging.benchmarks.urs import read_urs
from judging.models import CandidateModel

SECONDS_PER_IMPORTER = 3.0
MIN_CASES = 60
ITEM_COLUMNS = item_columns()
VOTE_COLUMNS = {
    "question_id": Item._meta.get_field("external_id").max_length,
    "model": CandidateModel._meta.get_field("name").max_length,
    "annotator": Vote._meta.get_field("annotator_label").max_length,
    "comment": Vote._meta.get_field("comment").max_length,
}

URS = (
    "\ufeffquestion,reference_ans,user_intent,language\r\n"
    'What is 2+2?,"Four.\nIt is ""arithmetic"".",Factual_QA,EN\r\n'
    "写一首诗,春风,Seek_Creativity,CN\r\n"
    "Call my API,Use requests.,API,EN\r\n"
    "\r\n"
    "Plan a trip,,Ask_for_Advice,EN\r\n"
).encode()


def jsonl(rows) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


ALIGNBENCH = jsonl(
    [
        {
            "question_id": n,
            "category": "数学计算",
            "subcategory": "初等数学",
            "question": f"{n} 加 {n} 等于几？",
            "reference": str(2 * n),
            "evidences": [{"url": "https://example.org", "quote": "加法"}] if n % 2 else None,
        }
        for n in range(1, 5)
    ]
)
ALPACAEVAL = jsonl(
    [{"dataset": "helpful_base", "instruction": f"Say {n}", "instruction_zh": f"说 {n}"} for n in range(1, 5)]
)
ANSWERS = jsonl(
    [
        {"question_id": 1, "response": "四"},
        {"instruction": "说 2", "response": "2"},
        {"question": "说 3", "response": ""},
    ]
)
ANSWERS_CSV = 'question_id,question,response\n1,,四\n,说 2,"2, 两"\n,说 3,\n'.encode()
VOTES = jsonl(
    [
        {"question_id": "q1", "model_a": "alpha", "model_b": "beta", "winner": "model_a", "annotator": "h1"},
        {
            "question": "说 2",
            "model_a": "beta",
            "model_b": "gamma",
            "winner": "tie",
            "annotator": 7,
            "comment": "close",
        },
        {"question_id": 3, "model_a": "gamma", "model_b": "alpha", "winner": "cannot_determine", "annotator": "h2"},
    ]
)

WRONG_VALUES = [
    None,
    True,
    0,
    -1,
    3.5,
    10**40,
    "",
    " ",
    "x" * 70,
    "y" * 130,
    "z" * 2100,
    "\x00",
    "a\ud800b",
    [],
    [1, "a"],
    {},
    {"a": {"b": None}},
    "model_a",
    "tie",
    "NaN",
]
TOKENS = [
    b"\x00",
    b"\\u0000",
    b"\\ud800",
    b"\\udc00\\ud800",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e999",
    b"-1e-99999",
    b"\r",
    b"\n",
    b"\r\n",
    b'"',
    b",",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\\",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    "中文".encode(),
    "😀".encode(),
    b"\xe4\xb8",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\t",
    b"\x1f",
]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _json_field_swap(rng: random.Random, data: bytes) -> bytes:
    """Structure-aware: one field of one line gets a value of another type, or goes missing."""
    lines = _lines(data)
    k = rng.randrange(len(lines))
    try:
        row = json.loads(lines[k])
    except (ValueError, RecursionError):  # the helper's own parse of an already broken line
        return data
    if not isinstance(row, dict) or not row:
        return data
    key = rng.choice(sorted(row))
    if rng.random() < 0.2:
        del row[key]
    else:
        row[key] = rng.choice(WRONG_VALUES)
    # With ensure_ascii off, a lone surrogate becomes bytes that are not UTF-8: another bad input.
    lines[k] = json.dumps(row, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass") + b"\n"
    return b"".join(lines)


def _reencode(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", "replace")
    encoding = rng.choice(["gbk", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "big5", "shift_jis"])
    return text.encode(encoding, "replace")


def mutate(rng: random.Random, data: bytes) -> bytes:
    choice = rng.randrange(14)
    position = rng.randrange(len(data) + 1)
    if choice == 0:  # flip bytes
        buffer = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if buffer:
                buffer[rng.randrange(len(buffer))] = rng.randrange(256)
        return bytes(buffer)
    if choice == 1:  # insert random bytes
        return data[:position] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[position:]
    if choice == 2:  # delete a range
        return data[:position] + data[position + rng.randint(1, 40) :]
    if choice == 3:  # truncate
        return data[:position]
    if choice in (4, 5):  # duplicate or swap lines
        lines = _lines(data)
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        if choice == 4:
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines)
    if choice == 6:  # deep nesting
        depth = rng.choice([9, 10, 11, 12, 100, 5000, 60_000])
        opener = rng.choice([b"[", b'{"a":'])
        closer = b"]" if opener == b"[" else b"}"
        return data[:position] + opener * depth + b"1" + closer * depth * rng.randint(0, 1) + data[position:]
    if choice == 7:  # huge or long numbers
        number = rng.choice([b"9" * rng.randint(90, 6000), b"1" + b"0" * 400 + b".5", b"-" + b"7" * 5000, b"1e999"])
        return data[:position] + number + data[position:]
    if choice == 8:  # a token that breaks encodings, JSON, CSV or the database
        return data[:position] + rng.choice(TOKENS) + data[position:]
    if choice == 9:
        return _reencode(rng, data)
    if choice in (10, 11):
        return _json_field_swap(rng, data)
    if choice == 12:  # an over-long field
        filler = rng.choice([b"x", "长".encode(), b"ab"]) * rng.choice([65, 129, 2001, 100_001])
        return data[:position] + filler + data[position:]
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))  # noise


def storable(value, where: str) -> None:
    """Everything an accepted record holds can be stored alike on SQLite and PostgreSQL."""
    if isinstance(value, str):
        assert not re.search("[\x00\ud800-\udfff]", value), where
    elif isinstance(value, dict):
        for key, item in value.items():
            storable(key, where)
            storable(item, where)
    elif isinstance(value, (list, tuple)):
        for item in value:
            storable(item, where)


def check_items(records) -> None:
    for record in records:
        storable(astuple(record), "item")
        assert record.question.strip() and len(record.question) <= MAX_TEXT_CHARS
        assert len(record.reference) <= MAX_TEXT_CHARS
        for column in ("external_id", "category", "subcategory"):
            assert len(getattr(record, column)) <= ITEM_COLUMNS[column], column
        json.dumps(record.metadata, allow_nan=False)


def check_answers(records) -> None:
    for record in records:
        storable(astuple(record), "answer")
        assert len(record.response) <= MAX_TEXT_CHARS
        assert record.question_id is not None or record.question
        assert record.question_id is None or len(record.question_id) <= ITEM_COLUMNS["external_id"]


def check_votes(records) -> None:
    for record in records:
        storable(astuple(record), "vote")
        assert record.winner in ("model_a", "model_b", "tie", "cannot_determine")
        assert record.model_a and record.model_b and record.model_a != record.model_b
        assert max(len(record.model_a), len(record.model_b)) <= VOTE_COLUMNS["model"]
        assert 1 <= len(record.annotator) <= VOTE_COLUMNS["annotator"]
        assert len(record.comment) <= VOTE_COLUMNS["comment"]
        assert record.question_id is not None or record.question


IMPORTERS = {
    "import_dataset": [
        (lambda source: read_urs(source, columns=ITEM_COLUMNS), URS, check_items),
        (lambda source: read_alignbench(source, columns=ITEM_COLUMNS), ALIGNBENCH, check_items),
        (lambda source: read_alpacaeval(source, columns=ITEM_COLUMNS), ALPACAEVAL, check_items),
    ],
    "import_answers": [
        (lambda source: read_answers(source, columns=ITEM_COLUMNS), ANSWERS, check_answers),
        (lambda source: read_answers_csv(source, columns=ITEM_COLUMNS), ANSWERS_CSV, check_answers),
    ],
    "import_votes": [(lambda source: read_votes(source, columns=VOTE_COLUMNS), VOTES, check_votes)],
}


def test_the_valid_seeds_are_accepted():
    for readers in IMPORTERS.values():
        for read, seed, check in readers:
            records = read(io.BytesIO(seed))
            assert records and all(is_dataclass(record) for record in records)
            check(records)


@pytest.mark.parametrize("importer", IMPORTERS)
def test_only_format_errors_with_a_line_number_escape(importer):
    readers = IMPORTERS[importer]
    started = time.monotonic()
    cases = refused = 0
    while cases < MIN_CASES or time.monotonic() - started < SECONDS_PER_IMPORTER:
        seed = f"{importer}:{cases}"
        rng = random.Random(seed)
        read, data, check = readers[cases % len(readers)]
        for _ in range(rng.choice([1, 1, 2, 3, 5])):
            data = mutate(rng, data)
        # Mostly binary, as the commands read files; sometimes already-decoded text lines.
        if rng.random() < 0.8:
            source, line_count = io.BytesIO(data), data.count(b"\n") + 1
        else:
            lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
            source, line_count = lines, len(lines) + 1
        try:
            records = read(source)
        except FormatError as error:
            refused += 1
            assert re.match(r"line \d+: \S", str(error)), (seed, str(error))
            assert 1 <= error.line <= line_count, (seed, str(error), line_count)
        except Exception as error:  # noqa: BLE001 - anything else is the failure this test looks for
            pytest.fail(f"case {seed!r} raised {type(error).__name__}: {error}; input {data[:300]!r}")
        else:
            check(records)
        cases += 1
    # Mutations must mostly break the file, or the fuzzing is not reaching the checks.
    assert refused > cases // 2
