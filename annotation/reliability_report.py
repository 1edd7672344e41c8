"""Bradley-Terry with each annotator's reliability (stats/reliability.py) from the human votes: the
same votes as report.bt_report (gold pairs, cannot-determine and, unless asked, flagged
annotators left out), each with who cast it and on which question, and the campaign's decisive
gold votes as the anchor of the reliabilities where there are any.

Selectors only (reads). The output keeps bt_report's shape ("scores" rows with label, score,
lower, upper, rank, wins, losses, ties and, through stats.elo.bt_on_elo, Elo points) and adds
"annotators" (label, reliability, lower, upper, votes, decisive, weight, flags), "anchor" and
"plain_moved" (what the reliabilities change in the plain ranking).
"""

import numpy as np
from django.db.models import Q

from annotation.models import Campaign, Vote, Winner
from annotation.report import _TO_RANKING, _counted_rows, _rater
from stats import ranking, sample_size, tallies
from stats.elo import bt_on_elo
from stats.reliability import (
    CONSISTENT,
    RIDGE_SD,
    annotator_flags,
    annotator_votes,
    reliability_fit,
    reliability_intervals,
    strength_intervals,
)
from stats.separation import votes_to_separate

# The reliability fit refits strengths and reliabilities in every round (200 rounds: about 0.1 s
# of CPU at 400 votes, 1 s at 10,000 votes from 200 annotators, bench/bench_reliability_fit.py):
# the page and the API draw this many unless asked for fewer.
RELIABILITY_ROUNDS = 200
ANCHOR_NOTES = {
    "gold": "gold pairs: each annotator's votes on pairs whose answer the researcher fixed pin their reliability",
    CONSISTENT: "no gold votes: the most consistent annotators, together casting at least half of the votes, "
    "are taken as careful (reliability 1 in the fit); the others are measured against them",
}


def _gold_rows(campaign: Campaign | None, dataset, names: set[str]) -> list[tuple[str, bool]]:
    """(annotator, picked the gold answer) for each decisive vote on a decisive gold pair."""
    votes = Vote.objects.filter(
        assignment__pair__is_gold=True,
        assignment__pair__gold_winner__in=[Winner.MODEL_A, Winner.MODEL_B],
        winner__in=[Winner.MODEL_A, Winner.MODEL_B],
    )
    if campaign is not None:
        votes = votes.filter(campaign=campaign)
    elif dataset is not None:
        votes = votes.filter(Q(item__dataset=dataset))
    rows = votes.values_list("annotator__username", "annotator_label", "winner", "assignment__pair__gold_winner")
    return [
        (_rater(username, label), winner == gold)
        for username, label, winner, gold in rows
        if _rater(username, label) in names
    ]


