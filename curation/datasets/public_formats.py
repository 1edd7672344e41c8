"""The three public dataset formats (URS CSV, AlignBench JSONL, ChineseAlpacaEval JSONL) and
candidate answers (JSONL).

Pure: reading turns a file into validated records or raises `FormatError` with the line number
and what was expected; writing turns item rows back into the same format, so an export read
again gives the same items. No Django imports. Each reader states its format's fields in one
place; the rules every file shares (encoding, JSON, sizes, characters a database cannot store)
live in core/import_checks.py.

Readers take a binary stream (decoded line by line) or an iterable of text lines, and
`columns`: the longest value each column takes, {field name: max_length}, which the importers
read from the model fields so the limit is the database's. A field not listed has no column
limit (free text is still capped at MAX_TEXT_CHARS).
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.csvsafe import csv_defuse, csv_restore
from core.import_checks import (
    FormatError,
    csv_cells,
    csv_rows,
    id_field,
    json_objects,
    name_field,
    require_fields,
    shown,
    text_field,
)

URS_INTENTS = {
    "Factual_QA": "factual_qa",
    "Solve_Professional_Problem": "solve_professional_problem",
    "API": "api",
    "Text_Assistant": "text_assistant",
    "Ask_for_Advice": "ask_for_advice",
    "Seek_Creativity": "seek_creativity",
    "Leisure": "leisure",
}
URS_LANGUAGES = {"EN": "en", "CN": "zh"}
URS_COLUMNS = ["question", "reference_ans", "user_intent", "language"]
ALIGNBENCH_FIELDS = ["question_id", "category", "subcategory", "question", "reference"]
ALPACAEVAL_FIELDS = ["dataset", "instruction", "instruction_zh"]

NO_LIMITS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class ItemRecord:
    external_id: str
    question: str
    reference: str = ""
    intent: str = ""
    category: str = ""
    subcategory: str = ""
    language: str = "en"
    metadata: dict[str, Any] = field(default_factory=dict)


def column_limit(columns: Mapping[str, int], name: str) -> int:
    return columns.get(name, 10**9)


def read_urs(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """URS data_all.csv: question, reference_ans, user_intent, language (UTF-8, BOM allowed).

    question: non-empty text; reference_ans: text, may be empty; user_intent: one of
    URS_INTENTS; language: EN or CN. Items are numbered 0001, 0002, ... in file order.
    """
    rows = csv_rows(source)
    first = next(rows, None)
    header = [name.lstrip("\ufeff") for name in (first[1] if first else [])]
    if header != URS_COLUMNS:
        found = ",".join(header)[:200] or "nothing"
        raise FormatError(first[0] if first else 1, f"expected the header {','.join(URS_COLUMNS)}, found {found}")
    records: list[ItemRecord] = []
    for line, row in rows:
        cells = csv_cells(row, line, URS_COLUMNS)
        question = text_field(cells["question"], line, "question")
        reference = text_field(cells["reference_ans"], line, "reference_ans", blank=True)
        intent = URS_INTENTS.get(cells["user_intent"])
        if intent is None:
            raise FormatError(
                line, f"unknown user_intent {shown(cells['user_intent'])}; expected one of {', '.join(URS_INTENTS)}"
            )
        language = URS_LANGUAGES.get(cells["language"])
        if language is None:
            raise FormatError(line, f"unknown language {shown(cells['language'])}; expected EN or CN")
        external_id = f"{len(records) + 1:04d}"
        records.append(
            ItemRecord(
                external_id=external_id,
                # A file Userbench wrote has its formula-like cells quoted (core.csvsafe): read them back.
                question=csv_restore(question),
                reference=csv_restore(reference),
                intent=intent,
                language=language,
            )
        )
    if not records:
        raise FormatError(1, "the file has a header but no rows")
    return records


def read_alignbench(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """AlignBench JSONL: question_id, category, subcategory, question, reference[, evidences].

    question_id: a number or text, unique, at most the external_id column; category: non-empty
    text and subcategory: text or null, each at most its column; question: non-empty text;
    reference: text or null; evidences: any JSON, kept in the item's metadata.
    """
    records, seen = [], set()
    for line, value in json_objects(source):
        require_fields(value, line, ALIGNBENCH_FIELDS)
        question_id = value["question_id"]
        external_id = id_field(question_id, line, "question_id", limit=column_limit(columns, "external_id"))
        if external_id in seen:
            raise FormatError(line, f"question_id {external_id} appears twice")
        seen.add(external_id)
        metadata = {"question_id": question_id}
        if "evidences" in value:
            metadata["evidences"] = value["evidences"]
        records.append(
            ItemRecord(
                external_id=external_id,
                question=text_field(value["question"], line, "question"),
                reference=text_field(value["reference"], line, "reference", blank=True, null=True),
                category=name_field(value["category"], line, "category", limit=column_limit(columns, "category")),
                subcategory=text_field(
                    value["subcategory"],
                    line,
                    "subcategory",
                    blank=True,
                    null=True,
                    limit=column_limit(columns, "subcategory"),
                ),
                language="zh",
                metadata=metadata,
            )
        )
    if not records:
        raise FormatError(1, "the file has no rows")
    return records


def read_alpacaeval(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """ChineseAlpacaEval JSONL: dataset, instruction (English source), instruction_zh.

    dataset: non-empty text, at most the category column; instruction and instruction_zh:
    non-empty text. Items are numbered 0001, 0002, ... in file order.
    """
    records: list[ItemRecord] = []
    for line, value in json_objects(source):
        require_fields(value, line, ALPACAEVAL_FIELDS)
        category = name_field(value["dataset"], line, "dataset", limit=column_limit(columns, "category"))
        question = text_field(value["instruction_zh"], line, "instruction_zh")
        instruction_en = text_field(value["instruction"], line, "instruction")
        records.append(
            ItemRecord(
                external_id=f"{len(records) + 1:04d}",
                question=question,
                category=category,
                language="zh",
                metadata={"instruction_en": instruction_en},
            )
        )
    if not records:
        raise FormatError(1, "the file has no rows")
    return records


READERS = {"urs": read_urs, "alignbench": read_alignbench, "alpacaeval": read_alpacaeval}


# Writing: item rows are mappings with the Item fields (as `items` exports produce them).
URS_INTENT_NAMES = {value: key for key, value in URS_INTENTS.items()}
URS_LANGUAGE_NAMES = {value: key for key, value in URS_LANGUAGES.items()}


def urs_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """A URS CSV row; text cells that a spreadsheet would run as formulas are quoted."""
    return {
        "question": csv_defuse(item["question"]),
        "reference_ans": csv_defuse(item["reference"]),
        "user_intent": URS_INTENT_NAMES.get(item["intent"], item["intent"]),
        "language": URS_LANGUAGE_NAMES.get(item["language"], item["language"]),
    }


def alignbench_row(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata = item.get("metadata") or {}
    row = {
        "question_id": metadata.get("question_id", item["external_id"]),
        "category": item["category"],
        "subcategory": item["subcategory"],
        "question": item["question"],
        "reference": item["reference"],
    }
    if "evidences" in metadata:
        row["evidences"] = metadata["evidences"]
    return row


def alpacaeval_row(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata = item.get("metadata") or {}
    return {
        "dataset": item["category"],
        "instruction": metadata.get("instruction_en", ""),
        "instruction_zh": item["question"],
    }


def iter_public(items: Iterable[Mapping[str, Any]], fmt: str) -> Iterator[str]:
    """Write item rows in a public format, line by line (URS as CSV with a BOM, others JSONL)."""
    if fmt == "urs":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=URS_COLUMNS)
        yield "\ufeff"
        writer.writeheader()
        for item in items:
            writer.writerow(urs_row(item))
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        yield buffer.getvalue()
        return
    to_row = {"alignbench": alignbench_row, "alpacaeval": alpacaeval_row}[fmt]
    for item in items:
        yield json.dumps(to_row(item), ensure_ascii=False) + "\n"


PUBLIC_FORMATS = tuple(READERS)
