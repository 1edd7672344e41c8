"""Tokens and cost estimated before anything is sent: what `/runs/new/` and a dataset's answers
page show before a judge run or a generation starts. Pure: no Django."""

import re
from decimal import Decimal

# Rough characters per token, for the estimates shown before calls are sent.
CHARS_PER_TOKEN = {"en": 4.0, "zh": 1.5}
_CHINESE = re.compile(r"[\u4e00-\u9fff]")


def tokens_estimate(chars: int, language: str) -> int:
    """About how many tokens a text of `chars` characters in `language` makes."""
    return int(chars / CHARS_PER_TOKEN.get(language, CHARS_PER_TOKEN["en"])) + 1


def text_language(text: str) -> str:
    """ "zh" when the text holds Chinese characters, "en" otherwise: enough for an estimate."""
    return "zh" if _CHINESE.search(text) else "en"


def cost_estimate(
    *, prompt_tokens: int, completion_tokens: int, input_price: Decimal | None, output_price: Decimal | None
) -> Decimal | None:
    """The tokens priced per million; None when the input price is unknown."""
    if input_price is None:
        return None
    total = Decimal(prompt_tokens) * Decimal(input_price) + Decimal(completion_tokens) * Decimal(output_price or 0)
    return (total / Decimal(1_000_000)).quantize(Decimal("0.0001"))
