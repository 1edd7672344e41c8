"""The checks every imported file goes through, in one place. Pure: no Django imports.

A file is read line by line and the first thing that could not be stored, or would be stored
wrongly, is refused as a `FormatError` naming the line and what was expected. The rules are the
same on SQLite and PostgreSQL, so a file that imports on one imports on the other:

- Each line is decoded as UTF-8 on its own, so a bad byte is reported on its own line and
  column. A UTF-8 byte-order mark at the start is accepted (the URS CSV has one). A line whose
  bytes are a quarter or more NUL is UTF-16 or UTF-32 without a byte-order mark (those put a NUL
  beside every ASCII character; UTF-8 text has none) and is refused as not UTF-8 too.
- A line (for CSV, a record, which may span lines) is at most `MAX_LINE_CHARS` characters.
- JSON is strict: no NaN or Infinity (Python's json accepts them by default), no number
  literal longer than `MAX_NUMBER_CHARS` or beyond the float range, objects and lists nested
  at most `MAX_NESTING` deep (deeper input used to crash the parser), no key twice in one object.
- No text, anywhere, may hold U+0000 (PostgreSQL cannot store it; SQLite could, and then the two
  databases would disagree) or an unpaired surrogate (it has no UTF-8 form).
- Free text (questions, references, answers) is at most `MAX_TEXT_CHARS` characters, about ten
  times the longest in the public data (8,745, a URS question); ids, categories and names are
  at most their database column, which callers pass in from the model fields.
- Blank lines are skipped, in CSV as in JSONL: many JSONL files end with one.
"""

import csv
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NoReturn, Self

from core.errors import UserbenchError

MAX_TEXT_CHARS = 100_000
MAX_LINE_CHARS = 1_000_000
MAX_NESTING = 10
MAX_NUMBER_CHARS = 100

# UTF-8 takes at most 4 bytes a character, so reading this many bytes finds any overlong line.
_MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# A complete JSON string, or a bracket, or a quote that opens a string never closed.
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]')


class FormatError(UserbenchError):
    """A line of an imported file that cannot be imported.

    `code` says what kind of fault for callers that word it their own way: "json" (syntax),
    "encoding", "nul", or "invalid" for everything else.
    """

    def __init__(self, line: int, detail: str, *, code: str = "invalid"):
        super().__init__(f"line {line}: {detail}")
        self.line = line
        self.detail = detail
        self.code = code


def shown(text: str, width: int = 60) -> str:
    """A value quoted for a message, cut short so a huge field does not become a huge message."""
    return repr(text) if len(text) <= width else f"{text[: width - 1]!r}…"