def reliability_report(
    *,
    dataset=None,
    campaign: Campaign | None = None,
    rounds: int = RELIABILITY_ROUNDS,
    seed: int = 0,
    exclude_flagged: bool = True,
    anchor: str | None = None,
    plain: dict | None = None,
) -> dict:
    """The reliability-aware fit as a report (module docstring). `plain`: bt_report's output on
    the same votes, to say whether the reliabilities move it ("plain_moved"). Raises ValueError
    when there is nothing to fit or the fit does not converge."""
    rows, excluded = _counted_rows(dataset=dataset, campaign=campaign, exclude_flagged=exclude_flagged)
    decided = [row for row in rows if row[3] in _TO_RANKING]
    voted = sorted({name for row in decided for name in (row[1], row[2])})
    everyone = set(voted) | (set(campaign.candidates.values_list("name", flat=True)) if campaign is not None else set())
    # As the plain fit: only the largest piece of the comparison graph is ranked (between pieces
    # the votes say nothing).
    both = tallies.pair_counts(voted, [(row[1], row[2], _TO_RANKING[row[3]]) for row in decided])
    pieces = ranking.components(len(voted), both.first, both.second) if voted else [[]]
    labels = sorted(voted[k] for k in pieces[0])
    kept = set(labels)
    fitted = [row for row in decided if row[1] in kept]
    disconnected = sorted(everyone - kept)
    annotators = sorted({_rater(row[4], row[5]) for row in fitted})
    votes = annotator_votes(
        labels,
        annotators,
        [(row[1], row[2], _TO_RANKING[row[3]], _rater(row[4], row[5]), row[0]) for row in fitted],
        _gold_rows(campaign, dataset, set(annotators)),
    )
    if len(labels) < 2:
        raise ValueError("fewer than two models have decisive or tied votes")
    fit = reliability_fit(votes, rounds=rounds, seed=seed)
    lower, upper = strength_intervals(fit)
    ranks = (
        ranking.ranks_by_overlap(lower, upper)
        if lower is not None and upper is not None
        else ranking.competition_ranks(fit.scores, tolerance=ranking.RANK_TOLERANCE)
    )
    counts = tallies.pair_counts(labels, [(row[1], row[2], _TO_RANKING[row[3]]) for row in fitted])
    record = {label: [0, 0, 0] for label in labels}
    for first, second, a, b, t in zip(
        counts.first, counts.second, counts.first_wins, counts.second_wins, counts.ties, strict=True
    ):
        for model, won, lost in ((first, a, b), (second, b, a)):
            record[labels[model]][0] += int(won)
            record[labels[model]][1] += int(lost)
            record[labels[model]][2] += int(t)
    scores = [
        {
            "label": label,
            "score": float(fit.scores[k]),
            "lower": None if lower is None else float(lower[k]),
            "upper": None if upper is None else float(upper[k]),
            "rank": ranks[k],
            "wins": record[label][0],
            "losses": record[label][1],
            "ties": record[label][2],
            "note": None,
        }
        for k, label in enumerate(labels)
    ]
    scores.sort(key=lambda row: (-row["score"], row["label"]))
    r_lower, r_upper = reliability_intervals(fit)

    def number(values, k):
        return None if values is None or not np.isfinite(values[k]) else float(values[k])

    people = []
    for k, name in enumerate(annotators):
        value, high = number(fit.reliability, k), number(r_upper, k)
        people.append(
            {
                "label": name,
                "reliability": value,
                "lower": number(r_lower, k),
                "upper": high,
                "votes": int(fit.votes[k]),
                "decisive": int(fit.decisive[k]),
                "weight": float(fit.weights[k]),
                "anchor": name in fit.anchor["annotators"],
                "flags": annotator_flags(value, high),
            }
        )
    verdict = sample_size.ranks_verdict(
        {row["label"]: row["wins"] + row["losses"] for row in scores}, has_intervals=lower is not None
    )
    report = {
        "scores": scores,
        "disconnected": disconnected,
        "comparisons": counts.comparisons,
        "alpha": 0.0,
        "bootstrap_rounds": rounds,
        "skipped_rounds": fit.skipped_rounds,
        "level": 0.95,
        "regularised": False,
        "regularisation": (
            f"reliability-aware (Crowd-BT): each annotator's votes weighed by their reliability; "
            f"a normal prior of sd {RIDGE_SD:g} on each strength; questions resampled whole"
        ),
        "scale": "log-strength",
    }
    return {
        **bt_on_elo(report, anchor=anchor),
        "votes": len(rows),
        "cannot_determine": len(rows) - len(decided),
        "excluded_annotators": excluded,
        "ranks_meaningful": verdict["meaningful"],
        "ranks_reason": verdict["reason"],
        "ranks_too_few": verdict["too_few"],
        "min_decisive": sample_size.MIN_DECISIVE,
        "annotator_reliability": True,
        "annotators": people,
        "anchor": {**fit.anchor, "note": ANCHOR_NOTES[fit.anchor["kind"]]},
        "votes_to_separate": votes_to_separate(labels, fit.scores, fit.information, votes=counts.comparisons),
        "plain_moved": plain_moved(plain, scores) if plain is not None else [],
    }


def plain_moved(plain: dict, scores: list[dict]) -> list[str]:
    """Models the reliabilities move: their place in the order of the point estimates differs
    between the plain and the reliability-aware fit, or their plain score lies outside the
    reliability-aware interval."""
    plain_by = {row["label"]: row for row in plain["scores"]}
    common = [row for row in scores if row["label"] in plain_by]
    aware_order = [row["label"] for row in common]
    plain_order = sorted(aware_order, key=lambda label: (-plain_by[label]["score"], label))
    moved = []
    for place, row in enumerate(common):
        score = plain_by[row["label"]]["score"]
        outside = row["lower"] is not None and not (row["lower"] <= score <= row["upper"])
        if plain_order[place] != row["label"] or outside:
            moved.append(row["label"])
    return moved
