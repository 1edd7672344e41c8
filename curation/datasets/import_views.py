"""The dataset import page (`/review/datasets/import/`): a public file read in the request, or, over
UPLOAD_BACKGROUND_BYTES, stored for a worker (curation/datasets/uploads.py) with its progress on the
page; a refused or stopped large import resumed or discarded. Thin: parse, call one service or
selector, render."""

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from core.roles import AuthenticatedHttpRequest
from core.uploads import UploadError, upload_can_discard, upload_can_resume, upload_in_background
from curation.access import researcher_required
from curation.datasets.forms import DatasetImportForm
from curation.datasets.importers import DataImportError, DatasetNameError, dataset_import
from curation.datasets.uploads import (
    dataset_upload_discard,
    dataset_upload_get,
    dataset_upload_list,
    dataset_upload_queue,
    dataset_upload_resume,
)

# How many of the workspaces' large imports the page shows, newest first.
SHOWN_UPLOADS = 10


def _page_url() -> str:
    return reverse("curation:review-import")


@researcher_required
def dataset_import_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A dataset from a public file (URS, AlignBench, ChineseAlpacaEval, Arena-Hard), as
    `import_dataset` makes it: frozen, the whole file or nothing; then its page. A large file is
    read by a worker, and the page shows its progress."""
    form = DatasetImportForm(request.POST or None, request.FILES or None, creator=request.user)
    if request.method == "POST" and form.is_valid():
        done = _import(request, form)
        if done is not None:
            return done
    uploads = list(dataset_upload_list(user=request.user)[:SHOWN_UPLOADS])
    for stored in uploads:
        stored.resumable = upload_can_resume(stored)  # type: ignore[attr-defined]  # for the template
        stored.discardable = upload_can_discard(stored)  # type: ignore[attr-defined]
    context = {"form": form, "uploads": uploads, "background_mb": f"{settings.UPLOAD_BACKGROUND_BYTES / 2**20:g}"}
    return render(request, "curation/datasets/import.html", context, status=400 if form.errors else 200)


def _import(request: AuthenticatedHttpRequest, form: DatasetImportForm) -> HttpResponse | None:
    """A valid form's file read now, or stored for a worker; the redirect after it, or None with
    the form's errors."""
    file = form.cleaned_data["file"]
    fields = {
        "fmt": form.cleaned_data["format"],
        "name": form.cleaned_data["name"],
        "description": form.cleaned_data["description"],
        "workspace": form.workspace_chosen(),
    }
    try:
        if upload_in_background(file.size):
            queued = dataset_upload_queue(file=file, actor=request.user, **fields)
            messages.success(
                request,
                _(
                    "The file is large: a worker reads it now, and its progress is shown below. Nothing is "
                    "stored unless every line can be."
                ),
            )
            return redirect(_page_url() + f"#upload-{queued.pk}")
        # Binary: the reader decodes line by line, so an encoding error names its line.
        dataset = dataset_import(stream=file, created_by=request.user, **fields)
    except DatasetNameError as error:
        form.add_error("name", str(error))
        return None
    except DataImportError as error:
        form.add_error("file", str(error))
        return None
    count = dataset.items.count()
    messages.success(
        request,
        ngettext(
            "Imported %(count)d item into dataset %(name)s.",
            "Imported %(count)d items into dataset %(name)s.",
            count,
        )
        % {"count": count, "name": dataset.name},
    )
    return redirect("curation:dataset-detail", name=dataset.name)


@researcher_required
@require_POST
def dataset_upload_resume_view(request: AuthenticatedHttpRequest, upload_id: int) -> HttpResponse:
    """Queue again a large import whose worker stopped."""
    upload = dataset_upload_get(user=request.user, upload_id=upload_id)
    try:
        dataset_upload_resume(upload=upload)
        messages.success(request, _("The upload is queued again; it is read from its first line."))
    except UploadError as problem:
        messages.error(request, str(problem))
    return redirect(_page_url() + f"#upload-{upload.pk}")


@researcher_required
@require_POST
def dataset_upload_discard_view(request: AuthenticatedHttpRequest, upload_id: int) -> HttpResponse:
    """Discard a refused or stopped large import and its stored file (confirmed on the page)."""
    upload = dataset_upload_get(user=request.user, upload_id=upload_id)
    try:
        dataset_upload_discard(upload=upload, actor=request.user)
    except UploadError as problem:
        messages.error(request, str(problem))
        return redirect(_page_url() + f"#upload-{upload.pk}")
    messages.success(
        request, _("The upload %(file)s is discarded, and its stored file with it.") % {"file": upload.file_name}
    )
    return redirect(_page_url())
