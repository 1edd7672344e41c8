"""The kinds of personal information Userbench hints at, their names for readers, and the
resident identity card checksum: shared by the hints (`curation/pii/hints.py`), the presidio
analyzers (`curation/pii/engine.py`) and the pages that name what was found.
"""

import re

from django.utils.translation import gettext_lazy as _

LANGUAGES = ("en", "zh")
CN_RESIDENT_ID = "CN_RESIDENT_ID"
PHONE = "PHONE_NUMBER"
EMAIL = "EMAIL_ADDRESS"
URL = "URL"
ID_NUMBER = "ID_NUMBER"

# What reviewers and participants read instead of presidio's entity names.
ENTITY_LABELS = {
    EMAIL: _("e-mail address"),
    PHONE: _("phone number"),
    CN_RESIDENT_ID: _("resident identity card number"),
    ID_NUMBER: _("ID number"),
    "CREDIT_CARD": _("payment card number"),
    "IBAN_CODE": _("bank account number (IBAN)"),
    "IP_ADDRESS": _("IP address"),
    URL: _("link"),
}


def entity_label(entity: str) -> str:
    """The entity's name in the reader's language; an entity without a label keeps its own name."""
    return str(ENTITY_LABELS.get(entity, entity))


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
