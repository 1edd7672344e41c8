"""Reads for researchers: Bradley-Terry, annotator quality, agreement and alignment with the judge.

These are selectors (reads only) that fetch plain values from the database and
hand them to the pure modules ranking.py, agreement.py and correlation.py.
Researchers may see model names here; annotators never reach these functions.
"""

from collections import defaultdict
from collections.abc import Iterable
from statistics import median

from django.db.models import Avg, Count, Q, QuerySet

from annotation.models import Campaign, Vote, Winner
from curation.choices import Intent
from curation.studies.selectors import satisfaction_by_intent_of
from judging.models import JudgeRun, Judgment
from judging.results.preferences import judge_preferences
from stats import agreement, correlation, ranking, sample_size, tallies
from stats.elo import bt_on_elo
from stats.separation import separation_of_counts

_TO_RANKING = {Winner.MODEL_A: "a", Winner.MODEL_B: "b", Winner.TIE: "tie"}


def campaign_votes(*, dataset=None, campaign: Campaign | None = None) -> QuerySet[Vote]:
    """Votes that count for statistics: of the dataset and/or campaign, gold pairs left out."""
    votes = Vote.objects.exclude(assignment__pair__is_gold=True)
    if dataset is not None:
        votes = votes.filter(item__dataset=dataset)
    if campaign is not None:
        votes = votes.filter(campaign=campaign)
    return votes


def _rater(username, label) -> str:
    return username or label


# Why an annotator is flagged (the values of a quality row's "flags").
FLAG_GOLD = "gold_accuracy"
FLAG_FAST = "too_fast"


def annotator_quality(*, campaign: Campaign) -> list[dict]:
    """Per annotator: votes, gold accuracy, median seconds per item, and whether they are flagged.

    Flagged (`flags` says why, `flagged` is True when any applies): FLAG_GOLD, at least one gold
    vote and gold accuracy below the campaign's threshold; FLAG_FAST, a median time per item
    (over their timed votes) below the campaign's `min_seconds_per_item`, when that is set.
    """
    rows: dict[str, dict] = {}
    for username, label, winner, is_gold, gold_winner, seconds in Vote.objects.filter(campaign=campaign).values_list(
        "annotator__username",
        "annotator_label",
        "winner",
        "assignment__pair__is_gold",
        "assignment__pair__gold_winner",
        "seconds_spent",
    ):
        row = rows.setdefault(
            _rater(username, label),
            {"annotator": _rater(username, label), "votes": 0, "gold": 0, "gold_correct": 0, "_s": []},
        )
        if is_gold:
            row["gold"] += 1
            row["gold_correct"] += winner == gold_winner
        else:
            row["votes"] += 1
        if seconds is not None:
            row["_s"].append(seconds)
    out = []
    for name in sorted(rows):
        row = rows[name]
        seconds = row.pop("_s")
        row["gold_accuracy"] = row["gold_correct"] / row["gold"] if row["gold"] else None
        row["median_seconds"] = median(seconds) if seconds else None
        flags = []
        if row["gold_accuracy"] is not None and row["gold_accuracy"] < campaign.min_gold_accuracy:
            flags.append(FLAG_GOLD)
        if campaign.min_seconds_per_item > 0 and seconds and row["median_seconds"] < campaign.min_seconds_per_item:
            flags.append(FLAG_FAST)
        row["flags"] = flags
        row["flagged"] = bool(flags)
        out.append(row)
    return out


def flagged_annotators(*, campaign: Campaign | None) -> list[str]:
    """Names of the campaign's annotators flagged by their gold accuracy or their speed."""
    if campaign is None:
        return []
    return [row["annotator"] for row in annotator_quality(campaign=campaign) if row["flagged"]]


