"""Vote exports for researchers (they may name models; annotators never reach this)."""

from annotation.models import Vote
from curation.exports import ExportTable, exporter

VOTE_FIELDS = [
    "vote_id", "dataset", "question_id", "model_a", "model_b", "winner", "annotator", "campaign",
    "gold", "model_a_on_left", "seconds_spent", "comment", "created_at",
]


@exporter("votes")
def votes_export(*, dataset=None, study=None, run=None) -> ExportTable:
    """Every human vote of the dataset (or of all datasets), streamed in id order."""
    votes = Vote.objects.all()
    if dataset is not None:
        votes = votes.filter(item__dataset=dataset)
    if study is not None:
        votes = votes.filter(item__dataset__study=study)
    if run is not None:
        votes = votes.filter(item__dataset_id=run.dataset_id)
    rows = (
        votes.order_by("pk")
        .values_list(
            "pk", "item__dataset__name", "item__external_id", "model_a__name", "model_b__name", "winner",
            "annotator__username", "annotator_label", "campaign__slug", "assignment__pair__is_gold",
            "assignment__model_a_on_left", "seconds_spent", "comment", "created_at",
        )
        .iterator(chunk_size=2000)
    )

    def as_dicts():
        for pk, ds, qid, a, b, winner, username, label, campaign, gold, a_left, seconds, comment, created in rows:
            yield {
                "vote_id": pk, "dataset": ds, "question_id": qid, "model_a": a, "model_b": b, "winner": winner,
                "annotator": username or label, "campaign": campaign or "", "gold": bool(gold),
                "model_a_on_left": a_left, "seconds_spent": seconds, "comment": comment, "created_at": created,
            }

    return ExportTable(fields=VOTE_FIELDS, rows=as_dicts())
