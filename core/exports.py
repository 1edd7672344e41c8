"""The one export writer: every table a researcher can download, as CSV or JSONL, streamed.

Apps register their tables with `@exporter("name")`; a table is a list of fields plus a lazy
iterator of rows, so memory stays flat however many rows there are. The `export` command and
the API both go through `export_table` and `iter_export`.

Every CSV starts with a UTF-8 byte order mark (so Excel reads Chinese text right) and has its
formula-like cells defused (core.csvsafe). Timestamps are UTC to the second ("2026-11-28
09:48:06" in a CSV, which spreadsheets read as a date; "2026-11-28T09:48:06Z" in JSON Lines), and
probability columns have 6 decimal places. `core/bundles.py` zips every table of a study,
dataset, run or campaign into one download. A table of participant data is registered with
`personal=True`: each export of it is written to the audit log, whoever asks for it.
"""

import csv
import datetime
import decimal
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import StreamingHttpResponse

from core.audit import AuditAction, audit_record
from core.csvsafe import csv_defuse
from core.errors import UserbenchError

ROW_FORMATS = ("csv", "jsonl")
# A probability has 6 decimal places in a file, not a float's 17 digits.
PROBABILITY_DIGITS = 6
# Timestamps are UTC to the second: a spreadsheet reads the CSV form as a date and time, JSON
# Lines keep ISO 8601 with the zone.
CSV_TIME = "%Y-%m-%d %H:%M:%S"
JSONL_TIME = "%Y-%m-%dT%H:%M:%SZ"
# Rows per database round trip when an exporter streams a queryset: memory stays flat.
EXPORT_CHUNK = 2000


@dataclass(frozen=True)
class ExportTable:
    fields: Sequence[str]
    rows: Iterable[Mapping[str, Any]]
    # A spreadsheet's view of the same rows, when it differs from the JSONL one (e.g. a dict
    # spread over one column per key): the CSV's header and each row turned into its cells.
    csv_fields: Sequence[str] | None = None
    csv_row: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    # Columns of probabilities and rates: written rounded to PROBABILITY_DIGITS decimal places.
    probabilities: Sequence[str] = ()


class ExportError(UserbenchError):
    """A request for an export that cannot be served; the message says what to change."""


Exporter = Callable[..., ExportTable]
EXPORTERS: dict[str, Exporter] = {}
# Tables that hold what participants wrote or told about themselves: every export is audited.
# The value says whether a given scope is personal (e.g. items only of a study's dataset).
PERSONAL_EXPORTS: dict[str, Callable[..., bool]] = {}
# Tables that can also carry participants' raw text when a researcher asks (`raw=True`).
RAW_EXPORTS: set[str] = set()
# Tables that can be scoped to one annotation campaign (`campaign=`), as a campaign's page shows them.
CAMPAIGN_EXPORTS: set[str] = set()
# Tables that can be asked for with no dataset, study or run (every row): they take
# `workspaces` (a set of workspace ids, None for all) and keep only the rows of those.
ACROSS_EXPORTS: set[str] = set()
# Tables that can add each row's question text (`question_text=True`) beside its question id.
QUESTION_TEXT_EXPORTS: set[str] = set()


def exporter(
    name: str,
    *,
    personal: bool | Callable[..., bool] = False,
    raw: bool = False,
    campaign: bool = False,
    across: bool = False,
    question_text: bool = False,
) -> Callable[[Exporter], Exporter]:
    """Register `fn(*, dataset=None, study=None, run=None) -> ExportTable` under `name`.

    `personal`: the table holds participant data, so each export is audited; a function of
    (dataset, study, run) says so per scope. `raw`: the function also takes `raw: bool` and
    then adds participants' unreviewed text. `campaign`: the function also takes `campaign`
    (an annotation campaign, or None) and then gives that campaign's table only. `across`: the
    function also takes `workspaces` (a set of workspace ids, None for every one) and keeps only
    their rows; a table that is not `across` needs a dataset, study or run, which the caller
    looked up within the person's workspaces. `question_text`: the function also takes
    `question_text: bool` and then adds a `question_text` column, last.
    """

    def register(fn: Exporter) -> Exporter:
        if name in EXPORTERS and EXPORTERS[name] is not fn:
            raise ValueError(f"Two exporters are registered as {name!r}.")
        EXPORTERS[name] = fn
        if personal:
            PERSONAL_EXPORTS[name] = personal if callable(personal) else (lambda **scope: True)
        if raw:
            RAW_EXPORTS.add(name)
        if campaign:
            CAMPAIGN_EXPORTS.add(name)
        if across:
            ACROSS_EXPORTS.add(name)
        if question_text:
            QUESTION_TEXT_EXPORTS.add(name)
        return fn

    return register


