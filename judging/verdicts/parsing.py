"""Reading judge replies. Pure and safe: regular expressions only, nothing is ever evaluated.

Pointwise (URS, AlignBench): the last `{...}` block that scores, with ASCII or full-width quotes
and colons, Chinese or English criterion names or placeholder keys (`维度一`, `Dimension 1`),
any of the final-score names the URS and AlignBench scripts accept (`综合得分`, `Overall`,
`Total Score`, `总分`...), `...` left in, inside fenced code or spread over lines. Dicts the judge
copied from the template or from the answer under test are passed over, as are `{}` and dicts
without a final score. Only a copy is refused: a dict equal (spacing and quotes aside) to an
example or format line of the run's template or of any built-in template (the example of one set
copied under another is still a copy), or to a dict of the answer under test. Everything the
authors' own parsers read is read: criteria elided with `...` (`{'事实正确性': 9, '满足用户需求': 6,
..., '综合得分': 2}` is a score of 2, as AlignBench's `post_process` reads it), placeholders left in
the criteria beside a final score, a note after a value (`7 out of 10`, as URS's `extract_data`
reads it), a fraction read as its whole part (`7.5` is 7, as both read the digits after the colon); a placeholder final score (`打分`) is no verdict in theirs nor here. A final-score phrase (`综合得分：7分`, `Final Score: 7`) is the fallback, and
only a verdict counts: a scoring rule such as "总分为3到4分" or "the total score should be 1 to 2"
is not one. Pairwise (ChineseAlpacaEval): the last `[...]` list of `{'model': ..., 'rank': ...}`
entries (other keys, such as a reason, are allowed); the first entry ranked 1 wins, as its
`evaluate.py` reads it, so two entries both ranked 1 are a win of the one listed first.

Every step is linear in the reply's length (no regex that rescans, no nested search), and only
the tail of a reply is read. `parse_pointwise` and `parse_pairwise` are total: whatever the reply,
they return a result, and a reply that yields no usable verdict is a parse failure with a reason.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from judging.prompts.building import CRITERION_ALIASES, FINAL_KEYS, default_templates

# Only the last characters of a reply are read. The templates ask for the verdict at the end of
# the reply, after a few paragraphs of explanation (real replies are 1-4 KB); a reply longer
# than this is a judge that rambled or looped, and whatever verdict it has is in its tail.
# Parsing is linear, so the cap is not what keeps it fast: it bounds the worst case of one
# reply to a few milliseconds however much a misbehaving endpoint sends.
MAX_REPLY_CHARS = 32_000

# Reasons a reply is a parse failure (the judgment keeps the reason; see services).
COPIED_FROM_ANSWER = "the score dict was copied from the answer under test"
ECHOED_EXAMPLE = "the reply echoes the template's example instead of scoring"
ECHOED_PROMPT = "the reply copies the judge prompt back and gives no score"
PHRASE_FROM_ANSWER = "the final-score phrase was copied from the answer under test"
NO_FINAL_IN_DICT = "the last {...} block has no final score"
NOTHING_FOUND = "no score dict and no final-score phrase in the reply"
NO_LIST = "no [...] list of models and ranks in the reply"

_FULL_WIDTH = {
    "｛": "{",
    "｝": "}",
    "：": ":",
    "，": ",",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    "＂": '"',
    "［": "[",
    "］": "]",
    "＇": "'",
    "　": " ",
    "０": "0",
    "１": "1",
    "２": "2",
    "３": "3",
    "４": "4",
    "５": "5",
    "６": "6",
    "７": "7",
    "８": "8",
    "９": "9",
    "、": ",",
}
_CHINESE_NUMERALS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_PLACEHOLDER_KEY = re.compile(r"^(?:维度|dimension\s*)([一二三四五六七八九十]|\d{1,3})$", re.IGNORECASE)
# Keys longer than this are sentences that happen to hold a colon, not dict keys; the bound also
# keeps the per-key work constant.
_MAX_KEY_CHARS = 80

# The final-score names the URS evaluation script accepts (Overall, Total Score, 总得分, 综合评分,
# 总分数...), AlignBench's 综合得分, and the template's own (prompts.FINAL_KEYS).
_FINAL_NAMES_EN = ("final score", "final rating", "overall score", "overall rating", "overall", "total score")
_FINAL_NAMES_ZH = ("综合得分", "最终得分", "综合分数", "综合评分", "总得分", "总分数", "总评分", "最终评分", "总分")


def _key_form(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip().lower())


_FINAL_KEY_FORMS = frozenset({_key_form(name) for name in FINAL_KEYS} | set(_FINAL_NAMES_EN) | set(_FINAL_NAMES_ZH))

# Innermost `{...}` blocks holding a colon. Each match scans from a `{` to the next brace only,
# so the search is linear however the braces nest.
_DICT_BLOCK = re.compile(r"\{[^{}:]*:[^{}]*\}")
_ITEM_SEPARATOR = re.compile(r"[,\n]")
# A score as judges write it: 7, '7', 7.0, 7分, 7 points, 7/10.
_SCORE_VALUE = re.compile(r"([+-]?)(\d+)(?:\.(\d+))?\s*(?:分|points?|pts?|/\s*10)?")
_DIGIT = re.compile(r"[0-9]")
# What may not follow a score's number: a range ("7-8", "7到8", "7 to 8") or a second number.
_NOT_A_SCORE_AFTER = re.compile(r"\s*+(?:[-~–—～到至或]\s*+\d|(?:to|or)\s++\d|\d|\.\d)", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")

# Final-score phrases. Every repetition is possessive, so a long run of spaces or quotes is
# crossed once and never re-split (a plain `\s*` sequence here backtracks exponentially).
_EN_NAMES = "|".join(r"[ _]?".join(name.split()) for name in sorted(_FINAL_NAMES_EN, key=len, reverse=True))
_PHRASE = re.compile(
    # The lookahead lets the regex engine skip to the possible first characters of a name.
    rf"(?=[fotFOT综最总])(?P<name>(?<![a-z])(?:{_EN_NAMES})(?![a-z])|{'|'.join(_FINAL_NAMES_ZH)})"
    r"""[\s'"*_]*+"""
    r"""(?:(?:\([^()\n]{0,24}\)|（[^（）\n]{0,24}）)[\s'"*_]*+)?"""  # "(1-10)", "（满分10分）"
    r"""(?P<modal>(?:should|must|can|could|may|might|would|will|shall|needs?\s+to|has\s+to|ought\s+to|only)"""
    r"""(?![a-z])\s*+|应该|应当|必须|可以|只能|才能|需要|应|可|能|需)?"""
    r"""(?P<verb>(?:is|was|are|be|of|equals)(?![a-z])\s*+|为|是|得到|得|打|给)?"""
    r"""(?P<sep>[:=|][\s*_]*+)?"""  # "|": a markdown table row, | Final Score | 7 |
    r"""[\[【(（*\s]*+"""
    r"""(?P<value>[+-]?\d+(?:\.\d+)?)"""
    r"""(?P<range>\s*+(?:到|至|~|～|-|–|—|to|or|或)\s*+[+-]?\d)?""",
    re.IGNORECASE,
)
_DOUBLE_BRACKET = re.compile(r"\[\[\s*+([+-]?\d+(?:\.\d+)?)\s*+\]\]")
# A scoring rule, not a verdict, is a condition on the answer: "当模型回答...时，总分为...",
# "When the model answer has ..., the total score ...".
_CONDITION = re.compile(
    r"[\s\-*#>\d.)]*+(?:(?:当|如果|若|假如)\s*+(?:模型|AI|助手|回答|答案)"
    r"|(?:when|if)\s++(?:the\s++|an?\s++)?(?:model|ai|assistant|answer|response))",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[\n。！？；;!?]|(?<!\.)\.(?=\s)")
# How many candidates are examined from the end of a reply. Real replies hold one to three
# dicts and phrases; the bounds cap the work on a reply made of thousands of them.
_MAX_BLOCKS = 100
_MAX_PHRASES = 256
# A template line counts as copied back only if it is this long (squashed), and a reply echoes
# the prompt when it holds at least two such lines.
_MIN_ECHO_LINE = 20
_MIN_ECHO_LINES = 2


@dataclass(frozen=True)
class PointwiseParse:
    final_score: int | None
    scores: dict[str, int] = field(default_factory=dict)
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.final_score is not None and not self.error


@dataclass(frozen=True)
class PairwiseParse:
    """Which side the judge ranked first: "model_1", "model_2", or None with an error (or a tie).

    A benchmark's own verdict format may say more (Arena-Hard's `[[A>>B]]`): a tie (winner None,
    no error), how strongly the winner won (1: better, 2: much better), and the verdict as written."""

    winner: str | None
    error: str = ""
    tie: bool = False
    strength: int = 1
    label: str = ""


def normalise(text: str) -> str:
    """Full-width punctuation to ASCII and code fences removed, so one grammar reads them all."""
    text = text or ""
    # One str.replace per character: str.translate looks every character of Chinese text up in
    # the table: 4 ms against 0.15 ms on 96 K of Chinese.
    for wide, narrow in _FULL_WIDTH.items():
        if wide in text:
            text = text.replace(wide, narrow)
    return re.sub(r"```[a-zA-Z]*", "", text)


def _squash_clean(text: str) -> str:
    """Normalised text without whitespace and with one kind of quote, for comparing copies."""
    return _WHITESPACE.sub("", text).replace('"', "'")


def _tail(text: str | None, limit: int | None) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        raise TypeError(f"a reply is text, not {type(text).__name__}")
    return text[-limit:] if limit and len(text) > limit else text


def _failure_reason(error: Exception) -> str:
    # A bug here must cost one judgment, never the run; the reason says where to look.
    return f"the parser could not read this reply ({type(error).__name__}: {str(error)[:120]})"


def _shown(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"


def _shown_digits(digits: str) -> str:
    return digits if len(digits) <= 12 else f"{digits[:6]}…{digits[-2:]} ({len(digits)} digits)"


def _integer_score(raw: str) -> tuple[int | None, str]:
    """An integer 1-10 from a score as written, or the reason it is not one.

    Read from the digits, never through float() or int() of the whole: a 309-digit score makes
    float() infinite and int() slow or an error. A fraction is read as its whole part (7.5 is 7),
    as the authors' parsers read it: URS's `extract_data` and AlignBench's `post_process` take the
    digits after the colon, so a judge writing 7.5 despite "make sure that your scores are
    integers" is a 7 in their results, not a failure."""
    text = raw.strip().strip("'\"*").strip()
    match = _SCORE_VALUE.match(text)
    # A note after the number is read past, as the authors' parsers do ("7 out of 10", "8 (good)",
    # "7分（良好）"); a range or a second number is not a score.
    if not match or _NOT_A_SCORE_AFTER.match(text, match.end()):
        return None, f"score {_shown(text)!r} is not a number (echoed template?)"
    sign, whole = match.group(1), match.group(2)
    digits = whole.lstrip("0") or "0"
    if len(digits) > 2 or (sign == "-" and digits != "0") or not 1 <= int(digits) <= 10:
        return None, f"score {'-' if sign == '-' and digits != '0' else ''}{_shown_digits(digits)} is outside 1-10"
    return int(digits), ""


def _canonical_key(key: str, criteria: list[str]) -> str:
    cleaned = key.strip().strip("'\"").strip()
    placeholder = _PLACEHOLDER_KEY.match(cleaned)
    if placeholder:
        token = placeholder.group(1)
        position = _CHINESE_NUMERALS.get(token) or int(token)
        if 1 <= position <= len(criteria):
            return criteria[position - 1]
        return cleaned
    base = re.sub(r"\s*[(（][^()（）]*[)）]\s*$", "", cleaned)  # "事实正确性(Factuality)" -> "事实正确性"
    return CRITERION_ALIASES.get(base.lower(), CRITERION_ALIASES.get(base, base))


def _is_final_key(name: str) -> bool:
    return _key_form(name) in _FINAL_KEY_FORMS


def _pairs(block: str) -> list[tuple[str, str]]:
    """(key, raw value) of a `{...}` block; items without a colon (`...`) are skipped."""
    pairs = []
    for item in _ITEM_SEPARATOR.split(block[1:-1]):
        key, colon, value = item.partition(":")
        key = key.strip().strip("'\"").strip()
        if colon and key and len(key) <= _MAX_KEY_CHARS:
            pairs.append((key, value))
    return pairs


# ---- Templates the reply is compared with --------------------------------------------------------


@dataclass(frozen=True)
class _TemplateMarks:
    blocks: frozenset[str]  # its `{...}` blocks, squashed: a reply's dict equal to one is an echo
    lines: tuple[str, ...]  # its longer lines, squashed: two of them in a reply is a copied prompt
    squashed: str  # the whole text, squashed: a phrase inside it is the prompt's, not a verdict


def _marks_of(texts: list[str]) -> _TemplateMarks:
    blocks: set[str] = set()
    lines: dict[str, None] = {}
    squashed = []
    for text in texts:
        clean = normalise(text)
        blocks.update(_squash_clean(match.group(0)) for match in _DICT_BLOCK.finditer(clean))
        for line in clean.splitlines():
            line = _squash_clean(line)
            if len(line) >= _MIN_ECHO_LINE and "{" not in line:
                lines[line] = None
        squashed.append(_squash_clean(clean))
    return _TemplateMarks(frozenset(blocks), tuple(lines), "\x00".join(squashed))


@functools.lru_cache(maxsize=128)
def _template_marks(template: str) -> _TemplateMarks:
    # Templates are few and long; every reply of a run is checked against the same ones. With no
    # template given, the built-in ones stand in.
    if template:
        return _marks_of([template])
    return _marks_of([default.text for default in default_templates()])


# ---- Pointwise ---------------------------------------------------------------------------------------


def parse_pointwise(
    text: str,
    *,
    criteria: list[str] | None = None,
    template: str = "",
    answer: str = "",
    limit: int | None = MAX_REPLY_CHARS,
) -> PointwiseParse:
    """Final score 1-10 and per-criterion scores from a pointwise judge reply. Never raises.

    `template` (the judge template's text) and `answer` let the parser refuse a dict the judge
    merely copied from the template's example or from the answer under test (an adversarial
    answer may carry one). Only the last `limit` characters are read (None: all of them).
    """
    try:
        return _parse_pointwise(_tail(text, limit), criteria or [], template or "", answer or "")
    except Exception as error:  # noqa: BLE001 - whatever the reply, the run goes on
        return PointwiseParse(None, {}, _failure_reason(error))


def _parse_pointwise(text: str, criteria: list[str], template: str, answer: str) -> PointwiseParse:
    clean = normalise(text)
    marks = _template_marks(template)
    clean_answer = normalise(answer)
    answer_blocks = (
        frozenset(_squash_clean(match.group(0)) for match in _DICT_BLOCK.finditer(clean_answer))
        if "{" in clean_answer
        else frozenset()
    )
    reasons: list[str] = []  # why blocks were passed over, the last block's first
    passed_over: list[tuple[int, int]] = []  # copied or echoed blocks: their phrases are not verdicts
    broken: PointwiseParse | None = None

    blocks = list(_DICT_BLOCK.finditer(clean))
    for match in reversed(blocks[-_MAX_BLOCKS:]):
        block = match.group(0)
        pairs = _pairs(block)
        if not pairs:
            continue
        squashed = _squash_clean(block)
        copied = len(squashed) > 4 and squashed in answer_blocks
        if copied or squashed in marks.blocks or squashed in _template_marks("").blocks:
            reasons.append(COPIED_FROM_ANSWER if copied else ECHOED_EXAMPLE)
            passed_over.append(match.span())
            continue
        scores: dict[str, int] = {}
        final_raw: str | None = None
        for key, value in pairs:
            name = _canonical_key(key, criteria)
            if _is_final_key(name):
                final_raw = value
            else:
                score, _problem = _integer_score(value)
                if score is not None:
                    scores[name] = score
        if final_raw is None:
            reasons.append(NO_FINAL_IN_DICT)
            continue
        final, problem = _integer_score(final_raw)
        if not problem:
            return PointwiseParse(final, scores)
        if _DIGIT.search(final_raw):
            return PointwiseParse(None, scores, f"final {problem}")  # a verdict, just not a valid one
        # A placeholder ('Final Score': score): the format copied back. A dict before it may be the
        # real one; failing that, a dict broken this way is not rescued by a phrase.
        broken = broken or PointwiseParse(None, scores, f"final {problem}")
    if broken is not None:
        return broken

    rest = _without(clean, passed_over)
    phrase, copied_phrase = _last_verdict_phrase(rest, marks, clean_answer)
    if phrase is not None:
        final, problem = _integer_score(phrase)
        return PointwiseParse(None, {}, f"final {problem}") if problem else PointwiseParse(final, {})

    strong = [reason for reason in reasons if reason in (COPIED_FROM_ANSWER, ECHOED_EXAMPLE)]
    if strong:
        return PointwiseParse(None, {}, strong[0])
    if copied_phrase:
        return PointwiseParse(None, {}, PHRASE_FROM_ANSWER)
    if _echoes_prompt(clean, marks):
        return PointwiseParse(None, {}, ECHOED_PROMPT)
    return PointwiseParse(None, {}, reasons[0] if reasons else NOTHING_FOUND)


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    pieces, cursor = [], 0
    for start, end in sorted(spans):
        pieces.append(text[cursor:start])
        cursor = end
    pieces.append(text[cursor:])
    return "\n".join(pieces)


def _last_verdict_phrase(text: str, marks: _TemplateMarks, clean_answer: str) -> tuple[str | None, bool]:
    """The score of the last final-score phrase that is a verdict, as written (or None), and
    whether a phrase was passed over as copied from the answer under test.

    Not verdicts: a range ("总分为3到4分", "1 to 2"), a modal ("should be", "必须是", "可以得"), a
    sentence that opens with a condition ("当模型回答...", "When the model answer..."), a phrase
    copied from the prompt, or one copied from the answer under test."""
    squashed_answer = _squash_clean(clean_answer) if clean_answer else ""
    from_answer = False
    phrases = list(_PHRASE.finditer(text))
    if phrases:
        ends = [match.end() for match in _SENTENCE_END.finditer(text)]
        for match in reversed(phrases[-_MAX_PHRASES:]):
            if match.group("range") or match.group("modal"):
                continue
            if match.group("name").lower() == "overall" and not (match.group("sep") or match.group("verb")):
                continue  # "Overall 3 issues": a bare "overall" needs a colon or "is"
            sentence_start = (
                ends[bisect.bisect_right(ends, match.start()) - 1] if ends and ends[0] <= match.start() else 0
            )
            if _CONDITION.match(text, sentence_start, match.start()):
                continue
            copied = _copied(text, match.start(), match.end(), marks, squashed_answer)
            if not copied:
                return match.group("value"), from_answer
            from_answer = from_answer or copied == "answer"
    for match in reversed(list(_DOUBLE_BRACKET.finditer(text))[-_MAX_PHRASES:]):
        copied = _copied(text, match.start(), match.end(), marks, squashed_answer)
        if not copied:
            return match.group(1), from_answer
        from_answer = from_answer or copied == "answer"
    return None, from_answer


def _copied(text: str, start: int, end: int, marks: _TemplateMarks, squashed_answer: str) -> str:
    """Where the phrase at text[start:end] was copied from: "answer", "prompt", or "" (the judge's own)."""
    body = _squash_clean(text[start:end])
    if squashed_answer and body in squashed_answer:
        return "answer"
    # Within the prompt (with what precedes it, so that a bare "Final Score: 7" is not matched
    # against the template's example by accident): e.g. an echo cut off inside the example dict.
    # The built-in templates count too: a run's template may be another set's, or edited, while
    # the judge copied the example it learnt from a built-in one (an unclosed `{..., '综合得分': 7`).
    before = _squash_clean(text[max(0, start - 48) : start])[-16:]
    if len(before) < 8:
        return ""
    quoted = before + body
    return "prompt" if quoted in marks.squashed or quoted in _template_marks("").squashed else ""


def _echoes_prompt(clean: str, marks: _TemplateMarks) -> bool:
    squashed = _squash_clean(clean)
    found = 0
    for line in marks.lines:
        if line in squashed:
            found += 1
            if found >= _MIN_ECHO_LINES:
                return True
    return False


# ---- Pairwise --------------------------------------------------------------------------------------

_BRACKET_RUN = re.compile(r"\[+|\]+")
_MODEL_WORD = re.compile("model", re.IGNORECASE)
_ENTRY_BLOCK = re.compile(r"\{[^{}]*\}")
_MODEL_KEY = re.compile(r"""(?:^|[{,])\s*+['"]?model['"]?\s*+:\s*+['"]?([\w\-.]+)""", re.IGNORECASE)
_RANK_KEY = re.compile(r"""(?:^|[{,])\s*+['"]?rank['"]?\s*+:\s*+['"]?(\d+)""", re.IGNORECASE)


def parse_pairwise(text: str, *, limit: int | None = MAX_REPLY_CHARS) -> PairwiseParse:
    """The side ranked first from the last `[...]` list of model/rank dicts; anything else is an error.

    Never raises. Only the last `limit` characters are read (None: all of them)."""
    try:
        return _parse_pairwise(_tail(text, limit))
    except Exception as error:  # noqa: BLE001 - whatever the reply, the run goes on
        return PairwiseParse(None, _failure_reason(error))


def _holds(positions: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_left(positions, start)
    return index < len(positions) and positions[index] < end


def _last_list_holding(text: str, positions: list[int], mentions: list[int]) -> tuple[tuple[int, int] | None, bool]:
    """The balanced `[...]` that closes last among those holding one of `positions` (sorted), and
    whether some balanced list holds one of `mentions`.

    One pass over runs of brackets, with a stack of runs of open ones. A run of k closing brackets
    closes the top k lists, each inside the next, so only the outermost of them need be looked at."""
    opens: list[list[int]] = []  # [start, end) of each run of still-open brackets
    found = None
    mentioned = False
    for run in _BRACKET_RUN.finditer(text):
        start, end = run.span()
        if text[start] == "[":
            opens.append([start, end])
            continue
        closing = end - start
        outer_start = None
        while closing and opens:
            top = opens[-1]
            taken = min(closing, top[1] - top[0])
            top[1] -= taken
            outer_start = top[1]  # the outermost open bracket closed so far
            closing -= taken
            if top[1] == top[0]:
                opens.pop()
        if outer_start is None:
            continue
        outer = (outer_start, end - closing - 1)
        if _holds(positions, *outer):
            found = outer
        elif not mentioned and _holds(mentions, *outer):
            mentioned = True
    return found, mentioned


def _parse_pairwise(text: str) -> PairwiseParse:
    clean = normalise(text)
    if not _MODEL_WORD.search(clean):
        return PairwiseParse(None, NO_LIST)  # no entry and no list of models: no need to match brackets
    # Every dict that names a model and a rank, wherever it is; a list's entries are those inside it.
    entries: list[tuple[int, str, str]] = []
    for match in _ENTRY_BLOCK.finditer(clean):
        block = match.group(0)
        if "model" not in block.lower():
            continue
        model, rank = _MODEL_KEY.search(block), _RANK_KEY.search(block)
        if model and rank:
            entries.append((match.start(), model.group(1).lower(), rank.group(1)))
    positions = [position for position, _model, _rank in entries]
    mentions = [match.start() for match in _MODEL_WORD.finditer(clean)]
    # The last list with entries is the verdict. Lists after it without any (a citation like [1],
    # or the prompt's format copied back: {'model': <模型名称>, 'rank': <排名>}) are passed over.
    found, mentioned = _last_list_holding(clean, positions, mentions)
    if found is None:
        return PairwiseParse(None, "expected model_1 and model_2, got none" if mentioned else NO_LIST)
    start, end = found
    return _winner(entries[bisect.bisect_left(positions, start) : bisect.bisect_left(positions, end)])


def _winner(entries: list[tuple[int, str, str]]) -> PairwiseParse:
    ranks: dict[str, int] = {}
    for _position, model, rank in entries:
        if len(rank) > 6:
            return PairwiseParse(None, f"rank {_shown_digits(rank)} of {model} is not a rank")
        ranks[model] = int(rank)
    if len(ranks) == 1 and set(ranks) <= {"model_1", "model_2"} and set(ranks.values()) == {1}:
        return PairwiseParse(next(iter(ranks)))  # only the first place listed: ChineseAlpacaEval reads it so
    if set(ranks) != {"model_1", "model_2"}:
        return PairwiseParse(None, f"expected model_1 and model_2, got {sorted(ranks) or 'none'}")
    if 1 not in ranks.values():
        return PairwiseParse(None, f"expected ranks 1 and 2, got {sorted(ranks.values())}")
    # The first entry ranked 1 names the winner, as ChineseAlpacaEval's `evaluate.py` reads the
    # list: both ranked 1 (a judge's tie) is a win of the one listed first in theirs, and here.
    return PairwiseParse(next(model for _position, model, rank in entries if int(rank) == 1))
