"""The length-controlled win rate of a pairwise run, gathered for stats.length_control.

Kept apart from judging/results/boards.py, which pointwise leaderboards load too: the fit needs
scipy, which would add half a second to every worker and export that reads one.
"""

from __future__ import annotations

from django.db.models.functions import Length

from judging.answers.versions import run_answers
from judging.models import JudgeMode, JudgeRun
from judging.results.leaderboard import COMBINED_VALUE, combine_orders
from judging.results.selectors import judgment_rows
from stats.length_control import length_controlled_win_rates


def run_length_controlled(*, run: JudgeRun) -> list[dict]:
    """Length-controlled win rate per candidate (stats.length_control), fitted on this run's own
    judgments: one outcome per candidate and item (both orders combined as the win rate combines
    them), against the length difference of the candidate's and the reference's answers.
    A parse failure counts as a loss, as in the win rate beside it (one basis per row)."""
    if run.mode != JudgeMode.PAIRWISE or run.reference_model is None:
        return []
    grouped: dict[tuple[str, int, int], list[str]] = {}
    for row in judgment_rows(run=run).values("model__name", "model_id", "item_id", "outcome"):
        grouped.setdefault((row["model__name"], row["model_id"], row["item_id"]), []).append(row["outcome"] or "error")
    models = {model_id for _name, model_id, _item in grouped} | {run.reference_model_id}
    answers = run_answers(run).filter(model_id__in=models).annotate(length=Length("text"))
    lengths = {(item, model): length for item, model, length in answers.values_list("item_id", "model_id", "length")}
    rows = [
        (
            name,
            lengths.get((item_id, model_id), 0),
            lengths.get((item_id, run.reference_model.pk), 0),
            COMBINED_VALUE[combine_orders(outcomes)],
        )
        for (name, model_id, item_id), outcomes in grouped.items()
    ]
    return length_controlled_win_rates(rows, reference=run.reference_model.name)