def export_table(
    what: str,
    *,
    dataset=None,
    study=None,
    run=None,
    campaign=None,
    raw: bool = False,
    actor=None,
    via: str = "",
    workspaces: set[int] | None = None,
    question_text: bool = False,
) -> ExportTable:
    """The registered table `what` for the given scope; ExportError names the valid choices.
    `campaign` scopes the tables registered with `campaign=True` to one annotation campaign;
    `question_text` adds the question's text to the tables registered with `question_text=True`
    (the export is then audited: a study's questions are participants' words).

    `actor` (the person asking, None for the command line) and `via` ("api", "command") go to
    the audit log when the table is personal, and always when `raw` is asked for. `workspaces`:
    the ids of the workspaces the person may read (None: every one, for a superuser and the
    command line); the scope objects must already be ones they may read.
    """
    try:
        make = EXPORTERS[what]
    except KeyError:
        raise ExportError(f"Unknown export {what!r}; choose one of: {', '.join(sorted(EXPORTERS))}.") from None
    if raw and what not in RAW_EXPORTS:
        raise ExportError(
            f"The raw option applies to {', '.join(sorted(RAW_EXPORTS)) or 'no export'}, not to {what!r}."
        )
    if campaign is not None and what not in CAMPAIGN_EXPORTS:
        raise ExportError(
            f"The campaign scope applies to {', '.join(sorted(CAMPAIGN_EXPORTS)) or 'no export'}, not to {what!r}."
        )
    if question_text and what not in QUESTION_TEXT_EXPORTS:
        raise ExportError(
            f"The question_text option applies to {', '.join(sorted(QUESTION_TEXT_EXPORTS))}, not to {what!r}."
        )
    scope: dict[str, Any] = {"dataset": dataset, "study": study, "run": run}
    if question_text:
        scope["question_text"] = True
    if raw:
        scope["raw"] = True
    elif campaign is not None:
        scope["campaign"] = campaign
    if what in ACROSS_EXPORTS:
        scope["workspaces"] = workspaces
    table = make(**scope)
    personal = what in PERSONAL_EXPORTS and PERSONAL_EXPORTS[what](dataset=dataset, study=study, run=run)
    if personal or raw or question_text:
        named = {key: str(value) for key, value in (("dataset", dataset), ("study", study), ("run", run)) if value}
        if question_text:
            named["question_text"] = "yes"
        owner = next((value.workspace_id for value in (dataset, study, run, campaign) if value is not None), None)
        # An export across workspaces is recorded in each of them (their researchers read it).
        owners: list[int | None] = [owner] if owner is not None or workspaces is None else [*sorted(workspaces)]
        for place in owners or [None]:
            audit_record(
                actor=actor,
                action=AuditAction.RAW_EXPORT if raw else AuditAction.EXPORT,
                target=f"export:{what}",
                details={**named, "via": via},
                workspace=place,
            )
    return table


def _plain(value: Any, time_format: str = JSONL_TIME) -> Any:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC)
        return value.strftime(time_format)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def _rounded(row: Mapping[str, Any], columns: Sequence[str]) -> Mapping[str, Any]:
    """The row with its probability columns rounded (to PROBABILITY_DIGITS decimal places)."""
    if not columns:
        return row
    out = dict(row)
    for column in columns:
        value = out.get(column)
        if isinstance(value, float):
            out[column] = round(value, PROBABILITY_DIGITS)
    return out


def _cell(value: Any) -> str:
    value = _plain(value, CSV_TIME)
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return csv_defuse(json.dumps(value, ensure_ascii=False))
    if isinstance(value, (bool, int, float)):
        return str(value)
    # Records end with CRLF, as CSV has it; a line break inside a cell is a bare LF, which
    # spreadsheets show as a line break rather than a stray character.
    # (Defused first: a cell that starts with a carriage return is quoted as such.)
    return csv_defuse(str(value)).replace("\r\n", "\n").replace("\r", "\n")


class _LineBuffer:
    """csv.writer target that hands back each line instead of storing it."""

    def write(self, line: str) -> str:
        return line


BOM = "\ufeff"


def iter_csv(table: ExportTable) -> Iterator[str]:
    """The table as CSV lines: a byte order mark first, every text cell defused, with the
    table's spreadsheet view (`csv_fields`, `csv_row`) when it has one."""
    writer = csv.writer(_LineBuffer())
    fields = table.csv_fields or table.fields
    yield BOM + writer.writerow([csv_defuse(field) for field in fields])
    for row in table.rows:
        row = _rounded(row, table.probabilities)
        cells = table.csv_row(row) if table.csv_row is not None else row
        yield writer.writerow([_cell(cells.get(field)) for field in fields])


def iter_jsonl(table: ExportTable) -> Iterator[str]:
    for row in table.rows:
        row = _rounded(row, table.probabilities)
        record = {field: _plain(row.get(field)) for field in table.fields}
        yield json.dumps(record, ensure_ascii=False, default=str) + "\n"


def iter_export(table: ExportTable, fmt: str) -> Iterator[str]:
    if fmt == "csv":
        return iter_csv(table)
    if fmt == "jsonl":
        return iter_jsonl(table)
    raise ExportError(f"Unknown format {fmt!r}; choose one of: {', '.join(ROW_FORMATS)}.")


CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


def export_response(table: ExportTable, fmt: str, filename: str) -> StreamingHttpResponse:
    """Stream a table to the browser as a download."""
    response = StreamingHttpResponse(iter_export(table, fmt), content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response