def describe(value: Any) -> str:
    """What a JSON value is, for 'expected X, found Y' messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return shown(value)
    return "a list" if isinstance(value, list) else "an object"


# ---------------------------------------------------------------- lines


def _raw_lines(source: Iterable[bytes] | Iterable[str]) -> Iterator[bytes | str]:
    if hasattr(source, "readline"):
        # A bounded readline: a file without line ends is not read whole into memory.
        while raw := source.readline(_MAX_LINE_BYTES + 1):
            yield raw
    else:
        yield from source


def _decode(raw: bytes, number: int) -> str:
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    text, bad = None, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = error.start
    # UTF-16 and UTF-32 put a NUL byte beside every ASCII character: a quarter of the bytes or
    # more. UTF-8 text has none, so such a line is refused at its first NUL even if it decodes.
    nul = raw.find(0) if raw.count(0) >= 2 and raw.count(0) * 4 >= len(raw) else -1
    if nul >= 0 and (bad is None or nul < bad):
        bad, hint = nul, "; the file looks like UTF-16 or UTF-32"
    else:
        hint = "; the file looks like UTF-16" if number == 1 and raw.startswith(_UTF16_MARKS) else ""
    if bad is not None:
        column = len(raw[:bad].decode("utf-8")) + 1
        raise FormatError(number, f"not UTF-8 (byte 0x{raw[bad]:02x} at column {column}){hint}", code="encoding")
    assert text is not None  # it is None only when the bytes did not decode, refused above
    return text


def numbered_lines(source: Iterable[bytes] | Iterable[str]) -> Iterator[tuple[int, str]]:
    """Each line of `source` with its number from 1, decoded and with its line end kept.

    `source` is a binary stream (decoded here, line by line, so errors name their line), or a
    text stream or any iterable of lines (already decoded; a leading BOM is dropped).
    """
    for number, raw in enumerate(_raw_lines(source), start=1):
        if isinstance(raw, bytes):
            if len(raw) > _MAX_LINE_BYTES:
                raise FormatError(number, f"the line is longer than {MAX_LINE_CHARS} characters")
            text = _decode(raw, number)
        else:
            text = raw[1:] if number == 1 and raw.startswith("\ufeff") else raw
        if len(text) > MAX_LINE_CHARS:
            raise FormatError(number, f"the line is longer than {MAX_LINE_CHARS} characters")
        yield number, text


# ---------------------------------------------------------------- CSV


class _RecordFeed:
    """Lines for csv.reader that knows where the current record started and refuses runaway records.

    A quote that is never closed makes the rest of the file one field; this stops it at
    MAX_LINE_CHARS and names the line where the record began.
    """

    def __init__(self, lines: Iterator[tuple[int, str]]):
        self._lines = lines
        self.last = 0
        self.record_start = 1
        self._size = 0

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> str:
        number, text = next(self._lines)
        self.last = number
        self._size += len(text)
        if self._size > MAX_LINE_CHARS:
            raise FormatError(
                self.record_start, f"a CSV record longer than {MAX_LINE_CHARS} characters; is a closing quote missing?"
            )
        return text

    def record_done(self) -> None:
        self.record_start = self.last + 1
        self._size = 0


def csv_rows(source: Iterable[bytes] | Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """(line where the record starts, its cells) for each non-blank record of a CSV file.

    Strict CSV: a quote inside an unquoted field, or one never closed, is refused. The cells
    are not checked yet: `csv_cells` does that once the caller knows the columns.
    """
    # csv's own guard (131,072 characters a field) would fire before ours and without the field's
    # name; it is process-wide, so it is only ever raised, to our record limit, never lowered.
    if csv.field_size_limit() < MAX_LINE_CHARS:
        csv.field_size_limit(MAX_LINE_CHARS)
    feed = _RecordFeed(numbered_lines(source))
    reader = csv.reader(feed, strict=True)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            where = "" if feed.last <= feed.record_start else f"; the record runs on to line {feed.last}"
            raise FormatError(feed.record_start, f"not valid CSV ({error}){where}") from None
        start = feed.record_start
        feed.record_done()
        if row:
            yield start, row


def csv_cells(row: list[str], line: int, columns: list[str]) -> dict[str, str]:
    """The row as {column: cell}, refused unless it has exactly the header's columns and every
    cell can be stored."""
    if len(row) != len(columns):
        raise FormatError(line, f"expected {len(columns)} columns ({', '.join(columns)}), found {len(row)}")
    for name, cell in zip(columns, row):
        check_storable(cell, line, name)
    return dict(zip(columns, row))


# ---------------------------------------------------------------- JSON


class _Refused(ValueError):
    """Raised inside json.loads by our hooks; turned into a FormatError with the line number."""


def _refuse_constant(name: str) -> NoReturn:
    raise _Refused(f"{name} is not a number JSON allows; expected a finite number or null")


def _number_text(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text)} characters; the limit is {MAX_NUMBER_CHARS}")


def _parse_int(text: str) -> int:
    _number_text(text)
    return int(text)


def _parse_float(text: str) -> float:
    _number_text(text)
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text} is beyond the range of a float")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict:
    value = {}
    for key, item in pairs:
        if key in value:
            raise _Refused(f"field {shown(key)} appears twice in one object")
        value[key] = item
    return value


def _check_nesting(text: str, line: int) -> None:
    # Most lines have too few brackets to be deep; only those are scanned.
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise FormatError(
                    line,
                    f"nesting deeper than {MAX_NESTING} levels of objects and lists (at column {match.start() + 1})",
                )
        elif token in "]}":
            depth -= 1
        elif token == '"':  # a string that never closes: the JSON parser stops there too
            return


def _check_strings(value: Any, line: int, field: str) -> None:
    if isinstance(value, str):
        check_storable(value, line, field)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(key, line, field)
            _check_strings(item, line, field)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, line, field)


def _refuse_raw_nul(text: str, line: int) -> None:
    """JSON allows no raw control character; for NUL, name the field it sits in when there is one."""
    try:
        json_object(text.replace("\x00", "\\u0000"), line)
    except FormatError as error:
        if error.code == "nul":
            raise
    column = text.index("\x00") + 1
    raise FormatError(line, f"a NUL character (U+0000) at column {column}; JSON text cannot hold one", code="nul")


def json_object(text: str, line: int) -> dict:
    """One JSONL line as a dict, with every rule of the module docstring checked."""
    if "\x00" in text:
        _refuse_raw_nul(text, line)
    _check_nesting(text, line)
    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
            object_pairs_hook=_object,
        )
    except json.JSONDecodeError as error:
        reason = error.msg.removesuffix(" at")  # "Invalid control character at"
        raise FormatError(
            line, f"expected one JSON object per line ({reason} at column {error.colno})", code="json"
        ) from None
    except _Refused as error:
        raise FormatError(line, str(error)) from None
    if not isinstance(value, dict):
        raise FormatError(line, f"expected a JSON object, found {describe(value)}")
    for key, item in value.items():
        check_storable(key, line, key)
        _check_strings(item, line, key)
    return value


def json_objects(source: Iterable[bytes] | Iterable[str]) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file."""
    for line, text in numbered_lines(source):
        if text.strip():
            # Without its line end, so that a JSON error's column is on this line.
            yield line, json_object(text.rstrip("\r\n"), line)


