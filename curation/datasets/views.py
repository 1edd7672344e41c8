"""Dataset pages: every dataset and its items (/datasets/), working datasets, building one from
a study, working copies of frozen ones, LLM steps, freezing, version diffs.

Thin: parse the request, call one service or selector, render.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from core.archive_views import archive_allowed, archive_page_action
from core.archiving import ArchivedError
from core.errors import UserbenchError
from core.list_workspaces import list_workspaces
from core.params import ParameterError, int_param
from core.roles import AuthenticatedHttpRequest, Role
from core.workspaces import in_workspace, scoped, workspace_get
from curation.access import researcher_required
from curation.choices import Intent, Language
from curation.datasets.llm_steps import (
    curation_job_restart_enqueue,
    curation_model_or_none,
    reference_job_enqueue,
    translation_job_enqueue,
)
from curation.datasets.selectors import (
    ITEM_STATUSES,
    DatasetNotFound,
    dataset_by_name,
    dataset_get,
    dataset_item_facets,
    dataset_items,
    dataset_jobs,
    dataset_list_with_counts,
    dataset_related_versions,
    working_datasets,
)
from curation.datasets.services import (
    VersionError,
    dataset_freeze,
    dataset_versions,
    dataset_working_copy,
    datasets_diff,
    freezable_items,
    study_dataset_build,
    working_copy_name,
)
from curation.models import CurationJob, Dataset, Study
from llm.errors import EndpointError
from llm.selectors import endpoint_by_name, endpoint_list

RESEARCHER = Role.RESEARCHER.value


@researcher_required
def datasets_page(request: HttpRequest) -> HttpResponse:
    """Working datasets, their versions and LLM jobs; freezing starts here."""
    return render(
        request,
        "curation/review/datasets.html",
        {
            "datasets": working_datasets(user=request.user, role=RESEARCHER),
            "studies": scoped(Study.objects.active().order_by("slug"), request.user, role=RESEARCHER),
        },
    )


@researcher_required
@require_POST
def dataset_build_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Create or extend a study's working dataset from its accepted cases."""
    study = (
        scoped(Study.objects.active(), request.user, role=RESEARCHER).filter(slug=request.POST.get("study", "")).first()
    )
    name = request.POST.get("name", "").strip()
    if study is None or not name:
        messages.error(request, _("Choose a study and give the dataset a name."))
        return redirect("curation:review-datasets")
    try:
        dataset, added = study_dataset_build(study=study, name=name, created_by=request.user)
    except (VersionError, ArchivedError) as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("curation:review-datasets")
    messages.success(request, _("%(count)s items added.") % {"count": added})
    return redirect("curation:review-dataset", dataset_id=dataset.pk)


@researcher_required
@require_POST
def dataset_job_view(request: AuthenticatedHttpRequest, dataset_id: int) -> HttpResponse:
    """Start reference drafting or translation in the background."""
    dataset = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=dataset_id)
    kind = request.POST.get("kind")
    model = request.POST.get("model", "").strip()
    endpoint = request.POST.get("endpoint", "").strip()
    starters = {"reference": reference_job_enqueue, "translation": translation_job_enqueue}
    if kind not in starters:
        raise Http404
    try:
        if endpoint:
            # Only the person's endpoints of the dataset's workspace; another team's namesake is unknown here.
            endpoint_by_name(name=endpoint, user=request.user, workspace_id=dataset.workspace_id)
        # An empty model is the endpoint's default (curation_model_for); the job records which.
        job = starters[kind](dataset=dataset, model=model, endpoint_name=endpoint, created_by=request.user)
    except (VersionError, ArchivedError) as exc:
        messages.error(request, " ".join(exc.messages))
    except EndpointError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            _("Job %(job)s started for %(count)s items with %(model)s.")
            % {"job": job.pk, "count": job.total, "model": job.model},
        )
    return redirect("curation:review-dataset", dataset_id=dataset.pk)


@researcher_required
@require_POST
def dataset_job_restart_view(request: HttpRequest, dataset_id: int, job_id: int) -> HttpResponse:
    """Start a failed job again, on the endpoint chosen in the form: only its failed items are sent."""
    job = workspace_get(
        CurationJob.objects.all(),
        request.user,
        role=RESEARCHER,
        via="dataset__workspace",
        pk=job_id,
        dataset_id=dataset_id,
    )
    try:
        if request.POST.get("endpoint", ""):
            endpoint_by_name(name=request.POST["endpoint"], user=request.user, workspace_id=job.dataset.workspace_id)
        job, count = curation_job_restart_enqueue(job_id=job.pk, endpoint_name=request.POST.get("endpoint", ""))
    except UserbenchError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            ngettext(
                "Job %(job)s started again for %(count)s item, at %(endpoint)s.",
                "Job %(job)s started again for %(count)s items, at %(endpoint)s.",
                count,
            )
            % {"job": job.pk, "count": count, "endpoint": job.endpoint_name or _("the default endpoint")},
        )
    return redirect("curation:review-dataset", dataset_id=dataset_id)


@researcher_required
def dataset_page(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """One working dataset: what a freeze would take, its versions, jobs and a diff form."""
    dataset = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=dataset_id)
    if dataset.frozen_at is not None and dataset.frozen_from_id:
        return redirect("curation:review-dataset", dataset_id=dataset.frozen_from_id)
    versions = list(dataset_versions(dataset))
    return render(
        request,
        "curation/review/dataset.html",
        {
            "dataset": dataset,
            "freezable": freezable_items(dataset).count() if dataset.frozen_at is None else 0,
            "freezable_without_reference": (
                freezable_items(dataset).filter(reference__regex=r"^\s*$").count() if dataset.frozen_at is None else 0
            ),
            "versions": versions,
            "jobs": dataset_jobs(dataset=dataset),
            "endpoints": in_workspace(endpoint_list(user=request.user), dataset.workspace_id).values_list(
                "name", flat=True
            ),
            # What an empty model field sends, shown before a job starts.
            "default_models": {kind: curation_model_or_none(kind=kind) for kind in CurationJob.Kind.values},
            "filters": dataset.difficulty_filters.order_by("-created_at"),
        },
    )


