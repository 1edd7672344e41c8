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
    return AnalyzerEngine(nlp_engine=engine, registry=_registry(language), supported_languages=[language])
