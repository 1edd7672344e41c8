"""A dataset's candidate answers in the browser (`/datasets/<name>/answers/`): upload one model's
answers (a large file read by a worker, its progress shown), or generate them from an endpoint
after seeing the calls, tokens and cost, then follow, cancel and resume the generation. Thin:
parse, call one service or selector, render."""

import hashlib
import json
from urllib.parse import quote

from django.conf import settings as project_settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.archiving import ArchivedError, refuse_if_archived
from core.roles import AuthenticatedHttpRequest
from core.workspaces import in_workspace
from curation.datasets.importers import DataImportError
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Dataset
from judging.access import researcher_required
from judging.answers.forms import AnswerUploadForm, GenerationForm
from judging.answers.generation import GenerationError, generation_plan
from judging.answers.generation_jobs import (
    generation_can_resume,
    generation_cancel,
    generation_resume,
    generation_start,
)
from judging.answers.imports import answer_format, answers_import
from judging.answers.selectors import (
    GenerationNotFound,
    UploadNotFound,
    answer_counts,
    generation_list,
    generation_of_dataset,
    upload_list,
    upload_of_dataset,
)
from judging.answers.uploads import (
    UploadError,
    upload_can_discard,
    upload_can_resume,
    upload_discard,
    upload_in_background,
    upload_queue,
    upload_resume,
)
from judging.answers.versions import AnswerVersionRefused, answers_delete, answers_restore, earlier_versions
from judging.batching import batch_jobs_progress
from llm.batch import batch_api_check
from llm.errors import EndpointError
from llm.selectors import endpoint_list, endpoint_prices, endpoint_row_config


def _dataset(name: str, user) -> Dataset:
    """The dataset `name` of one of the person's workspaces (404 for another's, as for none)."""
    try:
        return dataset_by_name(name=name, user=user)
    except DatasetNotFound:
        raise Http404 from None


def _fingerprint(data: dict) -> str:
    """What a preview showed, so that a start with other settings shows the numbers first."""
    plain = {key: getattr(value, "pk", value) for key, value in data.items()}
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _page_url(dataset: Dataset) -> str:
    return reverse("judging:dataset-answers", args=[dataset.name])


