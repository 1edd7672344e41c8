"""Candidate answers from a file (`import_answers`, a dataset's answers page, the API): a whole
file in one transaction, or nothing.

The file is JSONL with `instruction` or `question` (or `question_id`) and `response` per line,
or CSV with a header naming the same columns, or a benchmark's own answers format for its
datasets (Arena-Hard's `uid`, `model`, `messages`: judging/benchmarks/); every line is checked by the pure rules of
core/import_checks.py and matched to its item as it is read, before anything is written, and the
first bad line stops the reading with an error naming it.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO, cast

from django.db import IntegrityError, transaction

from core.archiving import refuse_if_archived
from core.audit import AuditAction, audit_record
from core.import_checks import FormatError, csv_cells, csv_rows, describe, id_field, json_objects, text_field
from core.workspaces import in_workspace
from curation.datasets.importers import DataImportError, checked_name, item_columns
from curation.datasets.public_formats import NO_LIMITS, column_limit
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Dataset
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
    return _at_least_one(iter_answers(source, columns=columns), "the file has no rows")


def iter_answers(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[AnswerRecord]:
    """read_answers one line at a time: a bad line is refused when it is read, not after the file."""
    for line, value in json_objects(source):
        yield answer_record(value, line, columns)


def _at_least_one(records: Iterator[AnswerRecord], empty: str) -> list[AnswerRecord]:
    found = list(records)
    if not found:
        raise FormatError(1, empty)
    return found


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
    return _at_least_one(iter_answers_csv(source, columns=columns), "the file has a header but no rows")


def iter_answers_csv(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[AnswerRecord]:
    """read_answers_csv one record at a time."""
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
    for line, row in rows:
        cells = csv_cells(row, line, header)
        question_id = cells.get("question_id", "")
        name = "instruction" if cells.get("instruction") else "question"
        question = cells.get(name, "")
        if not question_id and not question:
            raise FormatError(line, "expected a question_id, question or instruction")
        yield AnswerRecord(
            line=line,
            response=text_field(cells["response"], line, "response", blank=True),
            question_id=id_field(question_id, line, "question_id", limit=column_limit(columns, "external_id"))
            if question_id
            else None,
            question=text_field(question, line, name) if not question_id else None,
        )


@dataclass
class CheckedAnswers:
    """A file's answers matched to the dataset's items, ready to store (`answers_store`)."""

    dataset: Dataset
    model_name: str
    file_format: str
    # The model's next version of answers, not more answers in the current one.
    replace: bool = False
    # (item id, response text) in the file's order.
    answers: list[tuple[int, str]] = field(default_factory=list)


# How many lines between two calls of a progress callback.
PROGRESS_EVERY_LINES = 10_000


def answers_check(
    *,
    dataset_name: str,
    model_name: str,
    stream: BinaryIO | TextIO,
    only_known: bool = False,
    file_format: str = "jsonl",
    on_progress: Callable[[int], None] | None = None,
    replace: bool = False,
    workspace_id: int | None = None,
) -> CheckedAnswers:
    """Read a file of one model's answers and match each line to its item as it is read,
    writing nothing: the first line that cannot be stored stops the reading there, so an error
    on line 2 of a million-line file answers at once. DataImportError names the line.
    `on_progress(lines)` is called every PROGRESS_EVERY_LINES lines (a worker's progress).
    `workspace_id`: the dataset's workspace (dataset names are unique only there)."""
    try:
        dataset = dataset_by_name(name=dataset_name, workspace_id=workspace_id)
    except DatasetNotFound as error:
        raise DataImportError(str(error)) from None
    refuse_if_archived(dataset)
    model_name = model_name.strip()
    if not model_name:
        raise DataImportError("Name the model with --model.")
    model_name = checked_name(model_name, "model name", CandidateModel, "name")
    # A benchmark whose published answers have their own shape reads them as they are (JSONL).
    benchmark = benchmark_for_source(dataset.source)
    reader: Callable[..., Iterable[AnswerRecord]]
    if file_format == "csv":
        reader = iter_answers_csv
    elif benchmark is not None and benchmark.answers_reader is not None:
        reader = benchmark.answers_reader
    else:
        reader = iter_answers

    by_external_id: dict[str, int] = {}
    by_question: dict[str, int] = {}
    ambiguous: set[str] = set()
    for known_id, external_id, question in dataset.items.values_list("id", "external_id", "question"):
        by_external_id[external_id] = known_id
        if question in by_question:
            ambiguous.add(question)
        by_question[question] = known_id
    # A replacement is a whole new version: the answers the model has now are no clash.
    already = (
        set()
        if replace
        else set(Answer.objects.filter(item__dataset=dataset, model__name=model_name).values_list("item_id", flat=True))
    )
    checked = CheckedAnswers(dataset=dataset, model_name=model_name, file_format=file_format, replace=replace)
    seen: dict[int, int] = {}
    lines = 0
    try:
        for record in reader(stream, columns=item_columns()):
            lines += 1
            if on_progress is not None and lines % PROGRESS_EVERY_LINES == 0:
                on_progress(record.line)
            item_id = _item_of(record, dataset_name, by_external_id, by_question, ambiguous)
            if item_id is None and only_known:
                continue
            if item_id is None:
                where = f"question_id {record.question_id}" if record.question_id is not None else "its question text"
                raise DataImportError(
                    f"Nothing imported. line {record.line}: no item of {dataset_name!r} matches {where}."
                )
            if item_id in seen:
                raise DataImportError(
                    f"Nothing imported. line {record.line}: answers the same item as line {seen[item_id]}."
                )
            if item_id in already:
                raise DataImportError(
                    f"Nothing imported. line {record.line}: {model_name!r} already has an answer to this item."
                )
            seen[item_id] = record.line
            checked.answers.append((item_id, record.response))
        if not lines:
            raise FormatError(
                1, "the file has a header but no rows" if file_format == "csv" else "the file has no rows"
            )
    except FormatError as error:
        raise DataImportError(f"Nothing imported. {error}") from None
    except UnicodeDecodeError as error:
        raise DataImportError(f"Nothing imported. The file is not UTF-8 text ({error.reason}).") from None
    return checked


def _item_of(record: AnswerRecord, dataset_name: str, by_external_id, by_question, ambiguous) -> int | None:
    if record.question_id is not None:
        return by_external_id.get(record.question_id)
    if record.question in ambiguous:
        raise DataImportError(
            f"Nothing imported. line {record.line}: the question appears more than once in "
            f"{dataset_name!r}; give question_id instead."
        )
    # Every record without a question_id has its question.
    return by_question.get(cast(str, record.question))


@transaction.atomic
def answers_store(checked: CheckedAnswers, *, actor=None) -> int:
    """Store checked answers in one transaction (all or nothing); returns how many. An answer the
    model was given meanwhile (another upload) is refused and nothing is stored."""
    # The model of this name in the dataset's workspace: another team's namesake is another model.
    workspace_id = checked.dataset.workspace_id
    model, _ = in_workspace(CandidateModel.objects.all(), workspace_id).get_or_create(
        name=checked.model_name, defaults={"workspace_id": workspace_id}
    )
    try:
        with transaction.atomic():
            new = old = None
            if checked.replace:
                new, old = answers_new_version(dataset=checked.dataset, model=model, actor=actor)
            Answer.objects.bulk_create(
                (
                    Answer(item_id=item_id, model=model, text=text, origin=Answer.Origin.IMPORTED, answer_set=new)
                    for item_id, text in checked.answers
                ),
                batch_size=500,
            )
    except IntegrityError:
        raise DataImportError(
            f"Nothing imported. {checked.model_name!r} was given answers to these items meanwhile; upload again."
        ) from None
    if new is not None:
        answers_replaced_audit(dataset=checked.dataset, new=new, old=old, actor=actor)
        return len(checked.answers)
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_IMPORTED,
        target=f"dataset:{checked.dataset.name}",
        details={"model": checked.model_name, "answers": len(checked.answers), "format": checked.file_format},
        workspace=checked.dataset.workspace_id,
    )
    return len(checked.answers)


