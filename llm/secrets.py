"""API keys: which environment variables may hold one, and keeping their values out of stored text.

An endpoint names the variable that holds its key; the key itself is read at call time and
never stored. Two things could still leak it:

* an endpoint naming a variable that is not a key at all (SECRET_KEY, DATABASE_URL) would send
  that value to whatever server the endpoint points at. Only names ending in `_API_KEY`, or
  listed in the LLM_KEY_VARIABLES setting, may be used, and never Django's own secrets.
* an upstream that repeats the key in an error or a reply ("invalid key sk-...") would get it
  stored with the reply, shown on the run page and exported. Every text that comes back from an
  upstream passes through `redact_secrets` before anything keeps it (`storable` does this for
  replies and call errors alike: `llm.calls.ChatResult`, `llm.errors.LLMCallError`), which
  replaces the value of every allowed key variable that is set, and any stretch of 8 or more
  of its characters at its start or end (an upstream that masks the middle of a key), with
  REDACTED.
"""

import os
import re

from django.conf import settings
from django.utils.translation import gettext as _

KEY_SUFFIX = "_API_KEY"
# Variables that hold the application's own secrets: never a key for an endpoint, whatever the setting says.
NEVER_KEYS = frozenset({"SECRET_KEY", "DATABASE_URL"})
REDACTED = "[redacted]"
# Shorter values are not treated as secrets: redacting "abc" everywhere would garble replies.
MIN_SECRET_LENGTH = 8
_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def key_variable_allowed(name: str) -> bool:
    """True when an endpoint may read its key from the environment variable `name`."""
    if not _NAME.fullmatch(name or "") or name in NEVER_KEYS:
        return False
    return name.endswith(KEY_SUFFIX) or name in set(getattr(settings, "LLM_KEY_VARIABLES", ()))


def key_variable_problem(name: str) -> str:
    """Why `name` cannot hold an endpoint's key, or "" when it can."""
    if key_variable_allowed(name):
        return ""
    return _(
        "%(name)s cannot hold an endpoint's key: name a variable ending in %(suffix)s "
        "(e.g. OPENAI_API_KEY), or list it in LLM_KEY_VARIABLES."
    ) % {"name": repr(name), "suffix": KEY_SUFFIX}


_names_seen: tuple[tuple, list[str]] = ((), [])


def _key_variable_names() -> list[str]:
    """The allowed key variables present in the environment. Decoding every name of the
    environment was most of the cost of redacting a reply, so the list is kept until the set of
    names (compared undecoded, from CPython's os.environ._data) or the setting changes; the
    values are read afresh every time."""
    global _names_seen
    listed = tuple(getattr(settings, "LLM_KEY_VARIABLES", ()))
    signature = (frozenset(getattr(os.environ, "_data", None) or os.environ), listed)
    if _names_seen[0] != signature:
        _names_seen = (signature, [name for name in os.environ if key_variable_allowed(name)])
    return _names_seen[1]


def secret_values() -> list[str]:
    """The values of every allowed key variable that is set, longest first (read afresh: a key
    may be set or rotated while the process runs)."""
    values = {os.environ.get(name, "") for name in _key_variable_names()}
    return sorted((value for value in values if len(value) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where the secret, or 8+ characters of its start or its end, appear in text."""
    spans = []
    head, tail = secret[:MIN_SECRET_LENGTH], secret[-MIN_SECRET_LENGTH:]
    for match in re.finditer(re.escape(head), text):
        end = match.end()
        while end < len(text) and end - match.start() < len(secret) and text[end] == secret[end - match.start()]:
            end += 1
        spans.append((match.start(), end))
    for match in re.finditer(re.escape(tail), text):
        start = match.start()
        offset = len(secret) - MIN_SECRET_LENGTH
        while start > 0 and offset > 0 and text[start - 1] == secret[offset - 1]:
            start -= 1
            offset -= 1
        spans.append((start, match.end()))
    return spans


def redact_secrets(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every API key value (whole, or 8+ characters of its start or end) replaced.

    Pass `secrets` to reuse one `secret_values()` over many texts."""
    if not text:
        return text
    spans = []
    for secret in secret_values() if secrets is None else secrets:
        if secret[:MIN_SECRET_LENGTH] in text or secret[-MIN_SECRET_LENGTH:] in text:
            spans.extend(_spans(text, secret))
    if not spans:
        return text
    spans.sort()
    merged = [list(spans[0])]
    for start, end in spans[1:]:
        if start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, cursor = [], 0
    for start, end in merged:
        out.append(text[cursor:start])
        out.append(REDACTED)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def storable(text: str) -> str:
    """Upstream text as it may be stored: key values redacted, NUL bytes shown as U+FFFD."""
    return redact_secrets(text).replace("\x00", "\ufffd")
