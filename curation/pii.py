"""Personal-information hints for the human reviewer, with presidio-analyzer, fully offline.

Hints only: nothing is redacted silently, and names and addresses (which need NER models we
cannot download) are left to the mandatory human PII review. One analyzer per language, each
from NoOpNlpEngine and a RecognizerRegistry of pattern recognizers (CONVENTIONS: presidio).
"""

import os

# tldextract reads this when its default extractor is built: an empty list means it uses the
# suffix list bundled in the package and never touches the network.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import logging  # noqa: E402
import re  # noqa: E402

# presidio logs every recognizer it loads at INFO; that is noise in a worker's log.
logging.getLogger("presidio-analyzer").setLevel(logging.WARNING)
from dataclasses import dataclass  # noqa: E402
from functools import lru_cache  # noqa: E402

import regex  # noqa: E402  (presidio matches with `regex`, whose flag values differ from `re`'s)
import tldextract  # noqa: E402
from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer, RecognizerRegistry  # noqa: E402
from presidio_analyzer.nlp_engine import NoOpNlpEngine  # noqa: E402
from presidio_analyzer.predefined_recognizers import (  # noqa: E402
    CreditCardRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UrlRecognizer,
)

LANGUAGES = ("en", "zh")
CN_RESIDENT_ID = "CN_RESIDENT_ID"
PHONE = "PHONE_NUMBER"
EMAIL = "EMAIL_ADDRESS"

_OFFLINE_TLD = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
# Regions whose numbers participants are likely to paste; presidio's defaults omit CN.
PHONE_REGIONS = ("CN", "HK", "TW", "SG", "US", "GB", "CA", "AU", "DE", "FR", "IN", "JP")


def resident_id_is_valid(number: str) -> bool:
    """居民身份证 check: 17 digits, a real birth date, and the ISO 7064 MOD 11-2 check character."""
    number = number.upper()
    if not re.fullmatch(r"[1-9]\d{16}[\dX]", number):
        return False
    year, month, day = int(number[6:10]), int(number[10:12]), int(number[12:14])
    if not (1900 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17]


class ResidentIdRecognizer(PatternRecognizer):
    """18-character PRC resident identity card numbers, kept only when the checksum holds."""

    PATTERNS = [Pattern("CN resident id", r"(?<![0-9A-Za-z])[1-9]\d{16}[\dXx](?![0-9A-Za-z])", 0.6)]
    CONTEXT = ["身份证", "身份证号", "证件号", "id card", "identity"]

    def __init__(self, supported_language: str):
        super().__init__(
            supported_entity=CN_RESIDENT_ID,
            patterns=self.PATTERNS,
            context=self.CONTEXT,
            supported_language=supported_language,
            name=f"ResidentIdRecognizer-{supported_language}",
        )

    def validate_result(self, pattern_text: str) -> bool:
        # True raises the score to the maximum, False drops the match.
        return resident_id_is_valid(pattern_text)


class CnMobileRecognizer(PatternRecognizer):
    """Mainland mobile numbers written without a country code, glued to Chinese text.

    libphonenumber's matcher wants a non-word boundary, which Chinese characters are not,
    so "电话13812345678" would be missed without this pattern.
    """

    PATTERNS = [Pattern("CN mobile", r"(?<!\d)(?:\+?86[ -]?)?1[3-9]\d[ -]?\d{4}[ -]?\d{4}(?!\d)", 0.5)]
    CONTEXT = ["电话", "手机", "联系", "phone", "mobile", "call"]

    def __init__(self, supported_language: str):
        super().__init__(
            supported_entity=PHONE,
            patterns=self.PATTERNS,
            context=self.CONTEXT,
            supported_language=supported_language,
            name=f"CnMobileRecognizer-{supported_language}",
        )


class OfflineEmailRecognizer(EmailRecognizer):
    """presidio's email pattern, with the top-level domain checked against the bundled list."""

    def validate_result(self, pattern_text: str) -> bool:
        return _OFFLINE_TLD(pattern_text).fqdn != ""


def _registry(language: str) -> RecognizerRegistry:
    flags = regex.DOTALL | regex.MULTILINE | regex.IGNORECASE
    if language == "zh":
        # Chinese characters are \w in Unicode mode, so "邮箱是ab@x.com" would become one
        # address; ASCII mode keeps word characters to what an address can hold.
        flags |= regex.ASCII
    registry = RecognizerRegistry(supported_languages=[language], global_regex_flags=flags)
    for recognizer in (
        OfflineEmailRecognizer(supported_language=language),
        PhoneRecognizer(supported_language=language, supported_regions=PHONE_REGIONS),
        CnMobileRecognizer(language),
        ResidentIdRecognizer(language),
        CreditCardRecognizer(supported_language=language),
        IbanRecognizer(supported_language=language),
        IpRecognizer(supported_language=language),
        UrlRecognizer(supported_language=language),
    ):
        if isinstance(recognizer, PatternRecognizer):
            # add_recognizer keeps each recognizer's own flags; the registry's apply only
            # to recognizers it loads itself.
            recognizer.global_regex_flags = flags
        registry.add_recognizer(recognizer)
    return registry


@lru_cache(maxsize=len(LANGUAGES))
def analyzer_for(language: str) -> AnalyzerEngine:
    """One engine per language, built once per process (building takes ~0.1 s)."""
    engine = NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    engine.load()
    return AnalyzerEngine(
        nlp_engine=engine, registry=_registry(language), supported_languages=[language]
    )


@dataclass(frozen=True)
class PiiHint:
    entity: str
    start: int
    end: int
    score: float
    text: str


def pii_hints(text: str, language: str = "en", threshold: float = 0.4) -> list[PiiHint]:
    """Spans that look like personal information, sorted, overlaps resolved to the best score.

    Every URL is a hint too, since links can carry names; the reviewer decides.
    """
    language = language if language in LANGUAGES else "en"
    if not text:
        return []
    results = analyzer_for(language).analyze(text=text, language=language, score_threshold=threshold)
    # Highest score first, then longest: keep a span only if it overlaps nothing kept.
    results.sort(key=lambda r: (-r.score, -(r.end - r.start), r.start))
    kept = []
    for result in results:
        if all(result.end <= other.start or result.start >= other.end for other in kept):
            kept.append(result)
    kept.sort(key=lambda r: r.start)
    return [PiiHint(r.entity_type, r.start, r.end, round(r.score, 2), text[r.start : r.end]) for r in kept]


def highlight_segments(text: str, hints) -> list[tuple[str, str]]:
    """The text cut into (segment, entity) pairs, entity '' for plain text, for templates."""
    segments, cursor = [], 0
    for hint in sorted(hints, key=lambda h: h["start"] if isinstance(h, dict) else h.start):
        start = hint["start"] if isinstance(hint, dict) else hint.start
        end = hint["end"] if isinstance(hint, dict) else hint.end
        entity = hint["entity"] if isinstance(hint, dict) else hint.entity
        if start < cursor or end > len(text):
            continue
        if start > cursor:
            segments.append((text[cursor:start], ""))
        segments.append((text[start:end], entity))
        cursor = end
    if cursor < len(text):
        segments.append((text[cursor:], ""))
    return segments
