"""Candidate answers from a file (`import_answers`, a dataset's answers page, the API): a whole
file in one transaction, or nothing.

The file is JSONL with `instruction` or `question` (or `question_id`) and `response` per line,
or CSV with a header naming the same columns, or a benchmark's own answers format for its
datasets (Arena-Hard's `uid`, `model`, `messages`: judging/benchmarks/); every line is checked by the pure rules of
core/import_checks.py before anything is written, and an error names its line.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO, TextIO, cast

from django.db import transaction

from core.audit import AuditAction, audit_record
from core.import_checks import FormatError, csv_cells, csv_rows, describe, id_field, json_objects, text_field
from curation.datasets.importers import DataImportError, checked_name, item_columns
from curation.datasets.public_formats import NO_LIMITS, column_limit
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from judging.answers.versions import answers_new_version, answers_replaced_audit
from judging.benchmarks.registry import benchmark_for_source
from judging.models import Answer, CandidateModel


@dataclass(frozen=True)
class AnswerRecord:
    line: int
    response: str
    question_id: str | None = None
    question: str | None = None


def read_answers(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[AnswerRecord]:
    """Candidate answers, JSONL: `instruction` or `question` (or `question_id`) and `response`.

    response: text (may be empty); instruction / question: text; question_id: a number or text
    of at most the external_id column. A line names its question one way or the other.
    """
    records = [answer_record(value, line, columns) for line, value in json_objects(source)]
    if not records:
        raise FormatError(1, "the file has no rows")
    return records


def answer_record(value: dict, line: int, columns: Mapping[str, int] = NO_LIMITS) -> AnswerRecord:
    """One JSONL line of Userbench's answers format (see read_answers) as a record."""
    if not isinstance(value.get("response"), str):
        found = describe(value["response"]) if "response" in value else "none"
        raise FormatError(line, f"expected a text field 'response', found {found}")
    response = text_field(value["response"], line, "response", blank=True)
    name = "instruction" if "instruction" in value else "question"
    question = value.get(name)
    question_id = value.get("question_id")
    if question is None and question_id is None:
        raise FormatError(line, "expected 'instruction', 'question' or 'question_id'")
    return AnswerRecord(
        line=line,
        response=response,
        question_id=None
        if question_id is None
        else id_field(question_id, line, "question_id", limit=column_limit(columns, "external_id")),
        question=None if question is None else text_field(question, line, name),
    )


ANSWER_FORMATS = ("jsonl", "csv")
_QUESTION_COLUMNS = ("question_id", "question", "instruction")


def answer_format(filename: str) -> str:
    """The format a file's name says: "csv" for a .csv file, "jsonl" otherwise."""
    return "csv" if filename.lower().endswith(".csv") else "jsonl"


