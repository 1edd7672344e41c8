"""Vote and statistics exports for researchers (they may name models; annotators never reach this)."""

from collections.abc import Iterator

from annotation.figures import figures_read
from annotation.models import Vote, Winner
from core.exports import EXPORT_CHUNK, ExportError, ExportTable, exporter
from stats.elo import bt_on_elo

VOTE_FIELDS = [
    "vote_id",
    "dataset",
    "question_id",
    "model_a",
    "model_b",
    "winner",
    # The model's name where `winner` says model_a or model_b; empty for a tie or cannot_determine.
    "winner_model",
    "annotator",
    "campaign",
    "gold",
    "model_a_on_left",
    "seconds_spent",
    "comment",
    "created_at",
    # Adaptive campaigns: the probability with which the vote's pair of models was chosen, and
    # which part of the design chose it (empty for other votes).
    "choice_probability",
    "chosen_by",
]


@exporter("votes", campaign=True, across=True, question_text=True)
def votes_export(
    *,
    dataset=None,
    study=None,
    run=None,
    campaign=None,
    workspaces: set[int] | None = None,
    question_text: bool = False,
) -> ExportTable:
    """Every human vote of the dataset (or of all datasets of the workspaces, or of one
    campaign), streamed in id order; `winner_model` names the model that won; with
    `question_text`, the item's question last."""
    votes = Vote.objects.all()
    if campaign is not None:
        votes = votes.filter(campaign=campaign)
    if workspaces is not None:
        votes = votes.filter(item__dataset__workspace_id__in=workspaces)
    if dataset is not None:
        votes = votes.filter(item__dataset=dataset)
    if study is not None:
        votes = votes.filter(item__dataset__study=study)
    if run is not None:
        votes = votes.filter(item__dataset_id=run.dataset_id)
    rows = (
        votes.order_by("pk")
        .values_list(
            "pk",
            "item__dataset__name",
            "item__external_id",
            "model_a__name",
            "model_b__name",
            "winner",
            "annotator__username",
            "annotator_label",
            "campaign__slug",
            "assignment__pair__is_gold",
            "assignment__model_a_on_left",
            "seconds_spent",
            "comment",
            "created_at",
            "choice_probability",
            "assignment__pair__chosen_by",
            "item__question" if question_text else "pk",
        )
        .iterator(chunk_size=EXPORT_CHUNK)
    )

    def as_dicts():
        for (
            pk, ds, qid, a, b, winner, username, label, campaign, gold, a_left, seconds, comment, created, chance, chosen_by,
            question,
        ) in rows:  # fmt: skip
            row = {
                "vote_id": pk,
                "dataset": ds,
                "question_id": qid,
                "model_a": a,
                "model_b": b,
                "winner": winner,
                "winner_model": {Winner.MODEL_A: a, Winner.MODEL_B: b}.get(winner, ""),
                "annotator": username or label,
                "campaign": campaign or "",
                "gold": bool(gold),
                "model_a_on_left": a_left,
                "seconds_spent": seconds,
                "comment": comment,
                "created_at": created,
                "choice_probability": chance,
                "chosen_by": chosen_by or "",
            }
            if question_text:
                row["question_text"] = question
            yield row

    fields = VOTE_FIELDS + (["question_text"] if question_text else [])
    return ExportTable(fields=fields, rows=as_dicts(), probabilities=["choice_probability"])


# ---------------------------------------------------------------- statistics tables

BT_FIELDS = [
    "dataset",
    "rank",
    "model",
    "coefficient",
    "lower",
    "upper",
    "elo",
    "elo_lower",
    "elo_upper",
    "wins",
    "losses",
    "ties",
    "regularised",
    "fit",
    "ranked",
    "rank_meaningful",
    "note",
]
AGREEMENT_FIELDS = ["dataset", "metric", "rater_a", "rater_b", "units", "agreement", "value"]
AGREEMENT_ROUNDED = ["agreement", "value"]
# Bootstrap rounds and seed of the exported intervals: fixed, so the same votes export the same table.
EXPORT_ROUNDS = 1000
EXPORT_SEED = 0


def _statistics_dataset(dataset, run, what: str):
    """Statistics are per dataset: all human votes on it, every campaign plus imported votes."""
    if dataset is None and run is not None:
        dataset = run.dataset
    if dataset is None:
        raise ExportError(f"The {what} export needs --dataset NAME (all votes of that dataset).")
    if run is not None and run.dataset_id != dataset.pk:
        raise ExportError(f"Judge run {run.pk} is not on dataset {dataset.name}.")
    return dataset


def bt_rows(report: dict, *, dataset, anchor: str | None = None) -> Iterator[dict]:
    """The rows of the "bt" table for a report of annotation.report.bt_report: the export and
    the `bt` command's CSV write the same columns through the same writer. "elo" columns are
    Arena's Elo points (400 / ln 10 per unit; `anchor` or else the mean model at 1000); "fit"
    says whether the fit was regularised and why."""
    report = bt_on_elo(report, anchor=anchor)
    for score in report["scores"]:
        yield {
            "dataset": dataset.name,
            "rank": score["rank"],
            "model": score["label"],
            "coefficient": score["score"],
            "lower": score["lower"],
            "upper": score["upper"],
            "elo": score["elo"],
            "elo_lower": score["elo_lower"],
            "elo_upper": score["elo_upper"],
            "wins": score["wins"],
            "losses": score["losses"],
            "ties": score["ties"],
            "ranked": True,
            # False below the minimum of decisive votes, or without intervals (see ranks_reason).
            "rank_meaningful": report["ranks_meaningful"],
            "note": score["note"],
            # Figures stored before the fit said which it used have neither.
            "regularised": report.get("regularised"),
            "fit": report.get("regularisation", ""),
        }
    for label in report["disconnected"]:
        yield {"dataset": dataset.name, "model": label, "ranked": False}


