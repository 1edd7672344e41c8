"""Every reader an import uses gives one record at a time: the importer matches or checks a line as
it is read, so a bad line stops the reading there, and the rest of the file is never parsed. Each
file here is a generator that fails if it is read past the bad line."""

import json

import pytest

from curation.datasets.importers import DataImportError, dataset_check
from judging.answers.imports import answers_check
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db


def lines_then_stop(*lines: str):
    """The given lines, then a failure: the reader asked for a line after the bad one."""
    yield from (line.encode() + b"\n" for line in lines)
    raise AssertionError("the reader read past the bad line")


def test_an_arena_hard_answer_naming_an_unknown_question_stops_the_reading_at_its_line():
    dataset = DatasetFactory(name="arena", source="arena_hard")
    ItemFactory(dataset=dataset, external_id="u1", question="Question one?")
    reply = {"role": "assistant", "content": {"answer": "Yes."}}
    good = json.dumps({"uid": "u1", "model": "m", "messages": [{"role": "user", "content": "q"}, reply]})
    unknown = json.dumps({"uid": "u404", "model": "m", "messages": [reply]})
    with pytest.raises(DataImportError, match="line 2: no item of 'arena' matches question_id u404"):
        answers_check(dataset_name="arena", model_name="m", stream=lines_then_stop(good, unknown))  # type: ignore[arg-type]


def test_an_arena_hard_answer_given_twice_is_named_at_its_line_before_the_rest_is_read():
    dataset = DatasetFactory(name="arena", source="arena_hard")
    ItemFactory(dataset=dataset, external_id="u1", question="Question one?")
    line = json.dumps({"uid": "u1", "model": "m", "messages": [{"role": "assistant", "content": "Yes."}]})
    with pytest.raises(DataImportError, match="line 2: answers the same item as line 1"):
        answers_check(dataset_name="arena", model_name="m", stream=lines_then_stop(line, line))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fmt", "good", "bad", "message"),
    [
        ("arena_hard", {"uid": "1", "prompt": "Q?"}, {"uid": "2"}, "line 2: expected the field 'prompt'"),
        (
            "alpacaeval",
            {"dataset": "d", "instruction": "Q?", "instruction_zh": "问?"},
            {"dataset": "d", "instruction": "Q?"},
            "line 2",
        ),
        (
            "alignbench",
            {"question_id": 1, "category": "c", "subcategory": "s", "question": "Q?", "reference": "R"},
            {"question_id": 1, "category": "c", "subcategory": "s", "question": "Q?", "reference": "R"},
            "line 2: question_id 1 appears twice",
        ),
    ],
)
def test_a_dataset_file_is_refused_at_its_bad_line_without_reading_on(fmt, good, bad, message):
    with pytest.raises(DataImportError, match=message):
        dataset_check(fmt=fmt, stream=lines_then_stop(json.dumps(good), json.dumps(bad)), name="new")  # type: ignore[arg-type]


def test_a_urs_row_is_refused_at_its_line_without_reading_on():
    header = "question,reference_ans,user_intent,language"
    with pytest.raises(DataImportError, match="line 3: unknown language"):
        dataset_check(fmt="urs", stream=lines_then_stop(header, "Q?,R,Leisure,EN", "Q?,R,Leisure,FR"), name="new")  # type: ignore[arg-type]
