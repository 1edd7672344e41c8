"""Pure text steps on a reported conversation: turns, first valid question, language, duplicates.

No Django imports: these take and return plain values so they are cheap to test and reuse
(URS 3.2.2: format validation, intra-user de-duplication, first valid question).
"""

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

USER = "user"
ASSISTANT = "assistant"

# Speaker labels participants paste, English and Chinese. Longer labels first so
# "Question" wins over "Q". Service names count as the assistant: people paste
# "ChatGPT:" or "文心一言：" as often as "Answer:".
_USER_LABELS = [
    "question",
    "prompt",
    "user",
    "human",
    "me",
    "you said",
    "you",
    "q",
    "问题",
    "提问",
    "用户",
    "问",
    "我",
]
_ASSISTANT_LABELS = [
    "answer",
    "response",
    "reply",
    "assistant",
    "chatgpt said",
    "chatgpt",
    "gpt-4o",
    "gpt-4",
    "gpt",
    "claude",
    "gemini",
    "bard",
    "copilot",
    "new bing",
    "bing",
    "ai",
    "bot",
    "llama",
    "mistral",
    "deepseek",
    "qwen",
    "kimi",
    "ernie bot",
    "chatglm",
    "spark",
    "a",
    "回答",
    "答案",
    "答复",
    "助手",
    "文心一言",
    "通义千问",
    "智谱清言",
    "讯飞星火",
    "豆包",
    "答",
]
_ROLE_OF = {label: USER for label in _USER_LABELS} | {label: ASSISTANT for label in _ASSISTANT_LABELS}
_LABEL_ALTERNATION = "|".join(re.escape(label) for label in sorted(_ROLE_OF, key=len, reverse=True))
# A label at the start of a line, optionally in markdown bold or after a heading mark,
# followed by an ASCII or full-width colon.
_MARKER = re.compile(
    rf"^[ \t]*(?:#+[ \t]*)?(?:\*\*)?(?P<label>{_LABEL_ALTERNATION})(?:\*\*)?[ \t]*[:：](?:\*\*)?[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)

_GREETINGS = {
    "hi",
    "hello",
    "hey",
    "hi there",
    "hello there",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "test",
    "good morning",
    "你好",
    "您好",
    "在吗",
    "在么",
    "嗨",
    "哈喽",
    "谢谢",
    "好的",
    "测试",
}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_URL_ONLY = re.compile(r"^\s*https?://\S+\s*$")


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


@dataclass(frozen=True)
class ParsedConversation:
    turns: tuple[Turn, ...]
    # Empty when the text follows the expected "Question: ... Answer: ..." form.
    format_error: str = ""

    @property
    def format_ok(self) -> bool:
        return not self.format_error


def parse_turns(text: str) -> ParsedConversation:
    """Split pasted text into user and assistant turns.

    A label that repeats the current speaker ("A:" inside an answer listing options) is
    kept as content, so nothing the participant wrote is lost. Text without any label is
    one user turn, flagged as not in the expected format.
    """
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return ParsedConversation(turns=(), format_error="empty")
    turns: list[list] = []  # [role, chunks]
    preamble_end = None
    for match in _MARKER.finditer(text):
        role = _ROLE_OF[match.group("label").lower()]
        if preamble_end is None:
            preamble_end = match.start()
        if turns and turns[-1][0] == role:
            continue
        if turns:
            turns[-1].append(match.start())
        turns.append([role, match.end()])
    if not turns:
        return ParsedConversation(turns=(Turn(USER, text.strip()),), format_error="no_speaker_labels")
    turns[-1].append(len(text))
    result = tuple(Turn(role, text[start:end].strip()) for role, start, end in turns)
    result = tuple(turn for turn in result if turn.text)
    error = ""
    if not any(turn.role == USER for turn in result):
        error = "no_question"
    elif not any(turn.role == ASSISTANT for turn in result):
        error = "no_answer"
    elif text[:preamble_end].strip():
        error = "text_before_first_label"
    return ParsedConversation(turns=result, format_error=error)


def is_valid_question(text: str) -> bool:
    """A question worth keeping: not empty, not a bare greeting or link, not too short."""
    stripped = (text or "").strip()
    if not stripped or _URL_ONLY.match(stripped):
        return False
    bare = re.sub(r"[\s\W_]+", " ", stripped.lower()).strip()
    if bare in _GREETINGS:
        return False
    cjk = len(_CJK.findall(stripped))
    words = len(_LATIN_WORD.findall(stripped))
    return cjk >= 4 or words >= 3 or (cjk >= 2 and words >= 1)


def first_valid_question(parsed: ParsedConversation) -> str:
    """The first user turn that is a real question (URS keeps only that one)."""
    for turn in parsed.turns:
        if turn.role == USER and is_valid_question(turn.text):
            return turn.text
    return ""


def detect_language(text: str) -> str:
    """'zh' or 'en' by the share of Chinese characters against Latin words; '' if neither.

    Code and product names inside a Chinese question stay a minority, so
    "请解释 Python 的 list comprehension" is Chinese, "What does 你好 mean?" English.
    """
    cjk = len(_CJK.findall(text or ""))
    words = len(_LATIN_WORD.findall(text or ""))
    if cjk == 0 and words == 0:
        return ""
    return "zh" if cjk >= 0.5 * (cjk + words) else "en"


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """Case, width and punctuation folded away: what makes two questions 'the same'."""
    folded = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[\W_]+", "", folded)


# Cached: de-duplicating a study compares each case with all earlier ones.
@lru_cache(maxsize=65536)
def shingles(text: str, size: int = 3) -> frozenset[str]:
    """Character n-grams of the normalised text (works for Chinese, which has no spaces)."""
    norm = normalise(text)
    if len(norm) <= size:
        return frozenset({norm}) if norm else frozenset()
    return frozenset(norm[i : i + size] for i in range(len(norm) - size + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


EXACT = "exact"
NEAR = "near"


@dataclass(frozen=True)
class DuplicateMatch:
    key: object
    of_key: object  # the earlier text it repeats
    kind: str  # EXACT or NEAR
    similarity: float
    same_group: bool  # same participant: a duplicate; other participant: only flagged


# (key, group, text): a text, what it is, and whose (a participant).
Entry = tuple[object, object, str]


def find_duplicates(entries: Iterable[Entry], threshold: float = 0.8) -> list[DuplicateMatch]:
    """Compare each (key, group, text) with the earlier ones, in the order given.

    Returns one match per later entry that repeats an earlier one: a match in the same group
    (participant) first, else one in another group. Entries with empty text never match.
    """
    entries = list(entries)
    matches = []
    for end in range(1, len(entries)):
        window = entries[: end + 1]
        match = best_match(window, threshold, same_group=True) or best_match(window, threshold, same_group=False)
        if match is not None:
            matches.append(match)
    return matches


def best_match(entries: Sequence[Entry], threshold: float = 0.8, same_group: bool = True) -> DuplicateMatch | None:
    """How the last (key, group, text) entry repeats one of the entries before it.

    same_group=True looks only at the same group (a participant's own duplicate),
    False only at other groups (flagged across participants). Exact beats near; among near
    matches the most similar, then the earliest, wins.
    """
    *earlier, (key, group, text) = entries
    norm = normalise(text)
    if not norm:
        return None
    grams = None
    best = None
    for other_key, other_group, other_text in earlier:
        if (other_group == group) != same_group:
            continue
        other_norm = normalise(other_text)
        if not other_norm:
            continue
        if other_norm == norm:
            return DuplicateMatch(key, other_key, EXACT, 1.0, same_group)
        # Jaccard of n-gram sets is at most the ratio of the lengths: skip hopeless pairs cheaply.
        shorter, longer = sorted((len(norm), len(other_norm)))
        if shorter < threshold * longer - 2:
            continue
        grams = grams if grams is not None else shingles(text)
        other_grams = shingles(other_text)
        shorter, longer = sorted((len(grams), len(other_grams)))
        if longer == 0 or shorter / longer < threshold:
            continue
        similarity = jaccard(grams, other_grams)
        if similarity >= threshold and (best is None or similarity > best[1]):
            best = (other_key, similarity)
    if best is None:
        return None
    return DuplicateMatch(key, best[0], NEAR, round(best[1], 4), same_group)