def _counted_rows(
    *, dataset, campaign: Campaign | None, exclude_flagged: bool, extra: tuple[str, ...] = ()
) -> tuple[list, list[str]]:
    """Vote rows that count for statistics, and the flagged annotators whose votes were left out.

    Flags are per campaign: someone flagged in one campaign loses that campaign's votes only.
    Without a campaign, every campaign of the dataset is checked.
    """
    votes = campaign_votes(dataset=dataset, campaign=campaign)
    excluded: set[str] = set()
    if exclude_flagged:
        if campaign is not None:
            campaigns: Iterable[Campaign] = [campaign]
        else:
            campaigns = Campaign.objects.filter(dataset=dataset) if dataset is not None else Campaign.objects.all()
        for each in campaigns:
            names = flagged_annotators(campaign=each)
            if names:
                # By primary key: a plain exclude() on the nullable annotator would also drop imported votes.
                flagged = Vote.objects.filter(campaign=each).filter(
                    Q(annotator__username__in=names) | Q(annotator__isnull=True, annotator_label__in=names)
                )
                votes = votes.exclude(pk__in=flagged.values("pk"))
                excluded.update(names)
    rows = votes.values_list(
        "item_id",
        "model_a__name",
        "model_b__name",
        "winner",
        "annotator__username",
        "annotator_label",
        "assignment__model_a_on_left",
        *extra,
    )
    return list(rows), sorted(excluded)


def counted_outcomes(*, campaign: Campaign) -> list[tuple[str, str, str]]:
    """The campaign's votes that its Bradley-Terry figures count, as (model_a, model_b, winner)
    with winner "a", "b" or "tie": gold pairs, cannot-determine votes and flagged annotators'
    votes left out, as bt_report leaves them (an adaptive campaign's design fits these)."""
    rows, _excluded = _counted_rows(dataset=None, campaign=campaign, exclude_flagged=True)
    return [(row[1], row[2], _TO_RANKING[row[3]]) for row in rows if row[3] in _TO_RANKING]


def bt_report(
    *,
    dataset=None,
    campaign: Campaign | None = None,
    rounds: int = 1000,
    seed: int = 0,
    alpha: float | None = None,
    exclude_flagged: bool = True,
    anchor: str | None = None,
    weights: str = "none",
) -> dict:
    """Bradley-Terry scores with bootstrap intervals from the human votes.

    weights "ipw": each vote weighs 1 / the probability with which its pair was chosen (adaptive
    campaigns record it, `Vote.choice_probability`), as Arena fits; a ValueError when a counted
    vote has none. The intervals then resample the weighted cells as the plain fit's do.

    alpha None (the default) fits unregularised where the comparison graph is strongly connected,
    as FastChat does, and regularised only where it is not: "regularised" and "regularisation"
    say which was used and why. Each score carries its Elo points beside the log-strength
    ("elo", "elo_lower", "elo_upper": 400 / ln 10 per unit, `anchor` or else the mean at 1000;
    see stats.elo.bt_on_elo).

    Cannot-determine votes are excluded from the fit and counted; votes of
    flagged annotators are left out unless `exclude_flagged` is False. `ranks_meaningful` is
    False (with `ranks_reason` and the models in `ranks_too_few`) when a ranked model has fewer
    than MIN_DECISIVE decisive votes or there are no intervals (stats.sample_size).
    """
    if weights not in ("none", "ipw"):
        raise ValueError(f"Unknown weights {weights!r}: expected 'none' or 'ipw'.")
    extra = ("choice_probability",) if weights == "ipw" else ()
    rows, excluded = _counted_rows(dataset=dataset, campaign=campaign, exclude_flagged=exclude_flagged, extra=extra)
    fitted = [row for row in rows if row[3] in _TO_RANKING]
    labels = sorted({row[1] for row in rows} | {row[2] for row in rows})
    if campaign is not None:
        labels = sorted(set(labels) | set(campaign.candidates.values_list("name", flat=True)))
    if weights == "ipw":
        missing = sum(row[7] is None for row in fitted)
        if missing:
            raise ValueError(
                f"--weights ipw needs the probability with which each vote's pair was chosen, and {missing} of the "
                f"{len(fitted)} counted votes have none (a fixed design's votes, or votes imported without one)."
            )
        counts = tallies.weighted_pair_counts(
            labels,
            [row[1] for row in fitted],
            [row[2] for row in fitted],
            [_TO_RANKING[row[3]] for row in fitted],
            [1.0 / row[7] for row in fitted],
        )
    else:
        counts = tallies.pair_counts(labels, [(row[1], row[2], _TO_RANKING[row[3]]) for row in fitted])
    result = ranking.bradley_terry(counts, alpha=alpha, rounds=rounds, seed=seed)
    verdict = sample_size.ranks_verdict(
        {score.label: score.wins + score.losses for score in result.scores},
        has_intervals=any(score.lower is not None for score in result.scores),
    )
    fitted_as = result.as_dict(fit_details=True)
    # The Elo anchor is bt_on_elo's "elo_anchor"; these scores are log-strengths ("scale").
    del fitted_as["anchor"]
    return {
        **bt_on_elo(fitted_as, anchor=anchor),
        "votes": len(rows),
        "cannot_determine": len(rows) - len(fitted),
        "excluded_annotators": excluded,
        "ranks_meaningful": verdict["meaningful"],
        "ranks_reason": verdict["reason"],
        "ranks_too_few": verdict["too_few"],
        "min_decisive": sample_size.MIN_DECISIVE,
        "votes_to_separate": separation_of_counts(counts, {score.label: score.score for score in result.scores}),
        "weights": weights,
    }