# ---------------------------------------------------------------- fields


def unstorable(text: str) -> re.Match | None:
    """Where `text` holds a character that a database cannot store, or that one would store and
    the other not (NUL, an unpaired surrogate); None when it holds none."""
    return _UNSTORABLE.search(text)


def check_storable(text: str, line: int, field: str) -> None:
    """Refuse a field holding a character that `unstorable` finds."""
    match = unstorable(text)
    if match is None:
        return
    where = f"at character {match.start() + 1}"
    if match.group() == "\x00":
        raise FormatError(
            line,
            f"field {shown(field)} contains a NUL character (U+0000) {where}; no database column can hold it",
            code="nul",
        )
    raise FormatError(
        line,
        f"field {shown(field)} contains an unpaired surrogate "
        f"(U+{ord(match.group()):04X}) {where}; it is not Unicode text",
    )


def check_length(text: str, line: int, field: str, limit: int) -> str:
    if len(text) > limit:
        raise FormatError(line, f"field {shown(field)} is {len(text)} characters; the limit is {limit}")
    return text


def require_fields(value: Mapping, line: int, names: Iterable[str]) -> None:
    missing = [name for name in names if name not in value]
    if missing:
        raise FormatError(line, f"missing field(s) {', '.join(missing)}")


def text_field(
    value: Any, line: int, name: str, *, limit: int = MAX_TEXT_CHARS, blank: bool = False, null: bool = False
) -> str:
    """A text value of at most `limit` characters; empty only if `blank`, null (as "") only if `null`."""
    if value is None and null:
        return ""
    if not isinstance(value, str) or not (blank or value.strip()):
        found = "" if isinstance(value, str) else f", found {describe(value)}"
        kind = "a text" if blank else "a non-empty text"
        raise FormatError(line, f"expected {kind} in {shown(name)}{found}")
    return check_length(value, line, name, limit)


def name_field(value: Any, line: int, name: str, *, limit: int) -> str:
    """A name (model, annotator, category): text, stripped, 1 to `limit` characters."""
    return check_length(text_field(value, line, name, limit=MAX_LINE_CHARS).strip(), line, name, limit)


def id_field(value: Any, line: int, name: str, *, limit: int) -> str:
    """An id from a source file: an integer or a non-empty text of at most `limit` characters, as text."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str) and not value.strip()):
        raise FormatError(line, f"expected {name} to be a number or text, found {describe(value)}")
    return check_length(str(value), line, name, limit)
