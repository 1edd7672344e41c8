"""AlignBench 2.2's difficulty filter, made from a judge run over filter models: the run gives
each item its mean score, and curation drops the easiest items from the dataset."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Avg, Count

from core.archiving import refuse_if_archived
from curation.datasets.services import difficulty_filter_apply
from curation.models import DifficultyFilter
from judging.models import JudgeRun


def difficulty_filter_from_run(*, run: JudgeRun, percent: int = 50, created_by: User | None = None) -> DifficultyFilter:
    """AlignBench 2.2's difficulty filter from a judge run over filter models: each item's mean
    final score (parse failures left out) goes to curation, which drops the easiest percent. An
    archived run (left out of every choice until restored) or dataset: ArchivedError."""
    refuse_if_archived(run)
    rows = (
        run.judgments.filter(final_score__isnull=False, model__is_probe=False)
        .values("item__external_id")
        .annotate(mean=Avg("final_score"), n=Count("id"))
    )
    scores = {row["item__external_id"]: (row["mean"], row["n"]) for row in rows}
    return difficulty_filter_apply(
        dataset=run.dataset, scores=scores, percent=percent, run_number=run.pk, created_by=created_by
    )
