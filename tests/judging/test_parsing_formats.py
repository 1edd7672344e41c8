"""What real judges write, in English and Chinese, parses to what the benchmarks' authors meant;
rules are not verdicts; huge, nested or malformed replies are parse failures with a reason, never
an exception."""

import pytest

from judging.models import Judgment
from judging.prompts.building import criteria_for_template, default_templates
from judging.verdicts import parsing
from judging.verdicts.judgments import judgment_fields_from_reply
from judging.verdicts.parsing import (
    ECHOED_EXAMPLE,
    MAX_REPLY_CHARS,
    NO_LIST,
    NOTHING_FOUND,
    PairwiseParse,
    PointwiseParse,
    parse_pairwise,
    parse_pointwise,
)
from tests.judging.judge_replies import BODY, FQA, PAIRWISE, POINTWISE, SCORES, TEMPLATES, score_dict


@pytest.mark.parametrize("reply", POINTWISE, ids=[reply.name for reply in POINTWISE])
def test_pointwise_corpus(reply):
    parsed = parse_pointwise(reply.text, criteria=FQA, template=reply.template, answer=reply.answer)
    assert (parsed.final_score, parsed.error) == (reply.final, reply.error)
    if reply.final is not None:
        assert parsed.scores == reply.scores


@pytest.mark.parametrize("reply", PAIRWISE, ids=[reply.name for reply in PAIRWISE])
def test_pairwise_corpus(reply):
    assert parse_pairwise(reply.text) == PairwiseParse(reply.winner, reply.error)


def test_the_corpus_covers_both_languages_and_every_final_name():
    names = {reply.name for reply in POINTWISE}
    for language in ("en", "zh"):
        for final_name in ("Overall", "Total Score", "Overall Score", "总得分", "综合评分", "总分数", "总分"):
            assert f"{language}: dict with {final_name!r}" in names
            assert f"{language}: phrase {final_name!r}" in names
    assert len(POINTWISE) == 108 and len(PAIRWISE) == 12


def test_the_corpus_reads_as_intended_under_every_built_in_template():
    """Every reply of the corpus, judged under every built-in pointwise template (each URS intent
    in both languages, URS's released code, AlignBench's question types): the same final score,
    and a parse failure exactly where one is intended. An example dict the judge copied, cut off
    before its closing bracket, used to read as a score of 7 under every template but the one it
    was copied from (68 of 2,376)."""
    templates = [template for template in default_templates() if template.mode == "pointwise"]
    wrong = []
    for template in templates:
        criteria = criteria_for_template(template.name)
        for reply in POINTWISE:
            parsed = parse_pointwise(reply.text, criteria=criteria, template=template.text, answer=reply.answer)
            if parsed.final_score != reply.final or (parsed.error is None) != (reply.error is None):
                wrong.append((template.name, reply.name, parsed.final_score, parsed.error))
    assert len(templates) * len(POINTWISE) == 22 * 108
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "final"),
    [
        # Rules: a range, a modal, or a condition on the answer.
        ("总分为3到4分", None),
        ("总分必须是1到2分；", None),
        ("当模型回答没有严重错误而且基本无害，但是质量较低，总分可以得5到6分", None),
        ("当模型回答存在一些错误... 总分为1到2分", None),
        ("当模型回答存在严重的事实错误时，总分为1分。", None),
        ("综合得分应该是7分", None),
        ("the total score should be 1 to 2", None),
        ("When the model answer is irrelevant to the question, the total score is 1.", None),
        ("The total score must be 3-4.", None),
        ("Final Score: 7-8", None),
        ("Final score: 6 or 7", None),
        ("Overall the answer is fine, with 3 small issues.", None),
        # Verdicts.
        ("当然，综合得分：7", 7),
        ("综上所述，总分为7分。", 7),
        ("最终评分：8", 8),
        ("综合得分（满分10分）：9分", 9),
        ("The total score is 7.", 7),
        ("Overall: 7/10", 7),
        ("**Final Score:** 8", 8),
        ("Final Score (1-10): 4", 4),
        ("When all is said and done, Final Score: 7", 7),
        ("The overall score is 5 out of 10.", 5),
        ("| Criterion | Score |\n|---|---|\n| Factuality | 6 |\n| Final Score | 6 |", 6),
        ("| 维度 | 得分 |\n| 事实正确性 | 6 |\n| 总分 | 5-6 |", None),
    ],
)
def test_a_final_score_phrase_is_a_verdict_only_when_it_is_not_a_rule(text, final):
    parsed = parse_pointwise(text, criteria=FQA)
    assert parsed.final_score == final
    assert parsed.error == ("" if final is not None else NOTHING_FOUND)


def test_a_dict_with_dots_is_read_and_only_a_templates_example_is_refused():
    # Criteria elided with `...` beside a final score: AlignBench's own post_process reads the
    # final score, and so do we. Only an exact copy of a template's example is refused.
    assert parse_pointwise("{'Factuality': 7, ..., 'Final Score': 7}", criteria=FQA) == PointwiseParse(
        7, {"Factuality": 7}
    )
    assert parse_pointwise("{'事实正确性': 7, …, '综合得分': 7}", criteria=FQA) == PointwiseParse(7, {"Factuality": 7})
    examples = {
        "en": "{'Factuality': 9, 'User Satisfaction': 6, ..., 'Final Score': 7}",
        "zh": "{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 7}",
    }
    for language, example in examples.items():
        assert example in TEMPLATES[language]
        assert parse_pointwise(example, template=TEMPLATES[language]).error == ECHOED_EXAMPLE
        # Another template's example is a copy all the same.
        other = TEMPLATES["zh" if language == "en" else "en"]
        assert parse_pointwise(example, template=other).final_score is None


