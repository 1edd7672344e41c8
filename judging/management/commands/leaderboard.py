"""`leaderboard --run RUN`: the run's tables as text, CSV or JSON, in the papers' layouts."""

import json
import unicodedata

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from core.exports import ExportTable, iter_csv
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.results.boards import leaderboard_rows, run_leaderboard
from judging.results.exports import LEADERBOARD_FIELDS
from judging.results.leaderboard import URS_INTENT_LABELS
from judging.results.selectors import GROUPS
from judging.runs.lookup import run_by_id


def _fmt(value, digits=2):
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _right(text: str, width: int) -> str:
    """Right-align by display width: a Chinese character takes two columns."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * max(0, width - shown) + text


class Command(BaseCommand):
    help = "Print a judge run's leaderboard: pointwise means with 95% intervals, or pairwise win rates."

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--by", default=",".join(GROUPS), help=f"comma-separated groups among {', '.join(GROUPS)}")
        parser.add_argument("--format", default="table", choices=["table", "csv", "json"])
        parser.add_argument(
            "--api-apart",
            action="store_true",
            help="show API as its own intent (default: folded into Solve Problem, as the URS tables do)",
        )
        parser.add_argument(
            "--failures-as-minus-one",
            action="store_true",
            help="AlignBench table: average parse failures as -1, as AlignBench's show_result.py does "
            "(default: leave them out)",
        )

    def handle(self, *args, run, by, format, api_apart, failures_as_minus_one, **options):
        try:
            judge_run = run_by_id(run_id=run, queryset=JudgeRun.objects.select_related("dataset", "reference_model"))
            refuse_archived_in_command(judge_run, judge_run.dataset)
        except (RunNotFound, ArchivedError) as error:
            raise CommandError(str(error)) from None
        groups = tuple(g.strip() for g in by.split(",") if g.strip())
        wrong = sorted(set(groups) - set(GROUPS))
        if wrong:
            raise CommandError(f"Unknown group(s) {', '.join(wrong)}; choose among {', '.join(GROUPS)}.")
        switches = {"fold_api": not api_apart, "failures_as_minus_one": failures_as_minus_one}
        if format in ("json", "csv"):
            rows = leaderboard_rows(run=judge_run, by=groups, **switches)
            if format == "json":
                self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1))
                return
            # The same columns as the "leaderboard" export, through the same writer.
            self.stdout.write("".join(iter_csv(ExportTable(fields=LEADERBOARD_FIELDS, rows=rows))), ending="")
            return
        board = run_leaderboard(run=judge_run, by=groups, **switches)
        if board["mode"] == "pairwise":
            self._pairwise(board)
            return
        for group, table in board["tables"].items():
            columns = ["overall"] if group == "overall" else table["columns"]
            title = " (API folded into Solve Problem)" if group == "intent" and switches["fold_api"] else ""
            self.stdout.write(f"\n== {group}{title}")
            self.stdout.write(f"{'model':<24}" + "".join(f"{URS_INTENT_LABELS.get(c, c)[:18]:>22}" for c in columns))
            notes: dict[str, int] = {}
            for row in table["rows"]:
                cells = [row["overall"]] if group == "overall" else [row["cells"][c] for c in columns]
                text = ""
                for cell in cells:
                    mark = "*" * (4 - cell.best) if cell.best else ""
                    if cell.note:
                        # A zero-width interval is footnoted, never shown bare as if certain.
                        mark += "^" + str(notes.setdefault(cell.note, len(notes) + 1))
                    value = (
                        f"{_fmt(cell.mean)} [{_fmt(cell.low)},{_fmt(cell.high)}]{mark}"
                        if cell.mean is not None
                        else "-"
                    )
                    text += f"{value:>22}"
                self.stdout.write(f"{row['model']:<24}{text}")
            failures = sum(row["overall"].failures for row in table["rows"]) if group == "overall" else None
            if failures is not None:
                self.stdout.write(
                    f"parse failures: {failures}; *** best, ** second, * third (equal means share a mark)"
                )
            for note, number in notes.items():
                self.stdout.write(f"^{number} {note}")
        for part in board.get("intent_language", []):
            self._intent_language(part)
        if board.get("alignbench_table"):
            self._alignbench(board["alignbench_table"])

    def _pairwise(self, board):
        self.stdout.write(
            f"{'rank':>4}  {'model':<28} {'win %':>7} {'±se':>6} {'LC win %':>9} {'LC 95% interval':>16} "
            f"{'lose %':>7} {'tie %':>6} {'error %':>8} {'length':>8}"
        )
        for row in board["pairwise"]:
            se = f"{100 * row['win_rate_se']:.1f}" if row["win_rate_se"] is not None else "-"
            lc = f"{100 * row['lc_win_rate']:.2f}" if row.get("lc_win_rate") is not None else "-"
            lc_interval = (
                f"[{100 * row['lc_low']:.1f}, {100 * row['lc_high']:.1f}]" if row.get("lc_low") is not None else "-"
            )
            self.stdout.write(
                f"{row['rank']:>4}  {row['model']:<28} {100 * row['win_rate']:>7.2f} {se:>6} {lc:>9} {lc_interval:>16} "
                f"{100 * row['lose_rate']:>7.2f} "
                f"{100 * row['tie_rate']:>6.2f} {100 * row['error_rate']:>8.2f} {_fmt(row['length'], 1):>8}"
                + ("  (reference)" if row["reference"] else "")
            )
        self.stdout.write("Equal win and lose rates share a rank.")
        if not board["ranks"]["meaningful"]:
            self.stdout.write(f"Ranks not meaningful: {board['ranks']['reason']}")
        self.stdout.write(
            "LC: length-controlled win rate, the win rate predicted at equal answer length, fitted on this "
            "run's own judgments (parse failures left out); shown, never used to rank."
        )

    def _intent_language(self, part):
        """URS Tables 13-14: each intent in English and Chinese, then the part's English and Chinese means."""
        self.stdout.write(f"\n== intent x language, {part['part']} intents (URS Tables 13-14)")
        header = "".join(
            f"{URS_INTENT_LABELS.get(i, i)[:14] + ' ' + lang:>19}"
            for i in part["intents"]
            for lang in part["languages"]
        )
        header += "".join(f"{'all ' + lang:>9}" for lang in part["languages"])
        self.stdout.write(f"{'model':<24}{header}")
        for row in part["rows"]:
            cells = "".join(
                f"{_fmt(row['cells'][f'{i}/{lang}'].mean):>19}" for i in part["intents"] for lang in part["languages"]
            )
            cells += "".join(f"{_fmt(row['languages'][lang].mean):>9}" for lang in part["languages"])
            self.stdout.write(f"{row['model']:<24}{cells}")

    def _alignbench(self, table):
        self.stdout.write(f"\n== AlignBench ({table['label']})")
        self.stdout.write("model".ljust(24) + "".join(_right(c, 9) for c in table["columns"]) + f"{'failures':>10}")
        for row in table["rows"]:
            values = "".join(f"{_fmt(row['values'][c]):>9}" for c in table["columns"])
            self.stdout.write(f"{row['model']:<24}{values}{row['failures']:>10}")
