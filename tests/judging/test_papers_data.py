"""The templates and tables shipped in judging/prompts/building.py agree with the papers' public data, read in place."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from judging.prompts.building import (
    ALIGNBENCH_CATEGORY_TYPE,
    ALIGNBENCH_DEFINITIONS,
    ALIGNBENCH_QUESTION_TYPES,
    ALIGNBENCH_TEMPERATURE,
    ALPACAEVAL_PAIRWISE_ZH,
)

DATA = Path(settings.BASE_DIR).parent / "shared" / "data"
ALIGNBENCH = DATA / "alignbench"
needs_alignbench = pytest.mark.skipif(
    not ALIGNBENCH.exists(), reason="../shared/data/alignbench is not on this machine"
)


@needs_alignbench
def test_alignbench_dimensions_definitions_and_temperatures_match_the_release():
    assert ALIGNBENCH_QUESTION_TYPES == json.loads((ALIGNBENCH / "dimension_set.json").read_text(encoding="utf-8"))
    definitions = json.loads((ALIGNBENCH / "dimension_definition.json").read_text(encoding="utf-8"))
    assert {name: definitions[name] for name in ALIGNBENCH_DEFINITIONS} == ALIGNBENCH_DEFINITIONS
    assert ALIGNBENCH_TEMPERATURE == json.loads((ALIGNBENCH / "temperature.json").read_text(encoding="utf-8"))


@needs_alignbench
def test_category_to_question_type_covers_the_release():
    """Table 3 maps categories to types; the release maps subcategories. They agree on 672 of 683
    questions; the other 11 are the release's finer choices inside 基本任务 (10) and 文本写作 (1)."""
    mapping = json.loads((ALIGNBENCH / "subcategory_question_mapping.json").read_text(encoding="utf-8"))
    rows = [
        json.loads(line) for line in (ALIGNBENCH / "data_v1.1_release.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert {row["category"] for row in rows} == set(ALIGNBENCH_CATEGORY_TYPE)
    agree = sum(ALIGNBENCH_CATEGORY_TYPE[row["category"]] == mapping.get(row["subcategory"]) for row in rows)
    assert (agree, len(rows)) == (672, 683)


@pytest.mark.skipif(not (DATA / "chinese_alpaca_eval" / "eval_prompt_zh.txt").exists(), reason="no eval_prompt_zh.txt")
def test_pairwise_prompt_asks_what_the_papers_prompt_asks():
    original = (DATA / "chinese_alpaca_eval" / "eval_prompt_zh.txt").read_text(encoding="utf-8")
    for needle in ("model_1", "model_2", "'model'", "'rank'", "Python", "中文"):
        assert needle in original and needle in ALPACAEVAL_PAIRWISE_ZH
    placeholders = set(re.findall(r"(?<!\{)\{(\w+)\}(?!\})", ALPACAEVAL_PAIRWISE_ZH))
    assert placeholders == {"instruction", "output_1", "output_2"}
