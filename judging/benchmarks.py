"""The three papers' methods as data, for `reproduce`: which public files, prompts, parameters and
table each benchmark uses, and where each choice comes from. Pure: no Django.

The public data is read where the researcher keeps it (`reproduce --data DIR`): either the
benchmark's repository as published (a clone) or a folder holding its files, so each file is
looked for at its path in the repository and at the top of the folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judging.prompts.building import (
    ALIGNBENCH_DEFINITIONS,
    ALIGNBENCH_QUESTION_TYPES,
    ALIGNBENCH_SUBCATEGORY_TYPE,
    ALIGNBENCH_TEMPERATURE,
    ALPACAEVAL_PAIRWISE_ZH,
)
from judging.prompts.texts import ALPACAEVAL_JUDGE_SYSTEM


@dataclass(frozen=True)
class PublishedConfig:
    """A configuration file the benchmark publishes, which Userbench carries its own copy of:
    `reproduce` checks the copy against the file the researcher has."""

    paths: tuple[str, ...]
    what: str
    expected: Callable[[], object]
    # How the file is read: JSON, or the text exactly as written.
    kind: str = "json"


@dataclass(frozen=True)
class Benchmark:
    name: str
    paper: str
    # Where the public data comes from (README, `reproduce --help`).
    data_from: str
    dataset_format: str  # import_dataset --format
    items: tuple[str, ...]  # the item file's paths, in a clone and in a flat folder
    mode: str
    template_set: str | None  # pointwise: the judge prompts' set; pairwise: None (Figure 3)
    # The judge's parameters as the authors ran it, and where each comes from.
    judge_temperature: float | None
    judge_max_tokens: int | None
    judge_system_prompt: str
    judge_source: str
    generation_preset: str  # judging.generation.GENERATION_PRESETS
    table: str  # which paper table the command prints
    group: str  # the item field a small slice is spread over
    reference_model: str | None = None
    # Published answers by model name: `<answers>/<model>.jsonl` with `instruction` and `response`.
    answers: tuple[str, ...] = ()
    published: tuple[PublishedConfig, ...] = field(default_factory=tuple)


BENCHMARKS = {
    benchmark.name: benchmark
    for benchmark in (
        Benchmark(
            name="urs",
            paper="URS: user-reported scenarios (Table 4)",
            data_from="github.com/Alice1998/URS: data/data_all.csv (1,846 questions with their 8-point "
            "GPT-4 references, intents and languages)",
            dataset_format="urs",
            items=("data/data_all.csv", "data_all.csv"),
            mode="pointwise",
            template_set="urs",
            # The authors' src/evaluation.py calls its judges with no temperature and no system prompt.
            judge_temperature=None,
            judge_max_tokens=None,
            judge_system_prompt="",
            judge_source="URS Appendix C (the prompt); src/evaluation.py of the authors' code (no temperature, "
            "no system prompt, no max_tokens)",
            generation_preset="urs",
            table="urs",
            group="intent",
        ),
        Benchmark(
            name="alignbench",
            paper="AlignBench (main results table: categories, 中文推理, 中文语言, 总分)",
            data_from="github.com/THUDM/AlignBench: data/data_v1.1_release.jsonl (683 questions with references) "
            "and config/*.json (dimensions, subcategory mapping, reply temperatures)",
            dataset_format="alignbench",
            items=("data/data_v1.1_release.jsonl", "data_v1.1_release.jsonl"),
            mode="pointwise",
            template_set="alignbench",
            judge_temperature=0.0,
            judge_max_tokens=None,
            judge_system_prompt="",
            judge_source="AlignBench Section 3 and Appendix A.2 (the prompt); judge.py of the authors' code "
            "(temperature 0, no system prompt, no max_tokens)",
            generation_preset="alignbench",
            table="alignbench",
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
        ),
        Benchmark(
            name="chinese_alpaca_eval",
            paper="ChineseAlpacaEval (Table 1: win, lose and error rates, length, rank)",
            data_from="github.com/CrossmodalGroup/ChineseAlpacaEval: data/chinese_alpaca_eval.jsonl (795 "
            "instructions), data/eval_prompt_zh.txt (Figure 3) and model_outputs/*.jsonl (text-davinci-003, "
            "the reference, and two more models)",
            dataset_format="alpacaeval",
            items=("data/chinese_alpaca_eval.jsonl", "chinese_alpaca_eval.jsonl"),
            mode="pairwise",
            template_set=None,
            judge_temperature=0.0,
            judge_max_tokens=2048,
            judge_system_prompt=ALPACAEVAL_JUDGE_SYSTEM,
            judge_source="ChineseAlpacaEval Section 3 and Figure 3 (the prompt, temperature 0); evaluate.py of the "
            "authors' code (its system prompt, max_tokens 2048; the paper prints neither)",
            generation_preset="chinese_alpaca_eval",
            table="chinese_alpaca_eval",
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
        ),
    )
}


def locate(root: Path, paths: Sequence[str]) -> Path | None:
    """The first of `paths` (relative to `root`) that is a file, or None."""
    for relative in paths:
        candidate = root / relative
        if candidate.is_file():
            return candidate
    return None


def published_answers(root: Path, benchmark: Benchmark, model: str) -> Path | None:
    """The file of a model's published answers under `root`, or None. A model name never leaves
    the answers folder (no separators, no dots in front)."""
    if not model or "/" in model or "\\" in model or model.startswith("."):
        return None
    return locate(root, [f"{folder}/{model}.jsonl" for folder in benchmark.answers])


def published_matches(path: Path, config: PublishedConfig) -> bool:
    """Whether a published configuration file says what Userbench's copy says."""
    data = path.read_bytes()
    if config.kind == "text":
        return data.decode("utf-8", errors="replace") == config.expected()
    try:
        return json.loads(data.decode("utf-8")) == config.expected()
    except (UnicodeDecodeError, ValueError):
        return False


def spread[Record](records: Sequence[Record], *, key: Callable[[Record], str], limit: int) -> list[Record]:
    """At most `limit` records taken in turn from each group (by `key`, groups in order of first
    appearance, records in file order within a group), returned in file order: a small slice that
    still shows every column of the paper's table when it can."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(key(record), []).append(index)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < min(limit, len(records)):
        for members in groups.values():
            if depth < len(members) and len(chosen) < limit:
                chosen.append(members[depth])
        depth += 1
    return [records[index] for index in sorted(chosen)]