@researcher_required
def dataset_answers(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """The dataset's candidate models with their answer counts, an upload, a generation with its
    preview, and the generations started so far with their progress."""
    dataset = _dataset(name, request.user)
    action = request.POST.get("action", "") if request.method == "POST" else ""
    if action:
        try:
            # Archived: read-only until restored, so no upload, replace, delete or generation.
            refuse_if_archived(dataset)
        except ArchivedError as error:
            messages.error(request, error.message)
            return redirect(_page_url(dataset))
    # The dataset's workspace's endpoints (names are unique there, not across the server).
    endpoints = list(in_workspace(endpoint_list(user=request.user), dataset.workspace_id))
    # Both forms have a `model` field: their own id prefixes keep the page's ids unique.
    upload = AnswerUploadForm(
        request.POST if action == "upload" else None, request.FILES if action == "upload" else None, auto_id="upload_%s"
    )
    generate = GenerationForm(
        request.POST if action in ("preview", "start") else None, endpoints=endpoints, auto_id="generate_%s"
    )
    preview = None
    if action == "upload" and upload.is_valid():
        done = _upload(request, dataset, upload)
        if done is not None:
            return done
    elif action == "delete":
        return _answers_delete(request, dataset)
    elif action == "restore":
        return _answers_restore(request, dataset)
    elif action in ("preview", "start") and generate.is_valid():
        data = generate.cleaned_data
        settings = {
            "model_name": data["model"].strip(),
            "endpoint": data["endpoint"],
            "preset": data["preset"],
            "max_tokens": data["max_tokens"],
            "batch": data["batch"],
        }
        fingerprint = _fingerprint(settings)
        try:
            if action == "start" and request.POST.get("previewed") == fingerprint:
                generation = generation_start(dataset=dataset, created_by=request.user, **settings)
                started = (
                    _("Generating %(model)s's answers: %(calls)d calls sent through the Batch API.")
                    if generation.batch
                    else _("Generating %(model)s's answers: %(calls)d calls.")
                )
                messages.success(request, started % {"model": generation.model.name, "calls": generation.total})
                return redirect(_page_url(dataset) + f"#generation-{generation.pk}")
            if action == "start":
                messages.info(request, _("The settings changed since the preview: check these numbers, then start."))
            endpoint = data["endpoint"]
            config = endpoint_row_config(endpoint, cache_workspace_id=dataset.workspace_id)
            plan = generation_plan(
                dataset=dataset,
                model_name=settings["model_name"],
                endpoint=config,
                preset=settings["preset"] or None,
                max_tokens=settings["max_tokens"],
            )
            if settings["batch"]:
                batch_api_check(config)
        except (GenerationError, EndpointError, DataImportError) as problem:
            generate.add_error(None, str(problem))
        else:
            input_price, output_price = endpoint_prices(endpoint, batch=settings["batch"])
            preview = {
                "plan": plan,
                "cost": plan.cost(input_price=input_price, output_price=output_price),
                "endpoint": endpoint,
                "batch": settings["batch"],
                "fingerprint": fingerprint,
            }
    models = list(answer_counts(dataset=dataset))
    # "Replace" on a model's row: the upload, shown as the confirmation of what a replace does.
    replace_name = request.GET.get("replace", "")
    if action == "upload" and upload.is_bound and upload.data.get("replace") in ("True", "true", "on", "1"):
        replace_name = upload.data.get("model", "").strip()  # a failed replace shows its confirmation again
    replacing = next((m for m in models if m.name == replace_name), None)
    if replacing is not None and not upload.is_bound:
        upload = AnswerUploadForm(initial={"model": replacing.name, "replace": True}, auto_id="upload_%s")
    generations = list(generation_list(dataset=dataset)[:20])
    uploads = list(upload_list(dataset=dataset)[:10])
    for stored in uploads:
        stored.resumable = upload_can_resume(stored)  # type: ignore[attr-defined]  # for the template
        stored.discardable = upload_can_discard(stored)  # type: ignore[attr-defined]
    for generation in generations:
        generation.resumable = generation_can_resume(generation)  # type: ignore[attr-defined]  # for the template
        if generation.batch:
            generation.batch_progress = batch_jobs_progress(generation.batch_jobs.all())  # type: ignore[attr-defined]
    return render(
        request,
        "judging/dataset_answers.html",
        {
            "dataset": dataset,
            # Archived: what it has, without the forms that would change it.
            "read_only": dataset.archived_at is not None,
            "models": models,
            "earlier": list(earlier_versions(dataset=dataset)),
            "replacing": replacing,
            "upload": upload,
            "generate": generate,
            "preview": preview,
            "generations": generations,
            "uploads": uploads,
            "background_mb": f"{project_settings.UPLOAD_BACKGROUND_BYTES / 2**20:g}",
            "item_count": dataset.items.count(),
            "quoted_name": quote(dataset.name),
        },
        status=400 if upload.errors or generate.errors else 200,
    )


def _answers_delete(request: AuthenticatedHttpRequest, dataset: Dataset) -> HttpResponse:
    """Ask first what a delete does; delete once confirmed."""
    model = request.POST.get("model", "").strip()
    current = next((m for m in answer_counts(dataset=dataset) if m.name == model), None)
    if current is None:
        messages.error(
            request, _("%(model)s has no answers on %(dataset)s.") % {"model": model, "dataset": dataset.name}
        )
        return redirect(_page_url(dataset))
    if request.POST.get("confirm") != "1":
        question = _(
            "Delete the answers of %(model)s on %(dataset)s (version %(version)d, %(count)d answers)? "
            "The model then has no answers here; runs and campaigns that used them keep them."
        ) % {
            "model": model,
            "dataset": dataset.name,
            # Annotated by answer_counts.
            "version": current.answer_version,  # type: ignore[attr-defined]
            "count": current.answer_count,  # type: ignore[attr-defined]
        }
        return render(
            request,
            "home/confirm.html",
            {
                "question": question,
                "action": _page_url(dataset),
                "fields": {"action": "delete", "model": model},
                "button": _("Delete the answers"),
                "back": _page_url(dataset),
            },
        )
    answers_delete(dataset=dataset, model_name=model, actor=request.user)
    messages.success(request, _("Deleted the answers of %(model)s; runs made before keep them.") % {"model": model})
    return redirect(_page_url(dataset))


def _answers_restore(request: AuthenticatedHttpRequest, dataset: Dataset) -> HttpResponse:
    """Ask first what making an earlier version current again does; do it once confirmed."""
    model = request.POST.get("model", "").strip()
    version = request.POST.get("version", "")
    earlier = earlier_versions(dataset=dataset).filter(model__name=model)
    target = earlier.filter(version=int(version)).first() if version.isdigit() else None
    try:
        # An archived dataset was refused with the page's other actions (dataset_answers).
        if target is None:
            raise AnswerVersionRefused(
                _("%(model)s has no earlier version %(version)s of answers on %(dataset)s.")
                % {"model": model, "version": version, "dataset": dataset.name}
            )
        if request.POST.get("confirm") == "1":
            answers_restore(dataset=dataset, model_name=model, version=target.version, actor=request.user)
            messages.success(
                request,
                _("Version %(version)d of %(model)s's answers is current again; runs made before keep theirs.")
                % {"version": target.version, "model": model},
            )
            return redirect(_page_url(dataset))
    except (ArchivedError, AnswerVersionRefused) as problem:
        messages.error(request, str(problem))
        return redirect(_page_url(dataset))
    current = next((m for m in answer_counts(dataset=dataset) if m.name == model), None)
    # Annotated by earlier_versions and answer_counts.
    facts = {"model": model, "dataset": dataset.name, "version": target.version, "count": target.answer_count}  # type: ignore[attr-defined]
    if current is None:
        question = (
            _(
                "Make version %(version)d of %(model)s's answers on %(dataset)s (%(count)d answers) current again? "
                "The model has no answers here now; new runs take this version."
            )
            % facts
        )
    else:
        question = _(
            "Make version %(version)d of %(model)s's answers on %(dataset)s (%(count)d answers) current again, "
            "in place of version %(current)d? Runs and campaigns that used version %(current)d keep it; "
            "new runs take version %(version)d."
        ) % {**facts, "current": current.answer_version}  # type: ignore[attr-defined]
    return render(
        request,
        "home/confirm.html",
        {
            "question": question,
            "action": _page_url(dataset),
            "fields": {"action": "restore", "model": model, "version": target.version},
            "button": _("Make current again"),
            "back": _page_url(dataset),
        },
    )


@researcher_required
@require_POST
def generation_action(request: AuthenticatedHttpRequest, name: str, generation_id: int, action: str) -> HttpResponse:
    """Cancel or resume one of the dataset's generations."""
    dataset = _dataset(name, request.user)
    try:
        generation = generation_of_dataset(dataset=dataset, generation_id=generation_id)
    except GenerationNotFound:
        raise Http404 from None
    try:
        if action == "cancel":
            generation_cancel(generation=generation, actor=request.user)
            messages.success(request, _("Generation cancelled; the answers that came back are kept."))
        elif action == "resume":
            generation_resume(generation=generation, actor=request.user)
            messages.success(request, _("Generation resumed for the items still without an answer."))
        else:
            raise Http404
    except (GenerationError, EndpointError, ArchivedError) as problem:
        messages.error(request, str(problem))
    return redirect(_page_url(dataset) + f"#generation-{generation.pk}")


def _upload(request: AuthenticatedHttpRequest, dataset: Dataset, upload: AnswerUploadForm) -> HttpResponse | None:
    """A valid upload read now, or, over UPLOAD_BACKGROUND_BYTES, stored for a worker; the
    redirect after it, or None with the form's errors."""
    file = upload.cleaned_data["file"]
    model_name = upload.cleaned_data["model"]
    replace = upload.cleaned_data["replace"]
    try:
        if upload_in_background(file.size):
            queued = upload_queue(
                dataset=dataset, model_name=model_name, file=file, actor=request.user, replace=replace
            )
            messages.success(
                request,
                _(
                    "The file is large: a worker reads it now, and its progress is shown below. Nothing is "
                    "stored unless every line can be."
                ),
            )
            return redirect(_page_url(dataset) + f"#upload-{queued.pk}")
        count = answers_import(
            dataset_name=dataset.name,
            workspace_id=dataset.workspace_id,
            model_name=model_name,
            stream=file,
            file_format=answer_format(file.name or ""),
            actor=request.user,
            replace=replace,
        )
    except DataImportError as error:
        upload.add_error("file", str(error))
        return None
    done = (
        _("Replaced the answers of %(model)s with %(count)d new ones; runs made before keep the old ones.")
        if replace
        else _("Imported %(count)d answers of %(model)s.")
    )
    messages.success(request, done % {"count": count, "model": model_name.strip()})
    return redirect(_page_url(dataset))


def _dataset_upload(request: AuthenticatedHttpRequest, name: str, upload_id: int):
    """The dataset (of the person's workspaces) and its large upload; 404 for either unknown."""
    dataset = _dataset(name, request.user)
    try:
        return dataset, upload_of_dataset(dataset=dataset, upload_id=upload_id)
    except UploadNotFound:
        raise Http404 from None


@researcher_required
@require_POST
def upload_resume_view(request: AuthenticatedHttpRequest, name: str, upload_id: int) -> HttpResponse:
    """Queue again a large upload whose worker stopped."""
    dataset, upload = _dataset_upload(request, name, upload_id)
    try:
        upload_resume(upload=upload)
        messages.success(request, _("The upload is queued again; it is read from its first line."))
    except (UploadError, ArchivedError) as problem:
        messages.error(request, str(problem))
    return redirect(_page_url(dataset) + f"#upload-{upload.pk}")


@researcher_required
@require_POST
def upload_discard_view(request: AuthenticatedHttpRequest, name: str, upload_id: int) -> HttpResponse:
    """Discard a refused or stopped large upload and its stored file (confirmed on the page)."""
    dataset, upload = _dataset_upload(request, name, upload_id)
    try:
        upload_discard(upload=upload, actor=request.user)
        messages.success(
            request, _("The upload %(file)s is discarded, and its stored file with it.") % {"file": upload.file_name}
        )
    except (UploadError, ArchivedError) as problem:
        messages.error(request, str(problem))
        return redirect(_page_url(dataset) + f"#upload-{upload.pk}")
    return redirect(_page_url(dataset))
