"""Export tables of a study: its submissions and its cases. Never the resume token."""

import datetime
from collections.abc import Mapping
from typing import Any

from core.exports import ExportError, ExportTable, exporter
from curation.choices import SATISFACTION_INTENTS
from curation.models import Study
from curation.studies.selectors import (
    CASE_EXPORT_FIELDS,
    CASE_RAW_FIELDS,
    SUBMISSION_EXPORT_FIELDS,
    study_case_rows,
    study_submission_rows,
)


def _require_study(study, what: str):
    if study is None:
        raise ExportError(f"The {what} export needs --study SLUG.")
    return study


# The columns that hold a timestamp; in a CSV they read as dates (UTC, whole seconds).
TIMESTAMPS = ("consented_at", "started_at", "submitted_at")


def _spreadsheet_time(value: str) -> str:
    """An ISO timestamp as a spreadsheet reads a date and time: "2026-03-01 09:00:05" (UTC)."""
    if not value:
        return ""
    moment = datetime.datetime.fromisoformat(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def submission_spreadsheet(study: Study) -> tuple[list[str], Any]:
    """The submissions as a spreadsheet wants them: one column per service the study offers
    (`used: <service>`, 1 or 0; services no longer offered in `used: other`) and per intent
    rated (`satisfaction: <intent>`, 1-5, 0 for "not used", empty when not asked), instead of a
    list and a dict as JSON in one cell; dates without microseconds. JSON Lines keep the rows as
    they are."""
    services = list(study.services or [])
    intents = [intent.value for intent in SATISFACTION_INTENTS]
    spread = {
        "llms_used": [f"used: {service}" for service in services] + ["used: other"],
        "satisfaction": [f"satisfaction: {intent}" for intent in intents],
    }
    fields = [column for field in SUBMISSION_EXPORT_FIELDS for column in spread.get(field, [field])]

    def cells(row: Mapping[str, Any]) -> dict[str, Any]:
        used = list(row.get("llms_used") or [])
        ratings = row.get("satisfaction") or {}
        out: dict[str, Any] = {field: row.get(field) for field in fields if field in row}
        out.update({field: _spreadsheet_time(row.get(field) or "") for field in TIMESTAMPS})
        out.update({f"used: {service}": int(service in used) for service in services})
        out["used: other"] = "; ".join(str(name) for name in used if name not in services)
        out.update({f"satisfaction: {intent}": ratings.get(intent, "") for intent in intents})
        return out

    return fields, cells


@exporter("submissions", personal=True)
def submissions_export(*, dataset=None, study=None, run=None) -> ExportTable:
    """One row per submission of the study, with usage, attention and exclusion (in a CSV, one
    column per service and per intent: submission_spreadsheet)."""
    study = _require_study(study, "submissions")
    csv_fields, csv_row = submission_spreadsheet(study)
    return ExportTable(
        fields=SUBMISSION_EXPORT_FIELDS,
        rows=study_submission_rows(study=study),
        csv_fields=csv_fields,
        csv_row=csv_row,
    )


@exporter("cases", personal=True, raw=True)
def cases_export(*, dataset=None, study=None, run=None, raw: bool = False) -> ExportTable:
    """One row per reported case of a finished submission, with its submission's language,
    country and exclusion; the reviewed text, and the raw text only when asked for (`raw`)."""
    fields = CASE_EXPORT_FIELDS + (CASE_RAW_FIELDS if raw else [])
    return ExportTable(fields=fields, rows=study_case_rows(study=_require_study(study, "cases"), raw=raw))
