"""AlignBench (Liu et al.): everything that is this paper's.

Its item file (data_v1.1_release.jsonl), its judge prompt with each question type's dimensions
(Section 3, Appendix A.2), its configuration files, its reply temperatures by category, its
results table (总分, 中文推理, 中文语言) and where each choice comes from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.import_checks import FormatError, id_field, json_objects, name_field, require_fields, text_field
from curation.datasets.public_formats import NO_LIMITS, ItemRecord, column_limit
from curation.registry import DatasetFormat
from judging.benchmarks.registry import (
    DEFAULT_TEMPERATURE,
    Benchmark,
    GenerationPreset,
    PublishedConfig,
    Summary,
    TemplateSet,
    benchmark_register,
)
from judging.papers.tables import alignbench_lines
from judging.prompts.building import (
    ALIGNBENCH_DEFINITIONS,
    ALIGNBENCH_QUESTION_TYPES,
    ALIGNBENCH_SUBCATEGORY_TYPE,
    ALIGNBENCH_TEMPERATURE,
    CRITERION_ALIASES,
    DefaultTemplate,
    alignbench_question_type,
    alignbench_template,
)
from judging.results.leaderboard import alignbench_table

NAME = "alignbench"
ALIGNBENCH_FIELDS = ["question_id", "category", "subcategory", "question", "reference"]


def read_alignbench(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """Every record of iter_alignbench, in a list."""
    return list(iter_alignbench(source, columns=columns))


def iter_alignbench(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[ItemRecord]:
    """AlignBench JSONL: question_id, category, subcategory, question, reference[, evidences].

    question_id: a number or text, unique, at most the external_id column; category: non-empty
    text and subcategory: text or null, each at most its column; question: non-empty text;
    reference: text or null; evidences: any JSON, kept in the item's metadata. One record at a time.
    """
    seen: set[str] = set()
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
        yield (
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
    if not seen:
        raise FormatError(1, "the file has no rows")


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


def write_alignbench(items: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for item in items:
        yield json.dumps(alignbench_row(item), ensure_ascii=False) + "\n"


FORMAT = DatasetFormat(
    name=NAME,
    label=_("AlignBench (JSONL)"),
    fields=tuple(ALIGNBENCH_FIELDS),
    read=iter_alignbench,
    write=write_alignbench,
    source=NAME,
    source_label=_("AlignBench"),
)


def _templates() -> list[DefaultTemplate]:
    return [
        DefaultTemplate(f"{NAME}/{question_type}/zh", "pointwise", "zh", alignbench_template(question_type))
        for question_type in ALIGNBENCH_QUESTION_TYPES
    ]


def _template_for(*, category: str = "", subcategory: str = "", **_item: str) -> str:
    return f"{NAME}/{alignbench_question_type(category, subcategory)}/zh"


def _criteria_for(name: str) -> list[str]:
    parts = name.split("/")
    if len(parts) < 2 or parts[1] not in ALIGNBENCH_QUESTION_TYPES:
        return []
    return [CRITERION_ALIASES.get(dimension, dimension) for dimension in ALIGNBENCH_QUESTION_TYPES[parts[1]]]


TEMPLATES = TemplateSet(
    name=NAME,
    description="AlignBench paper (Section 3, Appendix A.2): dimensions of the subcategory's question type",
    label=_("AlignBench: one Chinese template per category, with its question type's dimensions"),
    templates=_templates,
    template_for=_template_for,
    criteria_for=_criteria_for,
)


def paper_table(board: dict) -> tuple[object, list[str]]:
    table = board.get(f"{NAME}_table") or {"columns": [], "rows": [], "label": ""}
    return table, alignbench_lines(table)


BENCHMARK = benchmark_register(
    Benchmark(
        name=NAME,
        position=2,
        paper="AlignBench (main results table: categories, 中文推理, 中文语言, 总分)",
        data_from="github.com/THUDM/AlignBench: data/data_v1.1_release.jsonl (683 questions with references) "
        "and config/*.json (dimensions, subcategory mapping, reply temperatures)",
        format=FORMAT,
        items=("data/data_v1.1_release.jsonl", "data_v1.1_release.jsonl"),
        mode="pointwise",
        template_sets=(TEMPLATES,),
        judge_temperature=0.0,
        judge_max_tokens=None,
        judge_system_prompt="",
        judge_source="AlignBench Section 3 and Appendix A.2 (the prompt); judge.py of the authors' code "
        "(temperature 0, no system prompt, no max_tokens)",
        generation_preset=GenerationPreset(
            name=NAME,
            source="AlignBench Table 3: temperature 0.1 for categories with fixed answers, 0.7 for the "
            "others; the question alone as the user's message (inference/api_models, 0.7 by default)",
            temperature=DEFAULT_TEMPERATURE,
            temperatures=ALIGNBENCH_TEMPERATURE,
            label=_("AlignBench: temperature 0.1 or 0.7 by category, the question alone"),
        ),
        table=paper_table,
        table_groups=("category",),
        group="category",
        published=(
            PublishedConfig(
                ("config/dimension_set.json", "dimension_set.json"),
                "dimensions per question type",
                lambda: ALIGNBENCH_QUESTION_TYPES,
            ),
            PublishedConfig(
                ("config/dimension_definition.json", "dimension_definition.json"),
                "dimension definitions",
                lambda: ALIGNBENCH_DEFINITIONS,
            ),
            PublishedConfig(
                ("config/subcategory_question_mapping.json", "subcategory_question_mapping.json"),
                "subcategory to question type",
                lambda: ALIGNBENCH_SUBCATEGORY_TYPE,
            ),
            PublishedConfig(
                ("config/temperature.json", "temperature.json"),
                "reply temperature per category",
                lambda: ALIGNBENCH_TEMPERATURE,
            ),
        ),
        summary=Summary(group="category", compute=alignbench_table, columns=("中文推理", "中文语言", "总分")),
    )
)
