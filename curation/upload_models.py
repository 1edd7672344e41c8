"""A dataset file too large to read inside a web request (curation/models.py re-exports it)."""

from django.db import models

from core.models import default_workspace_id
from core.uploads import BackgroundUpload


class DatasetUpload(BackgroundUpload):
    """A dataset file larger than UPLOAD_BACKGROUND_BYTES from the import page or the API, kept in
    the database until a worker on the `default` queue has read it and made the dataset
    (curation/datasets/uploads.py, with core/uploads.py). The dataset and the finished status are
    written in one transaction: never half a dataset. The file is emptied once the upload
    finishes or is refused; an upload whose worker died keeps it to be resumed or discarded."""

    # What the new dataset is to be: its name is checked when the file is queued and again when
    # it is stored (another import may have taken it meanwhile).
    name = models.CharField(max_length=100)
    description = models.CharField(max_length=2000, blank=True)
    file_format = models.CharField(max_length=32)
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id
    )
    # The dataset it made, once finished.
    dataset = models.ForeignKey("curation.Dataset", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta(BackgroundUpload.Meta):
        pass

    def __str__(self):
        return f"dataset upload {self.pk} ({self.name})"