@researcher_required
@require_POST
def dataset_freeze_view(request: AuthenticatedHttpRequest, dataset_id: int) -> HttpResponse:
    dataset = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=dataset_id)
    try:
        version = dataset_freeze(
            dataset=dataset,
            created_by=request.user,
            confirm_missing_references=request.POST.get("confirm_missing_references") == "on",
        )
    except (VersionError, ArchivedError) as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Frozen as %(name)s.") % {"name": version.name})
    return redirect("curation:review-dataset", dataset_id=dataset.pk)


@researcher_required
def dataset_diff_page(request: HttpRequest, old_id: int, new_id: int) -> HttpResponse:
    """What changed between two versions."""
    old = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=old_id)
    new = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=new_id)
    diff = datasets_diff(old=old, new=new)
    return render(request, "curation/review/diff.html", {"old": old, "new": new, "diff": diff})


@researcher_required
def dataset_diff_pick(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The diff form's target: turns the two chosen versions into the diff page's address."""
    workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=dataset_id)
    try:
        old_id = int_param(request.GET.get("old"), name="old")
        new_id = int_param(request.GET.get("new"), name="new")
        if old_id is None or new_id is None:
            raise ParameterError("Choose two versions.")
    except ParameterError:
        messages.error(request, _("Choose two versions to compare."))
        return redirect("curation:review-dataset", dataset_id=dataset_id)
    return redirect(reverse("curation:review-diff", kwargs={"old_id": old_id, "new_id": new_id}))


ITEMS_PER_PAGE = 50
STATUS_LABELS = {
    "included": gettext_lazy("Included"),
    "excluded": gettext_lazy("Excluded"),
    "in_review": gettext_lazy("Waiting for review"),
    "no_reference": gettext_lazy("Without a reference"),
}


@researcher_required
def dataset_list_page(request: HttpRequest) -> HttpResponse:
    """Every dataset: imported, working and frozen versions, with their item counts; across
    several workspaces, each names its workspace and `?workspace=` keeps the list to one."""
    workspaces = list_workspaces(request, Role.RESEARCHER.value)
    datasets = workspaces.narrow(dataset_list_with_counts(user=request.user))[:500]
    return render(request, "curation/datasets/list.html", {"datasets": datasets, "workspaces": workspaces})


@researcher_required
def dataset_detail_page(request: HttpRequest, name: str) -> HttpResponse:
    """A dataset's versions and its items, searched and filtered, each with its history."""
    dataset = dataset_get(name=name, user=request.user)
    if dataset is None:
        raise Http404
    filters = {
        "search": request.GET.get("q", "")[:200],
        "intent": request.GET.get("intent", ""),
        "language": request.GET.get("language", ""),
        "category": request.GET.get("category", "")[:64],
        "status": request.GET.get("status", "") if request.GET.get("status", "") in ITEM_STATUSES else "",
    }
    page = Paginator(dataset_items(dataset=dataset, **filters), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    facets = dataset_item_facets(dataset=dataset)
    intents, languages = dict(Intent.choices), dict(Language.choices)
    return render(
        request,
        "curation/datasets/detail.html",
        {
            "dataset": dataset,
            "related": dataset_related_versions(dataset=dataset),
            "page": page,
            "filters": filters,
            "filtered": any(filters.values()),
            "intent_choices": [(value, intents.get(value, value)) for value in facets["intents"]],
            "language_choices": [(value, languages.get(value, value)) for value in facets["languages"]],
            "category_choices": facets["categories"],
            "status_choices": list(STATUS_LABELS.items()),
            "copy_name": working_copy_name(dataset),
        },
    )


@researcher_required
@require_POST
def dataset_copy_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A working copy of a frozen (imported) dataset in one step; opens the copy's working page."""
    try:
        dataset = dataset_by_name(name=request.POST.get("dataset", ""), user=request.user)
    except DatasetNotFound:
        raise Http404 from None
    try:
        copy, made = dataset_working_copy(
            dataset=dataset, name=request.POST.get("name", "").strip(), created_by=request.user
        )
    except (VersionError, ArchivedError) as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("curation:dataset-detail", name=dataset.name)
    if made:
        messages.success(
            request,
            _("Working copy %(copy)s made from %(name)s; draft references or translations here, then freeze it.")
            % {"copy": copy.name, "name": dataset.name},
        )
    else:
        messages.info(request, _("The working copy %(copy)s exists already; here it is.") % {"copy": copy.name})
    return redirect("curation:review-dataset", dataset_id=copy.pk)


@researcher_required
@require_POST
def dataset_archive_view(request: AuthenticatedHttpRequest, dataset_id: int, archived: bool) -> HttpResponse:
    """The dataset page's Archive (confirmed on the page) and Restore buttons."""
    dataset = workspace_get(Dataset.objects.all(), request.user, role=RESEARCHER, pk=dataset_id)
    back = reverse("curation:dataset-detail", args=[dataset.name])
    return archive_page_action(
        request, obj=dataset, archived=archived, kind="dataset", check=archive_allowed, back=back
    )
