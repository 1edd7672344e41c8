"""`compare RUN_A RUN_B`: judge drift between two runs, each figure with its 95 % interval."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.results.compare import CompareError, runs_compare
from judging.runs.lookup import run_by_id


def _num(value, digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(low, high) -> str:
    return "-" if low is None or high is None else f"[{_num(low)}, {_num(high)}]"


class Command(BaseCommand):
    help = (
        "Judge drift of RUN_B against RUN_A over the units both judged: score correlation, mean shift, "
        "verdict agreement (Cohen's kappa) and rank changes, with 95% intervals; and what their manifests differ in."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_a", type=int)
        parser.add_argument("run_b", type=int)
        parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap rounds (0-100000)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--format", default="table", choices=["table", "json"])

    def handle(self, *args, run_a, run_b, bootstrap, seed, format, **options):
        if not 0 <= bootstrap <= 100_000:
            raise CommandError("--bootstrap must be between 0 and 100000.")
        runs = {}
        for number in (run_a, run_b):
            try:
                runs[number] = run_by_id(run_id=number, queryset=JudgeRun.objects.select_related("dataset", "endpoint"))
                refuse_archived_in_command(runs[number], runs[number].dataset)
            except (RunNotFound, ArchivedError) as error:
                raise CommandError(str(error)) from None
        try:
            report = runs_compare(run_a=runs[run_a], run_b=runs[run_b], rounds=bootstrap, seed=seed)
        except CompareError as error:
            raise CommandError(str(error)) from None
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=1, default=str))
            return
        write = self.stdout.write
        write(
            f"Run {run_b} against run {run_a} ({report['mode']}; value: {report['value']}): {report['units']} units "
            f"judged by both, {report['only_a']} only by {run_a}, {report['only_b']} only by {run_b}"
        )
        write(f"{'measure':<30} {'estimate':>9} {'95% interval':>18}")
        for kind in ("pearson", "spearman", "kendall"):
            value = report["correlation"][kind]
            write(f"{kind + ' correlation':<30} {_num(value['r']):>9} {_interval(value['low'], value['high']):>18}")
        if report["correlation"]["reason"]:
            write(f"  ({report['correlation']['reason']})")
        shift = report["shift"]
        write(f"{'mean shift (b - a)':<30} {_num(shift['shift']):>9} {_interval(shift['low'], shift['high']):>18}")
        verdicts = report["verdicts"]
        agreement = verdicts["agreement"]
        write(
            f"{'verdict agreement':<30} {_num(agreement['rate']):>9} "
            f"{_interval(agreement['low'], agreement['high']):>18}"
        )
        write(
            f"{'Cohen kappa':<30} {_num(verdicts['kappa']):>9} {_interval(verdicts['kappa_low'], verdicts['kappa_high']):>18}"
        )
        write(
            f"\n{'model':<28} {'mean a':>8} {'mean b':>8} {'shift':>8} {'95% interval':>18} {'rank a':>7} {'rank b':>7}"
        )
        for row in report["models"]["models"]:
            write(
                f"{row['model']:<28} {_num(row['mean_a']):>8} {_num(row['mean_b']):>8} {_num(row['shift']):>8} "
                f"{_interval(row['low'], row['high']):>18} {row['rank_a']:>7} {row['rank_b']:>7}"
                + (f"  moved {row['moved']:+d}" if row["moved"] else "")
            )
        if report["manifest_changes"]:
            write("\nWhat the manifests differ in:")
            for change in report["manifest_changes"]:
                write(f"  {change['field']}: {change['a']!r} -> {change['b']!r}")
        else:
            write("\nThe manifests record the same data, templates, judge and parameters.")
