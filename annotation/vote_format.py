"""Human pairwise votes from elsewhere, JSONL: the format's fields checked in one place.

Pure: no Django imports. Each line is an object with

- `question_id` (a number or text, at most the Item.external_id column) or `question` (the
  exact question text); `question_id` wins when both are given and it is not null;
- `model_a`, `model_b`: two different model names, text of at most the model name column;
- `winner`: "model_a", "model_b", "tie" or "cannot_determine";
- `annotator`: who voted, text or an integer id, at most the annotator label column;
- `comment` (optional): text or null, at most the vote comment column.

The rules every imported file shares (UTF-8, strict JSON, sizes, blank lines skipped) are in
core/import_checks.py. The first bad line raises `FormatError`.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from core.import_checks import (
    FormatError,
    describe,
    id_field,
    json_objects,
    name_field,
    require_fields,
    text_field,
)

WINNERS = ("model_a", "model_b", "tie", "cannot_determine")


@dataclass(frozen=True)
class VoteRecord:
    line: int
    model_a: str
    model_b: str
    winner: str
    annotator: str
    question_id: str | None = None
    question: str | None = None
    comment: str = ""


def _annotator(value, line: int, limit: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > limit:
        found = "none" if value is None else describe(value)
        raise FormatError(line, f"annotator must be a name of 1 to {limit} characters, found {found}.")
    return value.strip()


def read_votes(source, *, columns: Mapping[str, int]) -> list[VoteRecord]:
    """Every vote of a JSONL file, checked; `columns` gives the longest value of `question_id`,
    `model`, `annotator` and `comment` (the importer reads them from the model fields)."""
    records = []
    for line, value in json_objects(source):
        require_fields(value, line, ["model_a", "model_b", "winner"])
        question_id = value.get("question_id")
        question = None
        if question_id is not None:
            question_id = id_field(question_id, line, "question_id", limit=columns["question_id"])
        elif "question" in value:
            question = text_field(value["question"], line, "question")
        else:
            raise FormatError(line, "expected 'question' or 'question_id'.")
        model_a = name_field(value.get("model_a"), line, "model_a", limit=columns["model"])
        model_b = name_field(value.get("model_b"), line, "model_b", limit=columns["model"])
        if model_a == model_b:
            raise FormatError(line, "model_a and model_b are the same model.")
        winner = value["winner"]
        if not isinstance(winner, str) or winner not in WINNERS:
            found = describe(winner)
            raise FormatError(line, f"winner must be model_a, model_b, tie or cannot_determine, found {found}.")
        records.append(
            VoteRecord(
                line=line,
                model_a=model_a,
                model_b=model_b,
                winner=winner,
                annotator=_annotator(value.get("annotator"), line, columns["annotator"]),
                question_id=question_id,
                question=question,
                comment=text_field(
                    value.get("comment"), line, "comment", blank=True, null=True, limit=columns["comment"]
                ),
            )
        )
    return records
