"""Random and mutated judge replies for a few seconds: the parser never raises, never hides an
internal error behind its safety net, and every result is a valid verdict or a failure with a reason.

The seed is printed and in every failure message; rerun a failure with
`PARSER_FUZZ_SEED=<seed> pytest tests/judging/test_parsing_fuzz.py`. `PARSER_FUZZ_SECONDS`
changes the budget (3 s by default).
"""

import os
import random
import time

from judging.verdicts.parsing import PairwiseParse, PointwiseParse, parse_pairwise, parse_pointwise
from tests.judging.judge_replies import ANSWER, FINAL_NAMES, FQA, PAIRWISE, POINTWISE, PROMPTS, TEMPLATES

SAFETY_NET = "the parser could not read this reply"
SEED = int(os.environ.get("PARSER_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
SECONDS = float(os.environ.get("PARSER_FUZZ_SECONDS") or 3)

SEEDS = [reply.text for reply in POINTWISE] + [reply.text for reply in PAIRWISE] + list(PROMPTS.values())
FRAGMENTS = FINAL_NAMES + [
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    ":",
    "：",
    ",",
    "，",
    "...",
    "…",
    "分",
    "/10",
    "到",
    " to ",
    "-",
    "为",
    "是",
    "should be",
    "必须是",
    "当模型回答",
    "When the model answer",
    "{'model': 'model_1', 'rank': 1}",
    "{'model': 'model_2', 'rank': 2, 'reason': 'x'}",
    "[[7]]",
    "```json\n",
    "```",
    "\n",
    "　",
    "{}",
    "[]",
    "'Final Score': ",
    "'综合得分'：",
    "model",
    "rank",
    "维度一",
    "Dimension 1",
]
# Characters judges and broken decoders produce: full-width forms, CJK, combining marks, zero-width
# and direction marks, emoji, a lone surrogate, NUL and other controls.
ODD_CHARACTERS = (
    [chr(code) for code in range(0xFF01, 0xFF5F)]
    + list("０１２３４５６７８９｛｝［］：，“”‘’、。；！？")
    + ["\u0301", "\u200b", "\u200d", "\u202e", "\ufeff", "\U0001f600", "\ud800", "\x00", "\x0b", "\u2028", "\u3000"]
)


def huge_number(rng: random.Random) -> str:
    digits = rng.choice([3, 20, 309, 400, 4301, 6000])
    number = str(rng.randint(1, 9)) + "".join(rng.choices("0123456789", k=digits - 1))
    return rng.choice(["", "-", "+"]) + number + rng.choice(["", ".5", ".0", "." + "0" * 500 + "1", "e309", "分"])


def mutate(text: str, rng: random.Random) -> str:
    kind = rng.randrange(10)
    if not text:
        return rng.choice(SEEDS)
    position = rng.randrange(len(text) + 1)
    if kind == 0:  # byte flips, decoded back however they fall
        data = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return data.decode("utf-8", rng.choice(["replace", "surrogateescape", "ignore"]))
    if kind == 1:  # truncation, either end
        return text[:position] if rng.random() < 0.5 else text[position:]
    if kind == 2:  # a bracket flood, nested or not
        flood = "".join(rng.choices("{}[]", k=rng.randint(1, 4))) * rng.randint(100, 12_000)
        return text[:position] + flood + text[position:]
    if kind == 3:  # a huge or odd number in place of a digit
        digit = next((i for i in range(position, len(text)) if text[i].isdigit()), position)
        return text[:digit] + huge_number(rng) + text[digit + 1 :]
    if kind == 4:  # odd unicode
        return text[:position] + "".join(rng.choices(ODD_CHARACTERS, k=rng.randint(1, 30))) + text[position:]
    if kind == 5:  # a fragment of the judge format
        return text[:position] + rng.choice(FRAGMENTS) + text[position:]
    if kind == 6:  # splice two replies
        other = rng.choice(SEEDS)
        return text[:position] + other[rng.randrange(len(other) + 1) :]
    if kind == 7:  # a segment repeated many times
        end = min(len(text), position + rng.randint(1, 40))
        return text[:position] + text[position:end] * rng.randint(2, 3000) + text[end:]
    if kind == 8:  # a long run of whitespace or quotes (backtracking bait)
        run = rng.choice([" ", "\n", "\t", "'", '"', " '", "*"]) * rng.randint(100, 40_000)
        return text[:position] + run + text[position:]
    return "".join(
        rng.choices(ODD_CHARACTERS + list("{}[]:,'\"0123456789 \nFinalScore综合得分model_rank"), k=rng.randint(0, 2000))
    )


def check_pointwise(parsed: PointwiseParse, where: str) -> None:
    assert isinstance(parsed, PointwiseParse), where
    assert SAFETY_NET not in parsed.error, f"{where}: the parser raised inside: {parsed.error}"
    if parsed.final_score is not None:
        assert type(parsed.final_score) is int and 1 <= parsed.final_score <= 10 and parsed.error == "", where
    else:
        assert isinstance(parsed.error, str) and parsed.error.strip(), f"{where}: a failure without a reason"
    assert all(type(key) is str and type(value) is int and 1 <= value <= 10 for key, value in parsed.scores.items()), (
        f"{where}: scores {parsed.scores!r}"
    )


def check_pairwise(parsed: PairwiseParse, where: str) -> None:
    assert isinstance(parsed, PairwiseParse), where
    assert SAFETY_NET not in parsed.error, f"{where}: the parser raised inside: {parsed.error}"
    if parsed.winner is not None:
        assert parsed.winner in ("model_1", "model_2") and parsed.error == "", where
    else:
        assert isinstance(parsed.error, str) and parsed.error.strip(), f"{where}: a failure without a reason"


def test_random_and_mutated_replies_never_break_the_parser():
    print(f"parser fuzz: seed {SEED}, {SECONDS} s (rerun with PARSER_FUZZ_SEED={SEED})")
    rng = random.Random(SEED)
    deadline = time.monotonic() + SECONDS
    cases = verdicts = 0
    while time.monotonic() < deadline:
        text = rng.choice(SEEDS)
        for _ in range(rng.randint(1, 4)):
            text = mutate(text, rng)
        template = rng.choice(["", TEMPLATES["en"], TEMPLATES["zh"]])
        answer = rng.choice(["", ANSWER["en"], ANSWER["zh"], rng.choice(SEEDS)])
        limit = rng.choice([None, 32_000, 1_000])
        where = f"seed {SEED}, case {cases}, {len(text)} chars: {text[:80]!r}...{text[-80:]!r}"
        pointwise = parse_pointwise(text, criteria=rng.choice([FQA, []]), template=template, answer=answer, limit=limit)
        check_pointwise(pointwise, where)
        check_pairwise(parse_pairwise(text, limit=limit), where)
        cases += 1
        verdicts += pointwise.final_score is not None
    print(f"parser fuzz: {cases} replies, {verdicts} pointwise verdicts")
    assert cases >= 50, f"seed {SEED}: only {cases} replies in {SECONDS} s"
