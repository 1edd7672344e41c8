"""Copied examples are not verdicts, for every template set: a final dict equal to any template's
example or format line is a parse failure with a reason; the example's shape with the judge's own
numbers is a verdict (AlignBench's own parser reads it).

As reported: a reply ending with AlignBench's example dict, ellipsis included
(`{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 7}`), was a parse failure under the AlignBench
templates but read as a score of 7 under four of the URS-code templates.
"""

import re

import pytest

from judging.benchmarks.registry import template_set_of
from judging.prompts.building import default_templates
from judging.verdicts.parsing import ECHOED_EXAMPLE, normalise, parse_pairwise, parse_pointwise

POINTWISE = [t for t in default_templates() if t.mode == "pointwise"]
# The ranked-list pairwise templates (a benchmark with its own verdict reader, Arena-Hard's, has its
# copied example in tests/judging/authors_formats.py).
PAIRWISE = [t for t in default_templates() if t.mode == "pairwise" and template_set_of(t.name).read_verdict is None]
# Every example dict the shipped templates print (their literal braces undoubled).
EXAMPLES = sorted(
    {
        match.group(0)
        for template in POINTWISE
        for match in re.finditer(r"\{[^{}:]*:[^{}]*\}", template.text.replace("{{", "{").replace("}}", "}"))
    }
)


def test_the_templates_print_examples_with_ellipses_and_placeholders():
    assert len(EXAMPLES) >= 10
    assert any("..." in example for example in EXAMPLES) and any("打分" in example for example in EXAMPLES)


@pytest.mark.parametrize("template", POINTWISE, ids=[t.name for t in POINTWISE])
def test_every_example_copied_under_every_template_is_a_failure_with_a_reason(template):
    for example in EXAMPLES:
        for reply in (example, f"The answer is accurate and clear.\n{example}", f"评价如下。\n```\n{example}\n```"):
            parsed = parse_pointwise(reply, template=template.text)
            assert parsed.final_score is None, (template.name, example)
            assert parsed.error, (template.name, example)


def test_the_reported_reply_under_the_urs_code_templates():
    reply = "回答基本正确。\n{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 7}"
    for template in POINTWISE:
        assert parse_pointwise(reply, template=template.text).final_score is None, template.name
    urs_code = next(t for t in POINTWISE if t.name == "urs-code/factual_qa/zh")
    # An exact copy of a shipped example is an echo whichever template judged.
    assert parse_pointwise(reply, template=urs_code.text).error == ECHOED_EXAMPLE
    # The example's shape with the judge's own numbers, middle criteria elided: a verdict, as
    # AlignBench's post_process reads it, under every template.
    shaped = "回答基本正确。\n{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 2}"
    for template in POINTWISE:
        parsed = parse_pointwise(shaped, template=template.text)
        assert (parsed.final_score, parsed.error) == (2, ""), template.name


def test_a_real_verdict_still_reads_under_every_template():
    reply = "回答基本正确。\n{'事实正确性': 8, '满足用户需求': 7, '清晰度': 8, '完备性': 6, '综合得分': 7}"
    for template in POINTWISE:
        parsed = parse_pointwise(reply, template=template.text)
        assert (parsed.final_score, parsed.error) == (7, ""), template.name


@pytest.mark.parametrize("template", PAIRWISE, ids=[t.name for t in PAIRWISE])
def test_the_pairwise_example_copied_back_is_a_failure_with_a_reason(template):
    text = normalise(template.text.replace("{{", "{").replace("}}", "}"))
    example = text[text.rindex("[\n") : text.rindex("]") + 1]
    assert "<model-name>" in example
    parsed = parse_pairwise(f"Here is my ranking:\n{example}")
    assert parsed.winner is None and parsed.error
