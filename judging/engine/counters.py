"""A run's running counts (replied, parse failures, call failures, cut off, cached, tokens): added
to as chunks of judgments are saved, recounted after a resume, a close or a re-parse."""

from __future__ import annotations

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce

from judging.models import CALL_FAILURE, CUT_OFF, PARSE_FAILURE, REPLIED, JudgeRun, Judgment


def run_counters_add(*, run_id: int, judgments: list[Judgment]) -> None:
    """Add a chunk of new judgments to the run's running counts (one UPDATE)."""
    if not judgments:
        return
    replied = [j for j in judgments if not j.call_error]
    JudgeRun.objects.filter(pk=run_id).update(
        replied=F("replied") + len(replied),
        parse_failures=F("parse_failures") + sum(1 for j in replied if j.parse_error and j.finish_reason != "length"),
        call_failures=F("call_failures") + (len(judgments) - len(replied)),
        cut_off=F("cut_off") + sum(1 for j in replied if j.finish_reason == "length"),
        cached_replies=F("cached_replies") + sum(1 for j in judgments if j.cached),
        prompt_tokens=F("prompt_tokens") + sum(j.prompt_tokens or 0 for j in replied if not j.cached),
        completion_tokens=F("completion_tokens") + sum(j.completion_tokens or 0 for j in replied if not j.cached),
    )


def run_counters_refresh(*, run: JudgeRun) -> dict:
    """Recount the run's judgments into its running counts (after a resume, a close, a re-parse)."""
    totals = run.judgments.aggregate(
        replied=Count("pk", filter=REPLIED),
        parse_failures=Count("pk", filter=PARSE_FAILURE),
        call_failures=Count("pk", filter=CALL_FAILURE),
        cut_off=Count("pk", filter=CUT_OFF),
        cached_replies=Count("pk", filter=Q(cached=True)),
        prompt_tokens=Coalesce(Sum("prompt_tokens", filter=Q(cached=False)), 0),
        completion_tokens=Coalesce(Sum("completion_tokens", filter=Q(cached=False)), 0),
    )
    JudgeRun.objects.filter(pk=run.pk).update(**totals)
    for key, value in totals.items():
        setattr(run, key, value)
    return totals
