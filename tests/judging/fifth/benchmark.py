"""A fake fifth benchmark, written as docs/architecture.md ("Adding a benchmark") says a new one is:
this one module holds all of it (its file format, template, generation preset, table) and
registers it. Its template needs no migration here: `reproduce` stores a published template it
does not find (a real benchmark seeds it with a data migration so that the run form offers it).
"""

from __future__ import annotations

import json

from core.import_checks import FormatError, json_objects, text_field
from curation.datasets.public_formats import ItemRecord
from curation.registry import DatasetFormat
from judging.benchmarks.registry import Benchmark, GenerationPreset, TemplateSet, benchmark_register
from judging.prompts.building import DefaultTemplate

NAME = "fifth"
TEMPLATE = "Rate the answer from 1 to 10.\nQuestion: {question}\nAnswer: {answer}\nEnd with {{'Final Score': N}}."


def read(source, *, columns=None):
    records = []
    for line, value in json_objects(source):
        if "id" not in value or "q" not in value:
            raise FormatError(line, "expected 'id' and 'q'")
        records.append(ItemRecord(external_id=str(value["id"]), question=text_field(value["q"], line, "q")))
    if not records:
        raise FormatError(1, "the file has no rows")
    return records


def write(items):
    for item in items:
        yield json.dumps({"id": item["external_id"], "q": item["question"]}) + "\n"


def table(board: dict):
    rows = [(row["model"], row["overall"].mean) for row in board["tables"]["overall"]["rows"]]
    return rows, ["Fifth benchmark (mean score)"] + [f"{model} {mean:.2f}" for model, mean in rows]


def register() -> Benchmark:
    return benchmark_register(
        Benchmark(
            name=NAME,
            paper="The fifth benchmark (its one table)",
            data_from="a folder holding fifth.jsonl",
            format=DatasetFormat(NAME, "Fifth (JSONL)", ("id", "q"), read, write, NAME, "Fifth"),
            items=("fifth.jsonl",),
            mode="pointwise",
            template_sets=(
                TemplateSet(
                    name=NAME,
                    description="the fifth benchmark's one prompt",
                    label="Fifth: one prompt",
                    templates=lambda: [DefaultTemplate(f"{NAME}/pointwise/en", "pointwise", "en", TEMPLATE)],
                    template_for=lambda **item: f"{NAME}/pointwise/en",
                ),
            ),
            judge_temperature=0.0,
            judge_max_tokens=512,
            judge_system_prompt="",
            judge_source="the fifth paper",
            generation_preset=GenerationPreset(name=NAME, source="the fifth paper", temperature=0.2, max_tokens=64),
            table=table,
            group="category",
        )
    )
