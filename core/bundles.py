"""One zip of a study, dataset, run or campaign: every table (through the one export writer,
core/exports.py), its manifest and a README.txt data dictionary, streamed.

The zip is written as it is sent: `zipfile` writes into a pipe the response drains after each
chunk of rows (data descriptors instead of seeking back), so memory stays flat however many rows
there are. The row counts are known only once a table is written, so the manifest and the README
come last in the archive.
"""

import datetime
import io
import json
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.exports import CSV_TIME, PROBABILITY_DIGITS, ExportTable, iter_export

# Bytes gathered before a chunk goes to the client: small enough to keep memory flat.
CHUNK_BYTES = 64 * 1024

# What each column means, for README.txt (one meaning per name across the tables).
COLUMNS: dict[str, str] = {
    # shared
    "dataset": "the dataset's name",
    "study": "the study's slug",
    "run": "the judge run's id",
    "campaign": "the annotation campaign's slug (empty for imported votes)",
    "question_id": "the item's id in its dataset (external_id)",
    "external_id": "the item's id in its dataset",
    "question_text": "the item's question (only when asked for: question_text=1 / --question-text)",
    "model": "the candidate model's name",
    "language": "en or zh",
    "intent": "what the participant wanted to achieve (one of the study's intents)",
    "category": "the item's category",
    "subcategory": "the item's subcategory",
    "country": "country the participant gave (or the item's)",
    "created_at": "when the row was written, UTC",
    "prompt_tokens": "tokens sent, as the server counted them",
    "completion_tokens": "tokens received, as the server counted them",
    "latency_ms": "time the call took, in milliseconds",
    "note": "why a figure is missing or not meaningful, in words",
    # items
    "question": "the item's question, as reviewed",
    "reference": "items: the reference answer (empty when none); leaderboard: the reference model (pairwise)",
    "metadata": "the item's other fields, as JSON",
    # answers
    "response": "the candidate model's answer",
    "origin": "how the answer came: imported, generated, or the injection probe",
    # votes
    "vote_id": "the vote's id",
    "model_a": "the model of answer A (the order is the pair's, not the screen's)",
    "model_b": "the model of answer B",
    "winner": "model_a, model_b, tie or cannot_determine",
    "winner_model": "the name of the model that won (model_a's or model_b's); empty for a tie or cannot_determine",
    "annotator": "the annotator's user name (or the label of an imported vote)",
    "gold": "true for a gold pair (its answer was known): left out of the statistics",
    "model_a_on_left": "whether answer A was shown on the left",
    "seconds_spent": "seconds from the pair shown to the vote",
    "comment": "the annotator's comment",
    "choice_probability": "adaptive campaigns: the probability with which this pair of models was chosen",
    "chosen_by": "adaptive campaigns: which part of the design chose the pair (uniform or information)",
    # judgments
    "order": "the order the two answers were given to the judge (pairwise)",
    "template": "the judge template's name",
    "template_version": "the judge template's version",
    "final_score": "the judge's score (pointwise)",
    "outcome": "the judge's verdict (pairwise)",
    "scores": "the judge's scores per dimension, as JSON",
    "parse_error": "why the reply could not be read as a verdict (empty when it could)",
    "call_error": "why the call failed (empty when it did not)",
    "flags": "what was noticed about the reply, as JSON",
    "raw_text": "the judge's reply, verbatim",
    "cached": "whether the reply came from the response cache",
    # leaderboard
    "group": "the leaderboard's group (overall, by language, by intent, ...)",
    "column": "the column of the group",
    "mean": "mean score (pointwise)",
    "low": "lower end of the 95% interval of the mean",
    "high": "upper end of the 95% interval of the mean",
    "count": "judgments counted",
    "failures": "calls or replies that gave no score",
    "rank": "rank by interval overlap (1 is best)",
    "rank_meaningful": "whether the intervals allow a ranking",
    "items": "items compared",
    "decisive": "comparisons that were not ties",
    "win_rate": "share of comparisons won (pairwise), a probability",
    "win_rate_se": "standard error of the win rate",
    "lose_rate": "share of comparisons lost",
    "tie_rate": "share of ties",
    "error_rate": "share of comparisons without a verdict",
    "length": "mean answer length, in characters",
    "lc_win_rate": "length-controlled win rate",
    "lc_low": "lower end of the length-controlled win rate's interval",
    "lc_high": "upper end of the length-controlled win rate's interval",
    # manifests
    "manifest": "what the run was made from (dataset version and hash, answers' hashes, templates, endpoint), as JSON",
    # Bradley-Terry
    "coefficient": "Bradley-Terry coefficient (log strength)",
    "lower": "lower end of its 95% bootstrap interval (1000 rounds, seed 0)",
    "upper": "upper end of its 95% bootstrap interval",
    "elo": "the coefficient on Arena's Elo scale (400 / ln 10 per unit; the mean model at 1000)",
    "elo_lower": "lower end of the interval on the Elo scale",
    "elo_upper": "upper end of the interval on the Elo scale",
    "wins": "votes won",
    "losses": "votes lost",
    "ties": "ties",
    "regularised": "whether the fit was regularised",
    "fit": "how the fit was made, and why regularised",
    "ranked": "false for a model the votes do not connect to the others",
    # agreement
    "metric": "the agreement measure",
    "rater_a": "first annotator (or empty for all)",
    "rater_b": "second annotator, or the judge run",
    "units": "votes or pairs the measure counts",
    "agreement": "share of the units agreed on",
    "value": "the measure's value",
    # submissions
    "submission_id": "the submission's number",
    "status": "in_progress or submitted",
    "prolific_pid": "the participant's Prolific ID",
    "prolific_study_id": "Prolific's study id",
    "prolific_session_id": "Prolific's session id",
    "consented_at": "when the participant consented, UTC",
    "started_at": "when the submission was started, UTC",
    "submitted_at": "when the submission was sent, UTC",
    "age_group": "the age group the participant chose",
    "occupation": "the occupation the participant gave",
    "llms_used": "the assistants the participant uses (in a CSV: one column `used: <service>` each, 1 or 0)",
    "frequency": "how often the participant uses them",
    "satisfaction": "satisfaction per intent, 1-5, 0 not used (in a CSV: one column `satisfaction: <intent>` each)",
    "attention_check": "the answer given to the attention check",
    "attention_passed": "whether the attention check was passed",
    "excluded": "whether the submission is excluded (screened out)",
    "exclusion_reason": "why it is excluded",
    "case_count": "cases the participant reported",
    # cases
    "case_id": "the case's id",
    "position": "the case's number within its submission",
    "service": "the assistant the conversation was with",
    "conversation": "the conversation, as reviewed",
    "intent_other": "the intent in the participant's words, for other",
    "review_status": "where the case stands in the review",
}


