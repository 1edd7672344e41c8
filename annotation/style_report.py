"""Style-controlled Bradley-Terry from the human votes: gathers each vote's two answers, counts
their style (stats.style.style_features: length, markdown headers, list items, bold) and fits
stats.style.style_bradley_terry beside the plain fit of annotation/report.py.

Selectors only (reads). A vote whose answers are not both stored (votes imported from
elsewhere may name models without answers here) cannot be styled: it is counted, not fitted.
"""

from annotation.models import Campaign, Winner
from annotation.report import _counted_rows
from judging.models import Answer
from stats.ranking import competition_ranks
from stats.style import DEFAULT_L2, StyleBTResult, not_estimable, style_bradley_terry
from stats.style_votes import STYLE_FEATURES, style_features, style_votes

_TO_STYLE = {Winner.MODEL_A: "a", Winner.MODEL_B: "b", Winner.TIE: "tie"}
# The results page refits the style model once per bootstrap round (about 5 ms for 400 votes),
# so it draws fewer rounds than the plain fit; the API and the `bt --style` command take any number.
PAGE_ROUNDS = 200


def style_bt_report(
    *,
    dataset=None,
    campaign: Campaign | None = None,
    rounds: int = 1000,
    seed: int = 0,
    l2: float = DEFAULT_L2,
    exclude_flagged: bool = True,
) -> dict:
    """Bradley-Terry with style covariates, with bootstrap intervals, from the same votes as
    report.bt_report (gold pairs, cannot-determine and flagged annotators left out).

    Returns stats.style's result as a dict ("scores", "coefficients", "dropped_features",
    "disconnected", "votes" fitted, "l2", "bootstrap_rounds", "skipped_rounds", "level") plus
    "all_votes", "cannot_determine", "without_answers", "excluded_annotators" and "features"."""
    rows, excluded = _counted_rows(dataset=dataset, campaign=campaign, exclude_flagged=exclude_flagged)
    decided = [row for row in rows if row[3] in _TO_STYLE]
    wanted = {(row[0], name) for row in decided for name in (row[1], row[2])}
    features = {}
    if wanted:
        answers = Answer.objects.filter(
            item_id__in={item for item, _name in wanted}, model__name__in={name for _item, name in wanted}
        ).values_list("item_id", "model__name", "text")
        features = {(item, name): style_features(text) for item, name, text in answers if (item, name) in wanted}
    styled = [
        (row[1], row[2], _TO_STYLE[row[3]], features[(row[0], row[1])], features[(row[0], row[2])])
        for row in decided
        if (row[0], row[1]) in features and (row[0], row[2]) in features
    ]
    labels = sorted({name for row in rows for name in (row[1], row[2])})
    if campaign is not None:
        labels = sorted(set(labels) | set(campaign.candidates.values_list("name", flat=True)))
    result = style_bradley_terry(style_votes(labels, styled), l2=l2, rounds=rounds, seed=seed)
    return {
        **result.as_dict(),
        "all_votes": len(rows),
        "cannot_determine": len(rows) - len(decided),
        "without_answers": len(decided) - len(styled),
        "excluded_annotators": excluded,
        "features": list(STYLE_FEATURES),
    }


def style_not_computed(*, campaign: Campaign, reason: str) -> dict:
    """What style_bt_report returns when the fit could not be made at all: no scores, `estimable`
    False and the reason, the vote count as it stands (so a page never reads "no votes")."""
    votes = len(_counted_rows(dataset=None, campaign=campaign, exclude_flagged=True)[0])
    empty = not_estimable(StyleBTResult(scores=[], coefficients=[]), reason)
    return {
        **empty.as_dict(),
        "votes": votes,
        "all_votes": votes,
        "cannot_determine": 0,
        "without_answers": 0,
        "excluded_annotators": [],
        "features": list(STYLE_FEATURES),
    }


def style_beside_plain(plain: dict, style: dict) -> list[dict]:
    """One row per model: the plain BT score, interval and rank next to the style-controlled
    ones, and how many places the model moves (positive: up) once style is held fixed.

    Ranks here are the order of the point estimates (competition ranks), so the move is a
    plain reading of the two columns; the intervals say whether it means anything."""
    plain_by = {row["label"]: row for row in plain["scores"]}
    style_by = {row["label"]: row for row in style["scores"]}
    labels = sorted(set(plain_by) & set(style_by))
    plain_order = dict(zip(labels, competition_ranks([plain_by[label]["score"] for label in labels])))
    style_order = dict(zip(labels, competition_ranks([style_by[label]["score"] for label in labels])))
    rows = [
        {
            "label": label,
            "plain": plain_by[label],
            "style": style_by[label],
            "plain_position": plain_order[label],
            "style_position": style_order[label],
            "moved": plain_order[label] - style_order[label],
        }
        for label in labels
    ]
    rows.sort(key=lambda row: (row["style_position"], row["label"]))
    return rows
