"""Reads of datasets and their versions and jobs, for pages, the API and exports."""

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext as _

from core.archiving import ArchivableQuerySet
from core.counting import count_of
from core.errors import UserbenchError
from core.roles import Role
from core.workspaces import NameInSeveralWorkspaces, named_one, scoped
from curation.models import CurationJob, Dataset, Item, ReviewTask


class DatasetNotFound(UserbenchError):
    """No dataset has the name asked for."""


def datasets_visible(*, user, role: str | None = Role.RESEARCHER.value) -> ArchivableQuerySet[Dataset]:
    """The datasets of the workspaces where the person holds `role` (any role when None)."""
    return scoped(Dataset.objects.all(), user, role=role)


def dataset_by_name(
    *, name: str, user=None, role: str | None = Role.RESEARCHER.value, workspace_id: int | None = None
) -> Dataset:
    """The dataset of this name, for commands, services and APIs that are given one by name;
    DatasetNotFound naming it otherwise. Names are unique within a workspace: with a `user`, it
    is looked up in their workspaces (the current one, when set), so a dataset of another
    workspace is not found, whatever it is named; with a `workspace_id`, in that workspace; the
    operator (neither) finds any, and is asked for --workspace when several workspaces use the
    name (core.workspaces.named_one)."""
    try:
        found = (
            named_one(Dataset.objects.all(), user=user, role=role, workspace_id=workspace_id, name=name)
            if name
            else None
        )
    except NameInSeveralWorkspaces as error:
        raise DatasetNotFound(error.message) from None
    if found is None:
        raise DatasetNotFound(_("No dataset named %(name)r.") % {"name": name})
    return found


def dataset_list_with_counts(*, user=None, role: str | None = Role.RESEARCHER.value) -> QuerySet[Dataset]:
    """Datasets (of the person's workspaces; not archived) with their item and excluded-item
    counts, newest first."""
    datasets = (Dataset.objects.all() if user is None else datasets_visible(user=user, role=role)).active()
    return datasets.annotate(
        item_count=count_of(Item.objects.all(), to="dataset"),
        excluded_count=count_of(Item.objects.filter(excluded=True), to="dataset"),
    ).order_by("-created_at", "-id")


def working_datasets(*, user=None, role: str | None = None) -> QuerySet[Dataset]:
    """Datasets that can still change (of the person's workspaces; not archived), with item
    counts, for the curation overview."""
    datasets = (Dataset.objects.all() if user is None else datasets_visible(user=user, role=role)).active()
    return (
        datasets.filter(frozen_at__isnull=True)
        .annotate(
            item_count=count_of(Item.objects.all(), to="dataset"),
            excluded_count=count_of(Item.objects.filter(excluded=True), to="dataset"),
            version_count=count_of(Dataset.objects.active(), to="frozen_from"),
        )
        .order_by("name")
    )


def dataset_jobs(*, dataset: Dataset) -> QuerySet[CurationJob]:
    return CurationJob.objects.filter(dataset=dataset).order_by("-created_at")


# What a researcher can filter a dataset's items by: "status" is one of these.
ITEM_STATUSES = ("included", "excluded", "in_review", "no_reference")


def dataset_get(*, name: str, user=None, role: str | None = Role.RESEARCHER.value) -> Dataset | None:
    """The dataset of this name (in the person's workspaces, the current one when set) with what
    its page shows beside it, or None; WorkspaceUnknown when two of their workspaces use the name."""
    datasets = Dataset.objects.select_related("study", "previous_version", "frozen_from", "created_by").annotate(
        item_count=count_of(Item.objects.all(), to="dataset"),
        excluded_count=count_of(Item.objects.filter(excluded=True), to="dataset"),
    )
    return named_one(datasets, user=user, role=role, name=name)


def dataset_related_versions(*, dataset: Dataset) -> dict:
    """The working dataset a version was frozen from (or the dataset itself), its frozen versions
    newest first, and the working copies made from this dataset (archived ones left out)."""
    root = dataset.frozen_from or (dataset if dataset.frozen_at is None else None)
    versions = (
        root.frozen_versions.active()
        .annotate(item_count=count_of(Item.objects.all(), to="dataset"))
        .order_by("-version")
        if root is not None
        else Dataset.objects.none()
    )
    copies = Dataset.objects.active().filter(previous_version=dataset, frozen_at__isnull=True).order_by("name")
    return {"working": root, "versions": versions, "copies": copies}


def dataset_items(
    *, dataset: Dataset, search: str = "", intent: str = "", language: str = "", category: str = "", status: str = ""
) -> QuerySet[Item]:
    """The dataset's items matching the search (question, reference or id) and the filters, in id order."""
    items = Item.objects.filter(dataset=dataset)
    search = search.strip()
    if search:
        items = items.filter(
            Q(question__icontains=search) | Q(reference__icontains=search) | Q(external_id__icontains=search)
        )
    if intent:
        items = items.filter(intent=intent)
    if language:
        items = items.filter(language=language)
    if category:
        items = items.filter(category=category)
    open_review = ReviewTask.objects.filter(item=OuterRef("pk")).exclude(status=ReviewTask.Status.DONE)
    if status == "included":
        items = items.filter(excluded=False)
    elif status == "excluded":
        items = items.filter(excluded=True)
    elif status == "in_review":
        items = items.filter(Exists(open_review))
    elif status == "no_reference":
        items = items.filter(reference="")
    return items.annotate(in_review=Exists(open_review)).order_by("id")


def dataset_item_facets(*, dataset: Dataset) -> dict:
    """The intents, languages and categories the dataset's items have, for its filters."""
    values = Item.objects.filter(dataset=dataset)
    return {
        "intents": sorted(set(values.exclude(intent="").values_list("intent", flat=True))),
        "languages": sorted(set(values.values_list("language", flat=True))),
        "categories": sorted(set(values.exclude(category="").values_list("category", flat=True))),
    }
