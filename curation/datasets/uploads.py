"""Dataset files too large to read inside a web request: a file over UPLOAD_BACKGROUND_BYTES from
the import page or the API is stored in the database (curation.models.DatasetUpload) and read by a
worker on the `default` queue (curation/tasks.py), the queue large answers uploads use. How such an
upload is kept, claimed, resumed, discarded and finished is core/uploads.py's; this module says
what reading and storing a dataset is: the same two steps as an import read in the request
(curation/datasets/importers.py), every record checked as it is read, writing nothing, then the
dataset stored in one transaction together with the upload's finished status.
"""

from __future__ import annotations

from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet

from core import uploads as stored
from core.models import Workspace
from core.roles import Role
from core.workspaces import scoped, workspace_get
from curation.datasets.importers import DataImportError, dataset_check, dataset_store, validate_dataset_name
from curation.models import DatasetUpload
from curation.registry import formats


def dataset_upload_queue(
    *, fmt: str, name: str, file: UploadedFile, description: str = "", actor=None, workspace: Workspace | None = None
) -> DatasetUpload:
    """Store the file and queue its reading. The format and the name are checked at once
    (DataImportError, DatasetNameError), the file by the worker."""
    if fmt not in formats():
        raise DataImportError(f"Unknown format {fmt!r}; choose one of: {', '.join(formats())}.")
    name = validate_dataset_name(name, workspace)
    upload = stored.upload_file_store(
        DatasetUpload,
        file=file,
        name=name,
        description=description,
        file_format=fmt,
        created_by=actor,
        **({"workspace": workspace} if workspace is not None else {}),
    )
    # The database backend's task row is written beside it, in the same transaction if any.
    dataset_upload_enqueue(upload)
    return upload


def dataset_upload_enqueue(upload: DatasetUpload) -> None:
    """Its reading on the `default` queue, its task id recorded on the upload."""
    # The service <-> task loop of a queued app: curation/tasks.py reads the uploads queued here.
    from curation.tasks import dataset_upload_task

    result = dataset_upload_task.enqueue(upload.pk)
    DatasetUpload.objects.filter(pk=upload.pk).update(task_id=str(result.id)[:64])


def dataset_upload_resume(*, upload: DatasetUpload) -> DatasetUpload:
    """Queue again an upload whose worker died; it is read again from its first line."""
    return stored.upload_resume(upload=upload, enqueue=dataset_upload_enqueue)


def dataset_upload_discard(*, upload: DatasetUpload, actor) -> None:
    """Remove a refused or stopped upload and its stored file, audited in its workspace."""
    stored.upload_discard(
        upload=upload,
        actor=actor,
        target=f"dataset-upload:{upload.pk}",
        workspace=upload.workspace_id,
        what={"upload": upload.pk, "name": upload.name, "format": upload.file_format},
    )


def _check(upload: DatasetUpload, stream, progress):
    # The name is checked again when the dataset is stored: here only its file.
    _, records = dataset_check(
        fmt=upload.file_format, stream=stream, name=upload.name, on_progress=progress, workspace=upload.workspace
    )
    return records


def _store(upload: DatasetUpload, records) -> int:
    dataset = dataset_store(
        fmt=upload.file_format,
        name=upload.name,
        records=records,
        description=upload.description,
        created_by=upload.created_by,
        workspace=upload.workspace,
    )
    DatasetUpload.objects.filter(pk=upload.pk).update(dataset=dataset)
    return len(records)


def dataset_upload_execute(*, upload_id: int) -> str:
    """A worker's reading of one stored dataset file (the task curation/tasks.py queues). Returns
    its final status, or "not queued" when another worker has it or it is done."""
    return stored.upload_execute(
        DatasetUpload, upload_id=upload_id, check=_check, store=_store, refused=DataImportError
    )


def dataset_upload_list(*, user) -> QuerySet[DatasetUpload]:
    """The large dataset imports of the person's researcher workspaces, newest first, without
    their stored files."""
    rows = DatasetUpload.objects.defer("content").select_related("dataset")
    return scoped(rows, user, role=Role.RESEARCHER.value)


def dataset_upload_get(*, user, upload_id: int) -> DatasetUpload:
    """One of them, or 404: another workspace's upload is not found."""
    return workspace_get(dataset_upload_list(user=user), user, role=Role.RESEARCHER.value, pk=upload_id)
