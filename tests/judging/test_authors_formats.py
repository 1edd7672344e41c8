"""Each benchmark's parser reads every format its authors' parser reads (tests/judging/authors_formats.py)
and refuses only a copy of the template's example or of the answer under test."""

import pytest

from judging.benchmarks.arena_hard import read_verdict
from judging.prompts.building import alignbench_template, criteria_for_template, urs_template
from judging.verdicts.parsing import parse_pairwise, parse_pointwise
from tests.judging.authors_formats import ALIGNBENCH, ARENA_HARD, CHINESE_ALPACA_EVAL, URS

URS_TEMPLATES = {language: urs_template("factual_qa", language) for language in ("en", "zh")}
ALIGNBENCH_TEMPLATE = alignbench_template("生成型回答")


@pytest.mark.parametrize("reply", URS, ids=[reply.name for reply in URS])
def test_urs_reads_what_its_authors_parser_reads(reply):
    parsed = parse_pointwise(
        reply.text,
        criteria=criteria_for_template(f"urs/factual_qa/{reply.language}"),
        template=URS_TEMPLATES[reply.language],
        answer=reply.answer,
    )
    assert parsed.final_score == reply.expected
    assert bool(parsed.error) == (reply.expected is None)


@pytest.mark.parametrize("reply", ALIGNBENCH, ids=[reply.name for reply in ALIGNBENCH])
def test_alignbench_reads_what_its_authors_parser_reads(reply):
    parsed = parse_pointwise(
        reply.text,
        criteria=criteria_for_template("alignbench/生成型回答/zh"),
        template=ALIGNBENCH_TEMPLATE,
        answer=reply.answer,
    )
    assert parsed.final_score == reply.expected
    assert bool(parsed.error) == (reply.expected is None)


@pytest.mark.parametrize("reply", CHINESE_ALPACA_EVAL, ids=[reply.name for reply in CHINESE_ALPACA_EVAL])
def test_chinese_alpaca_eval_reads_what_its_authors_parser_reads(reply):
    parsed = parse_pairwise(reply.text)
    assert parsed.winner == reply.expected
    assert bool(parsed.error) == (reply.expected is None)


@pytest.mark.parametrize("reply", ARENA_HARD, ids=[reply.name for reply in ARENA_HARD])
def test_arena_hard_reads_what_its_authors_parser_reads(reply):
    parsed = read_verdict(reply.text, answer=reply.answer)
    assert (parsed.label or None) == reply.expected
    assert bool(parsed.error) == (reply.expected is None)
    if reply.expected == "A=B":
        assert parsed.tie and parsed.winner is None
    elif reply.expected is not None:
        # A is the first answer shown (model_1); `>>` is a significant win.
        assert parsed.winner == {"A": "model_1", "B": "model_2"}[reply.expected[0]]
        assert parsed.strength == (2 if ">>" in reply.expected else 1)


def test_the_reported_reply_is_a_score_of_two():
    reply = "{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 2}"
    parsed = parse_pointwise(
        reply, criteria=criteria_for_template("alignbench/生成型回答/zh"), template=ALIGNBENCH_TEMPLATE
    )
    assert (parsed.final_score, parsed.error) == (2, "")
    assert parsed.scores == {"Factuality": 9, "User Satisfaction": 6}


def test_the_corpora_hold_reads_and_refusals():
    for corpus in (URS, ALIGNBENCH, CHINESE_ALPACA_EVAL, ARENA_HARD):
        assert sum(reply.expected is None for reply in corpus) >= 1
        assert sum(reply.expected is not None for reply in corpus) >= 9
