"""The presidio side of PII hints: offline pattern recognizers and one analyzer per language.

Imported only when hints are computed (`pii_hints` in curation/pii/hints.py), so the web pages
and every management command start without loading presidio and spaCy (about 0.8 s).
"""

import logging
import os

# tldextract reads this when its default extractor is built: an empty list means it uses the
# suffix list bundled in the package and never touches the network.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

# presidio logs every recognizer it loads at INFO; that is noise in a worker's log.
logging.getLogger("presidio-analyzer").setLevel(logging.WARNING)
from functools import lru_cache  # noqa: E402

import regex  # type: ignore[import-untyped]  # noqa: E402  (presidio matches with `regex`, whose flag values differ from `re`'s; no stubs installed)
import tldextract  # noqa: E402
from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer, RecognizerRegistry  # noqa: E402
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer  # noqa: E402
from presidio_analyzer.nlp_engine import NoOpNlpEngine  # noqa: E402
from presidio_analyzer.predefined_recognizers import (  # noqa: E402
    CreditCardRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UrlRecognizer,
)

from curation.pii.entities import CN_RESIDENT_ID, LANGUAGES, PHONE, PHONE_REGIONS, resident_id_is_valid  # noqa: E402

_OFFLINE_TLD = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


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


class BoundedUrlRecognizer(UrlRecognizer):
    r"""presidio's URL patterns, with a scheme-less link starting only where a run of host-name
    characters starts.

    presidio's `[a-z0-9.\-]{1,253}[.](com|...)` is tried at every position, and at each one
    walks back over up to 253 characters trying some 1,500 top-level domains at every dot: an
    anonymous 20,000-character `a.a.a.` kept a worker busy for 44 s. Without a host-name
    character just before it, the pattern is tried once per run (once per word), and finds
    the same links: the leftmost match of a run already started at the run's start. Only a
    run longer than 253 characters loses a link that began inside it, which no text a person
    writes has.
    """

    START = r"(?<![a-z0-9.\-])"

    def __init__(self, supported_language: str):
        patterns = [Pattern(pattern.name, self._bounded(pattern), pattern.score) for pattern in UrlRecognizer.PATTERNS]
        super().__init__(patterns=patterns, supported_language=supported_language)

    @classmethod
    def _bounded(cls, pattern: Pattern) -> str:
        if pattern.name != "Non schema URL":
            # A scheme or a quote comes first: these start only there.
            return pattern.regex
        flags, rest = pattern.regex[:4], pattern.regex[4:]
        assert flags == "(?i)", pattern.regex[:20]
        return flags + cls.START + rest


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
        BoundedUrlRecognizer(language),
    ):
        if isinstance(recognizer, PatternRecognizer):
            # add_recognizer keeps each recognizer's own flags; the registry's apply only
            # to recognizers it loads itself.
            recognizer.global_regex_flags = flags
        registry.add_recognizer(recognizer)
    return registry


class NoContextEnhancer(ContextAwareEnhancer):
    """Scores as the recognizers gave them. presidio's default enhancer looks for context words
    among the NLP engine's tokens, which NoOpNlpEngine never makes, so it changed nothing, but
    deep-copied every result first: 2.2 of the 3 s a line of 3,000 links took."""

    def __init__(self):
        super().__init__(
            context_similarity_factor=0,
            min_score_with_context_similarity=0,
            context_prefix_count=0,
            context_suffix_count=0,
        )

    def enhance_using_context(self, text, raw_results, nlp_artifacts, recognizers, context=None):
        return raw_results


@lru_cache(maxsize=len(LANGUAGES))
def analyzer_for(language: str) -> AnalyzerEngine:
    """One engine per language, built once per process (building takes ~0.1 s)."""
    engine = NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    engine.load()
    return AnalyzerEngine(
        nlp_engine=engine,
        registry=_registry(language),
        supported_languages=[language],
        context_aware_enhancer=NoContextEnhancer(),
    )
