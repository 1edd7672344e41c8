"""`diagnostics --run RUN`: how far to trust a run's judge, each figure with its 95 % interval."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.archiving import ArchivedError, refuse_archived_in_command
from judging.errors import RunNotFound
from judging.results.diagnostics import run_diagnostics
from judging.results.probe_report import run_probe_report
from judging.results.selectors import run_get


def _num(value, digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(low, high, digits=3) -> str:
    return "-" if low is None or high is None else f"[{_num(low, digits)}, {_num(high, digits)}]"


class Command(BaseCommand):
    help = (
        "Judge diagnostics of a run: position bias, flip rate, length bias, self-preference, parse "
        "failures by template and language, and agreement with human votes, with 95% intervals."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--format", default="table", choices=["table", "json"])

    def handle(self, *args, run, format, **options):
        try:
            judge_run = run_get(run_id=run)
            refuse_archived_in_command(judge_run, judge_run.dataset)
        except (RunNotFound, ArchivedError) as error:
            raise CommandError(str(error)) from None
        report = run_diagnostics(run=judge_run)
        probe = run_probe_report(run=judge_run) if judge_run.injection_probe else None
        if format == "json":
            self.stdout.write(json.dumps({**report, "injection_probe": probe}, ensure_ascii=False, indent=1))
            return
        self._diagnostics(judge_run, report)
        if probe is not None:
            self._probe(probe)

    def _probe(self, probe):
        write = self.stdout.write
        write(f"\ninjection probe ({probe['measure']}; never ranked):")
        for template in probe["templates"]:
            honest = template["honest"]
            write(f"  {template['template']}: honest answers {_num(honest['mean'], 2)} ({honest['n']})")
            for attack in template["attacks"]:
                write(
                    f"    {attack['attack']:<20} {_num(attack['mean'], 2):>6} {_interval(attack['low'], attack['high'], 2):>14} "
                    f"advantage {_num(attack['advantage'], 2):>6} {_interval(attack['advantage_low'], attack['advantage_high'], 2):>16} "
                    f"{attack['verdict'] or '-'}" + (f" ({attack['failures']} unparsed)" if attack["failures"] else "")
                )
        if probe["fooled"]:
            write("FOOLED: " + "; ".join(f"{template} by {attack}" for template, attack in probe["fooled"]))

    def _diagnostics(self, judge_run, report):
        write = self.stdout.write
        write(f"Run {judge_run.pk} ({judge_run.mode}, judge {judge_run.judge_model}): {report['judgments']} judgments")
        mismatch = report.get("model_mismatch")
        if mismatch:
            others = ", ".join(f"{name} ({count})" for name, count in mismatch["other"].items())
            write(
                f"WARNING: the endpoint answered {mismatch['other_replies']} of {mismatch['replies']} replies with "
                f"another model than {mismatch['asked']}: {others}"
            )
        write(f"{'measure':<34} {'estimate':>9} {'95% interval':>18} {'n':>7} {'p':>8}")
        position = report["position_bias"]
        if position is None:
            write(f"{'position bias (first wins)':<34} {report['notes']['position_bias']}")
        else:
            write(
                f"{'position bias (first wins)':<34} {_num(position['first_rate']):>9} "
                f"{_interval(position['low'], position['high']):>18} {position['decisive']:>7} {_num(position['p'], 4):>8}"
            )
        flips = report["flip_rate"]
        if flips is not None and flips["pairs"]:
            write(
                f"{'flip rate (both orders)':<34} {_num(flips['flips']['rate']):>9} "
                f"{_interval(flips['flips']['low'], flips['flips']['high']):>18} {flips['pairs']:>7} {'-':>8}"
            )
        elif flips is not None:
            write(f"{'flip rate (both orders)':<34} {report['notes'].get('flip_rate', '-')}")
        length = report["length_bias"]
        label = "length slope (log-odds, ratio)" if length["kind"] == "pairwise" else "length slope (points per SD)"
        if length["slope"] is None:
            write(f"{label:<34} {length['reason']}")
        else:
            write(
                f"{label:<34} {_num(length['slope']):>9} {_interval(length['low'], length['high']):>18} "
                f"{length['n']:>7} {_num(length['p'], 4):>8}"
            )
        self_pref = report["self_preference"]
        label = f"self-preference ({self_pref['measure']})"
        if self_pref["advantage"] is not None and self_pref["low"] is not None:
            n = self_pref["same"]["n"] + self_pref["other"]["n"]
            write(
                f"{label:<34} {_num(self_pref['advantage']):>9} {_interval(self_pref['low'], self_pref['high']):>18} "
                f"{n:>7} {_num(self_pref['p'], 4):>8}"
            )
        else:
            write(f"{label:<34} {self_pref['reason']}")
        overall = report["parse_failures"]["overall"]
        write(
            f"{'parse failures':<34} {_num(overall['rate']):>9} {_interval(overall['low'], overall['high']):>18} "
            f"{overall['trials']:>7} {'-':>8}"
        )
        for group in report["parse_failures"]["groups"]:
            name = f"  {group['group']['template']} / {group['group']['language']}"
            write(
                f"{name:<34} {_num(group['rate']):>9} {_interval(group['low'], group['high']):>18} {group['total']:>7}"
            )
        human = report["human_agreement"]
        if not human["shared"]:
            write("human agreement: no human votes on the questions and model pairs this run judged")
            return
        write(
            f"{'judge vs human kappa':<34} {_num(human['kappa']):>9} "
            f"{_interval(human['kappa_low'], human['kappa_high']):>18} {human['shared']:>7}"
        )
        for key, label in (
            ("agreement", "raw agreement, ties included"),
            ("agreement_without_ties", "raw agreement, no ties"),
        ):
            value = human[key]
            write(
                f"{label:<34} {_num(value['rate']):>9} {_interval(value['low'], value['high']):>18} {value['trials']:>7}"
            )
        if human["disagreements"]:
            write(f"strongest disagreements ({len(human['disagreements'])} of {human['disagreement_count']}):")
            for row in human["disagreements"]:
                write(
                    f"  {row['external_id']:<12} {row['first_model']} vs {row['second_model']}: judge {row['judge']}, "
                    f"humans {row['majority'] or 'no majority'} {row['votes']} (/review/items/{row['item_id']}/)"
                )
