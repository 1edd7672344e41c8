"""How far to trust a run's judge: gathers the run's judgments and hands them to stats.diagnostics.

Selectors only (reads). Every figure comes with its interval from the pure module: position
bias and flip rate (pairwise), length bias (both modes), self-preference, parse failures by
template and language, and item-level agreement with the human votes on the same questions.

Pairwise verdicts are turned into position terms here: a judgment's `order` 0 shows the
candidate first, so a win at order 0 (or a loss at order 1) is a win of the first position.
Injection-probe answers (judging/answers/probe.py) are left out: they are reported on their own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import cast

from django.db.models import BooleanField, ExpressionWrapper
from django.db.models.functions import Length

from core.workspaces import in_workspace
from judging.answers.versions import run_answers
from judging.models import CUT_OFF, PARSE_FAILURE, CandidateModel, JudgeMode, JudgeRun, Judgment
from judging.results.human_votes import human_verdicts
from judging.results.preferences import judge_preferences
from judging.results.selectors import judge_model_mismatch
from stats.diagnostics import (
    FIRST,
    SECOND,
    TIE,
    flip_rate,
    judge_human_agreement,
    length_bias_pairwise,
    length_bias_pointwise,
    parse_failure_rates,
    position_bias_of_verdicts,
    self_preference,
)

LEVEL = 0.95
# Disagreements listed on the page and in the API; the rest are counted.
MAX_DISAGREEMENTS = 20
NO_JUDGE_FAMILY = (
    "The judge's provider and family are unknown: name them on the run (--judge-family, --judge-provider) "
    "or give the candidate model named like the judge a provider or family."
)
NO_SHARED_FAMILY = "No candidate shares a provider or family with the judge."
POINTWISE_NO_POSITION = "Pointwise judgments show one answer at a time: there is no position to favour."
ONE_ORDER_ONLY = "Each pair was judged in one order only; judge both orders (--both-orders) to measure flips."


def _position_verdict(order: int, outcome: str) -> str | None:
    """A pairwise judgment's verdict as the judge saw it: which position won (None: no verdict)."""
    if outcome == Judgment.Outcome.TIE:
        return TIE
    if outcome not in (Judgment.Outcome.WIN, Judgment.Outcome.LOSE):
        return None
    candidate_won = outcome == Judgment.Outcome.WIN
    return FIRST if (order == 0) == candidate_won else SECOND


def _rows(run: JudgeRun) -> list[dict]:
    """The run's replied judgments of real candidates (probe answers and failed calls left out)."""
    return list(
        run.judgments.replied()
        .filter(model__is_probe=False)
        .values(
            "item_id",
            "model_id",
            "model__name",
            "model__provider",
            "model__family",
            "order",
            "outcome",
            "final_score",
            "template__name",
            "template__version",
            "item__language",
        )
        .annotate(
            cut_off=ExpressionWrapper(CUT_OFF, output_field=BooleanField()),
            parse_failed=ExpressionWrapper(PARSE_FAILURE, output_field=BooleanField()),
        )
        .order_by("item_id", "model__name", "order")
    )


def _lengths(run: JudgeRun, model_ids: set[int]) -> dict[tuple[int, int], int]:
    """Answer length in characters per (item, model): the same measure as the leaderboard's Length."""
    return {
        (item_id, model_id): length
        for item_id, model_id, length in run_answers(run)
        .filter(model_id__in=model_ids)
        .annotate(length=Length("text"))
        .values_list("item_id", "model_id", "length")
    }


def _same(value: str, other: str) -> bool:
    return bool(value.strip()) and value.strip().casefold() == other.strip().casefold()


def judge_lineage(*, run: JudgeRun) -> tuple[str, str]:
    """(provider, family) of the run's judge: as recorded on the run, else those of the candidate
    model named like the judge model (so a family given later still counts)."""
    provider, family = run.judge_provider.strip(), run.judge_family.strip()
    if not (provider and family):
        # Only the run's workspace's models: another team's description of a namesake says nothing here.
        namesake = (
            in_workspace(CandidateModel.objects.filter(name=run.judge_model), run.workspace_id)
            .values_list("provider", "family")
            .first()
        )
        if namesake:
            provider, family = provider or namesake[0].strip(), family or namesake[1].strip()
    return provider, family


def _self_preference(run: JudgeRun, rows: list[dict], values: dict[int, float]) -> dict:
    """Self-preference: candidates sharing the judge's provider or family against the others."""
    provider, family = judge_lineage(run=run)
    shares = {
        row["model__name"]: _same(row["model__family"], family) or _same(row["model__provider"], provider)
        for row in rows
    }
    records = [(row["model__name"], shares[row["model__name"]], values[i]) for i, row in enumerate(rows) if i in values]
    result = self_preference(records, level=LEVEL)
    if not (provider or family):
        result["reason"] = NO_JUDGE_FAMILY
    elif not any(shares.values()):
        result["reason"] = NO_SHARED_FAMILY
    result.update(
        judge_family=family,
        judge_provider=provider,
        measure="win" if run.mode == JudgeMode.PAIRWISE else "score",
    )
    return result


