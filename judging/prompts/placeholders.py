"""A judge template's placeholders: which each mode takes, where a text has them, and why a text
cannot be used (pure: the service that shows a problem translates it)."""

from __future__ import annotations

import difflib
import re

PLACEHOLDERS = {
    "pointwise": ("question", "instruction", "reference", "answer", "intent", "category"),
    "pairwise": ("question", "instruction", "output_1", "output_2", "intent", "category"),
}
REQUIRED_PLACEHOLDERS = {"pointwise": ("answer",), "pairwise": ("output_1", "output_2")}


def gettext_noop(message: str) -> str:
    """Marks a message for the translation catalogue. This module is pure and translates nothing:
    the service that shows a problem translates it."""
    return message


_REQUIRED_MESSAGE = {
    "pointwise": gettext_noop("A pointwise template must contain the {answer} placeholder."),
    "pairwise": gettext_noop("A pairwise template must contain the {output_1} and {output_2} placeholders."),
}
_ALL_PLACEHOLDERS = sorted({name for names in PLACEHOLDERS.values() for name in names})
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(" + "|".join(_ALL_PLACEHOLDERS) + r")\}")
# A brace group that reads like a name (letters, digits, _, spaces, dots, brackets, hyphens) was
# meant as a placeholder: "{instrution}", "{output 1}", "{criteria_dict[user_intent][0]}".
_BRACE_GROUP = re.compile(r"\{\{|\}\}|\{([^{}\n]*)\}")
_NAME_LIKE = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_ .\[\]\-]*\s*", re.ASCII)


def template_placeholders(text: str) -> list[tuple[int, str]]:
    """Every `{...}` group of a template that reads like a placeholder, with its line number."""
    found = []
    for match in _BRACE_GROUP.finditer(text):
        inner = match.group(1)
        if inner is not None and _NAME_LIKE.fullmatch(inner):
            found.append((text.count("\n", 0, match.start()) + 1, inner))
    return found


def template_problem_messages(text: str, mode: str) -> list[tuple[str, dict[str, str]]]:
    """Why a template cannot be used for `mode`, as (message, values) pairs: the message in
    English with %(name)s fields, for the caller to translate; empty when it can be used.

    Unknown or misspelled placeholders are named with their line and the valid ones; a
    placeholder the mode needs and the text lacks is named too."""
    if mode not in PLACEHOLDERS:
        return [(gettext_noop("Unknown mode %(mode)s; use pointwise or pairwise."), {"mode": repr(mode)})]
    valid = PLACEHOLDERS[mode]
    listed = ", ".join(f"{{{name}}}" for name in valid)
    problems: list[tuple[str, dict[str, str]]] = []
    seen = set()
    for line, inner in template_placeholders(text):
        if inner in valid:
            seen.add(inner)
            continue
        close = difflib.get_close_matches(inner.strip().lower(), valid, n=1, cutoff=0.6)
        values = {"line": str(line), "name": f"{{{inner}}}", "mode": mode, "valid": listed}
        if close:
            problems.append(
                (
                    gettext_noop(
                        "line %(line)s: unknown placeholder %(name)s (did you mean %(close)s?); "
                        "valid placeholders for a %(mode)s template: %(valid)s"
                    ),
                    {**values, "close": f"{{{close[0]}}}"},
                )
            )
        else:
            problems.append(
                (
                    gettext_noop(
                        "line %(line)s: unknown placeholder %(name)s; valid placeholders for a %(mode)s "
                        "template: %(valid)s"
                    ),
                    values,
                )
            )
    if not set(REQUIRED_PLACEHOLDERS[mode]) <= seen:
        problems.append((_REQUIRED_MESSAGE[mode], {}))
    return problems


def template_problems(text: str, mode: str) -> list[str]:
    """`template_problem_messages` in English, one sentence each."""
    return [message % values if values else message for message, values in template_problem_messages(text, mode)]
