import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._campaign_args import fmt, fmt_p, resolve
from annotation.report import alignment_report
from core.archiving import ArchivedError, refuse_archived_in_command
from core.command_workspace import add_workspace_argument
from judging.errors import RunNotFound
from judging.models import JudgeRun
from judging.runs.lookup import run_by_id


class Command(BaseCommand):
    help = "BT against judge correlations, satisfaction against judge score per intent, and agreement."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--run", required=True, type=int, help="Judge run id (pointwise).")
        parser.add_argument("--campaign")
        add_workspace_argument(parser)
        parser.add_argument("--bootstrap", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args, dataset, run, campaign=None, bootstrap, seed, format, **options):
        found, target = resolve(self, dataset, campaign, options.get("workspace"))
        try:
            judge_run = run_by_id(run_id=run, queryset=JudgeRun.objects.filter(dataset=found))
        except RunNotFound:
            raise CommandError(f"No judge run {run} on dataset {dataset!r}.") from None
        try:
            refuse_archived_in_command(judge_run)
        except ArchivedError as error:
            raise CommandError(str(error)) from None
        report = alignment_report(dataset=found, run=judge_run, campaign=target, rounds=bootstrap, seed=seed)
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2, default=str))
            return
        w = self.stdout.write
        w(f"Judge run {judge_run.pk} ({judge_run.judge_model}) on {found.name}")
        w("\nBT score against mean judge score per model")
        for p in report["bt_vs_judge"]["points"]:
            w(f"  {p['model']:<28} BT {fmt(p['bt']):>8}  judge {fmt(p['judge'], 2):>6}")
        self._corr(report["bt_vs_judge"])
        w("\nMean satisfaction (1-5) against mean judge score per intent")
        for p in report["satisfaction_vs_judge"]["points"]:
            w(
                f"  {p['intent']:<28} satisfaction {fmt(p['satisfaction'], 2):>5} (n={p['respondents']})  judge {fmt(p['judge'], 2):>6}"
            )
        self._corr(report["satisfaction_vs_judge"])
        a = report["agreement"]
        w("\nAgreement")
        w(
            f"  raw agreement with ties {fmt(a['raw_agreement'])} ({a['raw_agreement_pairs']} pairs), "
            f"without ties {fmt(a['raw_agreement_without_ties'])} ({a['raw_agreement_without_ties_pairs']} pairs)"
        )
        w(f"  Fleiss' kappa {fmt(a['fleiss_kappa'])}, Krippendorff's alpha {fmt(a['krippendorff_alpha'])}")
        for row in a["cohen_pairs"]:
            w(f"  Cohen's kappa {row['rater_a']} / {row['rater_b']}: {fmt(row['kappa'])} over {row['units']} items")
        for row in a["against_judge"]:
            w(
                f"  {row['rater']} against the judge: agreement {fmt(row['agreement'])}, kappa {fmt(row['kappa'])} over {row['units']} items"
            )
        bias = a["position_bias"]
        w(f"  left answer wins {fmt(bias['left_rate'])} of decisive votes (p {_p(bias['p'])})")

    def _corr(self, corr):
        if not corr["meaningful"]:
            # Coefficients alone, marked: no p-value or interval is printed as if it meant something.
            rs = ", ".join(f"{kind} r = {fmt(corr[kind]['r'])}" for kind in ("pearson", "spearman", "kendall"))
            self.stdout.write(f"  not meaningful (n = {corr['n']}): {corr['reason']}")
            self.stdout.write(f"  ({rs})")
            return
        for kind in ("pearson", "spearman", "kendall"):
            c = corr[kind]
            self.stdout.write(
                f"  {kind:<9} r = {fmt(c['r'])}  p {_p(c['p'])}  95% CI {fmt(c['low'])} .. {fmt(c['high'])}  (n = {corr['n']})"
            )
            if kind in corr["notes"]:
                self.stdout.write(f"            {corr['notes'][kind]}")


def _p(value) -> str:
    """The p-value after "p": "= 0.0123", or "< 0.0001"."""
    text = fmt_p(value)
    return text if text.startswith("<") else f"= {text}"
