"""An adaptive campaign's pairing design, computed in the background from its votes (stats/pairing.py
says how), and what the results page shows of it. annotation/adaptive.py draws pairs from it.

`design_compute` runs as the campaign's other stored figures do (core/figures.py): after votes,
annotation.figures.figures_votes_changed queues its refresh, debounced, and the background task
calls it. It reads every vote and every answer of the candidates; nobody waits on it.
"""

from __future__ import annotations

import numpy as np
from django.db.models import Count

from annotation.models import Campaign, StoredFigures, Vote
from annotation.selectors import questions_answered
from stats.pairing import GAP_WEIGHT, PRIOR_SD, all_pairs, pairing_design

DESIGN_WHAT = StoredFigures.What.DESIGN.value
# Stored under the figures key of a campaign row with no bootstrap: rounds 0, seed 0.
DESIGN_ROUNDS = 0
CRITERION = (
    "mean variance of the gaps between neighbours in the ranking plus mean variance of the centred "
    "log-strengths, weighed equally (stats/pairing.py)"
)


def _availability(campaign: Campaign, model_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per model pair of all_pairs(len(model_ids)): how many questions both models answered, and
    how many of those the campaign has already used for the pair (in either order, gold included)."""
    index = {model_id: k for k, model_id in enumerate(model_ids)}
    n = len(model_ids)
    answered = questions_answered(dataset=campaign.dataset, candidates=model_ids)
    # Questions x models, 1 where the model answered: its Gram matrix counts shared questions.
    answers = np.zeros((len(answered), n))
    for row, models in enumerate(answered.values()):
        answers[row, [index[model] for model in models]] = 1
    eligible = np.rint(answers.T @ answers).astype(np.int64)
    used = np.zeros((n, n), dtype=np.int64)
    seen = set()
    for item_id, model_a, model_b in campaign.pairs.values_list("item_id", "model_a_id", "model_b_id"):
        if model_a not in index or model_b not in index:
            continue
        first, second = sorted((index[model_a], index[model_b]))
        if (item_id, first, second) not in seen:
            seen.add((item_id, first, second))
            used[first, second] += 1
    pairs = all_pairs(n)
    return eligible[pairs[:, 0], pairs[:, 1]], used[pairs[:, 0], pairs[:, 1]]


def design_compute(campaign: Campaign) -> dict:
    """The stored design of an adaptive campaign, from its votes as they are now: the votes that
    count for its figures (gold pairs, cannot-determine and flagged annotators left out, as
    annotation.report.bt_report leaves them), the budget left, and which model pairs still have
    an unused question."""
    # report pulls in scipy: loaded in the background task that computes designs, as figures do.
    from annotation.report import counted_outcomes

    candidates = list(campaign.candidates.order_by("pk").values_list("pk", "name"))
    model_ids = [pk for pk, _name in candidates]
    position = {name: k for k, (_pk, name) in enumerate(candidates)}
    n = len(model_ids)
    outcomes = counted_outcomes(campaign=campaign)
    first, second, first_wins, second_wins, ties = [], [], [], [], []
    for name_a, name_b, winner in outcomes:
        if name_a not in position or name_b not in position:
            continue  # a vote on a model the campaign no longer lists: not the design's concern
        i, j = position[name_a], position[name_b]
        a_won, b_won, tied = winner == "a", winner == "b", winner == "tie"
        if i > j:
            i, j, a_won, b_won = j, i, b_won, a_won
        first.append(i)
        second.append(j)
        first_wins.append(int(a_won))
        second_wins.append(int(b_won))
        ties.append(int(tied))
    cast = Vote.objects.filter(campaign=campaign).exclude(assignment__pair__is_gold=True).count()
    eligible, used = _availability(campaign, model_ids)
    available = eligible > used
    # Cannot-determine votes and left-out annotators spend budget without adding to the fit.
    decisive_share = len(outcomes) / cast if cast else 1.0
    remaining = max(campaign.pairs_planned * campaign.votes_per_pair - cast, 0) * decisive_share
    payload = {
        "models": model_ids,
        "names": [name for _pk, name in candidates],
        "uniform_share": campaign.uniform_share,
        "votes": cast,
        "fitted_votes": len(outcomes),
        "remaining_votes": campaign.pairs_planned * campaign.votes_per_pair - cast,
        "available_pairs": int(available.sum()),
        "exhausted_pairs": int((~available).sum()),
        "prior_sd": PRIOR_SD,
        "gap_weight": GAP_WEIGHT,
    }
    if n < 2 or not available.any():
        return {**payload, "uniform": [], "information": [], "theta": []}
    design = pairing_design(
        n,
        first,
        second,
        first_wins,
        second_wins,
        ties,
        remaining=remaining,
        uniform_share=campaign.uniform_share,
        available=available,
    )
    return {
        **payload,
        "uniform": design.uniform.tolist(),
        "information": design.information.tolist(),
        "theta": design.theta.tolist(),
        "predicted_width": design.predicted_width,
        "predicted_width_uniform": design.predicted_width_uniform,
        "predicted_gap_width": design.predicted_gap_width,
        "predicted_gap_width_uniform": design.predicted_gap_width_uniform,
    }


# The results page lists the model pairs most likely to be drawn next, this many.
LIKELIEST_SHOWN = 10


def design_summary(*, campaign: Campaign, payload: dict | None) -> dict | None:
    """What the results page says about an adaptive campaign's design: its parameters, the pairs
    drawn by each part of it, the stored design's predicted widths and the model pairs most likely
    to be drawn next (None for a fixed campaign)."""
    if not campaign.is_adaptive:
        return None
    drawn = dict(
        campaign.pairs.filter(is_gold=False).values("chosen_by").annotate(n=Count("pk")).values_list("chosen_by", "n")
    )
    likeliest = []
    # Read with defaults: a design stored by an older version shows no likeliest pairs until recomputed.
    if payload and payload.get("uniform") and payload.get("information") and payload.get("names"):
        share = payload.get("uniform_share", 0.0)
        chance = share * np.asarray(payload["uniform"]) + (1 - share) * np.asarray(payload["information"])
        names = payload["names"]
        pairs = all_pairs(len(names))
        for k in np.argsort(-chance, kind="stable")[:LIKELIEST_SHOWN]:
            if chance[k] > 0:
                first, second = pairs[k]
                likeliest.append({"model_a": names[first], "model_b": names[second], "probability": float(chance[k])})
    return {
        "budget": campaign.budget,
        "uniform_share": campaign.uniform_share,
        "pairs_planned": campaign.pairs_planned,
        "pairs_drawn": campaign.pairs_drawn,
        "drawn_uniformly": drawn.get("uniform", 0),
        "drawn_for_information": drawn.get("information", 0),
        "design": payload,
        "likeliest": likeliest,
    }
