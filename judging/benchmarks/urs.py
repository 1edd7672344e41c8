"""URS (Wang et al., a user-centric multi-intent benchmark): everything that is this paper's.

Its item file (data_all.csv), its judge prompts (Appendix C, Tables 9-12, and the Chinese prompt
of the released code), its generation preset, its Table 4, and where each choice comes from.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.csvsafe import csv_defuse, csv_restore
from core.import_checks import FormatError, csv_cells, csv_rows, shown, text_field
from curation.datasets.public_formats import NO_LIMITS, ItemRecord
from curation.registry import DatasetFormat
from judging.benchmarks.registry import Benchmark, GenerationPreset, TemplateSet, benchmark_register
from judging.papers.tables import urs_lines, urs_table_4
from judging.prompts.building import (
    INTENT_ALIASES,
    INTENTS,
    DefaultTemplate,
    urs_code_template,
    urs_template,
)

NAME = "urs"
CODE_SET = "urs-code"

URS_INTENTS = {
    "Factual_QA": "factual_qa",
    "Solve_Professional_Problem": "solve_professional_problem",
    "API": "api",
    "Text_Assistant": "text_assistant",
    "Ask_for_Advice": "ask_for_advice",
    "Seek_Creativity": "seek_creativity",
    "Leisure": "leisure",
}
URS_LANGUAGES = {"EN": "en", "CN": "zh"}
URS_COLUMNS = ["question", "reference_ans", "user_intent", "language"]
URS_INTENT_NAMES = {value: key for key, value in URS_INTENTS.items()}
URS_LANGUAGE_NAMES = {value: key for key, value in URS_LANGUAGES.items()}


def read_urs(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """Every record of iter_urs, in a list."""
    return list(iter_urs(source, columns=columns))


def iter_urs(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[ItemRecord]:
    """URS data_all.csv: question, reference_ans, user_intent, language (UTF-8, BOM allowed).

    question: non-empty text; reference_ans: text, may be empty; user_intent: one of
    URS_INTENTS; language: EN or CN. Items are numbered 0001, 0002, ... in file order. One
    record at a time: a bad row is refused when it is read, not after the file.
    """
    rows = csv_rows(source)
    first = next(rows, None)
    header = [name.lstrip("\ufeff") for name in (first[1] if first else [])]
    if header != URS_COLUMNS:
        found = ",".join(header)[:200] or "nothing"
        raise FormatError(first[0] if first else 1, f"expected the header {','.join(URS_COLUMNS)}, found {found}")
    count = 0
    for line, row in rows:
        cells = csv_cells(row, line, URS_COLUMNS)
        question = text_field(cells["question"], line, "question")
        reference = text_field(cells["reference_ans"], line, "reference_ans", blank=True)
        intent = URS_INTENTS.get(cells["user_intent"])
        if intent is None:
            raise FormatError(
                line, f"unknown user_intent {shown(cells['user_intent'])}; expected one of {', '.join(URS_INTENTS)}"
            )
        language = URS_LANGUAGES.get(cells["language"])
        if language is None:
            raise FormatError(line, f"unknown language {shown(cells['language'])}; expected EN or CN")
        count += 1
        yield (
            ItemRecord(
                external_id=f"{count:04d}",
                # A file Userbench wrote has its formula-like cells quoted (core.csvsafe): read them back.
                question=csv_restore(question),
                reference=csv_restore(reference),
                intent=intent,
                language=language,
            )
        )
    if not count:
        raise FormatError(1, "the file has a header but no rows")


def urs_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """A URS CSV row; text cells that a spreadsheet would run as formulas are quoted."""
    return {
        "question": csv_defuse(item["question"]),
        "reference_ans": csv_defuse(item["reference"]),
        "user_intent": URS_INTENT_NAMES.get(item["intent"], item["intent"]),
        "language": URS_LANGUAGE_NAMES.get(item["language"], item["language"]),
    }


def write_urs(items: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Item rows as URS CSV with a BOM, row by row."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=URS_COLUMNS)
    yield "\ufeff"
    writer.writeheader()
    for item in items:
        writer.writerow(urs_row(item))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


FORMAT = DatasetFormat(
    name=NAME,
    label=_("URS (CSV)"),
    fields=tuple(URS_COLUMNS),
    read=iter_urs,
    write=write_urs,
    source=NAME,
    source_label=_("URS"),
)


# ---- Judge templates ----------------------------------------------------------------------------


def _paper_templates() -> list[DefaultTemplate]:
    return [
        DefaultTemplate(f"{NAME}/{intent}/{language}", "pointwise", language, urs_template(intent, language))
        for intent in INTENTS
        for language in ("en", "zh")
    ]


def _code_templates() -> list[DefaultTemplate]:
    return [
        DefaultTemplate(f"{CODE_SET}/{intent}/zh", "pointwise", "zh", urs_code_template(intent)) for intent in INTENTS
    ]


def _paper_template_for(*, intent: str = "", language: str = "en", **_item: str) -> str:
    return f"{NAME}/{INTENT_ALIASES.get(intent, intent)}/{'zh' if language == 'zh' else 'en'}"


def _code_template_for(*, intent: str = "", **_item: str) -> str:
    return f"{CODE_SET}/{INTENT_ALIASES.get(intent, intent)}/zh"


def _criteria_for(name: str) -> list[str]:
    parts = name.split("/")
    return list(INTENTS[parts[1]][2]) if len(parts) > 1 and parts[1] in INTENTS else []


PAPER_SET = TemplateSet(
    name=NAME,
    description="URS paper (Appendix C, Tables 9-12): English or Chinese, following the question's language",
    label=_("URS: one template per intent, in the question's language"),
    templates=_paper_templates,
    template_for=_paper_template_for,
    criteria_for=_criteria_for,
    default=True,
)
RELEASED_CODE_SET = TemplateSet(
    name=CODE_SET,
    description="URS released code (src/evaluation.py): its Chinese prompt for every question",
    label=_("URS as its released code judged: the Chinese prompt for every question"),
    templates=_code_templates,
    template_for=_code_template_for,
    criteria_for=_criteria_for,
)


def paper_table(board: dict) -> tuple[object, list[str]]:
    table = urs_table_4(board)
    return table, urs_lines(table)


BENCHMARK = benchmark_register(
    Benchmark(
        name=NAME,
        position=1,
        paper="URS: user-reported scenarios (Table 4)",
        data_from="github.com/Alice1998/URS: data/data_all.csv (1,846 questions with their 8-point "
        "GPT-4 references, intents and languages)",
        format=FORMAT,
        items=("data/data_all.csv", "data_all.csv"),
        mode="pointwise",
        template_sets=(PAPER_SET, RELEASED_CODE_SET),
        # The authors' src/evaluation.py calls its judges with no temperature and no system prompt.
        judge_temperature=None,
        judge_max_tokens=None,
        judge_system_prompt="",
        judge_source="URS Appendix C (the prompt); src/evaluation.py of the authors' code (no temperature, "
        "no system prompt, no max_tokens)",
        generation_preset=GenerationPreset(
            name=NAME,
            source="URS 4.2: the services ran at their default temperature, the question alone as the "
            "user's message (the authors' getModelOutput.py sends no temperature and no system prompt)",
            temperature=None,
            label=_("URS: the service's default temperature, the question alone"),
        ),
        table=paper_table,
        table_groups=("intent",),
        group="intent",
    )
)
