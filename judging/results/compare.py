"""Judge drift between two runs (`compare RUN_A RUN_B`, a re-run's page): matches the units both
runs judged and hands them to stats.drift; says what changed between their manifests.

Selectors only (reads). Units are matched by the question's external id, the candidate's name
and the order, so a run on another copy of the same dataset version still matches. Parse
failures and failed calls have no verdict and are left out (counted per run); injection-probe
answers are left out as everywhere outside their own report.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from core.errors import UserbenchError
from judging.models import JudgeMode, JudgeRun, Judgment
from judging.runs.manifest import run_manifest
from stats.drift import BOOTSTRAP_ROUNDS, drift

PAIRWISE_VALUE = {Judgment.Outcome.WIN: 1.0, Judgment.Outcome.TIE: 0.5, Judgment.Outcome.LOSE: 0.0}


class CompareError(UserbenchError):
    """Two runs that cannot be compared; the message says why."""


def _units(run: JudgeRun) -> dict[tuple[str, str, int], tuple[float, str]]:
    """(external id, model, order) -> (value, verdict) for every judgment with a verdict."""
    rows = (
        run.judgments.replied()
        .filter(model__is_probe=False)
        .values_list("item__external_id", "model__name", "order", "final_score", "outcome")
    )
    units = {}
    for external_id, model, order, score, outcome in rows:
        if run.mode == JudgeMode.PAIRWISE:
            if outcome in PAIRWISE_VALUE:
                units[(external_id, model, order)] = (PAIRWISE_VALUE[outcome], outcome)
        elif score is not None:
            units[(external_id, model, order)] = (float(score), str(score))
    return units


def _walk(value, path=()):
    """Leaves of a nested manifest as (path, value); lists of named entries are keyed by name."""
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _walk(value[key], (*path, str(key)))
    elif isinstance(value, list) and all(isinstance(entry, dict) and "name" in entry for entry in value):
        for entry in value:
            yield from _walk({k: v for k, v in entry.items() if k != "name"}, (*path, str(entry["name"])))
    else:
        yield ".".join(path), value


# Facts that differ between any two runs and say nothing about whether they judged alike.
_NOT_A_CHANGE = ("run", "rerun_of", "recorded_at", "judge.concurrency", "judge.shard_size", "reconstructed")


def manifest_changes(manifest_a: dict, manifest_b: dict) -> list[dict]:
    """What differs between two manifests, leaf by leaf: [{"field", "a", "b"}], ids and times left out."""
    a, b = dict(_walk(manifest_a)), dict(_walk(manifest_b))
    changes = []
    for field in sorted(set(a) | set(b)):
        if field in _NOT_A_CHANGE or field.endswith(".id") or field.endswith(".run"):
            continue
        if a.get(field) != b.get(field):
            changes.append({"field": field, "a": a.get(field), "b": b.get(field)})
    return changes


def _summary(run: JudgeRun) -> dict:
    return {
        "id": run.pk,
        "judge_model": run.judge_model,
        "mode": run.mode,
        "dataset": run.dataset.name,
        "status": run.status,
        "created_at": run.created_at.isoformat() if run.created_at else None,
        "rerun_of": run.rerun_of_id,
    }


def runs_compare(*, run_a: JudgeRun, run_b: JudgeRun, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0) -> dict:
    """Drift of run_b against run_a: score correlation with intervals, mean shift with a bootstrap
    interval, verdict agreement with Cohen's kappa, each model's shift and rank change, and the
    manifest fields that differ. Raises CompareError when the runs' modes differ."""
    if run_a.mode != run_b.mode:
        raise CompareError(
            _("Run %(a)s is %(mode_a)s and run %(b)s is %(mode_b)s: only runs of one mode compare.")
            % {"a": run_a.pk, "mode_a": run_a.mode, "b": run_b.pk, "mode_b": run_b.mode}
        )
    units_a, units_b = _units(run_a), _units(run_b)
    shared = sorted(set(units_a) & set(units_b))
    result = drift(
        [(key[1], units_a[key][0], units_b[key][0], units_a[key][1], units_b[key][1]) for key in shared],
        rounds=rounds,
        seed=seed,
    )
    return {
        "run_a": _summary(run_a),
        "run_b": _summary(run_b),
        "mode": run_a.mode,
        "value": "outcome (1 win, 0.5 tie, 0 loss)" if run_a.mode == JudgeMode.PAIRWISE else "final score",
        "only_a": len(units_a) - len(shared),
        "only_b": len(units_b) - len(shared),
        "manifest_changes": manifest_changes(run_manifest(run=run_a), run_manifest(run=run_b)),
        **result,
    }