def _units(rows) -> agreement.Units[tuple[int, str, str]]:
    """Votes as agreement units (question, unordered model pair), labels oriented by model name."""
    units: agreement.Units[tuple[int, str, str]] = defaultdict(list)
    for item_id, name_a, name_b, winner, username, label, _left in rows:
        if winner == Winner.CANNOT_DETERMINE:
            continue
        first, second = sorted([name_a, name_b])
        if winner == Winner.TIE:
            value = "tie"
        else:
            winning = name_a if winner == Winner.MODEL_A else name_b
            value = "first" if winning == first else "second"
        units[(item_id, first, second)].append((_rater(username, label), value))
    return dict(units)


def vote_units(
    *, dataset=None, campaign: Campaign | None = None, exclude_flagged: bool = True
) -> agreement.Units[tuple[int, str, str]]:
    """The votes that count, per (question, sorted model pair): [(rater, "first"/"second"/"tie")]."""
    rows, _excluded = _counted_rows(dataset=dataset, campaign=campaign, exclude_flagged=exclude_flagged)
    return _units(rows)


def judge_model_scores(*, run) -> dict[str, float]:
    """Mean final score per model over the run's judgments that parsed (final_score not null)."""
    rows = (
        Judgment.objects.filter(run=run, final_score__isnull=False, model__is_probe=False)
        .values("model__name")
        .annotate(score=Avg("final_score"))
        .order_by("model__name")
    )
    return {row["model__name"]: float(row["score"]) for row in rows}


def judge_intent_scores(*, run) -> dict[str, float]:
    """Mean final score per question intent over the run's judgments that parsed."""
    rows = (
        Judgment.objects.filter(run=run, final_score__isnull=False, model__is_probe=False)
        .exclude(item__intent="")
        .values("item__intent")
        .annotate(score=Avg("final_score"))
        .order_by("item__intent")
    )
    return {row["item__intent"]: float(row["score"]) for row in rows}


def satisfaction_by_intent(*, dataset) -> dict[str, dict]:
    """Mean questionnaire satisfaction per intent for the dataset's study (every study when the
    dataset has none): {intent: {"mean", "n"}}."""
    return satisfaction_by_intent_of(study_id=dataset.study_id if dataset is not None else None)