@exporter("bt", campaign=True)
def bt_export(*, dataset=None, study=None, run=None, campaign=None) -> ExportTable:
    """Bradley-Terry per model over the dataset's votes, as `bt --dataset NAME` prints it:
    coefficient, 95% bootstrap interval (1000 rounds, seed 0), its Elo points, rank by interval
    overlap, and wins/losses/ties. Models the votes do not connect come last, not ranked. Gold
    pairs, cannot-determine votes and annotators flagged in their campaign are left out. With a
    campaign, that campaign's votes only: the very figures its results page shows."""
    if campaign is not None:
        return ExportTable(fields=BT_FIELDS, rows=_campaign_bt_rows(campaign))
    dataset = _statistics_dataset(dataset, run, "bt")

    def rows():
        # The stored figures when they match the votes as they are now, else computed (and stored) now.
        report, _figures = figures_read(
            what="bt", dataset=dataset, rounds=EXPORT_ROUNDS, seed=EXPORT_SEED, compute="stale"
        )
        assert report is not None  # compute="stale" computes figures missing or stale
        yield from bt_rows(report, dataset=dataset)

    return ExportTable(fields=BT_FIELDS, rows=rows())


def _campaign_figures(campaign, run=None) -> dict:
    """The figures a campaign's results page shows by default (1000 rounds, seed 0, the dataset's
    latest finished pointwise run), read from the same stored row, made to match the votes now."""
    # report pulls in scipy.stats (~0.5 s); this module is imported at start-up to register.
    from annotation.report import default_run_for

    judge = run or default_run_for(dataset=campaign.dataset)
    payload, _figures = figures_read(
        what="campaign", campaign=campaign, run=judge, rounds=EXPORT_ROUNDS, seed=EXPORT_SEED, compute="stale"
    )
    return payload or {}


def _campaign_bt_rows(campaign) -> Iterator[dict]:
    yield from bt_rows(_campaign_figures(campaign)["bt"], dataset=campaign.dataset)


@exporter("agreement", campaign=True)
def agreement_export(*, dataset=None, study=None, run=None, campaign=None) -> ExportTable:
    """Agreement over the dataset's votes, one metric per row: raw agreement with and without
    ties, Fleiss' kappa, Krippendorff's alpha, the left answer's win rate, Cohen's kappa per
    pair of annotators, and each annotator against the judge (the run given, else the latest
    finished pointwise run of the dataset; none when there is no such run). With a campaign,
    that campaign's votes only, as its results page shows them."""
    if campaign is not None:
        dataset = campaign.dataset
    else:
        dataset = _statistics_dataset(dataset, run, "agreement")

    def rows():
        # report pulls in scipy.stats (~0.5 s); this module is imported at start-up to register.
        from annotation.report import agreement_report, default_run_for

        judge = run or default_run_for(dataset=dataset)
        if campaign is not None:
            stored = _campaign_figures(campaign, judge).get("report")
            # Without a judge run the page shows no agreement table; the export computes it all the same.
            report = stored["agreement"] if stored else agreement_report(campaign=campaign)
        else:
            report, _figures = figures_read(what="agreement", dataset=dataset, run=judge, compute="stale")
        base = {"dataset": dataset.name, "rater_a": "", "rater_b": ""}
        yield {
            **base,
            "metric": "raw_agreement",
            "units": report["raw_agreement_pairs"],
            "value": report["raw_agreement"],
        }
        yield {
            **base,
            "metric": "raw_agreement_without_ties",
            "units": report["raw_agreement_without_ties_pairs"],
            "value": report["raw_agreement_without_ties"],
        }
        yield {**base, "metric": "fleiss_kappa", "units": report["overlapping_units"], "value": report["fleiss_kappa"]}
        yield {**base, "metric": "krippendorff_alpha", "units": report["units"], "value": report["krippendorff_alpha"]}
        bias = report["position_bias"]
        yield {
            **base,
            "metric": "left_answer_win_rate",
            "units": bias["left_wins"] + bias["right_wins"],
            "value": bias["left_rate"],
        }
        for pair in report["cohen_pairs"]:
            yield {
                "dataset": dataset.name,
                "metric": "cohen_kappa",
                "rater_a": pair["rater_a"],
                "rater_b": pair["rater_b"],
                "units": pair["units"],
                "agreement": pair["agreement"],
                "value": pair["kappa"],
            }
        for row in report["against_judge"]:
            yield {
                "dataset": dataset.name,
                "metric": "cohen_kappa_vs_judge",
                "rater_a": row["rater"],
                "rater_b": f"judge run {judge.pk}",
                "units": row["units"],
                "agreement": row["agreement"],
                "value": row["kappa"],
            }

    # `agreement` is a share and `value` a rate (raw agreement, the left answer's win rate) or a
    # kappa or alpha: all written to 6 decimal places, as every rate of the exports is.
    return ExportTable(fields=AGREEMENT_FIELDS, rows=rows(), probabilities=AGREEMENT_ROUNDED)
