import json

from django.core.management.base import BaseCommand, CommandError

from annotation.exports import BT_FIELDS, bt_rows
from annotation.management.commands._campaign_args import fmt, resolve
from annotation.reliability_report import reliability_report
from annotation.report import bt_report
from annotation.style_report import style_beside_plain, style_bt_report
from core.command_workspace import add_workspace_argument
from core.exports import ExportTable, iter_csv
from stats.ranking import DEFAULT_ALPHA

STYLE_CSV_FIELDS = [
    "dataset",
    "model",
    "style_score",
    "style_lower",
    "style_upper",
    "style_rank",
    "bt_score",
    "bt_lower",
    "bt_upper",
    "places_moved",
]


def _count(value) -> str:
    return "-" if value is None else f"{value:,}"


def elo(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def elo_scale_note(report: dict) -> str:
    """What the Elo column means, for the table's readers."""
    where = f"{report['elo_anchor']} reads" if report["elo_anchor"] else "the mean model reads"
    return (
        f"Score: natural-log strength; Elo: Arena's scale, {report['elo_points_per_unit']:.2f} points per unit "
        f"(400 / ln 10), {where} {report['elo_rating']:g}."
    )


class Command(BaseCommand):
    help = "Bradley-Terry ranking with bootstrap intervals from the human votes of a dataset."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--campaign")
        add_workspace_argument(parser)
        parser.add_argument("--bootstrap", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--alpha",
            type=float,
            default=None,
            help="regularisation of the fit. By default the plain maximum-likelihood estimate (alpha 0, as "
            "FastChat fits it) where the comparison graph is strongly connected (every model both wins and "
            f"loses along chains of votes), and alpha {DEFAULT_ALPHA} only where it is not; the output says "
            "which was used. An explicit value is used as given (0 refuses a graph that is not strongly connected).",
        )
        parser.add_argument(
            "--anchor",
            help="model that reads exactly 1000 on the Elo scale (default: the mean model reads 1000)",
        )
        parser.add_argument(
            "--keep-flagged",
            action="store_true",
            help="Keep votes of annotators flagged by gold accuracy or speed.",
        )
        parser.add_argument(
            "--style",
            action="store_true",
            help="also fit BT with style covariates (length, markdown headers, list items, bold): the table "
            "shows both side by side with the style effects, json adds a 'style' key, csv gives the "
            "style-controlled ranking beside the plain one",
        )
        parser.add_argument(
            "--annotator-reliability",
            action="store_true",
            help="fit each annotator's reliability with the strengths (Crowd-BT: 1 careful, 0.5 random, 0 "
            "adversarial), anchored on gold votes where there are any, else on the most consistent annotators; "
            "the scores come from that fit (questions resampled whole) and json adds 'annotators' and 'anchor'",
        )
        parser.add_argument(
            "--weights",
            choices=["none", "ipw"],
            default="none",
            help="ipw: weigh each vote by 1 / the probability with which its pair was chosen, as Arena fits "
            "(adaptive campaigns record it; every counted vote must carry one)",
        )
        parser.add_argument("--format", choices=["table", "csv", "json"], default="table")

    def handle(
        self,
        *args,
        dataset,
        campaign=None,
        bootstrap,
        seed,
        keep_flagged,
        format,
        style=False,
        alpha=None,
        anchor=None,
        annotator_reliability=False,
        weights="none",
        **options,
    ):
        if not 0 <= bootstrap <= 100_000:
            raise CommandError("--bootstrap must be between 0 and 100000.")
        if alpha is not None and not 0 <= alpha < float("inf"):
            raise CommandError(f"--alpha must be zero or positive, got {alpha}.")
        found, target = resolve(self, dataset, campaign, options.get("workspace"))
        if annotator_reliability and (style or weights != "none"):
            raise CommandError("--annotator-reliability cannot be combined with --style or --weights.")
        try:
            report = bt_report(
                dataset=found,
                campaign=target,
                rounds=0 if annotator_reliability else bootstrap,
                seed=seed,
                alpha=alpha,
                exclude_flagged=not keep_flagged,
                anchor=anchor,
                weights=weights,
            )
            if annotator_reliability:
                report = reliability_report(
                    dataset=found,
                    campaign=target,
                    rounds=bootstrap,
                    seed=seed,
                    exclude_flagged=not keep_flagged,
                    anchor=anchor,
                    plain=report,
                )
        except ValueError as error:
            # alpha=0 on votes whose maximum-likelihood scores are infinite, or an anchor that is not
            # ranked: the message names the models.
            raise CommandError(str(error)) from None
        if style:
            styled = style_bt_report(
                dataset=found, campaign=target, rounds=bootstrap, seed=seed, exclude_flagged=not keep_flagged
            )
            self._style(report, styled, format=format, dataset=found)
            return
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        if format == "csv":
            # The same columns as the "bt" export, through the same writer.
            table = ExportTable(fields=BT_FIELDS, rows=bt_rows(report, dataset=found))
            self.stdout.write("".join(iter_csv(table)), ending="")
            return
        self.stdout.write(
            f"{'rank':>4}  {'model':<28} {'score':>8}  {'interval':>19}  {'Elo':>7}  {'Elo interval':>15}  "
            f"{'W':>5} {'L':>5} {'T':>5}"
        )
        notes: dict[str, int] = {}
        for s in report["scores"]:
            interval = f"{fmt(s['lower'])} .. {fmt(s['upper'])}"
            # Greyed on the pages; here a rank that means nothing is put in brackets.
            rank = str(s["rank"]) if report["ranks_meaningful"] else f"({s['rank']})"
            mark = f"  ^{notes.setdefault(s['note'], len(notes) + 1)}" if s["note"] else ""
            self.stdout.write(
                f"{rank:>4}  {s['label']:<28} {fmt(s['score']):>8}  {interval:>19}  {elo(s['elo']):>7}  "
                f"{elo(s['elo_lower']) + ' .. ' + elo(s['elo_upper']):>15}  {s['wins']:>5} {s['losses']:>5} {s['ties']:>5}{mark}"
            )
        for note, number in notes.items():
            self.stdout.write(f"^{number} {note}")
        if not report["ranks_meaningful"]:
            self.stdout.write(f"Ranks not meaningful: {report['ranks_reason']}")
        self.stdout.write(
            f"{report['votes']} votes, {report['cannot_determine']} cannot-determine left out, "
            f"{report['comparisons']} fitted; {report['bootstrap_rounds']} bootstrap rounds; alpha {report['alpha']:g}."
        )
        self.stdout.write(f"Fit: {report['regularisation']}.")
        self.stdout.write(elo_scale_note(report))
        if report["disconnected"]:
            self.stdout.write("Not ranked (no votes connect them to the others): " + ", ".join(report["disconnected"]))
        if report["excluded_annotators"]:
            self.stdout.write(
                "Left out (flagged by gold accuracy or speed): " + ", ".join(report["excluded_annotators"])
            )
        if report.get("weights") == "ipw":
            self.stdout.write("Votes weighed by 1 / the probability with which their pair was chosen (ipw).")
        self._separation(report)
        if annotator_reliability:
            self._annotators(report)

    def _separation(self, report):
        rows = report.get("votes_to_separate") or []
        if rows:
            self.stdout.write("More votes to separate neighbours (95 %; spread as so far / on that pair alone):")
        for row in rows:
            more = (
                "separated"
                if row["separated"]
                else f"{_count(row['more_votes'])} / {_count(row['more_votes_on_pair'])}"
            )
            self.stdout.write(f"  {row['higher']} > {row['lower']}: {more}")

    def _annotators(self, report):
        self.stdout.write(
            f"Annotator reliability (1 careful, 0.5 random, 0 adversarial); anchor: {report['anchor']['note']}"
        )
        self.stdout.write(f"  {'annotator':<24} {'reliability':>11}  {'interval':>15} {'votes':>6}  flags")
        for row in report["annotators"]:
            interval = f"{fmt(row['lower'])} .. {fmt(row['upper'])}"
            mark = " (anchor)" if row["anchor"] else ""
            self.stdout.write(
                f"  {row['label']:<24} {fmt(row['reliability']):>11}  {interval:>15} {row['votes']:>6}  "
                f"{', '.join(row['flags'])}{mark}"
            )
        if report["plain_moved"]:
            self.stdout.write("The reliabilities move the plain ranking for: " + ", ".join(report["plain_moved"]))

    def _style(self, report, styled, *, format, dataset):
        rows = style_beside_plain(report, styled)
        if format == "json":
            self.stdout.write(json.dumps({**report, "style": styled}, ensure_ascii=False, indent=2))
            return
        if format == "csv":
            table = ExportTable(
                fields=STYLE_CSV_FIELDS,
                rows=[
                    {
                        "dataset": dataset.name,
                        "model": row["label"],
                        "style_score": row["style"]["score"],
                        "style_lower": row["style"]["lower"],
                        "style_upper": row["style"]["upper"],
                        "style_rank": row["style"]["rank"],
                        "bt_score": row["plain"]["score"],
                        "bt_lower": row["plain"]["lower"],
                        "bt_upper": row["plain"]["upper"],
                        "places_moved": row["moved"],
                    }
                    for row in rows
                ],
            )
            self.stdout.write("".join(iter_csv(table)), ending="")
            return
        self.stdout.write(
            f"{'model':<28} {'BT':>8} {'interval':>19}  {'style-controlled':>16} {'interval':>19} {'moved':>6}"
        )
        for row in rows:
            plain, held = row["plain"], row["style"]
            self.stdout.write(
                f"{row['label']:<28} {fmt(plain['score']):>8} {fmt(plain['lower']) + ' .. ' + fmt(plain['upper']):>19}  "
                f"{fmt(held['score']):>16} {fmt(held['lower']) + ' .. ' + fmt(held['upper']):>19} {row['moved']:>+6d}"
            )
        self.stdout.write("style effects (log-odds per typical normalised difference):")
        for coefficient in styled["coefficients"]:
            interval = f"{fmt(coefficient['lower'])} .. {fmt(coefficient['upper'])}"
            self.stdout.write(f"  {coefficient['feature']:<12} {fmt(coefficient['beta']):>8}  {interval:>19}")
        if styled["dropped_features"]:
            self.stdout.write(
                "never different between the two answers, left out: " + ", ".join(styled["dropped_features"])
            )
        if styled.get("reason"):
            # Not estimable (no scores above) or too few votes to rely on (scores to be read as greyed).
            self.stdout.write(
                f"Style control {'(greyed) ' if styled.get('estimable', True) else ''}{styled['reason']}."
            )
        self.stdout.write(
            f"{styled['votes']} votes fitted, {styled['without_answers']} without both answers stored, "
            f"{styled['cannot_determine']} cannot-determine left out; {styled['bootstrap_rounds']} bootstrap rounds."
        )