def agreement_report(*, dataset=None, campaign: Campaign | None = None, run=None, exclude_flagged=True) -> dict:
    """Raw agreement (with and without ties), Cohen's kappa per annotator pair and against the
    judge, Fleiss' kappa, Krippendorff's alpha and position bias."""
    rows, excluded = _counted_rows(dataset=dataset, campaign=campaign, exclude_flagged=exclude_flagged)
    units = _units(rows)
    overlapping = {unit: ratings for unit, ratings in units.items() if len(ratings) >= 2}
    with_ties, pairs_with = agreement.raw_agreement(overlapping, include_ties=True)
    without_ties, pairs_without = agreement.raw_agreement(overlapping, include_ties=False)
    left = right = 0
    for _item, _a, _b, winner, _u, _l, a_on_left in rows:
        if a_on_left is None or winner not in (Winner.MODEL_A, Winner.MODEL_B):
            continue
        if (winner == Winner.MODEL_A) == a_on_left:
            left += 1
        else:
            right += 1
    return {
        "units": len(units),
        "overlapping_units": len(overlapping),
        "raw_agreement": with_ties,
        "raw_agreement_pairs": pairs_with,
        "raw_agreement_without_ties": without_ties,
        "raw_agreement_without_ties_pairs": pairs_without,
        "cohen_pairs": agreement.cohen_kappa_by_pair(units),
        "fleiss_kappa": agreement.fleiss_kappa(overlapping),
        "krippendorff_alpha": agreement.krippendorff_alpha_nominal(units),
        "against_judge": agreement.against_reference(units, judge_preferences(run=run)) if run is not None else [],
        "position_bias": correlation.position_bias(left, right),
        "excluded_annotators": excluded,
    }


def alignment_report(
    *, dataset, run, campaign: Campaign | None = None, rounds: int = 1000, seed: int = 0, exclude_flagged=True
) -> dict:
    """BT against judge scores per model, judge score against satisfaction per intent, and agreement."""
    bt = bt_report(dataset=dataset, campaign=campaign, rounds=rounds, seed=seed, exclude_flagged=exclude_flagged)
    judge = judge_model_scores(run=run)
    models = [row for row in bt["scores"] if row["label"] in judge]
    bt_vs_judge = correlation.correlations([row["score"] for row in models], [judge[row["label"]] for row in models])
    by_intent = judge_intent_scores(run=run)
    satisfaction = satisfaction_by_intent(dataset=dataset)
    intents = [intent for intent in Intent.values if intent in by_intent and intent in satisfaction]
    return {
        "dataset": dataset.name,
        "run": run.pk,
        "bt": bt,
        "judge_scores": judge,
        "bt_vs_judge": {
            "points": [{"model": row["label"], "bt": row["score"], "judge": judge[row["label"]]} for row in models],
            **bt_vs_judge,
        },
        "satisfaction_vs_judge": {
            "points": [
                {
                    "intent": intent,
                    "judge": by_intent[intent],
                    "satisfaction": satisfaction[intent]["mean"],
                    "respondents": satisfaction[intent]["n"],
                }
                for intent in intents
            ],
            **correlation.correlations([by_intent[i] for i in intents], [satisfaction[i]["mean"] for i in intents]),
        },
        "agreement": agreement_report(dataset=dataset, campaign=campaign, run=run, exclude_flagged=exclude_flagged),
    }


def default_run_for(*, dataset):
    """The latest finished pointwise judge run of the dataset (not archived), if any."""
    return (
        JudgeRun.objects.active()
        .filter(dataset=dataset, mode="pointwise", status=JudgeRun.Status.FINISHED)
        .order_by("-created_at", "-pk")
        .first()
    )


def vote_counts(*, campaign: Campaign) -> dict:
    """Votes by outcome in the campaign (gold pairs left out)."""
    return campaign_votes(campaign=campaign).aggregate(
        total=Count("pk"),
        cannot_determine=Count("pk", filter=Q(winner=Winner.CANNOT_DETERMINE)),
        ties=Count("pk", filter=Q(winner=Winner.TIE)),
    )