def read_answers_csv(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[AnswerRecord]:
    """Candidate answers, CSV (UTF-8, a byte-order mark allowed): a header with `response` and at
    least one of `question_id`, `question`, `instruction`; other columns are ignored. A row names
    its question by a non-empty question_id, else by its question text."""
    rows = csv_rows(source)
    first = next(rows, None)
    header = [name.lstrip("\ufeff").strip() for name in (first[1] if first else [])]
    if "response" not in header or not set(header) & set(_QUESTION_COLUMNS):
        found = ",".join(header)[:200] or "nothing"
        raise FormatError(
            first[0] if first else 1,
            f"expected a header with response and question_id, question or instruction, found {found}",
        )
    if len(set(header)) != len(header):
        raise FormatError(first[0] if first else 1, "the header names a column twice")
    records = []
    for line, row in rows:
        cells = csv_cells(row, line, header)
        question_id = cells.get("question_id", "")
        name = "instruction" if cells.get("instruction") else "question"
        question = cells.get(name, "")
        if not question_id and not question:
            raise FormatError(line, "expected a question_id, question or instruction")
        records.append(
            AnswerRecord(
                line=line,
                response=text_field(cells["response"], line, "response", blank=True),
                question_id=id_field(question_id, line, "question_id", limit=column_limit(columns, "external_id"))
                if question_id
                else None,
                question=text_field(question, line, name) if not question_id else None,
            )
        )
    if not records:
        raise FormatError(1, "the file has a header but no rows")
    return records


@transaction.atomic
def answers_import(
    *,
    dataset_name: str,
    model_name: str,
    stream: BinaryIO | TextIO,
    only_known: bool = False,
    file_format: str = "jsonl",
    actor=None,
    replace: bool = False,
) -> int:
    """Store one model's answers to a dataset's items; returns how many were stored.

    Each line is matched to exactly one item by `question_id` (the item's id in its source) or
    by the exact question text. Unknown questions, answers given twice, and answers the model
    already has are refused with the line number, and then nothing is stored. With
    `only_known`, lines about questions the dataset lacks are skipped instead (a dataset that
    holds a slice of the file the answers were published for). `file_format`: "jsonl" or "csv".
    `actor`: who imported them from a page or the API, recorded in the audit log. With `replace`,
    the file becomes the model's next version of answers (judging/answers/versions.py): the one
    before stays for the runs that judged it; a bad line changes nothing.
    """
    try:
        dataset = dataset_by_name(name=dataset_name)
    except DatasetNotFound as error:
        raise DataImportError(str(error)) from None
    model_name = model_name.strip()
    if not model_name:
        raise DataImportError("Name the model with --model.")
    model_name = checked_name(model_name, "model name", CandidateModel, "name")
    # A benchmark whose published answers have their own shape reads them as they are (JSONL).
    benchmark = benchmark_for_source(dataset.source)
    if file_format == "csv":
        reader = read_answers_csv
    elif benchmark is not None and benchmark.answers_reader is not None:
        reader = benchmark.answers_reader
    else:
        reader = read_answers
    try:
        records = reader(stream, columns=item_columns())
    except FormatError as error:
        raise DataImportError(f"Nothing imported. {error}") from None
    except UnicodeDecodeError as error:
        raise DataImportError(f"Nothing imported. The file is not UTF-8 text ({error.reason}).") from None

    by_external_id: dict[str, int] = {}
    by_question: dict[str, int] = {}
    ambiguous: set[str] = set()
    for known_id, external_id, question in dataset.items.values_list("id", "external_id", "question"):
        by_external_id[external_id] = known_id
        if question in by_question:
            ambiguous.add(question)
        by_question[question] = known_id
    model, _ = CandidateModel.objects.get_or_create(name=model_name)
    already = (
        set()
        if replace
        else set(Answer.objects.filter(item__dataset=dataset, model=model).values_list("item_id", flat=True))
    )

    answers: list[Answer] = []
    seen: dict[int, int] = {}
    for record in records:
        item_id: int | None
        if record.question_id is not None:
            item_id = by_external_id.get(record.question_id)
            where = f"question_id {record.question_id}"
        else:
            if record.question in ambiguous:
                raise DataImportError(
                    f"Nothing imported. line {record.line}: the question appears more than once in "
                    f"{dataset_name!r}; give question_id instead."
                )
            # read_answers gives every line without a question_id its question.
            item_id = by_question.get(cast(str, record.question))
            where = "its question text"
        if item_id is None and only_known:
            continue
        if item_id is None:
            raise DataImportError(f"Nothing imported. line {record.line}: no item of {dataset_name!r} matches {where}.")
        if item_id in seen:
            raise DataImportError(
                f"Nothing imported. line {record.line}: answers the same item as line {seen[item_id]}."
            )
        if item_id in already:
            raise DataImportError(
                f"Nothing imported. line {record.line}: {model_name!r} already has an answer to this item."
            )
        seen[item_id] = record.line
        answers.append(Answer(item_id=item_id, model=model, text=record.response, origin=Answer.Origin.IMPORTED))
    if replace:
        new, old = answers_new_version(dataset=dataset, model=model, actor=actor)
        for answer in answers:
            answer.answer_set = new
        Answer.objects.bulk_create(answers, batch_size=500)
        answers_replaced_audit(dataset=dataset, new=new, old=old, actor=actor)
        return len(answers)
    Answer.objects.bulk_create(answers, batch_size=500)
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_IMPORTED,
        target=f"dataset:{dataset.name}",
        details={"model": model_name, "answers": len(answers), "format": file_format},
        workspace=dataset.workspace_id,
    )
    return len(answers)
