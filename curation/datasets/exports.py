"""Export tables of datasets: their items (candidate answers are judging's, judging/results/exports.py)."""

from core.exports import EXPORT_CHUNK, ExportError, ExportTable, exporter
from curation.models import Item

ITEM_FIELDS = [
    "dataset",
    "external_id",
    "question",
    "reference",
    "intent",
    "category",
    "subcategory",
    "language",
    "country",
    "metadata",
]


def _require_dataset(dataset, what: str):
    if dataset is None:
        raise ExportError(f"The {what} export needs --dataset NAME.")
    return dataset


def item_rows(dataset):
    """Item rows of a dataset in a stable order, read in chunks (memory flat in the row count)."""
    values = Item.objects.filter(dataset=dataset).order_by("id").values(*ITEM_FIELDS[1:])
    for row in values.iterator(chunk_size=EXPORT_CHUNK):
        yield {"dataset": dataset.name, **row}


def _from_a_study(*, dataset=None, study=None, run=None) -> bool:
    return dataset is not None and dataset.study_id is not None


# Items of a study's dataset are participants' questions (as reviewed): exporting them is audited.
@exporter("items", personal=_from_a_study)
def items_export(*, dataset=None, study=None, run=None) -> ExportTable:
    return ExportTable(fields=ITEM_FIELDS, rows=item_rows(_require_dataset(dataset, "items")))