def _parse_failures(rows: list[dict]) -> dict:
    def template_label(row):
        return f"{row['template__name']} v{row['template__version']}" if row["template__name"] else "-"

    records = [
        {
            "template": template_label(row),
            "language": row["item__language"],
            "failed": row["parse_failed"],
        }
        for row in rows
        # A reply cut off by max_tokens was never a whole reply to parse: no parse failure.
        if not row["cut_off"]
    ]
    return parse_failure_rates(records, by=("template", "language"), level=LEVEL)


def _human_agreement(run: JudgeRun, rows: list[dict]) -> dict:
    judge = judge_preferences(run=run, rows=rows)
    humans = {unit: labels for unit, labels in human_verdicts(dataset=run.dataset).items() if unit in judge}
    # The units are (item, model, model) tuples; the signature's Mapping[Hashable, ...] is invariant in its key.
    result = judge_human_agreement(
        cast(Mapping[Hashable, str], judge),
        cast(Mapping[Hashable, Sequence[str]], humans),
        level=LEVEL,
        seed=run.seed % 2**32,
    )
    external = dict(run.dataset.items.filter(pk__in={unit[0] for unit in humans}).values_list("pk", "external_id"))
    rows_out = []
    for row in result["disagreements"][:MAX_DISAGREEMENTS]:
        item_id, first, second = row["item"]
        rows_out.append(
            {
                **{key: value for key, value in row.items() if key != "item"},
                "item_id": item_id,
                "external_id": external.get(item_id, ""),
                "first_model": first,
                "second_model": second,
            }
        )
    result["disagreement_count"] = len(result["disagreements"])
    result["disagreements"] = rows_out
    return result


def run_diagnostics(*, run: JudgeRun) -> dict:
    """Every diagnostic of the run's judge, with 95 % intervals (see stats.diagnostics).

    Returns {"run", "mode", "level", "judgments", "position_bias", "flip_rate",
    "length_bias", "self_preference", "parse_failures", "human_agreement", "notes"}.
    position_bias and flip_rate are None for pointwise runs (notes say why); length_bias is
    the logistic slope of "first position wins" on the normalised length difference (pairwise)
    or the OLS slope of the score on standardised length within questions (pointwise)."""
    rows = _rows(run)
    notes: dict[str, str] = {}
    result = {"run": run.pk, "mode": run.mode, "level": LEVEL, "judgments": len(rows)}
    if run.mode == JudgeMode.PAIRWISE:
        reference_id = run.reference_model_id
        assert reference_id is not None  # the database holds every pairwise run to one
        lengths = _lengths(run, {row["model_id"] for row in rows} | {reference_id})
        verdicts = [_position_verdict(row["order"], row["outcome"]) for row in rows]
        result["position_bias"] = position_bias_of_verdicts(verdicts, level=LEVEL)
        by_unit: dict[tuple[int, int], dict[int, str | None]] = defaultdict(dict)
        for row, verdict in zip(rows, verdicts):
            by_unit[(row["item_id"], row["model_id"])][row["order"]] = verdict
        pairs = [(orders[0], orders[1]) for orders in by_unit.values() if 0 in orders and 1 in orders]
        result["flip_rate"] = flip_rate(pairs, level=LEVEL)
        if not pairs:
            notes["flip_rate"] = ONE_ORDER_ONLY
        firsts, seconds, kept = [], [], []
        for row, verdict in zip(rows, verdicts):
            candidate = lengths.get((row["item_id"], row["model_id"]), 0)
            reference = lengths.get((row["item_id"], reference_id), 0)
            firsts.append(candidate if row["order"] == 0 else reference)
            seconds.append(reference if row["order"] == 0 else candidate)
            kept.append(verdict)
        result["length_bias"] = {"kind": "pairwise", **length_bias_pairwise(firsts, seconds, kept, level=LEVEL)}
        wins = {
            i: {Judgment.Outcome.WIN: 1.0, Judgment.Outcome.LOSE: 0.0, Judgment.Outcome.TIE: 0.5}[row["outcome"]]
            for i, row in enumerate(rows)
            if row["outcome"] in (Judgment.Outcome.WIN, Judgment.Outcome.LOSE, Judgment.Outcome.TIE)
        }
        result["self_preference"] = _self_preference(run, rows, wins)
    else:
        result["position_bias"] = None
        result["flip_rate"] = None
        notes["position_bias"] = POINTWISE_NO_POSITION
        scored = [row for row in rows if row["final_score"] is not None]
        lengths = _lengths(run, {row["model_id"] for row in scored})
        result["length_bias"] = {
            "kind": "pointwise",
            **length_bias_pointwise(
                [lengths.get((row["item_id"], row["model_id"]), 0) for row in scored],
                [row["final_score"] for row in scored],
                groups=[row["item_id"] for row in scored],
                level=LEVEL,
            ),
        }
        scores = {i: float(row["final_score"]) for i, row in enumerate(rows) if row["final_score"] is not None}
        result["self_preference"] = _self_preference(run, rows, scores)
    result["parse_failures"] = _parse_failures(rows)
    result["human_agreement"] = _human_agreement(run, rows)
    result["model_mismatch"] = judge_model_mismatch(run=run)
    result["notes"] = notes
    return result
