"""A judge's reply becoming a Judgment's verdict fields: one place, used when a chunk of replies
is saved (judging/engine/execution.py) and when a run's replies are parsed again
(judging/runs/resume.py, `run_reparse`)."""

from __future__ import annotations

from judging.benchmarks.registry import template_set_of
from judging.models import JudgeMode, Judgment
from judging.verdicts.parsing import parse_pairwise, parse_pointwise


def judgment_fields_from_reply(
    *,
    mode: str,
    text: str,
    candidate_side: str,
    criteria: list[str],
    template: str,
    answer: str,
    template_name: str = "",
) -> dict:
    """Parse one reply into Judgment fields. Pure apart from the imports; used at save and re-parse.

    A pairwise reply is read by its template set's own verdict reader when the benchmark has one
    (Arena-Hard's `[[A>B]]`), else by `parse_pairwise` (a ranked list)."""
    if mode == JudgeMode.PAIRWISE:
        template_set = template_set_of(template_name) if template_name else None
        if template_set is not None and template_set.read_verdict is not None:
            parsed = template_set.read_verdict(text, answer=answer)
        else:
            parsed = parse_pairwise(text)
        if parsed.winner is None and not parsed.tie:
            return {
                "outcome": Judgment.Outcome.ERROR,
                "parse_error": parsed.error[:300],
                "final_score": None,
                "scores": {},
            }
        if parsed.tie:
            outcome = Judgment.Outcome.TIE
        else:
            outcome = Judgment.Outcome.WIN if parsed.winner == candidate_side else Judgment.Outcome.LOSE
        scores = {"verdict": parsed.label, "strength": parsed.strength} if parsed.label else {}
        return {"outcome": outcome, "parse_error": "", "final_score": None, "scores": scores}
    point = parse_pointwise(text, criteria=criteria, template=template, answer=answer)
    return {
        "outcome": "",
        "parse_error": point.error[:300] if not point.ok else "",
        "final_score": point.final_score if point.ok else None,
        "scores": point.scores,
    }