@dataclass
class BundleTable:
    """One table of a bundle: its file name (without extension) and the export table."""

    name: str
    table: ExportTable
    rows: int = field(default=0)


def column_meaning(column: str) -> str:
    if column.startswith("used: "):
        return f"1 if the participant uses {column[6:]}, else 0 (other: the names of services no longer offered)"
    if column.startswith("satisfaction: "):
        return f"satisfaction with the assistants for {column[14:]}: 1-5, 0 not used, empty when not asked"
    return COLUMNS.get(column, "")


def bundle_readme(*, title: str, tables: list[BundleTable], fmt: str, made_at: datetime.datetime) -> str:
    """README.txt: what the bundle holds, its conventions, and each column of each file."""
    lines = [
        title,
        "=" * len(title),
        "",
        f"Made {made_at.astimezone(datetime.UTC).strftime(CSV_TIME)} UTC by Userbench.",
        "",
        "Conventions",
        "-----------",
        "- Every timestamp is UTC, to the second: '2026-11-28 09:48:06' in a CSV (spreadsheets read it as a "
        "date and time), '2026-11-28T09:48:06Z' in JSON Lines.",
        f"- Probabilities and rates have {PROBABILITY_DIGITS} decimal places.",
        "- CSV files are UTF-8 with a byte order mark; a cell that starts like a formula is prefixed with '.",
        "- JSON Lines files hold one JSON object per line.",
        "- manifest.json says what the bundle was made from, and how many rows each file has.",
        "",
        "Files",
        "-----",
    ]
    lines += [f"- {entry.name}.{fmt}: {entry.rows} row(s)" for entry in tables]
    for entry in tables:
        columns = list((entry.table.csv_fields or entry.table.fields) if fmt == "csv" else entry.table.fields)
        lines += ["", f"{entry.name}.{fmt}", "-" * len(f"{entry.name}.{fmt}")]
        lines += [f"- {column}: {column_meaning(column) or '(see the column name)'}" for column in columns]
    return "\n".join(lines) + "\n"


class _Pipe(io.RawIOBase):
    """Where zipfile writes: bytes gathered until the response takes them (it cannot seek, so
    zipfile writes each member's sizes after its data)."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts, self.size = [], 0
        return data


def iter_bundle(*, title: str, tables: Iterable[BundleTable], manifest: Mapping[str, Any], fmt: str) -> Iterator[bytes]:
    """The zip's bytes, chunk by chunk: each table as `<name>.<fmt>`, then manifest.json (the
    given manifest with the bundle's own entry: scope, time, files and their row counts) and
    README.txt."""
    pipe = _Pipe()
    written: list[BundleTable] = []
    made_at = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in tables:
            with archive.open(f"{entry.name}.{fmt}", "w", force_zip64=True) as member:
                for piece in iter_export(entry.table, fmt):
                    member.write(piece.encode("utf-8"))
                    entry.rows += 1
                    if pipe.size >= CHUNK_BYTES:
                        yield pipe.take()
            # CSV: the header line is no row.
            entry.rows -= 1 if fmt == "csv" else 0
            written.append(entry)
            if pipe.size:
                yield pipe.take()
        files = [{"file": f"{entry.name}.{fmt}", "rows": entry.rows} for entry in written]
        whole = {
            **manifest,
            "bundle": {"title": title, "made_at": made_at.strftime("%Y-%m-%dT%H:%M:%SZ"), "files": files},
        }
        archive.writestr("manifest.json", json.dumps(whole, ensure_ascii=False, indent=2, default=str) + "\n")
        archive.writestr("README.txt", bundle_readme(title=title, tables=written, fmt=fmt, made_at=made_at))
    yield pipe.take()
