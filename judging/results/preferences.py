"""The judge's preference per question and pair of models, as the human votes are oriented:
one rule for the run's diagnostics (agreement with the humans) and annotation's alignment
report (each annotator against the judge)."""

from __future__ import annotations

from collections import defaultdict

from judging.models import JudgeMode, JudgeRun
from judging.results.leaderboard import combine_orders
from stats.diagnostics import FIRST, SECOND, TIE

PREFERENCE_FIELDS = ("item_id", "model__name", "outcome", "final_score")


def judge_preference_rows(*, run: JudgeRun) -> list[dict]:
    """The run's replied judgments of real candidates with what a preference is read from."""
    return list(
        run.judgments.replied()
        .filter(model__is_probe=False)
        .values(*PREFERENCE_FIELDS)
        .order_by("item_id", "model__name", "order")
    )


def judge_preferences(*, run: JudgeRun, rows: list[dict] | None = None) -> dict[tuple[int, str, str], str]:
    """The judge's verdict per (question, sorted model pair): "first", "second" or "tie".

    Pairwise: candidate against the reference, both orders combined as the leaderboard does
    (disagreement is a tie; a pair without a verdict is left out). Pointwise: the higher final
    score wins, equal scores tie. `rows`: the run's replied judgments of real candidates, when
    the caller has read them already (at least the PREFERENCE_FIELDS)."""
    if rows is None:
        rows = judge_preference_rows(run=run)
    out: dict[tuple[int, str, str], str] = {}
    if run.mode == JudgeMode.PAIRWISE:
        assert run.reference_model is not None  # the database holds every pairwise run to one
        reference = run.reference_model.name
        outcomes: dict[tuple[int, str], list[str]] = defaultdict(list)
        for row in rows:
            outcomes[(row["item_id"], row["model__name"])].append(row["outcome"] or "error")
        for (item_id, candidate), both in outcomes.items():
            combined = combine_orders(both)
            if combined == "error":
                continue
            first, second = sorted([candidate, reference])
            if combined == "tie":
                out[(item_id, first, second)] = TIE
            else:
                winner = candidate if combined == "win" else reference
                out[(item_id, first, second)] = FIRST if winner == first else SECOND
        return out
    scores: dict[int, dict[str, int]] = defaultdict(dict)
    for row in rows:
        if row["final_score"] is not None:
            scores[row["item_id"]][row["model__name"]] = row["final_score"]
    for item_id, by_model in scores.items():
        names = sorted(by_model)
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                a, b = by_model[first], by_model[second]
                out[(item_id, first, second)] = TIE if a == b else (FIRST if a > b else SECOND)
    return out