def answers_import(
    *,
    dataset_name: str,
    model_name: str,
    stream: BinaryIO | TextIO,
    only_known: bool = False,
    file_format: str = "jsonl",
    actor=None,
    replace: bool = False,
    workspace_id: int | None = None,
) -> int:
    """Store one model's answers to a dataset's items; returns how many were stored.

    Each line is matched to exactly one item by `question_id` (the item's id in its source) or
    by the exact question text. Unknown questions, answers given twice, and answers the model
    already has are refused with the line number as soon as that line is read, and then nothing
    is stored. With `only_known`, lines about questions the dataset lacks are skipped instead (a
    dataset that holds a slice of the file the answers were published for). `file_format`:
    "jsonl" or "csv". `actor`: who imported them from a page or the API, recorded in the audit log.
    With `replace`, the file becomes the model's next version of answers
    (judging/answers/versions.py): the one before stays for the runs that judged it; a bad line
    changes nothing. A file over UPLOAD_BACKGROUND_BYTES from a page or the API goes to a worker
    instead (judging/answers/uploads.py), through the same two steps.
    """
    checked = answers_check(
        dataset_name=dataset_name,
        model_name=model_name,
        stream=stream,
        only_known=only_known,
        file_format=file_format,
        replace=replace,
        workspace_id=workspace_id,
    )
    return answers_store(checked, actor=actor)
