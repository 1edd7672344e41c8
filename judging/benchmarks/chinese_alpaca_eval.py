"""ChineseAlpacaEval (CrossmodalGroup): everything that is this paper's.

Its instructions file, its pairwise ranking prompt (Figure 3; AlpacaEval's alpaca_eval_gpt4 for
English items), its released code's judge and generation parameters, its published answers and
reference model, Table 1 and where each choice comes from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.import_checks import FormatError, json_objects, name_field, require_fields, text_field
from curation.datasets.public_formats import NO_LIMITS, ItemRecord, column_limit
from curation.registry import DatasetFormat
from judging.benchmarks.registry import (
    DEFAULT_TEMPERATURE,
    Benchmark,
    GenerationPreset,
    PublishedConfig,
    TemplateSet,
    benchmark_register,
)
from judging.papers.tables import alpacaeval_lines, alpacaeval_table_1
from judging.prompts.building import ALPACAEVAL_PAIRWISE_ZH, PAIRWISE_TEMPLATE, PAIRWISE_TEMPLATE_EN, DefaultTemplate
from judging.prompts.texts import ALPACA_EVAL_GPT4_USER, ALPACAEVAL_GENERATION_SYSTEM, ALPACAEVAL_JUDGE_SYSTEM

NAME = "chinese_alpaca_eval"
FORMAT_NAME = "alpacaeval"  # import_dataset --format, and the datasets' source
ALPACAEVAL_FIELDS = ["dataset", "instruction", "instruction_zh"]


def read_alpacaeval(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """Every record of iter_alpacaeval, in a list."""
    return list(iter_alpacaeval(source, columns=columns))


def iter_alpacaeval(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[ItemRecord]:
    """ChineseAlpacaEval JSONL: dataset, instruction (English source), instruction_zh.

    dataset: non-empty text, at most the category column; instruction and instruction_zh:
    non-empty text. Items are numbered 0001, 0002, ... in file order. One record at a time.
    """
    count = 0
    for line, value in json_objects(source):
        require_fields(value, line, ALPACAEVAL_FIELDS)
        category = name_field(value["dataset"], line, "dataset", limit=column_limit(columns, "category"))
        question = text_field(value["instruction_zh"], line, "instruction_zh")
        instruction_en = text_field(value["instruction"], line, "instruction")
        count += 1
        yield (
            ItemRecord(
                external_id=f"{count:04d}",
                question=question,
                category=category,
                language="zh",
                metadata={"instruction_en": instruction_en},
            )
        )
    if not count:
        raise FormatError(1, "the file has no rows")


def alpacaeval_row(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata = item.get("metadata") or {}
    return {
        "dataset": item["category"],
        "instruction": metadata.get("instruction_en", ""),
        "instruction_zh": item["question"],
    }


def write_alpacaeval(items: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for item in items:
        yield json.dumps(alpacaeval_row(item), ensure_ascii=False) + "\n"


FORMAT = DatasetFormat(
    name=FORMAT_NAME,
    label=_("ChineseAlpacaEval (JSONL)"),
    fields=tuple(ALPACAEVAL_FIELDS),
    read=iter_alpacaeval,
    write=write_alpacaeval,
    source=FORMAT_NAME,
    source_label=_("ChineseAlpacaEval"),
)


def _templates() -> list[DefaultTemplate]:
    return [
        DefaultTemplate(PAIRWISE_TEMPLATE, "pairwise", "zh", ALPACAEVAL_PAIRWISE_ZH),
        DefaultTemplate(PAIRWISE_TEMPLATE_EN, "pairwise", "en", ALPACA_EVAL_GPT4_USER),
    ]


def _template_for(*, language: str = "en", **_item: str) -> str:
    return PAIRWISE_TEMPLATE if language == "zh" else PAIRWISE_TEMPLATE_EN


TEMPLATES = TemplateSet(
    name=PAIRWISE_TEMPLATE.split("/", 1)[0],
    description="ChineseAlpacaEval's ranking prompt (Figure 3) for Chinese items, AlpacaEval's alpaca_eval_gpt4 "
    "for the others",
    label=_("ChineseAlpacaEval: its ranking prompt for Chinese items, AlpacaEval's for the others"),
    templates=_templates,
    template_for=_template_for,
    mode="pairwise",
    default=True,
)


def paper_table(board: dict) -> tuple[object, list[str]]:
    rows = alpacaeval_table_1(board)
    return rows, alpacaeval_lines(rows)


BENCHMARK = benchmark_register(
    Benchmark(
        name=NAME,
        position=3,
        paper="ChineseAlpacaEval (Table 1: win, lose and error rates, length, rank)",
        data_from="github.com/CrossmodalGroup/ChineseAlpacaEval: data/chinese_alpaca_eval.jsonl (795 "
        "instructions), data/eval_prompt_zh.txt (Figure 3) and model_outputs/*.jsonl (text-davinci-003, "
        "the reference, and two more models)",
        format=FORMAT,
        items=("data/chinese_alpaca_eval.jsonl", "chinese_alpaca_eval.jsonl"),
        mode="pairwise",
        template_sets=(TEMPLATES,),
        judge_temperature=0.0,
        judge_max_tokens=2048,
        judge_system_prompt=ALPACAEVAL_JUDGE_SYSTEM,
        judge_source="ChineseAlpacaEval Section 3 and Figure 3 (the prompt, temperature 0); evaluate.py of the "
        "authors' code (its system prompt, max_tokens 2048; the paper prints neither)",
        generation_preset=GenerationPreset(
            name=NAME,
            source="ChineseAlpacaEval's released generation_demo.py (the paper prints none): its Chinese "
            "system prompt, temperature 0.7 (every leaderboard model, per its README), max_tokens 2048",
            temperature=DEFAULT_TEMPERATURE,
            system_prompt=ALPACAEVAL_GENERATION_SYSTEM,
            max_tokens=2048,
            label=_("ChineseAlpacaEval: its Chinese system prompt, temperature 0.7, 2048 tokens"),
        ),
        table=paper_table,
        group="category",
        reference_model="text-davinci-003",
        answers=("model_outputs",),
        published=(
            PublishedConfig(
                ("data/eval_prompt_zh.txt", "eval_prompt_zh.txt"),
                "the judge prompt (Figure 3)",
                lambda: ALPACAEVAL_PAIRWISE_ZH,
                kind="text",
            ),
        ),
    )
)