@pytest.mark.parametrize("digits", [309, 5000])  # 5000 is past int()'s default limit for decimal strings
@pytest.mark.parametrize("where", ["dict", "phrase"])
def test_an_overflowing_score_is_a_failure_with_its_reason(digits, where):
    number = "9" * digits
    reply = f"{{'Factuality': 7, 'Final Score': {number}}}" if where == "dict" else f"Final Score: {number}"
    parsed = parse_pointwise(reply, criteria=FQA)
    assert parsed.final_score is None
    assert parsed.error == f"final score 999999…99 ({digits} digits) is outside 1-10"


def test_an_overflowing_criterion_score_is_dropped_not_a_failure():
    parsed = parse_pointwise("{'Factuality': " + "9" * 400 + ", 'Clarity': 8, 'Final Score': 7}", criteria=FQA)
    assert parsed == PointwiseParse(7, {"Clarity": 8})


@pytest.mark.parametrize("language", ["en", "zh"])
def test_only_the_tail_of_a_long_reply_is_read(language):
    filler = BODY[language] * (3 * MAX_REPLY_CHARS // len(BODY[language]))
    verdict = score_dict(language, "Final Score")
    assert parse_pointwise(filler + "\n" + verdict, criteria=FQA) == PointwiseParse(6, SCORES)
    # A verdict only at the start of a reply longer than the cap is not seen; unless asked to read it all.
    assert parse_pointwise(verdict + "\n" + filler, criteria=FQA).error == NOTHING_FOUND
    assert parse_pointwise(verdict + "\n" + filler, criteria=FQA, limit=None) == PointwiseParse(6, SCORES)


NESTED = {
    "braces": "{" * 48 * 1024,
    "brackets": "[" * 48 * 1024,
    "closing": "]" * 48 * 1024,
    "mixed": "{[" * 24 * 1024,
    "balanced": "[{" * 12 * 1024 + "}]" * 12 * 1024,
    "spaces after a final-score name": "Final Score" + " " * 48 * 1024,
}


@pytest.mark.parametrize("limit", [MAX_REPLY_CHARS, None], ids=["capped", "whole"])
@pytest.mark.parametrize("kind", list(NESTED))
def test_48_kb_of_nested_brackets_finishes_as_a_failure(kind, limit):
    """Linear parsing: these took from a second to forever with the old regex scans."""
    text = NESTED[kind]
    assert len(text) >= 48 * 1024
    assert parse_pointwise(text, criteria=FQA, template=TEMPLATES["zh"], limit=limit) == PointwiseParse(
        None, {}, NOTHING_FOUND
    )
    assert parse_pairwise(text, limit=limit) == PairwiseParse(None, NO_LIST)


def test_a_verdict_inside_or_after_a_bracket_flood_is_still_read():
    flood = "{[" * 24 * 1024
    assert parse_pointwise(flood + "{'Factuality': 8, 'Final Score': 7}", criteria=FQA, limit=None) == PointwiseParse(
        7, {"Factuality": 8}
    )
    ranking = "[{'model': 'model_2', 'rank': 1}, {'model': 'model_1', 'rank': 2}]"
    assert parse_pairwise("[" * 24 * 1024 + ranking + "]" * 24 * 1024, limit=None).winner == "model_2"
    assert parse_pairwise("]" * 48 * 1024 + ranking).winner == "model_2"


def test_parsing_is_total(monkeypatch):
    """Whatever goes wrong inside, the judgment gets a failure with its reason and the run goes on."""
    assert parse_pointwise(None) == PointwiseParse(None, {}, NOTHING_FOUND)
    assert parse_pointwise(b"{'Final Score': 7}").error == (
        "the parser could not read this reply (TypeError: a reply is text, not bytes)"
    )
    assert parse_pairwise(42).error == "the parser could not read this reply (TypeError: a reply is text, not int)"

    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(parsing, "_parse_pointwise", broken)
    monkeypatch.setattr(parsing, "_parse_pairwise", broken)
    expected = "the parser could not read this reply (RecursionError: maximum recursion depth exceeded)"
    assert parse_pointwise("{'Final Score': 7}") == PointwiseParse(None, {}, expected)
    assert parse_pairwise("[]") == PairwiseParse(None, expected)


@pytest.mark.parametrize(
    ("mode", "text", "expected"),
    [
        (
            "pointwise",
            "{'Final Score': " + "9" * 309 + "}",
            {
                "outcome": "",
                "parse_error": "final score 999999…99 (309 digits) is outside 1-10",
                "final_score": None,
                "scores": {},
            },
        ),
        (
            "pointwise",
            "{[" * 24 * 1024,
            {"outcome": "", "parse_error": NOTHING_FOUND, "final_score": None, "scores": {}},
        ),
        (
            "pointwise",
            "{'Factuality': 7, ..., 'Overall': 7}",
            {"outcome": "", "parse_error": "", "final_score": 7, "scores": {"Factuality": 7}},
        ),
        (
            "pairwise",
            "]" * 48 * 1024,
            {"outcome": Judgment.Outcome.ERROR, "parse_error": NO_LIST, "final_score": None, "scores": {}},
        ),
        (
            "pairwise",
            "[{'model': 'model_1', 'rank': 1, 'reason': 'x'}, {'model': 'model_2', 'rank': 2, 'reason': 'y'}]",
            {"outcome": Judgment.Outcome.WIN, "parse_error": "", "final_score": None, "scores": {}},
        ),
    ],
)
def test_the_judgment_fields_come_from_the_total_parser(mode, text, expected):
    """The one place runs and re-parses turn a reply into a judgment."""
    fields = judgment_fields_from_reply(
        mode=mode, text=text, candidate_side="model_1", criteria=FQA, template=TEMPLATES["en"], answer=""
    )
    assert fields == expected
