"""Imports of public datasets: a whole file in one transaction, or nothing, each record checked
as it is read.

The file's format and every limit are checked by the pure readers (each benchmark's, registered in
curation/registry.py, with core/import_checks.py) before anything is written; the column limits they check come
from the model fields here, so they are the database's.
"""

from collections.abc import Callable
from typing import BinaryIO, TextIO, cast

from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.constraints import constraint_answered
from core.errors import UserbenchError
from core.import_checks import unstorable
from core.models import Workspace, default_workspace_id
from curation.datasets.public_formats import FormatError, ItemRecord
from curation.models import Dataset, Item
from curation.registry import formats


class DataImportError(UserbenchError):
    """A file or request that cannot be imported; nothing was written."""


def item_columns() -> dict[str, int]:
    """The Item columns a public file fills that have a length limit: {field: max_length}."""
    # Each is a CharField, and a CharField has a max_length.
    return {
        name: cast(int, cast(models.CharField, Item._meta.get_field(name)).max_length)
        for name in ("external_id", "category", "subcategory")
    }


def checked_name(value: str, what: str, model, field: str) -> str:
    """A name given on the command line, refused when its column cannot hold it."""
    limit = model._meta.get_field(field).max_length
    if len(value) > limit:
        raise DataImportError(f"The {what} is {len(value)} characters; the limit is {limit}.")
    if unstorable(value):
        raise DataImportError(f"The {what} contains a character a database cannot store (NUL or a lone surrogate).")
    return value


class DatasetNameError(DataImportError):
    """The name given to a new dataset cannot be used (empty, too long, taken); nothing was written."""


def validate_dataset_name(name: str, workspace: Workspace | None) -> str:
    name = name.strip()
    if not name:
        raise DatasetNameError("Give the dataset a name with --name.")
    try:
        name = checked_name(name, "dataset name", Dataset, "name")
    except DataImportError as error:
        raise DatasetNameError(str(error)) from None
    # Names are unique within a workspace: what other workspaces hold is never consulted.
    workspace_id = workspace.pk if workspace is not None else default_workspace_id()
    if Dataset.objects.filter(name=name, workspace_id=workspace_id).exists():
        raise dataset_name_taken(name)
    return name


def dataset_name_taken(name: str) -> DatasetNameError:
    return DatasetNameError(
        _("A dataset named %(name)s exists already in this workspace; choose another name.") % {"name": repr(name)}
    )


# How many records between two calls of a progress callback (a worker's progress).
PROGRESS_EVERY_RECORDS = 10_000


def dataset_check(
    *,
    fmt: str,
    stream: BinaryIO | TextIO,
    name: str,
    select: Callable[[list], list] | None = None,
    on_progress: Callable[[int], None] | None = None,
    workspace: Workspace | None = None,
) -> tuple[str, list[ItemRecord]]:
    """A public file read and checked one record at a time, writing nothing: the first line that
    cannot be stored stops the reading there, so an error on line 2 of a large file answers at
    once. Returns the checked name and the records (`select` keeps a part of them, in the order
    it returns them). DatasetNameError: the name cannot be used (checked before the file is
    read); DataImportError names the line otherwise. `on_progress(records)` is called every
    PROGRESS_EVERY_RECORDS records."""
    known = formats()
    if fmt not in known:
        raise DataImportError(f"Unknown format {fmt!r}; choose one of: {', '.join(known)}.")
    name = validate_dataset_name(name, workspace)
    records: list[ItemRecord] = []
    try:
        for record in known[fmt].read(stream, columns=item_columns()):
            records.append(record)
            if on_progress is not None and len(records) % PROGRESS_EVERY_RECORDS == 0:
                on_progress(len(records))
    except FormatError as error:
        raise DataImportError(f"Nothing imported. {error}") from None
    except UnicodeDecodeError as error:
        raise DataImportError(f"Nothing imported. The file is not UTF-8 text ({error.reason}).") from None
    if select is not None:
        records = select(records)
    return name, records


@transaction.atomic
def dataset_store(
    *,
    fmt: str,
    name: str,
    records: list[ItemRecord],
    description: str = "",
    created_by=None,
    workspace: Workspace | None = None,
) -> Dataset:
    """Checked records stored as a new frozen dataset, in one transaction, and audited
    (`created_by` None: the command line). DatasetNameError: the name was taken meanwhile."""
    name = validate_dataset_name(name, workspace)
    # Taken meanwhile by another request: the same words as the check above.
    with constraint_answered(Dataset, "dataset_name_unique_per_workspace", lambda: dataset_name_taken(name)):
        dataset = Dataset.objects.create(
            name=name,
            description=description,
            source=formats()[fmt].source,
            frozen_at=timezone.now(),
            created_by=created_by,
            # The default workspace when none is named (a single team's install has only that one).
            **({"workspace": workspace} if workspace is not None else {}),
        )
    Item.objects.bulk_create(
        (
            Item(
                dataset=dataset,
                external_id=record.external_id,
                question=record.question,
                reference=record.reference,
                intent=record.intent,
                category=record.category,
                subcategory=record.subcategory,
                language=record.language,
                metadata=record.metadata,
            )
            for record in records
        ),
        batch_size=500,
    )
    audit_record(
        actor=created_by,
        action=AuditAction.DATASET_IMPORTED,
        target=f"dataset:{dataset.name}",
        workspace=dataset.workspace_id,
        details={"format": fmt, "items": len(records)},
    )
    return dataset


def dataset_import(
    *,
    fmt: str,
    stream: BinaryIO | TextIO,
    name: str,
    description: str = "",
    created_by=None,
    select: Callable[[list], list] | None = None,
    workspace: Workspace | None = None,
) -> Dataset:
    """Read a public file and store it as a new frozen dataset version.

    Every record is checked as it is read, before anything is written (`dataset_check`), and the
    writes share one transaction (`dataset_store`), so a bad file leaves the database as it was.
    `stream` is best binary: then an encoding error is reported on its line. `select` keeps a
    part of the validated records (a small slice of a benchmark), in the order it returns them.
    The import is audited, with `created_by` (None: the command line). DatasetNameError: the name
    cannot be used (checked before the file is read). A file over UPLOAD_BACKGROUND_BYTES from the
    import page or the API goes to a worker instead (curation/datasets/uploads.py), through the
    same two steps.
    """
    name, records = dataset_check(fmt=fmt, stream=stream, name=name, select=select, workspace=workspace)
    return dataset_store(
        fmt=fmt, name=name, records=records, description=description, created_by=created_by, workspace=workspace
    )
